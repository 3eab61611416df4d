//! Collision toolkit: the classic collision geometry as pure, tested functions
//! over glam's `f64` types ([`DVec3`](glam::DVec3)), plus one complete rigid-ball
//! simulation ([`room`]) built on them.
//!
//! Function names follow parry's `[operation]_[shape]_[shape]` scheme:
//! `intersection_test_*` answers a yes/no question, `intersection_*` returns
//! where the shapes meet, `closest_point_*` returns a nearest point,
//! `time_of_impact_*` returns the first contact of moving shapes and `classify_*`
//! returns a side.
//!
//! # Families
//!
//! | module | contents |
//! |---|---|
//! | [`plane`] | [`Plane`], [`classify_sphere_plane`] ([`PlaneSide`] with the signed distance) |
//! | [`polygon`] | [`intersection_test_sphere_polygon`], [`intersection_segment_polygon`], [`point_in_polygon`] |
//! | [`segment`] | [`intersection_segment_plane`] |
//! | [`ray`] | [`intersection_ray_plane`] ([`RayHit`]: parameter, entry point, normal) |
//! | [`cylinder`] | [`Cylinder`] (infinite), [`CappedCylinder`], [`intersection_ray_cylinder`], [`intersection_ray_capped_cylinder`] |
//! | [`sphere`] | [`intersection_test_sphere_sphere`], [`intersection_sphere_line`], [`intersection_test_sphere_line`], [`intersection_sphere_segment`], [`intersection_test_sphere_segment`], [`intersection_test_sphere_triangle`] |
//! | [`aabb`] | [`Aabb`], [`intersection_test_aabb_aabb`] |
//! | [`obb`] | [`Obb`], [`intersection_test_obb_obb`], [`separating_axis_obb_obb`] (all 15 axes) |
//! | [`closest_point`] | [`closest_point_on_line`], [`closest_point_on_segment`], [`closest_point_on_triangle`] |
//! | [`moving_sphere`] | [`MovingSphere`], [`Contact`], [`time_of_impact_sphere_plane`], [`time_of_impact_sphere_cylinder`], [`time_of_impact_sphere_sphere`] |
//! | [`response`] | [`reflect_velocity`], [`elastic_collision_spheres`] |
//! | [`particle`] | [`Particle`], explicit Euler integration under gravity |
//! | [`room`] | the bouncing-balls room: [`room::Room`], [`room::Ball`], [`room::Simulation`] |
//!
//! # Conventions
//!
//! - **Closed sets.** Every solid (ball, box, cylinder, polygon, segment) contains its
//!   boundary: touching counts as intersecting, a tangent sphere intersects, a
//!   segment ending exactly on a polygon edge hits it. Comparisons are exact
//!   (`<=`), except where a function documents a tolerance.
//! - **Planes** are `n·x + d = 0` with a **unit** normal `n` (the [`Plane`]
//!   constructors normalise it). The **front** side is the positive side
//!   `n·x + d > 0`; the signed distance of `x` is `n·x + d`.
//! - **Parameters.** A segment `a → b` is `a + t (b − a)`, `t ∈ [0, 1]`. A ray or
//!   line `o + t d` is measured in units of `d` (which need not be unit length);
//!   rays keep `t ≥ 0`.
//! - **Normals** returned in results are unit length. A contact normal points from
//!   the obstacle towards the moving sphere (the direction that separates them).
//!   Input normals must be unit length only where a function says so.
//! - **Degenerate input never panics.** Zero-length directions, zero or negative
//!   radii (a negative or NaN radius is treated as `0`), parallel configurations and
//!   collapsed polygons each give a defined, documented result.
//!
//! ```
//! use glam::DVec3;
//! use scene_intersect::collide::{classify_sphere_plane, Plane, PlaneSide};
//!
//! let floor = Plane::from_point_normal(DVec3::ZERO, DVec3::Z).unwrap();
//! let c = classify_sphere_plane(DVec3::new(0.0, 0.0, 2.0), 1.0, &floor);
//! assert_eq!(c.side, PlaneSide::Front);
//! assert_eq!(c.signed_distance, 2.0);
//! ```

pub mod aabb;
pub mod closest_point;
pub mod cylinder;
pub mod moving_sphere;
pub mod obb;
pub mod particle;
pub mod plane;
pub mod polygon;
pub mod ray;
pub mod response;
pub mod room;
pub mod segment;
pub mod sphere;

pub use aabb::{intersection_test_aabb_aabb, Aabb};
pub use closest_point::{
    closest_point_on_line, closest_point_on_segment, closest_point_on_triangle, ParametricPoint,
};
pub use cylinder::{
    intersection_ray_capped_cylinder, intersection_ray_cylinder, CappedCylinder, Cylinder,
};
pub use moving_sphere::{
    time_of_impact_sphere_cylinder, time_of_impact_sphere_plane, time_of_impact_sphere_sphere,
    Contact, MovingSphere,
};
pub use obb::{intersection_test_obb_obb, separating_axis_obb_obb, Obb, SeparatingAxis};
pub use particle::{Particle, STANDARD_GRAVITY};
pub use plane::{classify_sphere_plane, Plane, PlaneSide, SpherePlaneClassification};
pub use polygon::{
    intersection_segment_polygon, intersection_test_sphere_polygon, point_in_polygon,
};
pub use ray::{intersection_ray_plane, RayHit};
pub use response::{elastic_collision_spheres, reflect_velocity};
pub use segment::{intersection_segment_plane, SegmentPlaneIntersection};
pub use sphere::{
    intersection_sphere_line, intersection_sphere_segment, intersection_test_sphere_line,
    intersection_test_sphere_segment, intersection_test_sphere_sphere,
    intersection_test_sphere_triangle, LineInterval,
};

/// Clamps a radius to a usable value: negative and NaN radii become `0`.
#[inline]
pub(crate) fn sanitize_radius(radius: f64) -> f64 {
    if radius > 0.0 {
        radius
    } else {
        0.0
    }
}
