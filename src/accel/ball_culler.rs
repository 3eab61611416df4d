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
    /// certainly farther than the radius.
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
        (gx * gx + gy * gy + gz * gz)
            .cmple(Vec4::splat(self.reach_squared))
            .bitmask()
            & valid
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
}
