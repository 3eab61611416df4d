//! [`Aabb`]: the axis-aligned `f32` box every tree is made of, and the outward rounding
//! from `f64` that keeps such a box holding what it bounds.

use glam::{DVec3, Vec3};

/// An axis-aligned box with `f32` corners.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box.
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// The box of a few points.
    pub fn from_points(points: &[Vec3]) -> Aabb {
        let mut b = Aabb::EMPTY;
        for &p in points {
            b.min = b.min.min(p);
            b.max = b.max.max(p);
        }
        b
    }

    /// The `f32` box holding an `f64` box: corners rounded outward. A NaN corner
    /// coordinate (nothing known) becomes infinite outward, so the box holds everything
    /// along that axis and no box this returns has a NaN corner.
    pub fn from_f64_outward(min: DVec3, max: DVec3) -> Aabb {
        let (down, up) = (f32_at_most, f32_at_least);
        Aabb {
            min: Vec3::new(down(min.x), down(min.y), down(min.z)),
            max: Vec3::new(up(max.x), up(max.y), up(max.z)),
        }
    }

    /// Grows to hold `other`.
    #[inline]
    pub fn grow(&mut self, other: &Aabb) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Half the surface area (the SAH only compares areas).
    #[inline]
    pub(super) fn half_area(&self) -> f32 {
        let d = (self.max - self.min).max(Vec3::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    }

    /// True unless the two closed boxes are certainly apart: separated along some axis
    /// (a NaN corner never separates).
    #[inline]
    pub fn intersects(&self, other: &Aabb) -> bool {
        !(self.min.cmpgt(other.max).any() || self.max.cmplt(other.min).any())
    }

    /// True when `other` lies inside this box, faces included (false for a NaN corner
    /// of either).
    ///
    /// ```
    /// use glam::Vec3;
    /// use scene_intersect::accel::Aabb;
    ///
    /// let unit = Aabb { min: Vec3::ZERO, max: Vec3::ONE };
    /// let inner = Aabb { min: Vec3::splat(0.5), max: Vec3::ONE };
    /// assert!(unit.contains(&inner) && !inner.contains(&unit));
    /// assert!(!unit.contains(&Aabb { min: Vec3::NAN, max: Vec3::ONE }));
    /// ```
    #[inline]
    pub fn contains(&self, other: &Aabb) -> bool {
        self.min.cmple(other.min).all() && other.max.cmple(self.max).all()
    }

    /// Centre.
    #[inline]
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// The corners as `f64`.
    #[inline]
    pub fn as_dvec3(&self) -> (DVec3, DVec3) {
        (self.min.as_dvec3(), self.max.as_dvec3())
    }

    /// The length of the diagonal, in `f64` (infinite for an empty box, NaN for a NaN
    /// corner).
    ///
    /// ```
    /// use glam::Vec3;
    /// use scene_intersect::accel::Aabb;
    ///
    /// let b = Aabb { min: Vec3::ZERO, max: Vec3::new(2.0, 3.0, 6.0) };
    /// assert_eq!(b.diagonal(), 7.0);
    /// assert_eq!(Aabb::EMPTY.diagonal(), f64::INFINITY);
    /// ```
    #[inline]
    pub fn diagonal(&self) -> f64 {
        let (min, max) = self.as_dvec3();
        (max - min).length()
    }
}

/// The largest `f32` at most `v`; `-∞` for NaN (nothing known: below everything).
#[inline]
pub(super) fn f32_at_most(v: f64) -> f32 {
    let f = v as f32;
    // When the cast rounded up, one step towards −∞. `f` is then +∞ or finite, and
    // never +0 (a `v` that rounds up to zero is negative and rounds to −0), so the step
    // moves its bits by one: down for a clear sign bit, up for a set one (−0 becomes
    // the least negative subnormal). Selected, not branched on: `f32::next_down`
    // branches on the cases that cannot occur here: ~80 instructions of every box
    // query, whose bounds `begin` rounds outward.
    let bits = f.to_bits();
    let step = if bits >> 31 == 0 {
        bits.wrapping_sub(1)
    } else {
        bits.wrapping_add(1)
    };
    let f = if f64::from(f) > v {
        f32::from_bits(step)
    } else {
        f
    };
    if v.is_nan() {
        f32::NEG_INFINITY
    } else {
        f
    }
}

/// The smallest `f32` at least `v`; `+∞` for NaN (nothing known: above everything).
#[inline]
pub(crate) fn f32_at_least(v: f64) -> f32 {
    let f = v as f32;
    // When the cast rounded down, one step towards +∞ (as in `f32_at_most`, mirrored:
    // `f` is −∞ or finite and never −0).
    let bits = f.to_bits();
    let step = if bits >> 31 == 0 {
        bits.wrapping_add(1)
    } else {
        bits.wrapping_sub(1)
    };
    let f = if f64::from(f) < v {
        f32::from_bits(step)
    } else {
        f
    };
    if v.is_nan() {
        f32::INFINITY
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_touching_intersect_and_separated_ones_do_not() {
        // Unit boxes along x, from 0, 1 and 1.5.
        let at = |x: f32| Aabb {
            min: Vec3::new(x, 0.0, 0.0),
            max: Vec3::new(x + 1.0, 1.0, 1.0),
        };
        let (a, touching, apart) = (at(0.0), at(1.0), at(1.5));
        assert!(a.intersects(&touching) && touching.intersects(&a));
        assert!(!a.intersects(&apart) && !apart.intersects(&a));
        assert!(a.intersects(&a));
    }

    #[test]
    fn outward_rounding_is_the_nearest_f32_on_the_outer_side() {
        // Against the definition, through `std`'s own steps: every special case
        // (zeros of both signs, subnormals, the ends of the `f32` range, infinities,
        // NaN) and random values of every magnitude.
        let reference_at_most = |v: f64| {
            if v.is_nan() {
                return f32::NEG_INFINITY;
            }
            let f = v as f32;
            if f64::from(f) > v {
                f.next_down()
            } else {
                f
            }
        };
        let reference_at_least = |v: f64| {
            if v.is_nan() {
                return f32::INFINITY;
            }
            let f = v as f32;
            if f64::from(f) < v {
                f.next_up()
            } else {
                f
            }
        };
        let tiny = f64::from(f32::from_bits(1));
        let max = f64::from(f32::MAX);
        let mut values = vec![
            0.0,
            tiny,
            tiny * 0.5,
            tiny * 0.25,
            tiny * 1.5,
            f64::from(f32::MIN_POSITIVE),
            f64::from(f32::MIN_POSITIVE) * (1.0 - 1e-9),
            max,
            max * (1.0 + 1e-9),
            max * (1.0 + 1e-7),
            max * 2.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NAN,
            0.1,
            1.0,
            1.0 + 1e-12,
            16_777_217.0,
        ];
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let magnitude = 10f64.powi((rng.next() * 100.0) as i32 - 50);
            let v = rng.next() * magnitude;
            // And values on the `f32` grid, which no step may move.
            values.extend([v, f64::from(v as f32)]);
        }
        for v in values.iter().flat_map(|&v| [v, -v]) {
            let (down, up) = (f32_at_most(v), f32_at_least(v));
            assert_eq!(
                down.to_bits(),
                reference_at_most(v).to_bits(),
                "at most {v:e}"
            );
            assert_eq!(
                up.to_bits(),
                reference_at_least(v).to_bits(),
                "at least {v:e}"
            );
            if !v.is_nan() {
                assert!(f64::from(down) <= v && f64::from(up) >= v, "{v:e}");
            }
        }
    }

    #[test]
    fn outward_rounding_holds_the_f64_box() {
        let b = Aabb::from_f64_outward(DVec3::splat(0.1), DVec3::splat(0.3));
        assert!(f64::from(b.min.x) <= 0.1 && f64::from(b.max.x) >= 0.3);
        // Unknown (NaN) coordinates hold everything along their axis.
        let b = Aabb::from_f64_outward(DVec3::new(f64::NAN, 0.0, 0.0), DVec3::splat(f64::NAN));
        assert_eq!(b.min, Vec3::new(f32::NEG_INFINITY, 0.0, 0.0));
        assert_eq!(b.max, Vec3::splat(f32::INFINITY));
    }
}
