//! Vector lengths right to the last bits at every magnitude.
//!
//! `DVec3::length` squares the components first: below about 10^-154 the square is
//! subnormal (few digits left) or zero, above about 10^154 it overflows. The exact tests
//! compare lengths at any magnitude a scene can hold, so they use
//! [`length_at_any_scale`], which costs one range check more in the common case.

use glam::DVec3;

/// The lengths whose square is a normal, finite `f64` (`sqrt(f64::MIN_POSITIVE)` is
/// 1.49e-154): there the plain square root is right to the last bits.
pub(crate) const NORMAL_LENGTHS: std::ops::RangeInclusive<f64> = 1.5e-154..=1e154;

/// The length of `v`, correct to the last bits whatever its size: the square root of its
/// squared length where that square is a normal `f64`, else the length of `v` scaled by
/// its largest component first. (A plane normal of length 10^-158 squares to a
/// subnormal, which keeps only a few digits: a plane normalized by the plain square root
/// was off by 10^-7 of its length, enough to cull a bounding sphere 10^38 units across
/// that it touches. A distance of 10^-301 squares to zero.)
#[inline]
pub(crate) fn length_at_any_scale(v: DVec3) -> f64 {
    // Tested on the root, not the square: the value is at hand, and outside the range
    // (its square subnormal or overflowed) the root is wrong or infinite.
    let length = v.length();
    if NORMAL_LENGTHS.contains(&length) {
        length
    } else {
        scaled_length(v)
    }
}

/// [`length_at_any_scale`] for a square out of the normal range (kept out of line:
/// computed eagerly beside the common case, its divisions would cost every call).
#[cold]
#[inline(never)]
pub(crate) fn scaled_length(v: DVec3) -> f64 {
    let largest = v.abs().max_element();
    if largest > 0.0 && largest.is_finite() {
        largest * (v / largest).length()
    } else {
        v.length()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_right_at_every_size() {
        // Squares below the normal range (subnormal, then zero), in it, and past it.
        for (v, length) in [
            (
                DVec3::new(4.418321272710734e-159, 0.0, 0.0),
                4.418321272710734e-159,
            ),
            (DVec3::new(3e-170, 4e-170, 0.0), 5e-170),
            (DVec3::new(3e-301, 0.0, 4e-301), 5e-301),
            (DVec3::new(0.0, 3.0, 4.0), 5.0),
            (DVec3::new(3e200, 0.0, 4e200), 5e200),
        ] {
            let got = length_at_any_scale(v);
            assert!(
                (got - length).abs() <= 2.0 * f64::EPSILON * length,
                "{v}: {got:e}"
            );
        }
        // The plain square root is what the small ones would otherwise get.
        let tiny = DVec3::new(4.418321272710734e-159, 0.0, 0.0);
        assert!((tiny.length() / 4.418321272710734e-159 - 1.0).abs() > 1e-9);
        assert_eq!(DVec3::new(3e-301, 0.0, 4e-301).length(), 0.0);
        assert_eq!(length_at_any_scale(DVec3::ZERO), 0.0);
        assert!(length_at_any_scale(DVec3::new(f64::INFINITY, 0.0, 0.0)).is_infinite());
    }
}
