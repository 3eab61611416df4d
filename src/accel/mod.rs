//! Acceleration structures: bounding volume hierarchies over a drawable's primitives
//! ([`PrimitiveBvh`]) and over every drawable instance under a root ([`SceneIndex`]).
//!
//! The [`SceneIndex`] is what queries walk: its [`WorldBvh`] holds every triangle of the
//! scene placed in world space, four-wide ([`WorldNode`], four boxes tested with one set
//! of SIMD operations, [`Aabb4`]), with leaves of up to eight triangles whose corners are
//! quantized ([`LeafTriangle`]). A query filters those in `f32` ([`SegmentFilter`],
//! [`PlaneCuller`], [`BallCuller`]), never dropping a triangle its exact test could hit,
//! and runs the exact `f64` test on the drawable's own vertices for the rest, so the
//! answers are exactly the plain traversal's.
//!
//! Queries fed from a [`PrimitiveBvh`] see exactly the primitives, vertex indices and
//! primitive indices the plain decomposition gives. The scene graph owns one per
//! [`Geometry`](crate::drawable::Geometry) drawable, built when first needed (for the
//! instances the world tree keeps whole, those detached by a move or an edit, and
//! intersectors that visit whole drawables), and refitted after every edit of the
//! drawable ([`PrimitiveBvh::refit`]: at once by `SceneGraph::edit_vertices`, at its next
//! use otherwise), or rebuilt then when the edit changed the primitive sets. Its tree is
//! four-wide too ([`WideBvh`]), split finest for drawables the scene instances many
//! times.

mod aabb;
mod aabb4;
mod ball_culler;
mod binned_sah;
mod box_triangle_filter;
mod bvh;
mod edited_instances;
mod lane_stack;
mod leaf_paths;
mod leaf_triangles;
mod local_ball_culler;
mod path_frames;
mod plane_culler;
mod primitive_bvh;
mod runs;
mod scene_index;
mod segment_filter;
mod segment_slab;
mod triangle_list;
mod walk_stack;
pub(crate) use aabb::f32_at_least;
pub(crate) use triangle_list::TriangleList;
mod wide_bvh;
mod world_bvh;
mod world_frame;

pub use aabb::Aabb;
pub use aabb4::{Aabb4, WideEntries};
pub use ball_culler::BallCuller;
pub(crate) use box_triangle_filter::BoxTriangleFilter;
pub use bvh::{Bvh, BvhNode, OrderedVisitor, MAX_BVH_ITEMS, MAX_LEAF_ITEMS};
pub use edited_instances::EditedInstances;
pub use leaf_paths::LeafPaths;
pub use leaf_triangles::{LeafTriangle, TriangleLanes};
pub use local_ball_culler::LocalBallCuller;
pub use plane_culler::{BoxMargins, PlaneCuller, MAX_CULLED_PLANES};
pub use primitive_bvh::{PackedPrimitive, PrimitiveBvh, MAX_ACCELERATED_PRIMITIVES};
pub use scene_index::{Gate, Instance, Placement, SceneIndex};
pub use segment_filter::{LeafReach, SegmentFilter};
pub use segment_slab::{SegmentSlab, WideSegmentSlab};
pub use walk_stack::WalkStack;
pub(crate) use walk_stack::{push_lanes, sort_four_descending};
pub use wide_bvh::{WideBvh, WideNode};
pub use world_bvh::{
    decode_reference, WorldBvh, WorldChild, WorldItem, WorldNode, FILTER_LANES, LEAF_TRIANGLES,
    MAX_WHOLE_ITEMS, MAX_WORLD_TRIANGLES,
};
pub use world_frame::WorldFrame;
