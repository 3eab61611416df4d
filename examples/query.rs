//! The batch query tool of `../shared/QUERY_FORMAT.md`: answers every query of a query
//! file against a glTF scene and writes one JSON line per query.
//!
//! ```text
//! cargo run --release --example query -- SCENE.glb QUERIES.txt [--repeat N] [--threads T] > results.jsonl
//! ```
//!
//! Timings go to stderr as `time_ms <phase> <value>` (`load`, `build`, `query`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use glam::{DVec3, DVec4};
use scene_intersect::intersectors::PrimitiveKind;
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

/// Answers one query; returns its JSON line.
fn answer(
    q: usize,
    query: &Query,
    scene: &SceneGraph,
    import: &GltfImport,
    visitor: &mut IntersectionVisitor,
) -> String {
    let name = |path: &[NodeId], d: DrawableId| {
        import.drawable_name(path, d).unwrap_or_else(|| "?".into())
    };
    let error = |e: &dyn std::fmt::Display| {
        format!("{{\"q\":{q},\"error\":{}}}", json_string(&e.to_string()))
    };
    match query {
        Query::Invalid(message) => error(message),
        Query::Segment(a, b) => {
            let mut i = match LineSegmentIntersector::new(*a, *b) {
                Ok(i) => i,
                Err(e) => return error(&e),
            };
            if let Err(e) = visitor.apply(scene, import.root, &mut i) {
                return error(&e);
            }
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
        Query::Polytope(planes) => {
            let mut i = match Polytope::new(planes.iter().copied()) {
                Ok(p) => PolytopeIntersector::new(p).with_primitive_mask(PrimitiveMask::TRIANGLES),
                Err(e) => return error(&e),
            };
            if let Err(e) = visitor.apply(scene, import.root, &mut i) {
                return error(&e);
            }
            let hits = i
                .intersections()
                .iter()
                .map(|h| (name(&h.node_path, h.drawable), h.primitive_index));
            set_line(q, "poly", hits.collect())
        }
        Query::Sphere(c, r) => {
            let mut i = match SphereIntersector::new(*c, *r) {
                Ok(i) => i.with_primitive_mask(PrimitiveMask::TRIANGLES),
                Err(e) => return error(&e),
            };
            if let Err(e) = visitor.apply(scene, import.root, &mut i) {
                return error(&e);
            }
            let hits = i
                .intersections()
                .iter()
                .map(|h| (name(&h.node_path, h.drawable), h.primitive_index));
            set_line(q, "sphere", hits.collect())
        }
    }
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

/// Answers every query, on `threads` threads, results in query order.
fn answer_all(
    queries: &[Query],
    scene: &SceneGraph,
    import: &GltfImport,
    threads: usize,
) -> Vec<String> {
    let chunk = queries.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = queries
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                s.spawn(move || {
                    let mut visitor = IntersectionVisitor::new();
                    part.iter()
                        .enumerate()
                        .map(|(k, query)| answer(c * chunk + k, query, scene, import, &mut visitor))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(lines) => lines,
                Err(_) => vec!["{\"error\":\"a worker thread failed\"}".to_string()],
            })
            .collect()
    })
}

struct Options {
    scene: String,
    queries: String,
    repeat: usize,
    threads: usize,
}

const USAGE: &str = "usage: query SCENE.glb QUERIES.txt [--repeat N] [--threads T]";

fn parse_options() -> Result<Options, String> {
    let mut positional = Vec::new();
    let (mut repeat, mut threads) = (1usize, 1usize);
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
    // Building = computing every cached bound once (the plain traversal has no other
    // acceleration structure).
    let start = Instant::now();
    let _ = scene.node_bound(import.root);
    eprintln!("time_ms build {:.3}", start.elapsed().as_secs_f64() * 1e3);

    let mut best = f64::INFINITY;
    let mut lines = Vec::new();
    for _ in 0..options.repeat {
        let start = Instant::now();
        lines = answer_all(&queries, &scene, &import, options.threads);
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    eprintln!("time_ms query {best:.3}");
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
