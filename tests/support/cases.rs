//! How many cases a property test runs: its default, scaled for a deep run by the
//! environment variable `PROPERTY_SCALE` (`PROPERTY_SCALE=100 cargo test --release
//! --test properties` runs 100 times as many; CI keeps the defaults).

/// `default` cases, times `PROPERTY_SCALE` when that is set to a positive integer.
pub fn cases(default: u32) -> u32 {
    let scale = std::env::var("PROPERTY_SCALE")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1);
    default.saturating_mul(scale)
}
