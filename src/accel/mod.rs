//! Acceleration structures: bounding volume hierarchies over a drawable's primitives
//! ([`PrimitiveBvh`]) and over every drawable instance under a root ([`SceneIndex`]).
//!
//! Queries fed from a [`PrimitiveBvh`] see exactly the primitives, vertex indices and
//! primitive indices the plain decomposition gives, so accelerated and plain results are
//! identical. The scene graph owns one per [`Geometry`](crate::drawable::Geometry)
//! drawable, built lazily (or all at once with
//! [`SceneGraph::build_acceleration`](crate::graph::SceneGraph::build_acceleration)) and
//! dropped on every edit of the drawable.

mod ball_culler;
mod bvh;
mod plane_culler;
mod primitive_bvh;
mod scene_index;
mod segment_slab;

pub use ball_culler::BallCuller;
pub use bvh::{Aabb, Bvh, BvhNode, OrderedVisitor, MAX_BVH_ITEMS, MAX_LEAF_ITEMS};
pub use plane_culler::{BoxMargins, PlaneCuller, MAX_CULLED_PLANES};
pub use primitive_bvh::{PackedPrimitive, PrimitiveBvh, MAX_ACCELERATED_PRIMITIVES};
pub use scene_index::{Fragment, Gate, Instance, SceneIndex, FRAGMENT_PRIMITIVES};
pub use segment_slab::SegmentSlab;
