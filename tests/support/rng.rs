//! A small deterministic generator (xorshift64*) for the tests that draw random queries,
//! so a failure reproduces from its seed.
#![allow(dead_code)]

use glam::DVec3;

/// Xorshift64* with a fixed seed.
pub struct Rng(pub u64);

impl Rng {
    /// Uniform in `[0, 1)`.
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }

    /// Uniform in the box `[min, max)`.
    pub fn in_box(&mut self, min: DVec3, max: DVec3) -> DVec3 {
        DVec3::new(
            self.range(min.x, max.x),
            self.range(min.y, max.y),
            self.range(min.z, max.z),
        )
    }
}
