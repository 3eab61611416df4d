//! Axis-aligned bounding boxes.

use glam::DVec3;

/// A closed axis-aligned box `[min, max]` (componentwise `min ≤ max`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: DVec3,
    /// Upper corner.
    pub max: DVec3,
}

impl Aabb {
    /// The box spanned by two opposite corners, in any order (componentwise
    /// minimum and maximum are taken, so the box is never inverted).
    pub fn from_corners(a: DVec3, b: DVec3) -> Self {
        Self {
            min: a.min(b),
            max: a.max(b),
        }
    }

    /// The box with the given centre and half extents (absolute values are used).
    pub fn from_center_half_extents(center: DVec3, half_extents: DVec3) -> Self {
        let h = half_extents.abs();
        Self {
            min: center - h,
            max: center + h,
        }
    }

    /// Does the closed box contain `p`?
    pub fn contains_point(&self, p: DVec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }
}

/// Do the closed boxes overlap? On every axis the intervals must meet:
/// `a.min ≤ b.max` and `b.min ≤ a.max` (touching faces, edges or corners count).
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{intersection_test_aabb_aabb, Aabb};
/// let a = Aabb::from_corners(DVec3::ZERO, DVec3::ONE);
/// let b = Aabb::from_corners(DVec3::ONE, DVec3::splat(2.0)); // shares the corner (1, 1, 1)
/// assert!(intersection_test_aabb_aabb(&a, &b));
/// ```
pub fn intersection_test_aabb_aabb(a: &Aabb, b: &Aabb) -> bool {
    a.min.cmple(b.max).all() && b.min.cmple(a.max).all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_touch_separate() {
        let a = Aabb::from_corners(DVec3::ZERO, DVec3::new(2.0, 2.0, 2.0));
        // Overlapping: [1, 3]³ meets [0, 2]³.
        let b = Aabb::from_center_half_extents(DVec3::splat(2.0), DVec3::ONE);
        assert!(intersection_test_aabb_aabb(&a, &b));
        // Face contact: x ∈ [2, 4] touches x = 2.
        let c = Aabb::from_corners(DVec3::new(2.0, 0.5, 0.5), DVec3::new(4.0, 1.0, 1.0));
        assert!(intersection_test_aabb_aabb(&a, &c));
        assert!(intersection_test_aabb_aabb(&c, &a));
        // Separated on z only: z ∈ [2.001, 3].
        let d = Aabb::from_corners(DVec3::new(0.0, 0.0, 2.001), DVec3::new(1.0, 1.0, 3.0));
        assert!(!intersection_test_aabb_aabb(&a, &d));
        // Edge contact: x = 2 and y = 2 shared, z overlaps.
        let e = Aabb::from_corners(DVec3::new(2.0, 2.0, 1.0), DVec3::new(3.0, 3.0, 5.0));
        assert!(intersection_test_aabb_aabb(&a, &e));
    }

    #[test]
    fn degenerate_boxes() {
        // Corners given in reverse order are sorted.
        let a = Aabb::from_corners(DVec3::ONE, DVec3::ZERO);
        assert_eq!((a.min, a.max), (DVec3::ZERO, DVec3::ONE));
        // A point box inside / on the boundary / outside.
        let p = Aabb::from_corners(DVec3::splat(0.5), DVec3::splat(0.5));
        assert!(intersection_test_aabb_aabb(&a, &p));
        let q = Aabb::from_center_half_extents(DVec3::new(1.0, 0.0, 0.5), DVec3::ZERO);
        assert!(intersection_test_aabb_aabb(&a, &q));
        assert!(a.contains_point(DVec3::new(1.0, 0.0, 0.5)));
        let r = Aabb::from_center_half_extents(DVec3::splat(1.5), -DVec3::splat(0.25));
        assert!(!intersection_test_aabb_aabb(&a, &r));
        // NaN boxes never intersect.
        let n = Aabb::from_corners(DVec3::NAN, DVec3::NAN);
        assert!(!intersection_test_aabb_aabb(&a, &n));
    }
}
