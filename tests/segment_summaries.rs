//! Summaries of segment hits (`HitRecords::Summaries`) are the full records'
//! hits, in the same order, with the same numbers: on real scenes, for every limit,
//! with and without acceleration, with a picking tolerance (points and lines), and for
//! one intersector moved from segment to segment.

use std::path::PathBuf;

use glam::DVec3;
use scene_intersect::prelude::*;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// What a summary holds, owned, for comparing.
#[derive(Debug, PartialEq)]
struct Owned {
    ratio: f64,
    node_path: Vec<NodeId>,
    drawable: DrawableId,
    primitive_index: u32,
    primitive_kind: scene_intersect::intersectors::PrimitiveKind,
    world_point: DVec3,
}

fn owned(s: SegmentHitSummary<'_>) -> Owned {
    Owned {
        ratio: s.ratio,
        node_path: s.node_path.to_vec(),
        drawable: s.drawable,
        primitive_index: s.primitive_index,
        primitive_kind: s.primitive_kind,
        world_point: s.world_point,
    }
}

/// The full records' fields, read from the records themselves (not through
/// `summaries`).
fn from_records(hits: &[LineSegmentHit]) -> Vec<Owned> {
    hits.iter()
        .map(|h| Owned {
            ratio: h.ratio,
            node_path: h.node_path.clone(),
            drawable: h.drawable,
            primitive_index: h.primitive_index,
            primitive_kind: h.primitive_kind,
            world_point: h.world_point,
        })
        .collect()
}

fn scenes() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("data/city.glb")];
    let shared = root.join("../shared/data/littlest_tokyo.glb");
    if shared.is_file() {
        files.push(shared);
    } else {
        eprintln!("skipping littlest_tokyo: ../shared/data is absent");
    }
    files
}

#[test]
fn summaries_are_the_full_records_hits() {
    for path in scenes() {
        let (scene, import) = load_gltf(&path).unwrap();
        let root = import.root;
        let bound = scene.node_bound(root).unwrap();
        let r = bound.radius * 0.8;
        let (min, max) = (
            bound.center - DVec3::splat(r),
            bound.center + DVec3::splat(r),
        );
        let mut rng = Rng(0x5u64 << 40 | 0x0123_4567);
        let mut moved = LineSegmentIntersector::new(min, max)
            .unwrap()
            .with_records(HitRecords::Summaries);
        let (mut compared, mut hits) = (0, 0);
        for q in 0..100 {
            let (a, b) = (rng.in_box(min, max), rng.in_box(min, max));
            let limit = [
                IntersectionLimit::None,
                IntersectionLimit::Nearest,
                IntersectionLimit::One,
                IntersectionLimit::OnePerDrawable,
            ][q % 4];
            // Every fifth segment picks points and lines too.
            let tolerance = (q % 5 == 0).then_some(r * 1e-3);
            for accelerated in [true, false] {
                let mut v = IntersectionVisitor::new();
                v.set_use_acceleration(accelerated);
                let make = || {
                    let mut i = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
                    i.set_picking_tolerance(tolerance).unwrap();
                    i
                };
                let mut full = make();
                v.apply(&scene, root, &mut full).unwrap();
                let expected = from_records(full.intersections());
                // Full records read as summaries.
                let read: Vec<Owned> = full.summaries().map(owned).collect();
                assert_eq!(
                    read, expected,
                    "{path:?} query {q}: summaries of full records"
                );
                // Summaries only.
                let mut summarized = make().with_records(HitRecords::Summaries);
                v.apply(&scene, root, &mut summarized).unwrap();
                assert!(summarized.intersections().is_empty());
                assert_eq!(summarized.summaries().len(), expected.len());
                let got: Vec<Owned> = summarized.summaries().map(owned).collect();
                assert_eq!(
                    got, expected,
                    "{path:?} query {q} ({limit:?}, accelerated {accelerated})"
                );
                // One intersector moved from segment to segment.
                moved.set_segment(a, b).unwrap();
                moved.set_limit(limit);
                moved.set_picking_tolerance(tolerance).unwrap();
                v.apply(&scene, root, &mut moved).unwrap();
                let again: Vec<Owned> = moved.summaries().map(owned).collect();
                assert_eq!(again, expected, "{path:?} query {q}: moved intersector");
                compared += 1;
                hits += expected.len();
            }
        }
        assert_eq!(compared, 200);
        assert!(hits > 100, "{path:?}: only {hits} hits compared");
    }
}

/// The city, and a segment straight down through its centre (it meets the ground at
/// least).
fn city_and_a_segment_down() -> (SceneGraph, NodeId, DVec3, DVec3) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb");
    let (scene, import) = load_gltf(&path).unwrap();
    let bound = scene.node_bound(import.root).unwrap();
    let top = bound.center + DVec3::Y * bound.radius;
    let bottom = bound.center - DVec3::Y * bound.radius;
    (scene, import.root, top, bottom)
}

#[test]
fn moving_the_segment_drops_the_summaries() {
    let (scene, root, top, bottom) = city_and_a_segment_down();
    let mut down = LineSegmentIntersector::new(top, bottom)
        .unwrap()
        .with_records(HitRecords::Summaries);
    IntersectionVisitor::new()
        .apply(&scene, root, &mut down)
        .unwrap();
    assert!(down.summaries().len() > 0);
    down.set_segment(top, top + DVec3::X).unwrap();
    assert_eq!(down.summaries().len(), 0);
}

#[test]
fn changing_the_records_drops_the_last_answers() {
    let (scene, root, top, bottom) = city_and_a_segment_down();
    let mut down = LineSegmentIntersector::new(top, bottom).unwrap();
    let mut v = IntersectionVisitor::new();
    v.apply(&scene, root, &mut down).unwrap();
    let full = down.intersections().len();
    assert!(full > 0);
    // Full records, then summaries: neither answer of the full traversal is left.
    down.set_records(HitRecords::Summaries);
    assert!(down.intersections().is_empty());
    assert_eq!(down.summaries().len(), 0);
    v.apply(&scene, root, &mut down).unwrap();
    assert_eq!(down.summaries().len(), full);
    // And back.
    down.set_records(HitRecords::Full);
    assert_eq!(down.summaries().len(), 0);
    v.apply(&scene, root, &mut down).unwrap();
    assert_eq!(down.intersections().len(), full);
    assert_eq!(down.summaries().len(), full);
}
