//! One intersector moved from query to query (`set_segment`, `set_polytope`,
//! `set_sphere`) answers every query exactly as a new intersector would, keeps its
//! settings, and drops the previous query's hits when moved.

use glam::{DQuat, DVec3, DVec4, Vec3};
use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
use scene_intersect::graph::{NodeId, SceneGraph};
use scene_intersect::intersectors::{
    LineSegmentIntersector, Polytope, PolytopeIntersector, PrimitiveMask, SphereIntersector,
};
use scene_intersect::io::import_gltf;
use scene_intersect::visitor::{IntersectionLimit, IntersectionVisitor};

fn city() -> (SceneGraph, NodeId) {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/city.glb")).unwrap();
    let mut scene = SceneGraph::new();
    let import = import_gltf(&mut scene, &bytes, None).unwrap();
    (scene, import.root)
}

/// Points on a 5 × 5 grid over the middle of the city, at height `y`.
fn grid(scene: &SceneGraph, root: NodeId, y: f64) -> Vec<DVec3> {
    let b = scene.node_bound(root).unwrap();
    let mut points = Vec::new();
    for i in 0..5 {
        for k in 0..5 {
            let x = b.center.x - 0.5 * b.radius + 0.25 * b.radius * f64::from(i) + 0.37;
            let z = b.center.z - 0.5 * b.radius + 0.25 * b.radius * f64::from(k) + 0.61;
            points.push(DVec3::new(x, y, z));
        }
    }
    points
}

#[test]
fn a_moved_segment_intersector_answers_as_a_new_one() {
    let (scene, root) = city();
    let b = scene.node_bound(root).unwrap();
    let mut v = IntersectionVisitor::new();
    for limit in [IntersectionLimit::None, IntersectionLimit::Nearest] {
        let down = DVec3::new(0.0, -2.0 * b.radius, 0.0);
        let tops = grid(&scene, root, b.center.y + b.radius);
        let mut reused = LineSegmentIntersector::new(tops[0], tops[0] + down)
            .unwrap()
            .with_limit(limit);
        let mut hits_seen = 0;
        for &top in &tops {
            reused.set_segment(top, top + down).unwrap();
            assert_eq!((reused.start(), reused.end()), (top, top + down));
            v.apply(&scene, root, &mut reused).unwrap();
            let mut fresh = LineSegmentIntersector::new(top, top + down)
                .unwrap()
                .with_limit(limit);
            v.apply(&scene, root, &mut fresh).unwrap();
            assert_eq!(reused.intersections(), fresh.intersections(), "at {top}");
            hits_seen += fresh.intersections().len();
        }
        // Every vertical segment through the city's middle meets the ground at least.
        assert!(hits_seen >= tops.len(), "{hits_seen} hits");
    }
}

#[test]
fn a_moved_polytope_intersector_answers_as_a_new_one() {
    let (scene, root) = city();
    let mut v = IntersectionVisitor::new();
    // Car-sized boxes sunk 5 cm into the ground (the plane y = 0), turned a little more
    // each time.
    let centres = grid(&scene, root, 0.70);
    let car = |k: usize, c: DVec3| {
        Polytope::from_oriented_box(
            c,
            DVec3::new(1.0, 0.75, 2.0),
            DQuat::from_rotation_y(0.3 * k as f64),
        )
        .unwrap()
    };
    let reference = DVec4::new(0.0, 1.0, 0.0, 0.0);
    let mut reused =
        PolytopeIntersector::new(car(0, centres[0])).with_primitive_mask(PrimitiveMask::TRIANGLES);
    reused.set_reference_plane(reference).unwrap();
    let mut hits_seen = 0;
    for (k, &c) in centres.iter().enumerate() {
        reused.set_polytope(car(k, c));
        v.apply(&scene, root, &mut reused).unwrap();
        let mut fresh =
            PolytopeIntersector::new(car(k, c)).with_primitive_mask(PrimitiveMask::TRIANGLES);
        fresh.set_reference_plane(reference).unwrap();
        v.apply(&scene, root, &mut fresh).unwrap();
        assert_eq!(reused.intersections(), fresh.intersections(), "box {k}");
        hits_seen += fresh.intersections().len();
    }
    // Every box reaches into the ground.
    assert!(hits_seen >= centres.len(), "{hits_seen} hits");
}

#[test]
fn a_moved_sphere_intersector_answers_as_a_new_one() {
    let (scene, root) = city();
    let mut v = IntersectionVisitor::new();
    let centres = grid(&scene, root, 1.0);
    let mut reused = SphereIntersector::new(centres[0], 1.0)
        .unwrap()
        .with_limit(IntersectionLimit::Nearest);
    let mut hits_seen = 0;
    for (k, &c) in centres.iter().enumerate() {
        let radius = 1.5 + k as f64 * 0.5;
        reused.set_sphere(c, radius).unwrap();
        v.apply(&scene, root, &mut reused).unwrap();
        let mut fresh = SphereIntersector::new(c, radius)
            .unwrap()
            .with_limit(IntersectionLimit::Nearest);
        v.apply(&scene, root, &mut fresh).unwrap();
        assert_eq!(reused.intersections(), fresh.intersections(), "ball {k}");
        hits_seen += fresh.intersections().len();
    }
    assert!(hits_seen > 0, "the balls touch the ground");
}

#[test]
fn moving_drops_the_last_hits_and_refuses_bad_input() {
    let (scene, root) = city();
    let b = scene.node_bound(root).unwrap();
    let mut v = IntersectionVisitor::new();
    let top = DVec3::new(b.center.x, b.center.y + b.radius, b.center.z);
    let bottom = DVec3::new(b.center.x, b.center.y - b.radius, b.center.z);
    let mut segment = LineSegmentIntersector::new(top, bottom).unwrap();
    v.apply(&scene, root, &mut segment).unwrap();
    assert!(!segment.intersections().is_empty());
    // A refused move changes nothing.
    assert!(segment.set_segment(top, top).is_err());
    assert!(segment.set_segment(top, DVec3::NAN).is_err());
    assert_eq!((segment.start(), segment.end()), (top, bottom));
    assert!(!segment.intersections().is_empty());
    segment.set_segment(bottom, top).unwrap();
    assert!(segment.intersections().is_empty());

    let mut ball = SphereIntersector::new(b.center, b.radius).unwrap();
    v.apply(&scene, root, &mut ball).unwrap();
    assert!(!ball.intersections().is_empty());
    assert!(ball.set_sphere(b.center, -1.0).is_err());
    assert!(ball.set_sphere(DVec3::INFINITY, 1.0).is_err());
    assert_eq!((ball.center(), ball.radius()), (b.center, b.radius));
    ball.set_sphere(b.center, 1.0).unwrap();
    assert!(ball.intersections().is_empty());

    let whole =
        Polytope::from_oriented_box(b.center, DVec3::splat(b.radius), DQuat::IDENTITY).unwrap();
    let mut polytope = PolytopeIntersector::new(whole.clone());
    v.apply(&scene, root, &mut polytope).unwrap();
    assert!(!polytope.intersections().is_empty());
    polytope.set_polytope(whole);
    assert!(polytope.intersections().is_empty());
}

/// A 60 × 60 cell terrain of 7 200 triangles in one drawable placed once (so the scene
/// index keeps its triangles in its own tree, which queries cull with the polytope's
/// world planes), over `[-30, 30]` in x and z, rippled between y = 0 and y = 0.25.
fn terrain() -> (SceneGraph, NodeId) {
    let (cells, n) = (60u32, 61u32);
    let mut vertices = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let y = if (i + j) % 2 == 0 { 0.0 } else { 0.25 };
            vertices.push(Vec3::new(i as f32 - 30.0, y, j as f32 - 30.0));
        }
    }
    let mut indices = Vec::new();
    for j in 0..cells {
        for i in 0..cells {
            let a = j * n + i;
            indices.extend([a, a + 1, a + n + 1, a, a + n + 1, a + n]);
        }
    }
    let ground = Geometry::new(vertices)
        .with_primitive_set(PrimitiveSet::draw_elements_u32(
            PrimitiveMode::Triangles,
            indices,
        ))
        .unwrap();
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let geode = scene.add_geode("ground");
    let drawable = scene.add_drawable("ground", ground);
    scene.add_drawable_to_geode(geode, drawable).unwrap();
    scene.add_child(root, geode).unwrap();
    (scene, root)
}

#[test]
fn a_polytope_intersector_moved_between_boxes_and_scaled_planes_answers_as_a_new_one() {
    // A box's planes have unit normals and are used as they are; the same box given as
    // planes scaled by 3 has its planes normalized by the intersector. Moving one
    // intersector between the two kinds must never leave it culling with the planes
    // it prepared for an earlier polytope.
    let (scene, root) = terrain();
    let mut v = IntersectionVisitor::new();
    let car = |k: usize| {
        let c = DVec3::new(-24.0 + 2.3 * k as f64, 0.5, 20.0 - 1.7 * k as f64);
        let b = Polytope::from_oriented_box(
            c,
            DVec3::new(1.0, 0.75, 2.0),
            DQuat::from_rotation_y(0.3 * k as f64),
        )
        .unwrap();
        if k % 3 == 0 {
            b
        } else {
            Polytope::new(b.planes().iter().map(|&p| p * (k % 3) as f64 * 3.0)).unwrap()
        }
    };
    let mut reused = PolytopeIntersector::new(car(0));
    for k in 0..20 {
        reused.set_polytope(car(k));
        v.apply(&scene, root, &mut reused).unwrap();
        let mut fresh = PolytopeIntersector::new(car(k));
        v.apply(&scene, root, &mut fresh).unwrap();
        // A 2 × 4 footprint, turned, covers at least 8 cells' worth of triangles.
        assert!(fresh.intersections().len() >= 8, "box {k}");
        assert_eq!(reused.intersections(), fresh.intersections(), "box {k}");
    }
}
