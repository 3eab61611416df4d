//! The planes and axis-aligned bounds of an oriented box, and the recognition of a box
//! among a polytope's planes.
//!
//! A polytope with known bounds lets a query reject the scene's far boxes with six
//! comparisons, and, when the bounds hug it, skip the plane tests of the boxes they
//! meet (see [`Polytope::bounds`](super::Polytope::bounds)). A box made with
//! [`Polytope::from_oriented_box`](super::Polytope::from_oriented_box) knows its
//! bounds; the same box given as six planes (a query file, a renderer's own box, the
//! planes of another library) went without, and its queries cost 1.5–1.8 times as many
//! instructions on littlest_tokyo and the generated city. [`box_of_planes`] finds the
//! box in such planes.

use glam::{DMat3, DQuat, DVec3, DVec4};

use super::QueryError;

/// How many times a box's volume its axis-aligned bounds may have and still count as
/// hugging it: a 2:1 vehicle box turned 45° about the vertical has 2.25 (boxes of every
/// yaw on littlest_tokyo: the planes kept 97 % of the scene boxes the bounds kept); a
/// long beam turned across the axes has far more, and its planes prune.
const TIGHT_BOUNDS_SLACK: f64 = 4.0;

/// How far from exact the directions of given planes may be for them to count as a
/// box: opposite faces' unit normals within this of opposite, the three face
/// directions within this of orthogonal (cosines). Planes written with all their
/// digits are off by a few units of 2^-53. This much skew moves a corner by a few
/// times 1e-13 of its distance from the origin (taking the axes as orthonormal), and
/// the bounds are padded by 1e-9 of the box's size and distance from the origin:
/// thousands of times more.
const SKEW: f64 = 1e-13;

/// How far from 1 a normal's squared length may be for it to count as a unit normal:
/// twice the 8 units of `2^-53` a box's own normals (a rotation's columns) are allowed
/// in length, and the rounding of the squared length itself.
const UNIT_LENGTH_SQUARED: f64 = 20.0 * f64::EPSILON;

/// A box found among planes: the box itself, its bounds, and whether the planes'
/// normals were of unit length already (to a few units of rounding), so that queries
/// need not normalize them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct PlaneBox {
    pub shape: OrientedBox,
    pub bounds: BoxBounds,
    pub unit_normals: bool,
}

/// A box as its centre, three orthonormal axes and its half extents along them (to the
/// rounding of the planes it was found in: a few units of `2^-53` of its size and
/// distance from the origin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct OrientedBox {
    pub center: DVec3,
    pub axes: [DVec3; 3],
    pub half: DVec3,
}

impl OrientedBox {
    /// The vectors from the centre to the middles of three faces, one per axis: every
    /// corner is the centre plus or minus each.
    pub fn half_edges(&self) -> [DVec3; 3] {
        let half = self.half.to_array();
        std::array::from_fn(|k| self.axes[k] * half[k])
    }
}

/// The padded bounds of a box and whether they hug it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct BoxBounds {
    pub min: DVec3,
    pub max: DVec3,
    /// At most [`TIGHT_BOUNDS_SLACK`] times the box's volume.
    pub tight: bool,
}

/// The planes of the box of half extents `half_extents` around `center`, turned by
/// `rotation` (the first six of the eight), and the box they bound (its normals, a
/// rotation's columns, of unit length); an error when the numbers make no box. (Always inlined: the planes are written where the caller keeps
/// them.)
#[inline(always)]
pub(super) fn oriented_box_planes(
    center: DVec3,
    half_extents: DVec3,
    rotation: DQuat,
) -> Result<([DVec4; 8], PlaneBox), QueryError> {
    if !center.is_finite() || !rotation.is_finite() {
        return Err(QueryError::NonFinite("box centre or rotation"));
    }
    if !half_extents.is_finite() || half_extents.min_element() < 0.0 {
        return Err(QueryError::BadBox);
    }
    if rotation.length_squared() == 0.0 {
        return Err(QueryError::NonFinite("box rotation (zero quaternion)"));
    }
    // A quaternion whose length over- or underflows normalizes to nothing useful
    // (zero or NaN), and its matrix would not be a rotation: the first plane's
    // normal is unusable. A unit quaternion's matrix has unit columns.
    let rotation = rotation.normalize();
    let length_squared = rotation.length_squared();
    if length_squared.is_nan() || length_squared <= 0.5 {
        return Err(QueryError::ZeroNormal(0));
    }
    // The rotated axes are the columns of the rotation's matrix: one formula for
    // all three (rotating each axis by the quaternion costs three times as much).
    let turn = DMat3::from_quat(rotation);
    let axes = [turn.x_axis, turn.y_axis, turn.z_axis];
    // Room for eight, as a polytope keeps inline.
    let mut room = [DVec4::ZERO; 8];
    // Unit normals (checked above): only the offsets can fail, by overflowing for
    // centres near the largest finite numbers.
    let mut offsets_finite = true;
    for (k, (axis, half)) in axes.iter().zip(half_extents.to_array()).enumerate() {
        let along = axis.dot(center);
        // Inside the low face:  axis·p - (axis·c - half) >= 0.
        let low = -(along - half);
        // Inside the high face: -axis·p + (axis·c + half) >= 0.
        let high = along + half;
        offsets_finite &= low.is_finite() & high.is_finite();
        room[2 * k] = axis.extend(low);
        room[2 * k + 1] = (-*axis).extend(high);
    }
    if !offsets_finite {
        return Err(QueryError::NonFinite("box plane (centre too far out)"));
    }
    let made = PlaneBox {
        shape: OrientedBox {
            center,
            axes,
            half: half_extents,
        },
        bounds: oriented_box_bounds(center, axes, half_extents),
        unit_normals: true,
    };
    Ok((room, made))
}

/// The bounds of the box of half extents `half` along the orthonormal `axes` around
/// `center`: its extent along each world axis, padded far beyond the rounding of the
/// planes' offsets (a few units of 2^-53 of |centre| + half extents).
#[inline(always)]
pub(super) fn oriented_box_bounds(center: DVec3, axes: [DVec3; 3], half: DVec3) -> BoxBounds {
    let extent = axes[0].abs() * half.x + axes[1].abs() * half.y + axes[2].abs() * half.z;
    let pad = 1e-9 * (center.abs().max_element() + extent.max_element()) + 1e-300;
    let pad = DVec3::splat(pad);
    let volume = half.x * half.y * half.z;
    let bounds_volume = extent.x * extent.y * extent.z;
    BoxBounds {
        min: center - extent - pad,
        max: center + extent + pad,
        tight: bounds_volume <= TIGHT_BOUNDS_SLACK * volume,
    }
}

/// The box six planes (inward normals, any length) bound, when they do: three pairs of
/// opposite faces with orthogonal directions (to [`SKEW`]), in any order, each pair
/// leaving room between its faces. `None` for anything else (a frustum, a skewed
/// prism, an empty slab, planes whose numbers overflow), which then goes without
/// bounds as before.
///
/// ```text
/// planes: n·x + w >= 0 (inward n)       a pair along unit u:  lo <= u·x <= hi
///   face  u·x >= -w / |n|   ->  lo
///   face -u·x >= -w' / |n'| ->  hi = w' / |n'|
/// ```
pub(super) fn box_of_planes(planes: &[DVec4]) -> Option<PlaneBox> {
    if planes.len() != 6 {
        return None;
    }
    // Unit normals and their offsets. This runs for every polytope made from six
    // planes, most often a box's with unit normals already: those are taken as they are,
    // and the others pay a square root and a division each (long-latency operations
    // that cost more time than their count of instructions says).
    let mut normals = [DVec3::ZERO; 6];
    let mut offsets = [0.0; 6];
    let mut unit_normals = true;
    for (k, p) in planes.iter().enumerate() {
        let normal = p.truncate();
        let length_squared = normal.length_squared();
        // (Comparisons, not `is_finite`: this is six of them per query.)
        if !(length_squared > 0.0 && length_squared < f64::INFINITY) {
            return None;
        }
        if (length_squared - 1.0).abs() <= UNIT_LENGTH_SQUARED {
            normals[k] = normal;
            offsets[k] = p.w;
        } else {
            unit_normals = false;
            let scale = length_squared.sqrt().recip();
            normals[k] = normal * scale;
            offsets[k] = p.w * scale;
        }
    }
    let opposite = |i: usize, j: usize| (normals[i] + normals[j]).length_squared() <= SKEW * SKEW;
    // Faces usually come in pairs (a box's own order); else any order.
    let mut pairs = [(0, 1), (2, 3), (4, 5)];
    if !(opposite(0, 1) && opposite(2, 3) && opposite(4, 5)) {
        let mut paired = [false; 6];
        let mut count = 0;
        for i in 0..6 {
            if paired[i] {
                continue;
            }
            let j = (i + 1..6).find(|&j| !paired[j] && opposite(i, j))?;
            (paired[i], paired[j]) = (true, true);
            pairs[count] = (i, j);
            count += 1;
        }
    }
    let axes = pairs.map(|(i, _)| normals[i]);
    let orthogonal = |a: usize, b: usize| axes[a].dot(axes[b]).abs() <= SKEW;
    if !(orthogonal(0, 1) && orthogonal(1, 2) && orthogonal(0, 2)) {
        return None;
    }
    // Along each axis u: u·x >= lo (the first face), u·x <= hi (the opposite one).
    let mut center = DVec3::ZERO;
    let mut half = [0.0; 3];
    for (k, &(i, j)) in pairs.iter().enumerate() {
        let (lo, hi) = (-offsets[i], offsets[j]);
        half[k] = (hi - lo) * 0.5;
        // An empty slab (or one past the largest numbers) is no box.
        if !(half[k] >= 0.0 && half[k] < f64::INFINITY) {
            return None;
        }
        // With orthonormal axes the box's centre is Σ u_k · middle_k.
        center += axes[k] * (lo + half[k]);
    }
    let shape = OrientedBox {
        center,
        axes,
        half: DVec3::from_array(half),
    };
    let bounds = oriented_box_bounds(center, axes, shape.half);
    (bounds.min.is_finite() && bounds.max.is_finite()).then_some(PlaneBox {
        shape,
        bounds,
        unit_normals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat3, DQuat};

    /// The six planes of the box of half extents `half` around `center` turned by `q`,
    /// written by hand: faces along the rotated axes, inward normals scaled by `scale`.
    fn box_planes(center: DVec3, half: DVec3, q: DQuat, scale: f64) -> Vec<DVec4> {
        let m = DMat3::from_quat(q);
        let mut planes = Vec::new();
        for (axis, h) in [m.x_axis, m.y_axis, m.z_axis]
            .into_iter()
            .zip(half.to_array())
        {
            let along = axis.dot(center);
            planes.push(axis.extend(h - along) * scale);
            planes.push((-axis).extend(h + along) * scale);
        }
        planes
    }

    #[test]
    fn an_axis_aligned_box_is_found_with_its_bounds() {
        // The box [1, 3] x [-2, 2] x [5, 6]: centre (2, 0, 5.5), half extents (1, 2, 0.5).
        let planes = box_planes(
            DVec3::new(2.0, 0.0, 5.5),
            DVec3::new(1.0, 2.0, 0.5),
            DQuat::IDENTITY,
            3.0,
        );
        let found = box_of_planes(&planes).expect("a box");
        // Normals scaled by 3: not unit.
        assert!(!found.unit_normals);
        let b = found.bounds;
        let close = |a: DVec3, b: DVec3| (a - b).abs().max_element() < 1e-6;
        assert!(close(b.min, DVec3::new(1.0, -2.0, 5.0)), "{}", b.min);
        assert!(close(b.max, DVec3::new(3.0, 2.0, 6.0)), "{}", b.max);
        // Padded outward, never inward.
        assert!(b.min.cmple(DVec3::new(1.0, -2.0, 5.0)).all());
        assert!(b.max.cmpge(DVec3::new(3.0, 2.0, 6.0)).all());
        assert!(b.tight);
    }

    #[test]
    fn faces_in_any_order_and_of_any_length_are_paired() {
        let q = DQuat::from_rotation_y(0.5) * DQuat::from_rotation_x(0.25);
        let planes = box_planes(
            DVec3::new(-4.0, 2.0, 7.0),
            DVec3::new(3.0, 1.0, 2.0),
            q,
            1.0,
        );
        let in_order = box_of_planes(&planes).expect("a box");
        assert!(in_order.unit_normals);
        let in_order = in_order.bounds;
        // Shuffled, and the faces scaled differently: the same box.
        let shuffled: Vec<DVec4> = [4, 1, 5, 2, 0, 3]
            .iter()
            .zip([1.0, 7.5, 0.01, 2.0, 1e3, 0.5])
            .map(|(&k, s)| planes[k] * s)
            .collect();
        let found = box_of_planes(&shuffled).expect("still a box").bounds;
        assert!((found.min - in_order.min).abs().max_element() < 1e-9);
        assert!((found.max - in_order.max).abs().max_element() < 1e-9);
    }

    #[test]
    fn a_turned_box_s_bounds_hold_its_corners_and_hug_a_car_but_not_a_beam() {
        let (c, half) = (DVec3::new(10.0, 1.0, -3.0), DVec3::new(1.0, 0.75, 2.0));
        let q = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_4);
        let b = box_of_planes(&box_planes(c, half, q, 1.0))
            .expect("a box")
            .bounds;
        let m = DMat3::from_quat(q);
        for corner in 0..8 {
            let sign = |bit: usize| if corner & bit == 0 { -1.0 } else { 1.0 };
            let p = c + m * (half * DVec3::new(sign(1), sign(2), sign(4)));
            assert!(p.cmpge(b.min).all() && p.cmple(b.max).all(), "corner {p}");
        }
        // Footprint 2 x 4 at 45°: its bounds are 18 / 8 = 2.25 times its area.
        assert!(b.tight);
        let beam = box_planes(c, DVec3::new(10.0, 0.5, 0.5), q, 1.0);
        assert!(!box_of_planes(&beam).expect("a box").bounds.tight);
    }

    #[test]
    fn frustums_skewed_prisms_empty_slabs_and_other_counts_are_not_boxes() {
        let cube = box_planes(DVec3::ZERO, DVec3::ONE, DQuat::IDENTITY, 1.0);
        assert!(box_of_planes(&cube).is_some());
        // Five planes, or seven.
        assert!(box_of_planes(&cube[..5]).is_none());
        let mut seven = cube.clone();
        seven.push(DVec4::new(1.0, 1.0, 0.0, 5.0));
        assert!(box_of_planes(&seven).is_none());
        // A frustum: the far face pulled in, so the sides lean.
        let mut frustum = cube.clone();
        frustum[0] = DVec4::new(1.0, 0.0, 0.1, 1.0);
        assert!(box_of_planes(&frustum).is_none());
        // A prism whose second pair of faces is not orthogonal to the first.
        let lean = DVec3::new(0.3, 1.0, 0.0).normalize();
        let mut prism = cube.clone();
        prism[2] = lean.extend(1.0);
        prism[3] = (-lean).extend(1.0);
        assert!(box_of_planes(&prism).is_none());
        // Faces leaving nothing between them (x >= 2 and x <= 1).
        let mut empty = cube.clone();
        empty[0] = DVec4::new(1.0, 0.0, 0.0, -2.0);
        assert!(box_of_planes(&empty).is_none());
        // Two faces the same way: not a pair.
        let mut same = cube;
        same[1] = same[0];
        assert!(box_of_planes(&same).is_none());
    }
}
