//! [`SceneIndex`]: every drawable instance under a root, indexed so that a query does
//! not walk the graph.
//!
//! Each instance is one (node path, drawable) occurrence with the local-to-world matrix
//! and its inverse computed exactly as the plain traversal computes them (same products
//! in the same order), and its drawable's box in world space. What the visitor decides
//! per query — node masks, Switch children, LOD children — is kept as *gates* checked at
//! query time against the graph's current state, so toggling a mask or a switch needs
//! no rebuild. Structural edits and drawable edits drop the index through the same
//! invalidation walk as the bounds; a matrix edit refits it ([`SceneIndex::refit_under`]).
//!
//! The index holds two trees:
//!
//! * the [`WorldBvh`]: every triangle of every instance that can be *placed* in world
//!   space (a triangle-list [`Geometry`] under an affine,
//!   well-conditioned transform), and every other instance as a whole item. The
//!   built-in intersectors walk it; the triangles' ids say which instance and which
//!   primitive they are ([`SceneIndex::locate`]);
//! * a [`WideBvh`] over the instances' world boxes, for intersectors that visit whole
//!   drawables (custom ones).
//!
//! An instance moved by a matrix edit after the build is *detached* from the world
//! tree: its triangles there stay where they were but are skipped, and it is visited
//! whole, from a small tree of the detached instances, until the next rebuild. So
//! moving one vehicle per frame recomputes that vehicle's instances and nothing else,
//! and the world tree never stretches over a vehicle's trail.

use glam::{DMat4, DVec3};
use smallvec::SmallVec;

use super::binned_sah::ItemBox;
use super::bvh::{Aabb, Bvh};
use super::triangle_list::TriangleList;
use super::wide_bvh::WideBvh;
use super::world_bvh::{WorldBvh, WorldItem};
use super::world_frame::WorldFrame;
use crate::drawable::Geometry;
use crate::graph::{DrawableId, NodeId, NodeKind, SceneGraph};

/// A per-query condition on an instance's path.
#[derive(Clone, Debug, PartialEq)]
pub enum Gate {
    /// The instance is reached only if child `position` of this switch is enabled.
    Switch {
        /// The switch.
        node: NodeId,
        /// The child's position under it.
        position: usize,
    },
    /// The instance is reached only if child `position` of this LOD is selected.
    Lod {
        /// The LOD node.
        node: NodeId,
        /// The child's position under it.
        position: usize,
        /// The LOD node's local-to-world matrix (for eye distances).
        local_to_world: DMat4,
    },
}

/// How an instance is held by the [`WorldBvh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Its triangles are in the world tree, with ids `first_id + primitive index`.
    Triangles {
        /// The id of its primitive 0.
        first_id: u32,
    },
    /// It is a whole item of the world tree, visited through its drawable.
    Whole,
    /// It is not in the world tree (under a singular transform when the index was
    /// built: the plain traversal never reaches it).
    Absent,
}

/// One drawable occurrence.
///
/// Laid out in the order a visit reads it (`repr(C)`): what every visit of a whole item
/// reads first, together (the flags, the drawable, the gates, then the matrices that move
/// a query to its frame: segments and balls take the inverse, polytopes the
/// local-to-world matrix), then what only hits and edits read (the path, the box).
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Instance {
    /// Whether a matrix edit moved it since the build: its place in the world tree is
    /// stale, and it is visited from [`SceneIndex::detached`] instead.
    pub detached: bool,
    /// False when a transform on the path is singular (the plain traversal skips such
    /// subtrees); kept so that a later matrix edit can bring it back by a refit.
    pub active: bool,
    /// Whether every node on the path had all mask bits set when the index was built
    /// (then, while no mask has been set since, any non-zero traversal mask reaches it
    /// without looking at the nodes: see [`SceneIndex::masks_unchanged`]).
    pub default_masks: bool,
    /// How the world tree holds it.
    pub placement: Placement,
    /// The drawable.
    pub drawable: DrawableId,
    /// Switch / LOD conditions on the path (a boxed slice: most paths have none, and an
    /// inline one would cost every instance the size of a LOD gate's matrix).
    pub gates: Box<[Gate]>,
    /// The inverse of [`local_to_world`](Self::local_to_world).
    pub world_to_local: DMat4,
    /// Local-to-world matrix of the geode.
    pub local_to_world: DMat4,
    /// Root-first node path to the geode.
    pub path: Box<[NodeId]>,
    /// The drawable's box in world space (outward-rounded `f32`).
    pub world_box: Aabb,
}

impl Instance {
    /// Whether walks of the world tree must visit it there: placed and not detached.
    #[inline]
    pub fn in_world_tree(&self) -> bool {
        !self.detached && self.placement != Placement::Absent
    }
}

/// Transforms whose linear part is worse conditioned than this (the product of the
/// Frobenius norms of the matrix and its inverse) keep their instances whole: the world
/// tree's `f32` filters allow for the exact test's rounding in the instance's frame
/// only up to it (see [`SegmentFilter`](super::SegmentFilter)).
///
/// That rounding grows with the square of the condition number: a frame that squeezes
/// one direction `κ` times more than the others scales the products an edge function
/// rounds up to `κ²` times more than the function itself. At `10^6`, the limit until
/// the test `a_segment_grazing_a_triangle_under_a_squeezing_frame_answers_as_the_plain_traversal`
/// (tests/precision.rs) found it wrong, the exact test hit triangles that segments
/// missed by a tenth of their size, which the filter had rejected. At `10^4` the
/// rounding stays a hundred times inside the filter's allowance, and every frame short
/// of squeezing a direction ten thousand times is still placed.
const MAX_PLACED_CONDITION: f64 = 1e4;

/// Triangle ids per entry of the id-to-instance lookup table.
const ID_BLOCK_BITS: u32 = 8;

/// Every drawable instance under a root: the [`WorldBvh`] over their triangles, a tree
/// over the instances themselves, and the instances detached by moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneIndex {
    bvh: WideBvh,
    instances: Vec<Instance>,
    world: WorldBvh,
    /// Per instance, the first triangle id it would own (placed or not: the ones not
    /// placed own none), then the total: instance `k` owns `id_starts[k]..id_starts[k + 1]`.
    id_starts: Vec<u32>,
    /// Per block of `2^ID_BLOCK_BITS` ids: the instance owning the block's first id.
    id_blocks: Vec<u32>,
    /// The instances detached by moves, in the leaf order of `detached_bvh`.
    detached: Vec<u32>,
    detached_bvh: WideBvh,
    refits: u64,
    /// The scene's count of mask edits when the instances were collected.
    mask_edits: u64,
}

impl SceneIndex {
    /// Collects the instances under `root` (every path, every Switch / LOD child; those
    /// below a singular transform are kept inactive, as the plain traversal skips them),
    /// builds the tree over them, and places their triangles in the world tree.
    /// Computes every node bound of the subtree on the way, so that any later edit below
    /// `root` reaches `root` in the invalidation walk.
    pub fn build(scene: &SceneGraph, root: NodeId) -> SceneIndex {
        let instances = collect(scene, root);
        let boxes: Vec<Aabb> = instances.iter().map(|i| i.world_box).collect();
        let (bvh, order) = Bvh::build(&boxes);
        let mut slots: Vec<Option<Instance>> = instances.into_iter().map(Some).collect();
        let mut instances: Vec<Instance> = order
            .iter()
            .filter_map(|&i| slots.get_mut(i as usize).and_then(Option::take))
            .collect();
        let (world, id_starts) = place(scene, &mut instances);
        let id_blocks = id_blocks(&id_starts);
        SceneIndex {
            bvh: WideBvh::from_binary(&bvh),
            instances,
            world,
            id_starts,
            id_blocks,
            detached: Vec::new(),
            detached_bvh: WideBvh::default(),
            refits: 0,
            mask_edits: scene.mask_edits(),
        }
    }

    /// True while no node mask of `scene` has been set since this index was built: then
    /// each instance's [`default_masks`](Instance::default_masks) still tells whether
    /// its path has only all-ones masks.
    pub fn masks_unchanged(&self, scene: &SceneGraph) -> bool {
        scene.mask_edits() == self.mask_edits
    }

    /// The world tree over the placed triangles and the whole items.
    pub fn world(&self) -> &WorldBvh {
        &self.world
    }

    /// The instance and primitive index of the world tree's triangle `id`, or `None`
    /// for an id no instance owns.
    #[inline]
    pub fn locate(&self, id: u32) -> Option<(u32, u32)> {
        let block = (id >> ID_BLOCK_BITS) as usize;
        let mut k = *self.id_blocks.get(block)? as usize;
        // Instances owning no triangle share their start with the next one: move on to
        // the last instance starting at or before `id`.
        while self.id_starts.get(k + 1).is_some_and(|&next| next <= id) {
            k += 1;
        }
        let start = *self.id_starts.get(k)?;
        let end = *self.id_starts.get(k + 1)?;
        (start..end).contains(&id).then(|| (k as u32, id - start))
    }

    /// The instances detached from the world tree by moves, in the leaf order of
    /// [`detached_bvh`](Self::detached_bvh).
    pub fn detached(&self) -> &[u32] {
        &self.detached
    }

    /// The tree over the detached instances' world boxes.
    pub fn detached_bvh(&self) -> &WideBvh {
        &self.detached_bvh
    }

    /// Bytes used by the index: instances (paths, matrices, gates), the trees and the id
    /// tables.
    pub fn memory_bytes(&self) -> usize {
        let instances: usize = self
            .instances
            .iter()
            .map(|i| {
                std::mem::size_of::<Instance>()
                    + i.path.len() * std::mem::size_of::<NodeId>()
                    + i.gates.len() * std::mem::size_of::<Gate>()
            })
            .sum();
        instances
            + self.bvh.memory_bytes()
            + self.world.memory_bytes()
            + (self.id_starts.len() + self.id_blocks.len() + self.detached.len())
                * std::mem::size_of::<u32>()
            + self.detached_bvh.memory_bytes()
    }

    /// The instances, in the leaf order of [`bvh`](Self::bvh).
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// The drawables the world tree keeps whole (their instances are visited through
    /// the drawable's own [`PrimitiveBvh`](super::PrimitiveBvh)), each once, in id
    /// order.
    pub fn whole_drawables(&self) -> Vec<DrawableId> {
        let mut whole: Vec<DrawableId> = (self.instances.iter())
            .filter(|i| i.placement == Placement::Whole)
            .map(|i| i.drawable)
            .collect();
        whole.sort_unstable();
        whole.dedup();
        whole
    }

    /// The tree over the instances' world boxes.
    pub fn bvh(&self) -> &WideBvh {
        &self.bvh
    }

    /// How many matrix edits this index absorbed by refitting since it was built.
    pub fn refit_count(&self) -> u64 {
        self.refits
    }

    /// After the matrix of `moved` changed: recomputes the matrices and world boxes of
    /// the instances whose path goes through it (this index's root being `root`), and
    /// the matrices their LOD gates below it keep, with the plain traversal's
    /// arithmetic; detaches those still in the world tree, and refits the instance tree
    /// and the tree of detached instances. Nothing else is rebuilt.
    pub fn refit_under(&mut self, scene: &SceneGraph, root: NodeId, moved: NodeId) {
        let mut changed = false;
        for (k, instance) in self.instances.iter_mut().enumerate() {
            if instance.path.first() != Some(&root) || !instance.path.contains(&moved) {
                continue;
            }
            changed = true;
            let frame = path_frame(scene, &instance.path);
            instance.active = frame.is_some();
            if let Some((l2w, w2l)) = frame {
                instance.local_to_world = l2w;
                instance.world_to_local = w2l;
            }
            // A LOD below the moved node moved with it: its eye distances change.
            for gate in instance.gates.iter_mut() {
                if let Gate::Lod {
                    node,
                    local_to_world,
                    ..
                } = gate
                {
                    let Some(at) = instance.path.iter().position(|n| n == node) else {
                        continue;
                    };
                    if instance.path[..at].contains(&moved) {
                        if let Some((l2w, _)) = path_frame(scene, &instance.path[..=at]) {
                            *local_to_world = l2w;
                        }
                    }
                }
            }
            instance.world_box = match (frame, scene.drawable_bound(instance.drawable)) {
                (Some((l2w, _)), Some(b)) if !b.is_empty() => world_box(&b, &l2w),
                _ => Aabb::EMPTY,
            };
            if !instance.detached {
                instance.detached = true;
                self.detached.push(k as u32);
            }
        }
        if changed {
            self.refits += 1;
            self.bvh.refit(|range| {
                let mut b = Aabb::EMPTY;
                for i in &self.instances[range] {
                    b.grow(&i.world_box);
                }
                b
            });
            // A handful of instances: rebuilt, in its own order.
            let boxes: Vec<Aabb> = (self.detached.iter())
                .map(|&k| self.instances[k as usize].world_box)
                .collect();
            let (tree, order) = Bvh::build(&boxes);
            self.detached = order.iter().map(|&i| self.detached[i as usize]).collect();
            self.detached_bvh = WideBvh::from_binary(&tree);
        }
    }
}

/// Places the instances' triangles in a world tree (see the module docs), setting each
/// instance's [`Placement`]; returns the tree and the id starts.
fn place(scene: &SceneGraph, instances: &mut [Instance]) -> (WorldBvh, Vec<u32>) {
    // How often each drawable is placed: a shared mesh stays whole (see `placeable`).
    let mut uses: std::collections::HashMap<DrawableId, u32> = std::collections::HashMap::new();
    for instance in instances.iter() {
        *uses.entry(instance.drawable).or_default() += 1;
    }
    // Which instances are placed, and room for what they hold.
    let mut lists: Vec<Option<(&Geometry, TriangleList<'_>)>> = Vec::with_capacity(instances.len());
    let (mut triangles, mut vertices, mut whole) = (0u64, 0u64, 0usize);
    for instance in instances.iter_mut() {
        instance.placement = Placement::Absent;
        if !instance.active || instance.world_box.min.x > instance.world_box.max.x {
            lists.push(None);
            continue;
        }
        let list = scene
            .drawable(instance.drawable)
            .and_then(|d| d.as_geometry())
            .filter(|g| uses[&instance.drawable] == 1 && placeable(g, &instance.local_to_world))
            .and_then(|g| Some((g, TriangleList::of(g)?)))
            .filter(|(g, _)| {
                // Ids and vertex positions are `u32`.
                let (t, v) = (g.primitive_count() as u64, g.vertices().len() as u64);
                triangles + t < u64::from(u32::MAX) && vertices + v < u64::from(u32::MAX)
            });
        match list {
            Some((g, _)) => {
                triangles += g.primitive_count() as u64;
                vertices += g.vertices().len() as u64;
                instance.placement = Placement::Triangles { first_id: 0 };
            }
            None => {
                whole += 1;
                instance.placement = Placement::Whole;
            }
        }
        lists.push(list);
    }
    // Far from the world origin (a georeferenced scene), the tree is measured from the
    // centre of the scene's box.
    let mut scene_box = Aabb::EMPTY;
    for (instance, list) in instances.iter().zip(&lists) {
        if list.is_some() || instance.placement == Placement::Whole {
            scene_box.grow(&instance.world_box);
        }
    }
    let frame = WorldFrame::for_bounds(&scene_box);
    let origin = frame.origin();
    let items_count = triangles as usize + whole;
    let mut boxes = Vec::with_capacity(items_count);
    let mut items = Vec::with_capacity(items_count);
    // Per item, its corners as positions in `world`.
    let mut corners: Vec<[u32; 3]> = Vec::with_capacity(items_count);
    // The world vertices of every placed instance, each vertex moved once.
    let mut world: Vec<DVec3> = Vec::with_capacity(vertices as usize);
    let mut id_starts = Vec::with_capacity(instances.len() + 1);
    let mut next_id: u32 = 0;
    for (k, (instance, list)) in instances.iter_mut().zip(&lists).enumerate() {
        id_starts.push(next_id);
        match (instance.placement, list) {
            (Placement::Triangles { .. }, Some((g, list))) => {
                let base = world.len() as u32;
                let m = instance.local_to_world;
                let local = g.vertices();
                world.extend(local.iter().map(|v| m.transform_point3(v.as_dvec3())));
                let placed = &world[base as usize..];
                // The triangles the decomposition emits: those reading finite vertices.
                list.for_each(g.primitive_count() as u32, |p, t| {
                    let usable = |i: u32| local.get(i as usize).is_some_and(|v| v.is_finite());
                    if !(usable(t[0]) && usable(t[1]) && usable(t[2])) {
                        return;
                    }
                    let [a, b, c] = t.map(|i| placed[i as usize]);
                    let bound = padded_outward(a.min(b).min(c), a.max(b).max(c), origin);
                    boxes.push(ItemBox::new(&bound));
                    items.push(WorldItem::Triangle(next_id + p));
                    corners.push(t.map(|i| base + i));
                });
                instance.placement = Placement::Triangles { first_id: next_id };
                next_id += g.primitive_count() as u32;
            }
            (Placement::Whole, _) => {
                boxes.push(ItemBox::new(&if origin == DVec3::ZERO {
                    instance.world_box
                } else {
                    let (min, max) = instance.world_box.as_dvec3();
                    padded_outward(min, max, origin)
                }));
                items.push(WorldItem::Whole(k as u32));
                corners.push([0; 3]);
            }
            _ => {}
        }
    }
    id_starts.push(next_id);
    let corner = |k: usize| {
        corners[k].map(|i| frame.point(world.get(i as usize).copied().unwrap_or(origin)))
    };
    match WorldBvh::build_from_item_boxes(frame, boxes, &items, corner) {
        Some(world) => (world, id_starts),
        None => {
            // More than a world tree holds: every instance whole (the plain per-drawable
            // path), which no scene that fits in memory reaches.
            let items: Vec<WorldItem> = (0..instances.len() as u32).map(WorldItem::Whole).collect();
            let boxes: Vec<Aabb> = instances.iter().map(|i| i.world_box).collect();
            for i in instances.iter_mut() {
                i.placement = Placement::Whole;
            }
            let world = WorldBvh::build(&boxes, &items, |_| [DVec3::ZERO; 3]).unwrap_or_default();
            (world, vec![0; instances.len() + 1])
        }
    }
}

/// Whether a geometry's triangles may be placed in world space under `local_to_world`
/// (affine, as every frame of the graph is): a triangle list, the transform's linear
/// part well-conditioned, and the world coordinates within `f32` range.
fn placeable(geometry: &Geometry, local_to_world: &DMat4) -> bool {
    let m = local_to_world;
    debug_assert_eq!(m.row(3), glam::DVec4::W, "scene transforms are affine");
    if TriangleList::of(geometry).is_none() {
        return false;
    }
    let linear = glam::DMat3::from_mat4(*m);
    let inverse = linear.inverse();
    let norm = |a: &glam::DMat3| {
        (a.x_axis.length_squared() + a.y_axis.length_squared() + a.z_axis.length_squared()).sqrt()
    };
    let condition = norm(&linear) * norm(&inverse);
    condition.is_finite() && condition <= MAX_PLACED_CONDITION
}

/// The id-to-instance lookup table of [`SceneIndex::locate`].
fn id_blocks(id_starts: &[u32]) -> Vec<u32> {
    let total = id_starts.last().copied().unwrap_or(0);
    let blocks = (total >> ID_BLOCK_BITS) as usize + 1;
    let mut out = Vec::with_capacity(blocks);
    let mut k = 0usize;
    for block in 0..blocks {
        let first = (block as u32) << ID_BLOCK_BITS;
        // The last instance starting at or before `first`.
        while k + 2 < id_starts.len() && id_starts[k + 1] <= first {
            k += 1;
        }
        out.push(k as u32);
    }
    out
}

/// The `f32` box holding a triangle (or a drawable's box) whose world corners span
/// `[lo, hi]`, measured from `origin` (see [`WorldFrame`]), padded by a billionth of its
/// size and a trillionth of its distance from the world origin for rounding elsewhere
/// (that distance also bounds, a thousand times over, the rounding of the subtraction
/// of `origin`).
///
/// Without branches, as the build pays it per triangle: the pad is widened by a
/// relative `2^-23` of each coordinate, more than the half unit in the last place
/// rounding to the nearest `f32` can take back, so the box still holds `[lo, hi]`
/// padded. Non-finite results (coordinates beyond `f32`) take the careful route.
fn padded_outward(lo: DVec3, hi: DVec3, origin: DVec3) -> Aabb {
    let magnitude = lo.abs().max(hi.abs());
    let pad = (hi - lo).element_sum() * 1e-9 + magnitude.max_element() * 1e-12 + 1e-12;
    let (lo, hi) = (lo - origin, hi - origin);
    let widen = DVec3::splat(pad) + lo.abs().max(hi.abs()) * (1.0 / 8_388_608.0);
    let (min, max) = ((lo - widen).as_vec3(), (hi + widen).as_vec3());
    if min.is_finite() && max.is_finite() {
        Aabb { min, max }
    } else {
        Aabb::from_f64_outward(lo - DVec3::splat(pad), hi + DVec3::splat(pad))
    }
}

/// The local-to-world matrix at the end of `path` and its inverse, computed exactly as
/// the plain traversal does (products in path order, an inverse at each transform), or
/// `None` when a transform on the way makes it singular.
fn path_frame(scene: &SceneGraph, path: &[NodeId]) -> Option<(DMat4, DMat4)> {
    let (mut l2w, mut w2l) = (DMat4::IDENTITY, DMat4::IDENTITY);
    for &n in path {
        if let NodeKind::Transform(t) = scene.node(n)?.kind() {
            let (child_to_world, world_to_child) = t.frame_below(&l2w);
            l2w = child_to_world;
            w2l = world_to_child?;
        }
    }
    Some((l2w, w2l))
}

/// A drawable box moved to world space, padded for rounding and rounded outward.
fn world_box(b: &crate::bounding::BoundingBox, local_to_world: &DMat4) -> Aabb {
    let w = b.transformed(local_to_world);
    padded_outward(w.min, w.max, DVec3::ZERO)
}

/// One node still to visit: where it hangs and in which frame.
struct Pending {
    id: NodeId,
    local_to_world: DMat4,
    world_to_local: DMat4,
    /// Length of the path above it.
    depth: usize,
    /// Number of gates above it.
    gate_count: usize,
    /// The gate its parent adds, if any.
    gate: Option<Gate>,
    /// Whether a transform above it is singular.
    singular: bool,
}

/// Every instance under `root`, depth first with an explicit stack (hierarchies may be
/// deep; the call stack must not grow with them).
fn collect(scene: &SceneGraph, root: NodeId) -> Vec<Instance> {
    let mut out = Vec::new();
    let mut path: Vec<NodeId> = Vec::new();
    let mut gates: SmallVec<[Gate; 1]> = SmallVec::new();
    let mut stack = vec![Pending {
        id: root,
        local_to_world: DMat4::IDENTITY,
        world_to_local: DMat4::IDENTITY,
        depth: 0,
        gate_count: 0,
        gate: None,
        singular: false,
    }];
    while let Some(p) = stack.pop() {
        path.truncate(p.depth);
        gates.truncate(p.gate_count);
        gates.extend(p.gate);
        let Some(node) = scene.node(p.id) else {
            continue;
        };
        // Cache the bound (see `SceneIndex::build`).
        let _ = scene.node_bound(p.id);
        path.push(p.id);
        let (depth, gate_count) = (path.len(), gates.len());
        let singular = p.singular;
        let child = |id: NodeId, l2w: DMat4, w2l: DMat4, gate: Option<Gate>| Pending {
            id,
            local_to_world: l2w,
            world_to_local: w2l,
            depth,
            gate_count,
            gate,
            singular,
        };
        let children = node.children();
        match node.kind() {
            NodeKind::Group => {
                for &c in children.iter().rev() {
                    stack.push(child(c, p.local_to_world, p.world_to_local, None));
                }
            }
            NodeKind::Switch { .. } => {
                for (position, &c) in children.iter().enumerate().rev() {
                    let gate = Gate::Switch {
                        node: p.id,
                        position,
                    };
                    stack.push(child(c, p.local_to_world, p.world_to_local, Some(gate)));
                }
            }
            NodeKind::Lod(_) => {
                for (position, &c) in children.iter().enumerate().rev() {
                    let gate = Gate::Lod {
                        node: p.id,
                        position,
                        local_to_world: p.local_to_world,
                    };
                    stack.push(child(c, p.local_to_world, p.world_to_local, Some(gate)));
                }
            }
            NodeKind::Transform(t) => {
                // The visitor's own arithmetic, so the matrices are bit for bit the same.
                // Below a singular transform instances are kept, inactive, for refits.
                let (child_to_world, world_to_child) = t.frame_below(&p.local_to_world);
                for &c in children.iter().rev() {
                    let w2l = world_to_child.unwrap_or(DMat4::IDENTITY);
                    let mut next = child(c, child_to_world, w2l, None);
                    next.singular = p.singular || world_to_child.is_none();
                    stack.push(next);
                }
            }
            NodeKind::Geode { drawables } => {
                for &d in drawables {
                    let Some(b) = scene.drawable_bound(d).filter(|b| !b.is_empty()) else {
                        continue;
                    };
                    out.push(Instance {
                        path: path.clone().into_boxed_slice(),
                        drawable: d,
                        local_to_world: p.local_to_world,
                        world_to_local: p.world_to_local,
                        world_box: if p.singular {
                            Aabb::EMPTY
                        } else {
                            world_box(&b, &p.local_to_world)
                        },
                        active: !p.singular,
                        default_masks: path
                            .iter()
                            .all(|&n| scene.node(n).is_some_and(|n| n.node_mask() == u32::MAX)),
                        gates: gates.to_vec().into_boxed_slice(),
                        placement: Placement::Absent,
                        detached: false,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::{PrimitiveMode, PrimitiveSet};
    use glam::{DQuat, DVec3, Vec3};

    fn triangle() -> Geometry {
        Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap()
    }

    /// Frames are placed up to a condition number (Frobenius norms) of `10^4`: turns,
    /// uniform scales and moves of any size, and squeezes of one direction up to some
    /// seven thousand times; worse ones keep their instances whole.
    #[test]
    fn frames_are_placed_up_to_a_condition_number_of_ten_thousand() {
        let turn = DQuat::from_rotation_arc(DVec3::X, DVec3::new(1.0, 2.0, 3.0).normalize());
        let frame = |scale: DVec3| {
            DMat4::from_scale_rotation_translation(scale, turn, DVec3::new(4e6, -7.0, 3e5))
        };
        for (scale, placed) in [
            (DVec3::ONE, true),
            (DVec3::splat(1e-30), true),
            (DVec3::splat(1e30), true),
            // ‖M‖ ‖M⁻¹‖ = √2 · 1000: a decal flattened a thousand times.
            (DVec3::new(1.0, 1e-3, 1.0), true),
            (DVec3::new(1.0, 1.0 / 7000.0, 1.0), true),
            (DVec3::new(1.0, 1e-4, 1.0), false),
            // The frame of the test in tests/precision.rs that found the old limit wrong.
            (DVec3::new(1e-3, 700.0, 700.0), false),
        ] {
            assert_eq!(placeable(&triangle(), &frame(scale)), placed, "{scale}");
        }
    }
}
