//! Which instances' triangles the world tree places in world space, and where: the
//! conditions on a frame ([`placeable`]), the placement itself ([`place`]), and the
//! padded `f32` boxes of triangles and drawables.

use glam::{DMat4, DVec3, Vec3};

use super::{Instance, Placement};
use crate::accel::binned_sah::ItemBox;
use crate::accel::triangle_list::TriangleList;
use crate::accel::world_bvh::{WorldBvh, WorldItem};
use crate::accel::world_frame::WorldFrame;
use crate::accel::Aabb;
use crate::drawable::Geometry;
use crate::graph::{DrawableId, SceneGraph};

/// Transforms whose linear part is worse conditioned than this (the product of the
/// Frobenius norms of the matrix and its inverse) keep their instances whole: the world
/// tree's `f32` filters allow for the exact tests' rounding of positions in the
/// instance's frame only up to it (see [`WorldFrame`]).
const MAX_PLACED_CONDITION: f64 = 1e6;

/// Transforms more skewed than this keep their instances whole too: the world tree's
/// segment filter allows for the exact test's rounding in the instance's frame only up
/// to it (see [`SegmentFilter`](crate::accel::SegmentFilter)).
///
/// The skew of a frame is the product of the lengths of the rows of its inverse's
/// linear part (the map from world directions to the instance's coordinates) over that
/// map's determinant, at least 1 (Hadamard's inequality). An edge function in the
/// instance's frame sums products of one coordinate of each of three vectors; each
/// product is at most that product of row lengths times the world vectors' lengths,
/// while the function is the determinant times its world value: its rounding, against
/// the world value, grows with the skew. A turn, a move and a scale along the frame's
/// own axes (a glTF node's translation, rotation and scale, however uneven) have rows
/// at right angles, a skew of 1. A turn *before* an uneven scale (a turned child under
/// an unevenly scaled parent) shears, up to the square of the condition number: under
/// frames squeezing one direction 700 000 times after a turn (a condition number near
/// `10^6`, then placed), the exact test hit triangles that segments 100 to 1 000 units
/// long missed by a tenth of their size, which the filter had rejected (the test
/// `a_segment_grazing_a_triangle_under_a_skewed_frame_answers_as_the_plain_traversal`
/// in tests/precision.rs). At `2^20` the rounding stays some `2^-30` of the products
/// the filter measures, far inside its `2^-17`.
const MAX_PLACED_SKEW: f64 = (1u64 << 20) as f64;

/// How far, relative to the coordinates, a point may land from where it was when moved
/// into an instance's frame by the inverse the traversals compute and back, for the
/// instance to be placed in world space.
///
/// A segment test in an instance's frame tests the segment moved there: with an
/// inaccurate inverse, in effect a segment beside the one the world tree's filter
/// measures. The filter allows for the segment's start off by `2^-22` of its distance
/// from the tree's origin and for `2^-28` of the origin's distance from the world's
/// ([`WorldFrame::pad`](super::WorldFrame::pad)), so `2^-32` leaves room. The inverse's
/// error grows with the condition number and the frame's distance from the origin
/// together: when the traversals took a general 4×4 inverse, a frame 2.2·10^6 units out
/// whose linear part had a condition number of 3.7·10^5 moved points back 0.07 units
/// off, and the plain traversal hit a triangle the segment missed by 0.03 units, which
/// the filter had rejected (the test
/// `a_segment_beside_a_triangle_under_a_far_frame_answers_as_the_plain_traversal` in
/// tests/precision.rs). Their affine inverse (`Transform::frame_below`) brings that
/// frame's points back 10^-5 units off; the frame still stays a whole item, as the
/// rounding of coordinates moved into it may reach, by the bound `localizes_closely`
/// takes (the precision times the rows' and columns' lengths, about the condition
/// number), more than `2^-32` of them.
const MAX_LOCALIZATION_ERROR: f64 = 1.0 / (1u64 << 32) as f64;

/// Places the instances' triangles in a world tree (see the module docs), setting each
/// instance's [`Placement`]; returns the tree and the id starts.
pub(super) fn place(
    scene: &SceneGraph,
    instances: &mut [Instance],
    axes: Option<&DMat4>,
) -> (WorldBvh, Vec<u32>) {
    // How often each drawable is placed: a shared mesh stays whole (see `placeable`).
    let mut uses: std::collections::HashMap<DrawableId, u32> = std::collections::HashMap::new();
    for instance in instances.iter() {
        *uses.entry(instance.drawable).or_default() += 1;
    }
    // Which instances are placed, and room for what they hold.
    let mut lists: Vec<Option<(&Geometry, TriangleList<'_>)>> = Vec::with_capacity(instances.len());
    let (mut triangles, mut vertices, mut whole) = (0u64, 0u64, 0usize);
    for instance in instances.iter_mut() {
        instance.placement = Placement::Absent;
        if !instance.active || instance.world_box.min.x > instance.world_box.max.x {
            lists.push(None);
            continue;
        }
        let list = scene
            .drawable(instance.drawable)
            .and_then(|d| d.as_geometry())
            .filter(|g| {
                uses[&instance.drawable] == 1
                    && placeable(g, &instance.local_to_world, &instance.world_to_local)
            })
            .and_then(|g| Some((g, TriangleList::of(g)?)))
            .filter(|(g, _)| {
                // Ids and vertex positions are `u32`.
                let (t, v) = (g.primitive_count() as u64, g.vertices().len() as u64);
                triangles + t < u64::from(u32::MAX) && vertices + v < u64::from(u32::MAX)
            });
        match list {
            Some((g, _)) => {
                triangles += g.primitive_count() as u64;
                vertices += g.vertices().len() as u64;
                instance.placement = Placement::Triangles { first_id: 0 };
            }
            None => {
                whole += 1;
                instance.placement = Placement::Whole;
            }
        }
        lists.push(list);
    }
    // Far from the world origin (a georeferenced scene), the tree is measured from the
    // centre of the scene's box.
    let mut scene_box = Aabb::EMPTY;
    for (instance, list) in instances.iter().zip(&lists) {
        if list.is_some() || instance.placement == Placement::Whole {
            scene_box.grow(&instance.world_box);
        }
    }
    let frame = WorldFrame::for_bounds(&scene_box);
    // A scene turned off the world's axes as a whole (a model placed at a heading, a
    // city georeferenced with one) is measured along its own axes: its boxes hug it
    // as they would unturned.
    let frame = axes.and_then(|m| frame.along(m)).unwrap_or(frame);
    let origin = frame.origin();
    let items_count = triangles as usize + whole;
    let mut boxes = Vec::with_capacity(items_count);
    let mut items = Vec::with_capacity(items_count);
    // Per item, its corners as positions in `world`.
    let mut corners: Vec<[u32; 3]> = Vec::with_capacity(items_count);
    // The world vertices of every placed instance, each vertex moved once.
    let mut world: Vec<DVec3> = Vec::with_capacity(vertices as usize);
    let mut id_starts = Vec::with_capacity(instances.len() + 1);
    let mut next_id: u32 = 0;
    for (k, (instance, list)) in instances.iter_mut().zip(&lists).enumerate() {
        id_starts.push(next_id);
        match (instance.placement, list) {
            (Placement::Triangles { .. }, Some((g, list))) => {
                let base = world.len() as u32;
                let m = instance.local_to_world;
                let local = g.vertices();
                world.extend(placed_vertices(&m, local));
                let placed = &world[base as usize..];
                // The triangles the decomposition emits: those reading finite vertices.
                list.for_each(g.primitive_count() as u32, |p, t| {
                    let usable = |i: u32| local.get(i as usize).is_some_and(|v| v.is_finite());
                    if !(usable(t[0]) && usable(t[1]) && usable(t[2])) {
                        return;
                    }
                    let [a, b, c] = t.map(|i| placed[i as usize]);
                    let bound = placed_triangle_box([a, b, c], &frame);
                    boxes.push(ItemBox::new(&bound));
                    items.push(WorldItem::Triangle(next_id + p));
                    corners.push(t.map(|i| base + i));
                });
                instance.placement = Placement::Triangles { first_id: next_id };
                next_id += g.primitive_count() as u32;
            }
            (Placement::Whole, _) => {
                let held = match scene.drawable_bound(instance.drawable) {
                    Some(b) if frame.is_turned() => {
                        turned_whole_item_box(&frame, &b, instance, &instance.world_box)
                    }
                    _ => whole_item_box(&instance.world_box, &frame),
                };
                boxes.push(ItemBox::new(&held));
                items.push(WorldItem::Whole(k as u32));
                corners.push([0; 3]);
            }
            _ => {}
        }
    }
    id_starts.push(next_id);
    let corner = |k: usize| {
        corners[k].map(|i| frame.point(world.get(i as usize).copied().unwrap_or(origin)))
    };
    match WorldBvh::build_from_item_boxes(frame, boxes, &items, corner) {
        Some(world) => (world, id_starts),
        None => {
            // More than a world tree holds: every instance whole (the plain per-drawable
            // path), which no scene that fits in memory reaches.
            let items: Vec<WorldItem> = (0..instances.len() as u32).map(WorldItem::Whole).collect();
            let boxes: Vec<Aabb> = instances.iter().map(|i| i.world_box).collect();
            for i in instances.iter_mut() {
                i.placement = Placement::Whole;
            }
            let world = WorldBvh::build(&boxes, &items, |_| [DVec3::ZERO; 3]).unwrap_or_default();
            (world, vec![0; instances.len() + 1])
        }
    }
}

/// The world positions of an instance's vertices, as the world tree's build places
/// them and an edit that keeps them there packs them again
/// ([`SceneIndex::refit_drawable`](super::SceneIndex::refit_drawable)): the two must
/// agree for the filters to hold.
pub(super) fn placed_vertices<'v>(
    local_to_world: &'v DMat4,
    vertices: &'v [Vec3],
) -> impl Iterator<Item = DVec3> + 'v {
    vertices
        .iter()
        .map(|v| local_to_world.transform_point3(v.as_dvec3()))
}

/// The box of a whole item with this world box in a world tree measured in `frame` (not
/// turned: see [`turned_whole_item_box`]), as the build takes it and an edit that keeps
/// the item there checks it.
pub(super) fn whole_item_box(world_box: &Aabb, frame: &WorldFrame) -> Aabb {
    if frame.is_world() {
        *world_box
    } else {
        let (min, max) = world_box.as_dvec3();
        padded_outward(min, max, frame.origin())
    }
}

/// [`whole_item_box`] in a turned `frame`, for `instance` whose drawable's box is
/// `bound` and world box `world_box`: the drawable's box placed straight into the
/// frame (the box of the world box, turned, would hold the item's corners and more),
/// padded as [`padded_outward`] pads the world box.
pub(super) fn turned_whole_item_box(
    frame: &WorldFrame,
    bound: &crate::bounding::BoundingBox,
    instance: &Instance,
    world_box: &Aabb,
) -> Aabb {
    let (lo, hi) = world_box.as_dvec3();
    let pad = DVec3::splat(frame.length(rounding_pad(lo, hi)));
    let (min, max) = frame.placed_bounds(bound.min, bound.max, &instance.local_to_world);
    Aabb::from_f64_outward(min - pad, max + pad)
}

/// The box of a placed triangle with these world corners in a world tree measured in
/// `frame`, as the world tree's build takes it and an edit that keeps it there checks
/// it (see [`padded_outward`]).
pub(super) fn placed_triangle_box([a, b, c]: [DVec3; 3], frame: &WorldFrame) -> Aabb {
    let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
    if !frame.is_turned() {
        return padded_outward(lo, hi, frame.origin());
    }
    // The box of the corners moved into the frame (a turned triangle's box is not the
    // turned box's), padded as in the world.
    let (min, max) = frame.points_bounds(&[a, b, c]);
    let pad = DVec3::splat(frame.length(rounding_pad(lo, hi)));
    Aabb::from_f64_outward(min - pad, max + pad)
}

/// What [`padded_outward`] pads a world box `[lo, hi]` by: a billionth of its size and
/// a trillionth of its distance from the world origin.
#[inline]
fn rounding_pad(lo: DVec3, hi: DVec3) -> f64 {
    let magnitude = lo.abs().max(hi.abs());
    (hi - lo).element_sum() * 1e-9 + magnitude.max_element() * 1e-12 + 1e-12
}

/// Whether a geometry's triangles may be placed in world space under `local_to_world`
/// (affine, as every frame of the graph is), whose inverse as the traversals compute it
/// is `world_to_local`: a triangle list, the transform's linear part well-conditioned
/// and not too skewed, and points moved into the frame and back landing close to where
/// they were (see [`MAX_LOCALIZATION_ERROR`]).
fn placeable(geometry: &Geometry, local_to_world: &DMat4, world_to_local: &DMat4) -> bool {
    let m = local_to_world;
    debug_assert_eq!(m.row(3), glam::DVec4::W, "scene transforms are affine");
    if TriangleList::of(geometry).is_none() {
        return false;
    }
    let linear = glam::DMat3::from_mat4(*m);
    // The inverse's linear part, as the traversals have it.
    let inverse = glam::DMat3::from_mat4(*world_to_local);
    let condition = frobenius(&linear) * frobenius(&inverse);
    condition.is_finite()
        && condition <= MAX_PLACED_CONDITION
        && skew(&inverse) <= MAX_PLACED_SKEW
        && localizes_closely(local_to_world, world_to_local)
}

/// The Frobenius norm of `a`.
fn frobenius(a: &glam::DMat3) -> f64 {
    (a.x_axis.length_squared() + a.y_axis.length_squared() + a.z_axis.length_squared()).sqrt()
}

/// Whether `world_to_local` moves every world point `s` into the frame closely enough
/// (see [`MAX_LOCALIZATION_ERROR`]): `local_to_world` takes the result back within
/// `MAX_LOCALIZATION_ERROR` times `|s|` plus the frame's distance from the world origin.
///
/// Taken back, a point moved with the computed inverse `W` and rounded lands at
/// `(M W − I) s` plus the rounding seen through `M`. The residual `M W − I` is measured
/// (in `f64`, its own rounding far below what is allowed), its linear part per unit of
/// `|s|` and its translation against the frame's distance. The rounding of local
/// coordinate `i`, some four units of `2^-53` of `|row i of W| |s|` plus the translation's
/// coordinate, moves the point back by that times `|column i of M|`; it is allowed
/// twice over. (For a turn and a scale along the frame's axes, each column's length is
/// the inverse of its row's, and the rounding is a few units of `2^-53` of `|s|`.)
fn localizes_closely(local_to_world: &DMat4, world_to_local: &DMat4) -> bool {
    let residual = *local_to_world * *world_to_local - DMat4::IDENTITY;
    let rows = glam::DMat3::from_mat4(*world_to_local).transpose();
    let rows = [rows.x_axis, rows.y_axis, rows.z_axis];
    let columns = [
        local_to_world.x_axis,
        local_to_world.y_axis,
        local_to_world.z_axis,
    ];
    let translation = world_to_local.w_axis.truncate().to_array();
    let (mut per_unit, mut fixed) = (0.0, 0.0);
    for i in 0..3 {
        let back = 8.0 * f64::EPSILON * columns[i].truncate().length();
        per_unit += back * rows[i].length();
        fixed += back * translation[i].abs();
    }
    per_unit += frobenius(&glam::DMat3::from_mat4(residual));
    fixed += residual.w_axis.truncate().length();
    let distance = local_to_world.w_axis.truncate().length();
    per_unit <= MAX_LOCALIZATION_ERROR && fixed <= MAX_LOCALIZATION_ERROR * distance
}

/// The skew of the linear map `to_local` (see [`MAX_PLACED_SKEW`]): the product of its
/// rows' lengths over its determinant's magnitude, 1 when the rows are at right angles;
/// NaN or infinite for a singular map. Measured on the map scaled to a longest row of 1
/// (the ratio does not change), so that no product overflows.
fn skew(to_local: &glam::DMat3) -> f64 {
    let rows = to_local.transpose();
    let lengths = [rows.x_axis, rows.y_axis, rows.z_axis].map(|r| r.length());
    let longest = lengths[0].max(lengths[1]).max(lengths[2]);
    let unit = rows * (1.0 / longest);
    lengths.iter().map(|l| l / longest).product::<f64>() / unit.determinant().abs()
}

/// The `f32` box holding a triangle (or a drawable's box) whose world corners span
/// `[lo, hi]`, measured from `origin` (see [`WorldFrame`]), padded by a billionth of its
/// size and a trillionth of its distance from the world origin for rounding elsewhere
/// (that distance also bounds, a thousand times over, the rounding of the subtraction
/// of `origin`).
///
/// Without branches, as the build pays it per triangle: the pad is widened by a
/// relative `2^-23` of each coordinate, more than the half unit in the last place
/// rounding to the nearest `f32` can take back, so the box still holds `[lo, hi]`
/// padded. Non-finite results (coordinates beyond `f32`) take the careful route.
fn padded_outward(lo: DVec3, hi: DVec3, origin: DVec3) -> Aabb {
    let pad = rounding_pad(lo, hi);
    let (lo, hi) = (lo - origin, hi - origin);
    let widen = DVec3::splat(pad) + lo.abs().max(hi.abs()) * (1.0 / 8_388_608.0);
    let (min, max) = ((lo - widen).as_vec3(), (hi + widen).as_vec3());
    if min.is_finite() && max.is_finite() {
        Aabb { min, max }
    } else {
        Aabb::from_f64_outward(lo - DVec3::splat(pad), hi + DVec3::splat(pad))
    }
}

/// The world box of `instance`'s drawable's bound under its frame; empty under a
/// singular one.
pub(super) fn world_box_of(scene: &SceneGraph, instance: &Instance) -> Aabb {
    match scene.drawable_bound(instance.drawable) {
        Some(b) if instance.active && !b.is_empty() => world_box(&b, &instance.local_to_world),
        _ => Aabb::EMPTY,
    }
}

/// A drawable box moved to world space, padded for rounding and rounded outward.
pub(super) fn world_box(b: &crate::bounding::BoundingBox, local_to_world: &DMat4) -> Aabb {
    let w = b.transformed(local_to_world);
    padded_outward(w.min, w.max, DVec3::ZERO)
}

#[cfg(test)]
mod tests {
    use super::super::tests::triangle;
    use super::*;
    use glam::DQuat;

    /// Frames are placed up to a condition number (Frobenius norms) of `10^6` and a skew
    /// of `2^20`: turns, moves and scales of any size, and scales along the frame's own
    /// axes up to a million times uneven; worse ones, and turns before an uneven
    /// scale that shear too much, keep their instances whole.
    #[test]
    fn frames_are_placed_up_to_a_condition_number_and_a_skew() {
        let turn = DQuat::from_rotation_arc(DVec3::X, DVec3::new(1.0, 2.0, 3.0).normalize());
        let other = DQuat::from_rotation_arc(DVec3::Y, DVec3::new(-2.0, 1.0, 0.5).normalize());
        // A turn after the scale (glTF's T·R·S), and one before it too (a shear).
        let frame = |scale: DVec3, shear: bool| {
            let before = if shear { other } else { DQuat::IDENTITY };
            DMat4::from_translation(DVec3::new(4e6, -7.0, 3e5))
                * DMat4::from_quat(turn)
                * DMat4::from_scale(scale)
                * DMat4::from_quat(before)
        };
        for (scale, shear, placed) in [
            (DVec3::ONE, true, true),
            (DVec3::splat(1e-30), true, true),
            (DVec3::splat(1e30), true, true),
            // ‖M‖ ‖M⁻¹‖ = √2 · 10^5: a slab flattened a hundred thousand times.
            (DVec3::new(1.0, 1e-5, 1.0), false, true),
            (DVec3::new(1.0, 1e-7, 1.0), false, false),
            // Sheared: the skew grows with the square of the unevenness.
            (DVec3::new(1.0, 1e-2, 1.0), true, true),
            (DVec3::new(1.0, 1e-5, 1.0), true, false),
            // The frames of the test in tests/precision.rs that found shears wrong.
            (DVec3::new(1e-3, 700.0, 700.0), true, false),
            (DVec3::new(1e-3, 700.0, 700.0), false, true),
        ] {
            assert_eq!(
                placeable(
                    &triangle(),
                    &frame(scale, shear),
                    &frame(scale, shear).inverse()
                ),
                placed,
                "{scale}, shear {shear}"
            );
        }
    }

    #[test]
    fn the_skew_of_right_angled_rows_is_one_and_of_a_shear_more() {
        let scale = glam::DMat3::from_diagonal(DVec3::new(1e-3, 5.0, 2e4));
        let turn = glam::DMat3::from_quat(DQuat::from_rotation_arc(
            DVec3::Z,
            DVec3::new(1.0, -1.0, 2.0).normalize(),
        ));
        // Rows at right angles (a turn, then a scale along the result's axes).
        assert!((skew(&(scale * turn)) - 1.0).abs() < 1e-9);
        // x' = x + y, y' = y, z' = z: rows (1, 1, 0), (0, 1, 0), (0, 0, 1), determinant 1.
        let shear = glam::DMat3::from_cols(DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Z);
        assert!((skew(&shear) - 2f64.sqrt()).abs() < 1e-12);
        // Singular: not a finite skew.
        let flat = glam::DMat3::from_diagonal(DVec3::new(1.0, 0.0, 1.0));
        assert!(!skew(&flat).is_finite() || skew(&flat) > MAX_PLACED_SKEW);
        let flat = DMat4::from_mat3(flat);
        assert!(!placeable(&triangle(), &flat, &flat.inverse()));
    }
}
