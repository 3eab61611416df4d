//! Time of impact of a sphere moving with constant velocity against a plane, an
//! infinite cylinder and another moving sphere.
//!
//! Each function solves the contact equation exactly (linear or quadratic in
//! `t`), no sub-stepping. Conventions shared by all of them:
//!
//! - motion is `c(t) = c + t v` for `t ∈ [0, max_time]` (closed interval; a contact
//!   exactly at `max_time` is reported; a negative or NaN `max_time` reports
//!   nothing);
//! - a contact is reported only while the shapes are **approaching** (the gap is
//!   shrinking). Shapes already touching or overlapping at `t = 0` and
//!   approaching give a contact at `t = 0`; touching or overlapping shapes that
//!   separate or slide tangentially give `None`. This is what a simulation needs:
//!   after a response turns the velocity around, the same contact is not found
//!   again;
//! - the contact normal is unit length and points from the obstacle towards the
//!   moving sphere (for two spheres: from the second towards the first).

use glam::DVec3;

use super::cylinder::Cylinder;
use super::plane::Plane;
use super::sanitize_radius;

/// A sphere moving with constant velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MovingSphere {
    /// Centre at `t = 0`.
    pub center: DVec3,
    /// Radius (negative and NaN radii are treated as `0`).
    pub radius: f64,
    /// Constant velocity.
    pub velocity: DVec3,
}

impl MovingSphere {
    /// A moving sphere.
    pub fn new(center: DVec3, radius: f64, velocity: DVec3) -> Self {
        Self {
            center,
            radius,
            velocity,
        }
    }

    /// Centre at time `t`: `c + t v`.
    pub fn center_at(&self, t: f64) -> DVec3 {
        self.center + t * self.velocity
    }
}

/// The first contact of a moving shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Time of first contact, in `[0, max_time]`.
    pub time: f64,
    /// Contact point on the obstacle's surface at that time.
    pub point: DVec3,
    /// Unit normal from the obstacle towards the moving sphere.
    pub normal: DVec3,
}

/// Does `t` lie in the closed step `[0, max_time]`?
fn within_step(t: f64, max_time: f64) -> bool {
    t >= 0.0 && t <= max_time
}

/// First time the moving sphere touches the plane, approaching it.
///
/// The sphere is on the side of its centre at `t = 0` (`σ = sign(n·c + d)`; a
/// centre exactly on the plane takes the side it comes from, `σ = −sign(n·v)`).
/// With the gap `g(t) = σ (n·c + d) − r + σ (n·v) t`, the contact time solves
/// `g(t) = 0`: `t = (σ s₀ − r) / (−σ n·v)`, requiring `σ n·v < 0` (approaching).
/// Normal `σ n`; point = the projection of the centre at contact time onto the plane.
///
/// Parallel motion (`n·v = 0`) never makes contact, even when touching.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{time_of_impact_sphere_plane, MovingSphere, Plane};
/// let floor = Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap();
/// // Radius 1 at height 5 falling at 2 per second: contact when the centre is at 1, t = 2.
/// let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 5.0), 1.0, DVec3::new(1.0, 0.0, -2.0));
/// let c = time_of_impact_sphere_plane(&ball, &floor, 10.0).unwrap();
/// assert_eq!((c.time, c.point, c.normal), (2.0, DVec3::new(2.0, 0.0, 0.0), DVec3::Z));
/// ```
pub fn time_of_impact_sphere_plane(
    sphere: &MovingSphere,
    plane: &Plane,
    max_time: f64,
) -> Option<Contact> {
    let r = sanitize_radius(sphere.radius);
    let n = plane.normal();
    let s0 = plane.signed_distance(sphere.center);
    let vn = n.dot(sphere.velocity);
    let sigma = if s0 > 0.0 || (s0 == 0.0 && vn <= 0.0) {
        1.0
    } else {
        -1.0
    };
    let approach = sigma * vn;
    let approaching = approach < 0.0;
    if !approaching {
        return None;
    }
    let gap = sigma * s0 - r;
    let time = if gap <= 0.0 { 0.0 } else { gap / -approach };
    if !within_step(time, max_time) {
        return None;
    }
    let center = sphere.center_at(time);
    Some(Contact {
        time,
        point: plane.project_point(center),
        normal: sigma * n,
    })
}

/// Solves the "two points at distance `reach` approaching" problem shared by
/// sphere–sphere (3-D) and sphere–cylinder (perpendicular plane):
/// the first `t ∈ [0, max_time]` with `|m + t w| = reach` while `|m + t w|`
/// decreases.
///
/// `a = w·w`, `b = m·w`, `c = m·m − reach²`. Approaching requires `b < 0`. If
/// `c ≤ 0` the contact is at `t = 0`; otherwise the smaller root
/// `t = c / (−b + √(b² − a c))` (no cancellation since `−b > 0`), `None` when
/// `b² < a c` (passing by).
fn first_approach_time(m: DVec3, w: DVec3, reach: f64, max_time: f64) -> Option<f64> {
    let b = m.dot(w);
    let approaching = b < 0.0;
    if !approaching {
        return None;
    }
    let a = w.length_squared();
    let c = m.length_squared() - reach * reach;
    let time = if c <= 0.0 {
        0.0
    } else {
        let disc = b * b - a * c;
        let reaches = disc >= 0.0;
        if !reaches {
            return None;
        }
        c / (-b + disc.sqrt())
    };
    within_step(time, max_time).then_some(time)
}

/// First time two moving spheres touch, approaching each other.
///
/// In relative coordinates `m = c₁ − c₂`, `w = v₁ − v₂`, contact happens when
/// `|m + t w| = r₁ + r₂`: `a t² + 2 b t + c = 0` with `a = w·w`, `b = m·w`,
/// `c = |m|² − (r₁ + r₂)²`, first root `t = c / (−b + √(b² − a c))`.
/// Approaching means `b < 0`. Spheres touching or overlapping at `t = 0` and
/// approaching give `t = 0`.
///
/// Normal: from the second sphere's centre towards the first's at contact time
/// (for two zero-radius spheres meeting at one point, `−w / |w|`); point: on the
/// second sphere's surface, `c₂(t) + r₂ n`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{time_of_impact_sphere_sphere, MovingSphere};
/// // Head-on: gap 10 − 2 = 8 closed at relative speed 4 → t = 2.
/// let a = MovingSphere::new(DVec3::ZERO, 1.0, DVec3::new(3.0, 0.0, 0.0));
/// let b = MovingSphere::new(DVec3::new(10.0, 0.0, 0.0), 1.0, DVec3::new(-1.0, 0.0, 0.0));
/// let c = time_of_impact_sphere_sphere(&a, &b, 5.0).unwrap();
/// assert_eq!((c.time, c.point, c.normal), (2.0, DVec3::new(7.0, 0.0, 0.0), -DVec3::X));
/// ```
pub fn time_of_impact_sphere_sphere(
    first: &MovingSphere,
    second: &MovingSphere,
    max_time: f64,
) -> Option<Contact> {
    let r1 = sanitize_radius(first.radius);
    let r2 = sanitize_radius(second.radius);
    let m = first.center - second.center;
    let w = first.velocity - second.velocity;
    let time = first_approach_time(m, w, r1 + r2, max_time)?;
    let c1 = first.center_at(time);
    let c2 = second.center_at(time);
    let normal = (c1 - c2)
        .try_normalize()
        .or_else(|| (-w).try_normalize())
        .unwrap_or(DVec3::Z);
    Some(Contact {
        time,
        point: c2 + r2 * normal,
        normal,
    })
}

/// First time a moving sphere touches an infinite solid cylinder from outside,
/// approaching it.
///
/// Only the motion perpendicular to the axis matters: with `m⊥`, `v⊥` the parts of
/// `c − point` and `v` perpendicular to the axis, contact happens when
/// `|m⊥ + t v⊥| = R + r` (`R` the cylinder radius), solved as in
/// [`time_of_impact_sphere_sphere`]. Motion parallel to the axis never makes
/// contact. A sphere already overlapping the cylinder and moving towards the axis
/// gets `t = 0`.
///
/// Normal: the radial direction of the centre at contact time; point: on the
/// cylinder surface, `axis point + R n`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{time_of_impact_sphere_cylinder, Cylinder, MovingSphere};
/// let pillar = Cylinder::new(DVec3::ZERO, DVec3::Z, 1.0).unwrap();
/// // Radius 0.5 at x = 5 moving at −x 1.75: contact when x = 1.5, t = 2.
/// let ball = MovingSphere::new(DVec3::new(5.0, 0.0, 3.0), 0.5, DVec3::new(-1.75, 0.0, 0.0));
/// let c = time_of_impact_sphere_cylinder(&ball, &pillar, 2.0).unwrap();
/// assert_eq!((c.time, c.point, c.normal), (2.0, DVec3::new(1.0, 0.0, 3.0), DVec3::X));
/// ```
pub fn time_of_impact_sphere_cylinder(
    sphere: &MovingSphere,
    cylinder: &Cylinder,
    max_time: f64,
) -> Option<Contact> {
    let r = sanitize_radius(sphere.radius);
    let m = cylinder.perpendicular(sphere.center - cylinder.point());
    let w = cylinder.perpendicular(sphere.velocity);
    let time = first_approach_time(m, w, cylinder.radius() + r, max_time)?;
    let center = sphere.center_at(time);
    let radial = m + time * w;
    let normal = radial
        .try_normalize()
        .or_else(|| (-w).try_normalize())
        .unwrap_or_else(|| cylinder.axis().any_orthonormal_vector());
    let axis_point = center - radial;
    Some(Contact {
        time,
        point: axis_point + cylinder.radius() * normal,
        normal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: DVec3, b: DVec3) -> bool {
        (a - b).length() < 1e-12
    }

    fn floor() -> Plane {
        Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap()
    }

    #[test]
    fn plane_from_front() {
        // s₀ = 4, r = 1, n·v = −3: t = (4 − 1)/3 = 1; centre (1·2, 0, 1) → point (2, 0, 0).
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 4.0), 1.0, DVec3::new(2.0, 0.0, -3.0));
        let c = time_of_impact_sphere_plane(&ball, &floor(), 1.0).unwrap();
        assert_eq!(c.time, 1.0);
        assert_eq!(c.point, DVec3::new(2.0, 0.0, 0.0));
        assert_eq!(c.normal, DVec3::Z);
        // The same contact just outside a shorter step.
        assert!(time_of_impact_sphere_plane(&ball, &floor(), 0.999).is_none());
    }

    #[test]
    fn plane_from_behind() {
        // s₀ = −6, σ = −1, r = 2, n·v = 1: gap = 6 − 2 = 4, t = 4; normal −z.
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, -6.0), 2.0, DVec3::Z);
        let c = time_of_impact_sphere_plane(&ball, &floor(), 10.0).unwrap();
        assert_eq!((c.time, c.normal), (4.0, -DVec3::Z));
        assert_eq!(c.point, DVec3::ZERO);
    }

    #[test]
    fn plane_receding_parallel_and_resting() {
        // Moving away.
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 4.0), 1.0, DVec3::Z);
        assert!(time_of_impact_sphere_plane(&ball, &floor(), 10.0).is_none());
        // Parallel motion above the plane.
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 4.0), 1.0, DVec3::X);
        assert!(time_of_impact_sphere_plane(&ball, &floor(), 10.0).is_none());
        // Resting contact: touching (s₀ = r) and sliding: no contact reported.
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 1.0), 1.0, DVec3::X);
        assert!(time_of_impact_sphere_plane(&ball, &floor(), 10.0).is_none());
        // Resting and at rest.
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 1.0), 1.0, DVec3::ZERO);
        assert!(time_of_impact_sphere_plane(&ball, &floor(), 10.0).is_none());
    }

    #[test]
    fn plane_touching_at_start() {
        // Tangent at t = 0 and pressing in: contact at t = 0, point under the centre.
        let ball = MovingSphere::new(DVec3::new(3.0, 0.0, 1.0), 1.0, DVec3::new(0.0, 0.0, -1.0));
        let c = time_of_impact_sphere_plane(&ball, &floor(), 0.5).unwrap();
        assert_eq!(
            (c.time, c.point, c.normal),
            (0.0, DVec3::new(3.0, 0.0, 0.0), DVec3::Z)
        );
        // Slightly penetrating and approaching: still t = 0.
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 0.9), 1.0, DVec3::new(0.0, 0.0, -1.0));
        assert_eq!(
            time_of_impact_sphere_plane(&ball, &floor(), 0.5)
                .unwrap()
                .time,
            0.0
        );
        // Centre on the plane moving up: it came from below → σ = −1, normal −z, t = 0.
        let ball = MovingSphere::new(DVec3::ZERO, 1.0, DVec3::Z);
        let c = time_of_impact_sphere_plane(&ball, &floor(), 0.5).unwrap();
        assert_eq!((c.time, c.normal), (0.0, -DVec3::Z));
    }

    #[test]
    fn plane_degenerate_step() {
        let ball = MovingSphere::new(DVec3::new(0.0, 0.0, 1.0), 1.0, -DVec3::Z);
        assert!(time_of_impact_sphere_plane(&ball, &floor(), -1.0).is_none());
        assert!(time_of_impact_sphere_plane(&ball, &floor(), f64::NAN).is_none());
        // Zero-length step with contact at t = 0.
        assert_eq!(
            time_of_impact_sphere_plane(&ball, &floor(), 0.0)
                .unwrap()
                .time,
            0.0
        );
        // Zero radius: a point hits the plane itself: s₀ = 1, speed 1 → t = 1.
        let p = MovingSphere::new(DVec3::new(0.0, 0.0, 1.0), 0.0, -DVec3::Z);
        assert_eq!(
            time_of_impact_sphere_plane(&p, &floor(), 2.0).unwrap().time,
            1.0
        );
    }

    #[test]
    fn sphere_sphere_oblique() {
        // First at (0,0,0) r 1 moving (4, 0, 0); second at (10, 1.2, 0) r 1 at rest.
        // m = (−10, −1.2, 0), w = (4, 0, 0): |m + t w|² = (4t − 10)² + 1.44 = 4
        // → (4t − 10)² = 2.56 → 4t − 10 = −1.6 → t = 2.1.
        let a = MovingSphere::new(DVec3::ZERO, 1.0, DVec3::new(4.0, 0.0, 0.0));
        let b = MovingSphere::new(DVec3::new(10.0, 1.2, 0.0), 1.0, DVec3::ZERO);
        let c = time_of_impact_sphere_sphere(&a, &b, 3.0).unwrap();
        assert!((c.time - 2.1).abs() < 1e-12);
        // c₁ = (8.4, 0, 0), c₁ − c₂ = (−1.6, −1.2, 0), length 2 → n = (−0.8, −0.6, 0).
        assert!(close(c.normal, DVec3::new(-0.8, -0.6, 0.0)));
        // point = c₂ + 1·n = (9.2, 0.6, 0).
        assert!(close(c.point, DVec3::new(9.2, 0.6, 0.0)));
    }

    #[test]
    fn sphere_sphere_miss_and_receding() {
        // Passing by: offset 2.5 in y > r₁ + r₂ = 2.
        let a = MovingSphere::new(DVec3::ZERO, 1.0, DVec3::X);
        let b = MovingSphere::new(DVec3::new(10.0, 2.5, 0.0), 1.0, DVec3::ZERO);
        assert!(time_of_impact_sphere_sphere(&a, &b, 100.0).is_none());
        // Grazing: offset exactly 2 → tangent contact at x = 10, t = 10.
        let b = MovingSphere::new(DVec3::new(10.0, 2.0, 0.0), 1.0, DVec3::ZERO);
        let c = time_of_impact_sphere_sphere(&a, &b, 100.0).unwrap();
        assert_eq!(c.time, 10.0);
        assert!(close(c.normal, -DVec3::Y));
        // Receding.
        let b = MovingSphere::new(DVec3::new(-5.0, 0.0, 0.0), 1.0, DVec3::ZERO);
        assert!(time_of_impact_sphere_sphere(&a, &b, 100.0).is_none());
        // Same velocity: never meet.
        let b = MovingSphere::new(DVec3::new(5.0, 0.0, 0.0), 1.0, DVec3::X);
        assert!(time_of_impact_sphere_sphere(&a, &b, 100.0).is_none());
    }

    #[test]
    fn sphere_sphere_touching_at_t0() {
        // Touching (distance 2 = 1 + 1) and approaching: t = 0, normal −x, point (1, 0, 0).
        let a = MovingSphere::new(DVec3::ZERO, 1.0, DVec3::X);
        let b = MovingSphere::new(DVec3::new(2.0, 0.0, 0.0), 1.0, -DVec3::X);
        let c = time_of_impact_sphere_sphere(&a, &b, 1.0).unwrap();
        assert_eq!((c.time, c.normal, c.point), (0.0, -DVec3::X, DVec3::X));
        // Touching and separating: no contact.
        let a = MovingSphere::new(DVec3::ZERO, 1.0, -DVec3::X);
        assert!(time_of_impact_sphere_sphere(&a, &b, 1.0).is_none());
        // Touching and sliding tangentially (m·w = 0): no contact.
        let a = MovingSphere::new(DVec3::ZERO, 1.0, DVec3::Y);
        let b = MovingSphere::new(DVec3::new(2.0, 0.0, 0.0), 1.0, DVec3::ZERO);
        assert!(time_of_impact_sphere_sphere(&a, &b, 1.0).is_none());
    }

    #[test]
    fn sphere_sphere_zero_radii() {
        // Two points on a collision course meet at t = 1 (x = 1); normal −w/|w| = −x.
        let a = MovingSphere::new(DVec3::ZERO, 0.0, DVec3::X);
        let b = MovingSphere::new(DVec3::new(2.0, 0.0, 0.0), -1.0, -DVec3::X);
        let c = time_of_impact_sphere_sphere(&a, &b, 5.0).unwrap();
        assert_eq!((c.time, c.normal, c.point), (1.0, -DVec3::X, DVec3::X));
    }

    #[test]
    fn cylinder_contact() {
        // Axis z through (0, 0); R = 1, r = 0.5; from (3, 4, 7) towards the axis with
        // v = (−0.6, −0.8, 5): the distance to the axis is 5 − t → 1.5 at t = 3.5.
        let pillar = Cylinder::new(DVec3::ZERO, DVec3::Z, 1.0).unwrap();
        let ball = MovingSphere::new(DVec3::new(3.0, 4.0, 7.0), 0.5, DVec3::new(-0.6, -0.8, 5.0));
        let c = time_of_impact_sphere_cylinder(&ball, &pillar, 4.0).unwrap();
        assert!((c.time - 3.5).abs() < 1e-12);
        assert!(close(c.normal, DVec3::new(0.6, 0.8, 0.0)));
        // Centre at contact: (3 − 2.1, 4 − 2.8, 24.5) = (0.9, 1.2, 24.5); point (0.6, 0.8, 24.5).
        assert!(close(c.point, DVec3::new(0.6, 0.8, 24.5)));
    }

    #[test]
    fn cylinder_parallel_touching_and_miss() {
        let pillar = Cylinder::new(DVec3::ZERO, DVec3::Z, 1.0).unwrap();
        // Moving along the axis: never.
        let ball = MovingSphere::new(DVec3::new(3.0, 0.0, 0.0), 0.5, DVec3::Z);
        assert!(time_of_impact_sphere_cylinder(&ball, &pillar, 100.0).is_none());
        // Passing by: line y = 2 > 1.5.
        let ball = MovingSphere::new(DVec3::new(-5.0, 2.0, 0.0), 0.5, DVec3::X);
        assert!(time_of_impact_sphere_cylinder(&ball, &pillar, 100.0).is_none());
        // Touching at t = 0 (distance 1.5) and approaching.
        let ball = MovingSphere::new(DVec3::new(1.5, 0.0, 0.0), 0.5, DVec3::new(-1.0, 1.0, 0.0));
        let c = time_of_impact_sphere_cylinder(&ball, &pillar, 1.0).unwrap();
        assert_eq!((c.time, c.normal, c.point), (0.0, DVec3::X, DVec3::X));
        // Touching and sliding around it tangentially: none.
        let ball = MovingSphere::new(DVec3::new(1.5, 0.0, 0.0), 0.5, DVec3::Y);
        assert!(time_of_impact_sphere_cylinder(&ball, &pillar, 1.0).is_none());
    }
}
