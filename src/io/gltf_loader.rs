//! Loading glTF 2.0 (`.gltf` and `.glb`) into a [`SceneGraph`].
//!
//! # Mapping
//! * The default scene (or scene 0) becomes a [`NodeKind::Group`](crate::graph::NodeKind)
//!   root named after the scene.
//! * Every glTF node reachable from the scene becomes a Transform node holding the node's
//!   `matrix` or its TRS, at the full `f64` precision the JSON writes (the gltf crate keeps
//!   only `f32`, so the loader reads these numbers itself: georeferenced cities sit
//!   millions of metres from the origin). Its children follow the glTF hierarchy.
//! * Every glTF mesh used by the scene becomes one Geode, shared under every node that
//!   instances it; each mesh primitive becomes one [`Geometry`] drawable, all seven glTF
//!   modes, indexed (u8/u16/u32 indices kept as they are) or not, sparse positions
//!   applied. A primitive without POSITION becomes an empty geometry so primitive numbers
//!   stay those of the file.
//! * [`GltfImport`] keeps the map between glTF indices and graph ids, and names hits the
//!   way the batch query format does (`n<node>/p<primitive>`).
//!
//! # Decisions
//! * Skins are not applied: a skinned mesh is placed by its node's transform, which is
//!   the world space the batch query format defines ("every node's transform, as the file
//!   has it"). [`LoadStats::skinned_nodes`] counts them.
//! * Cameras, lights, materials, textures and animations are ignored.
//! * Nodes shared by several parents (invalid glTF, but harmless) become shared nodes;
//!   a cycle is an error.
//!
//! # Bad input
//! The gltf crate (1.4) is not a validator, so everything the loader relies on is checked
//! before it is used: accessor ranges against their buffers (before allocating), index
//! component types, index values against the vertex count, hierarchy cycles, transform
//! values. A panic inside a dependency is caught and returned as
//! [`LoadError::Internal`]. A failed load adds nothing to the target graph.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use glam::{DMat4, DQuat, DVec3, Vec3};
use serde_json::Value;
use slotmap::SecondaryMap;

use super::accessor::{AccessorReader, IndexData};
use super::LoadError;
use crate::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};
use crate::graph::{DrawableId, NodeId, SceneGraph};

/// Figures about a loaded file, comparable with what `gltf::import` reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// glTF nodes in the file.
    pub nodes: usize,
    /// glTF meshes in the file (used or not).
    pub meshes: usize,
    /// Mesh primitives in the file (used or not).
    pub primitives: usize,
    /// Triangles of all meshes in the file, each mesh counted once.
    pub triangles: usize,
    /// Mesh instances in the scene: one per path from the scene to a node with a mesh.
    pub mesh_instances: usize,
    /// Triangles of the scene, each instance counted.
    pub instanced_triangles: usize,
    /// Skinned mesh instances (placed by their node transform; see the module docs).
    pub skinned_nodes: usize,
    /// NaN or infinite vertex positions (their primitives are skipped).
    pub non_finite_vertices: usize,
}

/// What one glTF import added to a scene graph, and the map back to the file.
#[derive(Clone, Debug)]
pub struct GltfImport {
    /// The group standing for the glTF scene.
    pub root: NodeId,
    /// Figures about the file.
    pub stats: LoadStats,
    node_ids: Vec<Option<NodeId>>,
    /// Slot maps, not hash maps: naming the hits of a big batch looks these up per hit.
    gltf_node_of: SecondaryMap<NodeId, usize>,
    mesh_geodes: Vec<Option<NodeId>>,
    primitive_of: SecondaryMap<DrawableId, (usize, usize)>,
}

impl GltfImport {
    /// The transform node made for glTF node `index` (`None` when that node is not in the
    /// loaded scene).
    pub fn node_id(&self, index: usize) -> Option<NodeId> {
        self.node_ids.get(index).copied().flatten()
    }

    /// The glTF node index a graph node was made from.
    pub fn gltf_node_index(&self, id: NodeId) -> Option<usize> {
        self.gltf_node_of.get(id).copied()
    }

    /// The geode made for glTF mesh `index`, when the scene uses that mesh.
    pub fn mesh_geode(&self, index: usize) -> Option<NodeId> {
        self.mesh_geodes.get(index).copied().flatten()
    }

    /// `(mesh index, primitive index)` of a drawable made by this import.
    pub fn gltf_primitive(&self, drawable: DrawableId) -> Option<(usize, usize)> {
        self.primitive_of.get(drawable).copied()
    }

    /// The drawable name of the batch query format, `n<node>/p<primitive>`, for a hit on
    /// `drawable` reached along `node_path`: the node is the last glTF node on the path
    /// (the one instancing the mesh).
    pub fn drawable_name(&self, node_path: &[NodeId], drawable: DrawableId) -> Option<String> {
        let (node, prim) = self.drawable_name_parts(node_path, drawable)?;
        Some(batch_drawable_name(node, prim))
    }

    /// The two numbers of [`drawable_name`](Self::drawable_name), `(node, primitive)`,
    /// without making the string (a batch keeps these per hit and names them later).
    ///
    /// ```no_run
    /// # let (scene, import) = scene_intersect::io::load_gltf("city.glb")?;
    /// # let (path, drawable) = (vec![import.root], scene_intersect::graph::DrawableId::default());
    /// if let Some((node, primitive)) = import.drawable_name_parts(&path, drawable) {
    ///     assert_eq!(import.drawable_name(&path, drawable), Some(format!("n{node}/p{primitive}")));
    /// }
    /// # Ok::<(), scene_intersect::io::LoadError>(())
    /// ```
    pub fn drawable_name_parts(
        &self,
        node_path: &[NodeId],
        drawable: DrawableId,
    ) -> Option<(usize, usize)> {
        let node = node_path
            .iter()
            .rev()
            .find_map(|id| self.gltf_node_index(*id))?;
        let (_, prim) = self.gltf_primitive(drawable)?;
        Some((node, prim))
    }
}

/// The batch query format's name of the drawable made from primitive `primitive` of the
/// mesh of glTF node `node`.
pub(crate) fn batch_drawable_name(node: usize, primitive: usize) -> String {
    format!("n{node}/p{primitive}")
}

/// Loads a `.gltf` or `.glb` file into a new scene graph.
///
/// ```no_run
/// let (scene, import) = scene_intersect::io::load_gltf("city.glb")?;
/// println!("{} triangles", import.stats.instanced_triangles);
/// # Ok::<(), scene_intersect::io::LoadError>(())
/// ```
pub fn load_gltf(path: impl AsRef<Path>) -> Result<(SceneGraph, GltfImport), LoadError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    load_gltf_slice(&bytes, Some(base))
}

/// Loads glTF from memory into a new scene graph. `base_dir` resolves external buffer
/// files; without it only GLB-embedded and data-URI buffers can be used.
pub fn load_gltf_slice(
    bytes: &[u8],
    base_dir: Option<&Path>,
) -> Result<(SceneGraph, GltfImport), LoadError> {
    let mut scene = SceneGraph::new();
    let import = import_gltf(&mut scene, bytes, base_dir)?;
    Ok((scene, import))
}

/// Adds the default scene of a glTF file (in memory) to an existing scene graph, under a
/// new parentless root group. On error nothing is added.
pub fn import_gltf(
    scene: &mut SceneGraph,
    bytes: &[u8],
    base_dir: Option<&Path>,
) -> Result<GltfImport, LoadError> {
    let plan = catch_unwind(AssertUnwindSafe(|| Plan::read(bytes, base_dir)))
        .map_err(|panic| LoadError::Internal(panic_message(panic)))??;
    plan.insert(scene)
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Everything read and checked from the file, ready to be inserted without failing.
struct Plan {
    scene_name: String,
    roots: Vec<usize>,
    nodes: Vec<PlannedNode>,
    meshes: Vec<Option<PlannedMesh>>,
    stats: LoadStats,
}

struct PlannedNode {
    name: String,
    matrix: DMat4,
    children: Vec<usize>,
    mesh: Option<usize>,
    reachable: bool,
}

struct PlannedMesh {
    name: String,
    primitives: Vec<Geometry>,
}

impl Plan {
    fn read(bytes: &[u8], base_dir: Option<&Path>) -> Result<Plan, LoadError> {
        let json: Value = if bytes.starts_with(b"glTF") {
            check_glb_header(bytes)?;
            let glb =
                gltf::binary::Glb::from_slice(bytes).map_err(|e| LoadError::Gltf(e.to_string()))?;
            serde_json::from_slice(&glb.json)
        } else {
            serde_json::from_slice(bytes)
        }
        .map_err(|e| LoadError::Gltf(e.to_string()))?;
        check_before_validation(&json)?;
        let gltf = gltf::Gltf::from_slice(bytes).map_err(|e| LoadError::Gltf(e.to_string()))?;
        let doc = &gltf.document;
        let buffers = super::buffers::load_buffers(doc, base_dir, gltf.blob.clone())?;
        let reader = AccessorReader { buffers: &buffers };

        let json_nodes = json.get("nodes").and_then(Value::as_array);
        let mut nodes = Vec::new();
        for node in doc.nodes() {
            let raw = json_nodes.and_then(|n| n.get(node.index()));
            nodes.push(PlannedNode {
                name: node.name().unwrap_or_default().to_string(),
                matrix: node_matrix(node.index(), raw)?,
                children: node.children().map(|c| c.index()).collect(),
                mesh: node.mesh().map(|m| m.index()),
                reachable: false,
            });
        }

        let scene = doc.default_scene().or_else(|| doc.scenes().next());
        let (scene_name, roots) = match &scene {
            Some(s) => (
                s.name().unwrap_or("scene").to_string(),
                s.nodes().map(|n| n.index()).collect(),
            ),
            None => ("empty scene".to_string(), Vec::new()),
        };
        let path_counts = check_hierarchy(&mut nodes, &roots)?;

        let mut stats = LoadStats {
            nodes: nodes.len(),
            meshes: doc.meshes().count(),
            ..LoadStats::default()
        };
        let mut mesh_triangles = vec![0usize; stats.meshes];
        for mesh in doc.meshes() {
            for prim in mesh.primitives() {
                stats.primitives += 1;
                let n = match prim.indices() {
                    Some(a) => a.count(),
                    None => prim
                        .get(&gltf::Semantic::Positions)
                        .map_or(0, |a| a.count()),
                };
                let mode = map_mode(prim.mode());
                if matches!(
                    mode,
                    PrimitiveMode::Triangles
                        | PrimitiveMode::TriangleStrip
                        | PrimitiveMode::TriangleFan
                ) {
                    // Counts are the file's claims (nothing is read yet): saturate.
                    let t = &mut mesh_triangles[mesh.index()];
                    *t = t.saturating_add(mode.primitive_count(n));
                }
            }
        }
        stats.triangles = mesh_triangles
            .iter()
            .fold(0usize, |a, &t| a.saturating_add(t));

        let mut meshes: Vec<Option<PlannedMesh>> = (0..stats.meshes).map(|_| None).collect();
        for (i, node) in nodes.iter().enumerate() {
            let Some(m) = node.mesh.filter(|_| node.reachable) else {
                continue;
            };
            stats.mesh_instances = stats.mesh_instances.saturating_add(path_counts[i]);
            stats.instanced_triangles = stats.instanced_triangles.saturating_add(
                path_counts[i].saturating_mul(mesh_triangles.get(m).copied().unwrap_or(0)),
            );
            if doc.nodes().nth(i).is_some_and(|n| n.skin().is_some()) {
                stats.skinned_nodes = stats.skinned_nodes.saturating_add(path_counts[i]);
            }
            if meshes.get(m).is_some_and(Option::is_none) {
                let mesh = doc
                    .meshes()
                    .nth(m)
                    .ok_or_else(|| LoadError::Gltf(format!("node {i} names missing mesh {m}")))?;
                let planned = read_mesh(&reader, &mesh, &mut stats)?;
                meshes[m] = Some(planned);
            }
        }
        Ok(Plan {
            scene_name,
            roots,
            nodes,
            meshes,
            stats,
        })
    }

    /// Inserts the plan. Only a graph refusal can fail here (it cannot for a checked
    /// plan); should one happen, everything inserted so far is removed again.
    fn insert(self, scene: &mut SceneGraph) -> Result<GltfImport, LoadError> {
        let mut added_nodes = Vec::new();
        let mut added_drawables = Vec::new();
        let result = self.insert_inner(scene, &mut added_nodes, &mut added_drawables);
        if result.is_err() {
            for id in added_nodes {
                let _ = scene.remove_node(id);
            }
            for id in added_drawables {
                let _ = scene.remove_drawable(id);
            }
        }
        result
    }

    fn insert_inner(
        self,
        scene: &mut SceneGraph,
        added_nodes: &mut Vec<NodeId>,
        added_drawables: &mut Vec<DrawableId>,
    ) -> Result<GltfImport, LoadError> {
        let hierarchy = |e| LoadError::Hierarchy(format!("{e}"));
        let root = scene.add_group(self.scene_name.clone());
        added_nodes.push(root);
        let mut mesh_geodes = vec![None; self.meshes.len()];
        let mut primitive_of = SecondaryMap::new();
        for (m, mesh) in self.meshes.into_iter().enumerate() {
            let Some(mesh) = mesh else { continue };
            let geode = scene.add_geode(mesh.name.clone());
            added_nodes.push(geode);
            for (p, geometry) in mesh.primitives.into_iter().enumerate() {
                let d = scene.add_drawable(format!("m{m}/p{p}"), geometry);
                added_drawables.push(d);
                scene.add_drawable_to_geode(geode, d).map_err(hierarchy)?;
                primitive_of.insert(d, (m, p));
            }
            mesh_geodes[m] = Some(geode);
        }
        let mut node_ids = vec![None; self.nodes.len()];
        let mut gltf_node_of = SecondaryMap::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if !node.reachable {
                continue;
            }
            let id = scene
                .add_transform(node.name.clone(), node.matrix)
                .map_err(|e| LoadError::Transform {
                    node: i,
                    reason: e.to_string(),
                })?;
            added_nodes.push(id);
            node_ids[i] = Some(id);
            gltf_node_of.insert(id, i);
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(id) = node_ids[i] else { continue };
            for &c in &node.children {
                if let Some(child) = node_ids.get(c).copied().flatten() {
                    scene.add_child(id, child).map_err(hierarchy)?;
                }
            }
            if let Some(geode) = node
                .mesh
                .and_then(|m| mesh_geodes.get(m).copied().flatten())
            {
                scene.add_child(id, geode).map_err(hierarchy)?;
            }
        }
        for &r in &self.roots {
            if let Some(child) = node_ids.get(r).copied().flatten() {
                scene.add_child(root, child).map_err(hierarchy)?;
            }
        }
        Ok(GltfImport {
            root,
            stats: self.stats,
            node_ids,
            gltf_node_of,
            mesh_geodes,
            primitive_of,
        })
    }
}

/// The deepest node hierarchy the loader accepts. Traversals recurse once per level, so
/// a file claiming a deeper chain is refused rather than risking the stack.
pub const MAX_HIERARCHY_DEPTH: usize = 1024;

/// The most node paths (visits of a node along distinct paths from the scene root,
/// summed over all nodes) the loader accepts. glTF requires a forest, where this is the
/// node count; the loader also accepts nodes shared by several parents, but a few dozen
/// levels of shared nodes already make 2^64 paths, which every query would walk.
pub const MAX_NODE_PATHS: usize = 1 << 24;

/// Marks the nodes reachable from `roots`, refuses cycles, repeated children,
/// hierarchies deeper than [`MAX_HIERARCHY_DEPTH`] and more than [`MAX_NODE_PATHS`] node
/// paths, and returns per node the number of paths from the scene to it.
fn check_hierarchy(nodes: &mut [PlannedNode], roots: &[usize]) -> Result<Vec<usize>, LoadError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let n = nodes.len();
    for (i, node) in nodes.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        for &c in &node.children {
            if c >= n {
                return Err(LoadError::Hierarchy(format!(
                    "node {i} names missing child {c}"
                )));
            }
            if !seen.insert(c) {
                return Err(LoadError::Hierarchy(format!(
                    "node {i} lists child {c} twice"
                )));
            }
        }
    }
    let mut root_seen = std::collections::HashSet::new();
    for &r in roots {
        if r >= n || !root_seen.insert(r) {
            return Err(LoadError::Hierarchy(format!(
                "the scene lists node {r} twice or it does not exist"
            )));
        }
    }
    // Iterative depth-first search (deep files must not overflow the stack) that also
    // produces a topological order, used to count paths.
    let mut mark = vec![Mark::New; n];
    let mut order = Vec::with_capacity(n);
    for &r in roots {
        if mark[r] != Mark::New {
            continue;
        }
        let mut stack = vec![(r, 0usize)];
        mark[r] = Mark::Open;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&c) = nodes[node].children.get(*next) {
                *next += 1;
                match mark[c] {
                    Mark::Open => {
                        return Err(LoadError::Hierarchy(format!(
                            "node {c} is its own ancestor (a cycle through node {node})"
                        )))
                    }
                    Mark::New => {
                        if stack.len() >= MAX_HIERARCHY_DEPTH {
                            return Err(LoadError::Hierarchy(format!(
                                "node {c} is more than {MAX_HIERARCHY_DEPTH} levels deep"
                            )));
                        }
                        mark[c] = Mark::Open;
                        stack.push((c, 0));
                    }
                    Mark::Done => {}
                }
            } else {
                mark[node] = Mark::Done;
                order.push(node);
                stack.pop();
            }
        }
    }
    let mut paths = vec![0usize; n];
    for &r in roots {
        paths[r] = 1;
    }
    let mut total = 0usize;
    for &i in order.iter().rev() {
        nodes[i].reachable = true;
        let p = paths[i];
        total = total.saturating_add(p);
        for k in 0..nodes[i].children.len() {
            let c = nodes[i].children[k];
            paths[c] = paths[c].saturating_add(p);
        }
    }
    if total > MAX_NODE_PATHS {
        return Err(LoadError::Hierarchy(format!(
            "nodes shared by several parents make more than {MAX_NODE_PATHS} node paths; \
             every query would visit each of them"
        )));
    }
    Ok(paths)
}

/// The node's local matrix from its raw JSON, in f64.
fn node_matrix(index: usize, raw: Option<&Value>) -> Result<DMat4, LoadError> {
    let bad = |reason: String| LoadError::Transform {
        node: index,
        reason,
    };
    let numbers = |key: &str, len: usize| -> Result<Option<Vec<f64>>, LoadError> {
        let Some(v) = raw.and_then(|r| r.get(key)) else {
            return Ok(None);
        };
        let arr = v
            .as_array()
            .filter(|a| a.len() == len)
            .ok_or_else(|| bad(format!("`{key}` must be an array of {len} numbers")))?;
        arr.iter()
            .map(|x| x.as_f64().filter(|f| f.is_finite()))
            .collect::<Option<Vec<f64>>>()
            .map(Some)
            .ok_or_else(|| bad(format!("`{key}` holds a value that is not a finite number")))
    };
    if let Some(m) = numbers("matrix", 16)? {
        let mut cols = [0.0; 16];
        cols.copy_from_slice(&m);
        return Ok(DMat4::from_cols_array(&cols));
    }
    let t = numbers("translation", 3)?.map_or(DVec3::ZERO, |v| DVec3::new(v[0], v[1], v[2]));
    let s = numbers("scale", 3)?.map_or(DVec3::ONE, |v| DVec3::new(v[0], v[1], v[2]));
    let r = match numbers("rotation", 4)? {
        None => DQuat::IDENTITY,
        Some(q) => {
            let q = DQuat::from_xyzw(q[0], q[1], q[2], q[3]);
            let len = q.length();
            if len < 1e-12 {
                return Err(bad("`rotation` is a zero quaternion".into()));
            }
            q / len
        }
    };
    Ok(DMat4::from_scale_rotation_translation(s, r, t))
}

/// Checks the GLB header's total length: gltf 1.4 subtracts the header size from it
/// unchecked, which overflows (a panic with overflow checks on) below 12 bytes.
fn check_glb_header(bytes: &[u8]) -> Result<(), LoadError> {
    if let Some(length) = bytes.get(8..12) {
        let length = u32::from_le_bytes([length[0], length[1], length[2], length[3]]);
        if length < 12 {
            return Err(LoadError::Gltf(format!(
                "the GLB header claims a total length of {length} bytes, less than the 12-byte header"
            )));
        }
    }
    Ok(())
}

/// Checks what the gltf crate's own validation would index without checking first.
///
/// gltf-json 1.4.1 reads the accessor a primitive's `POSITION` names (for its `min` and
/// `max`) before checking that the index exists, and panics on a missing one.
fn check_before_validation(json: &Value) -> Result<(), LoadError> {
    let accessors = json
        .get("accessors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let meshes = json.get("meshes").and_then(Value::as_array);
    for (m, mesh) in meshes.into_iter().flatten().enumerate() {
        let primitives = mesh.get("primitives").and_then(Value::as_array);
        for (p, prim) in primitives.into_iter().flatten().enumerate() {
            let position = prim.get("attributes").and_then(|a| a.get("POSITION"));
            if let Some(index) = position.and_then(Value::as_u64) {
                if usize::try_from(index).map_or(true, |i| i >= accessors) {
                    return Err(LoadError::Gltf(format!(
                        "mesh {m} primitive {p}: POSITION names accessor {index}, but the file has {accessors}"
                    )));
                }
            }
        }
    }
    Ok(())
}

fn map_mode(mode: gltf::mesh::Mode) -> PrimitiveMode {
    use gltf::mesh::Mode;
    match mode {
        Mode::Points => PrimitiveMode::Points,
        Mode::Lines => PrimitiveMode::Lines,
        Mode::LineLoop => PrimitiveMode::LineLoop,
        Mode::LineStrip => PrimitiveMode::LineStrip,
        Mode::Triangles => PrimitiveMode::Triangles,
        Mode::TriangleStrip => PrimitiveMode::TriangleStrip,
        Mode::TriangleFan => PrimitiveMode::TriangleFan,
    }
}

fn read_mesh(
    reader: &AccessorReader<'_>,
    mesh: &gltf::Mesh<'_>,
    stats: &mut LoadStats,
) -> Result<PlannedMesh, LoadError> {
    let mut primitives = Vec::new();
    for prim in mesh.primitives() {
        let used_by = format!("mesh {} primitive {}", mesh.index(), prim.index());
        let Some(pos_accessor) = prim.get(&gltf::Semantic::Positions) else {
            primitives.push(Geometry::default());
            continue;
        };
        let positions = reader.read_vec3(&pos_accessor, &format!("{used_by} POSITION"))?;
        let vertices: Vec<Vec3> = positions.into_iter().map(Vec3::from_array).collect();
        stats.non_finite_vertices += vertices.iter().filter(|v| !v.is_finite()).count();
        let count = vertices.len();
        let mode = map_mode(prim.mode());
        let set = match prim.indices() {
            Some(acc) => {
                let indices = match reader.read_indices(&acc, &format!("{used_by} indices"))? {
                    IndexData::U8(v) => Indices::U8(v),
                    IndexData::U16(v) => Indices::U16(v),
                    IndexData::U32(v) => Indices::U32(v),
                };
                PrimitiveSet::DrawElements { mode, indices }
            }
            None => {
                let count = u32::try_from(count).map_err(|_| {
                    LoadError::Unsupported(format!("{used_by} has more than 2^32 vertices"))
                })?;
                PrimitiveSet::draw_arrays(mode, 0, count)
            }
        };
        let geometry = Geometry::new(vertices)
            .with_primitive_set(set)
            .map_err(|source| LoadError::Primitive {
                mesh: mesh.index(),
                primitive: prim.index(),
                source,
            })?;
        primitives.push(geometry);
    }
    Ok(PlannedMesh {
        name: mesh.name().unwrap_or_default().to_string(),
        primitives,
    })
}
