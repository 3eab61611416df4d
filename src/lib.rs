//! # scene-intersect
//!
//! Intersection queries against a scene graph, in the style of OpenSceneGraph's
//! `osgUtil` intersection framework: load a glTF scene into a [`graph::SceneGraph`],
//! then ask which triangles, lines and points a line segment, a polytope or a sphere
//! touches.
//!
//! The modules follow the architecture:
//! * [`graph`]: the scene graph (nodes, node masks, transforms, LOD/Switch, bounds);
//! * [`drawable`]: drawables, primitive sets in every GL mode and primitive functors;
//! * [`bounding`]: bounding boxes and spheres;
//! * [`io`]: glTF loading and writing;
//! * [`visitor`]: the [`IntersectionVisitor`](visitor::IntersectionVisitor) that walks the
//!   graph for an intersector (masks, LOD, culling, local and coordinate frames);
//! * [`intersectors`]: line segment, polytope and sphere queries and their hits;
//! * [`accel`]: bounding volume hierarchies that make every query fast;
//! * [`collide`]: the collision toolkit of classic geometric tests.

#![warn(missing_docs)]

pub mod accel;
pub mod bounding;
pub mod collide;
pub mod drawable;
pub mod graph;
pub mod intersectors;
pub mod io;
mod length;
#[cfg(test)]
mod test_rng;
pub mod visitor;

/// The names most programs need, in one import.
pub mod prelude {
    pub use crate::drawable::{
        Drawable, Geometry, Indices, PrimitiveFunctor, PrimitiveMode, PrimitiveSet,
    };
    pub use crate::graph::{DrawableId, GraphError, NodeId, NodeKind, ReferenceFrame, SceneGraph};
    pub use crate::intersectors::{
        HitRecords, IntersectorGroup, LineSegmentHit, LineSegmentIntersector, Polytope,
        PolytopeHit, PolytopeIntersector, PrimitiveMask, QueryError, SegmentHitSummary, SphereHit,
        SphereIntersector, VolumeHitSummary,
    };
    pub use crate::io::{load_gltf, GltfImport, LoadError};
    pub use crate::visitor::{
        CoordinateFrame, IntersectionLimit, IntersectionVisitor, Intersector, LodSelection,
        Viewport,
    };
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
