//! [`XorShift`]: the unit tests' source of random cases, deterministic and the same on
//! every machine (no dependency for a few lines).

/// Marsaglia's xorshift64 generator (shifts 13, 7, 17).
pub(crate) struct XorShift(u64);

impl XorShift {
    /// A generator started from `seed` (not zero: zero stays zero).
    pub fn new(seed: u64) -> Self {
        XorShift(seed)
    }

    /// The next number, uniform in `[0, 1)` (53 random bits).
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The next number, uniform in `0..65 536` (16 random bits).
    pub fn bits16(&mut self) -> usize {
        (self.next() * 65_536.0) as usize
    }
}
