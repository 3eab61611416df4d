//! Bounding volumes: [`BoundingBox`] (drawables) and [`BoundingSphere`] (nodes).
//!
//! Both are closed sets stored in `f64` so that bounds of drawables far from the origin
//! (georeferenced cities) keep their precision after a transform. An *empty* volume
//! contains nothing and is never intersected; it is what an empty group or a drawable
//! without primitives has.

use glam::{DMat4, DVec3, Vec3};

use crate::length::length_at_any_scale;

/// An axis-aligned box `[min, max]` (closed). Empty when any `min` component exceeds `max`.
///
/// ```
/// use scene_intersect::bounding::BoundingBox;
/// use glam::DVec3;
/// let mut b = BoundingBox::EMPTY;
/// assert!(b.is_empty());
/// b.expand_by_point(DVec3::new(1.0, 2.0, 3.0));
/// b.expand_by_point(DVec3::new(-1.0, 0.0, 3.0));
/// assert_eq!(b.center(), DVec3::new(0.0, 1.0, 3.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundingBox {
    /// Smallest corner.
    pub min: DVec3,
    /// Largest corner.
    pub max: DVec3,
}

impl BoundingBox {
    /// The empty box: contains no point; expanding it by a point gives that point.
    pub const EMPTY: BoundingBox = BoundingBox {
        min: DVec3::splat(f64::INFINITY),
        max: DVec3::splat(f64::NEG_INFINITY),
    };

    /// The box spanning two corners, in any order.
    pub fn from_corners(a: DVec3, b: DVec3) -> Self {
        BoundingBox {
            min: a.min(b),
            max: a.max(b),
        }
    }

    /// The smallest box holding every finite point of `points`; non-finite points are ignored.
    pub fn from_points(points: &[Vec3]) -> Self {
        let mut b = BoundingBox::EMPTY;
        for p in points {
            if p.is_finite() {
                b.expand_by_point(p.as_dvec3());
            }
        }
        b
    }

    /// True when the box contains no point.
    pub fn is_empty(&self) -> bool {
        !(self.min.x <= self.max.x && self.min.y <= self.max.y && self.min.z <= self.max.z)
    }

    /// Grows the box to contain `p`.
    pub fn expand_by_point(&mut self, p: DVec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }

    /// Grows the box to contain `other`.
    pub fn expand_by_box(&mut self, other: &BoundingBox) {
        if !other.is_empty() {
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
    }

    /// The centre (meaningless for an empty box).
    pub fn center(&self) -> DVec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the length of the diagonal: the radius of the sphere around the box centre
    /// that holds the box. 0 for an empty box.
    pub fn radius(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            (self.max - self.min).length() * 0.5
        }
    }

    /// The eight corners (x varying fastest, then y, then z).
    pub fn corners(&self) -> [DVec3; 8] {
        std::array::from_fn(|i| {
            DVec3::new(
                if i & 1 == 0 { self.min.x } else { self.max.x },
                if i & 2 == 0 { self.min.y } else { self.max.y },
                if i & 4 == 0 { self.min.z } else { self.max.z },
            )
        })
    }

    /// True when `p` lies in the closed box.
    pub fn contains(&self, p: DVec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// True when the two closed boxes share a point.
    pub fn intersects(&self, other: &BoundingBox) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// The box holding this box transformed by `matrix` (Arvo's method: exact bounds of
    /// the transformed corners for affine matrices).
    pub fn transformed(&self, matrix: &DMat4) -> BoundingBox {
        if self.is_empty() {
            return BoundingBox::EMPTY;
        }
        let mut b = BoundingBox::EMPTY;
        for c in self.corners() {
            b.expand_by_point(matrix.transform_point3(c));
        }
        b
    }
}

impl Default for BoundingBox {
    fn default() -> Self {
        BoundingBox::EMPTY
    }
}

/// A closed ball: every point within `radius` of `center`. Empty when `radius < 0`.
///
/// A node's bounding sphere is expressed in its *parent's* frame, as in OSG: a
/// transform's sphere already includes its own matrix.
///
/// ```
/// use scene_intersect::bounding::BoundingSphere;
/// use glam::DVec3;
/// let mut s = BoundingSphere::new(DVec3::ZERO, 1.0);
/// s.expand_by_sphere(&BoundingSphere::new(DVec3::new(3.0, 0.0, 0.0), 1.0));
/// // Spans x in [-1, 4]: centre 1.5, radius 2.5 (plus a rounding guard of a few ulps).
/// assert_eq!(s.center, DVec3::new(1.5, 0.0, 0.0));
/// assert!((s.radius - 2.5).abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundingSphere {
    /// Centre.
    pub center: DVec3,
    /// Radius; negative for the empty sphere, `f64::INFINITY` for "everywhere".
    pub radius: f64,
}

impl BoundingSphere {
    /// The empty sphere.
    pub const EMPTY: BoundingSphere = BoundingSphere {
        center: DVec3::ZERO,
        radius: -1.0,
    };

    /// The sphere that contains all of space: used where a bound cannot be expressed in
    /// the parent's frame (a transform with an absolute reference frame).
    pub const EVERYWHERE: BoundingSphere = BoundingSphere {
        center: DVec3::ZERO,
        radius: f64::INFINITY,
    };

    /// A sphere of `radius` around `center`.
    pub fn new(center: DVec3, radius: f64) -> Self {
        BoundingSphere { center, radius }
    }

    /// The sphere around a box's centre that holds the box (empty for an empty box).
    pub fn from_box(b: &BoundingBox) -> Self {
        if b.is_empty() {
            BoundingSphere::EMPTY
        } else {
            BoundingSphere::new(b.center(), b.radius())
        }
    }

    /// True when the sphere contains no point.
    pub fn is_empty(&self) -> bool {
        self.radius.is_nan() || self.radius < 0.0
    }

    /// Grows the sphere to contain `other`, moving the centre as little as needed.
    pub fn expand_by_sphere(&mut self, other: &BoundingSphere) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = *other;
            return;
        }
        if self.radius == f64::INFINITY || other.radius == f64::INFINITY {
            *self = BoundingSphere::EVERYWHERE;
            return;
        }
        let d = (other.center - self.center).length();
        if d + other.radius <= self.radius {
            return; // other inside self
        }
        if d + self.radius <= other.radius {
            *self = *other;
            return;
        }
        let new_radius = (self.radius + d + other.radius) * 0.5;
        let shift = new_radius - self.radius;
        self.center += (other.center - self.center) * (shift / d);
        // Guard against the rounding of the centre shift leaving either sphere a hair outside.
        self.radius = new_radius * (1.0 + 4.0 * f64::EPSILON);
    }

    /// The sphere holding this sphere transformed by an affine `matrix`: the centre is
    /// transformed and the radius scaled by a bound of the most the matrix stretches a
    /// vector ([`max_stretch`]).
    ///
    /// A sphere of radius 0 keeps radius 0 (times an infinite stretch it would be NaN):
    /// the sphere of a single point is that point, moved, wherever the matrix puts it.
    ///
    /// A sphere the matrix carries past `f64`'s range (a centre or radius that is
    /// infinite or not a number) becomes [`EVERYWHERE`](Self::EVERYWHERE): what it
    /// holds is still there, wherever the rounding puts it, and a traversal must not
    /// cull it. (The `query` fuzz target found points under a matrix with entries of
    /// 10^307 whose sphere's centre came out NaN; merged with a neighbour's, it gave
    /// their group a sphere of radius NaN, which the plain traversal took for empty,
    /// skipping points that the scene index's walks, testing them in their own frames,
    /// found.)
    ///
    /// ```
    /// use glam::{DMat4, DVec3};
    /// use scene_intersect::bounding::BoundingSphere;
    ///
    /// let huge = DMat4::from_scale(DVec3::splat(1e300));
    /// let far = BoundingSphere::new(DVec3::new(1e10, 0.0, 0.0), 1e10);
    /// assert_eq!(far.transformed(&huge), BoundingSphere::EVERYWHERE);
    /// ```
    pub fn transformed(&self, matrix: &DMat4) -> BoundingSphere {
        if self.is_empty() || self.radius == f64::INFINITY {
            return *self;
        }
        let center = matrix.transform_point3(self.center);
        let radius = if self.radius == 0.0 {
            0.0
        } else {
            self.radius * max_stretch(matrix)
        };
        if center.is_finite() && radius.is_finite() {
            BoundingSphere::new(center, radius)
        } else {
            BoundingSphere::EVERYWHERE
        }
    }
}

/// An upper bound, tight for a rotation times a scale, of the most the linear part of
/// `matrix` stretches a vector (its largest singular value).
///
/// The longest axis is not one under a shear: with axes (1, 0, 0) and (1, 1, 0) the
/// vector (0.53, 0.85, 0) is stretched 1.62 times, the axes only 1.41 times (the
/// `edits` fuzz target found a frame whose two long axes pointed almost the same way: a
/// node sphere scaled by the longer one left out triangles the node holds). The bound
/// is Gershgorin's on the axes' Gram matrix: the square of the largest singular value
/// is at most the largest row sum of `|aᵢ · aⱼ|`, which for orthogonal axes is the
/// longest axis's square, so a scale along the axes gives its largest factor exactly.
/// Axes are divided by the longest one's length first, so that no product overflows
/// (an entry of 10^286 squares past `f64::MAX`). (Its rounding, a few units of `f64`'s,
/// lies far inside the padding every cull adds to a sphere's radius.)
///
/// ```
/// use glam::{DMat4, DVec3};
/// use scene_intersect::bounding::max_stretch;
///
/// // A scale stretches by its largest factor, whatever the translation.
/// let m = DMat4::from_scale_rotation_translation(
///     DVec3::new(3.0, 1.0, 2.0),
///     glam::DQuat::IDENTITY,
///     DVec3::new(10.0, 0.0, 0.0),
/// );
/// assert_eq!(max_stretch(&m), 3.0);
/// // A shear stretches (0.53, 0.85, 0) by 1.618 (the golden ratio), more than either
/// // of its axes (1, 0, 0) and (1, 1, 0); the bound, √3, holds it.
/// let mut shear = DMat4::IDENTITY;
/// shear.y_axis.x = 1.0;
/// assert!(max_stretch(&shear) >= (1.0 + 5f64.sqrt()) / 2.0);
/// ```
pub fn max_stretch(matrix: &DMat4) -> f64 {
    let axes = [
        matrix.x_axis.truncate(),
        matrix.y_axis.truncate(),
        matrix.z_axis.truncate(),
    ];
    let longest = axes
        .iter()
        .map(|&a| length_at_any_scale(a))
        .fold(0.0, f64::max);
    if longest == 0.0 || !longest.is_finite() {
        // No stretch at all, or past `f64`: the longest axis says as much.
        return longest;
    }
    let unit = axes.map(|a| a / longest);
    let row = |i: usize| -> f64 { (0..3).map(|j| unit[i].dot(unit[j]).abs()).sum() };
    let gram_bound = row(0).max(row(1)).max(row(2));
    longest * gram_bound.sqrt()
}

impl Default for BoundingSphere {
    fn default() -> Self {
        BoundingSphere::EMPTY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec4};

    #[test]
    fn a_sheared_sphere_holds_the_most_stretched_point() {
        // Axes (1, 0, 0), (1, 1, 0), (0, 0, 1): the Gram matrix of the first two is
        // [[1, 1], [1, 2]], whose largest eigenvalue is (3 + √5) / 2, so the largest
        // stretch is its root, the golden ratio 1.618..., along (0.526, 0.851, 0). The
        // longest axis is √2 = 1.414... long: a unit sphere scaled by it left that
        // point out. The bound: axes over √2, row sums of |aᵢ · aⱼ| 1, 3/2 and 1/2,
        // so √2 · √(3/2) = √3.
        let mut shear = DMat4::IDENTITY;
        shear.y_axis.x = 1.0;
        let golden = (1.0 + 5f64.sqrt()) / 2.0;
        let direction = DVec3::new(1.0, golden, 0.0).normalize();
        let moved = shear.transform_point3(direction);
        assert!((moved.length() - golden).abs() < 1e-15);
        let sphere = BoundingSphere::new(DVec3::ZERO, 1.0).transformed(&shear);
        let reach = (moved - sphere.center).length();
        assert!(reach <= sphere.radius, "{sphere:?} misses {moved}");
        assert!((max_stretch(&shear) - 3f64.sqrt()).abs() < 1e-14);
        // A rotation times a uniform scale stretches by the scale, which the bound
        // gives up to its rounding.
        let turn = DMat4::from_scale_rotation_translation(
            DVec3::splat(2.0),
            DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 2.0) / 3.0, 1.1),
            DVec3::new(5.0, -3.0, 8.0),
        );
        let stretch = max_stretch(&turn);
        assert!((stretch - 2.0).abs() < 1e-14, "{stretch}");
        // No stretch at all: the sphere of a projection onto the translation.
        let flat = DMat4::from_cols(DVec4::ZERO, DVec4::ZERO, DVec4::ZERO, DVec4::W);
        assert_eq!(max_stretch(&flat), 0.0);
    }

    #[test]
    fn a_sphere_moved_by_a_matrix_too_large_to_square() {
        // A point (radius 0) under a matrix whose x axis is 10^300 long: the axis's
        // squared length overflows, and 0 times an infinite scale was NaN. The point's
        // sphere is the point, moved: (0, 1, 0) stays where it is.
        let mut stretch = DMat4::IDENTITY;
        stretch.x_axis.x = 1e300;
        let point = BoundingSphere::new(DVec3::Y, 0.0).transformed(&stretch);
        assert_eq!(point, BoundingSphere::new(DVec3::Y, 0.0));
        // A unit sphere at x = 1 under a scale of 10^200: centre 10^200, radius 10^200.
        let scale = DMat4::from_scale(DVec3::splat(1e200));
        let ball = BoundingSphere::new(DVec3::X, 1.0).transformed(&scale);
        assert_eq!(ball.center, DVec3::new(1e200, 0.0, 0.0));
        assert_eq!(ball.radius, 1e200);
    }

    #[test]
    fn empty_box_is_empty_and_absorbs() {
        let mut b = BoundingBox::EMPTY;
        assert!(b.is_empty());
        assert_eq!(b.radius(), 0.0);
        b.expand_by_box(&BoundingBox::from_corners(DVec3::ONE, DVec3::ZERO));
        assert_eq!(b.min, DVec3::ZERO);
        assert_eq!(b.max, DVec3::ONE);
        // radius = half of sqrt(3)
        assert!((b.radius() - 3f64.sqrt() / 2.0).abs() < 1e-15);
    }

    #[test]
    fn box_ignores_non_finite_points() {
        let b =
            BoundingBox::from_points(&[Vec3::new(f32::NAN, 0.0, 0.0), Vec3::new(1.0, 2.0, 3.0)]);
        assert_eq!(b.min, DVec3::new(1.0, 2.0, 3.0));
        assert_eq!(b.max, DVec3::new(1.0, 2.0, 3.0));
    }

    #[test]
    fn touching_boxes_intersect() {
        let a = BoundingBox::from_corners(DVec3::ZERO, DVec3::ONE);
        let b = BoundingBox::from_corners(DVec3::new(1.0, 0.0, 0.0), DVec3::new(2.0, 1.0, 1.0));
        let c = BoundingBox::from_corners(DVec3::new(1.5, 0.0, 0.0), DVec3::new(2.0, 1.0, 1.0));
        assert!(a.intersects(&b));
        assert!(!a.intersects(&c));
    }

    #[test]
    fn sphere_expansion_cases() {
        // One inside the other: unchanged.
        let mut s = BoundingSphere::new(DVec3::ZERO, 5.0);
        s.expand_by_sphere(&BoundingSphere::new(DVec3::new(1.0, 0.0, 0.0), 1.0));
        assert_eq!(s, BoundingSphere::new(DVec3::ZERO, 5.0));
        // Self inside other: becomes other.
        let mut s = BoundingSphere::new(DVec3::ZERO, 1.0);
        s.expand_by_sphere(&BoundingSphere::new(DVec3::ZERO, 2.0));
        assert_eq!(s.radius, 2.0);
        // Disjoint: spans both, [-1, 11] on x -> centre 5, radius 6.
        let mut s = BoundingSphere::new(DVec3::ZERO, 1.0);
        s.expand_by_sphere(&BoundingSphere::new(DVec3::new(10.0, 0.0, 0.0), 1.0));
        assert!((s.center.x - 5.0).abs() < 1e-12);
        assert!((s.radius - 6.0).abs() < 1e-12);
        // Infinite wins.
        s.expand_by_sphere(&BoundingSphere::EVERYWHERE);
        assert_eq!(s.radius, f64::INFINITY);
    }

    #[test]
    fn sphere_transform_uses_largest_scale() {
        let m = DMat4::from_scale_rotation_translation(
            DVec3::new(1.0, 3.0, 2.0),
            glam::DQuat::IDENTITY,
            DVec3::new(10.0, 0.0, 0.0),
        );
        let s = BoundingSphere::new(DVec3::new(1.0, 1.0, 1.0), 2.0).transformed(&m);
        assert_eq!(s.center, DVec3::new(11.0, 3.0, 2.0));
        assert_eq!(s.radius, 6.0);
    }

    #[test]
    fn box_transform_rotated() {
        // Unit cube rotated 90 degrees about z: x in [-1, 0], y in [0, 1].
        let m = DMat4::from_rotation_z(std::f64::consts::FRAC_PI_2);
        let b = BoundingBox::from_corners(DVec3::ZERO, DVec3::ONE).transformed(&m);
        assert!((b.min - DVec3::new(-1.0, 0.0, 0.0)).length() < 1e-12);
        assert!((b.max - DVec3::new(0.0, 1.0, 1.0)).length() < 1e-12);
    }
}
