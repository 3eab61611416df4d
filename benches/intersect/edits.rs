//! The `move`, `whole scene` and `structure` lines: edits of the scene, each with the
//! scene index's next use.

use std::time::Instant;

use glam::{DMat4, DVec3, Vec3};
use scene_intersect::accel::SceneIndex;
use scene_intersect::prelude::*;

use crate::scenes::{Bench, TABLE};
use crate::table::median_ms;

/// Microseconds one `set_matrix` takes, with the refit of the scene index it triggers,
/// for `movers` (transforms) moved in turn, round after round, each by a little more
/// at each round, [`TABLE`] moves a sample (the first round, in which each mover's
/// first move looks for its instances among all, before the timing); every mover is
/// put back where it was. `None` when `movers` is empty.
///
/// The movers stay detached from the world tree until the next rebuild (so the moves are
/// timed after every query workload).
pub(crate) fn ours_moves(b: &mut Bench, movers: &[NodeId]) -> Option<f64> {
    let homes: Vec<DMat4> = (movers.iter())
        .map(|&n| match b.scene.node(n).map(|node| node.kind()) {
            Some(NodeKind::Transform(t)) => Some(t.matrix),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if movers.is_empty() {
        return None;
    }
    b.scene.scene_index(b.root)?;
    let pose = |home: DMat4, step: usize| {
        home * DMat4::from_translation(DVec3::new(0.01 * (step % 10_000) as f64, 0.0, 0.0))
    };
    for (&n, &home) in movers.iter().zip(&homes) {
        b.scene.set_matrix(n, pose(home, 1)).ok()?;
    }
    let mut step = movers.len();
    let (ms, moves) = median_ms(|| {
        for _ in 0..TABLE {
            step += 1;
            let k = step % movers.len();
            b.scene
                .set_matrix(movers[k], pose(homes[k], step / movers.len()))
                .expect("a finite, affine pose");
        }
        TABLE
    });
    for (&n, &home) in movers.iter().zip(&homes) {
        b.scene.set_matrix(n, home).ok()?;
    }
    Some(ms * 1e3 / moves as f64)
}

/// Microseconds one `edit_geometry` of `drawable` takes (one vertex raised a little
/// more at each edit; the scene index refitted, the drawable's instances detached),
/// [`TABLE`] edits a sample (the first edit, which looks for its instances among all,
/// before the timing); the vertex is put back. With `handed_out`, the edit goes through
/// `geometry_mut` instead and the time includes the scene index's next use, which
/// refits it. `None` for a drawable that is not a `Geometry` or has no vertex.
pub(crate) fn ours_mesh_edits(
    b: &mut Bench,
    drawable: DrawableId,
    handed_out: bool,
) -> Option<f64> {
    let home = *b
        .scene
        .drawable(drawable)?
        .as_geometry()?
        .vertices()
        .first()?;
    let mut step = 0u32;
    let mut edit = |b: &mut Bench| {
        step += 1;
        let y = home.y + 1e-3 * (step % 1000) as f32;
        if handed_out {
            b.scene
                .geometry_mut(drawable)
                .expect("a geometry")
                .vertices_mut()[0]
                .y = y;
            std::hint::black_box(b.scene.scene_index(b.root));
        } else {
            b.scene
                .edit_geometry(drawable, |g| g.vertices_mut()[0].y = y)
                .expect("a geometry");
        }
    };
    edit(b);
    let (ms, edits) = median_ms(|| {
        for _ in 0..TABLE {
            edit(b);
        }
        TABLE
    });
    b.scene
        .edit_geometry(drawable, |g| g.vertices_mut()[0] = home)
        .ok()?;
    Some(ms * 1e3 / edits as f64)
}

/// How many of the generated cities' buildings `print_moves` moves about together.
pub(crate) const MOVING_BUILDINGS: usize = 100;

/// The cost of moving things in the generated cities (a refit of the scene index along
/// the moved instances' paths): the vehicle alone, [`MOVING_BUILDINGS`] buildings each
/// moved once a round (as a scene with that many vehicles moves them every frame), and
/// the vehicle's mesh edited in place; per city and as the city grows 10x.
pub(crate) fn print_moves(benches: &mut [Bench]) {
    let mut per_city = Vec::new();
    for b in benches.iter_mut() {
        let Some(vehicle) = b.scene.find_node("vehicle") else {
            continue;
        };
        let buildings: Vec<NodeId> = (b.scene.nodes())
            .filter(|(_, node)| {
                matches!(node.kind(), NodeKind::Transform(_))
                    && node.name().starts_with("building_")
            })
            .map(|(id, _)| id)
            .take(MOVING_BUILDINGS)
            .collect();
        let vehicle_mesh = (b.scene.scene_index(b.root))
            .and_then(|index| index.instances().iter().find(|i| i.path.contains(&vehicle)))
            .map(|i| i.drawable);
        let (Some(one), Some(many), Some(edit), Some(handed_out)) = (
            ours_moves(b, &[vehicle]),
            ours_moves(b, &buildings),
            vehicle_mesh.and_then(|d| ours_mesh_edits(b, d, false)),
            vehicle_mesh.and_then(|d| ours_mesh_edits(b, d, true)),
        ) else {
            continue;
        };
        println!(
            "move {:>17} the vehicle: {one:.3} us per set_matrix; {} buildings in turn: {many:.3} us per set_matrix; the vehicle's mesh: {edit:.3} us per edit_geometry, {handed_out:.3} us per geometry_mut and next use of the index ({} triangles)",
            b.name,
            buildings.len(),
            b.parry_indices.len()
        );
        per_city.push((b.name.clone(), b.parry_indices.len(), one, many, edit));
    }
    let find = |name: &str| per_city.iter().find(|(n, ..)| n == name);
    if let (Some(small), Some(big)) = (find("city_s3"), find("city_s10")) {
        for (what, t_small, t_big) in [
            ("moving the vehicle", small.2, big.2),
            ("moving buildings in turn", small.3, big.3),
            ("editing the vehicle's mesh", small.4, big.4),
        ] {
            println!(
                "scaling: {} -> {} triangles: {what} {t_small:.3} -> {t_big:.3} us per edit ({:.2}x)",
                small.1,
                big.1,
                t_big / t_small
            );
        }
    }
    println!();
}

/// Milliseconds a structural edit takes with the scene index's next use, which brings
/// the index up to date (`SceneIndex::restructure`): a marker (one triangle under a
/// transform) added under the root, then taken away again, [`STRUCTURAL_EDITS`] times
/// each, the median; and a build of the index afresh, which such an edit cost before.
/// The markers stay in the index, removed, until the next rebuild.
pub(crate) fn print_structural_edits(benches: &mut [Bench]) {
    'scenes: for b in benches.iter_mut() {
        let Some(bound) = b.scene.node_bound(b.root) else {
            continue;
        };
        let marker = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .expect("three vertices");
        let drawable = b.scene.add_drawable("marker", marker);
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        for k in 0..STRUCTURAL_EDITS {
            let (Ok(t), geode) = (
                b.scene
                    .add_transform(format!("marker-{k}"), DMat4::from_translation(bound.center)),
                b.scene.add_geode(format!("marker-{k}-geode")),
            ) else {
                continue 'scenes;
            };
            let linked = b.scene.add_drawable_to_geode(geode, drawable).is_ok()
                && b.scene.add_child(t, geode).is_ok();
            let time = |b: &mut Bench, edit: &dyn Fn(&mut SceneGraph) -> bool| {
                let start = Instant::now();
                let done = edit(&mut b.scene);
                std::hint::black_box(b.scene.scene_index(b.root));
                done.then(|| start.elapsed().as_secs_f64() * 1e3)
            };
            let root = b.root;
            let (Some(add), Some(remove)) = (
                time(b, &|s| linked && s.add_child(root, t).is_ok()),
                time(b, &|s| s.remove_child(root, t).is_ok()),
            ) else {
                continue 'scenes;
            };
            added.push(add);
            removed.push(remove);
        }
        added.sort_by(f64::total_cmp);
        removed.sort_by(f64::total_cmp);
        let start = Instant::now();
        std::hint::black_box(SceneIndex::build(&b.scene, b.root));
        let build = start.elapsed().as_secs_f64() * 1e3;
        println!(
            "structure {:>12} a marker added under the root: {:.3} ms, taken away: {:.3} ms, each with the index's next use; a build of the index: {build:.3} ms",
            b.name,
            added[STRUCTURAL_EDITS / 2],
            removed[STRUCTURAL_EDITS / 2],
        );
    }
    println!();
}

/// How many markers [`print_structural_edits`] adds and takes away (the median of as
/// many times).
pub(crate) const STRUCTURAL_EDITS: usize = 7;

/// Milliseconds a move of the whole scene takes with the scene index's next use: a
/// transform (a model turned in a viewer, a floating origin) put above the root, its
/// index built, then its matrix set to a turn, and to a translation, a little further
/// at each move ([`WHOLE_SCENE_MOVES`] of each, the median); the world tree follows,
/// and every instance's frame and world box are computed again (on the machine's cores
/// from 4 096 instances on). The transform is removed again after.
pub(crate) fn print_whole_scene_moves(benches: &mut [Bench]) {
    for b in benches.iter_mut() {
        let Ok(model) = b.scene.add_transform("model", DMat4::IDENTITY) else {
            continue;
        };
        if b.scene.add_child(model, b.root).is_err() {
            continue;
        }
        std::hint::black_box(b.scene.scene_index(model));
        let mut time = |pose: &dyn Fn(f64) -> DMat4| {
            let mut times: Vec<f64> = (1..=WHOLE_SCENE_MOVES)
                .map(|step| {
                    let start = Instant::now();
                    b.scene
                        .set_matrix(model, pose(step as f64))
                        .expect("a finite, affine pose");
                    std::hint::black_box(b.scene.scene_index(model));
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        };
        let turn = time(&|step| DMat4::from_rotation_y(0.01 * step));
        let shift = time(&|step| DMat4::from_translation(DVec3::new(0.5 * step, 0.0, 0.25)));
        let instances = b
            .scene
            .scene_index(model)
            .map_or(0, |i| i.instances().len());
        // (Its index with it.)
        let _ = b.scene.remove_node(model);
        println!(
            "whole scene {:>10} turned: {turn:.3} ms, moved: {shift:.3} ms, each with the index's next use ({instances} instances)",
            b.name
        );
    }
    println!();
}

/// How many moves of each kind [`print_whole_scene_moves`] times (the median of as
/// many).
pub(crate) const WHOLE_SCENE_MOVES: usize = 9;

// ----- the C++ peers: OpenSceneGraph and Embree ----------------------------------------
