//! Acceleration structures: bounding volume hierarchies over a drawable's primitives
//! ([`PrimitiveBvh`]) and over every drawable instance under a root ([`SceneIndex`]).
//!
//! Queries fed from a [`PrimitiveBvh`] see exactly the primitives, vertex indices and
//! primitive indices the plain decomposition gives, so accelerated and plain results are
//! identical. The scene graph owns one per [`Geometry`](crate::drawable::Geometry)
//! drawable, built lazily (or all at once with
//! [`SceneGraph::build_acceleration`](crate::graph::SceneGraph::build_acceleration)) and
//! dropped on every edit of the drawable.
//!
//! The [`SceneIndex`] holds two trees: one over whole instances, and one over
//! [`Fragment`]s, subtrees of at most [`FRAGMENT_PRIMITIVES`] primitives cut from each
//! instance's [`PrimitiveBvh`] and placed in world space. Intersectors that
//! [accept fragments](crate::visitor::Intersector::accepts_fragments) are walked over
//! the second, so the parts of big overlapping meshes are ordered together instead of
//! each mesh being entered from its root (Benthin et al., "Improved two-level BVHs
//! using partial re-braiding", HPG 2017). Both are built by the binary SAH [`Bvh`] and
//! collapsed to four children per node ([`WideBvh`]), so a query tests four boxes
//! ([`Aabb4`]) with one set of SIMD operations.

mod aabb4;
mod ball_culler;
mod bvh;
mod plane_culler;
mod primitive_bvh;
mod scene_index;
mod segment_slab;
mod triangle_list;
mod wide_bvh;

pub use aabb4::{Aabb4, WideEntries};
pub use ball_culler::BallCuller;
pub use bvh::{Aabb, Bvh, BvhNode, OrderedVisitor, MAX_BVH_ITEMS, MAX_LEAF_ITEMS};
pub use plane_culler::{BoxMargins, PlaneCuller, MAX_CULLED_PLANES};
pub use primitive_bvh::{PackedPrimitive, PrimitiveBvh, MAX_ACCELERATED_PRIMITIVES};
pub use scene_index::{
    Fragment, Gate, Instance, SceneIndex, FRAGMENT_PRIMITIVES, UNCUT_PRIMITIVES,
};
pub use segment_slab::{SegmentSlab, WideSegmentSlab};
pub use wide_bvh::{WideBvh, WideNode};
