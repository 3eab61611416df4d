//! Query speed against the peers, measured side by side in one run.
//!
//! For every scene: segments (all hits and nearest), picking rays from above the scene
//! to a far plane 10^6 units away (nearest), vehicle-sized oriented boxes
//! (6-plane polytopes, made with `Polytope::from_oriented_box` and, a second time, given
//! as their six planes) and spheres, answered by
//! * `ours`: scene-intersect with its BVHs, one intersector per workload moved from
//!   query to query (`set_segment`, `set_polytope`, `set_sphere`), as a query repeated
//!   every frame would be,
//! * `plain`: scene-intersect without acceleration (bounding-volume culling only),
//! * `parry`: parry3d 0.31 on the same triangles flattened into one world-space
//!   `TriMesh` (its BVH: `cast_local_ray` for nearest, leaves + triangle ray casts for
//!   all hits, `intersect_aabb` + exact cuboid / ball tests for boxes and spheres);
//!
//! plus the same segments (all hits), boxes and spheres through the query tool's path
//! (`examples/query.rs`: the queries as query file lines, `answer_query_lines` on one
//! thread), BVH build time against `TriMesh::new`, and 1 vs 2 threads on a 10 000-query
//! batch. With `BENCH_PEERS=<binary>` (benches/peers), OpenSceneGraph 3.6 and Embree 3
//! answer the same segments and boxes too, right after ours in the same run. Before
//! the criterion groups, a ratio table is printed: every workload over the same 4 096
//! distinct queries for each engine, after a warm-up, the median of 5 samples of at
//! least 20 ms each (the batches: 9 runs after one untimed), in the same process. Scenes: `../shared/data`
//! (when present), `data/city.glb`, and the generated cities
//! `target/bench-cities/city_s3.glb` and `city_s10.glb` when they exist (see
//! benches/README.md).
//!
//! ```text
//! cargo bench --bench intersect
//! ```

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use scene_intersect::prelude::*;

mod edits;
mod peers;
mod profile;
mod scenes;
mod table;
mod workloads;

use edits::{print_moves, print_structural_edits, print_whole_scene_moves};
use profile::profile_only;
use scenes::{scenes, BATCH};
use table::print_ratios;
use workloads::{
    ours_boxes, ours_build, ours_segments, ours_spheres, parry_boxes, parry_build,
    parry_segments_all, parry_segments_nearest, parry_spheres,
};

fn bench_all(c: &mut Criterion) {
    let mut benches = scenes();
    if let Ok(spec) = std::env::var("BENCH_PROFILE") {
        profile_only(&benches, &spec);
    }
    // BENCH_EDITS_ONLY=1: only the `move`, `whole scene` and `structure` lines (a few
    // seconds a scene, where the ratio table takes minutes).
    if std::env::var_os("BENCH_EDITS_ONLY").is_some() {
        print_moves(&mut benches);
        print_whole_scene_moves(&mut benches);
        print_structural_edits(&mut benches);
        return;
    }
    print_ratios(&benches);
    for b in &benches {
        let mut group = c.benchmark_group(&b.name);
        group.sample_size(10);
        group.warm_up_time(std::time::Duration::from_millis(300));
        group.measurement_time(std::time::Duration::from_secs(2));
        let mut v = IntersectionVisitor::new();
        group.bench_function(BenchmarkId::new("segments_all", "ours"), |x| {
            x.iter(|| ours_segments(b, &mut v, IntersectionLimit::None, BATCH))
        });
        group.bench_function(BenchmarkId::new("segments_all", "parry"), |x| {
            x.iter(|| parry_segments_all(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("segments_nearest", "ours"), |x| {
            x.iter(|| ours_segments(b, &mut v, IntersectionLimit::Nearest, BATCH))
        });
        group.bench_function(BenchmarkId::new("segments_nearest", "parry"), |x| {
            x.iter(|| parry_segments_nearest(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("boxes", "ours"), |x| {
            x.iter(|| ours_boxes(b, &mut v, BATCH, HitRecords::Full))
        });
        group.bench_function(BenchmarkId::new("boxes", "parry"), |x| {
            x.iter(|| parry_boxes(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("spheres", "ours"), |x| {
            x.iter(|| ours_spheres(b, &mut v, BATCH, HitRecords::Full))
        });
        group.bench_function(BenchmarkId::new("spheres", "parry"), |x| {
            x.iter(|| parry_spheres(b, BATCH))
        });
        group.bench_function(BenchmarkId::new("build", "ours"), |x| {
            x.iter(|| ours_build(b))
        });
        group.bench_function(BenchmarkId::new("build", "parry"), |x| {
            x.iter(|| parry_build(b))
        });
        group.finish();
    }
    // Last: the moved and edited instances stay detached from the world tree until the
    // next rebuild, which would slow the queries above on the cities.
    print_moves(&mut benches);
    print_whole_scene_moves(&mut benches);
    print_structural_edits(&mut benches);
}

criterion_group!(benches, bench_all);
criterion_main!(benches);
