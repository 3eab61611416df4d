//! Errors of the scene-graph editing boundary.

use thiserror::Error;

/// What can go wrong when building or editing a [`SceneGraph`](super::SceneGraph).
/// Nothing is changed when an edit returns one of these.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GraphError {
    /// A node id that is not (or no longer) in the graph.
    #[error("node {0} is not in this scene graph (removed, or from another graph)")]
    UnknownNode(String),
    /// A drawable id that is not (or no longer) in the graph.
    #[error("drawable {0} is not in this scene graph (removed, or from another graph)")]
    UnknownDrawable(String),
    /// The child is already a child of this parent.
    #[error("node {child} is already a child of {parent}; a node appears once per parent (share it under another parent instead)")]
    DuplicateChild {
        /// Parent name.
        parent: String,
        /// Child name.
        child: String,
    },
    /// The drawable is already in this geode.
    #[error("drawable {drawable} is already in geode {geode}")]
    DuplicateDrawable {
        /// Geode name.
        geode: String,
        /// Drawable name.
        drawable: String,
    },
    /// Linking would make a node its own ancestor.
    #[error("adding {child} under {parent} would create a cycle: {child} is {parent} or one of its ancestors")]
    Cycle {
        /// Parent name.
        parent: String,
        /// Child name.
        child: String,
    },
    /// The node is not a child of that parent.
    #[error("node {child} is not a child of {parent}")]
    NotAChild {
        /// Parent name.
        parent: String,
        /// Child name.
        child: String,
    },
    /// The operation needs another kind of node.
    #[error("node {node} is a {actual}, but this operation needs a {expected}")]
    WrongKind {
        /// Node name.
        node: String,
        /// The kind the operation needs.
        expected: &'static str,
        /// The kind the node is.
        actual: &'static str,
    },
    /// A geode cannot have node children (it holds drawables), nor can a drawable be added
    /// to a node that is not a geode.
    #[error("geode {0} holds drawables, not child nodes: add the drawable to the geode, or put a group above it")]
    GeodeChild(String),
    /// A matrix with NaN or infinite entries.
    #[error("the matrix of {node} has a NaN or infinite entry; pass a finite affine matrix")]
    NonFiniteMatrix {
        /// Node name.
        node: String,
    },
    /// A matrix whose last row is not `(0, 0, 0, 1)` (beyond rounding): a projective map,
    /// which would give the geometry under it no well-defined place (its points divide
    /// by a `w` that may change sign across one triangle).
    #[error("the matrix of {node} is not affine: its last row (x_axis.w, y_axis.w, z_axis.w, w_axis.w) is {row:?}, not [0, 0, 0, 1]; scene transforms must be affine")]
    NonAffineMatrix {
        /// Node name.
        node: String,
        /// The matrix's last row.
        row: [f64; 4],
    },
    /// A NaN or infinite LOD range or centre.
    #[error("the level-of-detail range {min}..{max} of {node} is not a finite, ordered range")]
    BadLodRange {
        /// Node name.
        node: String,
        /// Range start.
        min: f64,
        /// Range end.
        max: f64,
    },
    /// A primitive set reads a vertex past the end of the vertex array.
    #[error("primitive set {set} reads vertex {index}, but the geometry has only {vertex_count} vertices")]
    IndexOutOfRange {
        /// Position of the primitive set in the geometry.
        set: usize,
        /// The first offending (largest) index.
        index: u64,
        /// The vertex count.
        vertex_count: usize,
    },
    /// The drawable is not a built-in [`Geometry`](crate::drawable::Geometry).
    #[error("drawable {0} is not a Geometry; reach it with drawable_mut instead")]
    NotAGeometry(String),
    /// A node path whose consecutive nodes are not parent and child.
    #[error("the node path is broken: {child} is not a child of {parent}")]
    BrokenPath {
        /// Parent name.
        parent: String,
        /// Child name.
        child: String,
    },
}
