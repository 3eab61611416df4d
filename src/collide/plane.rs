//! Planes and the sphere–plane classification.
//!
//! A [`Plane`] is the set `{x : n·x + d = 0}` with a unit normal `n`; its front
//! side is `n·x + d > 0`.

use glam::DVec3;

use super::sanitize_radius;

/// A plane `n·x + d = 0` with a unit normal `n`.
///
/// The constructors normalise the normal, so [`Plane::signed_distance`] is a true
/// Euclidean distance. The front side is where `n·x + d > 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plane {
    normal: DVec3,
    d: f64,
}

impl Plane {
    /// The plane `n·x + d = 0`. Both `n` and `d` are divided by `|n|`, so the
    /// plane is unchanged and its normal becomes unit length.
    ///
    /// Returns `None` when `n` is zero or not finite, or `d` is not finite.
    ///
    /// ```
    /// use glam::DVec3;
    /// use scene_intersect::collide::Plane;
    /// // 2z - 4 = 0 is the plane z = 2.
    /// let p = Plane::new(DVec3::new(0.0, 0.0, 2.0), -4.0).unwrap();
    /// assert_eq!(p.normal(), DVec3::Z);
    /// assert_eq!(p.d(), -2.0);
    /// ```
    pub fn new(normal: DVec3, d: f64) -> Option<Self> {
        let len = normal.length();
        let valid = len > 0.0 && len.is_finite() && d.is_finite();
        if !valid {
            return None;
        }
        Some(Self {
            normal: normal / len,
            d: d / len,
        })
    }

    /// The plane `n·x + d = 0` for a normal already known to be unit length
    /// (not checked; for constants such as the axis directions).
    pub(crate) const fn from_unit_normal(normal: DVec3, d: f64) -> Self {
        Self { normal, d }
    }

    /// The plane through `point` with normal direction `normal` (normalised):
    /// `d = −n·point`. Returns `None` for a zero or non-finite normal or point.
    pub fn from_point_normal(point: DVec3, normal: DVec3) -> Option<Self> {
        let n = normal.try_normalize()?;
        Self::new(n, -n.dot(point))
    }

    /// The plane through three points, with normal `(b − a) × (c − a)`, so the
    /// front side is the one from which `a, b, c` appear counter-clockwise.
    /// Returns `None` when the points are collinear (or coincident).
    pub fn from_points(a: DVec3, b: DVec3, c: DVec3) -> Option<Self> {
        Self::from_point_normal(a, (b - a).cross(c - a))
    }

    /// The unit normal `n`; it points to the front side.
    pub fn normal(&self) -> DVec3 {
        self.normal
    }

    /// The offset `d` of `n·x + d = 0` (for a unit normal, `−d` is the signed
    /// distance of the plane from the origin along `n`).
    pub fn d(&self) -> f64 {
        self.d
    }

    /// Signed distance `n·p + d`: positive in front, negative behind, zero on it.
    pub fn signed_distance(&self, p: DVec3) -> f64 {
        self.normal.dot(p) + self.d
    }

    /// Orthogonal projection of `p` onto the plane: `p − (n·p + d) n`.
    pub fn project_point(&self, p: DVec3) -> DVec3 {
        p - self.signed_distance(p) * self.normal
    }

    /// The same plane with the opposite orientation (front and back swapped).
    pub fn flipped(&self) -> Self {
        Self {
            normal: -self.normal,
            d: -self.d,
        }
    }
}

/// Where a sphere lies relative to a plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlaneSide {
    /// Entirely on the front (positive) side, not touching the plane.
    Front,
    /// Entirely behind the plane (negative side), not touching it.
    Behind,
    /// The closed ball meets the plane (tangent contact included).
    Intersecting,
}

/// Result of [`classify_sphere_plane`]: the side and the signed distance of the
/// centre.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpherePlaneClassification {
    /// Front, behind or intersecting.
    pub side: PlaneSide,
    /// Signed distance `s = n·c + d` of the centre from the plane.
    pub signed_distance: f64,
}

/// Classifies the closed ball (`center`, `radius`) against `plane`.
///
/// With `s = n·c + d`: `s > r` → [`PlaneSide::Front`], `s < −r` →
/// [`PlaneSide::Behind`], otherwise (`|s| ≤ r`, tangent contact included)
/// [`PlaneSide::Intersecting`]. A negative or NaN radius is treated as `0`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{classify_sphere_plane, Plane, PlaneSide};
/// let floor = Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap();
/// // Tangent from above: |s| = r counts as intersecting (closed ball).
/// let c = classify_sphere_plane(DVec3::new(3.0, 1.0, 1.0), 1.0, &floor);
/// assert_eq!(c.side, PlaneSide::Intersecting);
/// assert_eq!(c.signed_distance, 1.0);
/// ```
pub fn classify_sphere_plane(
    center: DVec3,
    radius: f64,
    plane: &Plane,
) -> SpherePlaneClassification {
    let r = sanitize_radius(radius);
    let s = plane.signed_distance(center);
    let side = if s > r {
        PlaneSide::Front
    } else if s < -r {
        PlaneSide::Behind
    } else {
        PlaneSide::Intersecting
    };
    SpherePlaneClassification {
        side,
        signed_distance: s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane_z(height: f64) -> Plane {
        Plane::from_point_normal(DVec3::new(0.0, 0.0, height), DVec3::Z).unwrap()
    }

    #[test]
    fn new_normalises() {
        // (3, 4, 0)·x + 10 = 0, |n| = 5 → n = (0.6, 0.8, 0), d = 2.
        let p = Plane::new(DVec3::new(3.0, 4.0, 0.0), 10.0).unwrap();
        assert!((p.normal() - DVec3::new(0.6, 0.8, 0.0)).length() < 1e-15);
        assert!((p.d() - 2.0).abs() < 1e-15);
        // Point (1, 1, 7): 0.6 + 0.8 + 2 = 3.4.
        assert!((p.signed_distance(DVec3::new(1.0, 1.0, 7.0)) - 3.4).abs() < 1e-15);
    }

    #[test]
    fn degenerate_planes_are_rejected() {
        assert!(Plane::new(DVec3::ZERO, 1.0).is_none());
        assert!(Plane::new(DVec3::Z, f64::NAN).is_none());
        assert!(Plane::from_point_normal(DVec3::ZERO, DVec3::ZERO).is_none());
        // Collinear points.
        assert!(Plane::from_points(DVec3::ZERO, DVec3::X, 2.0 * DVec3::X).is_none());
    }

    #[test]
    fn from_points_is_counter_clockwise_front() {
        // (1,0,0)-(0,0,0) × (0,1,0)-(0,0,0) = x × y = z, through origin → z = 0.
        let p = Plane::from_points(DVec3::ZERO, DVec3::X, DVec3::Y).unwrap();
        assert_eq!(p.normal(), DVec3::Z);
        assert_eq!(p.d(), 0.0);
        assert_eq!(p.flipped().normal(), -DVec3::Z);
    }

    #[test]
    fn projection() {
        // Plane z = 2; (5, -1, 7) projects to (5, -1, 2).
        assert_eq!(
            plane_z(2.0).project_point(DVec3::new(5.0, -1.0, 7.0)),
            DVec3::new(5.0, -1.0, 2.0)
        );
    }

    #[test]
    fn classify_front_behind_intersecting() {
        let p = plane_z(1.0);
        // centre z = 4: s = 4 − 1 = 3 > r = 2 → front.
        let c = classify_sphere_plane(DVec3::new(0.0, 0.0, 4.0), 2.0, &p);
        assert_eq!(c.side, PlaneSide::Front);
        assert_eq!(c.signed_distance, 3.0);
        // centre z = −2: s = −3 < −2 → behind.
        let c = classify_sphere_plane(DVec3::new(9.0, 9.0, -2.0), 2.0, &p);
        assert_eq!(c.side, PlaneSide::Behind);
        assert_eq!(c.signed_distance, -3.0);
        // centre z = 0.5: s = −0.5, |s| ≤ 2 → intersecting.
        let c = classify_sphere_plane(DVec3::new(0.0, 0.0, 0.5), 2.0, &p);
        assert_eq!(c.side, PlaneSide::Intersecting);
        assert_eq!(c.signed_distance, -0.5);
    }

    #[test]
    fn classify_tangent_is_intersecting() {
        let p = plane_z(0.0);
        // s = 2 = r (front tangent) and s = −2 = −r (back tangent).
        assert_eq!(
            classify_sphere_plane(DVec3::new(0.0, 0.0, 2.0), 2.0, &p).side,
            PlaneSide::Intersecting
        );
        assert_eq!(
            classify_sphere_plane(DVec3::new(0.0, 0.0, -2.0), 2.0, &p).side,
            PlaneSide::Intersecting
        );
    }

    #[test]
    fn classify_degenerate_radius() {
        let p = plane_z(0.0);
        // Zero radius: a point; on the plane → intersecting, above → front.
        assert_eq!(
            classify_sphere_plane(DVec3::ZERO, 0.0, &p).side,
            PlaneSide::Intersecting
        );
        assert_eq!(
            classify_sphere_plane(DVec3::Z, -5.0, &p).side,
            PlaneSide::Front
        );
        assert_eq!(
            classify_sphere_plane(-DVec3::Z, f64::NAN, &p).side,
            PlaneSide::Behind
        );
    }
}
