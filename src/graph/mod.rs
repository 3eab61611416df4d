//! The scene graph: nodes (groups, transforms, geodes, LODs, switches) and drawables in
//! one arena, linked as a directed acyclic graph, with always-fresh bounds.

mod error;
mod node;
mod pending_refits;
mod scene_graph;

pub use error::GraphError;
pub use node::{Lod, Node, NodeKind, ReferenceFrame, Transform};
pub use scene_graph::SceneGraph;

slotmap::new_key_type! {
    /// Names a node of a [`SceneGraph`].
    pub struct NodeId;
    /// Names a drawable of a [`SceneGraph`].
    pub struct DrawableId;
}
