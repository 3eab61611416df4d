//! Errors of the glTF loading boundary.

use std::path::PathBuf;
use thiserror::Error;

use crate::graph::GraphError;

/// What can go wrong when loading a glTF file. Loading never panics: a panic inside a
/// dependency is caught and reported as [`LoadError::Internal`]. A failed load leaves the
/// target scene graph exactly as it was.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read glTF file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The gltf crate rejected the document (bad JSON, bad GLB container, invalid
    /// references, unsupported required extension...).
    #[error("invalid glTF: {0}")]
    Gltf(String),
    /// The file uses something this loader does not support.
    #[error("unsupported glTF content: {0}")]
    Unsupported(String),
    /// An accessor's data is malformed or lies outside its buffer.
    #[error("accessor {accessor} (used by {used_by}) is malformed: {reason}")]
    Accessor {
        /// Accessor index.
        accessor: usize,
        /// What reads it, e.g. `mesh 3 primitive 0 POSITION`.
        used_by: String,
        /// What is wrong.
        reason: String,
    },
    /// A buffer could not be loaded (missing file, bad data URI, too short).
    #[error("buffer problem: {0}")]
    Buffer(String),
    /// The node hierarchy is not a forest/DAG.
    #[error("node hierarchy is invalid: {0}")]
    Hierarchy(String),
    /// A node transform is not usable.
    #[error("node {node} has an invalid transform: {reason}")]
    Transform {
        /// glTF node index.
        node: usize,
        /// What is wrong.
        reason: String,
    },
    /// The geometry built from a primitive was refused by the scene graph (for example an
    /// index past the vertex count).
    #[error("mesh {mesh} primitive {primitive}: {source}")]
    Primitive {
        /// glTF mesh index.
        mesh: usize,
        /// Primitive index inside the mesh.
        primitive: usize,
        /// The cause.
        #[source]
        source: GraphError,
    },
    /// A dependency panicked on this input; the message is the panic's.
    #[error("the glTF parser failed on this input (internal panic: {0}); the file is malformed")]
    Internal(String),
}
