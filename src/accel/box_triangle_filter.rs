//! [`BoxTriangleFilter`]: rejects a leaf's triangles that an oriented box lies wholly
//! beside, along each triangle's own normal.
//!
//! A box query's walk first drops the triangles outside one of the box's six planes
//! ([`PlaneCuller::triangles_outside`](super::PlaneCuller::triangles_outside)). What
//! passes is clipped exactly, and about half of it is clipped to nothing: triangles
//! near a corner or an edge of the box, beside it but outside none of its planes (on
//! littlest_tokyo, 5 327 of 10 295 clipped for 4 096 vehicle boxes). For a box, the
//! separating axis test names the other directions that can part the two: the
//! triangle's normal and the nine crossings of their edges. The normal is the one that
//! costs little, and it parts most of them (3 023 of those 5 327).
//!
//! The test runs in `f32` on the leaf's decoded corners, so it is conservative in the
//! way [`PlaneCuller`](super::PlaneCuller) is: the axis is the decoded triangle's
//! normal, whatever its rounding (any direction is a valid separating axis); along it,
//! a true corner lies within the decoding's error of the decoded one, and the `f32`
//! projections within some ten units of `2^-24` of the magnitudes involved. A triangle
//! is rejected only when the gap between its projection and the box's exceeds the
//! decoding error, `2^-18` of the magnitudes (64 units of `2^-24`: the rounding several
//! times over), the box's own rounding from its planes and the walk's pad: the true
//! triangle and box are then apart, so the exact clipping would have found nothing, and
//! the answers are the plain traversal's.

use glam::{DVec3, Vec3, Vec4};

use super::TriangleLanes;

/// Relative margin for the rounding of the `f32` arithmetic (as the plane culler's).
const ROUNDING_MARGIN: f64 = 1.0 / (1u32 << 18) as f64;

/// Relative allowance for the box's own rounding: its centre and axes come from planes
/// written with a few units of `2^-53` of error (as the box's bounds are padded).
const BOX_MARGIN: f64 = 1e-9;

/// An oriented box prepared for [`triangles_beside`](Self::triangles_beside).
///
/// ```text
/// triangle abc, normal m = (b − a) × (c − a):   the box is beside it along m when
///   min(m·a, m·b, m·c) > m·centre + Σ|m·eₖ|   or   max(m·a, m·b, m·c) < m·centre − Σ|m·eₖ|
/// (eₖ: centre to the middle of face k), each by more than the margins times |m|.
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BoxTriangleFilter {
    center: Vec3,
    half_edges: [Vec3; 3],
    /// Everything a gap must exceed, per unit of the normal's length, but the decoding's
    /// error (which comes with each leaf).
    margin: f32,
}

impl BoxTriangleFilter {
    /// The box of `center` and `half_edges` (centre to the middle of each face, along
    /// three orthogonal axes), in the coordinates of triangles of magnitude at most
    /// `scale`, rejecting only triangles beside it by more than `pad`. `None` when the
    /// numbers do not fit in `f32`.
    pub fn new(center: DVec3, half_edges: [DVec3; 3], pad: f64, scale: f64) -> Option<Self> {
        let size: f64 = half_edges.iter().map(|e| e.length()).sum();
        let magnitude = center.length() + size;
        let margin = pad.abs()
            + BOX_MARGIN * magnitude
            + ROUNDING_MARGIN * (3.0 * scale.abs() + 2.0 * magnitude)
            + f64::MIN_POSITIVE;
        let filter = BoxTriangleFilter {
            center: center.as_vec3(),
            half_edges: half_edges.map(|e| e.as_vec3()),
            margin: (margin as f32).next_up(),
        };
        let finite = filter.center.is_finite()
            && filter.half_edges.iter().all(|e| e.is_finite())
            && filter.margin.is_finite();
        finite.then_some(filter)
    }

    /// Which of the first `count` decoded triangles of a leaf (decoded with the origin at
    /// zero, in the box's coordinates) the box certainly lies beside along their own
    /// normals: bit `k` set for triangle `k`.
    #[inline]
    pub fn triangles_beside(&self, t: &TriangleLanes, count: usize) -> u32 {
        let valid = (1u32 << count) - 1;
        let (m, low, high) = t.along_normals();
        let along_splat =
            |v: Vec3| m[0] * Vec4::splat(v.x) + m[1] * Vec4::splat(v.y) + m[2] * Vec4::splat(v.z);
        let center = along_splat(self.center);
        let reach = along_splat(self.half_edges[0]).abs()
            + along_splat(self.half_edges[1]).abs()
            + along_splat(self.half_edges[2]).abs();
        // A NaN anywhere (a normal past `f32`) makes the gap NaN or the comparison false:
        // the triangle is kept.
        let above = low - (center + reach);
        let below = (center - reach) - high;
        let length = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
        let needed = length * Vec4::splat(self.margin + t.error);
        (above.cmpgt(needed) | below.cmpgt(needed)).bitmask() & valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::LeafTriangle;
    use crate::intersectors::{clip_polygon, ClipPolygon, Polytope};
    use glam::DQuat;

    fn splat(v: Vec3) -> [Vec4; 3] {
        [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)]
    }

    /// The four triangles decoded in the leaf box `[min, max]`.
    fn decoded(triangles: [[DVec3; 3]; 4], min: Vec3, max: Vec3) -> TriangleLanes {
        let records = triangles.map(|t| LeafTriangle::new(0, t, min, max));
        TriangleLanes::decode(&records, splat(min), splat(max), Vec3::ZERO)
    }

    /// The unit cube around the origin turned 30° about y.
    fn turned_cube() -> (DVec3, [DVec3; 3]) {
        let turn = DQuat::from_rotation_y(30f64.to_radians());
        let axes = [DVec3::X, DVec3::Y, DVec3::Z].map(|a| turn * a * 0.5);
        (DVec3::ZERO, axes)
    }

    #[test]
    fn a_triangle_beside_a_corner_is_rejected_and_one_touching_it_is_not() {
        // The cube [-0.5, 0.5]^3 and triangles in planes x + y + z = k: the corner
        // (0.5, 0.5, 0.5) has x + y + z = 1.5, so for k = 1.6 the cube lies beside the
        // plane, though the triangle (spanning far beyond the cube's faces) is outside
        // none of its six planes; k = 1.5 touches the corner, k = 1.4 cuts it.
        let filter = BoxTriangleFilter::new(
            DVec3::ZERO,
            [DVec3::X * 0.5, DVec3::Y * 0.5, DVec3::Z * 0.5],
            0.0,
            4.0,
        )
        .unwrap();
        let in_plane = |k: f64| {
            [
                DVec3::new(k, 0.0, 0.0),
                DVec3::new(0.0, k, 0.0),
                DVec3::new(0.0, 0.0, k),
            ]
        };
        let (min, max) = (Vec3::ZERO, Vec3::splat(2.0));
        let lanes = decoded(
            [in_plane(1.6), in_plane(1.5), in_plane(1.4), in_plane(1.9)],
            min,
            max,
        );
        assert_eq!(filter.triangles_beside(&lanes, 4), 0b1001);
        assert_eq!(
            filter.triangles_beside(&lanes, 1),
            0b0001,
            "only the lanes counted"
        );
    }

    #[test]
    fn the_other_side_and_a_turned_box_count_alike() {
        // The cube of half extent 0.5 turned 30° about y reaches 0.5·cos 30° +
        // 0.5·sin 30° = 0.683 along x, on both sides: the planes x = ±0.7 lie beside
        // it (rejected on either side), x = ±0.66 cut it.
        let (center, half_edges) = turned_cube();
        let filter = BoxTriangleFilter::new(center, half_edges, 0.0, 4.0).unwrap();
        let x_plane = |x: f64| {
            [
                DVec3::new(x, -2.0, -2.0),
                DVec3::new(x, 2.0, -2.0),
                DVec3::new(x, 0.0, 2.0),
            ]
        };
        let (min, max) = (Vec3::splat(-2.0), Vec3::splat(2.0));
        let lanes = decoded(
            [x_plane(0.7), x_plane(0.66), x_plane(-0.7), x_plane(-0.66)],
            min,
            max,
        );
        assert_eq!(filter.triangles_beside(&lanes, 4), 0b0101);
    }

    #[test]
    fn degenerate_triangles_and_a_pad_keep_triangles() {
        // A zero-area triangle has no normal to part anything by; a pad wider than the
        // gap keeps a triangle the box lies beside.
        let cube = [DVec3::X * 0.5, DVec3::Y * 0.5, DVec3::Z * 0.5];
        let exact = BoxTriangleFilter::new(DVec3::ZERO, cube, 0.0, 4.0).unwrap();
        let padded = BoxTriangleFilter::new(DVec3::ZERO, cube, 0.2, 4.0).unwrap();
        // A zero-area triangle across the cube: whatever direction the rounding of its
        // decoded corners gives its normal, nothing parts it from the cube.
        let point = [DVec3::splat(1.8); 3];
        let line = [DVec3::splat(-1.0), DVec3::splat(0.1), DVec3::splat(1.9)];
        let beside = [
            DVec3::new(1.6, 0.0, 0.0),
            DVec3::new(0.0, 1.6, 0.0),
            DVec3::new(0.0, 0.0, 1.6),
        ];
        let (min, max) = (Vec3::splat(-2.0), Vec3::splat(2.0));
        let lanes = decoded([point, line, beside, beside], min, max);
        assert_eq!(exact.triangles_beside(&lanes, 4), 0b1100);
        assert_eq!(padded.triangles_beside(&lanes, 4), 0);
        assert!(BoxTriangleFilter::new(DVec3::splat(1e39), cube, 0.0, 4.0).is_none());
    }

    #[test]
    fn a_rejected_triangle_is_never_met_by_the_box() {
        // Random boxes (any turn, sizes 10^-2 to 10^2, centres up to 10^3 away) and
        // triangles in planes through a point of the box's surface (a corner, an edge, a
        // face) or just off it, by 0 to 10^-1 of the box's size, tilted at random,
        // spanning well past the box. Whatever the filter rejects, the exact clipping by
        // the box's own planes must leave nothing of; and the filter must reject some
        // (else this tests nothing).
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = || rng.next();
        let (mut rejected, mut kept_near) = (0, 0);
        for case in 0..20_000 {
            let size = 10f64.powf(next() * 4.0 - 2.0);
            let center = (DVec3::new(next(), next(), next()) - 0.5)
                * 2.0
                * 10f64.powi((next() * 4.0) as i32 - 1);
            let half = DVec3::new(0.2 + next(), 0.2 + next(), 0.2 + next()) * size;
            let turn = DQuat::from_euler(
                glam::EulerRot::YXZ,
                next() * 6.3,
                next() * 6.3,
                next() * 6.3,
            );
            let polytope = Polytope::from_oriented_box(center, half, turn).unwrap();
            let shape = *polytope.oriented_box().unwrap();
            // A point of the surface: each coordinate at -1, +1 or inside, one at least
            // on a face.
            let pick = |u: f64| {
                if u < 0.3 {
                    -1.0
                } else if u > 0.7 {
                    1.0
                } else {
                    u * 2.0 - 1.0
                }
            };
            let mut local = DVec3::new(pick(next()), pick(next()), pick(next()));
            let axis = (next() * 3.0) as usize % 3;
            local[axis] = if local[axis] < 0.0 { -1.0 } else { 1.0 };
            let surface = center
                + shape
                    .half_edges()
                    .iter()
                    .zip(local.to_array())
                    .map(|(e, s)| *e * s)
                    .sum::<DVec3>();
            let outward = (surface - center).normalize();
            let gap = match case % 4 {
                0 => 0.0,
                1 => size * 10f64.powf(-1.0 - next() * 8.0),
                _ => size * 0.1 * next(),
            };
            let normal = (outward + (DVec3::new(next(), next(), next()) - 0.5) * 0.8).normalize();
            let base = surface + outward * gap;
            let side = normal.any_orthonormal_vector();
            let other = normal.cross(side);
            let reach = size * (1.0 + 4.0 * next());
            let spin = next() * 6.3;
            let corner = |k: f64| {
                let angle = spin + k * 2.1;
                (base + (side * angle.cos() + other * angle.sin()) * reach)
                    .as_vec3()
                    .as_dvec3()
            };
            let triangle = [corner(0.0), corner(1.0), corner(2.0)];
            let lo = triangle[0].min(triangle[1]).min(triangle[2]);
            let hi = triangle[0].max(triangle[1]).max(triangle[2]);
            let (min, max) = (
                lo.as_vec3() - (lo.abs().as_vec3() * 1e-6 + 1e-30),
                hi.as_vec3() + (hi.abs().as_vec3() * 1e-6 + 1e-30),
            );
            let lanes = decoded([triangle; 4], min, max);
            let scale = f64::from(min.abs().max(max.abs()).max_element());
            let filter = BoxTriangleFilter::new(center, shape.half_edges(), 0.0, scale).unwrap();
            let mut polygon: ClipPolygon = triangle.iter().copied().collect();
            let met = clip_polygon(&mut polygon, polytope.planes(), &mut ClipPolygon::new());
            if filter.triangles_beside(&lanes, 1) != 0 {
                assert!(
                    !met,
                    "case {case}: a triangle the box meets was rejected: {triangle:?}"
                );
                rejected += 1;
            } else if !met && gap < size * 1e-3 {
                kept_near += 1;
            }
        }
        assert!(rejected > 2_000, "only {rejected} rejected");
        assert!(kept_near > 100, "only {kept_near} near misses kept");
    }
}
