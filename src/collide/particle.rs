//! A point particle integrated with explicit Euler steps.

use glam::DVec3;

/// Standard gravity, `9.80665 m/s²` along `−z` (the toolkit's "up" is `+z`).
pub const STANDARD_GRAVITY: DVec3 = DVec3::new(0.0, 0.0, -9.80665);

/// A point mass with a position and a velocity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Particle {
    /// Position.
    pub position: DVec3,
    /// Velocity.
    pub velocity: DVec3,
}

impl Particle {
    /// A particle at `position` moving with `velocity`.
    pub fn new(position: DVec3, velocity: DVec3) -> Self {
        Self { position, velocity }
    }

    /// One explicit (forward) Euler step of length `dt` under the constant
    /// acceleration `acceleration`, both updates using the values at the start of
    /// the step:
    /// `x ← x + v dt`, then `v ← v + a dt`.
    ///
    /// Under a uniform field `g` each step adds `½ |g|² dt²` of specific energy
    /// `E = ½|v|² − g·x`, but it also changes `g·v` by `|g|² dt`, so the step
    /// conserves `E − ½ dt (g·v)` exactly: in free flight the energy stays within
    /// `½ dt |g| |v|` of a constant instead of drifting. (The bouncing-ball room
    /// relies on this; see [`super::room`].)
    /// A `dt` that is not finite and `>= 0` leaves the particle unchanged.
    ///
    /// ```
    /// use glam::DVec3;
    /// use scene_intersect::collide::Particle;
    /// let mut p = Particle::new(DVec3::ZERO, DVec3::new(1.0, 0.0, 2.0));
    /// p.euler_step(DVec3::new(0.0, 0.0, -10.0), 0.5);
    /// assert_eq!(p.position, DVec3::new(0.5, 0.0, 1.0));
    /// assert_eq!(p.velocity, DVec3::new(1.0, 0.0, -3.0));
    /// ```
    pub fn euler_step(&mut self, acceleration: DVec3, dt: f64) {
        let valid = dt >= 0.0 && dt.is_finite();
        if !valid {
            return;
        }
        self.position += self.velocity * dt;
        self.velocity += acceleration * dt;
    }

    /// Specific mechanical energy (per unit mass) in the uniform field
    /// `gravity`: `½ |v|² − g·x`.
    pub fn specific_energy(&self, gravity: DVec3) -> f64 {
        0.5 * self.velocity.length_squared() - gravity.dot(self.position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_euler_steps_by_hand() {
        // g = (0, 0, −10), dt = 0.1, x₀ = (0, 0, 0), v₀ = (1, 0, 0).
        // Step 1: x = (0.1, 0, 0),    v = (1, 0, −1)
        // Step 2: x = (0.2, 0, −0.1), v = (1, 0, −2)
        // Step 3: x = (0.3, 0, −0.3), v = (1, 0, −3)
        let g = DVec3::new(0.0, 0.0, -10.0);
        let mut p = Particle::new(DVec3::ZERO, DVec3::X);
        for _ in 0..3 {
            p.euler_step(g, 0.1);
        }
        assert!((p.position - DVec3::new(0.3, 0.0, -0.3)).length() < 1e-12);
        assert!((p.velocity - DVec3::new(1.0, 0.0, -3.0)).length() < 1e-12);
    }

    #[test]
    fn energy_gain_per_step_is_half_g_squared_dt_squared() {
        // E = ½v² + 10 z. One step from rest at z = 0: x stays, v = (0,0,−1) → E = 0.5
        // = ½·10²·0.1².
        let g = DVec3::new(0.0, 0.0, -10.0);
        let mut p = Particle::default();
        p.euler_step(g, 0.1);
        assert!((p.specific_energy(g) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn euler_conserves_the_shadow_energy() {
        // Same run as above: E₀ = ½·1² = 0.5 and g·v₀ = 0, so E − ½ dt (g·v) = 0.5.
        // After 3 steps: E = ½(1 + 9) + 10·(−0.3) = 2, g·v = (−10)(−3) = 30,
        // E − ½·0.1·30 = 2 − 1.5 = 0.5.
        let g = DVec3::new(0.0, 0.0, -10.0);
        let mut p = Particle::new(DVec3::ZERO, DVec3::X);
        for _ in 0..3 {
            p.euler_step(g, 0.1);
        }
        assert!((p.specific_energy(g) - 2.0).abs() < 1e-12);
        assert!((p.specific_energy(g) - 0.5 * 0.1 * g.dot(p.velocity) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn invalid_dt_is_ignored() {
        let mut p = Particle::new(DVec3::ONE, DVec3::ONE);
        p.euler_step(STANDARD_GRAVITY, -1.0);
        p.euler_step(STANDARD_GRAVITY, f64::NAN);
        assert_eq!(p, Particle::new(DVec3::ONE, DVec3::ONE));
        // dt = 0 is a no-op too.
        p.euler_step(STANDARD_GRAVITY, 0.0);
        assert_eq!(p, Particle::new(DVec3::ONE, DVec3::ONE));
    }
}
