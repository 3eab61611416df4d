//! Unsorted summaries (`HitRecords::UnsortedSummaries`) are the sorted summaries' hits
//! in the order the traversal found them: on a scene whose plain traversal meets the far
//! triangle first, for all three intersectors, with and without acceleration.
//! (`tests/properties.rs` holds them to the full records, as a set, on random scenes.)

use glam::{DQuat, DVec3, Vec3};
use scene_intersect::prelude::*;

/// Two triangles across the z axis, under one group: the first child's in the plane
/// z = -8, the second's in z = -2, so that the plain traversal, which visits children
/// in order, meets the far one first.
fn far_then_near() -> (SceneGraph, NodeId, [DrawableId; 2]) {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let drawables = [-8.0f32, -2.0].map(|z| {
        let corners = vec![
            Vec3::new(-1.0, -1.0, z),
            Vec3::new(1.0, -1.0, z),
            Vec3::new(0.0, 1.0, z),
        ];
        let triangle = Geometry::new(corners)
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap();
        let drawable = scene.add_drawable(format!("z = {z}"), triangle);
        let geode = scene.add_geode(format!("geode at z = {z}"));
        scene.add_drawable_to_geode(geode, drawable).unwrap();
        scene.add_child(root, geode).unwrap();
        drawable
    });
    (scene, root, drawables)
}

/// What a query answered: (drawable, ratio or distance) per hit, in the summaries' order.
type Found = Vec<(DrawableId, f64)>;

/// Answers with `make`'s intersector (given its records) with and without acceleration:
/// the sorted and the unsorted summaries, plain, and the unsorted summaries accelerated.
fn answers<I: Intersector>(
    scene: &SceneGraph,
    root: NodeId,
    make: impl Fn(HitRecords) -> I,
    read: impl Fn(&I) -> Found,
) -> [Found; 3] {
    let run = |records, accelerated| {
        let mut v = IntersectionVisitor::new();
        v.set_use_acceleration(accelerated);
        let mut query = make(records);
        v.apply(scene, root, &mut query).unwrap();
        read(&query)
    };
    [
        run(HitRecords::Summaries, false),
        run(HitRecords::UnsortedSummaries, false),
        run(HitRecords::UnsortedSummaries, true),
    ]
}

/// The sorted summaries are near then far; the plain traversal's unsorted ones far then
/// near, as it found them; the accelerated traversal's the same two in some order.
fn check([sorted, plain, accelerated]: [Found; 3], [far, near]: [DrawableId; 2], at: [f64; 2]) {
    let [far_at, near_at] = at;
    assert_eq!(sorted, [(near, near_at), (far, far_at)]);
    assert_eq!(plain, [(far, far_at), (near, near_at)]);
    let mut accelerated = accelerated;
    accelerated.sort_by(|a, b| a.1.total_cmp(&b.1));
    assert_eq!(accelerated, sorted);
}

#[test]
fn a_segment_s_unsorted_summaries_come_in_the_order_found() {
    let (scene, root, drawables) = far_then_near();
    // From z = 0 down to z = -10: z = -2 at ratio 0.2, z = -8 at 0.8.
    let (start, end) = (DVec3::ZERO, DVec3::new(0.0, 0.0, -10.0));
    let found = answers(
        &scene,
        root,
        |records| {
            LineSegmentIntersector::new(start, end)
                .unwrap()
                .with_records(records)
        },
        |i| i.summaries().map(|h| (h.drawable, h.ratio)).collect(),
    );
    check(found, drawables, [0.8, 0.2]);
}

#[test]
fn a_ball_s_unsorted_summaries_come_in_the_order_found() {
    let (scene, root, drawables) = far_then_near();
    // Centred at the origin: the triangles' nearest points are 8 and 2 away.
    let found = answers(
        &scene,
        root,
        |records| {
            SphereIntersector::new(DVec3::ZERO, 9.0)
                .unwrap()
                .with_records(records)
        },
        |i| i.summaries().map(|h| (h.drawable, h.distance)).collect(),
    );
    check(found, drawables, [8.0, 2.0]);
}

#[test]
fn a_box_s_unsorted_summaries_come_in_the_order_found() {
    let (scene, root, drawables) = far_then_near();
    // The box [-2, 2] x [-2, 2] x [-9, 1], its last (reference) plane the face z = 1
    // (inward normal -z): a triangle wholly inside is 1 - z from it, 9 and 3.
    let around = Polytope::from_oriented_box(
        DVec3::new(0.0, 0.0, -4.0),
        DVec3::new(2.0, 2.0, 5.0),
        DQuat::IDENTITY,
    )
    .unwrap();
    let found = answers(
        &scene,
        root,
        |records| PolytopeIntersector::new(around.clone()).with_records(records),
        |i| i.summaries().map(|h| (h.drawable, h.distance)).collect(),
    );
    check(found, drawables, [9.0, 3.0]);
}
