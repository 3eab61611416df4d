//! The batch query tool of `../shared/QUERY_FORMAT.md`: answers every query of a query
//! file against a glTF scene and writes one JSON line per query.
//!
//! ```text
//! cargo run --release --example query -- SCENE.glb QUERIES.txt [--repeat N] [--threads T] [--plain] > results.jsonl
//! ```
//!
//! Timings go to stderr as `time_ms <phase> <value>` (`load`, `build`: the BVHs, `query`:
//! the whole batch, best of `--repeat`). `--threads T` answers the batch on T threads with
//! the parallel batch API; `--plain` (or `--no-accel`) turns acceleration off (same
//! answers, slower). Options also take their value after `=` (`--threads=2`).
//!
//! Reading, answering and writing are `scene_intersect::io::query_file`'s: the batch goes
//! through [`IntersectionVisitor::map_batch`], one kind of query at a time, each worker
//! moving one intersector from query to query and keeping only the triangles hit, as
//! numbers; names and JSON are made after the clock stops. (Holding every query's full
//! hit records until the end, as a separate intersector per query does, cost 2.4 times
//! the time on a first pass over 10 000 segments, in page faults.) A malformed line is
//! reported on stderr with its line number and answered with an error line.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use scene_intersect::io::query_file::{answer_query_lines, parse_query_file, result_line};
use scene_intersect::prelude::*;

struct Options {
    scene: String,
    queries: String,
    repeat: usize,
    threads: usize,
    plain: bool,
}

const USAGE: &str = concat!(
    "usage: query SCENE.glb QUERIES.txt [--repeat N] [--threads T] [--plain]\n",
    "  --repeat N    answer the batch N times, report the best time (default 1)\n",
    "  --threads T   answer on T threads (default 1)\n",
    "  --plain       no acceleration structures (same answers, slower); also --no-accel\n",
    "Options take their value as the next argument or after '=' (--threads=2).",
);

/// What the command line asks for.
enum Command {
    Answer(Options),
    Help,
}

fn parse_options() -> Result<Command, String> {
    let mut positional = Vec::new();
    let (mut repeat, mut threads, mut plain) = (1usize, 1usize, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        // `--name=value` or `--name value`.
        let (name, inline_value) = match a.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value)),
            _ => (a.clone(), None),
        };
        let mut number = |flag: &str| -> Result<usize, String> {
            inline_value
                .map(str::to_string)
                .or_else(|| args.next())
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&n| n >= 1)
                .ok_or(format!("{flag} needs a whole number >= 1\n{USAGE}"))
        };
        match name.as_str() {
            "--repeat" => repeat = number("--repeat")?,
            "--threads" => threads = number("--threads")?,
            "--plain" | "--no-accel" if inline_value.is_none() => plain = true,
            "-h" | "--help" => return Ok(Command::Help),
            flag if flag.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            _ => positional.push(a),
        }
    }
    match <[String; 2]>::try_from(positional) {
        Ok([scene, queries]) => Ok(Command::Answer(Options {
            scene,
            queries,
            repeat,
            threads,
            plain,
        })),
        Err(_) => Err(USAGE.to_string()),
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(Command::Answer(o)) => o,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
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
    let lines = parse_query_file(&text);
    for error in lines.iter().filter_map(|l| l.query.as_ref().err()) {
        eprintln!("malformed query: {error}");
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
        // The previous run's answers are freed before the clock starts (assigned over,
        // they were freed inside it: one free per query's rows).
        drop(std::mem::take(&mut answers));
        let start = Instant::now();
        answers = pool.install(|| answer_query_lines(&visitor, &scene, &import, &lines));
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    eprintln!("time_ms query {best:.3}");

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (q, answer) in answers.iter().enumerate() {
        if writeln!(out, "{}", result_line(q, answer)).is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
