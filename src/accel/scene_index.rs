//! [`SceneIndex`]: a BVH over every drawable instance under a root (two-level
//! acceleration, as Embree and OptiX do it), so a query does not walk the graph. Its
//! trees are [`WideBvh`]s: four children per node, tested together.
//!
//! Each instance is one (node path, drawable) occurrence with the local-to-world matrix
//! and its inverse computed exactly as the plain traversal computes them (same products
//! in the same order), and its drawable's box in world space. What the visitor decides
//! per query — node masks, Switch children, LOD children — is kept as *gates* checked at
//! query time against the graph's current state, so toggling a mask or a switch needs
//! no rebuild. Structural edits and drawable edits drop the index through the same
//! invalidation walk as the bounds; a matrix edit refits it ([`SceneIndex::refit_under`]).
//!
//! Each instance is also cut into [`Fragment`]s, subtrees of at most
//! [`FRAGMENT_PRIMITIVES`] primitives of its drawable's BVH with their boxes in world
//! space, in a second tree: walking that one orders the parts of big overlapping
//! drawables together instead of entering each drawable's tree from its root. Drawables
//! of at most [`UNCUT_PRIMITIVES`] primitives stay whole (one fragment).

use glam::{DMat4, DVec3};
use smallvec::SmallVec;

use super::bvh::{Aabb, Bvh};
use super::wide_bvh::WideBvh;
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

/// One drawable occurrence.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// Root-first node path to the geode.
    pub path: Box<[NodeId]>,
    /// The drawable.
    pub drawable: DrawableId,
    /// Local-to-world matrix of the geode.
    pub local_to_world: DMat4,
    /// Its inverse.
    pub world_to_local: DMat4,
    /// The drawable's box in world space (outward-rounded `f32`).
    pub world_box: Aabb,
    /// Switch / LOD conditions on the path (a boxed slice: most paths have none, and an
    /// inline one would cost every instance the size of a LOD gate's matrix).
    pub gates: Box<[Gate]>,
    /// False when a transform on the path is singular (the plain traversal skips such
    /// subtrees); kept so that a later matrix edit can bring it back by a refit.
    pub active: bool,
    /// Whether every node on the path had all mask bits set when the index was built
    /// (then, while no mask has been set since, any non-zero traversal mask reaches it
    /// without looking at the nodes: see [`SceneIndex::masks_unchanged`]).
    pub default_masks: bool,
}

/// A part of one instance: the primitives below one node of its drawable's
/// [`PrimitiveBvh`](super::PrimitiveBvh) (node 0: the whole drawable).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fragment {
    /// Position of the instance in [`SceneIndex::instances`].
    pub instance: u32,
    /// The node of the drawable's primitive BVH (0 for a drawable without one).
    pub bvh_node: u32,
    /// The node's box in world space (outward-rounded `f32`; empty while the instance is
    /// inactive).
    pub world_box: Aabb,
}

/// Big drawables are cut into fragments of at most this many primitives, so that the
/// fragments of overlapping drawables are ordered in one tree. Smaller fragments make
/// the top tree deeper, bigger ones bring back the cost of entering each drawable's tree
/// near its root. With the four-wide index trees (callgrind, 1024 queries on
/// littlest_tokyo, against 12, the best size for the binary trees): nearest segments
/// -4.2 %, all hits -2.1 %, boxes -6.4 %, spheres -5.9 %; truck_town the same. Cutting
/// down to the BVH leaves (4 or 6) gains 2-3 % more but takes data/city.glb to 34.1
/// bytes per instanced triangle, over the 32 allowed (31.9 with 8, 31.5 with 12;
/// littlest_tokyo 23.7 with 8; `tests/memory_budget.rs` checks it). Small drawables
/// are not cut at all ([`UNCUT_PRIMITIVES`]).
pub const FRAGMENT_PRIMITIVES: usize = 8;

/// Drawables of at most this many primitives stay one fragment. Entering such a small
/// tree at its root costs little, while every fragment of every instance costs about
/// 46 bytes: on the generated city, whose buildings share small meshes, cutting them
/// took the index past 32 bytes per instanced triangle (measured with the binary trees
/// and fragments of 12: 33.2; 31.6 with this limit, the smallest that kept it under
/// 32). On littlest_tokyo (callgrind, against cutting everything) nearest segments cost
/// 3.6 % more and boxes 2.3 %, the rest the same; 64 would cost boxes 7.7 %.
pub const UNCUT_PRIMITIVES: usize = 48;

/// Every drawable instance under a root, in a BVH over their world boxes, and the same
/// instances cut into [fragments](Fragment) in a second BVH.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneIndex {
    bvh: WideBvh,
    instances: Vec<Instance>,
    fragment_bvh: WideBvh,
    fragments: Vec<Fragment>,
    refits: u64,
    /// The scene's count of mask edits when the instances were collected.
    mask_edits: u64,
}

impl SceneIndex {
    /// Collects the instances under `root` (every path, every Switch / LOD child; those
    /// below a singular transform are kept inactive, as the plain traversal skips them)
    /// and builds the BVH over them, then cuts them into fragments (building the
    /// drawables' primitive BVHs that are not built yet) and builds the fragment tree.
    /// Computes every node bound of the subtree on the way, so that any later edit below
    /// `root` reaches `root` in the invalidation walk.
    pub fn build(scene: &SceneGraph, root: NodeId) -> SceneIndex {
        let instances = collect(scene, root);
        let boxes: Vec<Aabb> = instances.iter().map(|i| i.world_box).collect();
        let (bvh, order) = Bvh::build(&boxes);
        let mut slots: Vec<Option<Instance>> = instances.into_iter().map(Some).collect();
        let instances: Vec<Instance> = order
            .iter()
            .filter_map(|&i| slots.get_mut(i as usize).and_then(Option::take))
            .collect();
        let mut fragments = Vec::new();
        for (k, instance) in instances.iter().enumerate() {
            let nodes = scene
                .primitive_bvh(instance.drawable)
                .filter(|b| b.len() > UNCUT_PRIMITIVES)
                .map_or_else(|| vec![0], |b| b.fragments(FRAGMENT_PRIMITIVES));
            for bvh_node in nodes {
                fragments.push(Fragment {
                    instance: k as u32,
                    bvh_node,
                    world_box: fragment_box(scene, instance, bvh_node),
                });
            }
        }
        let boxes: Vec<Aabb> = fragments.iter().map(|f| f.world_box).collect();
        let (fragment_bvh, order) = Bvh::build(&boxes);
        let fragments = order.iter().map(|&i| fragments[i as usize]).collect();
        SceneIndex {
            bvh: WideBvh::from_binary(&bvh),
            instances,
            fragment_bvh: WideBvh::from_binary(&fragment_bvh),
            fragments,
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

    /// The fragments, in the order of [`fragment_bvh`](Self::fragment_bvh)'s leaves.
    pub fn fragments(&self) -> &[Fragment] {
        &self.fragments
    }

    /// The tree over the fragments' world boxes.
    pub fn fragment_bvh(&self) -> &WideBvh {
        &self.fragment_bvh
    }

    /// Bytes used by the index: instances (paths, matrices, gates), fragments and both
    /// trees.
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
            + self.fragments.len() * std::mem::size_of::<Fragment>()
            + self.fragment_bvh.memory_bytes()
    }

    /// The instances, in BVH leaf order.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
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
    /// the instances whose path goes through it (this index's root being `root`), with
    /// the plain traversal's arithmetic, and their fragments' boxes, and refits both
    /// trees bottom-up (the fragment tree only above leaves holding a moved fragment).
    /// Nothing else is rebuilt.
    pub fn refit_under(&mut self, scene: &SceneGraph, root: NodeId, moved: NodeId) {
        let mut changed = vec![false; self.instances.len()];
        for (k, instance) in self.instances.iter_mut().enumerate() {
            if instance.path.first() != Some(&root) || !instance.path.contains(&moved) {
                continue;
            }
            changed[k] = true;
            let frame = path_frame(scene, &instance.path);
            instance.active = frame.is_some();
            if let Some((l2w, w2l)) = frame {
                instance.local_to_world = l2w;
                instance.world_to_local = w2l;
            }
            instance.world_box = match (frame, scene.drawable_bound(instance.drawable)) {
                (Some((l2w, _)), Some(b)) if !b.is_empty() => world_box(&b, &l2w),
                _ => Aabb::EMPTY,
            };
        }
        if changed.contains(&true) {
            self.refits += 1;
            self.bvh.refit(|range| {
                let mut b = Aabb::EMPTY;
                for i in &self.instances[range] {
                    b.grow(&i.world_box);
                }
                b
            });
            // Only the fragments of moved instances, and the leaves holding them, are
            // recomputed; the other leaves keep their boxes.
            let instances = &self.instances;
            for f in &mut self.fragments {
                if changed[f.instance as usize] {
                    f.world_box = fragment_box(scene, &instances[f.instance as usize], f.bvh_node);
                }
            }
            let fragments = &self.fragments;
            self.fragment_bvh.refit_leaves(|range| {
                let items = &fragments[range];
                items.iter().any(|f| changed[f.instance as usize]).then(|| {
                    let mut b = Aabb::EMPTY;
                    for f in items {
                        b.grow(&f.world_box);
                    }
                    b
                })
            });
        }
    }
}

/// The world box of the primitives below `bvh_node` of an instance's drawable: the
/// instance's own box for the root, the node's box moved to world space otherwise.
fn fragment_box(scene: &SceneGraph, instance: &Instance, bvh_node: u32) -> Aabb {
    if bvh_node == 0 || !instance.active {
        return instance.world_box;
    }
    let node = scene
        .primitive_bvh(instance.drawable)
        .and_then(|b| b.bvh().nodes.get(bvh_node as usize));
    match node {
        Some(node) => {
            let (min, max) = node.bounds.as_dvec3();
            world_box(
                &crate::bounding::BoundingBox { min, max },
                &instance.local_to_world,
            )
        }
        None => instance.world_box,
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
    let pad = (w.max - w.min).length() * 1e-9
        + w.min.abs().max(w.max.abs()).max_element() * 1e-12
        + 1e-12;
    Aabb::from_f64_outward(w.min - DVec3::splat(pad), w.max + DVec3::splat(pad))
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
                    });
                }
            }
        }
    }
    out
}
