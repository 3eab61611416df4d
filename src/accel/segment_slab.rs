//! [`SegmentSlab`]: a segment prepared for many conservative `f32` box tests.
//!
//! BVH nodes are `f32` boxes, and testing them in `f32` is what makes a traversal fast.
//! The answers must still never drop a box the exact (`f64`) primitive tests could hit
//! in, so every box is grown by a pad that covers, with a wide margin, the rounding of
//! the `f32` arithmetic itself (the segment's conversion to `f32`, the subtractions, the
//! reciprocal and the products): the interval computed for each axis always holds the
//! true interval of the unpadded box (see Ize, "Robust BVH Ray Traversal", JCGT 2013,
//! for the same argument in `t` units).
//!
//! The pad is a share of the differences each axis computes (a box corner minus the
//! start), not of the segment's length: the reciprocal and the products err by a few
//! units of `2^-24` of the parameter itself, which shrinking each difference by `2^-18`
//! of its largest possible size outweighs, however long the segment. (The length once
//! counted too: a picking ray to a far plane `10^6` units away padded every box of a
//! 100-unit scene by 4 units, and the walk entered most of them.)

use glam::{DVec3, Vec3A, Vec4};

use super::{Aabb, Aabb4, WideEntries};

/// Relative margin for the rounding of the `f32` slab arithmetic: every error source is
/// at most a few units of `2^-24` of the magnitudes involved; this is `2^-18`.
const ROUNDING_MARGIN: f64 = 1.0 / (1u32 << 18) as f64;

/// A closed segment `start + t * direction`, `t` in `[0, 1]`, ready for slab tests
/// against `f32` boxes grown by a pad.
///
/// ```
/// use glam::{DVec3, Vec3};
/// use scene_intersect::accel::{Aabb, SegmentSlab};
///
/// let slab = SegmentSlab::new(DVec3::new(-2.0, 0.5, 0.5), DVec3::new(4.0, 0.0, 0.0), 0.0, 1.0);
/// let unit = Aabb { min: Vec3::ZERO, max: Vec3::ONE };
/// let t = slab.entry(&unit).unwrap();
/// assert!(t <= 0.5 && t > 0.49); // enters at x = 0, half way
/// let far = Aabb { min: Vec3::splat(5.0), max: Vec3::splat(6.0) };
/// assert_eq!(slab.entry(&far), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentSlab {
    /// `start + pad`: subtracted from a box's minimum corner.
    low_origin: Vec3A,
    /// `start - pad`: subtracted from a box's maximum corner.
    high_origin: Vec3A,
    /// `1 / direction` per axis, clamped to the finite range (an axis the segment is
    /// parallel to gets `±f32::MAX`, which keeps the arithmetic free of NaN).
    ///
    /// The three vectors are [`Vec3A`]: the three axes are computed in one SIMD lane
    /// each, with the same IEEE operations as three scalar ones (callgrind: 2 % fewer
    /// instructions per nearest-hit query and 5 % fewer per all-hits query on
    /// littlest_tokyo than with [`Vec3`](glam::Vec3)).
    inverse: Vec3A,
    /// When the segment does not fit in `f32` (coordinates beyond `f32::MAX`): every box
    /// is entered at `t = 0` and the exact tests decide.
    accept_all: bool,
}

impl SegmentSlab {
    /// Prepares the segment from `start` along `direction` for tests against boxes grown
    /// by `pad`; `scale` bounds the magnitude of every box coordinate to be tested (the
    /// rounding margin is proportional to it and to the start's distance from the
    /// origin, not to the segment's length).
    pub fn new(start: DVec3, direction: DVec3, pad: f64, scale: f64) -> SegmentSlab {
        // Bounds every difference `corner − (start ± pad)` an axis computes.
        let magnitude = scale.abs() + start.abs().max_element() + pad.abs();
        let pad = (pad.abs() + magnitude * ROUNDING_MARGIN) as f32;
        let pad = pad.next_up();
        // In `Vec3A` from here: one SIMD operation for the three axes' scalar ones,
        // each lane rounding alike. (A slab is made once a query and again for every
        // whole item a segment visits; callgrind, instructions a query: nearest
        // segments on city_s3 5 438 → 5 400, all hits 21 042 → 20 852.)
        let start32 = Vec3A::from(start.as_vec3());
        let direction32 = Vec3A::from(direction.as_vec3());
        // (`max` then `min`, as `clamp` computes; a NaN lane, which a NaN direction
        // would give, sets `accept_all` below whatever the SIMD `max` makes of it.)
        let inverse = direction32
            .recip()
            .max(Vec3A::splat(-f32::MAX))
            .min(Vec3A::splat(f32::MAX));
        let low_origin = start32 + Vec3A::splat(pad);
        let high_origin = start32 - Vec3A::splat(pad);
        let accept_all = !((low_origin.is_finite_mask()
            & high_origin.is_finite_mask()
            & direction32.is_finite_mask()
            & !inverse.is_nan_mask())
        .all()
            && pad.is_finite());
        SegmentSlab {
            low_origin,
            high_origin,
            inverse,
            accept_all,
        }
    }

    /// A lower bound of the parameter at which the segment enters the padded box, or
    /// `None` when it certainly misses it.
    ///
    /// The box corners must not be NaN (no box this crate builds has one: see
    /// [`Aabb::from_f64_outward`]); the answer for such a box is unspecified.
    #[inline]
    pub fn entry(&self, b: &Aabb) -> Option<f32> {
        if self.accept_all {
            return Some(0.0);
        }
        // No lane is ever NaN (finite origins and inverses, corners never NaN: `grow`
        // and `from_points` skip NaN, `from_f64_outward` maps it to an infinity), so
        // SIMD min/max agree with `f32::min`/`f32::max`.
        let ta = (Vec3A::from(b.min) - self.low_origin) * self.inverse;
        let tb = (Vec3A::from(b.max) - self.high_origin) * self.inverse;
        let near = ta.min(tb).max_element().max(0.0);
        let far = ta.max(tb).min_element().min(1.0);
        (near <= far).then_some(near)
    }

    /// The slab with each component spread over four lanes, for
    /// [`WideSegmentSlab::entries`]: [`entry`](Self::entry) for four boxes at once, the
    /// same arithmetic lane by lane. (Not kept in the slab itself: a slab is copied
    /// into every frame a query is localized to, and 144 more bytes cost more there.)
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use scene_intersect::accel::{Aabb, Aabb4, SegmentSlab};
    ///
    /// let slab = SegmentSlab::new(DVec3::new(-2.0, 0.5, 0.5), DVec3::new(4.0, 0.0, 0.0), 0.0, 1.0);
    /// let mut boxes = Aabb4::EMPTY;
    /// boxes.set(0, &Aabb { min: Vec3::ZERO, max: Vec3::ONE });
    /// boxes.set(1, &Aabb { min: Vec3::splat(5.0), max: Vec3::splat(6.0) });
    /// let entries = slab.wide().entries(&boxes);
    /// assert_eq!(entries.mask & 0b11, 0b01);
    /// assert_eq!(Some(entries.keys[0]), slab.entry(&boxes.get(0)));
    /// ```
    pub fn wide(&self) -> WideSegmentSlab {
        let splat = |v: Vec3A| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
        WideSegmentSlab {
            low_origin: splat(self.low_origin),
            high_origin: splat(self.high_origin),
            inverse: splat(self.inverse),
            accept_all: self.accept_all,
        }
    }
}

/// A [`SegmentSlab`] with each component spread over four lanes: tests four boxes
/// ([`Aabb4`]) at once with the same arithmetic as [`SegmentSlab::entry`], lane by lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideSegmentSlab {
    low_origin: [Vec4; 3],
    high_origin: [Vec4; 3],
    inverse: [Vec4; 3],
    accept_all: bool,
}

impl WideSegmentSlab {
    /// Which of the four padded boxes the segment may enter, each with a lower bound of
    /// its entry parameter.
    #[inline]
    pub fn entries(&self, b: &Aabb4) -> WideEntries {
        if self.accept_all {
            return WideEntries {
                mask: 0b1111,
                keys: Vec4::ZERO,
            };
        }
        let (low, high, inverse) = (&self.low_origin, &self.high_origin, &self.inverse);
        let (x0, x1) = (
            (b.min_x - low[0]) * inverse[0],
            (b.max_x - high[0]) * inverse[0],
        );
        let (y0, y1) = (
            (b.min_y - low[1]) * inverse[1],
            (b.max_y - high[1]) * inverse[1],
        );
        let (z0, z1) = (
            (b.min_z - low[2]) * inverse[2],
            (b.max_z - high[2]) * inverse[2],
        );
        let near = x0.min(x1).max(y0.min(y1)).max(z0.min(z1)).max(Vec4::ZERO);
        let far = x0.max(x1).min(y0.max(y1)).min(z0.max(z1)).min(Vec4::ONE);
        WideEntries {
            mask: near.cmple(far).bitmask(),
            keys: near,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn unit() -> Aabb {
        Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        }
    }

    #[test]
    fn parallel_segments_inside_outside_and_on_a_face() {
        // Along x, inside the y and z slabs.
        let s = SegmentSlab::new(DVec3::new(-1.0, 0.5, 0.5), DVec3::X * 3.0, 0.0, 1.0);
        let t = s.entry(&unit()).unwrap();
        assert!((t - 1.0 / 3.0).abs() < 1e-5);
        // Along x, above the box.
        let s = SegmentSlab::new(DVec3::new(-1.0, 1.5, 0.5), DVec3::X * 3.0, 0.0, 1.0);
        assert_eq!(s.entry(&unit()), None);
        // Along x, exactly on the top face: touching counts.
        let s = SegmentSlab::new(DVec3::new(-1.0, 1.0, 0.5), DVec3::X * 3.0, 0.0, 1.0);
        assert!(s.entry(&unit()).is_some());
    }

    #[test]
    fn segment_ends_limit_the_test() {
        // Stops at x = -0.5, before the box.
        let s = SegmentSlab::new(DVec3::new(-1.0, 0.5, 0.5), DVec3::X * 0.5, 0.0, 1.0);
        assert_eq!(s.entry(&unit()), None);
        // Starts inside: entered at 0.
        let s = SegmentSlab::new(DVec3::splat(0.5), DVec3::ONE, 0.0, 1.0);
        assert_eq!(s.entry(&unit()), Some(0.0));
        // Pointing away.
        let s = SegmentSlab::new(DVec3::splat(2.0), DVec3::ONE, 0.0, 1.0);
        assert_eq!(s.entry(&unit()), None);
    }

    #[test]
    fn the_pad_grows_the_box() {
        // Passes 0.1 above the box: missed without a pad, entered with 0.2.
        let start = DVec3::new(-1.0, 1.1, 0.5);
        assert_eq!(
            SegmentSlab::new(start, DVec3::X * 3.0, 0.0, 1.0).entry(&unit()),
            None
        );
        assert!(SegmentSlab::new(start, DVec3::X * 3.0, 0.2, 1.0)
            .entry(&unit())
            .is_some());
    }

    #[test]
    fn far_from_the_origin_a_grazing_segment_is_kept() {
        // A georeferenced box millions of units away; the segment grazes its top face
        // exactly (in f64), with a start that does not round to f32 exactly.
        let min = Vec3::new(4_000_000.0, 2_000_000.0, 100.0);
        let b = Aabb {
            min,
            max: min + Vec3::splat(16.0),
        };
        let start = DVec3::new(3_999_990.123_456_789, 2_000_016.0, 108.0);
        let s = SegmentSlab::new(start, DVec3::X * 40.0, 0.0, 5e6);
        assert!(s.entry(&b).is_some());
    }

    #[test]
    fn a_segment_far_longer_than_the_boxes_is_tested_as_precisely() {
        // A picking ray to a far plane 2·10^7 units away, through the unit box's middle,
        // and one passing 0.01 beside it: told apart (a pad of 2^-18 of the length
        // would be 76 units), with the entry parameter still a lower bound.
        let (start, direction) = (DVec3::new(-1.0, 0.5, 0.5), DVec3::new(2e7, 0.0, 0.0));
        let through = SegmentSlab::new(start, direction, 0.0, 2.0);
        let t = through.entry(&unit()).expect("the ray crosses the box");
        let exact = 1.0 / 2e7; // x = 0
        assert!(f64::from(t) <= exact && f64::from(t) > exact * 0.9999);
        let beside = SegmentSlab::new(start + DVec3::Y * 0.51, direction, 0.0, 2.0);
        assert_eq!(beside.entry(&unit()), None);
        let mut boxes = Aabb4::EMPTY;
        boxes.set(1, &unit());
        let e = through.wide().entries(&boxes);
        assert_eq!(e.mask & 0b0010, 0b0010);
        assert_eq!(e.keys[1], t);
        assert_eq!(beside.wide().entries(&boxes).mask & 0b0010, 0);
    }

    /// Boxes touched exactly (at a corner, or along a face or an edge) by segments of
    /// every length from a millionth to a million times the box's size, in directions
    /// along an axis, across axes and nearly parallel to one: every box entered, at a
    /// parameter no later than the exact one.
    #[test]
    fn touched_boxes_are_entered_by_segments_of_any_length() {
        let b = Aabb {
            min: Vec3::new(1.0, -2.0, 0.25),
            max: Vec3::new(3.0, 0.5, 4.0),
        };
        let (min, max) = (b.min.as_dvec3(), b.max.as_dvec3());
        let mut checked = 0;
        for corner in 0..8 {
            let pick = |bit: u32, lo: f64, hi: f64| if corner & bit != 0 { hi } else { lo };
            let touch = DVec3::new(
                pick(1, min.x, max.x),
                pick(2, min.y, max.y),
                pick(4, min.z, max.z),
            );
            for axis_mix in [
                DVec3::new(1.0, 0.0, 0.0),
                DVec3::new(0.0, -1.0, 0.0),
                DVec3::new(0.3, 0.0, -0.7),
                DVec3::new(-0.2, 0.9, 0.4),
                DVec3::new(1e-30, 1.0, 1e-30),
            ] {
                for length in [1e-6, 1e-2, 1.0, 1e3, 1e6] {
                    // Half way along, the segment is at a corner of the box.
                    let direction = axis_mix.normalize() * length;
                    let start = touch - direction * 0.5;
                    let slab = SegmentSlab::new(start, direction, 0.0, 4.0);
                    let t = slab.entry(&b).expect("a touched box is entered");
                    assert!(f64::from(t) <= 0.5, "{corner} {axis_mix} {length}: {t}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 200);
    }

    #[test]
    fn four_boxes_at_once_agree_with_one_at_a_time() {
        let s = SegmentSlab::new(
            DVec3::new(-1.0, 0.3, 0.7),
            DVec3::new(9.0, 0.4, -0.2),
            0.01,
            10.0,
        );
        let mut boxes = Aabb4::EMPTY;
        let mut i = 0;
        for x in [-2.0f32, 0.0, 3.5, 7.9, 9.0] {
            for y in [-1.0f32, 0.2, 0.5, 2.0] {
                let b = Aabb {
                    min: Vec3::new(x, y, 0.0),
                    max: Vec3::new(x + 1.0, y + 0.25, 1.0),
                };
                boxes.set(i % 4, &b);
                i += 1;
                if i % 4 == 0 {
                    let e = s.wide().entries(&boxes);
                    for lane in 0..4 {
                        let one = s.entry(&boxes.get(lane));
                        assert_eq!(e.mask & (1 << lane) != 0, one.is_some());
                        if let Some(t) = one {
                            assert_eq!(e.keys[lane], t);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn non_finite_f32_inputs_accept_everything() {
        let s = SegmentSlab::new(DVec3::splat(1e300), DVec3::ONE, 0.0, 1.0);
        assert_eq!(s.entry(&unit()), Some(0.0));
    }
}
