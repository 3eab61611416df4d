//! The exact segment–triangle test behind [`LineSegmentIntersector`](super::LineSegmentIntersector).
//!
//! The segment `s + t·d, t ∈ [0, 1]` meets the closed triangle `(a, b, c)` iff the three
//! edge functions `E(p, q) = d · ((p − s) × (q − s))` (signed volumes) of its edges share
//! a sign (zeros allowed: edges and vertices are inclusive) and the plane crossing lies
//! in `[0, 1]`. The edge function is exactly antisymmetric in floating point:
//! `E(q, p)` evaluates to `−E(p, q)` bit for bit, since products commute exactly,
//! `x − y` rounds to exactly `−(y − x)`, and Rust never fuses a multiply and an add on
//! its own. So two triangles sharing an edge get exactly opposite values for it, in
//! whichever order they list its ends: a segment can never slip between them, and one
//! through the edge itself (value exactly 0) hits both.
//!
//! Barycentric weights are `E(b, c)`, `E(c, a)`, `E(a, b)` over their sum `d · n`
//! (`n = (b − a) × (c − a)`). A zero-area triangle (`n = 0`) and a triangle parallel to or
//! coplanar with the segment (`d · n = 0`) are not hit.
//!
//! A hit's crossing always lies in the triangle's box, up to a slack below the margins
//! the traversals cull with: for a segment (nearly) in the triangle's
//! plane, `t = n · (a − s) / (n · d)` divides rounding by rounding and can point anywhere
//! along the segment, so such a `t` is moved to the nearest parameter at which the
//! segment is in the box, and the hit is dropped when the segment misses the box. So
//! no hit lies before the entry of a box holding its triangle, which a nearest-first
//! walk takes as the earliest hit the box can hold, nor in a box a walk culls. The edge
//! tests alone decide whether a segment that meets the box hits: a segment grazing two
//! triangles at the edge that bounds both their boxes still hits one of them.

use glam::DVec3;

/// How far outside the triangle's box a computed crossing may lie and still count as in
/// it, per axis, relative to the magnitudes of the box's (or the crossing's) and the
/// start's coordinates on that axis: 4 units of `f64` rounding (`2^-51`). That covers the
/// rounding of `s + t·d` (at most 2 units) and of the box's entry and exit parameters (at
/// most 3), so a true crossing is never moved or dropped for rounding alone. And it
/// stays within the margins of the culls that only one traversal makes: far below the
/// walks' `f32` box tests' (`2^-18` of the coordinates and of the start's), and below
/// the plain traversal's bounding-sphere test's, whose reach adds 8 units of the
/// segment's magnitude and [`cull_padding`](super::hit_order::cull_padding) (at least
/// `10^-12` of the coordinates and `10^-9` of the size) to the radius. So a `t` at the
/// edge of the slack never lies before a walk's key for a box that holds the triangle,
/// nor in a box or sphere that only one traversal culls. (The drawable's box test, which
/// both traversals ask before testing its triangles, decides alike for both.)
const CROSSING_SLACK: f64 = 1.0 / (1u64 << 51) as f64;

/// A bound, on every axis, on how far outside its triangle's box the segment passes at
/// the `t` of a hit the exact test reports, for a segment starting at `s` and a triangle
/// whose box's coordinates are at most `box_magnitude` in size: the slack plus the
/// rounding of `s + t·d` (5 units of `s` and 6 of the crossing, for a crossing taken as
/// it is) or of the box's slab parameters (7 units of `s` and of the box, for one moved
/// into the box); at most 8 units of both.
pub(crate) fn crossing_deviation(s: DVec3, box_magnitude: f64) -> f64 {
    2.0 * CROSSING_SLACK * (s.abs().max_element() + box_magnitude)
}

/// Where a segment crosses a triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentTriangleHit {
    /// Parameter along the segment, in `[0, 1]`.
    pub t: f64,
    /// Barycentric weights of `a`, `b`, `c` (sum 1, each in `[0, 1]`).
    pub weights: [f64; 3],
    /// The triangle's unnormalized normal `(b − a) × (c − a)`.
    pub normal: DVec3,
}

/// The edge function of the edge from the vertex at `p − s` to the one at `q − s`.
#[inline(always)]
fn edge_function(p_from_s: DVec3, q_from_s: DVec3, d: DVec3) -> f64 {
    d.dot(p_from_s.cross(q_from_s))
}

/// Intersects the closed segment from `s` along `d` (`t ∈ [0, 1]`) with the closed,
/// two-sided triangle `(a, b, c)`.
///
/// ```
/// use scene_intersect::intersectors::intersect_segment_triangle;
/// use glam::DVec3;
/// let hit = intersect_segment_triangle(
///     DVec3::new(0.25, 0.25, 1.0), DVec3::new(0.0, 0.0, -2.0),
///     DVec3::ZERO, DVec3::X, DVec3::Y,
/// ).unwrap();
/// assert_eq!(hit.t, 0.5);
/// assert_eq!(hit.weights, [0.5, 0.25, 0.25]);
/// ```
pub fn intersect_segment_triangle(
    s: DVec3,
    d: DVec3,
    a: DVec3,
    b: DVec3,
    c: DVec3,
) -> Option<SegmentTriangleHit> {
    intersect_segment_triangle_up_to(s, d, a, b, c, 1.0)
}

/// [`intersect_segment_triangle`] for the part `t ∈ [0, t_max]` of the segment (`t_max`
/// at most 1): a nearest-hit search skips the edge tests of triangles crossed beyond
/// the best hit so far. For a crossing at `t <= t_max` the answer is the same.
#[inline(always)]
pub fn intersect_segment_triangle_up_to(
    s: DVec3,
    d: DVec3,
    a: DVec3,
    b: DVec3,
    c: DVec3,
    t_max: f64,
) -> Option<SegmentTriangleHit> {
    // The edges first: most candidates a long segment meets are rejected by them, and
    // every condition below must hold anyway, so the order does not change results.
    let (sa, sb, sc) = (a - s, b - s, c - s);
    let e_ab = edge_function(sa, sb, d);
    let e_bc = edge_function(sb, sc, d);
    // (`&` and `|`, not `&&` and `||`: short-circuited, each comparison was a branch
    // of its own, whose outcome follows the data.)
    if ((e_ab < 0.0) & (e_bc > 0.0)) | ((e_ab > 0.0) & (e_bc < 0.0)) {
        return None;
    }
    let e_ca = edge_function(sc, sa, d);
    // Some edge value negative and some positive, decided by one branch on the bits of
    // the signs (a NaN value compares false both ways, so it counts as neither). As
    // `bool`s joined by `&` and `|`, the code generator split the condition into a
    // branch per comparison again, which mispredicted ten times as often as one branch
    // (callgrind's simulation, all hits on littlest_tokyo); `min` and `max`, which pass
    // over NaN values as the comparisons do, cost three instructions each. (Tested as
    // two conditions, the first, on the winding alone, went either way and mispredicted
    // on two tests in three.)
    let sign = |v: f64| u32::from(v < 0.0) | u32::from(v > 0.0) << 1;
    if sign(e_ab) | sign(e_bc) | sign(e_ca) == 0b11 {
        return None;
    }
    let normal = (b - a).cross(c - a);
    if normal == DVec3::ZERO {
        return None;
    }
    let denominator = normal.dot(d);
    if denominator == 0.0 {
        return None;
    }
    let t = normal.dot(sa) / denominator;
    if !(0.0..=1.0).contains(&t) {
        return None;
    }
    let sum = e_ab + e_bc + e_ca;
    if sum == 0.0 || !sum.is_finite() {
        return None;
    }
    // The crossing must lie in the triangle's box (see the module docs). Checked before
    // `t_max`: a `t` moved into the box may move below it. (The slack is measured from
    // the crossing and the start, which for a crossing in the box is at most the box's
    // and the start's magnitude: cheaper than the box's, which only a crossing outside
    // it needs.)
    let point = s + d * t;
    let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
    let slack = (point.abs() + s.abs()) * CROSSING_SLACK;
    let t = if (point.cmpge(lo - slack) & point.cmple(hi + slack)).all() {
        t
    } else {
        let slack = (lo.abs().max(hi.abs()) + s.abs()) * CROSSING_SLACK;
        t_within_box(s, d, lo - slack, hi + slack, t)?
    };
    if t > t_max {
        return None;
    }
    // `+ 0.0` turns a weight of -0 (an edge value of -0) into +0.
    let weights = [e_bc / sum + 0.0, e_ca / sum + 0.0, e_ab / sum + 0.0];
    Some(SegmentTriangleHit { t, weights, normal })
}

/// The parameter nearest `t` at which the segment `s + t·d`, `t ∈ [0, 1]`, lies in the box
/// `[lo, hi]`; `None` when it misses the box. Only a segment (nearly) in a triangle's
/// plane gets here; inlined all the same, as called out of line it made every caller
/// save registers around the call.
#[inline(always)]
fn t_within_box(s: DVec3, d: DVec3, lo: DVec3, hi: DVec3, t: f64) -> Option<f64> {
    let (mut t_in, mut t_out) = (0.0f64, 1.0f64);
    for k in 0..3 {
        if d[k] == 0.0 {
            if !(lo[k] <= s[k] && s[k] <= hi[k]) {
                return None;
            }
        } else {
            let (ta, tb) = ((lo[k] - s[k]) / d[k], (hi[k] - s[k]) / d[k]);
            t_in = t_in.max(ta.min(tb));
            t_out = t_out.min(ta.max(tb));
        }
    }
    (t_in <= t_out).then(|| t.max(t_in).min(t_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform in `[0, 1)`: a 64-bit linear congruential step, top 53 bits.
    fn uniform(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    const A: DVec3 = DVec3::new(0.0, 0.0, 0.0);
    const B: DVec3 = DVec3::new(2.0, 0.0, 0.0);
    const C: DVec3 = DVec3::new(0.0, 2.0, 0.0);

    fn down_at(x: f64, y: f64) -> Option<SegmentTriangleHit> {
        // From z = 3 to z = -1: the plane z = 0 is crossed at t = 3/4.
        intersect_segment_triangle(DVec3::new(x, y, 3.0), DVec3::new(0.0, 0.0, -4.0), A, B, C)
    }

    #[test]
    fn interior_edge_and_vertex_are_hit() {
        let h = down_at(0.5, 0.5).unwrap();
        assert_eq!(h.t, 0.75);
        // Point (0.5, 0.5): weights b = 0.25, c = 0.25, a = 0.5.
        assert_eq!(h.weights, [0.5, 0.25, 0.25]);
        assert!(down_at(1.0, 1.0).is_some(), "on the hypotenuse");
        assert!(down_at(1.0, 0.0).is_some(), "on edge ab");
        assert!(down_at(0.0, 0.0).is_some(), "on vertex a");
        assert!(down_at(2.0, 0.0).is_some(), "on vertex b");
        assert!(down_at(1.0, 1.0 + 1e-9).is_none(), "just outside");
        assert!(down_at(-1e-12, 0.5).is_none());
    }

    #[test]
    fn two_sided_and_closed_ends() {
        // Upwards through the back face.
        let h = intersect_segment_triangle(
            DVec3::new(0.5, 0.5, -1.0),
            DVec3::new(0.0, 0.0, 2.0),
            A,
            B,
            C,
        );
        assert_eq!(h.unwrap().t, 0.5);
        // Segment ending exactly on the triangle: t = 1.
        let h = intersect_segment_triangle(
            DVec3::new(0.5, 0.5, 1.0),
            DVec3::new(0.0, 0.0, -1.0),
            A,
            B,
            C,
        );
        assert_eq!(h.unwrap().t, 1.0);
        // Starting on it: t = 0.
        let h = intersect_segment_triangle(
            DVec3::new(0.5, 0.5, 0.0),
            DVec3::new(0.0, 0.0, -1.0),
            A,
            B,
            C,
        );
        assert_eq!(h.unwrap().t, 0.0);
        // Stopping short.
        assert!(intersect_segment_triangle(
            DVec3::new(0.5, 0.5, 1.0),
            DVec3::new(0.0, 0.0, -0.5),
            A,
            B,
            C
        )
        .is_none());
    }

    #[test]
    fn degenerate_and_coplanar_are_not_hit() {
        // Zero-area triangle.
        assert!(intersect_segment_triangle(
            DVec3::new(0.5, 0.0, 1.0),
            DVec3::new(0.0, 0.0, -2.0),
            A,
            B,
            B * 0.5
        )
        .is_none());
        // Segment lying in the triangle's plane, through its interior.
        assert!(intersect_segment_triangle(
            DVec3::new(-1.0, 0.5, 0.0),
            DVec3::new(4.0, 0.0, 0.0),
            A,
            B,
            C
        )
        .is_none());
    }

    #[test]
    fn the_edge_function_is_exactly_antisymmetric() {
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = || rng.next() * 2e3 - 1e3;
        for _ in 0..10_000 {
            let mut v = || DVec3::new(next(), next(), next());
            let (p, q, s, d) = (v(), v(), v(), v());
            let forward = edge_function(p - s, q - s, d);
            let backward = edge_function(q - s, p - s, d);
            assert_eq!(forward.to_bits(), (-backward).to_bits(), "{p} {q} {s} {d}");
        }
    }

    #[test]
    fn shared_edge_hits_both_triangles_and_never_neither() {
        // Square split along the diagonal (0,0)-(1,1), in both vertex orders.
        let (p, q, r, s) = (
            DVec3::ZERO,
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(0.0, 1.0, 0.0),
        );
        let d = DVec3::new(0.0, 0.0, -2.0);
        let on_diagonal = DVec3::new(0.375, 0.375, 1.0);
        assert!(intersect_segment_triangle(on_diagonal, d, p, q, r).is_some());
        assert!(intersect_segment_triangle(on_diagonal, d, r, s, p).is_some());
        // Oblique rays crossing z = 0 (at t = 1/2) on or next to the diagonal: at least
        // one triangle, always.
        for i in 0..1000 {
            let x = 0.1 + 0.0008 * i as f64;
            let start = DVec3::new(x - 0.15, x + 0.35 + 1e-17 * (i % 7) as f64, 1.0);
            let d = DVec3::new(0.3, -0.7, -2.0);
            let hits = [
                intersect_segment_triangle(start, d, p, q, r),
                intersect_segment_triangle(start, d, r, s, p),
            ];
            assert!(hits.iter().any(Option::is_some), "crack at {x}");
        }
    }

    #[test]
    fn a_segment_along_an_edge_crosses_where_it_is_in_the_triangles_box() {
        // Found by the `query` fuzz target. Rounding passes the edge tests and puts the
        // plane crossing at t = 0.2787, the point (-61.13, -61.13, -61.13): 0.13 before
        // the triangle's box, whose lowest corner is (-61, -61, -61). The crossing is
        // moved to where the segment enters the box: at that corner, 23.75 of the
        // segment's 84.75 units along each axis. (The segment runs along the diagonal
        // x = y = z, through the corner and within 10^-12 of the corner `a` near the
        // origin: (almost) in the triangle's plane.)
        let a = DVec3::new(
            -1.215361e-12f32 as f64,
            -1.2202369e-12f32 as f64,
            -6.098947e-13f32 as f64,
        );
        let (b, c) = (DVec3::new(-35.0, -1.0, -1.0), DVec3::splat(-61.0));
        let s = DVec3::splat(-84.75);
        let d = DVec3::new(
            2.5187408034122004e-98,
            7.748604185489623e-304,
            7.748604185489348e-304,
        ) - s;
        let hit = intersect_segment_triangle(s, d, a, b, c).expect("the edge tests pass");
        let entry = 23.75 / 84.75;
        assert!(hit.t <= entry && hit.t > entry - 1e-12, "t = {}", hit.t);
    }

    #[test]
    fn crossings_never_lie_outside_the_triangles_box() {
        // Segments within about 10^-15 radians of a triangle's plane, in every place and
        // direction: whatever rounding makes of `t`, a hit's crossing lies in the
        // box (up to the slack), and the hit comes back, unchanged, with `t_max` at its
        // own `t` (a nearest-hit search's limit). That needs `t_max` checked after the
        // move: a plane crossing beyond the box may be moved below the limit (checked
        // before, this fails).
        let mut seed = 11u64;
        let centred = |seed: &mut u64| uniform(seed) - 0.5;
        let point = |scale: f64, seed: &mut u64| {
            DVec3::new(centred(seed), centred(seed), centred(seed)) * scale
        };
        let (mut hits, mut moved) = (0, 0);
        for _ in 0..20_000 {
            let [a, b, c] = [(); 3].map(|_| point(100.0, &mut seed));
            let normal = (b - a).cross(c - a).normalize();
            let in_plane = |p: DVec3| p - normal * normal.dot(p - a);
            // Through a point of the triangle's plane near it (in it, but for the
            // rounding of `in_plane` and a tilt below it).
            let through = in_plane(point(100.0, &mut seed));
            let s = in_plane(through + point(800.0, &mut seed));
            let d = (through - s) * 2.0 + normal * (centred(&mut seed) * 1e-12);
            let Some(hit) = intersect_segment_triangle(s, d, a, b, c) else {
                continue;
            };
            hits += 1;
            let crossing = s + d * hit.t;
            let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
            let slack = 1e-9;
            assert!(
                crossing.cmpge(lo - slack).all() && crossing.cmple(hi + slack).all(),
                "{crossing} outside [{lo}, {hi}]: {s} + t·{d}, {a} {b} {c}"
            );
            let plane_t = normal.dot(a - s) / normal.dot(d);
            let plane_crossing = s + d * plane_t;
            if (plane_crossing.cmplt(lo - slack) | plane_crossing.cmpgt(hi + slack)).any() {
                moved += 1;
            }
            assert_eq!(
                intersect_segment_triangle_up_to(s, d, a, b, c, hit.t),
                Some(hit)
            );
        }
        // The test is worth something only if rounding put many crossings outside.
        assert!(hits > 300 && moved > 100, "{hits} hits, {moved} moved");
    }

    #[test]
    fn grazing_segments_never_slip_between_triangles_at_their_boxes_edge() {
        // Two triangles sharing the edge x = 124, which bounds both their boxes, in a
        // plane turned 0.7 rad about x; segments 1 000 units long, within 10^-5 and
        // 10^-6 radians of that plane, crossing the edge or a hair beside it. Their `t`
        // is rounded enough to put the crossing outside the box: a check that refused
        // such hits let 169 and 6 494 of 20 000 such segments through.
        let turn = glam::DQuat::from_rotation_x(0.7);
        let place = |p: DVec3| {
            (turn * p + DVec3::new(123.0, -56.0, 89.0))
                .as_vec3()
                .as_dvec3()
        };
        let [a, b, c, e] = [
            DVec3::ZERO,
            DVec3::X,
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(2.0, 0.0, 0.0),
        ]
        .map(place);
        let mut seed = 7u64;
        let mut next = || uniform(&mut seed);
        for angle in [1e-5f64, 1e-6] {
            for _ in 0..2_000 {
                let along = 0.1 + 0.8 * next();
                let beside = (next() - 0.5) * 1e-12;
                let crossing = b + (c - b) * along + (e - b) * beside;
                let d = turn
                    * (DVec3::new(angle.cos(), 0.3 * (next() - 0.5), -angle.sin()).normalize()
                        * 1000.0);
                let s = crossing - d * (0.2 + 0.6 * next());
                let hits = [
                    intersect_segment_triangle(s, d, a, b, c),
                    intersect_segment_triangle(s, d, b, e, c),
                ];
                assert!(
                    hits.iter().any(Option::is_some),
                    "crack at {angle:e}, {s}, {d}"
                );
            }
        }
    }
}
