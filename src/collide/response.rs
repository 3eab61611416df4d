//! Collision response: reflection about a contact normal and the elastic
//! collision of two spheres.

use glam::DVec3;

/// Reflects `velocity` about the plane with normal `normal`, keeping its speed:
/// `v' = v − 2 (v·n̂) n̂` with `n̂ = normal / |normal|` (so `normal` need not be
/// unit length). The tangential part is kept, the normal part is reversed, and
/// `|v'| = |v|`.
///
/// A zero or non-finite `normal` defines no plane: `velocity` is returned
/// unchanged.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::reflect_velocity;
/// let v = reflect_velocity(DVec3::new(3.0, 0.0, -4.0), DVec3::new(0.0, 0.0, 2.0));
/// assert_eq!(v, DVec3::new(3.0, 0.0, 4.0));
/// ```
pub fn reflect_velocity(velocity: DVec3, normal: DVec3) -> DVec3 {
    match normal.try_normalize() {
        Some(n) => velocity - 2.0 * velocity.dot(n) * n,
        None => velocity,
    }
}

/// Velocities after a perfectly elastic collision of two smooth spheres with
/// masses `m1`, `m2` and velocities `v1`, `v2`, along the line of centres
/// `normal` (any length; normalised inside).
///
/// Only the normal components change (frictionless contact). With
/// `u = (v₁ − v₂)·n̂`:
/// `v₁' = v₁ − 2 m₂ / (m₁ + m₂) · u n̂`, `v₂' = v₂ + 2 m₁ / (m₁ + m₂) · u n̂`,
/// which conserves momentum `m₁v₁ + m₂v₂` and kinetic energy. The factors are
/// computed as `2 / (1 + m₁/m₂)` and `2 / (1 + m₂/m₁)`, so one infinite mass acts
/// as an immovable wall (the other sphere's relative velocity is reflected).
///
/// The exchange is applied whether the spheres approach or separate; callers
/// decide when a collision happens (see
/// [`time_of_impact_sphere_sphere`](super::time_of_impact_sphere_sphere)).
/// Invalid input — a zero or non-finite normal, a mass that is not `> 0`, or
/// both masses infinite — returns the velocities unchanged.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::elastic_collision_spheres;
/// // Equal masses, head-on: the velocities are exchanged.
/// let (a, b) = elastic_collision_spheres(1.0, DVec3::X, 1.0, -DVec3::X, DVec3::X);
/// assert_eq!((a, b), (-DVec3::X, DVec3::X));
/// ```
pub fn elastic_collision_spheres(
    m1: f64,
    v1: DVec3,
    m2: f64,
    v2: DVec3,
    normal: DVec3,
) -> (DVec3, DVec3) {
    let Some(n) = normal.try_normalize() else {
        return (v1, v2);
    };
    let positive = m1 > 0.0 && m2 > 0.0;
    if !positive || (m1.is_infinite() && m2.is_infinite()) {
        return (v1, v2);
    }
    let u = (v1 - v2).dot(n);
    let f1 = 2.0 / (1.0 + m1 / m2);
    let f2 = 2.0 / (1.0 + m2 / m1);
    (v1 - f1 * u * n, v2 + f2 * u * n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_keeps_tangent_and_speed() {
        // v = (1, 2, 3), n = x: v' = (−1, 2, 3).
        assert_eq!(
            reflect_velocity(DVec3::new(1.0, 2.0, 3.0), DVec3::X),
            DVec3::new(-1.0, 2.0, 3.0)
        );
        // Oblique normal (1, 1, 0)/√2, v = (2, 0, 0): v·n̂ = √2 → v' = (2,0,0) − 2·√2·(1,1,0)/√2
        // = (0, −2, 0). Speed 2 kept.
        let v = reflect_velocity(DVec3::new(2.0, 0.0, 0.0), DVec3::new(1.0, 1.0, 0.0));
        assert!((v - DVec3::new(0.0, -2.0, 0.0)).length() < 1e-15);
        // Velocity parallel to the surface is unchanged.
        assert_eq!(reflect_velocity(DVec3::Y, DVec3::X), DVec3::Y);
    }

    #[test]
    fn reflection_degenerate_normal() {
        assert_eq!(reflect_velocity(DVec3::ONE, DVec3::ZERO), DVec3::ONE);
        assert_eq!(reflect_velocity(DVec3::ONE, DVec3::NAN), DVec3::ONE);
    }

    #[test]
    fn elastic_unequal_masses_head_on() {
        // m₁ = 1, v₁ = 3; m₂ = 2, v₂ = 0 along x. u = 3.
        // v₁' = 3 − (2·2/3)·3 = −1, v₂' = 0 + (2·1/3)·3 = 2.
        // Momentum: 3 = −1 + 4 ✓. Energy: 4.5 = 0.5 + 4 ✓.
        let (a, b) = elastic_collision_spheres(
            1.0,
            DVec3::new(3.0, 0.0, 0.0),
            2.0,
            DVec3::ZERO,
            DVec3::new(-5.0, 0.0, 0.0),
        );
        assert!((a - DVec3::new(-1.0, 0.0, 0.0)).length() < 1e-15);
        assert!((b - DVec3::new(2.0, 0.0, 0.0)).length() < 1e-15);
    }

    #[test]
    fn elastic_glancing_keeps_tangential_parts() {
        // Equal masses; v₁ = (1, 1, 0), v₂ = 0, normal x: the normal parts swap.
        // v₁' = (0, 1, 0), v₂' = (1, 0, 0).
        let (a, b) =
            elastic_collision_spheres(2.0, DVec3::new(1.0, 1.0, 0.0), 2.0, DVec3::ZERO, DVec3::X);
        assert_eq!((a, b), (DVec3::Y, DVec3::X));
    }

    #[test]
    fn elastic_infinite_mass_is_a_wall() {
        // m₂ = ∞, v₂ = 0: f₁ = 2, f₂ = 0 → v₁ reflected, v₂ unchanged.
        let (a, b) = elastic_collision_spheres(
            1.0,
            DVec3::new(2.0, 1.0, 0.0),
            f64::INFINITY,
            DVec3::ZERO,
            DVec3::X,
        );
        assert_eq!((a, b), (DVec3::new(-2.0, 1.0, 0.0), DVec3::ZERO));
    }

    #[test]
    fn elastic_invalid_input() {
        let v1 = DVec3::X;
        let v2 = -DVec3::X;
        assert_eq!(
            elastic_collision_spheres(1.0, v1, 1.0, v2, DVec3::ZERO),
            (v1, v2)
        );
        assert_eq!(
            elastic_collision_spheres(0.0, v1, 1.0, v2, DVec3::X),
            (v1, v2)
        );
        assert_eq!(
            elastic_collision_spheres(f64::NAN, v1, 1.0, v2, DVec3::X),
            (v1, v2)
        );
        assert_eq!(
            elastic_collision_spheres(f64::INFINITY, v1, f64::INFINITY, v2, DVec3::X),
            (v1, v2)
        );
    }
}
