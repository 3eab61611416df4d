//! [`LocalBallCuller`]: a world ball as a drawable's own frame sees it, prepared for
//! conservative `f32` box tests.
//!
//! Under a transform a ball becomes an ellipsoid, which no cheap test follows exactly.
//! The culler holds two shapes that contain it: a ball (a [`BallCuller`]) and a box
//! along the frame's axes (per axis, the ellipsoid's exact half extent). A box is
//! dropped only when it misses one of the two. The ball alone is loose along a
//! squeezed axis (a building scaled 10 wide and 40 tall sees a ball 4 times too tall
//! in its frame); the box is loose at the ellipsoid's corners, where the ball is not.

use glam::{DVec3, Vec3};

use super::{Aabb, Aabb4, BallCuller};

/// A ball and a box, in one frame, that both hold what a query may reach there.
///
/// ```
/// use glam::{DVec3, Vec3};
/// use scene_intersect::accel::{Aabb, LocalBallCuller};
///
/// // The ball of radius 1 at the origin seen through a scale of 1/4 along y: an
/// // ellipsoid of half extents (1, 0.25, 1), held by the ball of radius 1 and the box.
/// let culler = LocalBallCuller::new(DVec3::ZERO, 1.0, DVec3::new(1.0, 0.25, 1.0), 2.0);
/// let above = Aabb { min: Vec3::new(-0.1, 0.5, -0.1), max: Vec3::new(0.1, 0.6, 0.1) };
/// assert!(!culler.overlaps(&above)); // within the ball, above the box
/// let beside = Aabb { min: Vec3::new(0.8, 0.0, 0.8), max: Vec3::new(0.9, 0.1, 0.9) };
/// assert!(!culler.overlaps(&beside)); // within the box, outside the ball
/// let inside = Aabb { min: Vec3::new(0.5, 0.1, 0.0), max: Vec3::new(0.6, 0.2, 0.1) };
/// assert!(culler.overlaps(&inside));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalBallCuller {
    ball: BallCuller,
    /// The box, rounded outward to `f32` (its tests are comparisons, which round
    /// nothing).
    reach: Aabb,
}

impl LocalBallCuller {
    /// The ball of `radius` around `center` and the box of half extents `extents`
    /// around it, for boxes whose coordinates are at most `scale` in magnitude. Both
    /// must hold everything the query can reach in this frame; the caller pads them for
    /// the rounding of its own exact tests.
    pub fn new(center: DVec3, radius: f64, extents: DVec3, scale: f64) -> LocalBallCuller {
        LocalBallCuller {
            ball: BallCuller::new(center, radius, scale),
            reach: Aabb::from_f64_outward(center - extents, center + extents),
        }
    }

    /// False only when the box is certainly outside the ball or the box of reach.
    #[inline]
    pub fn overlaps(&self, b: &Aabb) -> bool {
        b.intersects(&self.reach) && self.ball.overlaps(b)
    }

    /// False only when the points' box is certainly outside the ball or the box of
    /// reach: [`overlaps`](Self::overlaps) for a primitive's vertices.
    #[inline]
    pub fn may_reach(&self, points: &[Vec3]) -> bool {
        self.overlaps(&Aabb::from_points(points))
    }

    /// [`overlaps`](Self::overlaps) for four boxes at once (bit `k` for box `k`).
    #[inline]
    pub fn overlapping(&self, b: &Aabb4) -> u32 {
        b.intersecting(&self.reach) & self.ball.overlapping(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(min: Vec3, side: f32) -> Aabb {
        Aabb {
            min,
            max: min + Vec3::splat(side),
        }
    }

    #[test]
    fn a_box_is_kept_only_within_both_shapes() {
        // Ball of radius 2 at (1, 1, 1); box of half extents (2, 0.5, 2).
        let culler = LocalBallCuller::new(DVec3::ONE, 2.0, DVec3::new(2.0, 0.5, 2.0), 4.0);
        // Above the box (y from 1.6), inside the ball.
        assert!(!culler.overlaps(&cube(Vec3::new(0.9, 1.6, 0.9), 0.2)));
        // Touching the box's top face exactly, inside the ball: kept.
        assert!(culler.overlaps(&cube(Vec3::new(0.9, 1.5, 0.9), 0.2)));
        // Inside the box near its corner (2.8, 1, 2.8), 2.5 from the centre: dropped.
        assert!(!culler.overlaps(&cube(Vec3::new(2.7, 0.9, 2.7), 0.1)));
        // Inside both.
        assert!(culler.overlaps(&cube(Vec3::new(2.0, 0.9, 1.0), 0.5)));
        // The points' form agrees.
        assert!(!culler.may_reach(&[Vec3::new(1.0, 1.6, 1.0), Vec3::new(1.1, 1.7, 1.0)]));
        assert!(culler.may_reach(&[Vec3::new(1.0, 1.4, 1.0), Vec3::new(1.0, 1.7, 1.0)]));
    }

    #[test]
    fn four_boxes_at_once_agree_with_one_at_a_time() {
        let culler = LocalBallCuller::new(
            DVec3::new(0.3, -0.2, 0.9),
            1.25,
            DVec3::new(1.25, 0.3, 0.8),
            4.0,
        );
        let mut boxes = Aabb4::EMPTY;
        let mut i = 0;
        let mut kept = 0;
        // Cubes of side 0.3 on a grid of step 0.25 over [-2, 2] x [-1, 0.5] x [-1, 3].
        for x in -8..8 {
            for y in -4..2 {
                for z in -4..12 {
                    let min = Vec3::new(x as f32, y as f32, z as f32) * 0.25;
                    boxes.set(i % 4, &cube(min, 0.3));
                    i += 1;
                    if i % 4 == 0 {
                        let mask = culler.overlapping(&boxes);
                        for lane in 0..4 {
                            let one = culler.overlaps(&boxes.get(lane));
                            assert_eq!(mask & (1 << lane) != 0, one);
                            kept += usize::from(one);
                        }
                    }
                }
            }
        }
        assert!(kept > 40 && kept < i - 400, "{kept} of {i} kept");
        assert_eq!(culler.overlapping(&Aabb4::EMPTY), 0);
    }

    #[test]
    fn a_box_touching_the_reach_far_from_the_origin_is_kept() {
        // Half extent 0.1 along x from a centre that f32 cannot hold: a box whose face
        // is centre.x + 0.1 rounded to the nearest f32 (above or below it) is kept, as
        // the reach is rounded outward.
        let center = DVec3::new(4_000_000.123_456_7, 0.0, 0.0);
        let face = (center.x + 0.1) as f32;
        let culler = LocalBallCuller::new(center, 1.0, DVec3::new(0.1, 1.0, 1.0), 5e6);
        let b = Aabb {
            min: Vec3::new(face, -0.5, -0.5),
            max: Vec3::new(face + 1.0, 0.5, 0.5),
        };
        assert!(culler.overlaps(&b));
    }
}
