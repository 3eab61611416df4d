//! Cylinders (infinite and capped) and ray–cylinder intersection.
//!
//! Both cylinders are closed solids. For a ray starting inside the solid the
//! entry point is the origin itself (`t = 0`) and the reported normal is the
//! outward normal of the nearest boundary feature.

use glam::DVec3;

use super::ray::RayHit;
use super::sanitize_radius;

/// An infinite solid cylinder: all points within `radius` of the axis line
/// `point + s · axis`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cylinder {
    point: DVec3,
    axis: DVec3,
    radius: f64,
}

impl Cylinder {
    /// A cylinder around the line through `point` along `axis` (normalised).
    /// Returns `None` for a zero or non-finite axis or a non-finite point. A
    /// negative or NaN radius is treated as `0` (the cylinder is its axis line).
    pub fn new(point: DVec3, axis: DVec3, radius: f64) -> Option<Self> {
        let axis = axis.try_normalize()?;
        point.is_finite().then_some(Self {
            point,
            axis,
            radius: sanitize_radius(radius),
        })
    }

    /// A vertical cylinder (axis `+z`) around `point`; the caller guarantees a
    /// finite point and a radius `>= 0`.
    pub(crate) const fn vertical(point: DVec3, radius: f64) -> Self {
        Self {
            point,
            axis: DVec3::Z,
            radius,
        }
    }

    /// A point on the axis.
    pub fn point(&self) -> DVec3 {
        self.point
    }

    /// The unit axis direction.
    pub fn axis(&self) -> DVec3 {
        self.axis
    }

    /// The radius (`>= 0`).
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Component of `v` perpendicular to the axis: `v − (v·u) u`.
    pub fn perpendicular(&self, v: DVec3) -> DVec3 {
        v - v.dot(self.axis) * self.axis
    }

    /// Distance of `p` from the axis line.
    pub fn distance_to_axis(&self, p: DVec3) -> f64 {
        self.perpendicular(p - self.point).length()
    }

    /// Unit outward radial direction at `p`; for a point on the axis, an
    /// arbitrary unit vector perpendicular to the axis.
    pub fn radial_direction(&self, p: DVec3) -> DVec3 {
        self.perpendicular(p - self.point)
            .try_normalize()
            .unwrap_or_else(|| self.axis.any_orthonormal_vector())
    }
}

/// A capped solid cylinder: the points within `radius` of the segment `a → b`
/// whose projection onto the axis falls inside the segment (flat caps at `a` and
/// `b`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CappedCylinder {
    a: DVec3,
    b: DVec3,
    radius: f64,
}

impl CappedCylinder {
    /// The cylinder between the cap centres `a` and `b`. Returns `None` when
    /// `a == b` (no axis) or a point is not finite. A negative or NaN radius is
    /// treated as `0`.
    pub fn new(a: DVec3, b: DVec3, radius: f64) -> Option<Self> {
        (a.is_finite() && b.is_finite() && a != b).then_some(Self {
            a,
            b,
            radius: sanitize_radius(radius),
        })
    }

    /// Centre of the bottom cap.
    pub fn a(&self) -> DVec3 {
        self.a
    }

    /// Centre of the top cap.
    pub fn b(&self) -> DVec3 {
        self.b
    }

    /// The radius (`>= 0`).
    pub fn radius(&self) -> f64 {
        self.radius
    }
}

/// First entry of the ray `origin + t · direction` (`t ≥ 0`) into the closed
/// infinite cylinder.
///
/// With `u` the axis, `m⊥`, `d⊥` the parts of `origin − point` and `direction`
/// perpendicular to `u`, solve `|m⊥ + t d⊥|² = r²`:
/// `a = d⊥·d⊥`, `b = m⊥·d⊥`, `c = m⊥·m⊥ − r²`, `t = (−b − √(b² − a c)) / a`.
/// The normal is the radial direction `(m⊥ + t d⊥) / r`.
///
/// - origin inside (`c ≤ 0`): `t = 0`, the normal is the outward radial direction
///   at the origin (any perpendicular unit vector if the origin is on the axis);
/// - ray parallel to the axis (`a = 0`, a zero direction included) and outside:
///   `None`;
/// - cylinder behind the ray: `None`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{intersection_ray_cylinder, Cylinder};
/// let pillar = Cylinder::new(DVec3::ZERO, DVec3::Z, 1.0).unwrap();
/// let hit = intersection_ray_cylinder(DVec3::new(-5.0, 0.0, 2.0), DVec3::X, &pillar).unwrap();
/// assert_eq!(hit.t, 4.0);
/// assert_eq!(hit.point, DVec3::new(-1.0, 0.0, 2.0));
/// assert_eq!(hit.normal, -DVec3::X);
/// ```
pub fn intersection_ray_cylinder(
    origin: DVec3,
    direction: DVec3,
    cylinder: &Cylinder,
) -> Option<RayHit> {
    let r = cylinder.radius;
    let m = cylinder.perpendicular(origin - cylinder.point);
    let d = cylinder.perpendicular(direction);
    let a = d.length_squared();
    let b = m.dot(d);
    let c = m.length_squared() - r * r;
    if c <= 0.0 {
        return Some(RayHit {
            t: 0.0,
            point: origin,
            normal: cylinder.radial_direction(origin),
        });
    }
    let crosses_axis_direction = a > 0.0;
    if !crosses_axis_direction || b >= 0.0 {
        // Parallel to the axis, or moving away from it while outside.
        return None;
    }
    let disc = b * b - a * c;
    let reaches = disc >= 0.0;
    if !reaches {
        return None;
    }
    // b < 0, so −b + √Δ > 0: t = c / (−b + √Δ) is the smaller root without cancellation.
    let t = c / (-b + disc.sqrt());
    let point = origin + t * direction;
    Some(RayHit {
        t,
        point,
        normal: cylinder.radial_direction(point),
    })
}

/// First entry of the ray `origin + t · direction` (`t ≥ 0`) into the closed
/// capped cylinder.
///
/// Slab method: the ray is inside the solid for `t` in the intersection of the
/// lateral interval (roots of `|m⊥ + t d⊥|² = r²`, or all `t` if parallel and
/// within the radius) and the cap slab `0 ≤ (x(t) − a)·u ≤ h`, `h = |b − a|`. The
/// entry is the largest lower bound (with `0`); the normal is radial if the
/// lateral surface bounds it, `−u` for the cap at `a`, `+u` for the cap at `b`.
///
/// - origin inside: `t = 0`, normal of the nearest feature (lateral surface or
///   one of the caps, the lateral one on ties);
/// - ray along the axis: it enters through a cap (normal `∓u`);
/// - zero direction outside, parallel and outside, or solid behind: `None`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{intersection_ray_capped_cylinder, CappedCylinder};
/// let can = CappedCylinder::new(DVec3::ZERO, DVec3::new(0.0, 0.0, 2.0), 1.0).unwrap();
/// // Straight down the axis onto the top cap.
/// let hit = intersection_ray_capped_cylinder(DVec3::new(0.0, 0.0, 5.0), -DVec3::Z, &can).unwrap();
/// assert_eq!((hit.t, hit.point, hit.normal), (3.0, DVec3::new(0.0, 0.0, 2.0), DVec3::Z));
/// ```
pub fn intersection_ray_capped_cylinder(
    origin: DVec3,
    direction: DVec3,
    cylinder: &CappedCylinder,
) -> Option<RayHit> {
    let axis = cylinder.b - cylinder.a;
    let h = axis.length();
    let u = axis / h;
    let r = cylinder.radius;
    let rel = origin - cylinder.a;
    let s0 = rel.dot(u);
    let ds = direction.dot(u);
    let m = rel - s0 * u;
    let d = direction - ds * u;

    // Origin inside: report the nearest feature.
    let c = m.length_squared() - r * r;
    if c <= 0.0 && (0.0..=h).contains(&s0) {
        let radial = r - m.length();
        let (bottom, top) = (s0, h - s0);
        let normal = if radial <= bottom && radial <= top {
            m.try_normalize()
                .unwrap_or_else(|| u.any_orthonormal_vector())
        } else if bottom <= top {
            -u
        } else {
            u
        };
        return Some(RayHit {
            t: 0.0,
            point: origin,
            normal,
        });
    }

    // Lateral interval [t_lo, t_hi] and the feature bounding its start.
    let a = d.length_squared();
    let b = m.dot(d);
    let (lat_lo, lat_hi) = if a > 0.0 {
        let disc = b * b - a * c;
        let reaches = disc >= 0.0;
        if !reaches {
            return None;
        }
        let sq = disc.sqrt();
        ((-b - sq) / a, (-b + sq) / a)
    } else if c <= 0.0 {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        return None;
    };

    // Cap slab interval.
    let (slab_lo, slab_hi, cap_normal) = if ds != 0.0 {
        let t_a = (0.0 - s0) / ds;
        let t_b = (h - s0) / ds;
        if ds > 0.0 {
            (t_a, t_b, -u)
        } else {
            (t_b, t_a, u)
        }
    } else if (0.0..=h).contains(&s0) {
        (f64::NEG_INFINITY, f64::INFINITY, u)
    } else {
        return None;
    };

    let (t_enter, normal_from_cap) = if slab_lo > lat_lo {
        (slab_lo, true)
    } else {
        (lat_lo, false)
    };
    let t_exit = lat_hi.min(slab_hi);
    let overlapping = t_enter <= t_exit;
    if !overlapping || t_exit < 0.0 {
        return None;
    }
    // t_enter < 0 would mean the origin is inside, handled above; guard anyway.
    let t = t_enter.max(0.0);
    let point = origin + t * direction;
    let normal = if normal_from_cap {
        cap_normal
    } else {
        (m + t * d)
            .try_normalize()
            .unwrap_or_else(|| u.any_orthonormal_vector())
    };
    Some(RayHit { t, point, normal })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: DVec3, b: DVec3) -> bool {
        (a - b).length() < 1e-12
    }

    #[test]
    fn constructors_reject_degenerate_axes() {
        assert!(Cylinder::new(DVec3::ZERO, DVec3::ZERO, 1.0).is_none());
        assert!(Cylinder::new(DVec3::NAN, DVec3::Z, 1.0).is_none());
        assert!(CappedCylinder::new(DVec3::ONE, DVec3::ONE, 1.0).is_none());
        assert_eq!(
            Cylinder::new(DVec3::ZERO, DVec3::Z, -2.0).unwrap().radius(),
            0.0
        );
    }

    #[test]
    fn cylinder_helpers() {
        // Axis along (0, 0, 2) through (1, 0, 0): normalised to z.
        let c = Cylinder::new(DVec3::X, DVec3::new(0.0, 0.0, 2.0), 0.5).unwrap();
        assert_eq!(c.axis(), DVec3::Z);
        // p = (4, 4, 9): offset (3, 4, 9), perpendicular (3, 4, 0), distance 5.
        let p = DVec3::new(4.0, 4.0, 9.0);
        assert_eq!(c.perpendicular(p - c.point()), DVec3::new(3.0, 4.0, 0.0));
        assert_eq!(c.distance_to_axis(p), 5.0);
        assert!(close(c.radial_direction(p), DVec3::new(0.6, 0.8, 0.0)));
        // On the axis: some unit vector perpendicular to z.
        let d = c.radial_direction(DVec3::new(1.0, 0.0, -3.0));
        assert!((d.length() - 1.0).abs() < 1e-15 && d.z == 0.0);
    }

    #[test]
    fn infinite_oblique_hit() {
        // Axis z through (1, 1, 0), r = 2. Ray from (1, −5, 0) along (0, 3, 4)/… unnormalised:
        // y(t) = −5 + 3t, radial distance |y − 1| = |−6 + 3t| = 2 → t = 4/3 (first root).
        let cyl = Cylinder::new(DVec3::new(1.0, 1.0, 0.0), DVec3::Z, 2.0).unwrap();
        let hit =
            intersection_ray_cylinder(DVec3::new(1.0, -5.0, 0.0), DVec3::new(0.0, 3.0, 4.0), &cyl)
                .unwrap();
        assert!((hit.t - 4.0 / 3.0).abs() < 1e-12);
        // point = (1, −5 + 4, 16/3) = (1, −1, 5.333…), normal −y.
        assert!(close(hit.point, DVec3::new(1.0, -1.0, 16.0 / 3.0)));
        assert!(close(hit.normal, -DVec3::Y));
    }

    #[test]
    fn infinite_tangent_miss_behind() {
        let cyl = Cylinder::new(DVec3::ZERO, DVec3::Z, 1.0).unwrap();
        // Tangent: line y = 1 along x touches at (0, 1, 0), t = 3.
        let hit = intersection_ray_cylinder(DVec3::new(-3.0, 1.0, 0.0), DVec3::X, &cyl).unwrap();
        assert_eq!(hit.t, 3.0);
        assert!(close(hit.normal, DVec3::Y));
        // Miss: y = 1.01.
        assert!(intersection_ray_cylinder(DVec3::new(-3.0, 1.01, 0.0), DVec3::X, &cyl).is_none());
        // Behind: pointing away.
        assert!(intersection_ray_cylinder(DVec3::new(-3.0, 0.0, 0.0), -DVec3::X, &cyl).is_none());
    }

    #[test]
    fn infinite_ray_along_axis() {
        let cyl = Cylinder::new(DVec3::ZERO, DVec3::Z, 1.0).unwrap();
        // On the axis: inside from the start; normal is some unit vector ⟂ z.
        let hit = intersection_ray_cylinder(DVec3::new(0.0, 0.0, -5.0), DVec3::Z, &cyl).unwrap();
        assert_eq!((hit.t, hit.point), (0.0, DVec3::new(0.0, 0.0, -5.0)));
        assert!((hit.normal.length() - 1.0).abs() < 1e-12 && hit.normal.z.abs() < 1e-12);
        // Parallel outside: never enters.
        assert!(intersection_ray_cylinder(DVec3::new(2.0, 0.0, 0.0), DVec3::Z, &cyl).is_none());
        // Zero direction outside / inside.
        assert!(intersection_ray_cylinder(DVec3::new(2.0, 0.0, 0.0), DVec3::ZERO, &cyl).is_none());
        let hit = intersection_ray_cylinder(DVec3::new(0.5, 0.0, 0.0), DVec3::ZERO, &cyl).unwrap();
        assert_eq!((hit.t, hit.normal), (0.0, DVec3::X));
    }

    fn can() -> CappedCylinder {
        // Axis from (0,0,0) to (0,0,2), r = 1.
        CappedCylinder::new(DVec3::ZERO, DVec3::new(0.0, 0.0, 2.0), 1.0).unwrap()
    }

    #[test]
    fn capped_lateral_and_cap_entries() {
        // Lateral: from (−4, 0, 1) along x → t = 3 at (−1, 0, 1), normal −x.
        let hit =
            intersection_ray_capped_cylinder(DVec3::new(-4.0, 0.0, 1.0), DVec3::X, &can()).unwrap();
        assert_eq!(
            (hit.t, hit.point, hit.normal),
            (3.0, DVec3::new(-1.0, 0.0, 1.0), -DVec3::X)
        );
        // Same line above the top (z = 2.5): misses.
        assert!(
            intersection_ray_capped_cylinder(DVec3::new(-4.0, 0.0, 2.5), DVec3::X, &can())
                .is_none()
        );
        // Oblique through the top cap: from (0.5, 0, 4) along (0, 0, −1) + (0, 0.25, 0)…
        // dir = (0, 0.25, −1): z = 4 − t reaches 2 at t = 2, y = 0.5 → radial √(0.25+0.25) < 1.
        let hit = intersection_ray_capped_cylinder(
            DVec3::new(0.5, 0.0, 4.0),
            DVec3::new(0.0, 0.25, -1.0),
            &can(),
        )
        .unwrap();
        assert_eq!(hit.t, 2.0);
        assert!(close(hit.point, DVec3::new(0.5, 0.5, 2.0)));
        assert_eq!(hit.normal, DVec3::Z);
    }

    #[test]
    fn capped_ray_along_axis() {
        // Up the axis from below: enters the bottom cap at t = 5 with normal −z.
        let hit =
            intersection_ray_capped_cylinder(DVec3::new(0.0, 0.0, -5.0), DVec3::Z, &can()).unwrap();
        assert_eq!(
            (hit.t, hit.point, hit.normal),
            (5.0, DVec3::ZERO, -DVec3::Z)
        );
        // Parallel to the axis outside the radius: no hit.
        assert!(
            intersection_ray_capped_cylinder(DVec3::new(2.0, 0.0, -5.0), DVec3::Z, &can())
                .is_none()
        );
        // Parallel to the axis, on the lateral surface (closed): enters at the rim, t = 5.
        let hit =
            intersection_ray_capped_cylinder(DVec3::new(1.0, 0.0, -5.0), DVec3::Z, &can()).unwrap();
        assert_eq!((hit.t, hit.point, hit.normal), (5.0, DVec3::X, -DVec3::Z));
        // Along the axis but pointing away.
        assert!(
            intersection_ray_capped_cylinder(DVec3::new(0.0, 0.0, -5.0), -DVec3::Z, &can())
                .is_none()
        );
    }

    #[test]
    fn capped_origin_inside() {
        // (0.9, 0, 1): radial depth 0.1 < cap depths 1 → normal +x.
        let hit =
            intersection_ray_capped_cylinder(DVec3::new(0.9, 0.0, 1.0), DVec3::Y, &can()).unwrap();
        assert_eq!((hit.t, hit.normal), (0.0, DVec3::X));
        // (0, 0, 1.8): top depth 0.2 < radial 1 and bottom 1.8 → normal +z.
        let hit =
            intersection_ray_capped_cylinder(DVec3::new(0.0, 0.0, 1.8), DVec3::Y, &can()).unwrap();
        assert_eq!((hit.t, hit.normal), (0.0, DVec3::Z));
        // Zero direction outside: None.
        assert!(
            intersection_ray_capped_cylinder(DVec3::new(0.0, 0.0, 3.0), DVec3::ZERO, &can())
                .is_none()
        );
    }

    #[test]
    fn capped_grazing_rim() {
        // Ray along x at z = 2 (top plane), y = 0: the slab is a single plane, entry at the
        // lateral surface x = −1, t = 3 (lateral bound dominates: slab is all t).
        let hit =
            intersection_ray_capped_cylinder(DVec3::new(-4.0, 0.0, 2.0), DVec3::X, &can()).unwrap();
        assert_eq!(
            (hit.t, hit.point, hit.normal),
            (3.0, DVec3::new(-1.0, 0.0, 2.0), -DVec3::X)
        );
    }
}
