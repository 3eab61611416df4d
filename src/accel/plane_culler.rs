//! [`PlaneCuller`]: a convex polytope's planes prepared for conservative `f32` box tests.
//!
//! A BVH walk under a polytope keeps, per node, the set of planes its box straddles
//! (three-mesh-bvh's shapecast does the same with `INTERSECTED` / `CONTAINED`): a box
//! certainly outside one plane is skipped, a plane the box is certainly inside is
//! dropped for its whole subtree, and a box inside every plane is taken whole.
//!
//! "Certainly" is meant exactly: the tests run in `f32` but with margins proportional to
//! the magnitudes involved (2^-18 of them, far above the few units of 2^-24 the `f32`
//! arithmetic and the planes' rounding to `f32` can cost), so a box is declared inside a
//! plane only if every point of it gives that plane a strictly positive value in the
//! clipper's own `f64` arithmetic. Dropping the plane therefore changes nothing in the
//! clipping (it would have kept every vertex), and the results stay identical to the
//! plain traversal's.

use glam::{DVec4, Vec3, Vec4};

use super::{Aabb, Aabb4, TriangleLanes};
use crate::length::{scaled_length, NORMAL_LENGTHS};

/// Relative margin for the rounding of the `f32` plane arithmetic.
const ROUNDING_MARGIN: f64 = 1.0 / (1u32 << 18) as f64;

/// The largest number of planes tracked per node (the bits of a `u64`).
pub const MAX_CULLED_PLANES: usize = 64;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CullPlane {
    /// Unit inward normal, in `f32`.
    normal: Vec3,
    /// Offset of the unit-normal plane, in `f32`.
    offset: f32,
    /// The part of the rounding margin owed to the offset's magnitude.
    offset_margin: f32,
}

/// The rounding margins and outward pad for the boxes of one BVH (see
/// [`PlaneCuller::margins_for`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxMargins {
    /// Added to each plane's own margin: a box is inside a plane only above it.
    inside: f32,
    /// Added to each plane's own margin: a box is outside a plane only below minus it.
    outside: f32,
}

/// Planes `a·x + b·y + c·z + d >= 0` (inward normals) ready for box classification.
///
/// ```
/// use glam::{DVec4, Vec3};
/// use scene_intersect::accel::{Aabb, PlaneCuller};
///
/// // The slab 0 <= x <= 10.
/// let culler = PlaneCuller::new(
///     &[DVec4::new(1.0, 0.0, 0.0, 0.0), DVec4::new(-1.0, 0.0, 0.0, 10.0)],
///     0.0,
///     100.0,
/// ).unwrap();
/// let all = culler.all_planes();
/// let inside = Aabb { min: Vec3::splat(1.0), max: Vec3::splat(2.0) };
/// let straddling = Aabb { min: Vec3::splat(9.0), max: Vec3::splat(11.0) };
/// let outside = Aabb { min: Vec3::splat(20.0), max: Vec3::splat(21.0) };
/// assert_eq!(culler.classify(&inside, all), Some(0)); // inside both: taken whole
/// assert_eq!(culler.classify(&straddling, all), Some(0b10)); // only x <= 10 is crossed
/// assert_eq!(culler.classify(&outside, all), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneCuller {
    planes: CullPlanes,
    /// How many planes.
    count: usize,
    /// The margins [`classify`](Self::classify) uses.
    margins: BoxMargins,
}

/// The planes, laid out for their count: a query copies its culler into every frame it
/// is localized to, so it stays small (about 170 bytes for a box or a frustum).
#[derive(Clone, Debug, PartialEq)]
enum CullPlanes {
    /// At most [`LANES`] planes (boxes and frustums), plane-parallel: all tested at
    /// once, without branches.
    Lanes(Lanes),
    /// More planes, one by one.
    Many(Vec<CullPlane>),
}

/// Planes tested together by [`PlaneCuller::classify_with`]'s fast path.
const LANES: usize = 8;
/// SIMD vectors of four planes each in [`Lanes`].
const QUADS: usize = LANES / 4;

/// Up to [`LANES`] planes, one array per component, four planes per SIMD vector (each
/// lane computes with the same IEEE operations as the scalar formula: the vectors only
/// cut the instruction count). Unused lanes hold a plane every box is inside; they are
/// outside the `active` masks anyway.
#[derive(Clone, Debug, PartialEq)]
struct Lanes {
    nx: [Vec4; QUADS],
    ny: [Vec4; QUADS],
    nz: [Vec4; QUADS],
    offset: [Vec4; QUADS],
    offset_margin: [Vec4; QUADS],
}

impl Lanes {
    /// Plane `4q + lane`'s value at a corner of each of four boxes: per axis, the
    /// larger (`Vec4::max`: the corner furthest inside the plane) or the smaller
    /// (`Vec4::min`: furthest outside) of the normal component times the box's bounds.
    #[inline(always)]
    fn corner_values(
        &self,
        q: usize,
        lane: usize,
        b: &Aabb4,
        pick: fn(Vec4, Vec4) -> Vec4,
    ) -> Vec4 {
        let (nx, ny, nz) = (
            Vec4::splat(self.nx[q][lane]),
            Vec4::splat(self.ny[q][lane]),
            Vec4::splat(self.nz[q][lane]),
        );
        let x = pick(nx * b.min_x, nx * b.max_x);
        let y = pick(ny * b.min_y, ny * b.max_y);
        let z = pick(nz * b.min_z, nz * b.max_z);
        x + y + z + Vec4::splat(self.offset[q][lane])
    }
}

/// [`Lanes`] being filled, one plain array per component: writing a `Vec4` lane by
/// index costs a branch per write. Lanes past the planes are unused (a plane every box
/// is inside).
struct LaneArrays {
    nx: [f32; LANES],
    ny: [f32; LANES],
    nz: [f32; LANES],
    offset: [f32; LANES],
    offset_margin: [f32; LANES],
}

impl Default for LaneArrays {
    fn default() -> Self {
        LaneArrays {
            nx: [0.0; LANES],
            ny: [0.0; LANES],
            nz: [0.0; LANES],
            offset: [1.0; LANES],
            offset_margin: [0.0; LANES],
        }
    }
}

impl LaneArrays {
    /// Puts `plane` in lane `k` (below [`LANES`]).
    #[inline]
    fn set(&mut self, k: usize, plane: &CullPlane) {
        self.nx[k] = plane.normal.x;
        self.ny[k] = plane.normal.y;
        self.nz[k] = plane.normal.z;
        self.offset[k] = plane.offset;
        self.offset_margin[k] = plane.offset_margin;
    }

    fn into_lanes(self) -> Lanes {
        let quads = |v: [f32; LANES]| std::array::from_fn(|q| Vec4::from_slice(&v[4 * q..]));
        Lanes {
            nx: quads(self.nx),
            ny: quads(self.ny),
            nz: quads(self.nz),
            offset: quads(self.offset),
            offset_margin: quads(self.offset_margin),
        }
    }
}

/// `x` as `f32`, rounded up.
fn f32_up(x: f64) -> f32 {
    (x as f32).next_up()
}

/// `x` (not negative, or NaN) as `f32`, rounded up: the next `f32` above its rounding,
/// or NaN where [`f32_up`] gives infinity (callers refuse both). One integer add where
/// `next_up` takes branches for the signs and the special values.
#[inline]
fn f32_up_not_negative(x: f64) -> f32 {
    f32::from_bits((x as f32).to_bits().wrapping_add(1))
}

impl PlaneCuller {
    /// Prepares `planes` (any scale, non-zero normals) for boxes whose coordinates are at
    /// most `scale` in magnitude; a box is outside a plane only if it is beyond it by more
    /// than `pad`. `None` when there are more than [`MAX_CULLED_PLANES`] planes or they
    /// do not fit in `f32` (the caller then falls back to its own `f64` tests).
    pub fn new(planes: &[DVec4], pad: f64, scale: f64) -> Option<PlaneCuller> {
        let mut culler = PlaneCuller::for_planes(planes)?;
        culler.margins = culler.margins_for(pad, scale)?;
        Some(culler)
    }

    /// The planes alone, for [`classify_with`](Self::classify_with) and margins from
    /// [`margins_for`](Self::margins_for) (until margins are given, [`classify`](Self::classify)
    /// takes every box as crossing every plane). Splitting the two lets a query prepare
    /// its planes once per frame and only compute two numbers per BVH.
    pub fn for_planes(planes: &[DVec4]) -> Option<PlaneCuller> {
        if planes.len() > MAX_CULLED_PLANES {
            return None;
        }
        let prepare = |p: &DVec4| {
            // `length_at_any_scale`, its one test of the common case also the check that the
            // length is usable (tested apart, the two cost the culler half again as
            // much: +230 instructions for six planes).
            let length = p.truncate().length();
            let length = if NORMAL_LENGTHS.contains(&length) {
                length
            } else {
                let exact = scaled_length(p.truncate());
                if !(exact > 0.0 && exact.is_finite()) {
                    return None;
                }
                exact
            };
            // One division, not four: the margins dwarf the extra rounding.
            let unit = *p * length.recip();
            let plane = CullPlane {
                normal: unit.truncate().as_vec3(),
                offset: unit.w as f32,
                offset_margin: f32_up_not_negative(ROUNDING_MARGIN * unit.w.abs()),
            };
            // A unit normal's components are finite: only the offset's two can fail.
            (plane.offset.is_finite() & plane.offset_margin.is_finite()).then_some(plane)
        };
        let count = planes.len();
        // Most polytopes (boxes, frustums) fit the lanes: written there directly, as this
        // runs for every frame a query is localized to.
        let planes = if count <= LANES {
            let mut lanes = LaneArrays::default();
            for (k, p) in planes.iter().enumerate() {
                lanes.set(k, &prepare(p)?);
            }
            CullPlanes::Lanes(lanes.into_lanes())
        } else {
            CullPlanes::Many(planes.iter().map(prepare).collect::<Option<_>>()?)
        };
        Some(PlaneCuller {
            planes,
            count,
            margins: BoxMargins {
                inside: f32::INFINITY,
                outside: f32::INFINITY,
            },
        })
    }

    /// The margins for boxes whose coordinates are at most `scale` in magnitude, with an
    /// outward `pad`; `None` when they do not fit in `f32`.
    pub fn margins_for(&self, pad: f64, scale: f64) -> Option<BoxMargins> {
        let common = ROUNDING_MARGIN * (3.0 * scale.abs() + pad.abs()) + f64::MIN_POSITIVE;
        let margins = BoxMargins {
            inside: f32_up(common),
            outside: f32_up(pad.abs() + common),
        };
        (margins.inside.is_finite() && margins.outside.is_finite()).then_some(margins)
    }

    /// The mask with every plane active.
    pub fn all_planes(&self) -> u64 {
        match self.count {
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// Classifies a box against the `active` planes (bit `k` for plane `k`) with the
    /// margins given at construction: see [`classify_with`](Self::classify_with).
    #[inline]
    pub fn classify(&self, b: &Aabb, active: u64) -> Option<u64> {
        self.classify_with(b, active, self.margins)
    }

    /// Classifies a box against the `active` planes (bit `k` for plane `k`): `None` when
    /// it is certainly outside one of them, else the active planes it may cross (`0`:
    /// certainly inside every plane).
    #[inline(always)]
    pub fn classify_with(&self, b: &Aabb, active: u64, margins: BoxMargins) -> Option<u64> {
        let l = match &self.planes {
            CullPlanes::Lanes(l) => l,
            CullPlanes::Many(planes) => {
                return Self::classify_one_by_one(planes, b, active, margins)
            }
        };
        // Per plane, the values at the corners furthest along and against the normal:
        // per axis the larger and smaller of the two products (the same products,
        // summed in the same order, as the dot with the chosen corner). A NaN product
        // (a zero normal component times an infinite corner) makes its plane neither
        // "outside" nor "inside": the conservative answer.
        let (mut outside, mut crossed) = (0u32, 0u32);
        let (min, max) = (b.min, b.max);
        for q in 0..QUADS {
            let (x0, x1) = (l.nx[q] * min.x, l.nx[q] * max.x);
            let (y0, y1) = (l.ny[q] * min.y, l.ny[q] * max.y);
            let (z0, z1) = (l.nz[q] * min.z, l.nz[q] * max.z);
            let far = x0.max(x1) + y0.max(y1) + z0.max(z1) + l.offset[q];
            let near = x0.min(x1) + y0.min(y1) + z0.min(z1) + l.offset[q];
            let outside_below = -(l.offset_margin[q] + margins.outside);
            outside |= far.cmplt(outside_below).bitmask() << (4 * q);
            let inside_above = l.offset_margin[q] + margins.inside;
            crossed |= (!near.cmpgt(inside_above)).bitmask() << (4 * q);
        }
        let active = active as u32 & ((1 << LANES) - 1);
        (outside & active == 0).then_some(u64::from(crossed & active))
    }

    /// Whether the box may meet the polytope: `false` only when it is certainly outside
    /// one of the planes, with the margins given at construction. The same answer as
    /// `classify(b, all_planes()).is_some()`, at half the work.
    #[inline]
    pub fn overlaps(&self, b: &Aabb) -> bool {
        let l = match &self.planes {
            CullPlanes::Lanes(l) => l,
            CullPlanes::Many(_) => return self.classify(b, self.all_planes()).is_some(),
        };
        // Unused lanes are never outside: no mask needed.
        let (min, max) = (b.min, b.max);
        let mut outside = false;
        for q in 0..QUADS {
            let x = (l.nx[q] * min.x).max(l.nx[q] * max.x);
            let y = (l.ny[q] * min.y).max(l.ny[q] * max.y);
            let z = (l.nz[q] * min.z).max(l.nz[q] * max.z);
            let far = x + y + z + l.offset[q];
            outside |= far
                .cmplt(-(l.offset_margin[q] + self.margins.outside))
                .any();
        }
        !outside
    }

    /// [`overlaps`](Self::overlaps) for four boxes at once (bit `k` for box `k`): the
    /// same arithmetic, lane by lane.
    #[inline]
    pub fn overlapping(&self, b: &Aabb4) -> u32 {
        self.overlapping_with(b, self.margins)
    }

    /// [`overlapping`](Self::overlapping) with the given margins: the boxes certainly
    /// outside one of the planes (all of them tested, active or not: a box outside any
    /// plane holds nothing the polytope meets) are dropped.
    #[inline]
    pub fn overlapping_with(&self, b: &Aabb4, margins: BoxMargins) -> u32 {
        let l = match &self.planes {
            CullPlanes::Lanes(l) => l,
            CullPlanes::Many(planes) => {
                return self.four_one_by_one(planes, b, margins, |c| c.is_some());
            }
        };
        let mut outside = 0;
        for k in 0..self.count {
            let (q, lane) = (k / 4, k % 4);
            let far = l.corner_values(q, lane, b, Vec4::max);
            let below = -(l.offset_margin[q][lane] + margins.outside);
            outside |= far.cmplt(Vec4::splat(below)).bitmask();
        }
        !outside & 0b1111
    }

    /// The margins with the outward pad on the inside as well: for boxes whose contents
    /// are tested exactly in another frame than the planes' (a world tree's triangles,
    /// clipped in their instances' frames), where the rounding the pad allows for goes
    /// either way. A box inside a plane by these margins holds only points that the
    /// exact test finds inside it.
    #[inline]
    pub fn margins_padded_both_ways(&self) -> BoxMargins {
        BoxMargins {
            inside: self.margins.outside,
            outside: self.margins.outside,
        }
    }

    /// Which of four boxes are certainly inside every plane with `margins` (bit `k` for
    /// box `k`): three-mesh-bvh's `CONTAINED`, the boxes a walk takes whole. The same
    /// answer as `classify_with(&b.get(k), all_planes(), margins) == Some(0)` lane by
    /// lane, four boxes at a time (callers mask the lanes in use).
    #[inline]
    pub fn inside_every_plane(&self, b: &Aabb4, margins: BoxMargins) -> u32 {
        let l = match &self.planes {
            CullPlanes::Lanes(l) => l,
            CullPlanes::Many(planes) => {
                return self.four_one_by_one(planes, b, margins, |c| c == Some(0));
            }
        };
        let mut inside = 0b1111;
        for k in 0..self.count {
            let (q, lane) = (k / 4, k % 4);
            let near = l.corner_values(q, lane, b, Vec4::min);
            let above = l.offset_margin[q][lane] + margins.inside;
            inside &= near.cmpgt(Vec4::splat(above)).bitmask();
        }
        inside
    }

    /// Which of the first `count` decoded triangles of a leaf (in world coordinates:
    /// decoded with the origin at zero) are certainly outside one of the `active` planes
    /// (bit `k` for plane `k`; a walk passes those its leaf's box may cross): all three
    /// corners below it by more than the margins given at construction and the
    /// decoding's error. Bit `k` set for triangle `k`; the others may meet the polytope.
    #[inline]
    pub fn triangles_outside(&self, t: &TriangleLanes, count: usize, active: u64) -> u32 {
        let valid = (1u32 << count) - 1;
        let outside_of = |nx: f32, ny: f32, nz: f32, offset: f32, below: f32| {
            let value = |p: &[Vec4; 3]| {
                Vec4::splat(nx) * p[0]
                    + Vec4::splat(ny) * p[1]
                    + Vec4::splat(nz) * p[2]
                    + Vec4::splat(offset)
            };
            let below = Vec4::splat(below);
            (value(&t.a).cmplt(below) & value(&t.b).cmplt(below) & value(&t.c).cmplt(below))
                .bitmask()
        };
        // A unit normal: a corner off by `error` changes its value by at most that.
        let slack = self.margins.outside + t.error;
        let mut outside = 0;
        let mut remaining = active & self.all_planes();
        while remaining != 0 {
            let k = remaining.trailing_zeros() as usize;
            remaining &= remaining - 1;
            outside |= match &self.planes {
                CullPlanes::Lanes(l) => {
                    let (q, lane) = (k / 4, k % 4);
                    outside_of(
                        l.nx[q][lane],
                        l.ny[q][lane],
                        l.nz[q][lane],
                        l.offset[q][lane],
                        -(l.offset_margin[q][lane] + slack),
                    )
                }
                CullPlanes::Many(planes) => {
                    let p = &planes[k];
                    outside_of(
                        p.normal.x,
                        p.normal.y,
                        p.normal.z,
                        p.offset,
                        -(p.offset_margin + slack),
                    )
                }
            };
        }
        outside & valid
    }

    /// Which of four boxes [`classify_one_by_one`](Self::classify_one_by_one) against
    /// every plane gives a classification `keep` accepts (bit `k` for box `k`): the
    /// four-box tests for more planes than the lanes hold.
    fn four_one_by_one(
        &self,
        planes: &[CullPlane],
        b: &Aabb4,
        margins: BoxMargins,
        keep: impl Fn(Option<u64>) -> bool,
    ) -> u32 {
        let all = self.all_planes();
        (0..4)
            .filter(|&lane| {
                keep(Self::classify_one_by_one(
                    planes,
                    &b.get(lane),
                    all,
                    margins,
                ))
            })
            .fold(0, |mask, lane| mask | 1 << lane)
    }

    /// [`PlaneCuller::classify_with`] for more than [`LANES`] planes.
    fn classify_one_by_one(
        planes: &[CullPlane],
        b: &Aabb,
        active: u64,
        margins: BoxMargins,
    ) -> Option<u64> {
        let mut remaining = active;
        let mut crossed = 0;
        while remaining != 0 {
            let k = remaining.trailing_zeros() as usize;
            remaining &= remaining - 1;
            let p = &planes[k];
            let positive = p.normal.cmpge(Vec3::ZERO);
            // The corners furthest along and against the inward normal.
            let far = Vec3::select(positive, b.max, b.min);
            let near = Vec3::select(positive, b.min, b.max);
            // A NaN value (a zero normal component times an infinite corner) is neither
            // outside nor inside, as in the lanes' comparisons: hence `!(x > y)`, which
            // holds for NaN, where `x <= y` does not.
            if p.normal.dot(far) + p.offset < -(p.offset_margin + margins.outside) {
                return None;
            }
            let inside = p.normal.dot(near) + p.offset > p.offset_margin + margins.inside;
            crossed |= u64::from(!inside) << k;
        }
        Some(crossed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn rounding_up_by_bits_matches_next_up() {
        let values = [
            0.0,
            1e-50,
            f64::from(f32::from_bits(1)),
            3e-39,
            0.1,
            1.0,
            1.0 + 1e-12,
            123456.789,
            3.0e38,
            f64::from(f32::MAX),
        ];
        for x in values {
            let up = f32_up_not_negative(x);
            assert_eq!(up, f32_up(x), "{x}");
            assert!(f64::from(up) > x, "{x}");
        }
        // Past the largest `f32`: not finite either way, so refused either way.
        for x in [1e39, f64::INFINITY, f64::NAN] {
            assert!(
                !f32_up_not_negative(x).is_finite() && !f32_up(x).is_finite(),
                "{x}"
            );
        }
    }

    fn cube_planes() -> Vec<DVec4> {
        vec![
            DVec4::new(1.0, 0.0, 0.0, 0.0),
            DVec4::new(-1.0, 0.0, 0.0, 1.0),
            DVec4::new(0.0, 2.0, 0.0, 0.0), // scale must not matter
            DVec4::new(0.0, -1.0, 0.0, 1.0),
            DVec4::new(0.0, 0.0, 1.0, 0.0),
            DVec4::new(0.0, 0.0, -1.0, 1.0),
        ]
    }

    fn b(min: f32, max: f32) -> Aabb {
        Aabb {
            min: Vec3::splat(min),
            max: Vec3::splat(max),
        }
    }

    #[test]
    fn inside_crossing_outside() {
        let c = PlaneCuller::new(&cube_planes(), 0.0, 10.0).unwrap();
        let all = c.all_planes();
        assert_eq!(all, 0b11_1111);
        assert_eq!(c.classify(&b(0.25, 0.75), all), Some(0));
        assert_eq!(c.classify(&b(0.5, 1.5), all), Some(0b10_1010));
        assert_eq!(c.classify(&b(2.0, 3.0), all), None);
        // Only the active planes are looked at.
        assert_eq!(c.classify(&b(2.0, 3.0), 0b01_0101), Some(0));
    }

    #[test]
    fn a_box_touching_a_plane_is_not_inside_it() {
        // The box [0, 0.5]^3 touches x = 0: a vertex there has plane value 0, so the
        // plane must stay active (the clipper keeps such vertices, but the culler
        // must not claim more than it knows).
        let c = PlaneCuller::new(&cube_planes(), 0.0, 10.0).unwrap();
        let crossed = c.classify(&b(0.0, 0.5), c.all_planes()).unwrap();
        assert_eq!(crossed & 0b1, 0b1);
        // And a box touching from outside is not culled.
        assert!(c.classify(&b(-1.0, 0.0), c.all_planes()).is_some());
    }

    #[test]
    fn inside_means_every_vertex_has_a_positive_f64_value() {
        // A tilted plane far from the origin; boxes sampled around it.
        let n = DVec3::new(0.3, -0.7, 0.2);
        let plane = DVec4::new(n.x, n.y, n.z, 1.0e6);
        let c = PlaneCuller::new(&[plane], 0.0, 4.0e6).unwrap();
        let mut seed = 17u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
        };
        for _ in 0..10_000 {
            let centre = DVec3::new(next(), next(), next()) * 3.0e6;
            let half = next().abs() * 10.0;
            let bx = Aabb::from_f64_outward(centre - half, centre + half);
            if c.classify(&bx, 1) == Some(0) {
                for k in 0..8 {
                    let corner = DVec3::new(
                        if k & 1 == 0 { bx.min.x } else { bx.max.x } as f64,
                        if k & 2 == 0 { bx.min.y } else { bx.max.y } as f64,
                        if k & 4 == 0 { bx.min.z } else { bx.max.z } as f64,
                    );
                    assert!(plane.truncate().dot(corner) + plane.w > 0.0);
                }
            }
        }
    }

    #[test]
    fn overlaps_is_classify_not_outside() {
        let c = PlaneCuller::new(&cube_planes(), 0.0, 10.0).unwrap();
        for lo in [-3.0f32, -1.0, -0.5, 0.0, 0.25, 0.9, 1.0, 2.0] {
            for size in [0.1f32, 0.5, 1.0, 4.0] {
                let bx = b(lo, lo + size);
                assert_eq!(
                    c.overlaps(&bx),
                    c.classify(&bx, c.all_planes()).is_some(),
                    "box [{lo}, {}]",
                    lo + size
                );
            }
        }
    }

    #[test]
    fn four_boxes_at_once_agree_with_one_at_a_time() {
        let twice: Vec<DVec4> = cube_planes().into_iter().cycle().take(12).collect();
        let unbounded_x = Aabb {
            min: Vec3::new(f32::NEG_INFINITY, 0.25, 0.25),
            max: Vec3::new(f32::INFINITY, 0.75, 0.75),
        };
        let mut candidates = vec![unbounded_x];
        for lo in [-3.0f32, -1.0, -0.5, 0.0, 0.25, 0.9, 1.0, 2.0] {
            for size in [0.1f32, 0.5, 1.0, 4.0] {
                candidates.push(b(lo, lo + size));
            }
        }
        for planes in [cube_planes(), twice] {
            // A pad of a tenth, on the inside too by the padded margins.
            let c = PlaneCuller::new(&planes, 0.1, 10.0).unwrap();
            let (plain, padded) = (c.margins, c.margins_padded_both_ways());
            let all = c.all_planes();
            let mut inside = [0, 0];
            for four in candidates.chunks(4) {
                let mut boxes = Aabb4::EMPTY;
                for (lane, bx) in four.iter().enumerate() {
                    boxes.set(lane, bx);
                }
                let mask = c.overlapping(&boxes);
                for (lane, bx) in four.iter().enumerate() {
                    assert_eq!(mask & (1 << lane) != 0, c.overlaps(bx), "box {bx:?}");
                }
                for (k, margins) in [plain, padded].into_iter().enumerate() {
                    let mask = c.inside_every_plane(&boxes, margins);
                    for (lane, bx) in four.iter().enumerate() {
                        let one = c.classify_with(bx, all, margins) == Some(0);
                        assert_eq!(mask & (1 << lane) != 0, one, "box {bx:?}");
                        inside[k] += usize::from(one);
                    }
                }
            }
            // [0.25, 0.35] and [0.25, 0.75], at least 0.25 from every face, are inside
            // by both margins; the boxes touching a face ([0, 0.1], [0.9, 1]) by neither.
            assert_eq!(inside, [2, 2], "{} planes", planes.len());
        }
        let c = PlaneCuller::new(&cube_planes(), 0.3, 10.0).unwrap();
        let mut boxes = Aabb4::EMPTY;
        boxes.set(0, &b(0.25, 0.35));
        boxes.set(1, &b(0.4, 0.6));
        // 0.25 from a face: inside by the plain margins, not past a pad of 0.3; the
        // middle box is 0.4 from every face.
        assert_eq!(c.inside_every_plane(&boxes, c.margins) & 0b11, 0b11);
        assert_eq!(
            c.inside_every_plane(&boxes, c.margins_padded_both_ways()) & 0b11,
            0b10
        );
    }

    #[test]
    fn more_planes_than_lanes_classify_one_by_one_alike() {
        // The cube's planes twice: 12 planes, past the 8 lanes.
        let twice: Vec<DVec4> = cube_planes().into_iter().cycle().take(12).collect();
        let many = PlaneCuller::new(&twice, 0.0, 10.0).unwrap();
        let lanes = PlaneCuller::new(&cube_planes(), 0.0, 10.0).unwrap();
        assert_eq!(many.all_planes(), 0xfff);
        for (lo, hi) in [(0.25, 0.75), (0.5, 1.5), (2.0, 3.0), (-1.0, 0.0)] {
            let one_by_one = many.classify(&b(lo, hi), many.all_planes());
            let together = lanes.classify(&b(lo, hi), lanes.all_planes());
            // Each plane's bit appears twice, 6 apart.
            assert_eq!(one_by_one, together.map(|m| m | m << 6), "box [{lo}, {hi}]");
        }
    }

    #[test]
    fn infinite_boxes_are_never_culled_nor_called_inside() {
        // Axis-aligned planes have zero normal components: against an infinite corner
        // their products are NaN. The answer must stay conservative: such a box may
        // cross the plane, and is never outside it.
        let c = PlaneCuller::new(&cube_planes(), 0.0, 10.0).unwrap();
        let all = c.all_planes();
        let unbounded_x = Aabb {
            min: Vec3::new(f32::NEG_INFINITY, 0.25, 0.25),
            max: Vec3::new(f32::INFINITY, 0.75, 0.75),
        };
        // Truly crossed: the two x planes. The NaN products may add others, never drop.
        let crossed = c.classify(&unbounded_x, all).unwrap();
        assert_eq!(crossed & 0b11, 0b11);
        assert!(c.overlaps(&unbounded_x));
        let everything = Aabb {
            min: Vec3::NEG_INFINITY,
            max: Vec3::INFINITY,
        };
        assert_eq!(c.classify(&everything, all), Some(all));
        assert!(c.overlaps(&everything));
        // The same past the lanes, one plane at a time: 12 planes, the cube's twice.
        let twice: Vec<DVec4> = cube_planes().into_iter().cycle().take(12).collect();
        let many = PlaneCuller::new(&twice, 0.0, 10.0).unwrap();
        let all = many.all_planes();
        let crossed = many.classify(&unbounded_x, all).unwrap();
        assert_eq!(crossed & 0b11_0000_0011, 0b11_0000_0011);
        assert!(many.overlaps(&unbounded_x));
        assert_eq!(many.classify(&everything, all), Some(all));
        let mut four = Aabb4::EMPTY;
        (0..4).for_each(|lane| four.set(lane, &everything));
        assert_eq!(many.overlapping(&four), 0b1111);
    }

    #[test]
    fn too_many_or_degenerate_planes_are_refused() {
        assert!(PlaneCuller::new(&[DVec4::X; 65], 0.0, 1.0).is_none());
        assert!(PlaneCuller::new(&[DVec4::new(0.0, 0.0, 0.0, 1.0)], 0.0, 1.0).is_none());
    }
}
