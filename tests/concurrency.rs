//! Many threads query one scene at once; one thread edits it between two rounds of
//! queries through a `RwLock`. Every answer equals the single-threaded one, and the
//! answers after the edit reflect it.

use std::sync::{Barrier, RwLock};

use glam::{DMat4, DVec3};
use scene_intersect::bounding::BoundingSphere;
use scene_intersect::graph::{NodeId, SceneGraph};
use scene_intersect::intersectors::{LineSegmentIntersector, SphereIntersector};
use scene_intersect::io::import_gltf;
use scene_intersect::visitor::IntersectionVisitor;

const READERS: usize = 8;

/// What a query found: (drawable name, primitive index, world point) of every hit.
type Answer = Vec<(String, u32, DVec3)>;

/// The city under a movable transform; returns (scene, root group, the transform).
fn city() -> (SceneGraph, NodeId, NodeId) {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/city.glb")).unwrap();
    let mut scene = SceneGraph::new();
    let import = import_gltf(&mut scene, &bytes, None).unwrap();
    let root = scene.add_group("world");
    let mover = scene.add_transform("mover", DMat4::IDENTITY).unwrap();
    scene.add_child(root, mover).unwrap();
    scene.add_child(mover, import.root).unwrap();
    (scene, root, mover)
}

/// Vertical segments and balls on a grid over the city, shifted by `dx` in x.
/// `b` is the city's bound before any edit.
fn queries(scene: &SceneGraph, root: NodeId, b: &BoundingSphere, dx: f64) -> Vec<Answer> {
    let mut v = IntersectionVisitor::new();
    let mut out = Vec::new();
    for i in 0..6 {
        for k in 0..6 {
            // Coordinates on a 1/1024 grid, and a shift of 1024: adding the shift is exact
            // in f64 (as is the visitor's subtracting it again), so the shifted queries
            // see bit-identical local problems and must give identical answers.
            let q = |v: f64| (v * 1024.0).round() / 1024.0;
            let x = q(b.center.x - b.radius * 0.6 + b.radius * 0.24 * f64::from(i) + 0.013) + dx;
            let z = q(b.center.z - b.radius * 0.6 + b.radius * 0.24 * f64::from(k) + 0.029);
            let (y0, y1) = (q(b.center.y + b.radius), q(b.center.y - b.radius));
            let top = DVec3::new(x, y0, z);
            let bottom = DVec3::new(x, y1, z);
            let mut seg = LineSegmentIntersector::new(top, bottom).unwrap();
            v.apply(scene, root, &mut seg).unwrap();
            out.push(
                seg.intersections()
                    .iter()
                    .map(|h| {
                        let name = scene.drawable_name(h.drawable).unwrap().to_string();
                        (name, h.primitive_index, h.world_point)
                    })
                    .collect(),
            );
            let mut ball = SphereIntersector::new(DVec3::new(x, q(b.center.y), z), 3.0).unwrap();
            v.apply(scene, root, &mut ball).unwrap();
            out.push(
                ball.intersections()
                    .iter()
                    .map(|h| {
                        let name = scene.drawable_name(h.drawable).unwrap().to_string();
                        (name, h.primitive_index, h.world_point)
                    })
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn readers_in_parallel_and_a_writer_in_between_agree_with_one_thread() {
    const SHIFT: f64 = 1024.0;
    let (scene, root, mover) = city();
    let bound = scene.node_bound(root).unwrap();
    let before = queries(&scene, root, &bound, 0.0);
    assert!(
        before.iter().filter(|a| !a.is_empty()).count() > 20,
        "the probe grid must mostly hit the city"
    );
    // After the edit, the same queries shifted by SHIFT find the same primitives, their
    // points shifted by SHIFT.
    let lock = RwLock::new(scene);
    let edited = Barrier::new(READERS + 1);
    let done = Barrier::new(READERS + 1);
    let results: Vec<(Vec<Answer>, Vec<Answer>)> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                s.spawn(|| {
                    let first = queries(&lock.read().unwrap(), root, &bound, 0.0);
                    done.wait();
                    edited.wait();
                    let second = queries(&lock.read().unwrap(), root, &bound, SHIFT);
                    (first, second)
                })
            })
            .collect();
        s.spawn(|| {
            // Wait until every reader has its first answers, then move the city.
            done.wait();
            lock.write()
                .unwrap()
                .set_matrix(mover, DMat4::from_translation(DVec3::new(SHIFT, 0.0, 0.0)))
                .unwrap();
            edited.wait();
        });
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    // Single-threaded answers on the edited scene.
    let scene = lock.into_inner().unwrap();
    let after_shifted = queries(&scene, root, &bound, SHIFT);
    for (first, second) in &results {
        assert_eq!(
            first, &before,
            "a parallel reader disagrees with the single thread"
        );
        assert_eq!(second, &after_shifted, "after the edit, a reader disagrees");
    }
    // The edit is seen: the shifted queries meet the moved city where the unshifted ones
    // met it before (a hit exactly on a shared edge may change count by rounding, so
    // compare the nearest hits, which are in the interior for almost every probe), and
    // the old places are now different.
    let mut same = 0;
    for (a, b) in before.iter().zip(&after_shifted) {
        if let (Some(x), Some(y)) = (a.first(), b.first()) {
            if (y.2 - x.2 - DVec3::new(SHIFT, 0.0, 0.0)).length() < 1e-9 {
                same += 1;
            }
        }
    }
    let hit = before.iter().filter(|a| !a.is_empty()).count();
    assert!(
        same * 10 >= hit * 9,
        "{same} of {hit} probes see the moved city"
    );
    let after = queries(&scene, root, &bound, 0.0);
    assert_ne!(after, before);
}
