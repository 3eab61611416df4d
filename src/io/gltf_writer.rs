//! Writing a scene graph as binary glTF 2.0 (`.glb`).
//!
//! [`write_glb`] / [`glb_bytes`] turn the subgraph under a list of root nodes into one
//! self-contained GLB file: a JSON chunk and one BIN chunk holding every vertex and
//! index. The file is meant to be read back by any glTF reader (and by this crate's
//! loader), so the mapping below is fixed and documented.
//!
//! # Nodes
//! * The file has one scene (`"scene": 0`) whose root nodes are the `roots`, in order.
//! * Every scene-graph node becomes one glTF node carrying its name (an empty name is
//!   left out). Node masks and LOD ranges have no glTF equivalent and are not written.
//! * [`NodeKind::Transform`] → a node with `matrix`: the 16 entries of the `f64` matrix,
//!   column-major, written with full `f64` precision by `serde_json` (shortest decimal
//!   that reads back to the same `f64`; never rounded through `f32`). A glTF matrix is
//!   always relative to its parent, so a transform in the
//!   [`ReferenceFrame::Absolute`] frame is refused with
//!   [`GltfWriteError::AbsoluteTransform`] rather than written with a different meaning.
//! * [`NodeKind::Group`] and [`NodeKind::Lod`] → a plain node with all children;
//!   [`NodeKind::Switch`] → a plain node with only its enabled children.
//! * [`NodeKind::Geode`] → a node with `mesh` (no mesh when the geode has no drawable).
//!   There is one glTF mesh per geode, named after it, and every occurrence of the geode
//!   uses the same mesh index.
//! * glTF requires the nodes to form a tree, while a scene graph is a DAG: a node shared
//!   under several parents is written once per occurrence (duplicated glTF nodes), but
//!   the mesh of a shared geode, and the vertex data of a shared drawable, are written
//!   once. A graph whose expansion into a tree would exceed `u32::MAX` nodes is refused
//!   with [`GltfWriteError::TooLarge`] before anything is built.
//!
//! # Primitives
//! A geode's mesh lists the glTF primitives of its drawables in geode order, and within a
//! [`Geometry`] one glTF primitive per [`PrimitiveSet`], in the geometry's order, except
//! that a [`PrimitiveSet::DrawArrayLengths`] gives one primitive per run. So the glTF
//! primitive index equals the primitive-set index for geometries without
//! `DrawArrayLengths` sets.
//! * `mode` is the GL mode for POINTS..TRIANGLE_FAN (glTF modes 0–6, see
//!   [`PrimitiveMode::gltf_mode`]). QUADS, QUAD_STRIP and POLYGON have no glTF mode:
//!   they are written as indexed TRIANGLES (mode 4) holding exactly the triangles
//!   [`decompose_primitive_set`] emits, with the same vertex indices (so the winding and
//!   the split diagonal are OSG's).
//! * [`PrimitiveSet::DrawElements`] keeps its index width (`u8` → UNSIGNED_BYTE 5121,
//!   `u16` → UNSIGNED_SHORT 5123, `u32` → UNSIGNED_INT 5125), except that a set holding
//!   the width's largest value (255 or 65535), which glTF reserves for primitive restart,
//!   is widened to the next width. Its `POSITION` is the geometry's full vertex
//!   accessor. The triangles of a decomposed QUADS/QUAD_STRIP/POLYGON `DrawElements` keep
//!   the set's width the same way; those of a decomposed array set are `u16` when every
//!   index is below 65535, `u32` otherwise.
//! * [`PrimitiveSet::DrawArrays`] (and each run of a `DrawArrayLengths`) is written
//!   non-indexed, with its own `POSITION` accessor covering vertices `first..first+count`
//!   (a `byteOffset` into the geometry's one vertex buffer view).
//! * A geometry's vertices are written once (one buffer view, `byteStride` 12, since
//!   several accessors may share it), whatever the number of primitives using them.
//!   `POSITION` accessors are FLOAT VEC3 with the `min` / `max` glTF requires.
//! * Incomplete tails (a TRIANGLES set of 7 vertices) are written as they are; readers,
//!   like the decomposition, ignore the leftover vertices.
//!
//! # Custom drawables
//! A drawable that is not a [`Geometry`] is written through [`Drawable::accept`]: its
//! triangles, lines and points are collected, in that order, as non-indexed TRIANGLES,
//! LINES and POINTS primitives (one per kind that occurs). Quads reach the functor as two
//! triangles, so there the glTF triangle count can exceed the drawable's primitive count.
//!
//! # Refused input
//! glTF cannot hold everything a scene graph can; rather than writing a file that reads
//! back differently, these are errors ([`GltfWriteError`]): absolute-frame transforms, a
//! geometry with no primitive set (or a custom drawable emitting nothing — a glTF mesh
//! needs a primitive), a primitive set or run that draws no vertex (an accessor needs
//! one element), NaN or infinite vertices (accessor bounds must be finite), and data
//! past glTF's 32-bit sizes.
//!
//! # Layout
//! One buffer, stored as the GLB BIN chunk. Every buffer view starts on a 4-byte boundary;
//! the JSON chunk is padded with spaces and the BIN chunk with zeros to a multiple of 4,
//! as the GLB specification requires. Without any vertex the BIN chunk and the buffer are
//! left out.

use std::collections::HashMap;
use std::io::Write;

use glam::Vec3;
use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::drawable::{
    decompose_primitive_set, Drawable, Geometry, Indices, PrimitiveFunctor, PrimitiveMode,
    PrimitiveSet,
};
use crate::graph::{DrawableId, NodeId, NodeKind, ReferenceFrame, SceneGraph};

/// GLB magic number, `"glTF"` in ASCII, little-endian.
const GLB_MAGIC: u32 = 0x4654_6C67;
/// GLB container version.
const GLB_VERSION: u32 = 2;
/// Chunk type of the JSON chunk, `"JSON"`.
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type of the binary chunk, `"BIN\0"`.
const CHUNK_BIN: u32 = 0x004E_4942;
/// Bytes of the GLB header.
const HEADER_LEN: usize = 12;
/// Bytes of a chunk header (length + type).
const CHUNK_HEADER_LEN: usize = 8;

/// glTF `componentType` of FLOAT.
const FLOAT: u32 = 5126;
/// glTF `componentType` of UNSIGNED_BYTE.
const UNSIGNED_BYTE: u32 = 5121;
/// glTF `componentType` of UNSIGNED_SHORT.
const UNSIGNED_SHORT: u32 = 5123;
/// glTF `componentType` of UNSIGNED_INT.
const UNSIGNED_INT: u32 = 5125;
/// Buffer view target of vertex attributes.
const ARRAY_BUFFER: u32 = 34962;
/// Buffer view target of indices.
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
/// glTF mode of TRIANGLES.
const MODE_TRIANGLES: u32 = 4;
/// Bytes of one `f32` VEC3 vertex.
const VERTEX_STRIDE: usize = 12;

/// What can keep a scene graph from being written as glTF.
#[derive(Debug, Error)]
pub enum GltfWriteError {
    /// The output could not be written.
    #[error("could not write the glTF output: {0}")]
    Io(#[from] std::io::Error),
    /// The JSON chunk could not be serialized.
    #[error("could not serialize the glTF JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A root (or a child reached from it) is not in the scene graph.
    #[error("node {0} is not in this scene graph")]
    UnknownNode(String),
    /// A geode lists a drawable that is not in the scene graph.
    #[error("drawable {0} is not in this scene graph")]
    UnknownDrawable(String),
    /// An absolute-frame transform: a glTF matrix is always relative to the parent.
    #[error("transform {node} uses the absolute reference frame, which glTF cannot express (a glTF matrix is relative to its parent); make it relative or leave it out of the roots")]
    AbsoluteTransform {
        /// The transform's name (or id).
        node: String,
    },
    /// A drawable with nothing to draw: a glTF mesh primitive needs data.
    #[error("drawable {drawable} has no primitives; a glTF mesh needs at least one")]
    EmptyDrawable {
        /// The drawable's name (or id).
        drawable: String,
    },
    /// A primitive set (or one run of it) that draws no vertex.
    #[error("primitive set {set} of drawable {drawable} draws no vertex (or no complete primitive); a glTF accessor needs at least one element")]
    EmptyPrimitiveSet {
        /// The drawable's name (or id).
        drawable: String,
        /// Position of the set in the geometry.
        set: usize,
    },
    /// A NaN or infinite vertex: glTF accessor bounds must be finite numbers.
    #[error(
        "vertex {index} of drawable {drawable} is NaN or infinite; glTF needs finite positions"
    )]
    NonFiniteVertex {
        /// The drawable's name (or id).
        drawable: String,
        /// The vertex index.
        index: usize,
    },
    /// More data than glTF's 32-bit sizes and indices can address.
    #[error("the scene is too large for glTF: {0} exceeds the 32-bit limit")]
    TooLarge(&'static str),
}

/// Writes the subgraph under `roots` to `out` as a binary glTF 2.0 file (see the
/// [module documentation](self) for the exact mapping).
///
/// The whole file is built in memory first, so nothing is written when an error is found.
pub fn write_glb(
    scene: &SceneGraph,
    roots: &[NodeId],
    out: &mut impl Write,
) -> Result<(), GltfWriteError> {
    let bytes = glb_bytes(scene, roots)?;
    out.write_all(&bytes)?;
    Ok(())
}

/// The subgraph under `roots` as the bytes of a binary glTF 2.0 file (see the
/// [module documentation](self) for the exact mapping).
///
/// ```
/// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
/// use scene_intersect::graph::SceneGraph;
/// use scene_intersect::io::gltf_writer::glb_bytes;
/// use glam::{DMat4, DVec3, Vec3};
///
/// let mut scene = SceneGraph::new();
/// let tri = scene.add_drawable(
///     "tri",
///     Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
///         .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?,
/// );
/// let geode = scene.add_geode("mesh");
/// scene.add_drawable_to_geode(geode, tri)?;
/// let moved = scene.add_transform("moved", DMat4::from_translation(DVec3::new(0.1, 0.0, 0.0)))?;
/// scene.add_child(moved, geode)?;
///
/// let glb = glb_bytes(&scene, &[moved])?;
/// assert_eq!(&glb[0..4], b"glTF");
/// assert_eq!(glb.len() % 4, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn glb_bytes(scene: &SceneGraph, roots: &[NodeId]) -> Result<Vec<u8>, GltfWriteError> {
    let mut writer = Writer::new(scene);
    writer.check_tree_size(roots)?;
    let scene_nodes = writer.write_nodes(roots)?;
    let (json, bin) = writer.into_json(scene_nodes)?;
    assemble_glb(json.as_bytes(), &bin)
}

/// The smallest multiple of 4 that is at least `len`.
fn padded_len(len: usize) -> usize {
    len.next_multiple_of(4)
}

/// A GLB container around a JSON text and a binary buffer: header, JSON chunk padded
/// with spaces, BIN chunk (left out when `bin` is empty) padded with zeros.
fn assemble_glb(json: &[u8], bin: &[u8]) -> Result<Vec<u8>, GltfWriteError> {
    let json_len = padded_len(json.len());
    let bin_len = padded_len(bin.len());
    let mut total = HEADER_LEN + CHUNK_HEADER_LEN + json_len;
    if !bin.is_empty() {
        total += CHUNK_HEADER_LEN + bin_len;
    }
    let total32 = u32::try_from(total).map_err(|_| GltfWriteError::TooLarge("the file length"))?;
    // Both chunk lengths are at most the total, so they fit too.
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&GLB_MAGIC.to_le_bytes());
    out.extend_from_slice(&GLB_VERSION.to_le_bytes());
    out.extend_from_slice(&total32.to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(out.len() + json_len - json.len(), b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(out.len() + bin_len - bin.len(), 0);
    }
    debug_assert_eq!(out.len(), total);
    Ok(out)
}

/// A glTF node under construction.
struct GltfNode {
    name: String,
    matrix: Option<[f64; 16]>,
    mesh: Option<usize>,
    children: Vec<usize>,
}

/// The state of one write: the growing buffer and the JSON arrays, plus the caches that
/// keep shared meshes and vertex data single.
struct Writer<'a> {
    scene: &'a SceneGraph,
    bin: Vec<u8>,
    buffer_views: Vec<Value>,
    accessors: Vec<Value>,
    meshes: Vec<Value>,
    nodes: Vec<GltfNode>,
    /// The mesh of each geode already met (`None`: a geode without drawables).
    geode_meshes: HashMap<NodeId, Option<usize>>,
    /// The glTF primitives of each drawable already written.
    drawable_primitives: HashMap<DrawableId, Vec<Value>>,
}

impl<'a> Writer<'a> {
    fn new(scene: &'a SceneGraph) -> Self {
        Writer {
            scene,
            bin: Vec::new(),
            buffer_views: Vec::new(),
            accessors: Vec::new(),
            meshes: Vec::new(),
            nodes: Vec::new(),
            geode_meshes: HashMap::new(),
            drawable_primitives: HashMap::new(),
        }
    }

    /// A readable label for a node in messages.
    fn node_label(&self, id: NodeId) -> String {
        self.scene.label(id)
    }

    /// A readable label for a drawable in messages.
    fn drawable_label(&self, id: DrawableId) -> String {
        match self.scene.drawable_name(id) {
            Some(n) if !n.is_empty() => format!("'{n}'"),
            _ => format!("{id:?}"),
        }
    }

    /// The children a node contributes to the glTF tree: all of them, except a switch's
    /// disabled ones.
    fn written_children(&self, id: NodeId) -> Result<Vec<NodeId>, GltfWriteError> {
        let node = self
            .scene
            .node(id)
            .ok_or_else(|| GltfWriteError::UnknownNode(format!("{id:?}")))?;
        Ok(match node.kind() {
            NodeKind::Switch { enabled } => node
                .children()
                .iter()
                .zip(enabled)
                .filter(|(_, &on)| on)
                .map(|(&c, _)| c)
                .collect(),
            _ => node.children().to_vec(),
        })
    }

    /// Refuses a graph whose expansion into a tree has more than `u32::MAX` nodes, by
    /// counting occurrences per node (memoised, so shared subgraphs are counted once).
    fn check_tree_size(&self, roots: &[NodeId]) -> Result<(), GltfWriteError> {
        let mut sizes: HashMap<NodeId, u64> = HashMap::new();
        // Post-order walk: a node's size is known once all its children's are.
        let mut stack: Vec<(NodeId, bool)> = roots.iter().map(|&r| (r, false)).collect();
        while let Some((id, children_done)) = stack.pop() {
            if sizes.contains_key(&id) {
                continue;
            }
            let children = self.written_children(id)?;
            if children_done {
                let size = children
                    .iter()
                    .map(|c| sizes.get(c).copied().unwrap_or(0))
                    .fold(1u64, u64::saturating_add);
                sizes.insert(id, size);
            } else {
                stack.push((id, true));
                stack.extend(children.into_iter().map(|c| (c, false)));
            }
        }
        let total = roots
            .iter()
            .map(|r| sizes.get(r).copied().unwrap_or(0))
            .fold(0u64, u64::saturating_add);
        if total > u64::from(u32::MAX) {
            return Err(GltfWriteError::TooLarge(
                "the number of nodes once shared nodes are duplicated",
            ));
        }
        Ok(())
    }

    /// Writes the tree under `roots` depth-first (without recursion, so deep graphs do
    /// not overflow the stack) and returns the glTF indices of the roots.
    fn write_nodes(&mut self, roots: &[NodeId]) -> Result<Vec<usize>, GltfWriteError> {
        let mut scene_nodes = Vec::with_capacity(roots.len());
        // (scene-graph node, glTF parent); pushed in reverse so children keep their order.
        let mut stack: Vec<(NodeId, Option<usize>)> =
            roots.iter().rev().map(|&r| (r, None)).collect();
        while let Some((id, parent)) = stack.pop() {
            let node = self
                .scene
                .node(id)
                .ok_or_else(|| GltfWriteError::UnknownNode(format!("{id:?}")))?;
            let mut gltf_node = GltfNode {
                name: node.name().to_owned(),
                matrix: None,
                mesh: None,
                children: Vec::new(),
            };
            match node.kind() {
                NodeKind::Transform(t) => {
                    if t.reference_frame == ReferenceFrame::Absolute {
                        return Err(GltfWriteError::AbsoluteTransform {
                            node: self.node_label(id),
                        });
                    }
                    gltf_node.matrix = Some(t.matrix.to_cols_array());
                }
                NodeKind::Geode { .. } => gltf_node.mesh = self.geode_mesh(id)?,
                NodeKind::Group | NodeKind::Lod(_) | NodeKind::Switch { .. } => {}
            }
            let index = self.nodes.len();
            self.nodes.push(gltf_node);
            match parent {
                Some(p) => self.nodes[p].children.push(index),
                None => scene_nodes.push(index),
            }
            let children = self.written_children(id)?;
            stack.extend(children.into_iter().rev().map(|c| (c, Some(index))));
        }
        Ok(scene_nodes)
    }

    /// The mesh index of a geode, writing the mesh on first use.
    fn geode_mesh(&mut self, id: NodeId) -> Result<Option<usize>, GltfWriteError> {
        if let Some(&mesh) = self.geode_meshes.get(&id) {
            return Ok(mesh);
        }
        let node = self
            .scene
            .node(id)
            .ok_or_else(|| GltfWriteError::UnknownNode(format!("{id:?}")))?;
        let name = node.name().to_owned();
        let drawables = node.drawables().to_vec();
        let mesh = if drawables.is_empty() {
            None
        } else {
            let mut primitives = Vec::new();
            for d in drawables {
                primitives.extend(self.primitives_of(d)?);
            }
            let mut mesh = Map::new();
            if !name.is_empty() {
                mesh.insert("name".into(), Value::String(name));
            }
            mesh.insert("primitives".into(), Value::Array(primitives));
            self.meshes.push(Value::Object(mesh));
            Some(self.meshes.len() - 1)
        };
        self.geode_meshes.insert(id, mesh);
        Ok(mesh)
    }

    /// The glTF primitives of a drawable, writing its data on first use.
    fn primitives_of(&mut self, id: DrawableId) -> Result<Vec<Value>, GltfWriteError> {
        if let Some(p) = self.drawable_primitives.get(&id) {
            return Ok(p.clone());
        }
        let label = self.drawable_label(id);
        let drawable = self
            .scene
            .drawable(id)
            .ok_or_else(|| GltfWriteError::UnknownDrawable(label.clone()))?;
        let primitives = match drawable.as_geometry() {
            Some(geometry) => self.write_geometry(geometry, &label)?,
            None => {
                let collected = collect_primitives(drawable)?;
                self.write_geometry(&collected, &label)?
            }
        };
        self.drawable_primitives.insert(id, primitives.clone());
        Ok(primitives)
    }

    /// Appends `bytes` to the buffer at a 4-byte boundary as a new buffer view.
    fn push_view(&mut self, bytes: &[u8], target: u32, stride: Option<usize>) -> usize {
        self.bin.resize(padded_len(self.bin.len()), 0);
        let mut view = json!({
            "buffer": 0,
            "byteOffset": self.bin.len(),
            "byteLength": bytes.len(),
            "target": target,
        });
        if let Some(s) = stride {
            view["byteStride"] = json!(s);
        }
        self.bin.extend_from_slice(bytes);
        self.buffer_views.push(view);
        self.buffer_views.len() - 1
    }

    fn push_accessor(&mut self, accessor: Value) -> usize {
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// Writes a geometry's vertices and index data; returns its glTF primitives.
    fn write_geometry(
        &mut self,
        geometry: &Geometry,
        label: &str,
    ) -> Result<Vec<Value>, GltfWriteError> {
        let vertices = geometry.vertices();
        if geometry.primitive_sets().is_empty() {
            return Err(GltfWriteError::EmptyDrawable {
                drawable: label.to_owned(),
            });
        }
        if let Some(index) = vertices.iter().position(|v| !v.is_finite()) {
            return Err(GltfWriteError::NonFiniteVertex {
                drawable: label.to_owned(),
                index,
            });
        }
        let bytes: Vec<u8> = vertices
            .iter()
            .flat_map(|v| v.to_array())
            .flat_map(f32::to_le_bytes)
            .collect();
        let view = self.push_view(&bytes, ARRAY_BUFFER, Some(VERTEX_STRIDE));
        let mut positions = PositionAccessors {
            view,
            vertices,
            by_range: HashMap::new(),
        };

        let mut primitives = Vec::new();
        for (set_index, set) in geometry.primitive_sets().iter().enumerate() {
            let empty = || GltfWriteError::EmptyPrimitiveSet {
                drawable: label.to_owned(),
                set: set_index,
            };
            let mode = set.mode();
            match (set, mode.gltf_mode()) {
                (PrimitiveSet::DrawElements { indices, .. }, Some(gltf_mode)) => {
                    if indices.is_empty() {
                        return Err(empty());
                    }
                    let position = positions.full(self);
                    let idx = self.write_indices(&IndexData::from_indices(indices));
                    primitives.push(json!({
                        "attributes": { "POSITION": position },
                        "indices": idx,
                        "mode": gltf_mode,
                    }));
                }
                (PrimitiveSet::DrawArrays { first, count, .. }, Some(gltf_mode)) => {
                    if *count == 0 {
                        return Err(empty());
                    }
                    let position = positions.range(self, *first, *count);
                    primitives.push(json!({
                        "attributes": { "POSITION": position },
                        "mode": gltf_mode,
                    }));
                }
                (PrimitiveSet::DrawArrayLengths { first, lengths, .. }, Some(gltf_mode)) => {
                    if lengths.is_empty() {
                        return Err(empty());
                    }
                    let mut start = *first;
                    for &len in lengths {
                        if len == 0 {
                            return Err(empty());
                        }
                        let position = positions.range(self, start, len);
                        primitives.push(json!({
                            "attributes": { "POSITION": position },
                            "mode": gltf_mode,
                        }));
                        start += len; // in range: the geometry checked first + sum.
                    }
                }
                (_, None) => {
                    // QUADS, QUAD_STRIP, POLYGON: the decomposed triangles, indexed.
                    let runs: Vec<PrimitiveSet> = match set {
                        PrimitiveSet::DrawArrayLengths { first, lengths, .. } => {
                            let mut start = *first;
                            lengths
                                .iter()
                                .map(|&len| {
                                    let run = PrimitiveSet::draw_arrays(mode, start, len);
                                    start += len;
                                    run
                                })
                                .collect()
                        }
                        other => vec![other.clone()],
                    };
                    if runs.is_empty() {
                        return Err(empty());
                    }
                    for run in &runs {
                        let mut triangles = TriangleIndices(Vec::new());
                        decompose_primitive_set(vertices, run, 0, &mut triangles);
                        if triangles.0.is_empty() {
                            return Err(empty());
                        }
                        let data = match set {
                            PrimitiveSet::DrawElements { indices, .. } => {
                                IndexData::with_width_of(indices, triangles.0)
                            }
                            _ => IndexData::narrowest(triangles.0),
                        };
                        let position = positions.full(self);
                        let idx = self.write_indices(&data);
                        primitives.push(json!({
                            "attributes": { "POSITION": position },
                            "indices": idx,
                            "mode": MODE_TRIANGLES,
                        }));
                    }
                }
            }
        }
        Ok(primitives)
    }

    /// Writes an index buffer view and its SCALAR accessor; returns the accessor.
    fn write_indices(&mut self, data: &IndexData) -> usize {
        let (bytes, component_type, count): (Vec<u8>, u32, usize) = match data {
            IndexData::U8(v) => (v.clone(), UNSIGNED_BYTE, v.len()),
            IndexData::U16(v) => (
                v.iter().flat_map(|i| i.to_le_bytes()).collect(),
                UNSIGNED_SHORT,
                v.len(),
            ),
            IndexData::U32(v) => (
                v.iter().flat_map(|i| i.to_le_bytes()).collect(),
                UNSIGNED_INT,
                v.len(),
            ),
        };
        let view = self.push_view(&bytes, ELEMENT_ARRAY_BUFFER, None);
        self.push_accessor(json!({
            "bufferView": view,
            "componentType": component_type,
            "count": count,
            "type": "SCALAR",
        }))
    }

    /// The finished JSON text and binary buffer.
    fn into_json(self, scene_nodes: Vec<usize>) -> Result<(String, Vec<u8>), GltfWriteError> {
        if self.bin.len() > u32::MAX as usize {
            return Err(GltfWriteError::TooLarge("the binary buffer"));
        }
        let nodes: Vec<Value> = self
            .nodes
            .into_iter()
            .map(|n| {
                let mut node = Map::new();
                if !n.name.is_empty() {
                    node.insert("name".into(), Value::String(n.name));
                }
                if let Some(m) = n.matrix {
                    node.insert("matrix".into(), json!(m));
                }
                if let Some(mesh) = n.mesh {
                    node.insert("mesh".into(), json!(mesh));
                }
                if !n.children.is_empty() {
                    node.insert("children".into(), json!(n.children));
                }
                Value::Object(node)
            })
            .collect();
        let mut root = Map::new();
        root.insert(
            "asset".into(),
            json!({
                "version": "2.0",
                "generator": concat!("scene-intersect ", env!("CARGO_PKG_VERSION")),
            }),
        );
        root.insert("scene".into(), json!(0));
        let mut scene = Map::new();
        if !scene_nodes.is_empty() {
            scene.insert("nodes".into(), json!(scene_nodes));
        }
        root.insert("scenes".into(), json!([Value::Object(scene)]));
        let mut put = |key: &str, items: Vec<Value>| {
            if !items.is_empty() {
                root.insert(key.into(), Value::Array(items));
            }
        };
        put("nodes", nodes);
        put("meshes", self.meshes);
        put("accessors", self.accessors);
        put("bufferViews", self.buffer_views);
        if !self.bin.is_empty() {
            root.insert("buffers".into(), json!([{ "byteLength": self.bin.len() }]));
        }
        Ok((serde_json::to_string(&Value::Object(root))?, self.bin))
    }
}

/// The `POSITION` accessors of one geometry, made on demand over its one buffer view.
struct PositionAccessors<'v> {
    view: usize,
    vertices: &'v [Vec3],
    /// `(first, count)` → accessor, so equal ranges share one accessor.
    by_range: HashMap<(u32, u32), usize>,
}

impl PositionAccessors<'_> {
    /// The accessor over every vertex.
    fn full(&mut self, writer: &mut Writer<'_>) -> usize {
        // The vertex count fits u32: a geometry's indices are u32 and the buffer is
        // checked against u32 at the end anyway; saturate rather than wrap.
        let count = u32::try_from(self.vertices.len()).unwrap_or(u32::MAX);
        self.range(writer, 0, count)
    }

    /// The accessor over vertices `first..first + count` (in range: the geometry checked
    /// its primitive sets when they were added).
    fn range(&mut self, writer: &mut Writer<'_>, first: u32, count: u32) -> usize {
        *self.by_range.entry((first, count)).or_insert_with(|| {
            let start = first as usize;
            let end = (start + count as usize).min(self.vertices.len());
            let slice = &self.vertices[start.min(end)..end];
            let min = slice.iter().copied().fold(Vec3::INFINITY, Vec3::min);
            let max = slice.iter().copied().fold(Vec3::NEG_INFINITY, Vec3::max);
            let mut accessor = json!({
                "bufferView": self.view,
                "componentType": FLOAT,
                "count": slice.len(),
                "type": "VEC3",
                "min": min.to_array().map(f64::from),
                "max": max.to_array().map(f64::from),
            });
            if start > 0 {
                accessor["byteOffset"] = json!(start * VERTEX_STRIDE);
            }
            writer.push_accessor(accessor)
        })
    }
}

/// Index data in the width it will be written with.
#[derive(Debug, PartialEq)]
enum IndexData {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl IndexData {
    /// A `DrawElements` set's indices in their own width, widened when they hold the
    /// width's primitive-restart value, which glTF forbids in index data.
    fn from_indices(indices: &Indices) -> Self {
        match indices {
            Indices::U8(v) if !v.contains(&u8::MAX) => IndexData::U8(v.clone()),
            Indices::U16(v) if !v.contains(&u16::MAX) => IndexData::U16(v.clone()),
            other => Self::with_width_of(
                other,
                (0..other.len()).filter_map(|i| other.get(i)).collect(),
            ),
        }
    }

    /// Decomposed triangle indices in the width of the set they came from (widened as in
    /// [`IndexData::from_indices`]).
    fn with_width_of(indices: &Indices, triangles: Vec<u32>) -> Self {
        let min_width = match indices {
            Indices::U8(_) => 1,
            Indices::U16(_) => 2,
            Indices::U32(_) => 4,
        };
        Self::narrowest_from(min_width, triangles)
    }

    /// Decomposed array indices: `u16` when they all fit below 65535, else `u32`.
    fn narrowest(indices: Vec<u32>) -> Self {
        Self::narrowest_from(2, indices)
    }

    /// The narrowest width of at least `min_width` bytes whose restart value is above
    /// every index.
    fn narrowest_from(min_width: usize, indices: Vec<u32>) -> Self {
        let max = indices.iter().copied().max().unwrap_or(0);
        if min_width <= 1 && max < u32::from(u8::MAX) {
            IndexData::U8(indices.into_iter().map(|i| i as u8).collect())
        } else if min_width <= 2 && max < u32::from(u16::MAX) {
            IndexData::U16(indices.into_iter().map(|i| i as u16).collect())
        } else {
            IndexData::U32(indices)
        }
    }
}

/// Collects the vertex indices of every triangle a decomposition emits.
struct TriangleIndices(Vec<u32>);

impl PrimitiveFunctor for TriangleIndices {
    fn triangle(&mut self, _v: [Vec3; 3], indices: [u32; 3], _p: u32) {
        self.0.extend_from_slice(&indices);
    }
}

/// A custom drawable's primitives as a [`Geometry`]: triangles, then lines, then points,
/// each kind one `DrawArrays` set over its own vertices (sets of kinds that do not occur
/// are left out).
fn collect_primitives(drawable: &dyn Drawable) -> Result<Geometry, GltfWriteError> {
    #[derive(Default)]
    struct Collect {
        triangles: Vec<Vec3>,
        lines: Vec<Vec3>,
        points: Vec<Vec3>,
    }
    impl PrimitiveFunctor for Collect {
        fn point(&mut self, v: Vec3, _i: u32, _p: u32) {
            self.points.push(v);
        }
        fn line(&mut self, v: [Vec3; 2], _i: [u32; 2], _p: u32) {
            self.lines.extend_from_slice(&v);
        }
        fn triangle(&mut self, v: [Vec3; 3], _i: [u32; 3], _p: u32) {
            self.triangles.extend_from_slice(&v);
        }
    }
    let mut c = Collect::default();
    drawable.accept(&mut c);
    let too_large = || GltfWriteError::TooLarge("a custom drawable's vertex count");
    let mut vertices = Vec::new();
    let mut sets = Vec::new();
    for (mode, part) in [
        (PrimitiveMode::Triangles, c.triangles),
        (PrimitiveMode::Lines, c.lines),
        (PrimitiveMode::Points, c.points),
    ] {
        if !part.is_empty() {
            let first = u32::try_from(vertices.len()).map_err(|_| too_large())?;
            let count = u32::try_from(part.len()).map_err(|_| too_large())?;
            sets.push(PrimitiveSet::draw_arrays(mode, first, count));
            vertices.extend(part);
        }
    }
    u32::try_from(vertices.len()).map_err(|_| too_large())?;
    let mut geometry = Geometry::new(vertices);
    for set in sets {
        // Every set lies inside the vertices gathered above.
        geometry.add_primitive_set(set).map_err(|_| too_large())?;
    }
    Ok(geometry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat4, DVec3};

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    }

    #[test]
    fn padding_rounds_up_to_four() {
        assert_eq!(padded_len(0), 0);
        assert_eq!(padded_len(1), 4);
        assert_eq!(padded_len(4), 4);
        assert_eq!(padded_len(5), 8);
        assert_eq!(padded_len(7), 8);
    }

    #[test]
    fn header_and_chunks_follow_the_glb_layout() {
        let glb = assemble_glb(b"{\"a\":1}", &[1, 2, 3, 4, 5]).unwrap();
        // 12 header + 8 + 8 (7 bytes of JSON padded) + 8 + 8 (5 bytes of BIN padded).
        assert_eq!(glb.len(), 44);
        assert_eq!(&glb[0..4], b"glTF");
        assert_eq!(u32_at(&glb, 4), 2);
        assert_eq!(u32_at(&glb, 8), 44);
        assert_eq!(u32_at(&glb, 12), 8);
        assert_eq!(&glb[16..20], b"JSON");
        assert_eq!(&glb[20..28], b"{\"a\":1} ");
        assert_eq!(u32_at(&glb, 28), 8);
        assert_eq!(&glb[32..36], b"BIN\0");
        assert_eq!(&glb[36..44], &[1, 2, 3, 4, 5, 0, 0, 0]);
    }

    #[test]
    fn no_bin_chunk_without_data() {
        let glb = assemble_glb(b"{}", &[]).unwrap();
        assert_eq!(glb.len(), 12 + 8 + 4);
        assert_eq!(&glb[20..24], b"{}  ");
    }

    #[test]
    fn index_widths_avoid_the_restart_value() {
        assert_eq!(
            IndexData::from_indices(&Indices::U8(vec![0, 254])),
            IndexData::U8(vec![0, 254])
        );
        assert_eq!(
            IndexData::from_indices(&Indices::U8(vec![0, 255])),
            IndexData::U16(vec![0, 255])
        );
        assert_eq!(
            IndexData::from_indices(&Indices::U16(vec![65535, 1])),
            IndexData::U32(vec![65535, 1])
        );
        assert_eq!(
            IndexData::from_indices(&Indices::U32(vec![1, 2])),
            IndexData::U32(vec![1, 2])
        );
        assert_eq!(IndexData::narrowest(vec![3, 7]), IndexData::U16(vec![3, 7]));
        assert_eq!(
            IndexData::narrowest(vec![65535]),
            IndexData::U32(vec![65535])
        );
    }

    #[test]
    fn empty_scene_is_a_valid_file() {
        let glb = glb_bytes(&SceneGraph::new(), &[]).unwrap();
        assert_eq!(u32_at(&glb, 8) as usize, glb.len());
        let json: Value = serde_json::from_slice(&glb[20..]).unwrap();
        assert_eq!(json["scene"], 0);
        assert_eq!(json["asset"]["version"], "2.0");
        assert!(json.get("buffers").is_none());
    }

    #[test]
    fn absolute_transforms_are_refused() {
        let mut scene = SceneGraph::new();
        let t = scene
            .add_transform("hud", DMat4::from_translation(DVec3::X))
            .unwrap();
        scene
            .set_reference_frame(t, ReferenceFrame::Absolute)
            .unwrap();
        assert!(matches!(
            glb_bytes(&scene, &[t]),
            Err(GltfWriteError::AbsoluteTransform { .. })
        ));
    }

    #[test]
    fn unwritable_geometry_is_refused() {
        let mut scene = SceneGraph::new();
        let g = scene.add_geode("g");
        let d = scene.add_drawable("nothing", Geometry::new(vec![Vec3::ZERO]));
        scene.add_drawable_to_geode(g, d).unwrap();
        assert!(matches!(
            glb_bytes(&scene, &[g]),
            Err(GltfWriteError::EmptyDrawable { .. })
        ));

        let mut scene = SceneGraph::new();
        let g = scene.add_geode("g");
        let geometry = Geometry::new(vec![Vec3::ZERO, Vec3::splat(f32::NAN)])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 2))
            .unwrap();
        let d = scene.add_drawable("nan", geometry);
        scene.add_drawable_to_geode(g, d).unwrap();
        assert!(matches!(
            glb_bytes(&scene, &[g]),
            Err(GltfWriteError::NonFiniteVertex { index: 1, .. })
        ));

        let mut scene = SceneGraph::new();
        let g = scene.add_geode("g");
        let geometry = Geometry::new(vec![Vec3::ZERO; 3])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 3))
            .unwrap();
        let d = scene.add_drawable("short quad", geometry);
        scene.add_drawable_to_geode(g, d).unwrap();
        assert!(matches!(
            glb_bytes(&scene, &[g]),
            Err(GltfWriteError::EmptyPrimitiveSet { set: 0, .. })
        ));
    }
}
