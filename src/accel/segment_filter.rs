//! [`SegmentFilter`]: a segment prepared for a [`WorldBvh`](super::WorldBvh) walk in
//! `f32`: four node boxes at a time ([`WideSegmentSlab`]) and four leaf triangles at a
//! time, never rejecting a triangle the exact test could hit.
//!
//! The exact test ([`intersect_segment_triangle`](crate::intersectors::intersect_segment_triangle))
//! hits a triangle only when its three edge functions `E(p, q) = d · ((p − s) × (q − s))`
//! share a sign (zeros allowed). The filter computes them in `f32` from the quantized
//! corners ([`TriangleLanes`]) and rejects a triangle only when one is below `−tol` and
//! another above `tol`, where `tol` bounds everything that separates its values from the
//! exact ones:
//!
//! * the corners: each decoded corner is within `r` of the true one (quantization and
//!   decoding, [`TriangleLanes::error`]), and the segment's start moved by its rounding
//!   to `f32`; moving the corners by `r` changes `E` by at most
//!   `|d| (|p − s| + |q − s| + 3r) r`;
//! * the arithmetic: the `f32` products and sums, and `d` rounded to `f32`, change `E` by
//!   a few units of `2^-24` of `|d| |p − s| |q − s|`; `2^-17` of it is allowed;
//! * the exact test itself runs in `f64` in the instance's frame, where a linear map
//!   scales all three values by its determinant (signs agree, or all flip): its own
//!   rounding, some `2^-50` of the same product times the map's condition number, is
//!   far inside the `2^-17` for the transforms the scene index places in world space
//!   (condition number at most `10^6`, see [`SceneIndex`](super::SceneIndex)).
//!
//! Anything not finite (a segment beyond the `f32` range, a NaN from an overflow) makes
//! the comparisons false, so the triangle is kept: the filter only ever errs towards
//! the exact test.

use glam::{BVec4A, DVec3, Vec3, Vec4};

use super::leaf_triangles::{LeafTriangle, TriangleLanes};
use super::{Aabb4, SegmentSlab, WideEntries, WideSegmentSlab};

/// The relative allowance for the `f32` arithmetic of the edge functions.
const ARITHMETIC: f32 = 1.0 / 131_072.0; // 2^-17

/// A closed segment `start + t·direction`, `t ∈ [0, 1]`, ready for a world walk.
///
/// ```
/// use glam::{DVec3, Vec3, Vec4};
/// use scene_intersect::accel::{LeafTriangle, SegmentFilter};
///
/// // A segment down through the triangle (0,0,0) (2,0,0) (0,0,2), and one beside it.
/// let tri = [DVec3::ZERO, DVec3::new(2.0, 0.0, 0.0), DVec3::new(0.0, 0.0, 2.0)];
/// let (min, max) = (Vec3::ZERO, Vec3::new(2.0, 0.0, 2.0));
/// let records = [LeafTriangle::new(0, tri, min, max); 4];
/// let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
/// let through = SegmentFilter::new(DVec3::new(0.5, 1.0, 0.5), DVec3::new(0.0, -2.0, 0.0), 0.0, 2.0);
/// assert_eq!(through.triangles(&records, 1, splat(min), splat(max)), 0b1);
/// let beside = SegmentFilter::new(DVec3::new(1.5, 1.0, 1.5), DVec3::new(0.0, -2.0, 0.0), 0.0, 2.0);
/// assert_eq!(beside.triangles(&records, 1, splat(min), splat(max)), 0b0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SegmentFilter {
    slab: WideSegmentSlab,
    start: Vec3,
    direction: [Vec4; 3],
    /// An upper bound of `|direction|` (`f32`).
    length: f32,
    /// Bound on the distance between the start and its `f32` rounding.
    start_error: f32,
    /// Everything passes (the segment does not fit in `f32`).
    accept_all: bool,
}

impl SegmentFilter {
    /// Prepares the segment from `start` along `direction` for boxes grown by `pad`
    /// whose coordinates are at most `scale` in magnitude (see [`SegmentSlab::new`]).
    pub fn new(start: DVec3, direction: DVec3, pad: f64, scale: f64) -> SegmentFilter {
        let slab = SegmentSlab::new(start, direction, pad, scale);
        let (s, d) = (start.as_vec3(), direction.as_vec3());
        let accept_all = !(s.is_finite() && d.is_finite() && d.length().is_finite());
        SegmentFilter {
            slab: slab.wide(),
            start: s,
            direction: [Vec4::splat(d.x), Vec4::splat(d.y), Vec4::splat(d.z)],
            length: d.length() * (1.0 + 1.0 / 1_048_576.0),
            start_error: (start.abs().max_element() / 4_194_304.0) as f32,
            accept_all,
        }
    }

    /// Which of four node boxes the segment may enter, with lower bounds of the entry
    /// parameters (see [`WideSegmentSlab::entries`]).
    #[inline(always)]
    pub fn entries(&self, boxes: &Aabb4) -> WideEntries {
        self.slab.entries(boxes)
    }

    /// Which of the first `count` triangles of a leaf (records quantized in the box
    /// `[min, max]`, each corner splat over four lanes; four records readable) the
    /// segment may hit: bit `k` for record `k`. Never clears the bit of a triangle the
    /// exact test hits.
    #[inline(always)]
    pub fn triangles(
        &self,
        records: &[LeafTriangle],
        count: usize,
        min: [Vec4; 3],
        max: [Vec4; 3],
    ) -> u32 {
        let valid = (1u32 << count) - 1;
        if self.accept_all {
            return valid;
        }
        let t = TriangleLanes::decode(records, min, max, self.start);
        let [dx, dy, dz] = self.direction;
        let edge = |p: &[Vec4; 3], q: &[Vec4; 3]| {
            dx * (p[1] * q[2] - p[2] * q[1])
                + dy * (p[2] * q[0] - p[0] * q[2])
                + dz * (p[0] * q[1] - p[1] * q[0])
        };
        let (e_ab, e_bc, e_ca) = (edge(&t.a, &t.b), edge(&t.b, &t.c), edge(&t.c, &t.a));
        let norm = |p: &[Vec4; 3]| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        let (na, nb, nc) = (norm(&t.a), norm(&t.b), norm(&t.c));
        let r = Vec4::splat(t.error + self.start_error);
        let three_r = r * 3.0;
        let length = Vec4::splat(self.length);
        let arithmetic = Vec4::splat(ARITHMETIC);
        let tol = |np: Vec4, nq: Vec4| length * ((np + nq + three_r) * r + arithmetic * np * nq);
        let (t_ab, t_bc, t_ca) = (tol(na, nb), tol(nb, nc), tol(nc, na));
        let negative: BVec4A = e_ab.cmplt(-t_ab) | e_bc.cmplt(-t_bc) | e_ca.cmplt(-t_ca);
        let positive: BVec4A = e_ab.cmpgt(t_ab) | e_bc.cmpgt(t_bc) | e_ca.cmpgt(t_ca);
        !(negative & positive).bitmask() & valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intersectors::intersect_segment_triangle;
    use glam::Vec3;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn point(&mut self, scale: f64, offset: DVec3) -> DVec3 {
            offset + DVec3::new(self.next(), self.next(), self.next()) * scale
        }
    }

    fn splat(v: Vec3) -> [Vec4; 3] {
        [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)]
    }

    /// The leaf box of some triangles: their corners' box rounded outward.
    fn leaf_box(triangles: &[[DVec3; 3]]) -> (Vec3, Vec3) {
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for t in triangles {
            for p in t {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
        }
        let b = crate::accel::Aabb::from_f64_outward(lo, hi);
        (b.min, b.max)
    }

    /// Segments aimed exactly at corners, at points of edges and inside triangles
    /// (where the exact test is on a knife's edge), from far away and close by: the
    /// filter keeps every triangle the exact test hits.
    #[test]
    fn never_rejects_an_exact_hit() {
        let mut rng = Rng(3);
        let mut hits = 0;
        for trial in 0..4000 {
            let offset = match trial % 4 {
                0 => DVec3::ZERO,
                1 => DVec3::new(1e4, -2e3, 7e3),
                2 => DVec3::new(-3.0e5, 1.0e5, 2.5e5),
                _ => DVec3::new(0.5, 0.5, 0.5),
            };
            let size = [1e-3, 1.0, 50.0][trial % 3];
            let mut tris = [[DVec3::ZERO; 3]; 4];
            for t in &mut tris {
                let a = rng.point(size, offset);
                *t = [a, rng.point(size, offset), rng.point(size, offset)];
                if trial % 5 == 0 {
                    // Nearly degenerate: a sliver.
                    t[2] = t[0] + (t[1] - t[0]) * rng.next() + DVec3::splat(size * 1e-7);
                }
            }
            let (min, max) = leaf_box(&tris);
            let records: Vec<LeafTriangle> = (0..4)
                .map(|k| LeafTriangle::new(k as u32, tris[k], min, max))
                .collect();
            let target_tri = tris[trial % 4];
            let (wa, wb) = (rng.next(), rng.next());
            let target = match trial % 3 {
                0 => target_tri[trial % 3],
                1 => target_tri[0] + (target_tri[1] - target_tri[0]) * wa,
                _ => {
                    let (u, v) = if wa + wb > 1.0 {
                        (1.0 - wa, 1.0 - wb)
                    } else {
                        (wa, wb)
                    };
                    target_tri[0]
                        + (target_tri[1] - target_tri[0]) * u
                        + (target_tri[2] - target_tri[0]) * v
                }
            };
            let from =
                target + (rng.point(2.0, DVec3::splat(-1.0))) * size * [1.0, 1e3, 1e-2][trial % 3];
            let direction = (target - from) * (1.0 + rng.next());
            let scale = offset.abs().max_element() + size * 4.0;
            let filter = SegmentFilter::new(from, direction, 0.0, scale);
            let mask = filter.triangles(&records, 4, splat(min), splat(max));
            for (k, t) in tris.iter().enumerate() {
                if intersect_segment_triangle(from, direction, t[0], t[1], t[2]).is_some() {
                    hits += 1;
                    assert!(mask & (1 << k) != 0, "trial {trial}: triangle {k} rejected");
                }
            }
        }
        assert!(hits > 2000, "the test must aim: {hits} hits");
    }

    /// Segments that miss by a tenth of the triangle's size are rejected.
    #[test]
    fn rejects_clear_misses() {
        let tri = [
            DVec3::ZERO,
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(0.0, 0.0, 1.0),
        ];
        let (min, max) = leaf_box(&[tri]);
        let records = [LeafTriangle::new(0, tri, min, max); 4];
        let down = DVec3::new(0.0, -2.0, 0.0);
        for start in [
            DVec3::new(0.6, 1.0, 0.6),
            DVec3::new(-0.1, 1.0, 0.5),
            DVec3::new(0.5, 1.0, -0.1),
            DVec3::new(1.1, 1.0, 0.0),
        ] {
            let filter = SegmentFilter::new(start, down, 0.0, 2.0);
            assert_eq!(
                filter.triangles(&records, 4, splat(min), splat(max)),
                0,
                "{start}"
            );
        }
        // Only the first `count` lanes are ever reported.
        let filter = SegmentFilter::new(DVec3::new(0.2, 1.0, 0.2), down, 0.0, 2.0);
        assert_eq!(filter.triangles(&records, 3, splat(min), splat(max)), 0b111);
    }

    #[test]
    fn segments_beyond_f32_keep_everything() {
        let tri = [DVec3::ZERO, DVec3::X, DVec3::Z];
        let (min, max) = leaf_box(&[tri]);
        let records = [LeafTriangle::new(0, tri, min, max); 4];
        let filter = SegmentFilter::new(
            DVec3::new(1e300, 5.0, 5.0),
            DVec3::new(1.0, 0.0, 0.0),
            0.0,
            1.0,
        );
        assert_eq!(filter.triangles(&records, 2, splat(min), splat(max)), 0b11);
    }
}
