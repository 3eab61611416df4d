//! Planar polygons: point containment, sphere–polygon and segment–polygon.
//!
//! A polygon is a slice of vertices in order (either winding), simple (not
//! self-intersecting), convex or not, and planar. Its plane is the Newell plane:
//! normal `n = Σ (yᵢ − yⱼ)(zᵢ + zⱼ), (zᵢ − zⱼ)(xᵢ + xⱼ), (xᵢ − xⱼ)(yᵢ + yⱼ)` over
//! the edges `i → j = i + 1`, through the vertex centroid. For a non-planar
//! vertex list this is the best-fit plane and the polygon is treated as its
//! projection onto it.
//!
//! The polygon is a closed set (boundary included). Containment uses the
//! crossing-number rule in the plane (no angle summing), after an explicit
//! boundary test with a relative tolerance of `1e-12 ×` the polygon size.
//! A polygon with fewer than three vertices or zero area is *degenerate*: it is
//! treated as its closed outline (a polyline), which spheres can still touch but
//! segments never hit (as with coplanar segments, see
//! [`intersection_segment_polygon`]).

use glam::{DVec2, DVec3};

use super::closest_point::{closest_point_on_segment, ParametricPoint};
use super::plane::Plane;
use super::sanitize_radius;
use super::segment::{intersection_segment_plane, SegmentPlaneIntersection};

/// Relative tolerance of the boundary test.
const BOUNDARY_TOLERANCE: f64 = 1e-12;

/// The polygon's Newell plane and size, or `None` when it is degenerate.
fn polygon_plane(vertices: &[DVec3]) -> Option<(Plane, f64)> {
    if vertices.len() < 3 {
        return None;
    }
    let mut n = DVec3::ZERO;
    let mut centroid = DVec3::ZERO;
    for (i, &vi) in vertices.iter().enumerate() {
        let vj = vertices[(i + 1) % vertices.len()];
        n.x += (vi.y - vj.y) * (vi.z + vj.z);
        n.y += (vi.z - vj.z) * (vi.x + vj.x);
        n.z += (vi.x - vj.x) * (vi.y + vj.y);
        centroid += vi;
    }
    centroid /= vertices.len() as f64;
    let size = vertices
        .iter()
        .map(|v| v.distance(centroid))
        .fold(0.0, f64::max);
    // Zero area relative to the polygon's size: degenerate.
    let has_area = n.length() > 1e-12 * size * size;
    if !has_area {
        return None;
    }
    Some((Plane::from_point_normal(centroid, n)?, size))
}

/// Is `q` (in the polygon's plane) inside the closed polygon?
fn contains_projected(q: DVec3, vertices: &[DVec3], plane: &Plane, size: f64) -> bool {
    let tol = BOUNDARY_TOLERANCE * size.max(f64::MIN_POSITIVE);
    let on_boundary = vertices.iter().enumerate().any(|(i, &a)| {
        let b = vertices[(i + 1) % vertices.len()];
        closest_point_on_segment(q, a, b).point.distance(q) <= tol
    });
    if on_boundary {
        return true;
    }
    // Drop the dominant axis of the normal and count crossings of the +u ray.
    let n = plane.normal().abs();
    let to_2d = |v: DVec3| {
        if n.x >= n.y && n.x >= n.z {
            DVec2::new(v.y, v.z)
        } else if n.y >= n.z {
            DVec2::new(v.z, v.x)
        } else {
            DVec2::new(v.x, v.y)
        }
    };
    let p = to_2d(q);
    let mut inside = false;
    for (i, &a) in vertices.iter().enumerate() {
        let a = to_2d(a);
        let b = to_2d(vertices[(i + 1) % vertices.len()]);
        if (a.y > p.y) != (b.y > p.y) {
            let x_cross = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
            if p.x < x_cross {
                inside = !inside;
            }
        }
    }
    inside
}

/// Is `point`, projected onto the polygon's plane, inside the closed polygon?
///
/// Crossing-number test in the plane (robust for convex and concave simple
/// polygons), with points within `1e-12 ×` size of an edge counted as inside.
/// Degenerate polygons (fewer than 3 vertices, zero area) contain nothing.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::point_in_polygon;
/// let square = [DVec3::ZERO, DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Y];
/// assert!(point_in_polygon(DVec3::new(0.5, 0.5, 7.0), &square));
/// assert!(point_in_polygon(DVec3::new(1.0, 0.5, 0.0), &square)); // on an edge
/// assert!(!point_in_polygon(DVec3::new(1.5, 0.5, 0.0), &square));
/// ```
pub fn point_in_polygon(point: DVec3, vertices: &[DVec3]) -> bool {
    match polygon_plane(vertices) {
        Some((plane, size)) => {
            contains_projected(plane.project_point(point), vertices, &plane, size)
        }
        None => false,
    }
}

/// Does the closed ball meet the closed polygon?
///
/// 1. Plane test: with `s = n·c + d`, `|s| > r` → no.
/// 2. The centre projected onto the plane, `q = c − s n`, inside the polygon
///    (crossing number, boundary inclusive) → yes.
/// 3. Otherwise yes iff some edge has its closest point within `r` of the centre.
///
/// A degenerate polygon is tested as its closed outline (step 3 only); an empty
/// slice never intersects. A negative or NaN radius is treated as `0`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_test_sphere_polygon;
/// let square = [DVec3::ZERO, DVec3::new(2.0, 0.0, 0.0), DVec3::new(2.0, 2.0, 0.0), DVec3::new(0.0, 2.0, 0.0)];
/// // Centre exactly on an edge.
/// assert!(intersection_test_sphere_polygon(DVec3::new(2.0, 1.0, 0.0), 0.5, &square));
/// // Off a corner by √2 with radius 1.4.
/// assert!(!intersection_test_sphere_polygon(DVec3::new(3.0, 3.0, 0.0), 1.4, &square));
/// ```
pub fn intersection_test_sphere_polygon(center: DVec3, radius: f64, vertices: &[DVec3]) -> bool {
    let r = sanitize_radius(radius);
    if let Some((plane, size)) = polygon_plane(vertices) {
        let s = plane.signed_distance(center);
        let reaches_plane = s.abs() <= r;
        if !reaches_plane {
            return false;
        }
        let q = center - s * plane.normal();
        if contains_projected(q, vertices, &plane, size) {
            return true;
        }
    }
    match vertices {
        [] => false,
        [v] => v.distance_squared(center) <= r * r,
        _ => vertices.iter().enumerate().any(|(i, &a)| {
            let b = vertices[(i + 1) % vertices.len()];
            closest_point_on_segment(center, a, b)
                .point
                .distance_squared(center)
                <= r * r
        }),
    }
}

/// Where the closed segment `a → b` crosses the closed polygon: the
/// segment–plane point ([`intersection_segment_plane`] on the Newell plane) if it
/// lies inside the polygon (boundary inclusive).
///
/// Returns `None` when the segment misses, when it lies in the polygon's plane
/// (coplanar segments are not hit, like the line-segment intersector), and for
/// degenerate polygons.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::intersection_segment_polygon;
/// let tri = [DVec3::ZERO, DVec3::new(4.0, 0.0, 0.0), DVec3::new(0.0, 4.0, 0.0)];
/// let hit = intersection_segment_polygon(DVec3::new(1.0, 1.0, 2.0), DVec3::new(1.0, 1.0, -2.0), &tri).unwrap();
/// assert_eq!(hit.t, 0.5);
/// assert_eq!(hit.point, DVec3::new(1.0, 1.0, 0.0));
/// ```
pub fn intersection_segment_polygon(
    a: DVec3,
    b: DVec3,
    vertices: &[DVec3],
) -> Option<ParametricPoint> {
    let (plane, size) = polygon_plane(vertices)?;
    match intersection_segment_plane(a, b, &plane) {
        SegmentPlaneIntersection::Point(p) => {
            contains_projected(p.point, vertices, &plane, size).then_some(p)
        }
        SegmentPlaneIntersection::Disjoint | SegmentPlaneIntersection::Coplanar => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> [DVec3; 4] {
        [
            DVec3::ZERO,
            DVec3::new(2.0, 0.0, 0.0),
            DVec3::new(2.0, 2.0, 0.0),
            DVec3::new(0.0, 2.0, 0.0),
        ]
    }

    /// An L shape in the plane x = 1 (normal along x): the notch is y > 1, z > 1.
    fn l_shape() -> [DVec3; 6] {
        [
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(1.0, 3.0, 0.0),
            DVec3::new(1.0, 3.0, 1.0),
            DVec3::new(1.0, 1.0, 1.0),
            DVec3::new(1.0, 1.0, 3.0),
            DVec3::new(1.0, 0.0, 3.0),
        ]
    }

    #[test]
    fn containment_convex_and_concave() {
        assert!(point_in_polygon(DVec3::new(1.0, 1.0, 0.0), &square()));
        assert!(point_in_polygon(DVec3::new(0.0, 0.0, 0.0), &square())); // vertex
        assert!(!point_in_polygon(DVec3::new(-0.1, 1.0, 0.0), &square()));
        // L shape: (y, z) = (2, 0.5) in the foot, (0.5, 2) in the leg, (2, 2) in the notch.
        assert!(point_in_polygon(DVec3::new(1.0, 2.0, 0.5), &l_shape()));
        assert!(point_in_polygon(DVec3::new(1.0, 0.5, 2.0), &l_shape()));
        assert!(!point_in_polygon(DVec3::new(1.0, 2.0, 2.0), &l_shape()));
        // Notch corner (1, 1) is on the boundary.
        assert!(point_in_polygon(DVec3::new(1.0, 1.0, 1.0), &l_shape()));
    }

    #[test]
    fn sphere_polygon_face_region() {
        // Above the interior at height 1.5: tangent for r = 1.5, clear for r = 1.49.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, 1.5),
            1.5,
            &square()
        ));
        assert!(!intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, 1.5),
            1.49,
            &square()
        ));
        // Below (behind) works the same way: closed on both sides.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, -1.0),
            1.0,
            &square()
        ));
    }

    #[test]
    fn sphere_polygon_centre_on_edge() {
        // Centre exactly on the edge x = 2: s = 0, projection is on the boundary.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(2.0, 1.0, 0.0),
            0.5,
            &square()
        ));
        // Even a zero radius: the point lies in the closed polygon.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(2.0, 1.0, 0.0),
            0.0,
            &square()
        ));
        // Above the edge at height 0.5 with r = 0.5: tangent to the edge.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(2.0, 1.0, 0.5),
            0.5,
            &square()
        ));
    }

    #[test]
    fn either_winding() {
        // The square listed clockwise: same plane up to orientation, same answers.
        let mut cw = square();
        cw.reverse();
        assert!(intersection_test_sphere_polygon(
            DVec3::new(2.0, 1.0, 0.0),
            0.0,
            &cw
        ));
        assert!(intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, -1.5),
            1.5,
            &cw
        ));
        assert!(!intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, -1.5),
            1.49,
            &cw
        ));
        let hit = intersection_segment_polygon(
            DVec3::new(1.0, 0.5, 3.0),
            DVec3::new(1.0, 0.5, -1.0),
            &cw,
        )
        .unwrap();
        assert_eq!(hit.t, 0.75);
    }

    #[test]
    fn sphere_polygon_edge_and_corner_regions() {
        // Outside beside edge x = 2 in the plane: centre (2.5, 1, 0), distance 0.5.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(2.5, 1.0, 0.0),
            0.5,
            &square()
        ));
        assert!(!intersection_test_sphere_polygon(
            DVec3::new(2.5, 1.0, 0.0),
            0.49,
            &square()
        ));
        // Diagonal from the corner (2, 2): centre (3, 3, 0), distance √2 ≈ 1.41421.
        assert!(intersection_test_sphere_polygon(
            DVec3::new(3.0, 3.0, 0.0),
            std::f64::consts::SQRT_2 + 1e-9,
            &square()
        ));
        assert!(!intersection_test_sphere_polygon(
            DVec3::new(3.0, 3.0, 0.0),
            std::f64::consts::SQRT_2 - 1e-9,
            &square()
        ));
        // Concave notch of the L: centre (1, 2.5, 2.5) is 1.5 from the edges y = 1 and z = 1
        // (the notch corner (1, 1) is 1.5·√2 away); the projection lies outside.
        assert!(!intersection_test_sphere_polygon(
            DVec3::new(1.0, 2.5, 2.5),
            1.49,
            &l_shape()
        ));
        assert!(intersection_test_sphere_polygon(
            DVec3::new(1.0, 2.5, 2.5),
            1.5,
            &l_shape()
        ));
    }

    #[test]
    fn sphere_polygon_degenerate() {
        assert!(!intersection_test_sphere_polygon(DVec3::ZERO, 1.0, &[]));
        assert!(intersection_test_sphere_polygon(
            DVec3::ZERO,
            1.0,
            &[DVec3::X]
        ));
        // Collinear "polygon" = outline along x from 0 to 2; centre (1, 1, 0) is 1 away.
        let flat = [DVec3::ZERO, DVec3::X, DVec3::new(2.0, 0.0, 0.0)];
        assert!(intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, 0.0),
            1.0,
            &flat
        ));
        assert!(!intersection_test_sphere_polygon(
            DVec3::new(1.0, 1.0, 0.0),
            0.9,
            &flat
        ));
    }

    #[test]
    fn segment_polygon() {
        // Vertical segment through (1, 0.5): from z = 3 to z = −1 → t = 3/4.
        let hit = intersection_segment_polygon(
            DVec3::new(1.0, 0.5, 3.0),
            DVec3::new(1.0, 0.5, -1.0),
            &square(),
        )
        .unwrap();
        assert_eq!(hit.t, 0.75);
        assert_eq!(hit.point, DVec3::new(1.0, 0.5, 0.0));
        // Through an edge point (2, 1, 0): closed polygon, hit.
        assert!(intersection_segment_polygon(
            DVec3::new(2.0, 1.0, 1.0),
            DVec3::new(2.0, 1.0, -1.0),
            &square()
        )
        .is_some());
        // Crossing the plane outside: (3, 1).
        assert!(intersection_segment_polygon(
            DVec3::new(3.0, 1.0, 1.0),
            DVec3::new(3.0, 1.0, -1.0),
            &square()
        )
        .is_none());
        // Through the L's notch: misses.
        assert!(intersection_segment_polygon(
            DVec3::new(0.0, 2.0, 2.0),
            DVec3::new(2.0, 2.0, 2.0),
            &l_shape()
        )
        .is_none());
        // Through the L's leg at x = 1: t = 0.5.
        let hit = intersection_segment_polygon(
            DVec3::new(0.0, 0.5, 2.0),
            DVec3::new(2.0, 0.5, 2.0),
            &l_shape(),
        )
        .unwrap();
        assert_eq!(hit.t, 0.5);
    }

    #[test]
    fn segment_polygon_parallel_and_coplanar() {
        // Parallel above the square.
        assert!(intersection_segment_polygon(
            DVec3::new(0.0, 1.0, 1.0),
            DVec3::new(2.0, 1.0, 1.0),
            &square()
        )
        .is_none());
        // In the square's plane: coplanar, not a hit.
        assert!(intersection_segment_polygon(
            DVec3::new(0.5, 1.0, 0.0),
            DVec3::new(1.5, 1.0, 0.0),
            &square()
        )
        .is_none());
        // Degenerate polygon.
        assert!(
            intersection_segment_polygon(DVec3::Z, -DVec3::Z, &[DVec3::ZERO, DVec3::X]).is_none()
        );
    }
}
