//! [`LeafTriangle`]: a triangle as a [`WorldBvh`](super::WorldBvh) leaf stores it, its
//! corners quantized to 10 bits per axis inside the leaf's box, and [`TriangleLanes`],
//! four of them decoded side by side for one SIMD filter test.
//!
//! The corners kept here only *filter*: a query rejects a triangle from them when it
//! certainly misses even the triangle moved by the quantization error, and the exact
//! `f64` test runs on the drawable's own vertices for the others. So 10 bits are
//! plenty: a corner is off by at most half a step (1/2046 of the leaf's box per axis),
//! and a record is 16 bytes (the primitive's id and three packed corners) where `f32`
//! corners would take 40.

use glam::{DVec3, IVec4, Vec3, Vec4};

/// Steps per axis of the quantization grid: a coordinate is stored in 10 bits.
const STEPS: f32 = 1023.0;
const MASK: u32 = 0x3FF;

/// One triangle of a leaf: the primitive's id in the scene index and its three world
/// corners quantized inside the leaf's box (x in bits 0-9, y in 10-19, z in 20-29).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct LeafTriangle {
    /// The primitive's id (see [`WorldBvh`](super::WorldBvh)).
    pub id: u32,
    /// The corners, packed.
    pub corners: [u32; 3],
}

impl LeafTriangle {
    /// Packs `corners` (world space, inside the box `[min, max]`) for the primitive `id`.
    pub fn new(id: u32, corners: [DVec3; 3], min: Vec3, max: Vec3) -> LeafTriangle {
        Quantizer::new(min, max).pack(id, corners)
    }
}

/// The grid of one leaf box, for packing its triangles.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quantizer {
    min: DVec3,
    /// Grid steps per unit along each axis (0 for a flat axis).
    scale: DVec3,
}

impl Quantizer {
    /// The grid of the box `[min, max]`.
    pub fn new(min: Vec3, max: Vec3) -> Quantizer {
        let (min, max) = (min.as_dvec3(), max.as_dvec3());
        let extent = max - min;
        let scale = DVec3::select(
            extent.cmpgt(DVec3::ZERO) & extent.is_finite_mask(),
            DVec3::splat(f64::from(STEPS)) / extent,
            DVec3::ZERO,
        );
        Quantizer { min, scale }
    }

    /// The record of the triangle `id` with these corners (inside the box): each
    /// corner at its nearest grid point (rounding half up; the product by the scale
    /// may put a point a ten-millionth of a step past half way, which the decoding's
    /// error bound allows for).
    #[inline]
    pub fn pack(&self, id: u32, corners: [DVec3; 3]) -> LeafTriangle {
        let top = DVec3::splat(f64::from(STEPS));
        let pack = |p: DVec3| {
            let q = ((p - self.min) * self.scale + DVec3::splat(0.5)).clamp(DVec3::ZERO, top);
            (q.x as u32) | (q.y as u32) << 10 | (q.z as u32) << 20
        };
        LeafTriangle {
            id,
            corners: corners.map(pack),
        }
    }
}

/// Four decoded triangles, one lane each, their coordinates relative to an origin of
/// the caller's choosing (the segment's start, for example), with the radius within
/// which each decoded corner lies of the true corner.
#[derive(Clone, Copy, Debug)]
pub struct TriangleLanes {
    /// Corner `a`: x, y, z of the four triangles.
    pub a: [Vec4; 3],
    /// Corner `b`.
    pub b: [Vec4; 3],
    /// Corner `c`.
    pub c: [Vec4; 3],
    /// Bound on the distance between a decoded corner and the true one (the same for
    /// the four lanes: it depends on the leaf's box only).
    pub error: f32,
}

impl TriangleLanes {
    /// Decodes the first four records of `records` (callers pad the record array so
    /// that four are always there) quantized in the leaf box `[min, max]` (each corner
    /// splat over the four lanes), relative to `origin`.
    ///
    /// The error bound covers the rounding to the grid (half a step per axis) and the
    /// `f32` arithmetic of the decoding (a few units in the last place of the
    /// magnitudes involved, covered 16 times over).
    #[inline(always)]
    pub fn decode(records: &[LeafTriangle], min: [Vec4; 3], max: [Vec4; 3], origin: Vec3) -> Self {
        // As signed integers (every packed corner is below 2^30): their conversion to
        // `f32` is one SIMD instruction, where unsigned ones take four.
        let corner = |k: usize| {
            IVec4::new(
                records[0].corners[k] as i32,
                records[1].corners[k] as i32,
                records[2].corners[k] as i32,
                records[3].corners[k] as i32,
            )
        };
        let to_grid = Vec4::splat(1.0 / STEPS);
        let step = [
            (max[0] - min[0]) * to_grid,
            (max[1] - min[1]) * to_grid,
            (max[2] - min[2]) * to_grid,
        ];
        let base = [
            min[0] - Vec4::splat(origin.x),
            min[1] - Vec4::splat(origin.y),
            min[2] - Vec4::splat(origin.z),
        ];
        let mask = IVec4::splat(MASK as i32);
        let decode = |packed: IVec4| {
            [
                base[0] + (packed & mask).as_vec4() * step[0],
                base[1] + ((packed >> 10i32) & mask).as_vec4() * step[1],
                base[2] + ((packed >> 20i32) & mask).as_vec4() * step[2],
            ]
        };
        // Half a step per axis, as a length: |(sx, sy, sz)| / 2. The decoding rounds
        // three times (base, product, sum), each by at most 2^-24 of |base| + extent
        // (every lane holds the same box, so lane 0 speaks for all).
        let step0 = Vec3::new(step[0].x, step[1].x, step[2].x);
        let base0 = Vec3::new(base[0].x, base[1].x, base[2].x);
        let extent = step0 * STEPS;
        let rounding = (base0.abs() + extent.abs()).length() * (16.0 * 3.0 / 16_777_216.0);
        TriangleLanes {
            a: decode(corner(0)),
            b: decode(corner(1)),
            c: decode(corner(2)),
            error: (step0.length() * 0.5 + rounding) * (1.0 + 1.0 / 1024.0),
        }
    }

    /// The decoded triangles' normals `m = (b − a) × (c − a)` (not normalized; x, y, z,
    /// lane by lane) and the lowest and highest of their corners' positions along them
    /// (`m·a`, `m·b`, `m·c`, equal but for rounding): the separating axis the ball and
    /// box filters test. Along the direction of `m`, whatever the rounding of `m` itself
    /// (any direction is a valid axis), a true corner lies within `error` of its decoded
    /// one: within `error · |m|` in these positions' units.
    #[inline(always)]
    pub(crate) fn along_normals(&self) -> ([Vec4; 3], Vec4, Vec4) {
        let edge = |p: &[Vec4; 3], q: &[Vec4; 3]| [q[0] - p[0], q[1] - p[1], q[2] - p[2]];
        let (ab, ac) = (edge(&self.a, &self.b), edge(&self.a, &self.c));
        let m = [
            ab[1] * ac[2] - ab[2] * ac[1],
            ab[2] * ac[0] - ab[0] * ac[2],
            ab[0] * ac[1] - ab[1] * ac[0],
        ];
        let along = |p: &[Vec4; 3]| m[0] * p[0] + m[1] * p[1] + m[2] * p[2];
        let (pa, pb, pc) = (along(&self.a), along(&self.b), along(&self.c));
        (m, pa.min(pb).min(pc), pa.max(pb).max(pc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(v: [Vec4; 3], k: usize) -> Vec3 {
        Vec3::new(v[0][k], v[1][k], v[2][k])
    }

    #[test]
    fn decoded_corners_lie_within_the_error_of_the_true_ones() {
        let (min, max) = (Vec3::new(-3.0, 10.0, 1000.0), Vec3::new(5.0, 10.5, 1200.0));
        let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
        let mut seed = 1u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for origin in [Vec3::ZERO, Vec3::new(1e4, -3e3, 50.0)] {
            for _ in 0..200 {
                let mut point = || {
                    DVec3::new(
                        f64::from(min.x) + f64::from(max.x - min.x) * next(),
                        f64::from(min.y) + f64::from(max.y - min.y) * next(),
                        f64::from(min.z) + f64::from(max.z - min.z) * next(),
                    )
                };
                let corners = [point(), point(), point()];
                let records = [LeafTriangle::new(7, corners, min, max); 4];
                let lanes = TriangleLanes::decode(&records, splat(min), splat(max), origin);
                for (k, decoded) in [lanes.a, lanes.b, lanes.c].into_iter().enumerate() {
                    let d = lane(decoded, 2).as_dvec3() + origin.as_dvec3();
                    let off = (d - corners[k]).length();
                    assert!(off <= f64::from(lanes.error), "{off} > {}", lanes.error);
                }
            }
        }
    }

    #[test]
    fn the_corners_of_the_box_are_exact_and_a_flat_box_decodes_flat() {
        let (min, max) = (Vec3::new(0.0, 2.0, -1.0), Vec3::new(4.0, 2.0, 1.0));
        let corners = [min.as_dvec3(), max.as_dvec3(), DVec3::new(2.0, 2.0, 0.0)];
        let records = [LeafTriangle::new(1, corners, min, max); 4];
        let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
        let lanes = TriangleLanes::decode(&records, splat(min), splat(max), Vec3::ZERO);
        assert_eq!(lane(lanes.a, 0), min);
        assert_eq!(lane(lanes.b, 1), max);
        assert_eq!(lanes.c[1], Vec4::splat(2.0));
        assert!(lanes.error < 4.0 / 1023.0);
    }
}
