//! Segment–plane intersection.

use glam::DVec3;

use super::closest_point::ParametricPoint;
use super::plane::Plane;

/// How a closed segment meets a plane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SegmentPlaneIntersection {
    /// No common point (including a segment parallel to the plane and off it).
    Disjoint,
    /// Exactly one common point, at parameter `t ∈ [0, 1]` of `a + t (b − a)`.
    Point(ParametricPoint),
    /// The whole segment lies in the plane (both end points have signed distance
    /// exactly `0`; a zero-length segment on the plane included).
    Coplanar,
}

/// Intersects the closed segment `a → b` with `plane`.
///
/// With signed distances `sa = n·a + d`, `sb = n·b + d`: both zero → `Coplanar`;
/// both strictly on the same side → `Disjoint` (a parallel segment off the plane
/// has `sa == sb ≠ 0`); otherwise the crossing is at `t = sa / (sa − sb)`
/// (exactly `a` when `sa = 0`, exactly `b` when `sb = 0`).
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{intersection_segment_plane, Plane, SegmentPlaneIntersection};
/// let floor = Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap();
/// let hit = intersection_segment_plane(DVec3::new(0.0, 0.0, 3.0), DVec3::new(4.0, 0.0, -1.0), &floor);
/// match hit {
///     SegmentPlaneIntersection::Point(p) => {
///         assert_eq!(p.t, 0.75);
///         assert_eq!(p.point, DVec3::new(3.0, 0.0, 0.0));
///     }
///     other => panic!("unexpected {other:?}"),
/// }
/// ```
pub fn intersection_segment_plane(a: DVec3, b: DVec3, plane: &Plane) -> SegmentPlaneIntersection {
    let sa = plane.signed_distance(a);
    let sb = plane.signed_distance(b);
    if sa == 0.0 && sb == 0.0 {
        return SegmentPlaneIntersection::Coplanar;
    }
    if (sa > 0.0 && sb > 0.0) || (sa < 0.0 && sb < 0.0) || sa.is_nan() || sb.is_nan() {
        return SegmentPlaneIntersection::Disjoint;
    }
    let (t, point) = if sa == 0.0 {
        (0.0, a)
    } else if sb == 0.0 {
        (1.0, b)
    } else {
        let t = sa / (sa - sb);
        (t, a + t * (b - a))
    };
    SegmentPlaneIntersection::Point(ParametricPoint { t, point })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor() -> Plane {
        Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap()
    }

    #[test]
    fn crossing() {
        // sa = 1, sb = −3 → t = 1 / 4 = 0.25; point = (0,0,1) + 0.25·(8,0,−4) = (2, 0, 0).
        let r = intersection_segment_plane(DVec3::Z, DVec3::new(8.0, 0.0, -3.0), &floor());
        assert_eq!(
            r,
            SegmentPlaneIntersection::Point(ParametricPoint {
                t: 0.25,
                point: DVec3::new(2.0, 0.0, 0.0)
            })
        );
    }

    #[test]
    fn end_point_touching() {
        // b on the plane: t = 1, the point is b exactly (closed segment).
        let b = DVec3::new(1.0, 2.0, 0.0);
        let r = intersection_segment_plane(DVec3::new(0.0, 0.0, 5.0), b, &floor());
        assert_eq!(
            r,
            SegmentPlaneIntersection::Point(ParametricPoint { t: 1.0, point: b })
        );
        // a on the plane, b below.
        let r = intersection_segment_plane(b, DVec3::new(0.0, 0.0, -5.0), &floor());
        assert_eq!(
            r,
            SegmentPlaneIntersection::Point(ParametricPoint { t: 0.0, point: b })
        );
    }

    #[test]
    fn same_side_and_parallel() {
        // Both above.
        assert_eq!(
            intersection_segment_plane(DVec3::Z, DVec3::new(1.0, 1.0, 2.0), &floor()),
            SegmentPlaneIntersection::Disjoint
        );
        // Parallel segment 1 above the plane: sa = sb = 1.
        assert_eq!(
            intersection_segment_plane(DVec3::Z, DVec3::new(5.0, 0.0, 1.0), &floor()),
            SegmentPlaneIntersection::Disjoint
        );
        // Parallel segment in the plane.
        assert_eq!(
            intersection_segment_plane(DVec3::ZERO, DVec3::new(5.0, 3.0, 0.0), &floor()),
            SegmentPlaneIntersection::Coplanar
        );
        // Zero-length segments.
        assert_eq!(
            intersection_segment_plane(DVec3::X, DVec3::X, &floor()),
            SegmentPlaneIntersection::Coplanar
        );
        assert_eq!(
            intersection_segment_plane(DVec3::Z, DVec3::Z, &floor()),
            SegmentPlaneIntersection::Disjoint
        );
        // Non-finite input is disjoint, not a panic.
        assert_eq!(
            intersection_segment_plane(DVec3::NAN, DVec3::Z, &floor()),
            SegmentPlaneIntersection::Disjoint
        );
    }
}
