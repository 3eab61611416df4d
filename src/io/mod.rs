//! glTF input and output.
//!
//! * [`load_gltf`] / [`load_gltf_slice`] / [`import_gltf`]: a `.gltf` / `.glb` file into a
//!   [`SceneGraph`](crate::graph::SceneGraph), with the map back to the file in
//!   [`GltfImport`];
//! * [`gltf_writer`]: a scene graph out as `.glb` (used by the city generator and by
//!   tests that need files of their own);
//! * [`query_file`]: the batch query file format (`QUERY_FORMAT.md`) read, answered
//!   against a loaded scene and written as JSON lines (the `query` example's core).

mod accessor;
mod buffers;
mod error;
mod gltf_loader;
pub mod gltf_writer;
pub mod query_file;

pub use error::LoadError;
pub use gltf_loader::{
    import_gltf, load_gltf, load_gltf_slice, GltfImport, LoadStats, MAX_HIERARCHY_DEPTH,
    MAX_NODE_PATHS,
};
