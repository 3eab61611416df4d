//! [`WorldFrame`]: where a [`WorldBvh`](super::WorldBvh)'s `f32` coordinates are
//! measured from, and what a query adds to its margins there.
//!
//! The world tree's boxes and quantized corners are `f32`, and every conservative test
//! on them (slabs, balls, planes) pads by a share of the coordinates' magnitude. A
//! georeferenced scene (a city placed by a root transform some `4·10^6` units from the
//! world origin) would have `f32` coordinates good to half a unit only, and pads of many
//! units: on littlest_tokyo moved there, a batch of mixed queries took 18 times as long.
//! A scene far from the origin is therefore stored relative to the centre of its box:
//! the `f32` coordinates, and the margins, are then those of the scene's own size.
//!
//! The exact tests still run on the drawables' own vertices in `f64`, in absolute
//! coordinates, and their rounding grows with those (and, for tests run in an
//! instance's frame, with its transform's condition number, at most `10^6` for the
//! triangles the world tree holds, whose computed inverses also move points into the
//! frame and back within `2^-32` of their coordinates: see
//! [`SceneIndex`](super::SceneIndex)). The relative margins no longer cover it, so
//! [`WorldFrame::pad`] adds `2^-28` of the origin's distance, a thousand times that
//! rounding and still a hundredth of a unit at `4·10^6`.

use glam::{DVec3, DVec4};

use super::Aabb;

/// What [`WorldFrame::pad`] allows per unit of the origin's distance: the exact `f64`
/// tests' rounding of absolute coordinates, some `2^-53` of them times a condition
/// number up to `10^6` (about `2^-33`), with room to spare.
const ABSOLUTE_ROUNDING: f64 = 1.0 / (1u64 << 28) as f64;

/// The coordinate frame of a world tree: its `f32` coordinates are world coordinates
/// minus [`origin`](Self::origin).
///
/// ```
/// use glam::{DVec3, DVec4};
/// use scene_intersect::accel::WorldFrame;
///
/// let frame = WorldFrame::around(DVec3::new(4.0e6, 0.0, 0.0));
/// assert_eq!(frame.point(DVec3::new(4.0e6 + 1.5, 2.0, 0.0)), DVec3::new(1.5, 2.0, 0.0));
/// // The plane x = 4·10^6 + 1 (inward normal -x) is x' = 1 in the tree's frame.
/// let plane = frame.plane(DVec4::new(-1.0, 0.0, 0.0, 4.0e6 + 1.0));
/// assert_eq!(plane, DVec4::new(-1.0, 0.0, 0.0, 1.0));
/// assert!(frame.pad() > 0.0 && frame.pad() < 0.02);
/// assert_eq!(WorldFrame::default().pad(), 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorldFrame {
    origin: DVec3,
}

impl WorldFrame {
    /// The frame whose coordinates are measured from `origin` (finite).
    pub fn around(origin: DVec3) -> WorldFrame {
        WorldFrame { origin }
    }

    /// The frame for a scene whose world box is `bounds`: the world's own (origin zero)
    /// when the box reaches within its own size of the world origin, else the one
    /// around the box's centre.
    pub fn for_bounds(bounds: &Aabb) -> WorldFrame {
        let (min, max) = bounds.as_dvec3();
        let (centre, size) = ((min + max) * 0.5, (max - min).max_element());
        let far = centre.abs().max_element() > size;
        if min.cmple(max).all() && centre.is_finite() && size.is_finite() && far {
            WorldFrame::around(centre)
        } else {
            WorldFrame::default()
        }
    }

    /// The world point the tree's coordinates are measured from.
    pub fn origin(&self) -> DVec3 {
        self.origin
    }

    /// The largest magnitude of the origin's coordinates.
    pub fn offset(&self) -> f64 {
        self.origin.abs().max_element()
    }

    /// A world point in the tree's coordinates.
    #[inline]
    pub fn point(&self, world: DVec3) -> DVec3 {
        world - self.origin
    }

    /// A world plane `(n, d)` (points `x` with `n · x + d ≥ 0` inside) in the tree's
    /// coordinates: the same normal, the offset moved.
    #[inline]
    pub fn plane(&self, world: DVec4) -> DVec4 {
        let normal = world.truncate();
        normal.extend(world.w + normal.dot(self.origin))
    }

    /// What a query adds to its padding for the exact tests' rounding of absolute
    /// coordinates, which the tree's relative magnitudes no longer bound (zero for the
    /// world's own frame).
    pub fn pad(&self) -> f64 {
        self.offset() * ABSOLUTE_ROUNDING
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn bounds(min: Vec3, max: Vec3) -> Aabb {
        Aabb { min, max }
    }

    #[test]
    fn scenes_near_the_origin_keep_the_world_frame() {
        // Around the origin, or beside it by less than the scene's size.
        let near = [
            bounds(Vec3::splat(-10.0), Vec3::splat(10.0)),
            bounds(Vec3::ZERO, Vec3::splat(1000.0)),
            bounds(Vec3::new(500.0, 0.0, 0.0), Vec3::new(1500.0, 10.0, 10.0)),
        ];
        for b in near {
            assert_eq!(WorldFrame::for_bounds(&b), WorldFrame::default(), "{b:?}");
        }
        // Empty and unbounded boxes too.
        assert_eq!(WorldFrame::for_bounds(&Aabb::EMPTY), WorldFrame::default());
        let unbounded = bounds(Vec3::splat(f32::NEG_INFINITY), Vec3::splat(f32::INFINITY));
        assert_eq!(WorldFrame::for_bounds(&unbounded), WorldFrame::default());
    }

    #[test]
    fn far_scenes_are_measured_from_their_centre() {
        // A 200 × 50 × 100 block placed at (4·10^6, 0, 5·10^6): centre (4e6+100, 25, 5e6+50).
        let b = bounds(
            Vec3::new(4.0e6, 0.0, 5.0e6),
            Vec3::new(4.0e6 + 200.0, 50.0, 5.0e6 + 100.0),
        );
        let frame = WorldFrame::for_bounds(&b);
        assert_eq!(
            frame.origin(),
            DVec3::new(4.0e6 + 100.0, 25.0, 5.0e6 + 50.0)
        );
        assert_eq!(frame.offset(), 5.0e6 + 50.0);
        // 2^-28 of 5 000 050.
        assert_eq!(frame.pad(), (5.0e6 + 50.0) / 268_435_456.0);
    }

    #[test]
    fn planes_keep_their_points_inside() {
        let frame = WorldFrame::around(DVec3::new(3.0e6, -2.0e5, 7.0));
        let world = DVec4::new(0.6, 0.0, -0.8, 12.5);
        let moved = frame.plane(world);
        for p in [
            DVec3::new(3.0e6, -2.0e5, 7.0),
            DVec3::new(3.0e6 + 40.0, -2.0e5, 9.0),
        ] {
            let before = world.truncate().dot(p) + world.w;
            let after = moved.truncate().dot(frame.point(p)) + moved.w;
            assert!((before - after).abs() < 1e-9, "{before} vs {after}");
        }
    }
}
