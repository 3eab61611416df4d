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
//!   to `f32`; moving the corners `p`, `q` by `Δp`, `Δq` changes `E` by
//!   `Δp · ((q − s) × d) + Δq · (d × (p − s)) + d · (Δp × Δq)`, at most
//!   `2 r U + |d| r²`, where `U` bounds `|(x − s) × d|` (`|d|` times the distance
//!   to the segment's line) over the points `x` of the leaf's box ([`SegmentFilter::leaf`]).
//!   A triangle the line nearly crosses lies close to it, so `U` is about `|d|` times
//!   the box's size, however far the start: bounding `|(x − s) × d|` by `|x − s| |d|`
//!   instead, as this filter once did, let a far segment through triangles it missed
//!   by a good part of their size (39 % of the candidates on littlest_tokyo);
//! * the arithmetic: with `u = 2^-24`, each component of the cross product `p′ × q′`
//!   (decoded corners, relative to the start) is off by at most `(2u + u²) M_i`, where
//!   `M_i` is the sum of its two products' magnitudes; the three products with `d` and
//!   the two sums add `γ₃ = 3u / (1 − 3u)` of `Σ |d_i c_i|`; so the computed `E` is
//!   within about `5u Σ |d_i| M_i ≤ 5√2 u |d| |p′| |q′|` of the exact value for the `f32`
//!   direction, and that direction, rounded from the true one, moves it by at most
//!   `u |d| |p′| |q′|` more: some `8.1u`, `2^-20.98`, of `|d| |p − s| |q − s|` in all.
//!   `2^-19` of it is allowed (a margin of 3.9), with `|p − s|` and `|q − s|` bounded
//!   once per leaf, by the farthest point of its box (plus `r`). (It was `2^-17` until
//!   2026-12-02, and dominated the tolerance of leaves far from the start: the
//!   all-hits segments of the bench passed 17 316 triangles on truck_town to the
//!   exact test, 3 448 of them hit, and 55 953 on littlest_tokyo, 46 453 hit; with
//!   `2^-19`, 15 054 and 51 780);
//! * the exact test itself runs in `f64` in the instance's frame, where a linear map
//!   scales all three values by its determinant (signs agree, or all flip): its own
//!   rounding, some `2^-50` of the same product times the map's *skew* (the product of
//!   its rows' lengths over its determinant: 1 for turns and scales along the frame's
//!   axes, up to the square of the condition number for shears), is far inside the
//!   margin for the transforms the scene index places in world space (skew at most
//!   `2^20`, see [`SceneIndex`](super::SceneIndex); a bound on the condition number
//!   alone, as this filter once relied on, let shears near `10^6` through, whose
//!   rounding reached `2^-13`); and the segment it tests is the one moved into that
//!   frame by the inverse the traversals compute, which for placed instances moves
//!   points there and back within `2^-32` of their coordinates, far inside what the
//!   start's rounding and the [`WorldFrame`]'s pad allow.
//!
//! Anything not finite (a segment beyond the `f32` range, a NaN from an overflow) makes
//! the comparisons false, so the triangle is kept: the filter only ever errs towards
//! the exact test.

use glam::{BVec4A, DVec3, Vec3, Vec3A, Vec4};

use super::leaf_triangles::{LeafTriangle, TriangleLanes};
use super::{Aabb, Aabb4, SegmentSlab, WideEntries, WideSegmentSlab, WorldFrame};

/// The relative allowance for the `f32` arithmetic of the edge functions.
const ARITHMETIC: f32 = 1.0 / 524_288.0; // 2^-19

/// A closed segment `start + t·direction`, `t ∈ [0, 1]`, ready for a world walk.
///
/// ```
/// use glam::{DVec3, Vec3, Vec4};
/// use scene_intersect::accel::{Aabb, LeafTriangle, SegmentFilter};
///
/// // A segment down through the triangle (0,0,0) (2,0,0) (0,0,2), and one beside it.
/// let tri = [DVec3::ZERO, DVec3::new(2.0, 0.0, 0.0), DVec3::new(0.0, 0.0, 2.0)];
/// let (min, max) = (Vec3::ZERO, Vec3::new(2.0, 0.0, 2.0));
/// let records = [LeafTriangle::new(0, tri, min, max); 4];
/// let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
/// let leaf = Aabb { min, max };
/// let through = SegmentFilter::new(DVec3::new(0.5, 1.0, 0.5), DVec3::new(0.0, -2.0, 0.0), 0.0, 2.0);
/// let reach = through.leaf(&leaf);
/// assert_eq!(through.triangles(&records, 1, splat(min), splat(max), reach), 0b1);
/// let beside = SegmentFilter::new(DVec3::new(1.5, 1.0, 1.5), DVec3::new(0.0, -2.0, 0.0), 0.0, 2.0);
/// let reach = beside.leaf(&leaf);
/// assert_eq!(beside.triangles(&records, 1, splat(min), splat(max), reach), 0b0);
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
    /// The direction, for the leaves' reach ([`SegmentFilter::leaf`]).
    direction3: Vec3A,
    /// What the reach allows for rounding, over `|d|` (see [`SegmentFilter::leaf`]).
    slack: f32,
    /// Everything passes (the segment does not fit in `f32`).
    accept_all: bool,
}

/// What a [`SegmentFilter`] needs of a leaf's box (see [`SegmentFilter::leaf`]); a
/// bound that does not fit in `f32` (infinite or NaN) keeps every triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafReach {
    /// `2 U`, where `U` bounds `|(x − s) × d|` over the box's points `x`.
    twice: f32,
    /// A bound on `|x − s|` over the box's points `x`.
    far: f32,
}

impl SegmentFilter {
    /// Prepares the segment from `start` along `direction` for boxes grown by `pad`
    /// whose coordinates are at most `scale` in magnitude (see [`SegmentSlab::new`]).
    pub fn new(start: DVec3, direction: DVec3, pad: f64, scale: f64) -> SegmentFilter {
        let slab = SegmentSlab::new(start, direction, pad, scale);
        let (s, d) = (start.as_vec3(), direction.as_vec3());
        let accept_all = !(s.is_finite() && d.is_finite() && d.length().is_finite());
        let start_magnitude = start.abs().max_element();
        SegmentFilter {
            slab: slab.wide(),
            start: s,
            direction: [Vec4::splat(d.x), Vec4::splat(d.y), Vec4::splat(d.z)],
            length: d.length() * (1.0 + 1.0 / 1_048_576.0),
            start_error: (start_magnitude / 4_194_304.0) as f32,
            direction3: d.into(),
            // (Rounded to nearest: it holds four times what it must.)
            slack: ((scale.abs() + start_magnitude) / 262_144.0) as f32,
            accept_all,
        }
    }

    /// Which of four node boxes the segment may enter, with lower bounds of the entry
    /// parameters (see [`WideSegmentSlab::entries`]).
    #[inline(always)]
    pub fn entries(&self, boxes: &Aabb4) -> WideEntries {
        self.slab.entries(boxes)
    }

    /// [`new`](Self::new) for a world tree measured in `frame`: the segment from the
    /// world point `world_start` along the world vector `direction` is moved into the
    /// frame (`pad` is in the frame's units, as `scale` is), and both the boxes' pad and
    /// the corners' error allow for [`WorldFrame::pad`], the exact test's rounding of
    /// the absolute coordinates that the frame's smaller ones no longer bound. In the
    /// world's own frame this is [`new`](Self::new).
    ///
    /// ```
    /// use glam::DVec3;
    /// use scene_intersect::accel::{Aabb, SegmentFilter, WorldFrame};
    ///
    /// // A tree measured from (4·10^6, 0, 0): its box [0, 1]^3 is the world's
    /// // [4·10^6, 4·10^6 + 1] × [0, 1]^2.
    /// let frame = WorldFrame::around(DVec3::new(4.0e6, 0.0, 0.0));
    /// let unit = Aabb { min: glam::Vec3::ZERO, max: glam::Vec3::ONE };
    /// let down = |x: f64| {
    ///     let start = DVec3::new(4.0e6 + x, 2.0, 0.5);
    ///     SegmentFilter::in_frame(start, DVec3::new(0.0, -4.0, 0.0), 0.0, 1.0, &frame)
    /// };
    /// let mut boxes = scene_intersect::accel::Aabb4::EMPTY;
    /// boxes.set(0, &unit);
    /// assert_eq!(down(0.5).entries(&boxes).mask & 1, 1);
    /// // Beside the box by 0.1: in world `f32` that is below the unit in the last place.
    /// assert_eq!(down(1.1).entries(&boxes).mask & 1, 0);
    /// ```
    #[inline]
    pub fn in_frame(
        world_start: DVec3,
        direction: DVec3,
        pad: f64,
        scale: f64,
        frame: &WorldFrame,
    ) -> SegmentFilter {
        let absolute = frame.pad();
        let start = frame.point(world_start);
        let direction = frame.vector(direction);
        let mut filter = SegmentFilter::new(start, direction, pad + absolute, scale);
        if absolute > 0.0 {
            filter.start_error = ((f64::from(filter.start_error) + absolute) as f32).next_up();
        }
        filter
    }

    /// The reach of a leaf's box, for [`triangles`](Self::triangles): how far, times
    /// `|d|`, its points can be from the segment's line, and how far from its start, at
    /// most.
    ///
    /// A point of the box is within half its diagonal of the centre `c`, and
    /// `|(c − s) × d|` is `|d|` times the centre's distance to the line. Both are
    /// computed in `f32`; the rounding of `c`, of `s` and of the cross product's
    /// cancelling components is some `2^-20` of the coordinates' magnitude (times
    /// `|d|`), and four times that is added.
    #[inline]
    pub fn leaf(&self, leaf: &Aabb) -> LeafReach {
        let (min, max) = (Vec3A::from(leaf.min), Vec3A::from(leaf.max));
        let from_start = (min + max) * 0.5 - Vec3A::from(self.start);
        let across = from_start.cross(self.direction3).length();
        let half_diagonal = (max - min).length() * 0.5;
        let reach = across + self.length * (half_diagonal + self.slack);
        let far = from_start.length() + half_diagonal + self.slack;
        let grow = 1.0 + 1.0 / 1_048_576.0;
        LeafReach {
            twice: 2.0 * reach * grow,
            far: far * grow,
        }
    }

    /// Which of the first `count` triangles of a leaf (records quantized in the box
    /// `[min, max]`, each corner splat over four lanes; four records readable; `reach`
    /// from [`leaf`](Self::leaf) on the same box) the segment may hit: bit `k` for
    /// record `k`. Never clears the bit of a triangle the exact test hits.
    #[inline(always)]
    pub fn triangles(
        &self,
        records: &[LeafTriangle],
        count: usize,
        min: [Vec4; 3],
        max: [Vec4; 3],
        reach: LeafReach,
    ) -> u32 {
        let valid = (1u32 << count) - 1;
        if self.accept_all {
            return valid;
        }
        let t = TriangleLanes::decode(records, min, max, self.start);
        let edge = |p: &[Vec4; 3], q: &[Vec4; 3]| edge_values(&self.direction, p, q);
        let (e_ab, e_bc, e_ca) = (edge(&t.a, &t.b), edge(&t.b, &t.c), edge(&t.c, &t.a));
        // One tolerance for every edge of the leaf: the corners' share, 2 r U + |d| r²,
        // and the arithmetic's, for decoded corners at most `far + r` from the start.
        let r = t.error + self.start_error;
        let far = reach.far + r;
        let tol = (r * reach.twice + self.length * (r * r + ARITHMETIC * far * far))
            * (1.0 + 1.0 / 1_048_576.0);
        let (tol, below) = (Vec4::splat(tol), Vec4::splat(-tol));
        let negative: BVec4A = e_ab.cmplt(below) | e_bc.cmplt(below) | e_ca.cmplt(below);
        let positive: BVec4A = e_ab.cmpgt(tol) | e_bc.cmpgt(tol) | e_ca.cmpgt(tol);
        !(negative & positive).bitmask() & valid
    }
}

/// The edge function `d · (p × q)` of four edges side by side (`p` and `q` relative to
/// the start; each a vector of four lanes per coordinate), in the order the module
/// docs' error bound assumes.
#[inline(always)]
fn edge_values(d: &[Vec4; 3], p: &[Vec4; 3], q: &[Vec4; 3]) -> Vec4 {
    let [dx, dy, dz] = *d;
    dx * (p[1] * q[2] - p[2] * q[1])
        + dy * (p[2] * q[0] - p[0] * q[2])
        + dz * (p[0] * q[1] - p[1] * q[0])
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

    /// The filter's answer for the first `count` records of a leaf with the box
    /// `[min, max]`.
    fn filtered(
        filter: &SegmentFilter,
        records: &[LeafTriangle],
        count: usize,
        min: Vec3,
        max: Vec3,
    ) -> u32 {
        let reach = filter.leaf(&Aabb { min, max });
        filter.triangles(records, count, splat(min), splat(max), reach)
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

    /// The `f32` edge functions stay within the module docs' bound of their exact values
    /// for the true (`f64`) direction, `8.1u` of `|d| |p| |q|` (`u = 2^-24`), whatever
    /// the magnitudes, also where the cross product cancels (`q` nearly along `p`) and
    /// where the direction nearly lies in the edge's plane (the sum cancels); and
    /// [`ARITHMETIC`] allows at least four times the worst error seen.
    #[test]
    fn the_arithmetic_allowance_covers_the_f32_edge_functions() {
        let mut rng = Rng(17);
        let u = 1.0 / 16_777_216.0;
        let mut worst = 0.0f64;
        for trial in 0..200_000 {
            let size = [1e-3, 1.0, 7e2, 3e6][trial % 4];
            let cube = |rng: &mut Rng| rng.point(2.0 * size, DVec3::splat(-size));
            let p = cube(&mut rng);
            let q = match trial % 3 {
                0 => cube(&mut rng),
                1 => p * (1.0 + (rng.next() - 0.5) * 1e-3) + cube(&mut rng) * 1e-5,
                _ => p + cube(&mut rng) * 1e-7,
            };
            let mut d = rng.point(2.0, DVec3::splat(-1.0)) * [1e-2, 1.0, 3e3][trial % 3];
            let n = p.cross(q);
            if trial % 2 == 0 && n.length_squared() > 0.0 {
                // Nearly in the plane of p and q: E nearly cancels.
                d -= n * (d.dot(n) / n.length_squared()) * (1.0 - 1e-6 * rng.next());
            }
            let (p32, q32, d32) = (p.as_vec3(), q.as_vec3(), d.as_vec3());
            let computed = edge_values(&splat(d32), &splat(p32), &splat(q32)).x;
            // Exact but for f64's rounding, some 2^-51 of the bound's scale.
            let exact = d.dot(p32.as_dvec3().cross(q32.as_dvec3()));
            let scale = d.length() * p32.as_dvec3().length() * q32.as_dvec3().length();
            if scale == 0.0 || !scale.is_finite() {
                continue;
            }
            worst = worst.max((f64::from(computed) - exact).abs() / scale);
        }
        assert!(worst <= 8.1 * u, "worst {:.2}u", worst / u);
        assert!(
            f64::from(ARITHMETIC) >= 4.0 * worst,
            "worst {:.2}u",
            worst / u
        );
        assert!(
            worst > 0.5 * u,
            "the cases never rounded: worst {:.2}u",
            worst / u
        );
    }

    /// Segments aimed exactly at corners, at points of edges and inside triangles
    /// (where the exact test is on a knife's edge), from far away and close by: the
    /// filter keeps every triangle the exact test hits.
    #[test]
    fn never_rejects_an_exact_hit() {
        let mut rng = Rng(3);
        let mut hits = 0;
        for trial in 0..8000 {
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
            let from = target
                + (rng.point(2.0, DVec3::splat(-1.0)))
                    * size
                    * [1.0, 1e3, 1e-2, 1e5, 1e9][(trial / 3) % 5];
            let direction = (target - from) * (1.0 + rng.next());
            let scale = offset.abs().max_element() + size * 4.0;
            let filter = SegmentFilter::new(from, direction, 0.0, scale);
            let mask = filtered(&filter, &records, 4, min, max);
            // The leaf's box, as a node holds it: entered before any of its hits.
            let mut boxes = Aabb4::EMPTY;
            boxes.set(2, &Aabb { min, max });
            let entries = filter.entries(&boxes);
            for (k, t) in tris.iter().enumerate() {
                if let Some(hit) = intersect_segment_triangle(from, direction, t[0], t[1], t[2]) {
                    hits += 1;
                    assert!(mask & (1 << k) != 0, "trial {trial}: triangle {k} rejected");
                    assert!(entries.mask & 0b100 != 0, "trial {trial}: box not entered");
                    assert!(
                        f64::from(entries.keys[2]) <= hit.t,
                        "trial {trial}: late key"
                    );
                }
            }
        }
        assert!(hits > 4000, "the test must aim: {hits} hits");
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
            assert_eq!(filtered(&filter, &records, 4, min, max), 0, "{start}");
        }
        // Only the first `count` lanes are ever reported.
        let filter = SegmentFilter::new(DVec3::new(0.2, 1.0, 0.2), down, 0.0, 2.0);
        assert_eq!(filtered(&filter, &records, 3, min, max), 0b111);
    }

    /// A segment from far away (100 times the triangle's size) that misses an edge by
    /// 15 % of the triangle's size is rejected: the quantization's share of the
    /// tolerance scales with the leaf's size, not with the distance to the start.
    #[test]
    fn rejects_near_misses_from_far_away() {
        let tri = [DVec3::ZERO, DVec3::X, DVec3::Z];
        let (min, max) = leaf_box(&[tri]);
        let records = [LeafTriangle::new(0, tri, min, max); 4];
        let down = DVec3::new(0.0, -200.0, 0.0);
        let beside = SegmentFilter::new(DVec3::new(-0.15, 100.0, 0.5), down, 0.0, 100.0);
        let mask = filtered(&beside, &records, 1, min, max);
        assert_eq!(mask, 0, "missed by 0.15 from 100 away");
        // The same segment moved onto the edge, and inside, is kept.
        for x in [0.0, 0.15] {
            let on = SegmentFilter::new(DVec3::new(x, 100.0, 0.5), down, 0.0, 100.0);
            assert_eq!(filtered(&on, &records, 1, min, max), 1);
        }
    }

    /// A picking ray reaching ten million times the scene's size beyond it: a near
    /// miss is still rejected, and a box beside it by a hundredth of its size is not
    /// entered.
    #[test]
    fn rejects_near_misses_of_segments_far_longer_than_the_scene() {
        let tri = [DVec3::ZERO, DVec3::X, DVec3::Z];
        let (min, max) = leaf_box(&[tri]);
        let records = [LeafTriangle::new(0, tri, min, max); 4];
        let down = DVec3::new(0.0, -2e7, 0.0);
        let beside = SegmentFilter::new(DVec3::new(-0.15, 1.0, 0.5), down, 0.0, 2.0);
        assert_eq!(filtered(&beside, &records, 1, min, max), 0);
        let on = SegmentFilter::new(DVec3::new(0.15, 1.0, 0.5), down, 0.0, 2.0);
        assert_eq!(filtered(&on, &records, 1, min, max), 1);
        // The leaf's box is entered at y = 0, 1 / 2e7 of the way.
        let mut boxes = Aabb4::EMPTY;
        boxes.set(0, &Aabb { min, max });
        let shift = Vec3::X * 1.16;
        boxes.set(
            1,
            &Aabb {
                min: min + shift,
                max: max + shift,
            },
        );
        let entries = on.entries(&boxes);
        assert_eq!(entries.mask & 0b11, 0b01);
        assert!(entries.keys[0] <= 5e-8 && entries.keys[0] > 4.99e-8);
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
        assert_eq!(filtered(&filter, &records, 2, min, max), 0b11);
    }
}
