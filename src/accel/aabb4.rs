//! [`Aabb4`]: four boxes laid out one SIMD vector per coordinate, and [`WideEntries`],
//! the answer of a test against all four at once.
//!
//! A [`WideBvh`](super::WideBvh) node stores its children's boxes this way, so that a
//! query tests them together: each lane computes with the same IEEE operations as the
//! one-box test, and only the instruction count changes.

use glam::{Vec3, Vec4};

use super::Aabb;

/// Four axis-aligned boxes, one [`Vec4`] per corner coordinate (lane `k` is box `k`).
///
/// ```
/// use glam::Vec3;
/// use scene_intersect::accel::{Aabb, Aabb4};
///
/// let mut boxes = Aabb4::EMPTY;
/// let b = Aabb { min: Vec3::ZERO, max: Vec3::new(1.0, 2.0, 3.0) };
/// boxes.set(2, &b);
/// assert_eq!(boxes.get(2), b);
/// assert_eq!(boxes.get(0), Aabb::EMPTY);
/// assert_eq!(boxes.union(0b0101), b);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb4 {
    /// Smallest x of each box.
    pub min_x: Vec4,
    /// Smallest y of each box.
    pub min_y: Vec4,
    /// Smallest z of each box.
    pub min_z: Vec4,
    /// Largest x of each box.
    pub max_x: Vec4,
    /// Largest y of each box.
    pub max_y: Vec4,
    /// Largest z of each box.
    pub max_z: Vec4,
}

impl Aabb4 {
    /// Four empty boxes.
    pub const EMPTY: Aabb4 = Aabb4 {
        min_x: Vec4::INFINITY,
        min_y: Vec4::INFINITY,
        min_z: Vec4::INFINITY,
        max_x: Vec4::NEG_INFINITY,
        max_y: Vec4::NEG_INFINITY,
        max_z: Vec4::NEG_INFINITY,
    };

    /// Box `lane`.
    ///
    /// # Panics
    ///
    /// When `lane` is 4 or more.
    #[inline]
    pub fn get(&self, lane: usize) -> Aabb {
        Aabb {
            min: Vec3::new(self.min_x[lane], self.min_y[lane], self.min_z[lane]),
            max: Vec3::new(self.max_x[lane], self.max_y[lane], self.max_z[lane]),
        }
    }

    /// Replaces box `lane`.
    ///
    /// # Panics
    ///
    /// When `lane` is 4 or more.
    pub fn set(&mut self, lane: usize, b: &Aabb) {
        self.min_x[lane] = b.min.x;
        self.min_y[lane] = b.min.y;
        self.min_z[lane] = b.min.z;
        self.max_x[lane] = b.max.x;
        self.max_y[lane] = b.max.y;
        self.max_z[lane] = b.max.z;
    }

    /// Bit `k` set unless box `k` and `b` are certainly apart: the lane-by-lane form of
    /// [`Aabb::intersects`].
    #[inline]
    pub fn intersecting(&self, b: &Aabb) -> u32 {
        let apart = self.min_x.cmpgt(Vec4::splat(b.max.x))
            | self.min_y.cmpgt(Vec4::splat(b.max.y))
            | self.min_z.cmpgt(Vec4::splat(b.max.z))
            | self.max_x.cmplt(Vec4::splat(b.min.x))
            | self.max_y.cmplt(Vec4::splat(b.min.y))
            | self.max_z.cmplt(Vec4::splat(b.min.z));
        !apart.bitmask() & 0b1111
    }

    /// Bit `k` set when box `k` lies within `b` (closed: touching its faces from inside
    /// counts). An empty lane (its corners at `+∞` and `-∞`) passes every comparison:
    /// callers mask the result with the lanes in use.
    #[inline]
    pub fn within(&self, b: &Aabb) -> u32 {
        let inside = self.min_x.cmpge(Vec4::splat(b.min.x))
            & self.min_y.cmpge(Vec4::splat(b.min.y))
            & self.min_z.cmpge(Vec4::splat(b.min.z))
            & self.max_x.cmple(Vec4::splat(b.max.x))
            & self.max_y.cmple(Vec4::splat(b.max.y))
            & self.max_z.cmple(Vec4::splat(b.max.z));
        inside.bitmask()
    }

    /// Box `lane`'s corners, each coordinate spread over four lanes (the form the leaf
    /// filters take a leaf's box in): `([min x, min y, min z], [max x, max y, max z])`.
    /// A lane of 4 or more reads lane 3.
    #[inline(always)]
    pub fn splat_lane(&self, lane: usize) -> ([Vec4; 3], [Vec4; 3]) {
        // Read from memory at the lane: a `match` on the lane compiled to a jump that
        // mispredicted ten times per all-hits query on littlest_tokyo (callgrind).
        let lane = lane.min(3);
        let splat = |v: &Vec4| Vec4::splat(v.as_ref()[lane]);
        (
            [splat(&self.min_x), splat(&self.min_y), splat(&self.min_z)],
            [splat(&self.max_x), splat(&self.max_y), splat(&self.max_z)],
        )
    }

    /// The box holding the boxes whose lanes are set in `lanes` (bit `k` for lane `k`).
    pub fn union(&self, lanes: u32) -> Aabb {
        let mut b = Aabb::EMPTY;
        for lane in (0..4).filter(|k| lanes & (1 << k) != 0) {
            b.grow(&self.get(lane));
        }
        b
    }
}

/// Which of four boxes a query may enter, and in which order: lane `k` is entered when
/// bit `k` of `mask` is set, with order key `keys[k]` (smaller first; the keys of
/// lanes not entered mean nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideEntries {
    /// Bit `k`: box `k` may hold a hit.
    pub mask: u32,
    /// Order keys, as lower bounds of the exact `f64` keys (see
    /// [`key_below`](Self::key_below)).
    pub keys: Vec4,
}

impl WideEntries {
    /// No box entered.
    pub const NONE: WideEntries = WideEntries {
        mask: 0,
        keys: Vec4::ZERO,
    };

    /// The answer made of four one-box answers (`f64` keys, as
    /// [`Intersector::enter_world_box`](crate::visitor::Intersector::enter_world_box)
    /// gives them).
    pub fn from_lanes(lanes: [Option<f64>; 4]) -> WideEntries {
        let mut entries = WideEntries::NONE;
        for (k, key) in lanes.into_iter().enumerate() {
            if let Some(key) = key {
                entries.mask |= 1 << k;
                entries.keys[k] = WideEntries::key_below(key);
            }
        }
        entries
    }

    /// The largest `f32` at most `key` (a NaN key becomes `-∞`: visited first, never
    /// skipped). Rounding down keeps every box whose exact key is within a walk's
    /// limit within it.
    pub fn key_below(key: f64) -> f32 {
        super::aabb::f32_at_most(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_down() {
        let third = 1.0 / 3.0;
        assert!(f64::from(WideEntries::key_below(third)) <= third);
        assert!(f64::from(WideEntries::key_below(-third)) <= -third);
        assert_eq!(WideEntries::key_below(0.5), 0.5);
        assert_eq!(WideEntries::key_below(f64::NAN), f32::NEG_INFINITY);
        assert_eq!(WideEntries::key_below(1e300), f32::MAX);
        assert_eq!(WideEntries::key_below(f64::INFINITY), f32::INFINITY);
    }

    #[test]
    fn lanes_are_gathered_with_their_keys() {
        let e = WideEntries::from_lanes([None, Some(0.25), None, Some(2.0)]);
        assert_eq!(e.mask, 0b1010);
        assert_eq!(e.keys[1], 0.25);
        assert_eq!(e.keys[3], 2.0);
    }

    #[test]
    fn intersecting_agrees_with_one_box_at_a_time() {
        let probe = Aabb {
            min: Vec3::new(0.0, 0.0, 0.0),
            max: Vec3::new(2.0, 1.0, 1.0),
        };
        let mut boxes = Aabb4::EMPTY;
        let lanes = [
            (Vec3::new(2.0, 0.5, 0.5), 1.0),  // touching the face x = 2
            (Vec3::new(2.5, 0.5, 0.5), 1.0),  // apart along x
            (Vec3::new(1.0, -3.0, 0.5), 1.0), // apart along y
            (Vec3::new(0.5, 0.5, 0.5), 0.1),  // inside
        ];
        for (lane, (min, size)) in lanes.into_iter().enumerate() {
            boxes.set(
                lane,
                &Aabb {
                    min,
                    max: min + Vec3::splat(size),
                },
            );
        }
        assert_eq!(boxes.intersecting(&probe), 0b1001);
        // Only the small box lies within the probe; touching its face from outside
        // is not within.
        assert_eq!(boxes.within(&probe), 0b1000);
        assert_eq!(Aabb4::EMPTY.within(&probe), 0b1111);
        for lane in 0..4 {
            let one = boxes.get(lane).intersects(&probe);
            assert_eq!(boxes.intersecting(&probe) & (1 << lane) != 0, one);
        }
        // Empty lanes never intersect.
        assert_eq!(Aabb4::EMPTY.intersecting(&probe), 0);
    }

    #[test]
    fn union_skips_unset_lanes() {
        let mut boxes = Aabb4::EMPTY;
        let a = Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        };
        let b = Aabb {
            min: Vec3::splat(-2.0),
            max: Vec3::splat(-1.0),
        };
        boxes.set(0, &a);
        boxes.set(3, &b);
        assert_eq!(boxes.union(0b0001), a);
        assert_eq!(
            boxes.union(0b1001),
            Aabb {
                min: Vec3::splat(-2.0),
                max: Vec3::ONE
            }
        );
        assert_eq!(boxes.union(0), Aabb::EMPTY);
    }
}
