//! The batch query tool of `../shared/QUERY_FORMAT.md`: answers every query of a query
//! file against a glTF scene and writes one JSON line per query.
//!
//! ```text
//! cargo run --release --example query -- SCENE.glb QUERIES.txt [--repeat N] [--threads T] [--plain] > results.jsonl
//! ```
//!
//! Timings go to stderr as `time_ms <phase> <value>` (`load`, `build`: the BVHs, `query`:
//! the whole batch, best of `--repeat`). `--threads T` answers the batch on T threads with
//! the parallel batch API; `--plain` turns acceleration off (same answers, slower).
//!
//! The batch goes through [`IntersectionVisitor::map_batch`], one kind of query at a
//! time: each worker moves one intersector from query to query and keeps only the
//! triangles hit, as numbers; names and JSON are made after the clock stops. (Holding
//! every query's full hit records until the end, as a separate intersector per query
//! does, cost 2.4 times the time on a first pass over 10 000 segments, in page faults.)

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use glam::{DVec3, DVec4};
use scene_intersect::intersectors::{PrimitiveKind, QueryError};
use scene_intersect::prelude::*;

/// One parsed line of the query file.
enum Query {
    Segment(DVec3, DVec3),
    Polytope(Vec<DVec4>),
    Sphere(DVec3, f64),
    /// A malformed line: what is wrong (the message names the line).
    Invalid(String),
}

fn parse_line(words: &[&str], line: usize) -> Result<Query, String> {
    let (kind, rest) = words.split_first().ok_or("empty line")?;
    let numbers = rest
        .iter()
        .map(|w| {
            w.parse::<f64>()
                .map_err(|_| format!("line {line}: `{w}` is not a number"))
        })
        .collect::<Result<Vec<f64>, String>>()?;
    let want = |n: usize| {
        if numbers.len() == n {
            Ok(())
        } else {
            Err(format!(
                "line {line}: `{kind}` takes {n} numbers, found {}",
                numbers.len()
            ))
        }
    };
    match *kind {
        "seg" => {
            want(6)?;
            Ok(Query::Segment(
                DVec3::new(numbers[0], numbers[1], numbers[2]),
                DVec3::new(numbers[3], numbers[4], numbers[5]),
            ))
        }
        "sphere" => {
            want(4)?;
            Ok(Query::Sphere(
                DVec3::new(numbers[0], numbers[1], numbers[2]),
                numbers[3],
            ))
        }
        "poly" => {
            let n = numbers
                .first()
                .copied()
                .ok_or(format!("line {line}: `poly` needs a plane count"))?;
            if n.fract() != 0.0 || !(0.0..=1e6).contains(&n) {
                return Err(format!(
                    "line {line}: plane count `{n}` is not a whole number"
                ));
            }
            want(1 + 4 * n as usize)?;
            Ok(Query::Polytope(
                numbers[1..]
                    .chunks_exact(4)
                    .map(|c| DVec4::new(c[0], c[1], c[2], c[3]))
                    .collect(),
            ))
        }
        other => Err(format!(
            "line {line}: unknown query kind `{other}` (expected seg, poly or sphere)"
        )),
    }
}

/// Every query of the file, in order; comment-only and blank lines are not queries.
fn parse_queries(text: &str) -> Vec<Query> {
    text.lines()
        .enumerate()
        .filter_map(|(i, raw)| {
            let content = raw.split('#').next().unwrap_or("");
            let words: Vec<&str> = content.split_whitespace().collect();
            (!words.is_empty()).then(|| parse_line(&words, i + 1).unwrap_or_else(Query::Invalid))
        })
        .collect()
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One triangle a segment hit, as the batch keeps it: the drawable named by numbers
/// (`n<node>/p<primitive>`, made into a string after the clock stops).
struct SegmentHit {
    ratio: f64,
    name: Option<(usize, usize)>,
    tri: u32,
    point: DVec3,
}

/// One triangle a polytope or ball met.
type SetHit = (Option<(usize, usize)>, u32);

/// What the batch keeps of an answered query.
enum Answer {
    Segment(Vec<SegmentHit>),
    Set(&'static str, Vec<SetHit>),
}

/// The name of the batch format for a drawable's numbers.
fn name(parts: Option<(usize, usize)>) -> String {
    match parts {
        Some((node, primitive)) => format!("n{node}/p{primitive}"),
        None => "?".into(),
    }
}

/// The JSON line of an answered query.
fn result_line(q: usize, answer: &Answer) -> String {
    match answer {
        Answer::Segment(hits) => {
            let mut hits: Vec<(f64, String, u32, DVec3)> = hits
                .iter()
                .map(|h| (h.ratio, name(h.name), h.tri, h.point))
                .collect();
            hits.sort_by(|x, y| {
                x.0.total_cmp(&y.0)
                    .then_with(|| x.1.cmp(&y.1))
                    .then(x.2.cmp(&y.2))
            });
            let mut out = format!("{{\"q\":{q},\"kind\":\"seg\",\"hits\":[");
            for (k, (ratio, d, tri, p)) in hits.iter().enumerate() {
                let sep = if k > 0 { "," } else { "" };
                let _ = write!(
                    out,
                    "{sep}{{\"d\":{},\"tri\":{tri},\"ratio\":{ratio},\"point\":[{},{},{}]}}",
                    json_string(d),
                    p.x,
                    p.y,
                    p.z
                );
            }
            out.push_str("]}");
            out
        }
        Answer::Set(kind, hits) => set_line(
            q,
            kind,
            hits.iter()
                .map(|&(parts, tri)| (name(parts), tri))
                .collect(),
        ),
    }
}

/// Every valid query's answer, in query order (`None` for malformed lines), answered in
/// parallel on the current rayon pool: each kind through
/// [`IntersectionVisitor::map_batch`], one intersector per worker moved from query to
/// query, keeping of each answer only the triangles hit.
fn answer_all(
    visitor: &IntersectionVisitor,
    scene: &SceneGraph,
    import: &GltfImport,
    queries: &[Query],
) -> Vec<Option<Result<Answer, QueryError>>> {
    let mut answers: Vec<Option<Result<Answer, QueryError>>> =
        queries.iter().map(|_| None).collect();
    let named = |path: &[NodeId], drawable| import.drawable_name_parts(path, drawable);
    let batch = Batch {
        visitor,
        scene,
        root: import.root,
        queries,
    };
    batch.answer(
        &mut answers,
        |query| match query {
            Query::Segment(a, b) => Some((*a, *b)),
            _ => None,
        },
        |&(start, end)| LineSegmentIntersector::new(start, end),
        |picker, &(start, end)| picker.set_segment(start, end),
        |answered| {
            let hits = answered.intersections().iter();
            let triangles = hits.filter(|h| h.primitive_kind == PrimitiveKind::Triangle);
            Answer::Segment(
                triangles
                    .map(|h| SegmentHit {
                        ratio: h.ratio,
                        name: named(&h.node_path, h.drawable),
                        tri: h.primitive_index,
                        point: h.world_point,
                    })
                    .collect(),
            )
        },
    );
    batch.answer(
        &mut answers,
        |query| match query {
            Query::Polytope(planes) => Some(planes.as_slice()),
            _ => None,
        },
        |planes| {
            let polytope = Polytope::new(planes.iter().copied())?;
            Ok(PolytopeIntersector::new(polytope).with_primitive_mask(PrimitiveMask::TRIANGLES))
        },
        |query, planes| {
            query.set_polytope(Polytope::new(planes.iter().copied())?);
            Ok(())
        },
        |answered| {
            let hits = answered.intersections().iter();
            let triangles = hits.map(|h| (named(&h.node_path, h.drawable), h.primitive_index));
            Answer::Set("poly", triangles.collect())
        },
    );
    batch.answer(
        &mut answers,
        |query| match query {
            Query::Sphere(c, r) => Some((*c, *r)),
            _ => None,
        },
        |&(center, radius)| {
            let ball = SphereIntersector::new(center, radius)?;
            Ok(ball.with_primitive_mask(PrimitiveMask::TRIANGLES))
        },
        |ball, &(center, radius)| ball.set_sphere(center, radius),
        |answered| {
            let hits = answered.intersections().iter();
            let triangles = hits.map(|h| (named(&h.node_path, h.drawable), h.primitive_index));
            Answer::Set("sphere", triangles.collect())
        },
    );
    answers
}

/// What every kind of query is answered against.
struct Batch<'a> {
    visitor: &'a IntersectionVisitor,
    scene: &'a SceneGraph,
    root: NodeId,
    queries: &'a [Query],
}

impl<'a> Batch<'a> {
    /// Answers the queries `pick` takes (one kind) through
    /// [`IntersectionVisitor::map_batch`] with `make`, `move_to` and `keep`, and puts each
    /// answer at its query's place in `answers`.
    fn answer<K: Sync, I: Intersector + Send>(
        &self,
        answers: &mut [Option<Result<Answer, QueryError>>],
        pick: impl Fn(&'a Query) -> Option<K>,
        make: impl Fn(&K) -> Result<I, QueryError> + Sync,
        move_to: impl Fn(&mut I, &K) -> Result<(), QueryError> + Sync,
        keep: impl Fn(&I) -> Answer + Sync,
    ) {
        let (places, picked): (Vec<usize>, Vec<K>) = (self.queries.iter().enumerate())
            .filter_map(|(q, query)| Some((q, pick(query)?)))
            .unzip();
        let found = self
            .visitor
            .map_batch(self.scene, self.root, &picked, make, move_to, keep);
        for (q, answer) in places.into_iter().zip(found) {
            answers[q] = Some(answer);
        }
    }
}

fn error_line(q: usize, message: &str) -> String {
    format!("{{\"q\":{q},\"error\":{}}}", json_string(message))
}

/// A poly / sphere line: the distinct (drawable, triangle) pairs sorted by (d, tri).
fn set_line(q: usize, kind: &str, mut hits: Vec<(String, u32)>) -> String {
    hits.sort();
    hits.dedup();
    let mut out = format!("{{\"q\":{q},\"kind\":\"{kind}\",\"hits\":[");
    for (k, (d, tri)) in hits.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let _ = write!(out, "{sep}{{\"d\":{},\"tri\":{tri}}}", json_string(d));
    }
    out.push_str("]}");
    out
}

struct Options {
    scene: String,
    queries: String,
    repeat: usize,
    threads: usize,
    plain: bool,
}

const USAGE: &str = "usage: query SCENE.glb QUERIES.txt [--repeat N] [--threads T] [--plain]";

fn parse_options() -> Result<Options, String> {
    let mut positional = Vec::new();
    let (mut repeat, mut threads, mut plain) = (1usize, 1usize, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut number = |flag: &str| -> Result<usize, String> {
            args.next()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&n| n >= 1)
                .ok_or(format!("{flag} needs a whole number >= 1\n{USAGE}"))
        };
        match a.as_str() {
            "--repeat" => repeat = number("--repeat")?,
            "--threads" => threads = number("--threads")?,
            "--plain" => plain = true,
            "-h" | "--help" => return Err(USAGE.to_string()),
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}\n{USAGE}"))
            }
            _ => positional.push(a),
        }
    }
    match <[String; 2]>::try_from(positional) {
        Ok([scene, queries]) => Ok(Options {
            scene,
            queries,
            repeat,
            threads,
            plain,
        }),
        Err(_) => Err(USAGE.to_string()),
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let (scene, import) = match load_gltf(&options.scene) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("time_ms load {:.3}", start.elapsed().as_secs_f64() * 1e3);
    let text = match std::fs::read_to_string(&options.queries) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read query file {}: {e}", options.queries);
            return ExitCode::FAILURE;
        }
    };
    let queries = parse_queries(&text);
    for q in &queries {
        if let Query::Invalid(message) = q {
            eprintln!("malformed query: {message}");
        }
    }
    let start = Instant::now();
    if !options.plain {
        scene.build_acceleration();
    } else {
        let _ = scene.node_bound(import.root);
    }
    eprintln!("time_ms build {:.3}", start.elapsed().as_secs_f64() * 1e3);

    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot start {} threads: {e}", options.threads);
            return ExitCode::FAILURE;
        }
    };
    let mut visitor = IntersectionVisitor::new();
    visitor.set_use_acceleration(!options.plain);
    let mut best = f64::INFINITY;
    let mut answers = Vec::new();
    for _ in 0..options.repeat {
        let start = Instant::now();
        answers = pool.install(|| answer_all(&visitor, &scene, &import, &queries));
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    eprintln!("time_ms query {best:.3}");

    let lines = queries
        .iter()
        .zip(&answers)
        .enumerate()
        .map(|(q, (query, answer))| match (query, answer) {
            (Query::Invalid(message), _) => error_line(q, message),
            (_, Some(Ok(answer))) => result_line(q, answer),
            (_, Some(Err(e))) => error_line(q, &e.to_string()),
            (_, None) => error_line(q, "not answered"),
        });
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
