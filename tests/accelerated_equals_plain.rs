//! The BVH path gives exactly the plain traversal's answers: same hits, same order, same
//! numbers, for segments (every limit), polytopes and spheres, on real scenes.

use std::path::PathBuf;

use glam::{DMat4, DQuat, DVec3, Vec3};
use scene_intersect::prelude::*;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;
#[path = "support/scenes.rs"]
mod scenes;
use scenes::real_scenes;

fn run<I: Intersector>(scene: &SceneGraph, root: NodeId, accelerated: bool, i: &mut I) {
    let mut v = IntersectionVisitor::new();
    v.set_use_acceleration(accelerated);
    v.apply(scene, root, i).unwrap();
}

#[test]
fn accelerated_equals_plain_on_real_scenes() {
    for path in real_scenes() {
        let (scene, import) = load_gltf(&path).unwrap();
        let root = import.root;
        let bound = scene.node_bound(root).unwrap();
        // Keep queries near the interesting part (the centre 60% of the bounding sphere).
        let r = bound.radius * 0.6;
        let (min, max) = (
            bound.center - DVec3::splat(r),
            bound.center + DVec3::splat(r),
        );
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut total_hits = 0;
        for q in 0..40 {
            let a = rng.in_box(min, max);
            let b = rng.in_box(min, max);
            for limit in [
                IntersectionLimit::None,
                IntersectionLimit::Nearest,
                IntersectionLimit::OnePerDrawable,
            ] {
                let seg = LineSegmentIntersector::new(a, b).unwrap().with_limit(limit);
                let (mut plain, mut fast) = (seg.clone(), seg);
                run(&scene, root, false, &mut plain);
                run(&scene, root, true, &mut fast);
                assert_eq!(
                    plain.intersections(),
                    fast.intersections(),
                    "{path:?} segment {q} {limit:?}"
                );
                total_hits += plain.intersections().len();
            }
            // A vehicle-sized box, randomly turned about y.
            let center = rng.in_box(min, max);
            let half = DVec3::new(
                1.0 + 2.0 * rng.next(),
                1.0 + rng.next(),
                2.0 + 4.0 * rng.next(),
            ) * (r / 50.0).max(1.0);
            let turn = DQuat::from_rotation_y(rng.next() * std::f64::consts::TAU);
            let poly =
                PolytopeIntersector::new(Polytope::from_oriented_box(center, half, turn).unwrap());
            let (mut plain, mut fast) = (poly.clone(), poly);
            run(&scene, root, false, &mut plain);
            run(&scene, root, true, &mut fast);
            assert_eq!(
                plain.intersections(),
                fast.intersections(),
                "{path:?} box {q}"
            );
            total_hits += plain.intersections().len();
            let ball = SphereIntersector::new(
                rng.in_box(min, max),
                (0.5 + 9.5 * rng.next()) * (r / 50.0).max(1.0),
            )
            .unwrap();
            let (mut plain, mut fast) = (ball.clone(), ball);
            run(&scene, root, false, &mut plain);
            run(&scene, root, true, &mut fast);
            assert_eq!(
                plain.intersections(),
                fast.intersections(),
                "{path:?} sphere {q}"
            );
            total_hits += plain.intersections().len();
        }
        // The comparison means something only if the queries hit things.
        assert!(total_hits > 40, "{path:?}: only {total_hits} hits");
    }
}

/// Boxes large enough to hold whole BVH subtrees, and to lie inside some planes of
/// many nodes: the culled planes and the subtrees taken whole must change nothing.
#[test]
fn large_polytopes_taken_whole_equal_plain() {
    for path in real_scenes() {
        let (scene, import) = load_gltf(&path).unwrap();
        let root = import.root;
        let bound = scene.node_bound(root).unwrap();
        let r = bound.radius;
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut total_hits = 0;
        for q in 0..4 {
            let center = rng.in_box(
                bound.center - DVec3::splat(r * 0.3),
                bound.center + DVec3::splat(r * 0.3),
            );
            let half =
                DVec3::new(rng.next(), rng.next(), rng.next()) * r * 0.3 + DVec3::splat(r * 0.05);
            let turn = DQuat::from_rotation_y(rng.next() * std::f64::consts::TAU)
                * DQuat::from_rotation_x(rng.next() * 0.5);
            let poly =
                PolytopeIntersector::new(Polytope::from_oriented_box(center, half, turn).unwrap());
            let (mut plain, mut fast) = (poly.clone(), poly);
            run(&scene, root, false, &mut plain);
            run(&scene, root, true, &mut fast);
            assert_eq!(
                plain.intersections(),
                fast.intersections(),
                "{path:?} large box {q}"
            );
            total_hits += plain.intersections().len();
        }
        assert!(total_hits > 100, "{path:?}: only {total_hits} hits");
    }
}

#[test]
fn an_edit_rebuilds_the_bvh() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb");
    let (mut scene, import) = load_gltf(&path).unwrap();
    scene.build_acceleration();
    // The first node named "ground" is the geode (the transform comes later in the
    // arena); it holds one drawable per strip row.
    let ground = scene.find_node("ground").unwrap();
    let drawables = scene.node(ground).unwrap().drawables().to_vec();
    assert!(!drawables.is_empty());
    // Lift the whole ground by 7 m: the BVHs must follow, or the segment would miss it.
    for d in drawables {
        for v in scene.geometry_mut(d).unwrap().vertices_mut() {
            v.y += 7.0;
        }
    }
    let probe = |scene: &SceneGraph| {
        let mut i = LineSegmentIntersector::new(
            DVec3::new(-10.0, 50.0, -50.0),
            DVec3::new(-10.0, -50.0, -50.0),
        )
        .unwrap();
        run(scene, import.root, true, &mut i);
        i.intersections()
            .iter()
            .map(|h| h.world_point.y)
            .collect::<Vec<_>>()
    };
    let ys = probe(&scene);
    assert!(ys.iter().any(|&y| (y - 7.0).abs() < 1e-9), "{ys:?}");
    assert!(
        !ys.contains(&0.0),
        "a stale BVH still answers with the old ground: {ys:?}"
    );
}

/// Found by the `edits` fuzz target: a LOD node under a transform that moves. The scene
/// index keeps, per LOD gate, the LOD node's local-to-world matrix (for the eye's
/// distance to its centre); a refit after the move recomputed the instances' matrices
/// but not the gates', so the accelerated visitor kept choosing the LOD child for the
/// old place. Here the LOD's centre moves from the eye (distance 0: the near child,
/// `near`) to 20 units away (the far child, `far`).
#[test]
fn moving_a_transform_above_a_lod_moves_its_eye_distances() {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let mover = scene.add_transform("mover", DMat4::IDENTITY).unwrap();
    let lod = scene.add_lod("lod", Some(DVec3::ZERO)).unwrap();
    scene.add_child(root, mover).unwrap();
    scene.add_child(mover, lod).unwrap();
    // Each child a square at its own height: z = 1 near, z = 2 far.
    for (name, z, min, max) in [("near", 1.0, 0.0, 10.0), ("far", 2.0, 10.0, f64::INFINITY)] {
        let square = Geometry::new(vec![
            Vec3::new(-1.0, -1.0, z),
            Vec3::new(1.0, -1.0, z),
            Vec3::new(1.0, 1.0, z),
            Vec3::new(-1.0, 1.0, z),
        ])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))
        .unwrap();
        let drawable = scene.add_drawable(name, square);
        let geode = scene.add_geode(name);
        scene.add_drawable_to_geode(geode, drawable).unwrap();
        scene.add_lod_child(lod, geode, min, max).unwrap();
    }
    let heights = |scene: &SceneGraph, x: f64| {
        let [plain, accelerated] = [false, true].map(|accelerated| {
            let mut visitor = IntersectionVisitor::new();
            visitor
                .set_use_acceleration(accelerated)
                .set_lod_selection(LodSelection::EyePoint(DVec3::ZERO));
            let mut segment = LineSegmentIntersector::new(
                DVec3::new(x + 0.3, -0.2, -5.0),
                DVec3::new(x + 0.3, -0.2, 5.0),
            )
            .unwrap();
            visitor.apply(scene, root, &mut segment).unwrap();
            segment.take_intersections()
        });
        assert_eq!(accelerated, plain, "at x = {x}");
        plain.iter().map(|h| h.world_point.z).collect::<Vec<_>>()
    };
    scene.build_acceleration();
    assert_eq!(heights(&scene, 0.0), [1.0]);
    scene
        .set_matrix(mover, DMat4::from_translation(DVec3::new(20.0, 0.0, 0.0)))
        .unwrap();
    assert_eq!(heights(&scene, 20.0), [2.0]);
    // The index was refitted, not rebuilt (a rebuild would have hidden the stale gate).
    assert_eq!(scene.scene_index(root).unwrap().refit_count(), 1);
}

#[test]
fn moving_a_transform_refits_the_index_instead_of_rebuilding_it() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/city.glb");
    let (mut scene, import) = load_gltf(&path).unwrap();
    let root = import.root;
    let vehicle = scene.find_node("vehicle").unwrap();
    scene.build_acceleration();
    assert_eq!(scene.scene_index(root).unwrap().refit_count(), 0);
    let probe = |scene: &SceneGraph, x: f64| {
        let mut results = Vec::new();
        for accelerated in [false, true] {
            let mut i = LineSegmentIntersector::new(
                DVec3::new(x, 10.0, -170.0),
                DVec3::new(x, -1.0, -170.0),
            )
            .unwrap();
            run(scene, root, accelerated, &mut i);
            results.push(i.take_intersections());
        }
        assert_eq!(
            results[0], results[1],
            "accelerated and plain differ after a move"
        );
        results.pop().unwrap()
    };
    // Drive the vehicle along the first street (x from -175 towards 152 at z = -170),
    // probing straight down through its roof each time.
    for step in 0..20 {
        let x = -175.0 + 10.0 * step as f64;
        scene
            .set_matrix(
                vehicle,
                glam::DMat4::from_translation(DVec3::new(x, 0.0, -170.0))
                    * glam::DMat4::from_rotation_y(std::f64::consts::FRAC_PI_2),
            )
            .unwrap();
        let hits = probe(&scene, x);
        assert!(
            hits.iter().any(|h| h.node_path.contains(&vehicle)),
            "the moved vehicle is not found at x = {x}"
        );
    }
    // Collapse it (singular), then restore it: gone, then back.
    scene
        .set_matrix(vehicle, glam::DMat4::from_scale(DVec3::ZERO))
        .unwrap();
    assert!(!probe(&scene, 0.0)
        .iter()
        .any(|h| h.node_path.contains(&vehicle)));
    scene
        .set_matrix(
            vehicle,
            glam::DMat4::from_translation(DVec3::new(5.0, 0.0, -170.0)),
        )
        .unwrap();
    assert!(probe(&scene, 5.0)
        .iter()
        .any(|h| h.node_path.contains(&vehicle)));
    // The very same index absorbed all 22 moves by refitting; a rebuild would reset it.
    let index = scene.scene_index(root).unwrap();
    assert_eq!(index.refit_count(), 22);
    // The moved vehicle is visited from the small tree of detached instances alone: no
    // refit set a box of the instance tree, which would stretch over its trail.
    assert!(!index.detached().is_empty());
    assert_eq!(index.refitted_boxes(), 0);
}
