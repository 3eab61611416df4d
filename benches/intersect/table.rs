//! The ratio table printed before the criterion groups: every workload over the same
//! distinct queries for each engine, timed as medians of samples in one process.

use std::time::{Duration, Instant};

use scene_intersect::prelude::*;

use crate::peers::{run_peers, Ours};
use crate::scenes::{Bench, TABLE};
use crate::workloads::{
    ours_batch_ms, ours_box_planes, ours_boxes, ours_build, ours_mapped_batch_ms, ours_picks,
    ours_query_tool, ours_segment_summaries, ours_segments, ours_segments_of, ours_spheres,
    parry_boxes, parry_build, parry_picks, parry_segments_all, parry_segments_nearest,
    parry_spheres, query_lines,
};

/// How long each timed sample of the ratio table runs its workload, at least.
pub(crate) const SAMPLE: Duration = Duration::from_millis(20);

/// Median wall time of one run of `f`, in milliseconds, over 5 samples, and the
/// workload's answer count. A batch of 256 queries takes well under a millisecond, and
/// timed once it is timed while the caches, branch predictors and clock are still
/// warming to it: five single runs in a row fell from 0.32 to 0.15 ms, and the run
/// order alone moved parry's boxes from 0.16 to 0.12 ms between two rows of one table.
/// So `f` first runs for one sample's time untimed, then each sample repeats it for
/// at least [`SAMPLE`] (a slow workload, such as the plain traversal, once).
pub(crate) fn median_ms(mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut answer = 0;
    let warm = Instant::now();
    while warm.elapsed() < SAMPLE {
        answer = std::hint::black_box(f());
    }
    let mut times = Vec::new();
    for _ in 0..5 {
        let (t, mut runs) = (Instant::now(), 0u32);
        while runs == 0 || t.elapsed() < SAMPLE {
            answer = std::hint::black_box(f());
            runs += 1;
        }
        times.push(t.elapsed().as_secs_f64() * 1e3 / f64::from(runs));
    }
    times.sort_by(f64::total_cmp);
    (times[2], answer)
}

pub(crate) fn ratio_line(
    scene: &str,
    what: &str,
    ours: (f64, usize),
    other_name: &str,
    other: (f64, usize),
) {
    println!(
        "ratio {scene:>16} {what:<22} ours {:>9.3} ms ({:>7} hits)  {other_name} {:>9.3} ms ({:>7} hits)  speed-up {:>6.2}x",
        ours.0,
        ours.1,
        other.0,
        other.1,
        other.0 / ours.0
    );
}

/// One of our workloads on a scene: the queries answered, the hits found.
type Workload = dyn Fn(&Bench, &mut IntersectionVisitor) -> usize;

pub(crate) fn print_ratios(benches: &[Bench]) {
    println!(
        "\n== side-by-side: {TABLE} distinct queries per workload, after a warm-up, median of 5 samples of >= {} ms (threads: 10 000, median of 9) ==",
        SAMPLE.as_millis()
    );
    for b in benches {
        let mut v = IntersectionVisitor::new();
        let mut plain = IntersectionVisitor::new();
        plain.set_use_acceleration(false);
        let n = TABLE;
        // The plain traversal is slow on big scenes: it answers a sixty-fourth of the
        // queries, and its time is scaled up.
        let few = TABLE / 64;
        let scaled = |(t, hits): (f64, usize)| (t * (n / few) as f64, hits);
        let all = median_ms(|| ours_segments(b, &mut v, IntersectionLimit::None, n));
        let parry_all = median_ms(|| parry_segments_all(b, n));
        ratio_line(&b.name, "segments all hits", all, "parry", parry_all);
        // The same hits as summaries (ratio, drawable, primitive, world point, path):
        // still more than parry3d's answer (a parameter and a triangle id).
        let summaries = median_ms(|| ours_segment_summaries(b, &mut v, n));
        ratio_line(
            &b.name,
            "segs all (summaries)",
            summaries,
            "parry",
            parry_all,
        );
        ratio_line(
            &b.name,
            "segs all (plain, 1/64)",
            all,
            "plain",
            scaled(median_ms(|| {
                ours_segments(b, &mut plain, IntersectionLimit::None, few)
            })),
        );
        let nearest = median_ms(|| ours_segments(b, &mut v, IntersectionLimit::Nearest, n));
        ratio_line(
            &b.name,
            "segments nearest",
            nearest,
            "parry",
            median_ms(|| parry_segments_nearest(b, n)),
        );
        ratio_line(
            &b.name,
            "picking rays to 1e6",
            median_ms(|| ours_picks(b, &mut v, n)),
            "parry",
            median_ms(|| parry_picks(b, n)),
        );
        let boxes = median_ms(|| ours_boxes(b, &mut v, n, HitRecords::Full));
        let parry_boxes = median_ms(|| parry_boxes(b, n));
        ratio_line(&b.name, "boxes (6 planes)", boxes, "parry", parry_boxes);
        // Summaries (distance, drawable, primitive, world point, path): still more
        // than parry3d's answer (triangle ids).
        ratio_line(
            &b.name,
            "boxes (summaries)",
            median_ms(|| ours_boxes(b, &mut v, n, HitRecords::Summaries)),
            "parry",
            parry_boxes,
        );
        ratio_line(
            &b.name,
            "boxes given as planes",
            median_ms(|| ours_box_planes(b, &mut v, n)),
            "parry",
            parry_boxes,
        );
        ratio_line(
            &b.name,
            "boxes (plain, 1/64)",
            boxes,
            "plain",
            scaled(median_ms(|| {
                ours_boxes(b, &mut plain, few, HitRecords::Full)
            })),
        );
        let spheres = median_ms(|| ours_spheres(b, &mut v, n, HitRecords::Full));
        let parry_spheres = median_ms(|| parry_spheres(b, n));
        ratio_line(&b.name, "spheres", spheres, "parry", parry_spheres);
        ratio_line(
            &b.name,
            "spheres (summaries)",
            median_ms(|| ours_spheres(b, &mut v, n, HitRecords::Summaries)),
            "parry",
            parry_spheres,
        );
        // The query tool's path (`examples/query.rs`, one thread): rows of numbers
        // per triangle hit, sorted and named after its clock.
        let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let mut tool = [None; 3];
        if let Ok(pool) = one_thread {
            let [segment_lines, box_lines, sphere_lines] = query_lines(b, n);
            for ((what, lines, peer), tool) in [
                ("segs all (query tool)", &segment_lines, parry_all),
                ("boxes (query tool)", &box_lines, parry_boxes),
                ("spheres (query tool)", &sphere_lines, parry_spheres),
            ]
            .into_iter()
            .zip(&mut tool)
            {
                let ours = median_ms(|| ours_query_tool(b, &pool, lines));
                ratio_line(&b.name, what, ours, "parry", peer);
                *tool = Some(ours);
            }
        }
        let build = median_ms(|| ours_build(b));
        ratio_line(
            &b.name,
            "build",
            build,
            "parry",
            median_ms(|| parry_build(b)),
        );
        run_peers(
            b,
            &Ours {
                all,
                summaries,
                nearest,
                boxes,
                build,
                tool_all: tool[0],
                tool_boxes: tool[1],
            },
        );
        for (what, batch) in [
            (
                "batch nearest 10k",
                ours_batch_ms as fn(&Bench, usize) -> (f64, usize),
            ),
            ("mapped batch 10k", ours_mapped_batch_ms),
        ] {
            let (one, two) = (batch(b, 1), batch(b, 2));
            println!(
                "ratio {:>16} {what:<22} 1 thread {:>9.3} ms  2 threads {:>9.3} ms  speed-up {:>6.2}x",
                b.name,
                one.0,
                two.0,
                one.0 / two.0
            );
        }
        let (bytes, _) = b.scene.acceleration_memory();
        let triangles = b.parry_indices.len();
        println!(
            "memory {:>15} {:.1} MB of acceleration structures, {:.1} bytes per instanced triangle ({triangles})",
            b.name,
            bytes as f64 / 1e6,
            bytes as f64 / triangles.max(1) as f64,
        );
    }
    // Cost per query as the city grows 10x (generated cities). Segments crossing the
    // scene grow with it (3.2 times as long on a city 10 times the area), segments of a
    // fixed length, boxes and spheres do not.
    if let (Some(small), Some(big)) = (
        benches.iter().find(|b| b.name == "city_s3"),
        benches.iter().find(|b| b.name == "city_s10"),
    ) {
        let per_query = |b: &Bench, run: &Workload| {
            let mut v = IntersectionVisitor::new();
            median_ms(|| run(b, &mut v)).0 * 1e3 / TABLE as f64
        };
        let workloads: [(&str, &Workload); 5] = [
            ("nearest segment crossing the scene", &|b, v| {
                ours_segments(b, v, IntersectionLimit::Nearest, TABLE)
            }),
            ("nearest segment of 100 units", &|b, v| {
                ours_segments_of(&b.local_segments, b, v, IntersectionLimit::Nearest)
            }),
            ("all hits of 100 units", &|b, v| {
                ours_segments_of(&b.local_segments, b, v, IntersectionLimit::None)
            }),
            ("box", &|b, v| ours_boxes(b, v, TABLE, HitRecords::Full)),
            ("sphere", &|b, v| {
                ours_spheres(b, v, TABLE, HitRecords::Full)
            }),
        ];
        for (what, run) in workloads {
            let (t_small, t_big) = (per_query(small, run), per_query(big, run));
            println!(
                "scaling: {} -> {} triangles: {what} {:.3} -> {:.3} us per query ({:.2}x)",
                small.parry_indices.len(),
                big.parry_indices.len(),
                t_small,
                t_big,
                t_big / t_small
            );
        }
    }
    println!();
}
