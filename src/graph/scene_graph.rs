//! [`SceneGraph`]: the arena owning every node and drawable.

use glam::{DMat4, DVec3, DVec4, Vec3};
use slotmap::{Key, SlotMap};
use smallvec::SmallVec;
use std::collections::HashSet;
use std::sync::OnceLock;

use rayon::prelude::*;

use super::pending_refits::PendingRefits;
use super::{DrawableId, GraphError, Lod, Node, NodeId, NodeKind, ReferenceFrame, Transform};
use crate::accel::{PrimitiveBvh, SceneIndex};
use crate::bounding::{BoundingBox, BoundingSphere};
use crate::drawable::{Drawable, Geometry};

/// A drawable as the graph stores it: the drawable, its name, its geodes and its caches.
pub(crate) struct DrawableEntry {
    pub(crate) name: String,
    pub(crate) drawable: Box<dyn Drawable>,
    pub(crate) parents: SmallVec<[NodeId; 2]>,
    pub(crate) bound: OnceLock<BoundingBox>,
    /// The primitive BVH (`None` inside when the drawable cannot have one).
    pub(crate) accel: OnceLock<Option<PrimitiveBvh>>,
}

/// The scene: an arena of [`Node`]s and drawables addressed by [`NodeId`] and
/// [`DrawableId`].
///
/// Nodes form a directed acyclic graph, as in OSG: a node (or a drawable) may sit under
/// several parents, so one building mesh can appear under many transforms. A node with
/// no parent is a root. Linking refuses cycles and duplicate children.
///
/// Bounds are cached lazily and are never stale: every edit made through the graph's
/// methods drops the caches that depend on it (the node or drawable and its ancestors up
/// to the roots), and the next read recomputes them. Caches use [`OnceLock`], so a
/// `&SceneGraph` can be queried from many threads at once (`SceneGraph: Send + Sync`).
///
/// ```
/// use scene_intersect::graph::SceneGraph;
/// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
/// use glam::{DMat4, DVec3, Vec3};
///
/// let mut scene = SceneGraph::new();
/// let root = scene.add_group("root");
/// let mesh = scene.add_drawable("tri", Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?);
/// let geode = scene.add_geode("geode");
/// scene.add_drawable_to_geode(geode, mesh)?;
/// // The same geode under two transforms.
/// for x in [0.0, 10.0] {
///     let t = scene.add_transform("t", DMat4::from_translation(DVec3::new(x, 0.0, 0.0)))?;
///     scene.add_child(root, t)?;
///     scene.add_child(t, geode)?;
/// }
/// assert_eq!(scene.node_paths_to(geode).len(), 2);
/// let b = scene.node_bound(root).unwrap();
/// assert!(b.radius > 5.0);
/// # Ok::<(), scene_intersect::graph::GraphError>(())
/// ```
#[derive(Default)]
pub struct SceneGraph {
    nodes: SlotMap<NodeId, Node>,
    drawables: SlotMap<DrawableId, DrawableEntry>,
    /// How many node masks were set: a scene index remembers it, so that it can trust
    /// the masks it saw while they are unchanged.
    mask_edits: u64,
    /// How many nodes were created (the next node's [`serial`](Node::serial)).
    nodes_created: u64,
    /// The scene indices above drawables handed out by [`SceneGraph::drawable_mut`], and
    /// edited drawables' BVHs, to be refitted at their next use.
    pending: PendingRefits,
}

impl std::fmt::Debug for SceneGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneGraph")
            .field("nodes", &self.nodes.len())
            .field("drawables", &self.drawables.len())
            .finish()
    }
}

impl SceneGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    // ----- creation -------------------------------------------------------------------

    fn insert(&mut self, name: impl Into<String>, kind: NodeKind) -> NodeId {
        let serial = self.nodes_created;
        self.nodes_created += 1;
        self.nodes.insert(Node::new(name, kind, serial))
    }

    /// Adds a parentless [`NodeKind::Group`].
    pub fn add_group(&mut self, name: impl Into<String>) -> NodeId {
        self.insert(name, NodeKind::Group)
    }

    /// Adds a parentless relative [`NodeKind::Transform`].
    ///
    /// The matrix must be affine: its last row is made exactly `(0, 0, 0, 1)` when it is
    /// within 10^-9 of it (the rounding of an inverse), and refused otherwise.
    ///
    /// # Errors
    /// [`GraphError::NonFiniteMatrix`] when an entry of `matrix` is NaN or infinite,
    /// [`GraphError::NonAffineMatrix`] when its last row is not `(0, 0, 0, 1)`.
    ///
    /// ```
    /// use glam::{DMat4, DVec3};
    /// use scene_intersect::graph::{GraphError, SceneGraph};
    ///
    /// let mut scene = SceneGraph::new();
    /// assert!(scene.add_transform("car", DMat4::from_translation(DVec3::X)).is_ok());
    /// let projection = glam::dcamera::rh::proj::opengl::perspective(1.0, 1.5, 0.1, 100.0);
    /// assert!(matches!(
    ///     scene.add_transform("lens", projection),
    ///     Err(GraphError::NonAffineMatrix { .. })
    /// ));
    /// ```
    pub fn add_transform(
        &mut self,
        name: impl Into<String>,
        matrix: DMat4,
    ) -> Result<NodeId, GraphError> {
        let name = name.into();
        let matrix = affine_node_matrix(matrix, || name.clone())?;
        Ok(self.insert(
            name,
            NodeKind::Transform(Transform {
                matrix,
                reference_frame: ReferenceFrame::Relative,
            }),
        ))
    }

    /// Adds a parentless [`NodeKind::Geode`] with no drawables.
    pub fn add_geode(&mut self, name: impl Into<String>) -> NodeId {
        self.insert(
            name,
            NodeKind::Geode {
                drawables: Vec::new(),
            },
        )
    }

    /// Adds a parentless [`NodeKind::Lod`]; `center` `None` measures eye distances from
    /// the centre of the node's bound.
    pub fn add_lod(
        &mut self,
        name: impl Into<String>,
        center: Option<DVec3>,
    ) -> Result<NodeId, GraphError> {
        let name = name.into();
        if center.is_some_and(|c| !c.is_finite()) {
            return Err(GraphError::BadLodRange {
                node: name,
                min: f64::NAN,
                max: f64::NAN,
            });
        }
        Ok(self.insert(
            name,
            NodeKind::Lod(Lod {
                center,
                ranges: Vec::new(),
            }),
        ))
    }

    /// Adds a parentless [`NodeKind::Switch`].
    pub fn add_switch(&mut self, name: impl Into<String>) -> NodeId {
        self.insert(
            name,
            NodeKind::Switch {
                enabled: Vec::new(),
            },
        )
    }

    /// Adds a drawable (not yet in any geode).
    pub fn add_drawable(&mut self, name: impl Into<String>, drawable: impl Drawable) -> DrawableId {
        self.add_boxed_drawable(name, Box::new(drawable))
    }

    /// Adds an already boxed drawable.
    pub fn add_boxed_drawable(
        &mut self,
        name: impl Into<String>,
        drawable: Box<dyn Drawable>,
    ) -> DrawableId {
        self.drawables.insert(DrawableEntry {
            name: name.into(),
            drawable,
            parents: SmallVec::new(),
            bound: OnceLock::new(),
            accel: OnceLock::new(),
        })
    }

    // ----- reading --------------------------------------------------------------------

    /// The node, or `None` for an id not in this graph.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// The drawable, or `None` for an id not in this graph.
    pub fn drawable(&self, id: DrawableId) -> Option<&dyn Drawable> {
        self.drawables.get(id).map(|d| d.drawable.as_ref())
    }

    /// The drawable's name.
    pub fn drawable_name(&self, id: DrawableId) -> Option<&str> {
        self.drawables.get(id).map(|d| d.name.as_str())
    }

    /// The geodes holding the drawable.
    pub fn drawable_parents(&self, id: DrawableId) -> &[NodeId] {
        self.drawables.get(id).map_or(&[], |d| &d.parents)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of drawables.
    pub fn drawable_count(&self) -> usize {
        self.drawables.len()
    }

    /// Every node with its id, in arena order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter()
    }

    /// Every drawable with its id, in arena order.
    pub fn drawables(&self) -> impl Iterator<Item = (DrawableId, &dyn Drawable)> {
        self.drawables
            .iter()
            .map(|(id, d)| (id, d.drawable.as_ref()))
    }

    /// The nodes without parents.
    pub fn roots(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .iter()
            .filter(|(_, n)| n.parents.is_empty())
            .map(|(id, _)| id)
    }

    /// The first node with this name, in arena order.
    pub fn find_node(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .find(|(_, n)| n.name == name)
            .map(|(id, _)| id)
    }

    /// The node's bounding sphere, in its parent's frame (a transform's includes its own
    /// matrix; an absolute-frame transform's is [`BoundingSphere::EVERYWHERE`], since it
    /// cannot be expressed in the parent's frame). `None` for an unknown id.
    pub fn node_bound(&self, id: NodeId) -> Option<BoundingSphere> {
        let node = self.nodes.get(id)?;
        if let Some(bound) = node.bound.get() {
            return Some(*bound);
        }
        self.cache_bounds_below(node);
        Some(*node.bound.get_or_init(|| self.compute_node_bound(node)))
    }

    /// Computes the bound of every node below `node` not cached yet, deepest first, with
    /// an explicit stack: each node's bound is then made from its children's cached
    /// ones, and the call stack does not grow with the hierarchy's depth (computed by
    /// recursion, the bound of a chain of 1 024 nodes, the deepest the glTF loader
    /// accepts, overflowed a 1 MiB thread stack in debug builds).
    fn cache_bounds_below(&self, node: &Node) {
        let uncached = |id: &NodeId| {
            self.nodes
                .get(*id)
                .is_some_and(|child| child.bound.get().is_none())
        };
        let mut stack: Vec<(NodeId, bool)> = (node.children.iter().filter(|c| uncached(c)))
            .map(|&c| (c, false))
            .collect();
        while let Some((id, children_cached)) = stack.pop() {
            let Some(node) = self.nodes.get(id) else {
                continue;
            };
            if children_cached {
                node.bound.get_or_init(|| self.compute_node_bound(node));
            } else if node.bound.get().is_none() {
                stack.push((id, true));
                stack.extend(
                    node.children
                        .iter()
                        .filter(|c| uncached(c))
                        .map(|&c| (c, false)),
                );
            }
        }
    }

    /// The drawable's bounding box in its local frame. `None` for an unknown id.
    pub fn drawable_bound(&self, id: DrawableId) -> Option<BoundingBox> {
        let entry = self.drawables.get(id)?;
        Some(*entry.bound.get_or_init(|| entry.drawable.bounding_box()))
    }

    /// The drawable's primitive BVH, built on first use; `None` for an unknown id, a
    /// drawable that is not a [`Geometry`], or one with too many primitives.
    ///
    /// A drawable reached by several paths when its BVH is built (see
    /// [`is_instanced`](Self::is_instanced)) gets the finer tree of
    /// [`PrimitiveBvh::build_instanced`]; the choice only changes speed, never results.
    pub fn primitive_bvh(&self, id: DrawableId) -> Option<&PrimitiveBvh> {
        let entry = self.drawables.get(id)?;
        entry
            .accel
            .get_or_init(|| self.refitted_or_built_bvh(id))
            .as_ref()
    }

    /// The drawable's primitive BVH for its first use since it was built or edited: the
    /// one parked by an edit, refitted if the geometry still holds the primitives it
    /// stores, or one built afresh (out of line, as
    /// [`refitted_or_built_index`](Self::refitted_or_built_index)).
    #[cold]
    #[inline(never)]
    fn refitted_or_built_bvh(&self, id: DrawableId) -> Option<PrimitiveBvh> {
        let parked = self.pending.take_bvh(id);
        let geometry = self.drawables.get(id)?.drawable.as_geometry();
        if let (Some(mut bvh), Some(geometry)) = (parked, geometry) {
            if bvh.refit(geometry) {
                return Some(bvh);
            }
        }
        self.build_primitive_bvh(id)
    }

    /// Builds the drawable's primitive BVH afresh, as [`primitive_bvh`](Self::primitive_bvh)
    /// builds its cached one (the finer tree for an instanced drawable); `None` as there.
    /// For measuring builds; queries use the cached one.
    pub fn build_primitive_bvh(&self, id: DrawableId) -> Option<PrimitiveBvh> {
        let geometry = self.drawables.get(id)?.drawable.as_geometry()?;
        if self.is_instanced(id) {
            PrimitiveBvh::build_instanced(geometry)
        } else {
            PrimitiveBvh::build(geometry)
        }
    }

    /// Whether more than one path leads down to the drawable: it sits in several
    /// geodes, or a node above it has several parents (one mesh under many
    /// transforms). False for an unknown id.
    pub fn is_instanced(&self, id: DrawableId) -> bool {
        let Some(entry) = self.drawables.get(id) else {
            return false;
        };
        let mut parents: &[NodeId] = &entry.parents;
        // Linking refuses cycles, so the walk up ends at a root.
        while let [only] = parents {
            parents = self.nodes.get(*only).map_or(&[], |n| &n.parents);
        }
        parents.len() > 1
    }

    /// The instance index of the subgraph under `root`, built on first use (see
    /// [`SceneIndex`]); `None` for an unknown id. Moved transforms and edited drawables
    /// below `root` refit it; structural edits park it, to be brought up to date at its
    /// next use ([`SceneIndex::restructure`]).
    pub fn scene_index(&self, root: NodeId) -> Option<&SceneIndex> {
        let node = self.nodes.get(root)?;
        Some(
            node.index
                .get_or_init(|| self.refitted_or_built_index(root)),
        )
    }

    /// The scene index of `root` for its first use since it was built or parked: the
    /// parked one refitted ([`PendingRefits`]), or one built afresh. Cold and out of
    /// line, so that the queries' path through [`scene_index`](Self::scene_index) holds
    /// only the check that the index is there.
    #[cold]
    #[inline(never)]
    fn refitted_or_built_index(&self, root: NodeId) -> Box<SceneIndex> {
        match self.pending.take(root) {
            Some(parked) => parked.refitted(self),
            None => Box::new(SceneIndex::build(self, root)),
        }
    }

    /// Builds the scene index of every root now, and the primitive BVHs of the
    /// drawables its world tree keeps whole (in parallel), so the first queries pay
    /// nothing. (Queries build what they need lazily otherwise; a drawable's primitive
    /// BVH is also built when an instance of it is moved, or a custom intersector
    /// visits it.)
    pub fn build_acceleration(&self) {
        let mut whole: Vec<DrawableId> = Vec::new();
        for root in self.roots().collect::<Vec<_>>() {
            if let Some(index) = self.scene_index(root) {
                whole.extend(index.whole_drawables());
            }
        }
        whole.sort_unstable();
        whole.dedup();
        whole.par_iter().for_each(|&id| {
            let _ = self.primitive_bvh(id);
        });
    }

    /// Rebuilds the scene indices that moves and edits have detached instances from (or
    /// structural edits removed instances from), then does what
    /// [`build_acceleration`](Self::build_acceleration) does.
    ///
    /// A moved transform keeps the index, and so does an edited drawable: the moved
    /// instances, and the edited ones whose triangles left their leaves in the world
    /// tree (or that were edited more than eight times) or, for drawables the tree keeps
    /// whole, whose box left the one it holds for them, are detached from the world tree
    /// and visited whole through their own trees from then on (see [`SceneIndex`]). So
    /// are the instances structural edits add ([`SceneIndex::restructure`]).
    /// That is right for things that keep moving, but slower for a scene that has
    /// settled: after littlest_tokyo's biggest mesh (41 000 of its 142 000 triangles)
    /// was lifted by a thousandth of the scene's size, segments through the scene took
    /// 1.8–1.9 times as long, nearest and all hits, and 2.3–3.3 times as long after the
    /// same edit of zdm2's one mesh. This brings such instances back into the world
    /// tree, at the cost of a build of each index that has any (50–60 ms for
    /// littlest_tokyo, 20–25 ms for zdm2, on one core): for after edits, not for every
    /// frame. Indices without detached instances are kept as they are.
    ///
    /// ```
    /// use glam::{DMat4, DVec3, Vec3};
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    /// use scene_intersect::prelude::*;
    ///
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("root");
    /// let moved = scene.add_transform("moved", DMat4::IDENTITY)?;
    /// let geode = scene.add_geode("triangle");
    /// let triangle = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z])
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
    /// let d = scene.add_drawable("triangle", triangle);
    /// scene.add_drawable_to_geode(geode, d)?;
    /// scene.add_child(moved, geode)?;
    /// scene.add_child(root, moved)?;
    /// scene.build_acceleration();
    /// // A stretch detaches (a move of the whole scene by a translation, a turn or a
    /// // uniform scale would not: the world tree moves with it).
    /// scene.set_matrix(moved, DMat4::from_scale(DVec3::new(1.0, 2.0, 1.0)))?;
    /// assert_eq!(scene.scene_index(root).unwrap().detached().len(), 1);
    /// scene.rebuild_acceleration();
    /// assert!(scene.scene_index(root).unwrap().detached().is_empty());
    /// # Ok::<(), scene_intersect::graph::GraphError>(())
    /// ```
    pub fn rebuild_acceleration(&mut self) {
        for node in self.nodes.values_mut() {
            let unsettled = |i: &SceneIndex| !i.detached().is_empty() || i.removed_count() > 0;
            if node.index.get().is_some_and(|i| unsettled(i)) {
                node.index = OnceLock::new();
            }
        }
        // An index parked by a handed-out drawable may detach that drawable's instances
        // when refitted (unless its triangles stayed in their leaves): built afresh
        // instead, at its next use.
        drop(self.pending.take_all());
        self.build_acceleration();
    }

    /// Bytes held by the built acceleration structures (primitive BVHs and the instance
    /// indices of the nodes that have one), and the number of primitives the BVHs hold.
    pub fn acceleration_memory(&self) -> (usize, usize) {
        let (bvh_bytes, primitives) = self
            .drawables
            .values()
            .filter_map(|e| e.accel.get().and_then(Option::as_ref))
            .fold((0, 0), |(bytes, prims), b| {
                (bytes + b.memory_bytes(), prims + b.len())
            });
        let index_bytes: usize = self
            .nodes
            .values()
            .filter_map(|n| n.index.get())
            .map(|index| index.memory_bytes())
            .sum();
        let parked_bytes = self.pending.memory_bytes();
        (bvh_bytes + index_bytes + parked_bytes, primitives)
    }

    fn compute_node_bound(&self, node: &Node) -> BoundingSphere {
        let children_sphere = |filter: &dyn Fn(usize) -> bool| {
            let mut s = BoundingSphere::EMPTY;
            for (i, &c) in node.children.iter().enumerate() {
                if filter(i) {
                    if let Some(b) = self.node_bound(c) {
                        s.expand_by_sphere(&b);
                    }
                }
            }
            s
        };
        match &node.kind {
            NodeKind::Group | NodeKind::Lod(_) => children_sphere(&|_| true),
            NodeKind::Switch { enabled } => {
                children_sphere(&|i| enabled.get(i).copied().unwrap_or(false))
            }
            NodeKind::Transform(t) => {
                let s = children_sphere(&|_| true);
                match t.reference_frame {
                    ReferenceFrame::Relative => s.transformed(&t.matrix),
                    ReferenceFrame::Absolute if s.is_empty() => s,
                    ReferenceFrame::Absolute => BoundingSphere::EVERYWHERE,
                }
            }
            NodeKind::Geode { drawables } => {
                let mut b = BoundingBox::EMPTY;
                for &d in drawables {
                    if let Some(db) = self.drawable_bound(d) {
                        b.expand_by_box(&db);
                    }
                }
                BoundingSphere::from_box(&b)
            }
        }
    }

    /// The local-to-world matrix at the end of `path` (a root-first list of nodes, each
    /// a child of the one before): the product of the transforms on it, restarting at
    /// each absolute-frame transform.
    pub fn local_to_world(&self, path: &[NodeId]) -> Result<DMat4, GraphError> {
        let mut m = DMat4::IDENTITY;
        for (i, &id) in path.iter().enumerate() {
            let node = self.get(id)?;
            if i > 0 && !node.parents.contains(&path[i - 1]) {
                return Err(GraphError::BrokenPath {
                    parent: self.label(path[i - 1]),
                    child: self.label(id),
                });
            }
            if let NodeKind::Transform(t) = &node.kind {
                m = match t.reference_frame {
                    ReferenceFrame::Relative => m * t.matrix,
                    ReferenceFrame::Absolute => t.matrix,
                };
            }
        }
        Ok(m)
    }

    /// Every path from a root down to `id` (root first, `id` last). A node shared under
    /// several parents has several paths. Empty for an unknown id.
    pub fn node_paths_to(&self, id: NodeId) -> Vec<Vec<NodeId>> {
        let mut out = Vec::new();
        if self.nodes.contains_key(id) {
            let mut path = vec![id];
            self.collect_paths_up(&mut path, &mut out);
        }
        out
    }

    fn collect_paths_up(&self, path: &mut Vec<NodeId>, out: &mut Vec<Vec<NodeId>>) {
        let Some(&top) = path.last() else { return };
        let parents = &self.nodes[top].parents;
        if parents.is_empty() {
            out.push(path.iter().rev().copied().collect());
            return;
        }
        for &p in parents {
            path.push(p);
            self.collect_paths_up(path, out);
            path.pop();
        }
    }

    /// A readable name for messages: the node's name, or its id when unnamed.
    pub(crate) fn label(&self, id: NodeId) -> String {
        match self.nodes.get(id) {
            Some(n) if !n.name.is_empty() => format!("'{}'", n.name),
            _ => format!("{:?}", id.data()),
        }
    }

    fn drawable_label(&self, id: DrawableId) -> String {
        match self.drawables.get(id) {
            Some(d) if !d.name.is_empty() => format!("'{}'", d.name),
            _ => format!("{:?}", id.data()),
        }
    }

    fn get(&self, id: NodeId) -> Result<&Node, GraphError> {
        self.nodes
            .get(id)
            .ok_or_else(|| GraphError::UnknownNode(format!("{:?}", id.data())))
    }

    fn get_mut(&mut self, id: NodeId) -> Result<&mut Node, GraphError> {
        self.nodes
            .get_mut(id)
            .ok_or_else(|| GraphError::UnknownNode(format!("{:?}", id.data())))
    }

    // ----- linking --------------------------------------------------------------------

    /// Makes `child` a child of `parent` (appended last). On a switch the child starts
    /// enabled; on a LOD it is shown at every distance (see [`SceneGraph::add_lod_child`]).
    pub fn add_child(&mut self, parent: NodeId, child: NodeId) -> Result<(), GraphError> {
        self.check_link(parent, child)?;
        let p = &mut self.nodes[parent];
        match &mut p.kind {
            NodeKind::Switch { enabled } => enabled.push(true),
            NodeKind::Lod(lod) => lod.ranges.push((0.0, f64::INFINITY)),
            _ => {}
        }
        p.children.push(child);
        self.nodes[child].parents.push(parent);
        // Only paths through the child are new (a switch's or LOD's other children keep
        // their places).
        self.invalidate_node(parent, child);
        Ok(())
    }

    /// Makes `child` a child of the LOD node `lod`, shown when the eye distance is in
    /// `[min, max)`.
    pub fn add_lod_child(
        &mut self,
        lod: NodeId,
        child: NodeId,
        min: f64,
        max: f64,
    ) -> Result<(), GraphError> {
        let node = self.get(lod)?;
        if !matches!(node.kind, NodeKind::Lod(_)) {
            return Err(self.wrong_kind(lod, "Lod"));
        }
        if !(min.is_finite() && !max.is_nan() && min <= max && min >= 0.0) {
            return Err(GraphError::BadLodRange {
                node: self.label(lod),
                min,
                max,
            });
        }
        self.add_child(lod, child)?;
        if let NodeKind::Lod(l) = &mut self.nodes[lod].kind {
            if let Some(last) = l.ranges.last_mut() {
                *last = (min, max);
            }
        }
        Ok(())
    }

    fn check_link(&self, parent: NodeId, child: NodeId) -> Result<(), GraphError> {
        let p = self.get(parent)?;
        self.get(child)?;
        if matches!(p.kind, NodeKind::Geode { .. }) {
            return Err(GraphError::GeodeChild(self.label(parent)));
        }
        if p.children.contains(&child) {
            return Err(GraphError::DuplicateChild {
                parent: self.label(parent),
                child: self.label(child),
            });
        }
        if self.is_ancestor_or_self(child, parent) {
            return Err(GraphError::Cycle {
                parent: self.label(parent),
                child: self.label(child),
            });
        }
        Ok(())
    }

    /// True when `candidate` is `node` or one of its ancestors.
    fn is_ancestor_or_self(&self, candidate: NodeId, node: NodeId) -> bool {
        let mut seen = HashSet::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n == candidate {
                return true;
            }
            if seen.insert(n) {
                stack.extend(self.nodes[n].parents.iter().copied());
            }
        }
        false
    }

    /// Unlinks `child` from `parent` (the child stays in the graph; it becomes a root if
    /// that was its only parent).
    pub fn remove_child(&mut self, parent: NodeId, child: NodeId) -> Result<(), GraphError> {
        let p = self.get(parent)?;
        let Some(pos) = p.children.iter().position(|&c| c == child) else {
            return Err(GraphError::NotAChild {
                parent: self.label(parent),
                child: self.label(child),
            });
        };
        // Only paths through the child are gone, unless the children after it under a
        // switch or LOD move up a place.
        let changed = match p.kind {
            NodeKind::Switch { .. } | NodeKind::Lod(_) => parent,
            _ => child,
        };
        self.invalidate_node(parent, changed);
        let p = &mut self.nodes[parent];
        p.children.remove(pos);
        match &mut p.kind {
            NodeKind::Switch { enabled } => {
                enabled.remove(pos);
            }
            NodeKind::Lod(lod) => {
                lod.ranges.remove(pos);
            }
            _ => {}
        }
        if let Some(c) = self.nodes.get_mut(child) {
            if let Some(i) = c.parents.iter().position(|&x| x == parent) {
                c.parents.remove(i);
            }
        }
        Ok(())
    }

    /// Appends a drawable to a geode.
    pub fn add_drawable_to_geode(
        &mut self,
        geode: NodeId,
        drawable: DrawableId,
    ) -> Result<(), GraphError> {
        if !self.drawables.contains_key(drawable) {
            return Err(GraphError::UnknownDrawable(format!(
                "{:?}",
                drawable.data()
            )));
        }
        let g = self.get(geode)?;
        match &g.kind {
            NodeKind::Geode { drawables } if drawables.contains(&drawable) => {
                return Err(GraphError::DuplicateDrawable {
                    geode: self.label(geode),
                    drawable: self.drawable_label(drawable),
                })
            }
            NodeKind::Geode { .. } => {}
            _ => return Err(self.wrong_kind(geode, "Geode")),
        }
        self.invalidate_node(geode, geode);
        if let NodeKind::Geode { drawables } = &mut self.nodes[geode].kind {
            drawables.push(drawable);
        }
        self.drawables[drawable].parents.push(geode);
        Ok(())
    }

    /// Takes a drawable out of a geode (the drawable stays in the graph).
    pub fn remove_drawable_from_geode(
        &mut self,
        geode: NodeId,
        drawable: DrawableId,
    ) -> Result<(), GraphError> {
        let label = self.label(geode);
        let pos = match &self.get(geode)?.kind {
            NodeKind::Geode { drawables } => drawables.iter().position(|&d| d == drawable),
            _ => return Err(self.wrong_kind(geode, "Geode")),
        };
        let Some(pos) = pos else {
            return Err(GraphError::NotAChild {
                parent: label,
                child: self.drawable_label(drawable),
            });
        };
        self.invalidate_node(geode, geode);
        if let NodeKind::Geode { drawables } = &mut self.nodes[geode].kind {
            drawables.remove(pos);
        }
        if let Some(d) = self.drawables.get_mut(drawable) {
            d.parents.retain(|p| *p != geode);
        }
        Ok(())
    }

    /// Removes a node from the graph, unlinking it from its parents and children (its
    /// children stay, becoming roots where it was their only parent; a geode's drawables
    /// stay in the graph). Returns the removed node.
    pub fn remove_node(&mut self, id: NodeId) -> Result<Node, GraphError> {
        let node = self.get(id)?;
        let parents: Vec<NodeId> = node.parents.to_vec();
        let children: Vec<NodeId> = node.children.clone();
        let drawables: Vec<DrawableId> = node.drawables().to_vec();
        for p in parents {
            self.remove_child(p, id)?;
        }
        for c in children {
            if let Some(c) = self.nodes.get_mut(c) {
                c.parents.retain(|p| *p != id);
            }
        }
        for d in drawables {
            if let Some(d) = self.drawables.get_mut(d) {
                d.parents.retain(|p| *p != id);
            }
        }
        self.pending.forget(id);
        let mut node = self
            .nodes
            .remove(id)
            .ok_or_else(|| GraphError::UnknownNode(format!("{:?}", id.data())))?;
        node.parents.clear();
        Ok(node)
    }

    /// Removes a drawable from the graph and from every geode holding it.
    pub fn remove_drawable(&mut self, id: DrawableId) -> Result<Box<dyn Drawable>, GraphError> {
        let parents = self
            .drawables
            .get(id)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))?
            .parents
            .to_vec();
        for g in parents {
            self.remove_drawable_from_geode(g, id)?;
        }
        self.pending.forget_bvh(id);
        self.drawables
            .remove(id)
            .map(|e| e.drawable)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))
    }

    // ----- editing --------------------------------------------------------------------

    fn wrong_kind(&self, id: NodeId, expected: &'static str) -> GraphError {
        GraphError::WrongKind {
            node: self.label(id),
            expected,
            actual: self.nodes.get(id).map_or("missing node", |n| n.kind.name()),
        }
    }

    /// Renames a node.
    pub fn set_name(&mut self, id: NodeId, name: impl Into<String>) -> Result<(), GraphError> {
        self.get_mut(id)?.name = name.into();
        Ok(())
    }

    /// Sets a node's mask (bounds do not depend on masks, so nothing is invalidated).
    pub fn set_node_mask(&mut self, id: NodeId, mask: u32) -> Result<(), GraphError> {
        self.get_mut(id)?.node_mask = mask;
        self.mask_edits = self.mask_edits.wrapping_add(1);
        Ok(())
    }

    /// How many times a node mask was set (see [`SceneIndex`]'s use of it).
    pub(crate) fn mask_edits(&self) -> u64 {
        self.mask_edits
    }

    /// How many nodes were created so far (see [`SceneIndex::restructure`]'s use of it).
    pub(crate) fn nodes_created(&self) -> u64 {
        self.nodes_created
    }

    /// Whether node `id` was created after the graph had created `count` nodes (false
    /// for a node no longer in the graph).
    pub(crate) fn created_since(&self, id: NodeId, count: u64) -> bool {
        self.nodes.get(id).is_some_and(|node| node.serial >= count)
    }

    /// Moves a transform: sets its matrix and drops the bounds that depend on it.
    ///
    /// # Errors
    /// As [`add_transform`](Self::add_transform) for the matrix (the node keeps its old
    /// one), and [`GraphError::WrongKind`] when `id` is not a transform.
    pub fn set_matrix(&mut self, id: NodeId, matrix: DMat4) -> Result<(), GraphError> {
        let matrix = affine_node_matrix(matrix, || self.label(id))?;
        match &mut self.get_mut(id)?.kind {
            NodeKind::Transform(t) => t.matrix = matrix,
            _ => return Err(self.wrong_kind(id, "Transform")),
        }
        self.transform_moved(id);
        Ok(())
    }

    /// Sets a transform's reference frame.
    pub fn set_reference_frame(
        &mut self,
        id: NodeId,
        frame: ReferenceFrame,
    ) -> Result<(), GraphError> {
        match &mut self.get_mut(id)?.kind {
            NodeKind::Transform(t) => t.reference_frame = frame,
            _ => return Err(self.wrong_kind(id, "Transform")),
        }
        self.invalidate_node(id, id);
        Ok(())
    }

    /// Turns the `child_position`-th child of a switch on or off.
    pub fn set_switch_child(
        &mut self,
        id: NodeId,
        child_position: usize,
        on: bool,
    ) -> Result<(), GraphError> {
        let label = self.label(id);
        match &mut self.get_mut(id)?.kind {
            NodeKind::Switch { enabled } => match enabled.get_mut(child_position) {
                Some(flag) => *flag = on,
                None => {
                    return Err(GraphError::NotAChild {
                        parent: label,
                        child: format!("#{child_position}"),
                    })
                }
            },
            _ => return Err(self.wrong_kind(id, "Switch")),
        }
        self.invalidate_node(id, id);
        Ok(())
    }

    /// The drawable, mutable. Its cached bound, and the bounds of every node above it,
    /// are dropped first, since the caller may change anything. Its BVH and the scene
    /// indices above it are kept: they wait for the borrow to end and are refitted for
    /// the drawable as the caller left it at their next use (the next query or edit), as
    /// after [`edit_drawable`](Self::edit_drawable).
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use scene_intersect::prelude::*;
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    ///
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("root");
    /// let flag = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
    /// let flag = scene.add_drawable("flag", flag);
    /// let geode = scene.add_geode("flag");
    /// scene.add_drawable_to_geode(geode, flag)?;
    /// scene.add_child(root, geode)?;
    /// scene.build_acceleration();
    /// // The flag's tip moves a unit along z.
    /// let vertices = scene.geometry_mut(flag)?.vertices_mut();
    /// vertices[2].z = 1.0;
    /// let mut down = LineSegmentIntersector::new(DVec3::new(0.1, 0.8, 5.0), DVec3::new(0.1, 0.8, -5.0))?;
    /// IntersectionVisitor::new().apply(&scene, root, &mut down)?;
    /// assert!((down.intersections()[0].world_point.z - 0.8).abs() < 1e-6);
    /// assert_eq!(scene.scene_index(root).unwrap().refit_count(), 1, "refitted, not rebuilt");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`GraphError::UnknownDrawable`] for an id not in the graph.
    pub fn drawable_mut(&mut self, id: DrawableId) -> Result<&mut dyn Drawable, GraphError> {
        if !self.drawables.contains_key(id) {
            return Err(GraphError::UnknownDrawable(format!("{:?}", id.data())));
        }
        self.drawable_handed_out(id);
        Ok(self.drawables[id].drawable.as_mut())
    }

    /// The drawable as a mutable built-in [`Geometry`] (bounds dropped, its BVH and the
    /// scene indices kept for a refit, as for [`SceneGraph::drawable_mut`]).
    ///
    /// # Errors
    /// [`GraphError::UnknownDrawable`] for an id not in the graph and
    /// [`GraphError::NotAGeometry`] for a drawable of another kind (then nothing is
    /// dropped).
    pub fn geometry_mut(&mut self, id: DrawableId) -> Result<&mut Geometry, GraphError> {
        let entry = self
            .drawables
            .get_mut(id)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))?;
        if entry.drawable.as_geometry_mut().is_none() {
            return Err(GraphError::NotAGeometry(self.drawable_label(id)));
        }
        self.drawable_handed_out(id);
        // A geometry, as just checked (the label is made only for errors: an edit a
        // frame should not allocate).
        self.drawables[id]
            .drawable
            .as_geometry_mut()
            .ok_or_else(|| GraphError::NotAGeometry(format!("{:?}", id.data())))
    }

    /// Edits a drawable in place with `edit`, then drops its cached bound (and the
    /// bounds above it) and refits every scene index holding it rather than dropping it:
    /// its instances stay in the indices' world trees where the edit left them inside
    /// what the trees hold for them, and otherwise leave them and are visited whole,
    /// through the drawable as `edit` left it, with the world boxes of its new bound (as
    /// a moved transform's instances are: [`SceneIndex::refit_drawable`]). Its BVH is
    /// refitted at its next use ([`PrimitiveBvh::refit`]), or rebuilt then if `edit`
    /// added or removed primitive sets. Returns what `edit` returns.
    ///
    /// # Errors
    /// [`GraphError::UnknownDrawable`] for an id not in the graph (then `edit` is not
    /// called).
    pub fn edit_drawable<R>(
        &mut self,
        id: DrawableId,
        edit: impl FnOnce(&mut dyn Drawable) -> R,
    ) -> Result<R, GraphError> {
        let entry = self
            .drawables
            .get_mut(id)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))?;
        let out = edit(entry.drawable.as_mut());
        self.drawable_changed(id, BvhAfterEdit::Stale);
        Ok(out)
    }

    /// [`edit_drawable`](Self::edit_drawable) for a built-in [`Geometry`]: moves its
    /// vertices, say, every frame, keeping the scene indices (refitted).
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use scene_intersect::prelude::*;
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    ///
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("root");
    /// let flag = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
    /// let flag = scene.add_drawable("flag", flag);
    /// let geode = scene.add_geode("flag");
    /// scene.add_drawable_to_geode(geode, flag)?;
    /// scene.add_child(root, geode)?;
    /// scene.build_acceleration();
    /// // The flag waves: its tip moves a unit along z.
    /// scene.edit_geometry(flag, |g| g.vertices_mut()[2].z = 1.0)?;
    /// let index = scene.scene_index(root).unwrap();
    /// assert_eq!(index.refit_count(), 1, "refitted, not rebuilt");
    /// let mut down = LineSegmentIntersector::new(DVec3::new(0.1, 0.8, 5.0), DVec3::new(0.1, 0.8, -5.0))?;
    /// IntersectionVisitor::new().apply(&scene, root, &mut down)?;
    /// assert_eq!(down.intersections().len(), 1);
    /// assert!((down.intersections()[0].world_point.z - 0.8).abs() < 1e-6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`GraphError::UnknownDrawable`] for an id not in the graph and
    /// [`GraphError::NotAGeometry`] for a drawable of another kind (then `edit` is not
    /// called and nothing changes).
    pub fn edit_geometry<R>(
        &mut self,
        id: DrawableId,
        edit: impl FnOnce(&mut Geometry) -> R,
    ) -> Result<R, GraphError> {
        let entry = self
            .drawables
            .get_mut(id)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))?;
        let Some(geometry) = entry.drawable.as_geometry_mut() else {
            return Err(GraphError::NotAGeometry(self.drawable_label(id)));
        };
        let out = edit(geometry);
        self.drawable_changed(id, BvhAfterEdit::Stale);
        Ok(out)
    }

    /// Moves a built-in [`Geometry`]'s vertices in place with `edit` (their number and the
    /// primitive sets cannot change this way): as [`edit_geometry`](Self::edit_geometry),
    /// but the geometry's BVH, when built, is refitted to the new corners at once
    /// ([`PrimitiveBvh::refit`]), so that the next query finds it ready. For a mesh
    /// animated every frame.
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use scene_intersect::prelude::*;
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    ///
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("root");
    /// let sheet: Vec<Vec3> = (0..40).map(|i| Vec3::new((i / 2) as f32, 0.0, (i % 2) as f32)).collect();
    /// let sheet = Geometry::new(sheet)
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::TriangleStrip, 0, 40))?;
    /// let sheet = scene.add_drawable("sheet", sheet);
    /// let geode = scene.add_geode("sheet");
    /// scene.add_drawable_to_geode(geode, sheet)?;
    /// scene.add_child(root, geode)?;
    /// // Straight down through one triangle (off the diagonal it shares with the next).
    /// let mut down = LineSegmentIntersector::new(DVec3::new(7.5, 9.0, 0.3), DVec3::new(7.5, -9.0, 0.3))?;
    /// let mut visitor = IntersectionVisitor::new();
    /// for frame in 1..=3 {
    ///     // The sheet ripples: every vertex rises and falls with its x.
    ///     scene.edit_vertices(sheet, |v| {
    ///         v.iter_mut().for_each(|v| v.y = (v.x * 0.3 + frame as f32).sin())
    ///     })?;
    ///     visitor.apply(&scene, root, &mut down)?;
    ///     assert_eq!(down.intersections().len(), 1);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`edit_geometry`](Self::edit_geometry).
    pub fn edit_vertices<R>(
        &mut self,
        id: DrawableId,
        edit: impl FnOnce(&mut [Vec3]) -> R,
    ) -> Result<R, GraphError> {
        let DrawableEntry {
            drawable, accel, ..
        } = self
            .drawables
            .get_mut(id)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))?;
        let Some(geometry) = drawable.as_geometry_mut() else {
            return Err(GraphError::NotAGeometry(self.drawable_label(id)));
        };
        let out = edit(geometry.vertices_mut());
        let refitted = match accel.get_mut() {
            Some(Some(bvh)) => bvh.refit(geometry),
            _ => false,
        };
        let bvh = if refitted {
            BvhAfterEdit::Refitted
        } else {
            BvhAfterEdit::Unusable
        };
        self.drawable_changed(id, bvh);
        Ok(out)
    }

    /// Swaps a drawable for another under the same id (a renderer replacing a mesh); the
    /// scene indices holding it are refitted, as by [`edit_drawable`](Self::edit_drawable).
    pub fn replace_drawable(
        &mut self,
        id: DrawableId,
        drawable: impl Drawable,
    ) -> Result<Box<dyn Drawable>, GraphError> {
        let entry = self
            .drawables
            .get_mut(id)
            .ok_or_else(|| GraphError::UnknownDrawable(format!("{:?}", id.data())))?;
        let old = std::mem::replace(&mut entry.drawable, Box::new(drawable));
        self.drawable_changed(id, BvhAfterEdit::Replaced);
        Ok(old)
    }

    /// After drawable `id` changed (edited or replaced): drops its bound and the bounds
    /// of every node above it, does with its BVH what `bvh` says, and refits every
    /// scene index above it.
    fn drawable_changed(&mut self, id: DrawableId, bvh: BvhAfterEdit) {
        let Some(entry) = self.drawables.get_mut(id) else {
            return;
        };
        entry.bound.take();
        match bvh {
            BvhAfterEdit::Refitted => {}
            BvhAfterEdit::Stale => self.pending.park_bvh(id, &mut entry.accel),
            BvhAfterEdit::Unusable => {
                entry.accel.take();
            }
            BvhAfterEdit::Replaced => {
                entry.accel.take();
                self.pending.forget_bvh(id);
            }
        }
        let above = self.nodes_above(id);
        self.refit_indices(above, |index, scene, _| index.refit_drawable(scene, id));
    }

    /// Every node above drawable `id` (its geodes and their ancestors), each once.
    fn nodes_above(&self, id: DrawableId) -> HashSet<NodeId> {
        let mut above = HashSet::new();
        for &g in self.drawables.get(id).map_or(&[][..], |e| &e.parents) {
            above.extend(self.self_and_ancestors(g));
        }
        above
    }

    /// Before drawable `id` is handed out mutably: drops its bound and the bounds of
    /// every node above it, and parks its BVH and every scene index above it for a
    /// refit at their next use ([`PendingRefits`]).
    fn drawable_handed_out(&mut self, id: DrawableId) {
        let Some(entry) = self.drawables.get_mut(id) else {
            return;
        };
        entry.bound.take();
        self.pending.park_bvh(id, &mut entry.accel);
        for n in self.nodes_above(id) {
            if let Some(node) = self.nodes.get_mut(n) {
                node.bound.take();
                self.pending.park(n, node.index.take(), id);
            }
        }
    }

    /// After a structural edit at `id` that changed the instances on paths through
    /// `changed` (`id` itself, or the child linked or unlinked there): drops the cached
    /// bound of `id` and of every ancestor, and parks their instance indices to be
    /// brought up to date at their next use ([`SceneIndex::restructure`]) rather than
    /// built afresh. The walk goes all the way to the roots: an index can outlive the
    /// bounds below it (a refit keeps it while bounds are dropped), so no "uncached
    /// here, uncached above" shortcut holds.
    fn invalidate_node(&mut self, id: NodeId, changed: NodeId) {
        for n in self.self_and_ancestors(id) {
            let mut index = None;
            if let Some(node) = self.nodes.get_mut(n) {
                index = node.index.take();
                node.bound.take();
            }
            self.pending.park_restructured(n, index, changed);
        }
    }

    /// `id` and every ancestor, each once.
    fn self_and_ancestors(&self, id: NodeId) -> Vec<NodeId> {
        let mut seen = HashSet::new();
        let mut stack: SmallVec<[NodeId; 16]> = SmallVec::new();
        stack.push(id);
        let mut out = Vec::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if let Some(node) = self.nodes.get(n) {
                out.push(n);
                stack.extend(node.parents.iter().copied());
            }
        }
        out
    }

    /// After a transform's matrix changed: drops the bounds of it and its ancestors, and
    /// refits (rather than rebuilds) every instance index above it, so moving one
    /// vehicle per frame only recomputes the instances under that vehicle.
    fn transform_moved(&mut self, id: NodeId) {
        let chain = self.self_and_ancestors(id);
        self.refit_indices(chain, |index, scene, n| index.refit_under(scene, n, id));
    }

    /// Refits every parked scene index for the drawables handed out since it was
    /// parked, and puts it back on its node (before an edit refits the indices).
    fn settle_pending(&mut self) {
        for parked in self.pending.take_all() {
            let node = parked.node();
            let index = parked.refitted(self);
            if let Some(n) = self.nodes.get(node) {
                let _ = n.index.set(index);
            }
        }
    }

    /// Drops the cached bounds of `nodes` and refits the scene index each holds, by
    /// `refit(index, self, node)`, instead of dropping it.
    fn refit_indices(
        &mut self,
        nodes: impl IntoIterator<Item = NodeId>,
        refit: impl Fn(&mut SceneIndex, &SceneGraph, NodeId),
    ) {
        self.settle_pending();
        let mut taken = Vec::new();
        for n in nodes {
            if let Some(node) = self.nodes.get_mut(n) {
                node.bound.take();
                if let Some(index) = node.index.take() {
                    taken.push((n, index));
                }
            }
        }
        for (n, mut index) in taken {
            refit(&mut index, self, n);
            if let Some(node) = self.nodes.get(n) {
                let _ = node.index.set(index);
            }
        }
    }
}

/// What [`SceneGraph::drawable_changed`] does with the edited drawable's BVH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BvhAfterEdit {
    /// Refitted by the edit: kept.
    Refitted,
    /// Left as it was before the edit: parked for a refit at its next use (a rebuild if
    /// the edit changed the primitive sets).
    Stale,
    /// Refused by the edit's own refit: dropped.
    Unusable,
    /// The drawable was replaced: dropped, and any BVH parked for it too.
    Replaced,
}

/// How far a transform's last row may be from `(0, 0, 0, 1)` and still count as affine:
/// `parent.inverse() * world` (how a program moves a node to a world pose) leaves its
/// `w` a rounding away from 1 about one time in seven.
const AFFINE_ROW_TOLERANCE: f64 = 1e-9;

/// A transform node's `matrix`, checked finite and affine (its last row within
/// [`AFFINE_ROW_TOLERANCE`] of `(0, 0, 0, 1)`) and returned with that row exactly
/// `(0, 0, 0, 1)`, so that every frame of the graph is affine exactly (products of such
/// matrices are). `name` names the node in the error.
fn affine_node_matrix(matrix: DMat4, name: impl FnOnce() -> String) -> Result<DMat4, GraphError> {
    if !matrix.is_finite() {
        return Err(GraphError::NonFiniteMatrix { node: name() });
    }
    let row = matrix.row(3);
    if (row - DVec4::W).abs().max_element() > AFFINE_ROW_TOLERANCE {
        return Err(GraphError::NonAffineMatrix {
            node: name(),
            row: row.to_array(),
        });
    }
    let mut affine = matrix;
    affine.x_axis.w = 0.0;
    affine.y_axis.w = 0.0;
    affine.z_axis.w = 0.0;
    affine.w_axis.w = 1.0;
    Ok(affine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::{PrimitiveMode, PrimitiveSet};
    use glam::Vec3;

    fn unit_triangle() -> Geometry {
        Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap()
    }

    /// 64 small triangles in a row, 2 units apart.
    fn row_of_triangles() -> Geometry {
        let vertices: Vec<Vec3> = (0..64)
            .flat_map(|k| {
                let x = 2.0 * k as f32;
                [
                    Vec3::new(x, 0.0, 0.0),
                    Vec3::new(x + 1.0, 0.0, 0.0),
                    Vec3::new(x, 1.0, 0.0),
                ]
            })
            .collect();
        Geometry::new(vertices)
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 192))
            .unwrap()
    }

    fn largest_leaf(bvh: &PrimitiveBvh) -> usize {
        let mut largest = 0;
        bvh.tree()
            .for_each_leaf(|_| true, |items| largest = largest.max(items.len()));
        largest
    }

    #[test]
    fn a_drawable_is_instanced_when_several_paths_reach_it() {
        let mut g = SceneGraph::new();
        let root = g.add_group("root");
        let geode = g.add_geode("geode");
        g.add_child(root, geode).unwrap();
        let d = g.add_drawable("mesh", row_of_triangles());
        g.add_drawable_to_geode(geode, d).unwrap();
        assert!(!g.is_instanced(d), "one path");
        let unique_leaf = largest_leaf(g.primitive_bvh(d).unwrap());

        // The same mesh under two transforms, one level up.
        let mut h = SceneGraph::new();
        let root = h.add_group("root");
        let geode = h.add_geode("geode");
        for name in ["a", "b"] {
            let t = (h.add_transform(name, DMat4::from_translation(DVec3::X * 500.0))).unwrap();
            h.add_child(root, t).unwrap();
            h.add_child(t, geode).unwrap();
        }
        let shared = h.add_drawable("mesh", row_of_triangles());
        h.add_drawable_to_geode(geode, shared).unwrap();
        assert!(h.is_instanced(shared), "two transforms above its geode");
        let instanced_leaf = largest_leaf(h.primitive_bvh(shared).unwrap());
        // Spread-out triangles: the SAH splits as far as it may.
        assert!(unique_leaf >= 4, "coarse leaves: {unique_leaf}");
        assert!(instanced_leaf <= 2, "fine leaves: {instanced_leaf}");

        // Two geodes holding the drawable.
        let other = g.add_geode("other");
        g.add_child(root, other).unwrap();
        g.add_drawable_to_geode(other, d).unwrap();
        assert!(g.is_instanced(d), "two geodes");
        assert!(!g.is_instanced(DrawableId::default()), "unknown id");
    }

    #[test]
    fn cycles_and_duplicates_are_errors() {
        let mut g = SceneGraph::new();
        let a = g.add_group("a");
        let b = g.add_group("b");
        let c = g.add_group("c");
        g.add_child(a, b).unwrap();
        g.add_child(b, c).unwrap();
        assert!(matches!(g.add_child(c, a), Err(GraphError::Cycle { .. })));
        assert!(matches!(g.add_child(a, a), Err(GraphError::Cycle { .. })));
        assert!(matches!(
            g.add_child(a, b),
            Err(GraphError::DuplicateChild { .. })
        ));
        // Sharing c under a too is fine (a DAG).
        g.add_child(a, c).unwrap();
        assert_eq!(g.node_paths_to(c).len(), 2);
        assert_eq!(g.node(c).unwrap().parents().len(), 2);
    }

    #[test]
    fn geode_takes_drawables_not_nodes() {
        let mut g = SceneGraph::new();
        let geode = g.add_geode("geode");
        let other = g.add_group("x");
        assert!(matches!(
            g.add_child(geode, other),
            Err(GraphError::GeodeChild(_))
        ));
        let d = g.add_drawable("d", unit_triangle());
        g.add_drawable_to_geode(geode, d).unwrap();
        assert!(g.add_drawable_to_geode(geode, d).is_err());
        assert!(g.add_drawable_to_geode(other, d).is_err());
    }

    #[test]
    fn bounds_follow_edits() {
        let mut g = SceneGraph::new();
        let root = g.add_group("root");
        let t = g
            .add_transform("t", DMat4::from_translation(DVec3::new(100.0, 0.0, 0.0)))
            .unwrap();
        let geode = g.add_geode("geode");
        let d = g.add_drawable("d", unit_triangle());
        g.add_drawable_to_geode(geode, d).unwrap();
        g.add_child(root, t).unwrap();
        g.add_child(t, geode).unwrap();
        // Triangle box [0,1]x[0,1]x[0,0]: centre (0.5, 0.5, 0), radius sqrt(2)/2.
        let b = g.node_bound(root).unwrap();
        assert!((b.center - DVec3::new(100.5, 0.5, 0.0)).length() < 1e-12);
        assert!((b.radius - 2f64.sqrt() / 2.0).abs() < 1e-12);

        g.set_matrix(t, DMat4::from_translation(DVec3::new(0.0, -50.0, 0.0)))
            .unwrap();
        let b = g.node_bound(root).unwrap();
        assert!((b.center - DVec3::new(0.5, -49.5, 0.0)).length() < 1e-12);

        // Editing the vertices moves the root bound too.
        g.geometry_mut(d).unwrap().vertices_mut()[1] = Vec3::new(3.0, 0.0, 0.0);
        let b = g.node_bound(root).unwrap();
        // Box [0,3]x[0,1]: centre (1.5, 0.5), shifted by -50 in y.
        assert!((b.center - DVec3::new(1.5, -49.5, 0.0)).length() < 1e-12);

        // Unlinking leaves the root empty.
        g.remove_child(root, t).unwrap();
        assert!(g.node_bound(root).unwrap().is_empty());
    }

    #[test]
    fn switch_bound_counts_enabled_children_only() {
        let mut g = SceneGraph::new();
        let s = g.add_switch("s");
        let geode = g.add_geode("geode");
        let d = g.add_drawable("d", unit_triangle());
        g.add_drawable_to_geode(geode, d).unwrap();
        g.add_child(s, geode).unwrap();
        assert!(!g.node_bound(s).unwrap().is_empty());
        g.set_switch_child(s, 0, false).unwrap();
        assert!(g.node_bound(s).unwrap().is_empty());
    }

    #[test]
    fn the_bound_of_a_deep_chain_needs_no_deep_call_stack() {
        // 100 000 groups in a chain over a geode, each but the top moved 1 along x: the
        // root's bound is the triangle's, moved by 99 999, computed on a thread with a
        // 256 KiB stack (a recursion per level needs over 100 MiB in debug builds).
        let mut g = SceneGraph::new();
        let d = g.add_drawable("tri", unit_triangle());
        let mut top = g.add_geode("geode");
        g.add_drawable_to_geode(top, d).unwrap();
        for _ in 1..100_000 {
            let t = g
                .add_transform("t", DMat4::from_translation(DVec3::X))
                .unwrap();
            g.add_child(t, top).unwrap();
            top = t;
        }
        let root = g.add_group("root");
        g.add_child(root, top).unwrap();
        let bound = std::thread::Builder::new()
            .stack_size(1 << 18)
            .spawn(move || g.node_bound(root).unwrap())
            .unwrap()
            .join()
            .unwrap();
        // The triangle's box, (0, 0, 0) to (1, 1, 0): centre (0.5, 0.5, 0), radius √2/2.
        let center = DVec3::new(0.5 + 99_999.0, 0.5, 0.0);
        assert!((bound.center - center).length() < 1e-6, "{bound:?}");
        assert!((bound.radius - 0.5f64.sqrt()).abs() < 1e-9, "{bound:?}");
    }

    #[test]
    fn local_to_world_multiplies_and_restarts_at_absolute() {
        let mut g = SceneGraph::new();
        let a = g
            .add_transform("a", DMat4::from_translation(DVec3::X))
            .unwrap();
        let b = g
            .add_transform("b", DMat4::from_scale(DVec3::splat(2.0)))
            .unwrap();
        let c = g.add_geode("c");
        g.add_child(a, b).unwrap();
        g.add_child(b, c).unwrap();
        let m = g.local_to_world(&[a, b, c]).unwrap();
        // Point (1,0,0) is scaled to (2,0,0) then translated to (3,0,0).
        assert_eq!(m.transform_point3(DVec3::X), DVec3::new(3.0, 0.0, 0.0));
        g.set_reference_frame(b, ReferenceFrame::Absolute).unwrap();
        let m = g.local_to_world(&[a, b, c]).unwrap();
        assert_eq!(m.transform_point3(DVec3::X), DVec3::new(2.0, 0.0, 0.0));
        assert!(g.local_to_world(&[a, c]).is_err());
    }

    #[test]
    fn non_finite_matrix_refused() {
        let mut g = SceneGraph::new();
        let mut m = DMat4::IDENTITY;
        m.w_axis.x = f64::NAN;
        assert!(g.add_transform("t", m).is_err());
        let t = g.add_transform("t", DMat4::IDENTITY).unwrap();
        assert!(g.set_matrix(t, m).is_err());
        assert_eq!(
            g.node(t).unwrap().transform().unwrap().matrix,
            DMat4::IDENTITY
        );
    }

    #[test]
    fn remove_node_unlinks_everything() {
        let mut g = SceneGraph::new();
        let a = g.add_group("a");
        let b = g.add_group("b");
        let c = g.add_group("c");
        g.add_child(a, b).unwrap();
        g.add_child(b, c).unwrap();
        g.remove_node(b).unwrap();
        assert!(g.node(a).unwrap().children().is_empty());
        assert!(g.node(c).unwrap().parents().is_empty());
        assert_eq!(g.roots().count(), 2);
    }

    #[test]
    fn scene_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SceneGraph>();
    }
}
