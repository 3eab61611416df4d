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

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use glam::{DVec3, DVec4};
use scene_intersect::intersectors::{AnyIntersector, PrimitiveKind};
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

/// The intersector for a query, or the error line's message.
fn make_intersector(query: &Query) -> Result<AnyIntersector, String> {
    match query {
        Query::Invalid(message) => Err(message.clone()),
        Query::Segment(a, b) => LineSegmentIntersector::new(*a, *b)
            .map(AnyIntersector::from)
            .map_err(|e| e.to_string()),
        Query::Polytope(planes) => Polytope::new(planes.iter().copied())
            .map(|p| {
                PolytopeIntersector::new(p)
                    .with_primitive_mask(PrimitiveMask::TRIANGLES)
                    .into()
            })
            .map_err(|e| e.to_string()),
        Query::Sphere(c, r) => SphereIntersector::new(*c, *r)
            .map(|i| i.with_primitive_mask(PrimitiveMask::TRIANGLES).into())
            .map_err(|e| e.to_string()),
    }
}

/// The JSON line of an answered query.
fn result_line(q: usize, intersector: &AnyIntersector, import: &GltfImport) -> String {
    let name = |path: &[NodeId], d: DrawableId| {
        import.drawable_name(path, d).unwrap_or_else(|| "?".into())
    };
    match intersector {
        AnyIntersector::LineSegment(i) => {
            let mut hits: Vec<(f64, String, u32, DVec3)> = i
                .intersections()
                .iter()
                .filter(|h| h.primitive_kind == PrimitiveKind::Triangle)
                .map(|h| {
                    (
                        h.ratio,
                        name(&h.node_path, h.drawable),
                        h.primitive_index,
                        h.world_point,
                    )
                })
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
        AnyIntersector::Polytope(i) => {
            let hits = i
                .intersections()
                .iter()
                .map(|h| (name(&h.node_path, h.drawable), h.primitive_index));
            set_line(q, "poly", hits.collect())
        }
        AnyIntersector::Sphere(i) => {
            let hits = i
                .intersections()
                .iter()
                .map(|h| (name(&h.node_path, h.drawable), h.primitive_index));
            set_line(q, "sphere", hits.collect())
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

    // Valid queries become intersectors; the others keep their error message.
    let made: Vec<Result<AnyIntersector, String>> = queries.iter().map(make_intersector).collect();
    let mut slots: Vec<usize> = Vec::new();
    let mut intersectors: Vec<AnyIntersector> = Vec::new();
    for (q, m) in made.iter().enumerate() {
        if let Ok(i) = m {
            slots.push(q);
            intersectors.push(i.clone());
        }
    }
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
    let mut outcomes = Vec::new();
    for _ in 0..options.repeat {
        let start = Instant::now();
        outcomes = pool.install(|| visitor.apply_batch(&scene, import.root, &mut intersectors));
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    eprintln!("time_ms query {best:.3}");

    let mut lines: Vec<String> = made
        .iter()
        .enumerate()
        .map(|(q, m)| match m {
            Err(message) => error_line(q, message),
            Ok(_) => String::new(),
        })
        .collect();
    for ((q, i), outcome) in slots.iter().zip(&intersectors).zip(&outcomes) {
        lines[*q] = match outcome {
            Ok(()) => result_line(*q, i, &import),
            Err(e) => error_line(*q, &e.to_string()),
        };
    }
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
