//! Clipping primitives against the half-spaces of a polytope (`a·x + b·y + c·z + d >= 0`).
//!
//! Inclusive Sutherland–Hodgman: a vertex on a plane (value exactly 0) is kept, and a
//! crossing point is inserted only where an edge goes strictly from one side to the other,
//! so the closing edge of the polygon is clipped like every other (OSG 3.6 drops it
//! after clipping the first vertex) and no vertex is duplicated.

use glam::{DVec3, DVec4};
use smallvec::SmallVec;

/// A convex polygon small enough to live on the stack (a triangle clipped by up to six
/// planes has at most nine vertices).
pub type ClipPolygon = SmallVec<[DVec3; 12]>;

#[inline]
pub(crate) fn plane_value(plane: DVec4, p: DVec3) -> f64 {
    plane.x * p.x + plane.y * p.y + plane.z * p.z + plane.w
}

/// Normal components (largest magnitude) and offset up to which a plane is clipped by
/// as it is: its [`plane_value`] at any point of `f32` coordinates (below `2^128` in
/// magnitude) then stays below `2^1001`, and the term of its largest component, unless
/// that coordinate is 0, above `2^-750`: far from both ends of `f64`'s range.
const CLIPPING_NORMAL_RANGE: (f64, f64) = (pow2(-600), pow2(600));
const CLIPPING_MAX_OFFSET: f64 = pow2(1000);

/// `plane`, a drawable's plane the clippers test its vertices against, scaled by a power
/// of two when its coefficients would make [`plane_value`] overflow or underflow at the
/// drawable's `f32` vertices: so that its largest normal component is about 1 (or its
/// offset below `2^1000`).
///
/// A polytope's planes moved into the frame of an extreme transform (entries of
/// `10^306`) can be finite and still give `∞ − ∞` at a vertex whose true value is far
/// from 0: not a number, which the clippers' comparisons read as a side, while the
/// culls of the trees (which normalize the planes, and see the vertex clearly on one
/// side) read it as the other; a traversal with trees then disagreed with one without.
/// Scaled so, the values are those of the same plane without overflow. A power of two
/// changes no sign and no rounding (every product, sum and quotient scales exactly), so
/// clipping by a scaled plane keeps the same vertices and makes the same crossing points
/// as by the plane itself wherever that did not overflow or underflow; and a plane in
/// range, as every plane of a scene's ordinary frames is, is returned as it is. Planes
/// with a component that is not finite are too.
#[inline]
pub(crate) fn plane_in_clipping_range(plane: DVec4) -> DVec4 {
    let largest = plane.truncate().abs().max_element();
    let (low, high) = CLIPPING_NORMAL_RANGE;
    if largest >= low && largest <= high && plane.w.abs() <= CLIPPING_MAX_OFFSET {
        return plane;
    }
    rescaled_plane(plane, largest)
}

/// [`plane_in_clipping_range`] for a plane out of range (kept out of line).
#[cold]
#[inline(never)]
fn rescaled_plane(plane: DVec4, largest: f64) -> DVec4 {
    if !plane.is_finite() || largest == 0.0 {
        return plane;
    }
    // The exponents of the largest normal component and of the offset (within one: a
    // power of two near either is as good).
    let exponent = |x: f64| x.log2().floor() as i32;
    let mut shift = -exponent(largest);
    if plane.w != 0.0 {
        // The offset scaled by 2^shift stays below 2^1000.
        shift = shift.min(1000 - exponent(plane.w.abs()));
    }
    // In two factors, each a normal `f64` (the shift may pass 1023 either way).
    let half = shift / 2;
    plane * pow2(half) * pow2(shift - half)
}

/// `2^k` for `k` in the normal range of `f64` (`-1022..=1023`).
const fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The inclusive Sutherland–Hodgman rule for one edge `p → q` of a polygon being
/// clipped by one plane (`dp`, `dq` their plane values): keeps `p` when it is inside or
/// on the plane, then the crossing point when the edge goes strictly from one side to
/// the other. Both clippers use it, so they clip alike, bit for bit.
#[inline(always)]
fn clip_edge(p: DVec3, dp: f64, q: DVec3, dq: f64, mut keep: impl FnMut(DVec3)) {
    if dp >= 0.0 {
        keep(p);
    }
    if (dp > 0.0 && dq < 0.0) || (dp < 0.0 && dq > 0.0) {
        let t = dp / (dp - dq);
        keep(p + (q - p) * t);
    }
}

/// Clips `polygon` (a closed loop) by every plane in turn; returns false as soon as
/// nothing is left. `scratch` is reused storage.
pub fn clip_polygon(
    polygon: &mut ClipPolygon,
    planes: &[DVec4],
    scratch: &mut ClipPolygon,
) -> bool {
    // The two buffers take turns as input and output; only their roles are swapped per
    // plane (a polygon is ~300 bytes inline), and the result is moved back at the end.
    let (mut current, mut next) = (&mut *polygon, &mut *scratch);
    let mut result_in_scratch = false;
    for &plane in planes {
        if current.is_empty() {
            break;
        }
        // Fast path: every vertex inside this plane.
        if current.iter().all(|&p| plane_value(plane, p) >= 0.0) {
            continue;
        }
        next.clear();
        let n = current.len();
        let first_value = plane_value(plane, current[0]);
        let (mut p, mut dp) = (current[0], first_value);
        for i in 0..n {
            let (q, dq) = if i + 1 < n {
                (current[i + 1], plane_value(plane, current[i + 1]))
            } else {
                (current[0], first_value)
            };
            clip_edge(p, dp, q, dq, |v| next.push(v));
            (p, dp) = (q, dq);
        }
        std::mem::swap(&mut current, &mut next);
        result_in_scratch = !result_in_scratch;
    }
    if result_in_scratch {
        std::mem::swap(polygon, scratch);
    }
    !polygon.is_empty()
}

/// The most vertices a [`TriangleClipper`] holds (a triangle clipped by up to five
/// planes never needs more than half of them).
const CLIPPER_VERTICES: usize = 16;

/// [`clip_polygon`] for triangles, with its buffers: the same clipping, vertex for
/// vertex and bit for bit.
///
/// The polytope intersector clips every straddling candidate triangle, so this is its
/// hot path: the polygon stays in two fixed arrays made once per functor (not zeroed
/// per triangle, not grown), each vertex's plane value is computed once per plane (not
/// once to decide whether to clip and again to clip), and the result goes straight to
/// the caller's list of clipped points. A plane adds at most one vertex to a convex
/// polygon, but rounding can make a nearly flat polygon cross a plane more than twice:
/// once a polygon might outgrow the arrays (more than half their size), the remaining
/// planes go through [`clip_polygon`].
#[derive(Clone, Debug)]
pub(crate) struct TriangleClipper {
    first: [DVec3; CLIPPER_VERTICES],
    second: [DVec3; CLIPPER_VERTICES],
    values: [f64; CLIPPER_VERTICES],
}

impl Default for TriangleClipper {
    fn default() -> Self {
        TriangleClipper {
            first: [DVec3::ZERO; CLIPPER_VERTICES],
            second: [DVec3::ZERO; CLIPPER_VERTICES],
            values: [0.0; CLIPPER_VERTICES],
        }
    }
}

impl TriangleClipper {
    /// Clips `triangle` by every plane and appends what is left to `out`; returns how
    /// many vertices it appended (0: nothing is left).
    pub(crate) fn clip(
        &mut self,
        triangle: [DVec3; 3],
        planes: &[DVec4],
        out: &mut Vec<DVec3>,
    ) -> usize {
        let TriangleClipper {
            first,
            second,
            values,
        } = self;
        first[..3].copy_from_slice(&triangle);
        // The two arrays take turns as input and output: only the references swap.
        let (mut current, mut next) = (first, second);
        let mut n = 3;
        for (k, &plane) in planes.iter().enumerate() {
            if 2 * n > CLIPPER_VERTICES {
                // Each vertex may keep itself and add one crossing: past the arrays.
                let mut polygon: ClipPolygon = current[..n].iter().copied().collect();
                if !clip_polygon(&mut polygon, &planes[k..], &mut ClipPolygon::new()) {
                    return 0;
                }
                out.extend_from_slice(&polygon);
                return polygon.len();
            }
            let mut all_inside = true;
            for (value, &p) in values[..n].iter_mut().zip(&current[..n]) {
                *value = plane_value(plane, p);
                all_inside &= *value >= 0.0;
            }
            if all_inside {
                continue;
            }
            let mut m = 0;
            for i in 0..n {
                let j = if i + 1 < n { i + 1 } else { 0 };
                let (p, dp) = (current[i], values[i]);
                let (q, dq) = (current[j], values[j]);
                clip_edge(p, dp, q, dq, |v| {
                    next[m] = v;
                    m += 1;
                });
            }
            if m == 0 {
                return 0;
            }
            std::mem::swap(&mut current, &mut next);
            n = m;
        }
        out.extend_from_slice(&current[..n]);
        n
    }
}

/// Clips the closed segment `p → q` by every plane; returns the surviving parameter
/// interval `[t0, t1]`, or `None` when nothing is left.
pub fn clip_segment(p: DVec3, q: DVec3, planes: &[DVec4]) -> Option<(f64, f64)> {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for &plane in planes {
        let dp = plane_value(plane, p);
        let dq = plane_value(plane, q);
        if dp < 0.0 && dq < 0.0 {
            return None;
        }
        if dp < 0.0 {
            t0 = t0.max(dp / (dp - dq));
        } else if dq < 0.0 {
            t1 = t1.min(dp / (dp - dq));
        }
        if t0 > t1 {
            return None;
        }
    }
    Some((t0, t1))
}

/// True when `p` lies in every closed half-space.
pub fn contains_point(p: DVec3, planes: &[DVec4]) -> bool {
    planes.iter().all(|&pl| plane_value(pl, p) >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit cube [0,1]^3 as six inward planes.
    fn cube() -> Vec<DVec4> {
        vec![
            DVec4::new(1.0, 0.0, 0.0, 0.0),
            DVec4::new(-1.0, 0.0, 0.0, 1.0),
            DVec4::new(0.0, 1.0, 0.0, 0.0),
            DVec4::new(0.0, -1.0, 0.0, 1.0),
            DVec4::new(0.0, 0.0, 1.0, 0.0),
            DVec4::new(0.0, 0.0, -1.0, 1.0),
        ]
    }

    fn clip(tri: [DVec3; 3]) -> ClipPolygon {
        let mut poly: ClipPolygon = tri.into_iter().collect();
        let mut scratch = ClipPolygon::new();
        clip_polygon(&mut poly, &cube(), &mut scratch);
        poly
    }

    #[test]
    fn triangle_through_the_cube_without_a_vertex_inside() {
        // A big triangle in the plane z = 0.5 covering the whole cube section.
        let p = clip([
            DVec3::new(-5.0, -5.0, 0.5),
            DVec3::new(10.0, -5.0, 0.5),
            DVec3::new(-5.0, 10.0, 0.5),
        ]);
        // The section is the unit square at z = 0.5: four corners.
        assert_eq!(p.len(), 4);
        let mean = p.iter().copied().sum::<DVec3>() / p.len() as f64;
        assert!((mean - DVec3::new(0.5, 0.5, 0.5)).length() < 1e-12);
    }

    #[test]
    fn touching_at_one_vertex_counts() {
        let p = clip([
            DVec3::new(1.0, 1.0, 1.0),
            DVec3::new(2.0, 1.0, 1.0),
            DVec3::new(2.0, 2.0, 2.0),
        ]);
        assert_eq!(p.as_slice(), &[DVec3::new(1.0, 1.0, 1.0)]);
    }

    #[test]
    fn closing_edge_is_clipped_too() {
        // Only the closing edge (c -> a) crosses the cube; a and c outside on either side.
        let a = DVec3::new(-1.0, 0.5, 0.5);
        let b = DVec3::new(-1.0, 5.0, 0.5);
        let c = DVec3::new(2.0, 0.5, 0.5);
        assert!(!clip([a, b, c]).is_empty());
    }

    /// The `TriangleClipper`'s vertices, or `None` when it keeps nothing.
    fn clip_fast(tri: [DVec3; 3], planes: &[DVec4]) -> Option<Vec<DVec3>> {
        let mut out = vec![DVec3::splat(7.0)]; // appended after what is there
        let n = TriangleClipper::default().clip(tri, planes, &mut out);
        assert_eq!(out.len(), 1 + n);
        (n > 0).then(|| out[1..].to_vec())
    }

    /// `clip_polygon`'s vertices for the same triangle.
    fn clip_reference(tri: [DVec3; 3], planes: &[DVec4]) -> Option<Vec<DVec3>> {
        let mut poly: ClipPolygon = tri.into_iter().collect();
        clip_polygon(&mut poly, planes, &mut ClipPolygon::new()).then(|| poly.to_vec())
    }

    #[test]
    fn triangle_clipper_is_clip_polygon_bit_for_bit() {
        // Random triangles against random unit-cube-ish boxes and slanted planes, on a
        // grid so that vertices often lie exactly on planes (the inclusive cases).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 9) as f64 * 0.25 - 0.5
        };
        let (mut kept, mut dropped) = (0, 0);
        for _ in 0..20_000 {
            let tri = [(); 3].map(|_| DVec3::new(next(), next(), next()));
            let mut planes = cube();
            planes.push(DVec4::new(next(), next(), next(), next()));
            let fast = clip_fast(tri, &planes);
            assert_eq!(fast, clip_reference(tri, &planes), "{tri:?}");
            if fast.is_some() {
                kept += 1;
            } else {
                dropped += 1;
            }
        }
        assert!(
            kept > 1000 && dropped > 1000,
            "{kept} kept, {dropped} dropped"
        );
    }

    #[test]
    fn triangle_clipper_hands_big_polygons_to_clip_polygon() {
        // A triangle covering the section of a 24-sided prism around the z axis: every
        // side cuts a corner, the polygon outgrows the stack arrays halfway through.
        let planes: Vec<DVec4> = (0..24)
            .map(|k| {
                let angle = k as f64 * std::f64::consts::TAU / 24.0;
                DVec4::new(-angle.cos(), -angle.sin(), 0.0, 1.0)
            })
            .collect();
        let tri = [
            DVec3::new(-10.0, -10.0, 0.5),
            DVec3::new(30.0, -10.0, 0.5),
            DVec3::new(-10.0, 30.0, 0.5),
        ];
        let fast = clip_fast(tri, &planes).unwrap();
        assert_eq!(fast.len(), 24);
        assert_eq!(Some(fast), clip_reference(tri, &planes));
    }

    #[test]
    fn outside_is_empty() {
        assert!(clip([
            DVec3::new(2.0, 0.0, 0.0),
            DVec3::new(3.0, 0.0, 0.0),
            DVec3::new(2.0, 1.0, 0.0)
        ])
        .is_empty());
    }

    #[test]
    fn segment_clipping() {
        let planes = cube();
        // Along x through the middle: enters at x = 0, leaves at x = 1 -> t in [1/4, 1/2].
        let (t0, t1) = clip_segment(
            DVec3::new(-1.0, 0.5, 0.5),
            DVec3::new(3.0, 0.5, 0.5),
            &planes,
        )
        .unwrap();
        assert_eq!((t0, t1), (0.25, 0.5));
        assert!(clip_segment(
            DVec3::new(-1.0, 2.0, 0.5),
            DVec3::new(3.0, 2.0, 0.5),
            &planes
        )
        .is_none());
        // Touching a corner.
        assert!(clip_segment(
            DVec3::new(1.0, 1.0, 1.0),
            DVec3::new(2.0, 2.0, 2.0),
            &planes
        )
        .is_some());
    }

    #[test]
    fn planes_in_range_are_clipped_by_as_they_are() {
        for plane in [
            DVec4::new(0.0, 1.0, 0.0, -5.0),
            DVec4::new(1e-150, -3e170, 2.5, 1e300),
            DVec4::new(-7.0, 0.0, 0.0, 0.0),
        ] {
            assert_eq!(plane_in_clipping_range(plane).to_array(), plane.to_array());
        }
        // Nothing a power of two could bring into range: kept.
        let zero_normal = DVec4::new(0.0, 0.0, 0.0, 1e308);
        assert_eq!(plane_in_clipping_range(zero_normal), zero_normal);
        let infinite = DVec4::new(f64::INFINITY, 1.0, 0.0, 0.0);
        assert_eq!(plane_in_clipping_range(infinite), infinite);
        assert!(plane_in_clipping_range(DVec4::new(f64::NAN, 1.0, 0.0, 0.0))
            .x
            .is_nan());
    }

    #[test]
    fn a_plane_out_of_range_is_scaled_by_a_power_of_two_into_it() {
        let f32_max = f64::from(f32::MAX);
        // `plane · 2^shift`, in two exact steps.
        let times_pow2 =
            |plane: DVec4, shift: i32| plane * 2f64.powi(shift / 2) * 2f64.powi(shift - shift / 2);
        // Planes whose values pass f64's range at f32 vertices (10^300 · 10^10 = ∞), or
        // fall below its smallest numbers (10^-320 · 10^-10 = 0), with the power of two
        // that brings the largest normal component into [1, 2): 10^300 lies in [2^996,
        // 2^997), the subnormal 10^-320 (2024 · 2^-1074) in [2^-1064, 2^-1063), and
        // 4·10^-310 in [2^-1028, 2^-1027); and the vertex's side, worked out by hand (the
        // first two 10^300 (x − z) < 0, the others 10^-320 · x and 4·10^-310 · y < 0,
        // which round to −0: on the plane, inside it, before).
        for (plane, shift, vertex) in [
            (
                DVec4::new(1e300, 1.0, -1e300, -5.0),
                -996,
                DVec3::new(1e10, 0.0, 1.001e10),
            ),
            (
                DVec4::new(-1e300, 0.0, 1e300, 0.0),
                -996,
                DVec3::new(f32_max, 0.0, 0.5 * f32_max),
            ),
            (
                DVec4::new(1e-320, 0.0, 0.0, 0.0),
                1064,
                DVec3::new(-1e-10, 7.0, 7.0),
            ),
            (
                DVec4::new(0.0, 4e-310, 0.0, 0.0),
                1028,
                DVec3::new(0.0, -1e-20, 0.0),
            ),
        ] {
            assert!(plane_value(plane, vertex).is_nan() || plane_value(plane, vertex) == 0.0);
            let scaled = plane_in_clipping_range(plane);
            assert_eq!(scaled, times_pow2(plane, shift), "{plane:?}");
            let value = plane_value(scaled, vertex);
            assert!(value.is_finite());
            assert!(value < 0.0, "{plane:?} at {vertex:?}: {value}");
        }
        // 1e-320 is 2024 · 2^-1074: scaled by 2^1064, 2024 / 1024.
        assert_eq!(
            plane_in_clipping_range(DVec4::new(1e-320, 0.0, 0.0, 0.0)).x,
            1.9765625
        );
        // An offset that would pass 2^1000 caps the power: 2^1010 · 2^-10 = 2^1000.
        let far = DVec4::new(2f64.powi(-700), 0.0, 0.0, 2f64.powi(1010));
        assert_eq!(
            plane_in_clipping_range(far),
            DVec4::new(2f64.powi(-710), 0.0, 0.0, 2f64.powi(1000))
        );
    }
}
