//! Ray–plane intersection and the ray hit type shared with the cylinder tests.

use glam::DVec3;

use super::plane::Plane;

/// Where a ray `origin + t · direction` (`t ≥ 0`) first meets a closed solid or
/// surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// Ray parameter of the entry point, in units of the direction vector.
    pub t: f64,
    /// The entry point `origin + t · direction`.
    pub point: DVec3,
    /// Unit surface normal at the entry point, facing the side the ray comes from
    /// (the outward normal for solids).
    pub normal: DVec3,
}

/// First point of the ray `origin + t · direction`, `t ≥ 0`, on `plane`.
///
/// With `s = n·o + d` and `k = n·dir`: `t = −s / k`, rejected when `t < 0`. The
/// normal is `n` when the ray arrives from the front (`k < 0`) and `−n` when it
/// arrives from behind (`k > 0`).
///
/// Parallel cases (`k = 0`, a zero direction included): a ray lying in the plane
/// (`s = 0`) hits at `t = 0` with normal `n`; any other parallel ray misses.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{intersection_ray_plane, Plane};
/// let floor = Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap();
/// let hit = intersection_ray_plane(DVec3::new(1.0, 0.0, 4.0), DVec3::new(0.0, 1.0, -2.0), &floor).unwrap();
/// assert_eq!(hit.t, 2.0);
/// assert_eq!(hit.point, DVec3::new(1.0, 2.0, 0.0));
/// assert_eq!(hit.normal, DVec3::Z);
/// ```
pub fn intersection_ray_plane(origin: DVec3, direction: DVec3, plane: &Plane) -> Option<RayHit> {
    let n = plane.normal();
    let s = plane.signed_distance(origin);
    let k = n.dot(direction);
    if k == 0.0 {
        return (s == 0.0).then_some(RayHit {
            t: 0.0,
            point: origin,
            normal: n,
        });
    }
    // `+ 0.0` turns a −0 into +0 when the origin is on the plane.
    let t = -s / k + 0.0;
    let ahead = t >= 0.0 && t.is_finite();
    if !ahead {
        return None;
    }
    let point = if t == 0.0 {
        origin
    } else {
        origin + t * direction
    };
    Some(RayHit {
        t,
        point,
        normal: if k < 0.0 { n } else { -n },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane_x(x: f64) -> Plane {
        // x = x0, front side towards +x.
        Plane::from_point_normal(DVec3::new(x, 0.0, 0.0), DVec3::X).unwrap()
    }

    #[test]
    fn hit_from_front_and_behind() {
        // o = (5, 1, 1), dir = (−2, 0, 0), plane x = 1: s = 4, k = −2 → t = 2, normal +x.
        let h = intersection_ray_plane(
            DVec3::new(5.0, 1.0, 1.0),
            DVec3::new(-2.0, 0.0, 0.0),
            &plane_x(1.0),
        )
        .unwrap();
        assert_eq!(h.t, 2.0);
        assert_eq!(h.point, DVec3::new(1.0, 1.0, 1.0));
        assert_eq!(h.normal, DVec3::X);
        // From behind: o = (−3, 0, 0), dir = (1, 1, 0): s = −4, k = 1 → t = 4, normal −x.
        let h = intersection_ray_plane(
            DVec3::new(-3.0, 0.0, 0.0),
            DVec3::new(1.0, 1.0, 0.0),
            &plane_x(1.0),
        )
        .unwrap();
        assert_eq!(h.t, 4.0);
        assert_eq!(h.point, DVec3::new(1.0, 4.0, 0.0));
        assert_eq!(h.normal, -DVec3::X);
    }

    #[test]
    fn pointing_away_misses() {
        // s = 4, k = +1 → t = −4 < 0.
        assert!(
            intersection_ray_plane(DVec3::new(5.0, 0.0, 0.0), DVec3::X, &plane_x(1.0)).is_none()
        );
    }

    #[test]
    fn origin_on_plane() {
        let h =
            intersection_ray_plane(DVec3::new(1.0, 2.0, 3.0), -DVec3::X, &plane_x(1.0)).unwrap();
        assert_eq!(h.t, 0.0);
        assert!(h.t.is_sign_positive());
        assert_eq!(h.point, DVec3::new(1.0, 2.0, 3.0));
        assert_eq!(h.normal, DVec3::X);
    }

    #[test]
    fn parallel_and_zero_direction() {
        // Parallel, off the plane.
        assert!(
            intersection_ray_plane(DVec3::new(2.0, 0.0, 0.0), DVec3::Y, &plane_x(1.0)).is_none()
        );
        // Parallel, in the plane: t = 0.
        let h = intersection_ray_plane(DVec3::new(1.0, 0.0, 0.0), DVec3::Y, &plane_x(1.0)).unwrap();
        assert_eq!((h.t, h.normal), (0.0, DVec3::X));
        // Zero direction off the plane.
        assert!(intersection_ray_plane(DVec3::ZERO, DVec3::ZERO, &plane_x(1.0)).is_none());
    }
}
