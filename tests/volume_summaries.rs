//! Summaries of polytope and sphere hits (`HitRecords::Summaries`) are the full
//! records' hits, in the same order, with the same numbers: on real scenes, for every
//! limit, with and without acceleration, with points and lines tested too, and for one
//! intersector moved from query to query.

use std::path::PathBuf;

use glam::{DQuat, DVec3, DVec4};
use scene_intersect::intersectors::PrimitiveKind;
use scene_intersect::prelude::*;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// What a summary holds, owned, for comparing.
#[derive(Debug, PartialEq)]
struct Owned {
    distance: f64,
    node_path: Vec<NodeId>,
    drawable: DrawableId,
    primitive_index: u32,
    primitive_kind: PrimitiveKind,
    world_point: DVec3,
}

fn owned(s: VolumeHitSummary<'_>) -> Owned {
    Owned {
        distance: s.distance,
        node_path: s.node_path.to_vec(),
        drawable: s.drawable,
        primitive_index: s.primitive_index,
        primitive_kind: s.primitive_kind,
        world_point: s.world_point,
    }
}

/// What the comparison reads of a polytope or sphere intersector.
trait Answers: Intersector {
    /// The full records' fields, read from the records themselves (not through
    /// `summaries`).
    fn records_read(&self) -> Vec<Owned>;
    /// The answers through `summaries`.
    fn summarized(&self) -> Vec<Owned>;
}

/// The same reading for both intersectors, whose hits have the same field names.
macro_rules! answers {
    ($intersector:ty) => {
        impl Answers for $intersector {
            fn records_read(&self) -> Vec<Owned> {
                (self.intersections().iter())
                    .map(|h| Owned {
                        distance: h.distance,
                        node_path: h.node_path.clone(),
                        drawable: h.drawable,
                        primitive_index: h.primitive_index,
                        primitive_kind: h.primitive_kind,
                        world_point: h.world_point,
                    })
                    .collect()
            }

            fn summarized(&self) -> Vec<Owned> {
                assert_eq!(self.summaries().len(), self.summaries().count());
                self.summaries().map(owned).collect()
            }
        }
    };
}

answers!(PolytopeIntersector);
answers!(SphereIntersector);

/// Answers query `q` (made by `make`, full records or summaries) with `v`: full
/// records, read directly and as summaries; summaries alone; and `moved`, once
/// `move_to` has made it this query. All three must be the same; returns the hits.
fn compare<I: Answers>(
    (scene, root, v): (&SceneGraph, NodeId, &mut IntersectionVisitor),
    q: usize,
    make: impl Fn(HitRecords) -> I,
    moved: &mut I,
    move_to: impl FnOnce(&mut I),
) -> usize {
    let mut full = make(HitRecords::Full);
    v.apply(scene, root, &mut full).unwrap();
    let expected = full.records_read();
    assert_eq!(
        full.summarized(),
        expected,
        "query {q}: summaries of full records"
    );
    let mut summarized = make(HitRecords::Summaries);
    v.apply(scene, root, &mut summarized).unwrap();
    assert!(summarized.records_read().is_empty());
    assert_eq!(summarized.summarized(), expected, "query {q}: summaries");
    move_to(moved);
    v.apply(scene, root, moved).unwrap();
    assert_eq!(moved.summarized(), expected, "query {q}: moved intersector");
    expected.len()
}

/// The scenes compared: the project's city, and littlest_tokyo when `../shared` is
/// there.
fn scenes() -> Vec<(SceneGraph, NodeId, DVec3, DVec3)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("data/city.glb")];
    let shared = root.join("../shared/data/littlest_tokyo.glb");
    if shared.is_file() {
        files.push(shared);
    } else {
        eprintln!("skipping littlest_tokyo: ../shared/data is absent");
    }
    (files.iter())
        .map(|path| {
            let (scene, import) = load_gltf(path).unwrap();
            let bound = scene.node_bound(import.root).unwrap();
            let r = DVec3::splat(bound.radius * 0.7);
            (scene, import.root, bound.center - r, bound.center + r)
        })
        .collect()
}

/// A point near the scene's surfaces: where a segment down through a random point of
/// `[min, max]` first meets something (the random point itself when nothing is below).
fn near_surface(scene: &SceneGraph, root: NodeId, rng: &mut Rng, min: DVec3, max: DVec3) -> DVec3 {
    let p = rng.in_box(min, max);
    let (top, bottom) = (DVec3::new(p.x, max.y, p.z), DVec3::new(p.x, min.y, p.z));
    let mut down = LineSegmentIntersector::new(top, bottom)
        .unwrap()
        .with_limit(IntersectionLimit::Nearest);
    IntersectionVisitor::new()
        .apply(scene, root, &mut down)
        .unwrap();
    down.intersections().first().map_or(p, |h| h.world_point)
}

const LIMITS: [IntersectionLimit; 4] = [
    IntersectionLimit::None,
    IntersectionLimit::Nearest,
    IntersectionLimit::One,
    IntersectionLimit::OnePerDrawable,
];

/// Every fourth query tests points and lines too (the plain traversal and the whole
/// drawables then meet them).
fn mask_of(q: usize) -> PrimitiveMask {
    if q % 4 == 3 {
        PrimitiveMask::ALL
    } else {
        PrimitiveMask::TRIANGLES
    }
}

#[test]
fn polytope_summaries_are_the_full_records_hits() {
    for (scene, root, min, max) in scenes() {
        let size = (max - min).max_element();
        let mut rng = Rng(0x7u64 << 40 | 0x89ab_cdef);
        let start = Polytope::from_oriented_box(min, DVec3::ONE, DQuat::IDENTITY).unwrap();
        let mut moved = PolytopeIntersector::new(start).with_records(HitRecords::Summaries);
        let (mut compared, mut hits) = (0, 0);
        for q in 0..80 {
            let center = near_surface(&scene, root, &mut rng, min, max);
            let half = DVec3::new(rng.next(), rng.next(), rng.next()) * size * 0.05
                + DVec3::splat(size * 0.002);
            let turn = DQuat::from_rotation_y(rng.range(0.0, std::f64::consts::TAU))
                * DQuat::from_rotation_x(rng.range(-0.5, 0.5));
            // Every third query is a box with one plane more, tilted through its
            // centre: a polytope that is not a box (clipped, not box-filtered), its
            // reference plane not one of the box's.
            let polytope = if q % 3 == 2 {
                let mut planes = Polytope::from_oriented_box(center, half, turn)
                    .unwrap()
                    .planes()
                    .to_vec();
                let n = DVec3::new(1.0, 2.0, 0.5).normalize();
                planes.push(DVec4::new(n.x, n.y, n.z, -n.dot(center)));
                Polytope::new(planes).unwrap()
            } else {
                Polytope::from_oriented_box(center, half, turn).unwrap()
            };
            let (limit, mask) = (LIMITS[q % 4], mask_of(q / 4));
            for accelerated in [true, false] {
                let mut v = IntersectionVisitor::new();
                v.set_use_acceleration(accelerated);
                let make = |records| {
                    (PolytopeIntersector::new(polytope.clone()))
                        .with_limit(limit)
                        .with_primitive_mask(mask)
                        .with_records(records)
                };
                let move_to = |i: &mut PolytopeIntersector| {
                    i.set_polytope(polytope.clone());
                    i.set_limit(limit);
                    i.set_primitive_mask(mask);
                };
                hits += compare((&scene, root, &mut v), q, make, &mut moved, move_to);
                compared += 1;
            }
        }
        assert_eq!(compared, 160);
        assert!(hits > 200, "only {hits} hits compared");
    }
}

#[test]
fn sphere_summaries_are_the_full_records_hits() {
    for (scene, root, min, max) in scenes() {
        let size = (max - min).max_element();
        let mut rng = Rng(0x3u64 << 40 | 0x1357_9bdf);
        let mut moved = SphereIntersector::new(min, 1.0)
            .unwrap()
            .with_records(HitRecords::Summaries);
        let (mut compared, mut hits) = (0, 0);
        for q in 0..80 {
            let center = near_surface(&scene, root, &mut rng, min, max);
            let radius = rng.range(0.002, 0.06) * size;
            let (limit, mask) = (LIMITS[q % 4], mask_of(q / 4));
            for accelerated in [true, false] {
                let mut v = IntersectionVisitor::new();
                v.set_use_acceleration(accelerated);
                let make = |records| {
                    (SphereIntersector::new(center, radius).unwrap())
                        .with_limit(limit)
                        .with_primitive_mask(mask)
                        .with_records(records)
                };
                let move_to = |i: &mut SphereIntersector| {
                    i.set_sphere(center, radius).unwrap();
                    i.set_limit(limit);
                    i.set_primitive_mask(mask);
                };
                hits += compare((&scene, root, &mut v), q, make, &mut moved, move_to);
                compared += 1;
            }
        }
        assert_eq!(compared, 160);
        assert!(hits > 200, "only {hits} hits compared");
    }
}

#[test]
fn moving_the_query_or_changing_the_records_drops_the_summaries() {
    let (scene, root, min, max) = scenes().swap_remove(0);
    let center = (min + max) / 2.0;
    let everything = (max - min).length();
    let mut v = IntersectionVisitor::new();
    let mut ball = SphereIntersector::new(center, everything).unwrap();
    v.apply(&scene, root, &mut ball).unwrap();
    let full = ball.intersections().len();
    assert!(full > 0);
    ball.set_records(HitRecords::Summaries);
    assert_eq!((ball.intersections().len(), ball.summaries().len()), (0, 0));
    v.apply(&scene, root, &mut ball).unwrap();
    assert_eq!(ball.summaries().len(), full);
    ball.set_sphere(center, everything).unwrap();
    assert_eq!(ball.summaries().len(), 0);

    let around = Polytope::from_oriented_box(center, DVec3::splat(everything), DQuat::IDENTITY);
    let mut boxed = PolytopeIntersector::new(around.unwrap()).with_records(HitRecords::Summaries);
    v.apply(&scene, root, &mut boxed).unwrap();
    assert_eq!(
        boxed.summaries().len(),
        full,
        "the box holds what the ball does"
    );
    boxed.set_polytope(boxed.polytope().clone());
    assert_eq!(boxed.summaries().len(), 0);
    v.apply(&scene, root, &mut boxed).unwrap();
    boxed.set_records(HitRecords::Full);
    assert_eq!(boxed.summaries().len(), 0);
    v.apply(&scene, root, &mut boxed).unwrap();
    assert_eq!(boxed.intersections().len(), full);
}
