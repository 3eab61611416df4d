//! An intersector moved from query to query (a vehicle's box or ball every frame, a
//! pick every mouse move, with full hit records or summaries) stops allocating
//! once it has answered its queries once: the same queries again allocate nothing. (Not
//! yet for every size of answer: a list of
//! more than 256 polytope or sphere hits is still sorted into a new list, and a box
//! query's world walk groups more than 16 raw hits by instance in a list of its own.)
//! This test binary counts the allocations of its one thread through its own global
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use glam::{DQuat, DVec3, DVec4};
use scene_intersect::graph::{NodeId, SceneGraph};
use scene_intersect::intersectors::{
    HitRecords, LineSegmentIntersector, Polytope, PolytopeIntersector, PrimitiveMask,
    SphereIntersector,
};
use scene_intersect::io::import_gltf;
use scene_intersect::visitor::{IntersectionLimit, IntersectionVisitor, Intersector};

/// The system allocator, counting the allocations and reallocations of the thread
/// that asks for them while counting is on.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // (`try_with`: the thread's locals may be gone while it exits.)
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|n| n.set(n.get() + 1));
        }
    });
}

// SAFETY: every call is passed to `System` unchanged; counting only reads and writes
// this thread's own cells, and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How many allocations `f` makes on this thread.
fn allocations_of(f: impl FnOnce()) -> usize {
    COUNT.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    COUNT.with(|n| n.get())
}

/// The project's city: placed triangles in the world tree and shared meshes visited
/// whole.
fn city() -> (SceneGraph, NodeId) {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/city.glb")).unwrap();
    let mut scene = SceneGraph::new();
    let import = import_gltf(&mut scene, &bytes, None).unwrap();
    (scene, import.root)
}

/// Points over the middle of the city, `per_side` × `per_side`, at height `y`.
fn grid(scene: &SceneGraph, root: NodeId, per_side: u32, y: f64) -> Vec<DVec3> {
    let b = scene.node_bound(root).unwrap();
    let step = b.radius / f64::from(per_side);
    let mut points = Vec::new();
    for i in 0..per_side {
        for k in 0..per_side {
            let x = b.center.x - 0.5 * b.radius + step * (f64::from(i) + 0.37);
            let z = b.center.z - 0.5 * b.radius + step * (f64::from(k) + 0.61);
            points.push(DVec3::new(x, y, z));
        }
    }
    points
}

/// Answers `queries` with one intersector moved by `set` from query to query, twice:
/// the second time allocates nothing. Returns the hits of the second time, which the
/// caller checks are some.
fn assert_second_pass_allocates_nothing<I: Intersector, Q: Copy>(
    scene: &SceneGraph,
    root: NodeId,
    intersector: &mut I,
    queries: &[Q],
    set: impl Fn(&mut I, Q),
    hits: impl Fn(&I) -> usize,
) -> usize {
    let mut visitor = IntersectionVisitor::new();
    let mut pass = |intersector: &mut I| {
        let mut total = 0;
        for &q in queries {
            set(intersector, q);
            visitor.apply(scene, root, intersector).unwrap();
            total += hits(intersector);
        }
        total
    };
    let first = pass(intersector);
    let mut second = 0;
    let allocations = allocations_of(|| second = pass(intersector));
    assert_eq!(first, second);
    assert_eq!(allocations, 0, "{} queries, {second} hits", queries.len());
    second
}

#[test]
fn moved_intersectors_allocate_nothing_for_queries_they_have_answered() {
    let (scene, root) = city();
    let b = scene.node_bound(root).unwrap();
    // The scene index is built by the first query of the first pass.
    let ground = grid(&scene, root, 12, 0.5);
    let tops = grid(&scene, root, 12, b.center.y + b.radius);
    let down = DVec3::new(0.0, -2.0 * b.radius, 0.0);

    for limit in [IntersectionLimit::None, IntersectionLimit::Nearest] {
        for records in [
            HitRecords::Full,
            HitRecords::Summaries,
            HitRecords::UnsortedSummaries,
        ] {
            let mut segment = LineSegmentIntersector::new(tops[0], tops[0] + down)
                .unwrap()
                .with_limit(limit)
                .with_records(records);
            let hits = assert_second_pass_allocates_nothing(
                &scene,
                root,
                &mut segment,
                &tops,
                |i, top| i.set_segment(top, top + down).unwrap(),
                |i| i.summaries().len(),
            );
            assert!(hits >= tops.len(), "{limit:?}, {records:?}: {hits} hits");
        }
    }

    // Car-sized boxes sunk into the ground, turned a little more each time.
    let boxes: Vec<(DVec3, f64)> = (ground.iter().enumerate())
        .map(|(k, &c)| (c, 0.3 * k as f64))
        .collect();
    let car = |(c, turn): (DVec3, f64)| {
        Polytope::from_oriented_box(c, DVec3::new(1.0, 0.75, 2.0), DQuat::from_rotation_y(turn))
            .unwrap()
    };
    for records in [
        HitRecords::Full,
        HitRecords::Summaries,
        HitRecords::UnsortedSummaries,
    ] {
        let mut vehicle = PolytopeIntersector::new(car(boxes[0]))
            .with_primitive_mask(PrimitiveMask::TRIANGLES)
            .with_records(records);
        let hits = assert_second_pass_allocates_nothing(
            &scene,
            root,
            &mut vehicle,
            &boxes,
            |i, b| i.set_polytope(car(b)),
            |i| i.summaries().len(),
        );
        assert!(hits >= boxes.len(), "boxes, {records:?}: {hits} hits");
        // The same boxes given as planes (as a query file gives them), written in place.
        let planes: Vec<[DVec4; 6]> = (boxes.iter())
            .map(|&b| <[DVec4; 6]>::try_from(car(b).planes()).unwrap())
            .collect();
        let as_planes = assert_second_pass_allocates_nothing(
            &scene,
            root,
            &mut vehicle,
            &planes,
            |i, p| i.set_planes(&p).unwrap(),
            |i| i.summaries().len(),
        );
        assert_eq!(as_planes, hits, "boxes as planes, {records:?}");
    }

    // Balls of 1 to 8 m, which reach the buildings (whole items) as well as the ground.
    let balls: Vec<(DVec3, f64)> = (ground.iter().enumerate())
        .map(|(k, &c)| (c, 1.0 + (k % 8) as f64))
        .collect();
    for records in [
        HitRecords::Full,
        HitRecords::Summaries,
        HitRecords::UnsortedSummaries,
    ] {
        let mut ball = SphereIntersector::new(balls[0].0, balls[0].1)
            .unwrap()
            .with_primitive_mask(PrimitiveMask::TRIANGLES)
            .with_records(records);
        let hits = assert_second_pass_allocates_nothing(
            &scene,
            root,
            &mut ball,
            &balls,
            |i, (c, r)| i.set_sphere(c, r).unwrap(),
            |i| i.summaries().len(),
        );
        assert!(hits >= balls.len(), "balls, {records:?}: {hits} hits");
    }
}
