//! Static sphere tests: sphere–sphere, sphere–line, sphere–segment and
//! sphere–triangle.
//!
//! All balls are closed: a tangent contact intersects. A negative or NaN radius
//! is treated as `0` (the ball is a single point).

use glam::DVec3;

use super::closest_point::{closest_point_on_segment, closest_point_on_triangle};
use super::sanitize_radius;

/// The parameter interval `[t_enter, t_exit]` of a line (or segment) inside a
/// closed ball. For a tangent line `t_enter == t_exit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineInterval {
    /// Parameter where the line enters the ball.
    pub t_enter: f64,
    /// Parameter where the line leaves the ball (`>= t_enter`).
    pub t_exit: f64,
}

/// Do the closed balls (`c1`, `r1`) and (`c2`, `r2`) meet?
/// `|c1 − c2|² ≤ (r1 + r2)²` (tangent balls intersect).
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_test_sphere_sphere;
/// // Centres 3 apart, radii 1 + 2 = 3: tangent, so they intersect.
/// assert!(intersection_test_sphere_sphere(DVec3::ZERO, 1.0, DVec3::new(3.0, 0.0, 0.0), 2.0));
/// ```
pub fn intersection_test_sphere_sphere(c1: DVec3, r1: f64, c2: DVec3, r2: f64) -> bool {
    let r = sanitize_radius(r1) + sanitize_radius(r2);
    c1.distance_squared(c2) <= r * r
}

/// Where the line `origin + t · direction` (all real `t`) crosses the closed ball.
///
/// Solves `|m + t d|² = r²` with `m = origin − center`:
/// `a t² + 2 b t + c = 0`, `a = d·d`, `b = m·d`, `c = m·m − r²`, discriminant
/// `Δ = b² − a c`; `None` when `Δ < 0`. The roots are computed in the
/// cancellation-free form `q = −(b + sign(b)√Δ)`, `t = q / a`, `t = c / q`.
///
/// A zero `direction` makes the "line" the single point `origin`: the result is
/// `t ∈ (−∞, +∞)` if the origin is in the ball and `None` otherwise.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_sphere_line;
/// // Unit ball at the origin, line x = −3 + t along x: enters at t = 2, exits at t = 4.
/// let i = intersection_sphere_line(DVec3::ZERO, 1.0, DVec3::new(-3.0, 0.0, 0.0), DVec3::X).unwrap();
/// assert_eq!((i.t_enter, i.t_exit), (2.0, 4.0));
/// ```
pub fn intersection_sphere_line(
    center: DVec3,
    radius: f64,
    origin: DVec3,
    direction: DVec3,
) -> Option<LineInterval> {
    let r = sanitize_radius(radius);
    let m = origin - center;
    let a = direction.length_squared();
    let b = m.dot(direction);
    let c = m.length_squared() - r * r;
    if a <= 0.0 {
        return (c <= 0.0).then_some(LineInterval {
            t_enter: f64::NEG_INFINITY,
            t_exit: f64::INFINITY,
        });
    }
    let disc = b * b - a * c;
    if disc < 0.0 || disc.is_nan() {
        return None;
    }
    let sq = disc.sqrt();
    let q = if b >= 0.0 { -(b + sq) } else { -b + sq };
    if q == 0.0 {
        // b = 0 and Δ = 0: tangent with the closest point at t = 0.
        return Some(LineInterval {
            t_enter: 0.0,
            t_exit: 0.0,
        });
    }
    let (t1, t2) = (q / a, c / q);
    Some(LineInterval {
        t_enter: t1.min(t2),
        t_exit: t1.max(t2),
    })
}

/// Does the closed line `origin + t · direction` meet the closed ball?
/// Equivalent to `intersection_sphere_line(..).is_some()`.
pub fn intersection_test_sphere_line(
    center: DVec3,
    radius: f64,
    origin: DVec3,
    direction: DVec3,
) -> bool {
    intersection_sphere_line(center, radius, origin, direction).is_some()
}

/// The part `[t_enter, t_exit] ⊆ [0, 1]` of the closed segment `a → b` inside the
/// closed ball: the line interval of [`intersection_sphere_line`] clipped to
/// `[0, 1]`; `None` if the clipped interval is empty.
///
/// A zero-length segment is the point `a`: `Some([0, 1])` if `a` is in the ball.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_sphere_segment;
/// // Segment from the centre of a ball of radius 2 out to x = 4: inside for t ∈ [0, 0.5].
/// let i = intersection_sphere_segment(DVec3::ZERO, 2.0, DVec3::ZERO, DVec3::new(4.0, 0.0, 0.0)).unwrap();
/// assert_eq!((i.t_enter, i.t_exit), (0.0, 0.5));
/// ```
pub fn intersection_sphere_segment(
    center: DVec3,
    radius: f64,
    a: DVec3,
    b: DVec3,
) -> Option<LineInterval> {
    let i = intersection_sphere_line(center, radius, a, b - a)?;
    let t_enter = i.t_enter.max(0.0);
    let t_exit = i.t_exit.min(1.0);
    (t_enter <= t_exit).then_some(LineInterval { t_enter, t_exit })
}

/// Does the closed segment `a → b` meet the closed ball? Tests the distance of the
/// closest segment point: `|closest(c) − c|² ≤ r²`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_test_sphere_segment;
/// // Segment on the x axis passes 1 below a ball of radius 1 centred at (0, 0, 1).
/// assert!(intersection_test_sphere_segment(DVec3::Z, 1.0, DVec3::new(-5.0, 0.0, 0.0), DVec3::new(5.0, 0.0, 0.0)));
/// ```
pub fn intersection_test_sphere_segment(center: DVec3, radius: f64, a: DVec3, b: DVec3) -> bool {
    let r = sanitize_radius(radius);
    closest_point_on_segment(center, a, b)
        .point
        .distance_squared(center)
        <= r * r
}

/// Does the closed triangle `a, b, c` meet the closed ball? Tests the distance of
/// the closest triangle point ([`closest_point_on_triangle`]): `|q − c|² ≤ r²`.
/// A degenerate triangle is tested as its edges.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_test_sphere_triangle;
/// let (a, b, c) = (DVec3::ZERO, DVec3::X, DVec3::Y);
/// assert!(intersection_test_sphere_triangle(DVec3::new(0.2, 0.2, 0.5), 0.5, a, b, c));
/// assert!(!intersection_test_sphere_triangle(DVec3::new(0.2, 0.2, 0.6), 0.5, a, b, c));
/// ```
pub fn intersection_test_sphere_triangle(
    center: DVec3,
    radius: f64,
    a: DVec3,
    b: DVec3,
    c: DVec3,
) -> bool {
    let r = sanitize_radius(radius);
    closest_point_on_triangle(center, a, b, c).distance_squared(center) <= r * r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sphere_sphere() {
        let c2 = DVec3::new(3.0, 4.0, 0.0); // |c2| = 5
        assert!(intersection_test_sphere_sphere(DVec3::ZERO, 2.0, c2, 3.0)); // 5 ≤ 5 tangent
        assert!(!intersection_test_sphere_sphere(DVec3::ZERO, 2.0, c2, 2.9)); // 5 > 4.9
        assert!(intersection_test_sphere_sphere(DVec3::ZERO, 10.0, c2, 0.0)); // point inside
                                                                              // Two zero-radius balls meet only when the centres coincide.
        assert!(intersection_test_sphere_sphere(c2, 0.0, c2, -1.0));
        assert!(!intersection_test_sphere_sphere(DVec3::ZERO, 0.0, c2, 0.0));
    }

    #[test]
    fn line_crossing_tangent_missing() {
        // Ball centre (0, 0, 0) radius 5, line o = (−10, 3, 0), d = (2, 0, 0):
        // x = −10 + 2t, y = 3: x² = 25 − 9 = 16 → x = ±4 → t = 3 and t = 7.
        let i = intersection_sphere_line(
            DVec3::ZERO,
            5.0,
            DVec3::new(-10.0, 3.0, 0.0),
            DVec3::new(2.0, 0.0, 0.0),
        )
        .unwrap();
        assert!((i.t_enter - 3.0).abs() < 1e-12 && (i.t_exit - 7.0).abs() < 1e-12);
        // Tangent: y = 5 → x = 0 → t = 5 (double root).
        let i = intersection_sphere_line(
            DVec3::ZERO,
            5.0,
            DVec3::new(-10.0, 5.0, 0.0),
            DVec3::new(2.0, 0.0, 0.0),
        )
        .unwrap();
        assert_eq!((i.t_enter, i.t_exit), (5.0, 5.0));
        // Miss: y = 5.5 > 5.
        assert!(
            intersection_sphere_line(DVec3::ZERO, 5.0, DVec3::new(-10.0, 5.5, 0.0), DVec3::X)
                .is_none()
        );
        assert!(!intersection_test_sphere_line(
            DVec3::ZERO,
            5.0,
            DVec3::new(-10.0, 5.5, 0.0),
            DVec3::X
        ));
    }

    #[test]
    fn line_degenerate_direction() {
        let inside = intersection_sphere_line(DVec3::ZERO, 1.0, DVec3::X * 0.5, DVec3::ZERO);
        assert_eq!(inside.map(|i| i.t_enter), Some(f64::NEG_INFINITY));
        assert!(intersection_sphere_line(DVec3::ZERO, 1.0, DVec3::X * 2.0, DVec3::ZERO).is_none());
    }

    #[test]
    fn line_tangent_at_origin_of_parameter() {
        // Line through (0, 1, 0) along x touches the unit ball at t = 0 (b = 0, Δ = 0).
        let i = intersection_sphere_line(DVec3::ZERO, 1.0, DVec3::Y, DVec3::X).unwrap();
        assert_eq!((i.t_enter, i.t_exit), (0.0, 0.0));
    }

    #[test]
    fn segment_clipping() {
        // Unit ball; segment from (−3,0,0) to (1,0,0): line t ∈ [0.5, 1] (x = −3 + 4t ∈ [−1, 1]).
        let i = intersection_sphere_segment(
            DVec3::ZERO,
            1.0,
            DVec3::new(-3.0, 0.0, 0.0),
            DVec3::new(1.0, 0.0, 0.0),
        )
        .unwrap();
        assert_eq!((i.t_enter, i.t_exit), (0.5, 1.0));
        // Segment ending just before the ball: x = −3 + 1.5t ≤ −1.5 never reaches −1.
        assert!(intersection_sphere_segment(
            DVec3::ZERO,
            1.0,
            DVec3::new(-3.0, 0.0, 0.0),
            DVec3::new(-1.5, 0.0, 0.0)
        )
        .is_none());
        // Segment touching at its end point (closed ball).
        let i = intersection_sphere_segment(
            DVec3::ZERO,
            1.0,
            DVec3::new(-3.0, 0.0, 0.0),
            DVec3::new(-1.0, 0.0, 0.0),
        )
        .unwrap();
        assert_eq!((i.t_enter, i.t_exit), (1.0, 1.0));
    }

    #[test]
    fn segment_test() {
        let a = DVec3::new(-1.0, 2.0, 0.0);
        let b = DVec3::new(1.0, 2.0, 0.0);
        // Closest point (0, 2, 0), distance 2.
        assert!(intersection_test_sphere_segment(DVec3::ZERO, 2.0, a, b)); // tangent
        assert!(!intersection_test_sphere_segment(DVec3::ZERO, 1.999, a, b));
        // End-point region: centre (4, 2, 0), closest b, distance 3.
        assert!(intersection_test_sphere_segment(
            DVec3::new(4.0, 2.0, 0.0),
            3.0,
            a,
            b
        ));
        assert!(!intersection_test_sphere_segment(
            DVec3::new(4.0, 2.0, 0.0),
            2.9,
            a,
            b
        ));
        // Zero-length segment = point.
        assert!(intersection_test_sphere_segment(
            DVec3::ZERO,
            1.0,
            DVec3::X,
            DVec3::X
        ));
    }

    #[test]
    fn triangle_test() {
        let (a, b, c) = (
            DVec3::ZERO,
            DVec3::new(2.0, 0.0, 0.0),
            DVec3::new(0.0, 2.0, 0.0),
        );
        // Above the face at height 1: tangent for r = 1.
        assert!(intersection_test_sphere_triangle(
            DVec3::new(0.5, 0.5, 1.0),
            1.0,
            a,
            b,
            c
        ));
        assert!(!intersection_test_sphere_triangle(
            DVec3::new(0.5, 0.5, 1.0),
            0.99,
            a,
            b,
            c
        ));
        // Near the hypotenuse: centre (2, 2, 0) is √2 from (1, 1, 0).
        assert!(intersection_test_sphere_triangle(
            DVec3::new(2.0, 2.0, 0.0),
            1.415,
            a,
            b,
            c
        ));
        assert!(!intersection_test_sphere_triangle(
            DVec3::new(2.0, 2.0, 0.0),
            1.414,
            a,
            b,
            c
        ));
    }
}
