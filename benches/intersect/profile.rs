//! `BENCH_PROFILE=workload[:repeats]`: one workload alone, for callgrind and perf.

use std::time::Instant;

use scene_intersect::prelude::*;

use crate::scenes::{Bench, BATCH, TABLE};
use crate::workloads::{
    ours_box_planes, ours_boxes, ours_build, ours_fresh_nearest, ours_picks, ours_query_tool,
    ours_segment_summaries, ours_segments, ours_spheres, parry_boxes, parry_build, parry_picks,
    parry_segments_all, parry_segments_nearest, parry_spheres, query_lines,
};

/// `BENCH_PROFILE=<workload>[:<repeats>]` runs one side of one workload (ours: `all`,
/// `all_summaries`, `nearest`, `fresh_nearest` (a new intersector each query),
/// `picks`, `boxes`, `boxes_summaries`, `box_planes`, `spheres`, `spheres_summaries`,
/// `build`; the query tool's path, [`ours_query_tool`], as `tool_all`, `tool_boxes`,
/// `tool_spheres`, whose queries run on a rayon worker: profile them with callgrind's
/// `--toggle-collect='*answer_query_lines*'`; parry's: `parry_all`,
/// `parry_nearest`, `parry_picks`, `parry_boxes`, `parry_spheres`, `parry_build`) over
/// and over on the selected scenes, for a profiler (`perf record`, `valgrind
/// --tool=callgrind`), and exits.
pub(crate) fn profile_only(benches: &[Bench], spec: &str) {
    let (what, repeats) = spec.split_once(':').unwrap_or((spec, "200"));
    let repeats: usize = repeats.parse().unwrap_or(200);
    // BENCH_QUERIES=<n>: that many distinct queries per repeat (default: the criterion
    // batch; the ratio table's count is TABLE).
    let n = std::env::var("BENCH_QUERIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(BATCH)
        .clamp(1, TABLE);
    for b in benches {
        let mut v = IntersectionVisitor::new();
        // The query tool's lines and pool, made before the clock.
        let tool = what.starts_with("tool_").then(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
            (query_lines(b, n), pool.expect("a one-thread pool"))
        });
        let tool_answers = |kind: usize| {
            let Some(([segments, boxes, spheres], pool)) = &tool else {
                unreachable!("made for every tool_ workload")
            };
            ours_query_tool(b, pool, [segments, boxes, spheres][kind])
        };
        let t = Instant::now();
        let mut answers = 0;
        for _ in 0..repeats {
            answers += match what {
                "tool_all" => tool_answers(0),
                "tool_boxes" => tool_answers(1),
                "tool_spheres" => tool_answers(2),
                "all" => ours_segments(b, &mut v, IntersectionLimit::None, n),
                "all_summaries" => ours_segment_summaries(b, &mut v, n),
                "build" => ours_build(b),
                "parry_build" => parry_build(b),
                "nearest" => ours_segments(b, &mut v, IntersectionLimit::Nearest, n),
                "fresh_nearest" => ours_fresh_nearest(b, &mut v, n),
                "picks" => ours_picks(b, &mut v, n),
                "parry_picks" => parry_picks(b, n),
                "boxes" => ours_boxes(b, &mut v, n, HitRecords::Full),
                "boxes_summaries" => ours_boxes(b, &mut v, n, HitRecords::Summaries),
                "box_planes" => ours_box_planes(b, &mut v, n),
                "spheres" => ours_spheres(b, &mut v, n, HitRecords::Full),
                "spheres_summaries" => ours_spheres(b, &mut v, n, HitRecords::Summaries),
                "parry_all" => parry_segments_all(b, n),
                "parry_nearest" => parry_segments_nearest(b, n),
                "parry_boxes" => parry_boxes(b, n),
                "parry_spheres" => parry_spheres(b, n),
                other => panic!("BENCH_PROFILE: unknown workload {other}"),
            };
        }
        let per_query = t.elapsed().as_secs_f64() * 1e6 / (repeats * n) as f64;
        println!(
            "profile {:>16} {what}: {per_query:.3} us per query, {answers} answers",
            b.name
        );
    }
    std::process::exit(0);
}
