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
            if dp >= 0.0 {
                next.push(p);
            }
            if (dp > 0.0 && dq < 0.0) || (dp < 0.0 && dq > 0.0) {
                let t = dp / (dp - dq);
                next.push(p + (q - p) * t);
            }
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
}
