//! One function per engine and workload: ours (with and without the query tool's
//! path, one and two threads) and parry3d's, each answering `n` queries of a scene.

use std::time::Instant;

use glam::{DVec3, Quat};
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Pose;
use parry3d::query::{intersection_test, Ray, RayCast};
use parry3d::shape::{Ball, Cuboid, TriMesh};
use scene_intersect::accel::SceneIndex;
use scene_intersect::io::query_file::{
    answer_query_lines, parse_query_file, BatchAnswer, QueryLine,
};
use scene_intersect::prelude::*;

use crate::scenes::Bench;

pub(crate) fn ours_segments(
    b: &Bench,
    v: &mut IntersectionVisitor,
    limit: IntersectionLimit,
    n: usize,
) -> usize {
    ours_segments_of(&b.segments[..n], b, v, limit)
}

/// [`ours_segments`] with every hit wanted as summaries only
/// (`HitRecords::Summaries`: no full records are built).
pub(crate) fn ours_segment_summaries(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    let mut hits = 0;
    let (s, e) = b.segments[0];
    let mut i = LineSegmentIntersector::new(s, e)
        .unwrap()
        .with_records(HitRecords::Summaries);
    for &(s, e) in &b.segments[..n] {
        i.set_segment(s, e).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.summaries().len();
    }
    hits
}

/// Nearest segments as the pick example (and OpenSceneGraph's habit) asks them: a new
/// intersector for every query. (Never inlined: the profiles collect `ours_*`.)
#[inline(never)]
pub(crate) fn ours_fresh_nearest(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    let mut hits = 0;
    for &(s, e) in &b.segments[..n] {
        let mut i = LineSegmentIntersector::new(s, e)
            .unwrap()
            .with_limit(IntersectionLimit::Nearest);
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.intersections().len();
    }
    hits
}

/// The nearest hits of the first `n` picking rays.
pub(crate) fn ours_picks(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    ours_segments_of(&b.picks[..n], b, v, IntersectionLimit::Nearest)
}

pub(crate) fn ours_segments_of(
    segments: &[(DVec3, DVec3)],
    b: &Bench,
    v: &mut IntersectionVisitor,
    limit: IntersectionLimit,
) -> usize {
    let mut hits = 0;
    let (s, e) = segments[0];
    let mut i = LineSegmentIntersector::new(s, e).unwrap().with_limit(limit);
    for &(s, e) in segments {
        i.set_segment(s, e).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.intersections().len();
    }
    hits
}

pub(crate) fn parry_segments_all(b: &Bench, n: usize) -> usize {
    let mut hits = 0;
    for &(s, e) in &b.segments[..n] {
        let ray = Ray::new(s.as_vec3(), (e - s).as_vec3());
        for leaf in b
            .parry
            .bvh()
            .leaves(|node| node.aabb().intersects_local_ray(&ray, 1.0))
        {
            if b.parry
                .triangle(leaf)
                .cast_local_ray(&ray, 1.0, false)
                .is_some()
            {
                hits += 1;
            }
        }
    }
    hits
}

pub(crate) fn parry_segments_nearest(b: &Bench, n: usize) -> usize {
    parry_nearest_of(&b.segments[..n], b)
}

pub(crate) fn parry_picks(b: &Bench, n: usize) -> usize {
    parry_nearest_of(&b.picks[..n], b)
}

pub(crate) fn parry_nearest_of(segments: &[(DVec3, DVec3)], b: &Bench) -> usize {
    segments
        .iter()
        .filter(|(s, e)| {
            let ray = Ray::new(s.as_vec3(), (*e - *s).as_vec3());
            b.parry.cast_local_ray(&ray, 1.0, false).is_some()
        })
        .count()
}

/// The vehicle boxes' hits, as full records or only as summaries.
pub(crate) fn ours_boxes(
    b: &Bench,
    v: &mut IntersectionVisitor,
    n: usize,
    records: HitRecords,
) -> usize {
    let mut hits = 0;
    let (c, half, q) = b.boxes[0];
    let mut i = PolytopeIntersector::new(Polytope::from_oriented_box(c, half, q).unwrap())
        .with_primitive_mask(PrimitiveMask::TRIANGLES)
        .with_records(records);
    for &(c, half, q) in &b.boxes[..n] {
        i.set_oriented_box(c, half, q).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.summaries().len();
    }
    hits
}

/// The boxes given as planes (as a query file gives them), written in place by
/// `set_planes`, which finds the box in them as `Polytope::new` does.
pub(crate) fn ours_box_planes(b: &Bench, v: &mut IntersectionVisitor, n: usize) -> usize {
    let mut hits = 0;
    let mut i = PolytopeIntersector::new(Polytope::new(b.box_planes[0].iter().copied()).unwrap())
        .with_primitive_mask(PrimitiveMask::TRIANGLES);
    for planes in &b.box_planes[..n] {
        i.set_planes(planes).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.intersections().len();
    }
    hits
}

pub(crate) fn parry_boxes(b: &Bench, n: usize) -> usize {
    let mut hits = 0;
    for &(c, half, q) in &b.boxes[..n] {
        let cuboid = Cuboid::new(half.as_vec3());
        let pose = Pose::from_parts(c.as_vec3(), q.as_quat());
        let aabb = cuboid.aabb(&pose);
        for t in b.parry.bvh().intersect_aabb(&aabb) {
            let tri = b.parry.triangle(t);
            if intersection_test(&pose, &cuboid, &Pose::IDENTITY, &tri)
                .is_ok_and(|i| i.intersecting)
            {
                hits += 1;
            }
        }
    }
    hits
}

/// The balls' hits, as full records or only as summaries.
pub(crate) fn ours_spheres(
    b: &Bench,
    v: &mut IntersectionVisitor,
    n: usize,
    records: HitRecords,
) -> usize {
    let mut hits = 0;
    let (c, r) = b.spheres[0];
    let mut i = SphereIntersector::new(c, r)
        .unwrap()
        .with_primitive_mask(PrimitiveMask::TRIANGLES)
        .with_records(records);
    for &(c, r) in &b.spheres[..n] {
        i.set_sphere(c, r).unwrap();
        v.apply(&b.scene, b.root, &mut i).unwrap();
        hits += i.summaries().len();
    }
    hits
}

pub(crate) fn parry_spheres(b: &Bench, n: usize) -> usize {
    let mut hits = 0;
    for &(c, r) in &b.spheres[..n] {
        let ball = Ball::new(r as f32);
        let pose = Pose::from_parts(c.as_vec3(), Quat::IDENTITY);
        let aabb = ParryAabb::new(
            (c - DVec3::splat(r)).as_vec3(),
            (c + DVec3::splat(r)).as_vec3(),
        );
        for t in b.parry.bvh().intersect_aabb(&aabb) {
            let tri = b.parry.triangle(t);
            if intersection_test(&pose, &ball, &Pose::IDENTITY, &tri).is_ok_and(|i| i.intersecting)
            {
                hits += 1;
            }
        }
    }
    hits
}

/// Everything a query needs: the scene index (the instances, their tree, and the world
/// tree over every placed triangle) and the own BVH of every drawable the world tree
/// keeps whole (the cities' shared building meshes; none in the shared scenes). The
/// answer counts the primitives held.
pub(crate) fn ours_build(b: &Bench) -> usize {
    let index = SceneIndex::build(&b.scene, b.root);
    let whole_primitives: usize = (index.whole_drawables().iter())
        .filter_map(|&d| b.scene.build_primitive_bvh(d))
        .map(|bvh| bvh.len())
        .sum();
    index.world().triangle_count() + whole_primitives
}

pub(crate) fn parry_build(b: &Bench) -> usize {
    TriMesh::new(b.parry_vertices.clone(), b.parry_indices.clone())
        .map(|m| m.num_triangles())
        .unwrap_or(0)
}

/// The batch of nearest-hit segment queries, made afresh for each run.
pub(crate) fn batch_queries(b: &Bench) -> Vec<LineSegmentIntersector> {
    b.segments
        .iter()
        .map(|&(s, e)| {
            LineSegmentIntersector::new(s, e)
                .unwrap()
                .with_limit(IntersectionLimit::Nearest)
        })
        .collect()
}

/// The median time of `run` on a pool of `threads` threads, over 9 timed runs after one
/// untimed (which warms the pool's threads and the caches), in milliseconds, and the
/// answer count: `run` times one batch itself and gives its milliseconds and answers.
/// Nine runs, not five: a batch of a small scene takes a few milliseconds, which one
/// preemption of the shared machine can double.
pub(crate) fn median_of_batches(
    threads: usize,
    mut run: impl FnMut(&rayon::ThreadPool) -> (f64, usize),
) -> (f64, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut times = Vec::new();
    let mut answer = 0;
    for k in 0..10 {
        let (ms, answers) = run(&pool);
        if k > 0 {
            times.push(ms);
        }
        answer = answers;
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], answer)
}

/// Median wall time of `apply_batch` on `threads` threads (see [`median_of_batches`]),
/// and the answer count. Only the batch call is timed: the intersectors are made before
/// the clock starts and dropped after it stops (the caller's work, serial, which would
/// cap any speed-up by Amdahl's law).
pub(crate) fn ours_batch_ms(b: &Bench, threads: usize) -> (f64, usize) {
    let v = IntersectionVisitor::new();
    median_of_batches(threads, |pool| {
        let mut queries = batch_queries(b);
        let t = Instant::now();
        pool.install(|| v.apply_batch(&b.scene, b.root, &mut queries));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        (ms, queries.iter().map(|q| q.intersections().len()).sum())
    })
}

/// The first `n` segments, boxes (as their six planes) and spheres as the lines of a
/// query file (`../shared/QUERY_FORMAT.md`), read back as the query tool reads them:
/// numbers written in Rust's shortest round-trip form, so the queries are the same.
pub(crate) fn query_lines(b: &Bench, n: usize) -> [Vec<QueryLine>; 3] {
    let segments: String = (b.segments[..n].iter())
        .map(|(s, e)| {
            format!(
                "seg {:?} {:?} {:?} {:?} {:?} {:?}\n",
                s.x, s.y, s.z, e.x, e.y, e.z
            )
        })
        .collect();
    let boxes: String = (b.box_planes[..n].iter())
        .map(|planes| {
            let numbers: Vec<String> = (planes.iter())
                .flat_map(|p| p.to_array())
                .map(|x| format!("{x:?}"))
                .collect();
            format!("poly {} {}\n", planes.len(), numbers.join(" "))
        })
        .collect();
    let spheres: String = (b.spheres[..n].iter())
        .map(|(c, r)| format!("sphere {:?} {:?} {:?} {r:?}\n", c.x, c.y, c.z))
        .collect();
    [segments, boxes, spheres].map(|text| parse_query_file(&text))
}

/// The query tool's answer to `lines` (`examples/query.rs` without reading and writing:
/// [`answer_query_lines`] on one thread), as the triangles hit. Unlike the tool's clock,
/// this one also runs while the answers are dropped.
pub(crate) fn ours_query_tool(b: &Bench, pool: &rayon::ThreadPool, lines: &[QueryLine]) -> usize {
    let v = IntersectionVisitor::new();
    let answers = pool.install(|| answer_query_lines(&v, &b.scene, &b.import, lines));
    (answers.iter().flatten())
        .map(|answer| match answer {
            BatchAnswer::Segment(rows) => rows.len(),
            BatchAnswer::Polytope(rows) | BatchAnswer::Sphere(rows) => rows.len(),
        })
        .sum()
}

/// [`ours_batch_ms`] for `map_batch`: the same 10 000 nearest segments, one intersector
/// per worker moved from query to query, keeping each nearest ratio. Everything is
/// inside the clock here (the intersectors are the batch's own).
pub(crate) fn ours_mapped_batch_ms(b: &Bench, threads: usize) -> (f64, usize) {
    let v = IntersectionVisitor::new();
    median_of_batches(threads, |pool| {
        let t = Instant::now();
        let nearest = pool.install(|| {
            v.map_batch(
                &b.scene,
                b.root,
                &b.segments,
                |&(s, e)| {
                    LineSegmentIntersector::new(s, e)
                        .map(|i| i.with_limit(IntersectionLimit::Nearest))
                },
                |i, &(s, e)| i.set_segment(s, e),
                |i| i.first_intersection().map(|hit| hit.ratio),
            )
        });
        let ms = t.elapsed().as_secs_f64() * 1e3;
        (
            ms,
            nearest.iter().filter(|r| matches!(r, Ok(Some(_)))).count(),
        )
    })
}

// ----- the ratio table -------------------------------------------------------------
