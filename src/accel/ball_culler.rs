//! [`BallCuller`]: a ball prepared for conservative `f32` box tests.
//!
//! As for [`SegmentSlab`](super::SegmentSlab), the test runs in `f32` with a margin
//! (2^-18 of the magnitudes involved) far above what the conversion of the centre to
//! `f32` and the arithmetic can cost, so it never drops a box the exact tests could
//! find something in.

use glam::{DVec3, Vec3, Vec4};

use super::{Aabb, Aabb4, TriangleLanes};

/// Relative margin for the rounding of the `f32` arithmetic.
const ROUNDING_MARGIN: f64 = 1.0 / (1u32 << 18) as f64;

/// A ball ready for many box tests.
///
/// ```
/// use glam::{DVec3, Vec3};
/// use scene_intersect::accel::{Aabb, BallCuller};
///
/// let ball = BallCuller::new(DVec3::new(3.0, 0.5, 0.5), 1.5, 10.0);
/// let unit = Aabb { min: Vec3::ZERO, max: Vec3::ONE };
/// assert!(!ball.overlaps(&unit)); // 2 away from x = 1
/// let bigger = BallCuller::new(DVec3::new(3.0, 0.5, 0.5), 2.5, 10.0);
/// assert!(bigger.overlaps(&unit));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallCuller {
    center: Vec3,
    /// The radius grown by the margin, rounded up to `f32`.
    reach: f32,
    reach_squared: f32,
    /// When the ball does not fit in `f32`: every box overlaps.
    accept_all: bool,
}

impl BallCuller {
    /// The ball of `radius` around `center`, for boxes whose coordinates are at most
    /// `scale` in magnitude (the margin grows with it).
    pub fn new(center: DVec3, radius: f64, scale: f64) -> BallCuller {
        let magnitude = scale.abs() + center.abs().max_element() + radius.abs();
        let reach = radius.abs() + magnitude * ROUNDING_MARGIN;
        let reach_squared = ((reach * reach) as f32).next_up();
        let center = center.as_vec3();
        BallCuller {
            center,
            reach: (reach as f32).next_up(),
            reach_squared,
            accept_all: !(center.is_finite() && reach_squared.is_finite()),
        }
    }

    /// False only when the box is certainly farther from the centre than the radius.
    #[inline]
    pub fn overlaps(&self, b: &Aabb) -> bool {
        self.accept_all
            || self
                .center
                .clamp(b.min, b.max)
                .distance_squared(self.center)
                <= self.reach_squared
    }

    /// [`overlaps`](Self::overlaps) for four boxes at once (bit `k` for box `k`): the
    /// same arithmetic, lane by lane.
    #[inline]
    pub fn overlapping(&self, b: &Aabb4) -> u32 {
        if self.accept_all {
            return 0b1111;
        }
        // The clamp and the sum in `overlaps`' order (`Vec3::clamp`, then
        // `distance_squared`: x, then y, then z).
        let offset = |c: f32, min: Vec4, max: Vec4| {
            let c = Vec4::splat(c);
            c.max(min).min(max) - c
        };
        let dx = offset(self.center.x, b.min_x, b.max_x);
        let dy = offset(self.center.y, b.min_y, b.max_y);
        let dz = offset(self.center.z, b.min_z, b.max_z);
        let distance_squared = dx * dx + dy * dy + dz * dz;
        distance_squared
            .cmple(Vec4::splat(self.reach_squared))
            .bitmask()
    }

    /// Which of the first `count` decoded triangles of a leaf (decoded with the origin
    /// at the ball's `f32` centre, see [`center`](Self::center)) may lie within reach:
    /// bit `k` clear only when triangle `k`'s box, grown by the decoding's error, is
    /// certainly farther than the radius, or its plane is.
    ///
    /// The plane test is a separating axis test along the decoded triangle's normal
    /// `m` (any direction is a valid axis, whatever its rounding): the ball spans
    /// `[-r, r]·|m|` along it, and a true corner lies within the decoding's error of
    /// the decoded one. The margin in the reach (2^-18 of the magnitudes) covers the
    /// `f32` projections several times over, and the squares are compared with another
    /// `2^-14` to spare.
    #[inline]
    pub fn triangles(&self, t: &TriangleLanes, count: usize) -> u32 {
        let valid = (1u32 << count) - 1;
        if self.accept_all {
            return valid;
        }
        let error = Vec4::splat(t.error);
        // Per axis, how far the box [min - error, max + error] is from the origin.
        let gap = |k: usize| {
            let lo = t.a[k].min(t.b[k]).min(t.c[k]) - error;
            let hi = t.a[k].max(t.b[k]).max(t.c[k]) + error;
            lo.max(Vec4::ZERO) - hi.min(Vec4::ZERO)
        };
        let (gx, gy, gz) = (gap(0), gap(1), gap(2));
        let near_box = (gx * gx + gy * gy + gz * gz)
            .cmple(Vec4::splat(self.reach_squared))
            .bitmask();
        // The plane: how far the decoded corners lie beyond ±reach along m (times |m|):
        // the nearer side of the corners to the centre, when all lie on one side.
        let (m, low, high) = t.along_normals();
        let beyond = low.max(-high);
        let length_squared = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
        let needed = Vec4::splat(self.reach) + error;
        let needed_squared = needed * needed * length_squared * Vec4::splat(1.0 + 1.0 / 16384.0);
        // A NaN (a normal past `f32`) fails both comparisons: the triangle is kept.
        let beside_plane =
            (beyond.cmpgt(Vec4::ZERO) & (beyond * beyond).cmpgt(needed_squared)).bitmask();
        near_box & !beside_plane & valid
    }

    /// The centre as the tests see it (in `f32`): the origin to decode leaf triangles
    /// at for [`triangles`](Self::triangles).
    pub fn center(&self) -> Vec3 {
        self.center
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_counts_and_corners_are_round() {
        let unit = Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        };
        // Touching the face x = 1 from x = 2 with radius 1.
        assert!(BallCuller::new(DVec3::new(2.0, 0.5, 0.5), 1.0, 2.0).overlaps(&unit));
        // Near the corner (1, 1, 1) along the diagonal: distance sqrt(3) * 0.5 ~ 0.866.
        let c = DVec3::splat(1.5);
        assert!(!BallCuller::new(c, 0.8, 2.0).overlaps(&unit));
        assert!(BallCuller::new(c, 0.9, 2.0).overlaps(&unit));
        // Inside.
        assert!(BallCuller::new(DVec3::splat(0.5), 0.01, 2.0).overlaps(&unit));
    }

    #[test]
    fn four_boxes_at_once_agree_with_one_at_a_time() {
        let ball = BallCuller::new(DVec3::new(0.3, -0.2, 0.9), 1.25, 4.0);
        let mut boxes = Aabb4::EMPTY;
        let mut i = 0;
        for x in [-3.0f32, -1.0, 0.0, 1.2, 2.0] {
            for z in [-2.0f32, 0.5, 1.9, 3.0] {
                let min = Vec3::new(x, -0.5, z);
                boxes.set(
                    i % 4,
                    &Aabb {
                        min,
                        max: min + Vec3::new(0.7, 0.4, 0.3),
                    },
                );
                i += 1;
                if i % 4 == 0 {
                    let mask = ball.overlapping(&boxes);
                    for lane in 0..4 {
                        let one = ball.overlaps(&boxes.get(lane));
                        assert_eq!(mask & (1 << lane) != 0, one);
                    }
                }
            }
        }
        assert_eq!(ball.overlapping(&Aabb4::EMPTY), 0);
    }

    #[test]
    fn far_from_the_origin_a_touching_ball_is_kept() {
        let min = Vec3::new(4_000_000.0, 2_000_000.0, 0.0);
        let b = Aabb {
            min,
            max: min + Vec3::splat(16.0),
        };
        // Touches the face x = min.x exactly in f64, centre not representable in f32.
        let c = DVec3::new(3_999_996.9, 2_000_008.123_456_7, 8.0);
        assert!(BallCuller::new(c, 3.1, 5e6).overlaps(&b));
    }

    #[test]
    fn a_triangle_beside_the_ball_along_its_normal_is_dropped_and_a_touching_one_kept() {
        // A large triangle in the plane z = h under the ball of radius 1 at the origin:
        // its box reaches the ball for every h (it spans x, y in [-5, 5]), its plane only
        // for |h| <= 1.
        let ball = BallCuller::new(DVec3::ZERO, 1.0, 8.0);
        let (min, max) = (Vec3::splat(-6.0), Vec3::splat(6.0));
        let at = |h: f64| {
            [
                DVec3::new(-5.0, -5.0, h),
                DVec3::new(5.0, -5.0, h),
                DVec3::new(0.0, 5.0, h),
            ]
        };
        let records = [at(1.05), at(1.0), at(-0.5), at(-1.05)]
            .map(|t| crate::accel::LeafTriangle::new(0, t, min, max));
        let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
        let lanes = TriangleLanes::decode(&records, splat(min), splat(max), ball.center());
        assert_eq!(ball.triangles(&lanes, 4), 0b0110);
    }

    #[test]
    fn a_dropped_triangle_is_never_within_the_radius() {
        // Random balls (radii 10^-2 to 10^2, centres up to 10^3 away) and triangles
        // spanning past them in planes tangent to the ball or just off it, by 0 to 10^-1
        // of the radius, tilted at random. Whatever the culler drops must lie farther
        // than the radius from the centre by the exact closest point; and it must drop
        // some.
        use crate::collide::closest_point::closest_point_on_triangle;
        let mut rng = crate::test_rng::XorShift::new(0x2545_f491_4f6c_dd1du64);
        let mut next = || rng.next();
        let mut dropped = 0;
        for case in 0..20_000 {
            let radius = 10f64.powf(next() * 4.0 - 2.0);
            let center = (DVec3::new(next(), next(), next()) - 0.5)
                * 2.0
                * 10f64.powi((next() * 4.0) as i32 - 1);
            let normal = (DVec3::new(next(), next(), next()) - 0.5).normalize();
            let gap = match case % 4 {
                0 => 0.0,
                1 => radius * 10f64.powf(-1.0 - next() * 8.0),
                _ => radius * 0.1 * next(),
            };
            let foot = center + normal * (radius + gap);
            // Spanning the foot, or beside it (the box test then decides).
            let side = normal.any_orthonormal_vector();
            let other = normal.cross(side);
            let shift = if case % 3 == 0 {
                radius * 2.0 * next()
            } else {
                0.0
            };
            let reach = radius * (1.0 + 4.0 * next());
            let spin = next() * 6.3;
            let corner = |k: f64| {
                let angle = spin + k * 2.1;
                (foot + side * shift + (side * angle.cos() + other * angle.sin()) * reach)
                    .as_vec3()
                    .as_dvec3()
            };
            let triangle = [corner(0.0), corner(1.0), corner(2.0)];
            let lo = triangle[0].min(triangle[1]).min(triangle[2]).as_vec3();
            let hi = triangle[0].max(triangle[1]).max(triangle[2]).as_vec3();
            let (min, max) = (
                lo - (lo.abs() * 1e-6 + 1e-30),
                hi + (hi.abs() * 1e-6 + 1e-30),
            );
            let scale = f64::from(min.abs().max(max.abs()).max_element());
            let ball = BallCuller::new(center, radius, scale);
            let records = [crate::accel::LeafTriangle::new(0, triangle, min, max); 4];
            let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
            let lanes = TriangleLanes::decode(&records, splat(min), splat(max), ball.center());
            if ball.triangles(&lanes, 1) == 0 {
                let [a, b, c] = triangle;
                let distance = (closest_point_on_triangle(center, a, b, c) - center).length();
                assert!(
                    distance > radius,
                    "case {case}: dropped at {distance} <= {radius}"
                );
                dropped += 1;
            }
        }
        assert!(dropped > 2_000, "only {dropped} dropped");
    }
}
