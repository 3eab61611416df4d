//! glTF input and output.
//!
//! * loading: a `.gltf` / `.glb` file into a [`SceneGraph`](crate::graph::SceneGraph);
//! * [`gltf_writer`]: writing a scene graph out as `.glb` (used by the city generator and
//!   by tests that need files of their own).

pub mod gltf_writer;
