//! Closest points on lines, segments and triangles.

use glam::DVec3;

/// A point given together with its parameter along a line, ray or segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParametricPoint {
    /// Parameter `t` of the point `origin + t · direction` (for a segment
    /// `a + t (b − a)`, `t ∈ [0, 1]`).
    pub t: f64,
    /// The point itself.
    pub point: DVec3,
}

/// Closest point to `p` on the infinite line `origin + t · direction`:
/// `t = (p − o)·d / (d·d)`.
///
/// A zero `direction` makes the line a single point: the result is `origin`
/// with `t = 0`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::closest_point_on_line;
/// let q = closest_point_on_line(DVec3::new(3.0, 4.0, 0.0), DVec3::ZERO, DVec3::new(2.0, 0.0, 0.0));
/// assert_eq!(q.t, 1.5);
/// assert_eq!(q.point, DVec3::new(3.0, 0.0, 0.0));
/// ```
pub fn closest_point_on_line(p: DVec3, origin: DVec3, direction: DVec3) -> ParametricPoint {
    let dd = direction.length_squared();
    if dd <= 0.0 || !dd.is_finite() {
        return ParametricPoint {
            t: 0.0,
            point: origin,
        };
    }
    let t = (p - origin).dot(direction) / dd;
    ParametricPoint {
        t,
        point: origin + t * direction,
    }
}

/// Closest point to `p` on the closed segment `a → b`: the line parameter
/// `t = (p − a)·(b − a) / |b − a|²` clamped to `[0, 1]`.
///
/// A zero-length segment (`a == b`) gives `a` with `t = 0`. A segment so long that
/// `|b − a|²` overflows (10^155 and more) is measured scaled down by its largest
/// component, so it still gets its closest point (with a non-finite `b − a`, `a`).
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::closest_point_on_segment;
/// let q = closest_point_on_segment(DVec3::new(5.0, 1.0, 0.0), DVec3::ZERO, DVec3::X);
/// assert_eq!((q.t, q.point), (1.0, DVec3::X));
/// ```
pub fn closest_point_on_segment(p: DVec3, a: DVec3, b: DVec3) -> ParametricPoint {
    let ab = b - a;
    let dd = ab.length_squared();
    let t = if dd > 0.0 && dd.is_finite() {
        (p - a).dot(ab) / dd
    } else {
        let largest = ab.abs().max_element();
        if !(largest > 0.0 && largest.is_finite()) {
            return ParametricPoint { t: 0.0, point: a };
        }
        let unit = ab / largest;
        ((p - a) / largest).dot(unit) / unit.length_squared()
    };
    let t = t.clamp(0.0, 1.0);
    let point = if t == 0.0 {
        a
    } else if t == 1.0 {
        b
    } else {
        a + t * ab
    };
    ParametricPoint { t, point }
}

/// Closest point to `p` on the closed triangle `a, b, c` (interior included).
///
/// Voronoi-region method (Ericson, *Real-Time Collision Detection* §5.1.5): with
/// `d1 = ab·ap`, `d2 = ac·ap`, … the point is classified against the vertex,
/// edge and face regions, and in the face region the barycentric weights are
/// `v = vb / (va + vb + vc)`, `w = vc / (va + vb + vc)`.
///
/// A degenerate (zero-area) triangle is treated as the union of its three edges,
/// so the result is still the closest point of the closed set.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::closest_point_on_triangle;
/// let q = closest_point_on_triangle(DVec3::new(0.25, 0.25, 3.0), DVec3::ZERO, DVec3::X, DVec3::Y);
/// assert_eq!(q, DVec3::new(0.25, 0.25, 0.0));
/// ```
pub fn closest_point_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let ab = b - a;
    let ac = c - a;
    let n = ab.cross(ac);
    let scale = ab.length_squared() * ac.length_squared();
    let has_area = n.length_squared() > 1e-24 * scale;
    if !has_area {
        return closest_on_edges(p, a, b, c);
    }
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + (d1 / (d1 - d3)) * ab;
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + (d2 / (d2 - d6)) * ac;
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// Closest point on the union of the three edges (for degenerate triangles).
fn closest_on_edges(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    [(a, b), (b, c), (c, a)]
        .into_iter()
        .map(|(u, v)| closest_point_on_segment(p, u, v).point)
        .fold(a, |best, q| {
            if p.distance_squared(q) < p.distance_squared(best) {
                q
            } else {
                best
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_too_long_to_square_still_gets_its_closest_point() {
        // |b - a|^2 = 4e400 overflows.
        let (a, b) = (DVec3::new(-1e200, 0.0, 0.0), DVec3::new(1e200, 0.0, 0.0));
        let q = closest_point_on_segment(DVec3::new(0.0, 5.0, 0.0), a, b);
        assert_eq!((q.t, q.point), (0.5, DVec3::ZERO));
        let q = closest_point_on_segment(DVec3::new(3e200, 1.0, 0.0), a, b);
        assert_eq!((q.t, q.point), (1.0, b));
        // A segment whose direction itself overflows: its start, as before.
        let q =
            closest_point_on_segment(DVec3::ZERO, DVec3::splat(-f64::MAX), DVec3::splat(f64::MAX));
        assert_eq!((q.t, q.point), (0.0, DVec3::splat(-f64::MAX)));
    }

    #[test]
    fn line_projection_and_degenerate() {
        // p = (1, 2, 3), line through (0,0,0) along (0, 0, 2): t = 6/4 = 1.5, point (0,0,3).
        let q = closest_point_on_line(
            DVec3::new(1.0, 2.0, 3.0),
            DVec3::ZERO,
            DVec3::new(0.0, 0.0, 2.0),
        );
        assert_eq!(q.t, 1.5);
        assert_eq!(q.point, DVec3::new(0.0, 0.0, 3.0));
        // Zero direction: the origin itself.
        let q = closest_point_on_line(DVec3::ONE, DVec3::X, DVec3::ZERO);
        assert_eq!((q.t, q.point), (0.0, DVec3::X));
    }

    #[test]
    fn segment_interior_and_clamped() {
        let a = DVec3::new(1.0, 0.0, 0.0);
        let b = DVec3::new(5.0, 0.0, 0.0);
        // p = (2, 3, 0): t = (1·4)/16 = 0.25 → (2, 0, 0).
        let q = closest_point_on_segment(DVec3::new(2.0, 3.0, 0.0), a, b);
        assert_eq!((q.t, q.point), (0.25, DVec3::new(2.0, 0.0, 0.0)));
        // p before a: t = −4/16 → clamped to 0 → a.
        let q = closest_point_on_segment(DVec3::new(-3.0, 1.0, 0.0), a, b);
        assert_eq!((q.t, q.point), (0.0, a));
        // p beyond b: t = 8/16 ... (9 − 1)·4/16 = 2 → clamped to 1 → b.
        let q = closest_point_on_segment(DVec3::new(9.0, 0.0, 1.0), a, b);
        assert_eq!((q.t, q.point), (1.0, b));
        // Zero-length segment.
        let q = closest_point_on_segment(DVec3::ONE, a, a);
        assert_eq!((q.t, q.point), (0.0, a));
    }

    #[test]
    fn triangle_regions() {
        let a = DVec3::ZERO;
        let b = DVec3::new(2.0, 0.0, 0.0);
        let c = DVec3::new(0.0, 2.0, 0.0);
        // Face region: straight projection.
        assert_eq!(
            closest_point_on_triangle(DVec3::new(0.5, 0.5, -4.0), a, b, c),
            DVec3::new(0.5, 0.5, 0.0)
        );
        // Vertex regions.
        assert_eq!(
            closest_point_on_triangle(DVec3::new(-1.0, -1.0, 1.0), a, b, c),
            a
        );
        assert_eq!(
            closest_point_on_triangle(DVec3::new(3.0, -1.0, 0.0), a, b, c),
            b
        );
        assert_eq!(
            closest_point_on_triangle(DVec3::new(-1.0, 5.0, 0.0), a, b, c),
            c
        );
        // Edge ab region: p = (1, −3, 2) → (1, 0, 0).
        assert_eq!(
            closest_point_on_triangle(DVec3::new(1.0, -3.0, 2.0), a, b, c),
            DVec3::new(1.0, 0.0, 0.0)
        );
        // Edge ac region: p = (−2, 1, 0) → (0, 1, 0).
        assert_eq!(
            closest_point_on_triangle(DVec3::new(-2.0, 1.0, 0.0), a, b, c),
            DVec3::new(0.0, 1.0, 0.0)
        );
        // Edge bc (hypotenuse x + y = 2): p = (2, 2, 0) → (1, 1, 0).
        let q = closest_point_on_triangle(DVec3::new(2.0, 2.0, 0.0), a, b, c);
        assert!((q - DVec3::new(1.0, 1.0, 0.0)).length() < 1e-15);
    }

    #[test]
    fn triangle_point_on_edge_and_degenerate() {
        let a = DVec3::ZERO;
        let b = DVec3::new(2.0, 0.0, 0.0);
        let c = DVec3::new(0.0, 2.0, 0.0);
        // A point exactly on edge ab is its own closest point.
        assert_eq!(
            closest_point_on_triangle(DVec3::new(1.0, 0.0, 0.0), a, b, c),
            DVec3::new(1.0, 0.0, 0.0)
        );
        // Collinear triangle (0,0,0), (1,0,0), (3,0,0): behaves as segment [0, 3] on x.
        let q = closest_point_on_triangle(
            DVec3::new(2.0, 1.0, 0.0),
            DVec3::ZERO,
            DVec3::X,
            DVec3::new(3.0, 0.0, 0.0),
        );
        assert_eq!(q, DVec3::new(2.0, 0.0, 0.0));
        // Fully collapsed triangle: the single point.
        assert_eq!(closest_point_on_triangle(DVec3::ONE, b, b, b), b);
    }
}
