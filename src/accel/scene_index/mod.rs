//! [`SceneIndex`]: every drawable instance under a root, indexed so that a query does
//! not walk the graph.
//!
//! Each instance is one (node path, drawable) occurrence with the local-to-world matrix
//! and its inverse computed exactly as the plain traversal computes them (same products
//! in the same order), and its drawable's box in world space. What the visitor decides
//! per query — node masks, Switch children, LOD children — is kept as *gates* checked at
//! query time against the graph's current state, so toggling a mask or a switch needs
//! no rebuild. A matrix edit refits the index ([`SceneIndex::refit_under`]), and so
//! does a drawable edited in place or replaced ([`SceneIndex::refit_drawable`]: at once
//! through the graph's closures, at the index's next use when the drawable was handed
//! out as `&mut` by `SceneGraph::drawable_mut`). Structural edits (children linked or
//! unlinked, drawables put in or taken out of geodes) park it through the same
//! invalidation walk as the bounds, and its next use brings it up to date
//! ([`SceneIndex::restructure`]): what they add is detached, what they take away
//! removed, the rest kept in place.
//!
//! The index holds two trees:
//!
//! * the [`WorldBvh`]: every triangle of every instance that can be *placed* in world
//!   space (a triangle-list [`Geometry`] under an affine transform that is
//!   well-conditioned, not too skewed, and whose computed inverse moves points into
//!   its frame accurately: see `placeable`), and every other instance as a whole
//!   item. The built-in intersectors walk it; the triangles' ids say which instance
//!   and which primitive they are ([`SceneIndex::locate`]);
//! * a [`WideBvh`] over the instances' world boxes, for intersectors that visit whole
//!   drawables (custom ones), which skip the detached instances there (below).
//!
//! An instance moved by a matrix edit after the build is *detached* from the world
//! tree: its triangles there stay where they were but are skipped, and it is visited
//! whole, from a small tree of the detached instances, until the next rebuild. So
//! moving one vehicle per frame recomputes that vehicle's instances and the boxes on
//! their leaves' paths in the small tree ([`LeafPaths`]), and nothing else: its first
//! move looks for its instances among all and [`EditedInstances`] remembers them; the
//! small tree is rebuilt when it gains an instance, and once for as many moves as it
//! holds instances (hundreds of vehicles each moved once a frame cost about a
//! microsecond a move). Neither the world tree nor the tree over the instances
//! stretches over a vehicle's trail: the walks over either skip detached instances,
//! which they visit from the small tree, so neither is refitted after them.
//!
//! A move of the whole scene by one translation (a node on every path moved so that
//! every instance the world tree holds keeps its linear part and moves by the same
//! translation: a floating origin re-centred, a model dragged as a whole) detaches
//! nothing: the world tree's frame moves by the translation instead, its records
//! measured from the moved origin as before (see [`SceneIndex::refit_under`]).
//! Detached, every instance would be visited whole until the next rebuild (nearest
//! segments through littlest_tokyo took four times as long).
//!
//! So does a move of the whole scene that turns or scales it uniformly (a node on the
//! path every instance starts with, moved so that every instance the world tree holds
//! follows one similarity since the build: a model turned in a viewer, a scene scaled
//! to other units): the world tree's frame turns and scales with the scene (a
//! [`WorldFrame`] may be a similarity), and queries are moved into it. Detached,
//! nearest segments through littlest_tokyo took six times as long after a turn. A
//! scene built turned off the world's axes as a whole (its common path's frame turned
//! by other than quarter turns: a model placed at a heading) is measured along its own
//! axes from the start, its boxes as tight as unturned (nearest segments through the
//! generated city_s10 at a heading of 0.3 took six times as long along the world's).
//! A part that does not follow such a move (under an absolute transform, it stays
//! put) is detached alone, and the rest of the scene keeps the world tree.
//!
//! An edited drawable's instances are detached the same way, unless every triangle
//! still lies in its leaf's box in the world tree: then the leaf records are packed
//! anew from the edited vertices and the instance stays (a vertex nudged, an edit that
//! changed nothing), for its first eight edits; a mesh edited more often is taken for
//! an animated one and detached. A whole item stays in place, for any number of edits,
//! while its drawable's world box stays inside the box the world tree holds for it
//! (the walks visit it through the drawable as it is). `SceneGraph::rebuild_acceleration`
//! puts detached instances back.
//!
//! The index's parts, a file each: `collect` gathers the instances from the graph as the
//! plain traversal reaches them; `placement` decides which triangles the world tree
//! places in world space, and boxes them; `moves` follows matrix edits (a vehicle moved,
//! the whole scene moved), `drawable_edits` edited drawables and `restructure`
//! structural edits. This file holds the index itself: its build, its lookups, and the
//! detaching and refits the edits share.
//!
//! [`Geometry`]: crate::drawable::Geometry

use std::collections::HashMap;

use glam::{DMat4, DVec3};
use smallvec::SmallVec;

use super::bvh::Bvh;
use super::edited_instances::EditedInstances;
use super::leaf_paths::LeafPaths;
use super::path_frames::path_frame;
use super::wide_bvh::WideBvh;
use super::world_bvh::{RecordPlace, WorldBvh};
use super::world_frame::WorldFrame;
use super::Aabb;
use crate::graph::{DrawableId, NodeId, SceneGraph};

mod collect;
mod drawable_edits;
mod moves;
mod placement;
mod restructure;

use collect::collect;
use drawable_edits::Kept;
use moves::ShiftReference;
use placement::{place, world_box_of};

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
    /// built, or its drawable had nothing to hit then: the plain traversal never
    /// reaches it; an edit that changes that detaches it).
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
    /// Whether a structural edit took it out of the graph since the build (see
    /// [`SceneIndex::restructure`]): it is never visited again, and is kept, detached,
    /// only so that the world tree's triangle ids still name their instances. (The
    /// place of one that an edit had added is taken by the next one an edit adds.)
    pub removed: bool,
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

/// Triangle ids per entry of the id-to-instance lookup table.
const ID_BLOCK_BITS: u32 = 8;

/// Every drawable instance under a root: the [`WorldBvh`] over their triangles, a tree
/// over the instances themselves, and the instances detached by moves and edits.
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
    /// The instances detached by moves and edits, in the leaf order of `detached_bvh`
    /// (not the removed ones).
    detached: Vec<u32>,
    /// How many instances structural edits removed (see [`SceneIndex::restructure`]).
    removed: usize,
    /// How many instances the build collected: those past them were added by
    /// structural edits, own no triangle id and are no whole item of the world tree, so
    /// that a later edit may reuse the place of one it removed.
    built: usize,
    /// How many nodes the scene had created when the instances were last collected
    /// (built or restructured): no path held goes through a node created later.
    nodes_collected: u64,
    detached_bvh: WideBvh,
    refits: u64,
    /// Boxes of the instance tree set by refits (see [`SceneIndex::refitted_boxes`]).
    refitted_boxes: u64,
    /// The scene's count of mask edits when the instances were collected.
    mask_edits: u64,
    /// Made at the first edit (an index never edited does not pay for it).
    edit_lookup: Option<Box<EditLookup>>,
    /// The path every instance starts with, as at the build (`None` without instances,
    /// or when that path's frame is singular).
    common: Option<CommonPrefix>,
}

/// The nodes every instance's path starts with, their frame, and the world tree's frame
/// when its records were made: what a move of the whole scene that turns or scales it
/// is measured against ([`SceneIndex::refit_under`]), so that the rounding of many
/// moves does not add up.
#[derive(Clone, Debug, PartialEq)]
struct CommonPrefix {
    path: Box<[NodeId]>,
    /// The local-to-world matrix at its end, at the build.
    local_to_world: DMat4,
    /// The world tree's frame at the build.
    frame: WorldFrame,
}

/// What [`SceneIndex::refit_under`] and [`SceneIndex::refit_drawable`] need to find the
/// instances an edit changes and to refit the trees' paths to them alone.
#[derive(Clone, Debug, PartialEq)]
struct EditLookup {
    edited: EditedInstances,
    /// The instance tree's, made when an edit first changes an instance still in the
    /// world tree (moves never do: they detach what they move).
    leaf_paths: Option<LeafPaths>,
    /// The tree of detached instances' (made at each of its rebuilds).
    detached_paths: LeafPaths,
    /// Per detached instance, its position in [`SceneIndex::detached`].
    detached_at: HashMap<u32, u32>,
    /// Refits of the tree of detached instances since it was last rebuilt.
    detached_refits: usize,
    /// Per edited instance kept in the world tree: where its triangles' records are,
    /// and how many edits have kept it there.
    kept: HashMap<u32, Kept>,
    /// Per whole item of the world tree, its box there (found in one scan at the first
    /// edit of a drawable with instances kept whole).
    whole_boxes: Option<HashMap<u32, Aabb>>,
    /// Where the world tree's records were made, for moves of every instance by one
    /// translation (made at the first move of a node on every path).
    shift_reference: Option<ShiftReference>,
}

/// Past one changed instance in this many, the refits of [`SceneIndex::refit_under`] and
/// [`SceneIndex::refit_drawable`] set every box of a tree rather than those on the paths
/// to the changed instances' leaves: a path costs up to a box a level for each instance,
/// a whole refit one read of every instance's box.
const PATH_REFIT_SHARE: usize = 16;

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
        let common = common_prefix(scene, &instances);
        let axes = common.as_ref().map(|(_, local_to_world)| local_to_world);
        let (world, id_starts) = place(scene, &mut instances, axes);
        let id_blocks = id_blocks(&id_starts);
        let built = instances.len();
        let common = common.map(|(path, local_to_world)| CommonPrefix {
            path,
            local_to_world,
            frame: *world.frame(),
        });
        SceneIndex {
            bvh: WideBvh::from_binary(&bvh),
            instances,
            world,
            id_starts,
            id_blocks,
            detached: Vec::new(),
            removed: 0,
            built,
            nodes_collected: scene.nodes_created(),
            detached_bvh: WideBvh::default(),
            refits: 0,
            refitted_boxes: 0,
            mask_edits: scene.mask_edits(),
            edit_lookup: None,
            common,
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

    /// The instances detached from the world tree by moves and edits, in the leaf order of
    /// [`detached_bvh`](Self::detached_bvh).
    pub fn detached(&self) -> &[u32] {
        &self.detached
    }

    /// The tree over the detached instances' world boxes.
    pub fn detached_bvh(&self) -> &WideBvh {
        &self.detached_bvh
    }

    /// How many of the [`instances`](Self::instances) structural edits have removed
    /// since the build ([`Instance::removed`]).
    pub fn removed_count(&self) -> usize {
        self.removed
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
            + self.edit_lookup.as_ref().map_or(0, |m| {
                std::mem::size_of::<EditLookup>()
                    + m.edited.memory_bytes()
                    + m.leaf_paths.as_ref().map_or(0, LeafPaths::memory_bytes)
                    + m.detached_paths.memory_bytes()
                    + m.detached_at.capacity() * 2 * std::mem::size_of::<u32>()
                    + (m.kept.values())
                        .map(|p| p.places.capacity() * std::mem::size_of::<RecordPlace>())
                        .sum::<usize>()
                    + m.whole_boxes.as_ref().map_or(0, |b| {
                        b.capacity() * (std::mem::size_of::<u32>() + std::mem::size_of::<Aabb>())
                    })
                    + m.shift_reference.as_ref().map_or(0, |r| {
                        r.translations.capacity() * std::mem::size_of::<DVec3>()
                    })
            })
            + self.common.as_ref().map_or(0, |c| {
                std::mem::size_of::<CommonPrefix>() + std::mem::size_of_val(&*c.path)
            })
    }

    /// The instances, in the leaf order of [`bvh`](Self::bvh), then those structural
    /// edits added since the build; the ones they removed are among them, marked
    /// [`removed`](Instance::removed), until an edit adds another in the place of one
    /// an edit had added.
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

    /// The tree over the instances' world boxes, in their order. Its boxes hold the
    /// instances still in the world tree; those of [`detached`](Self::detached)
    /// instances are not refitted after they move (walks over it skip them and visit
    /// them from [`detached_bvh`](Self::detached_bvh)).
    pub fn bvh(&self) -> &WideBvh {
        &self.bvh
    }

    /// How many edits (matrices moved, drawables edited or replaced) this index absorbed
    /// by refitting since it was built.
    pub fn refit_count(&self) -> u64 {
        self.refits
    }

    /// How many boxes of the instance tree ([`bvh`](Self::bvh)) the refits since the
    /// build have set. A move sets none (it detaches what it moves) but a move of the
    /// whole scene by a translation or a similarity, which sets them all; an edit of a
    /// drawable whose instances stay in the world tree sets those on the paths to their
    /// leaves, at most one a level each, or every lane of every node when they are
    /// many.
    pub fn refitted_boxes(&self) -> u64 {
        self.refitted_boxes
    }

    /// The lookups for edits, made at the first one.
    fn take_edit_lookup(&mut self) -> Box<EditLookup> {
        self.edit_lookup.take().unwrap_or_else(|| {
            Box::new(EditLookup {
                edited: EditedInstances::default(),
                leaf_paths: None,
                detached_paths: LeafPaths::default(),
                detached_at: HashMap::new(),
                detached_refits: 0,
                kept: HashMap::new(),
                whole_boxes: None,
                shift_reference: None,
            })
        })
    }

    /// Gives instance `k` the world box of its drawable's bound under its frame (empty
    /// under a singular one) and detaches it from the world tree; true when it was not
    /// detached yet.
    fn detach(&mut self, scene: &SceneGraph, k: u32) -> bool {
        self.instances[k as usize].world_box = world_box_of(scene, &self.instances[k as usize]);
        self.mark_detached(k)
    }

    /// Detaches instance `k` from the world tree; true when it was not detached yet.
    fn mark_detached(&mut self, k: u32) -> bool {
        let instance = &mut self.instances[k as usize];
        if instance.detached {
            return false;
        }
        instance.detached = true;
        self.detached.push(k);
        true
    }

    /// After the instances `changed` (positions) changed their world boxes: refits the
    /// instance tree over those still attached to the world tree and brings the tree of
    /// detached instances up to date. (The walks over the instance tree skip detached
    /// instances, which they visit from their own tree: so a moved vehicle's trail
    /// never stretches the instance tree's boxes.)
    fn refit_changed(&mut self, lookup: &mut EditLookup, changed: &[u32], newly_detached: bool) {
        if changed.is_empty() {
            return;
        }
        self.refits += 1;
        let (detached, attached): (SmallVec<[u32; 8]>, SmallVec<[u32; 8]>) = (changed.iter())
            .copied()
            .partition(|&k| self.instances[k as usize].detached);
        if !attached.is_empty() {
            self.refit_instance_tree(lookup, &attached);
        }
        if newly_detached || !detached.is_empty() {
            self.refit_detached_tree(lookup, &detached, newly_detached);
        }
    }

    /// Sets the boxes of the instance tree over the instances `changed` (positions, all
    /// attached to the world tree), which moved: on the paths to their leaves, or
    /// everywhere when they are many. A leaf's box is that of its attached instances
    /// (the walks skip the others there).
    fn refit_instance_tree(&mut self, lookup: &mut EditLookup, changed: &[u32]) {
        let paths = (lookup.leaf_paths)
            .get_or_insert_with(|| LeafPaths::new(&self.bvh, self.instances.len()));
        let instances = &self.instances;
        let leaf_box = |range: std::ops::Range<usize>| {
            let mut b = Aabb::EMPTY;
            for i in instances[range].iter().filter(|i| !i.detached) {
                b.grow(&i.world_box);
            }
            b
        };
        let set = refit_tree(&mut self.bvh, paths, changed, instances.len(), leaf_box);
        self.refitted_boxes += set as u64;
    }

    /// Brings the tree of detached instances up to date after the instances `changed`
    /// (all detached now) moved: rebuilt when one of them was `newly_detached`, or once
    /// it has absorbed as many refits as it holds instances (so that instances moving
    /// apart do not leave it stretched: one rebuild for each instance moved once, on
    /// average); otherwise refitted along their paths, like the instance tree. A scene
    /// moving hundreds of vehicles a frame would otherwise rebuild the tree of all of
    /// them at each one's move.
    fn refit_detached_tree(
        &mut self,
        lookup: &mut EditLookup,
        changed: &[u32],
        newly_detached: bool,
    ) {
        if !newly_detached && lookup.detached_refits < self.detached.len() {
            let positions: SmallVec<[u32; 8]> = (changed.iter())
                .filter_map(|k| lookup.detached_at.get(k).copied())
                .collect();
            if positions.len() == changed.len() {
                let (instances, detached) = (&self.instances, &self.detached);
                let leaf_box = |range: std::ops::Range<usize>| {
                    let mut b = Aabb::EMPTY;
                    for &k in &detached[range] {
                        b.grow(&instances[k as usize].world_box);
                    }
                    b
                };
                refit_tree(
                    &mut self.detached_bvh,
                    &lookup.detached_paths,
                    &positions,
                    detached.len(),
                    leaf_box,
                );
                lookup.detached_refits += 1;
                return;
            }
        }
        let boxes: Vec<Aabb> = (self.detached.iter())
            .map(|&k| self.instances[k as usize].world_box)
            .collect();
        let (tree, order) = Bvh::build(&boxes);
        self.detached = order.iter().map(|&i| self.detached[i as usize]).collect();
        self.detached_bvh = WideBvh::from_binary(&tree);
        lookup.detached_paths = LeafPaths::new(&self.detached_bvh, self.detached.len());
        lookup.detached_at = (self.detached.iter().enumerate())
            .map(|(position, &k)| (k, position as u32))
            .collect();
        lookup.detached_refits = 0;
    }
}

/// Sets the boxes of `tree`, over `items` items whose leaves' boxes `leaf_box` gives,
/// after the items `changed` (positions in its leaf order) changed: along the paths to
/// their leaves (`paths`), or every box past one changed item in [`PATH_REFIT_SHARE`].
/// Returns how many boxes it set.
fn refit_tree(
    tree: &mut WideBvh,
    paths: &LeafPaths,
    changed: &[u32],
    items: usize,
    leaf_box: impl FnMut(std::ops::Range<usize>) -> Aabb,
) -> usize {
    if changed.len() * PATH_REFIT_SHARE <= items {
        paths.refit(tree, changed, leaf_box)
    } else {
        tree.refit(leaf_box);
        (tree.nodes().iter())
            .map(|n| n.lanes().count_ones() as usize)
            .sum()
    }
}

/// The path every instance's path starts with (the longest), with the local-to-world
/// matrix at its end; `None` without instances, or when that path's frame is singular.
fn common_prefix(scene: &SceneGraph, instances: &[Instance]) -> Option<(Box<[NodeId]>, DMat4)> {
    let first = &instances.first()?.path;
    let mut shared = first.len();
    for instance in &instances[1..] {
        shared = (first[..shared].iter())
            .zip(instance.path.iter())
            .take_while(|(a, b)| a == b)
            .count();
    }
    let path: Box<[NodeId]> = first[..shared].into();
    let (local_to_world, _) = path_frame(scene, &path)?;
    Some((path, local_to_world))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    use glam::{DVec3, Vec3};

    /// One triangle, as a triangle list.
    pub(super) fn triangle() -> Geometry {
        Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap()
    }

    /// A row of `n` triangles, each under a transform of its own (named `t{i}`), under
    /// `root`, all under one more transform (`all`).
    fn row(n: usize) -> (SceneGraph, NodeId, NodeId, Vec<NodeId>) {
        let mut scene = SceneGraph::new();
        let root = scene.add_group("root");
        let all = scene.add_transform("all", DMat4::IDENTITY).unwrap();
        scene.add_child(root, all).unwrap();
        let drawable = scene.add_drawable("triangle", triangle());
        let geode = scene.add_geode("geode");
        scene.add_drawable_to_geode(geode, drawable).unwrap();
        let movers = (0..n)
            .map(|i| {
                let at = DVec3::new(3.0 * (i % 40) as f64, 0.0, 3.0 * (i / 40) as f64);
                let t = scene
                    .add_transform(format!("t{i}"), DMat4::from_translation(at))
                    .unwrap();
                scene.add_child(all, t).unwrap();
                scene.add_child(t, geode).unwrap();
                t
            })
            .collect();
        (scene, root, all, movers)
    }

    /// The instance tree refitted whole from the current boxes of the instances still
    /// attached to the world tree (the walks skip the others there).
    fn refitted_whole(index: &SceneIndex) -> WideBvh {
        let mut whole = index.bvh.clone();
        whole.refit(|range| {
            let mut b = Aabb::EMPTY;
            (index.instances[range].iter())
                .filter(|i| !i.detached)
                .for_each(|i| b.grow(&i.world_box));
            b
        });
        whole
    }

    #[test]
    fn moves_leave_the_instance_tree_as_built_and_edits_kept_in_place_refit_their_paths() {
        let (mut scene, root, all, movers) = row(800);
        // One more triangle, of its own, beside the row: placed in the world tree, so
        // that an edit keeping it inside its leaf's box keeps it there.
        let own = scene.add_drawable("own", triangle());
        let geode = scene.add_geode("own geode");
        scene.add_drawable_to_geode(geode, own).unwrap();
        scene.add_child(root, geode).unwrap();
        // Built aside: the scene's own index (none here) is what `set_matrix` refits.
        let mut index = SceneIndex::build(&scene, root);
        let built = index.bvh.clone();
        assert!(built.nodes().len() > 50, "{} nodes", built.nodes().len());
        for (step, &k) in [5usize, 799, 5, 312].iter().enumerate() {
            let far = DVec3::new(-50.0 * step as f64, 20.0, 7.0);
            scene
                .set_matrix(movers[k], DMat4::from_translation(far))
                .unwrap();
            index.refit_under(&scene, root, movers[k]);
            // Detached, and visited from the tree of detached instances, which holds
            // its new box; the instance tree, whose walks skip it, is left as built (it
            // would stretch over the trail of a moving vehicle).
            let moved = (index.instances.iter())
                .position(|i| i.path.contains(&movers[k]))
                .unwrap();
            let moved_box = index.instances[moved].world_box;
            assert!(index.instances[moved].detached && moved_box.min.y > 19.9);
            assert!(index.detached.contains(&(moved as u32)));
            assert!(
                index.detached_bvh.bounds().contains(&moved_box),
                "step {step}"
            );
            assert_eq!(index.bvh, built, "step {step}");
        }
        // Moving the whole row detaches all of it, and sets no box of the instance tree.
        scene
            .set_matrix(all, DMat4::from_translation(DVec3::Y))
            .unwrap();
        index.refit_under(&scene, root, all);
        assert_eq!(index.detached.len(), 800);
        assert_eq!(index.bvh, built);
        assert_eq!(index.refitted_boxes(), 0);
        assert_eq!(index.refit_count(), 5);
        // A node on no path moves nothing.
        let stray = scene.add_transform("stray", DMat4::IDENTITY).unwrap();
        index.refit_under(&scene, root, stray);
        assert_eq!(index.refit_count(), 5);

        // Another index, nothing moved: an edit that leaves `own`'s triangle inside its
        // leaf's box keeps it attached and sets the boxes on its leaf's path alone.
        let mut index = SceneIndex::build(&scene, root);
        let own_instance = (index.instances.iter())
            .position(|i| i.drawable == own)
            .unwrap();
        scene
            .edit_vertices(own, |v| v[1] = Vec3::new(0.5, 0.0, 0.0))
            .unwrap();
        index.refit_drawable(&scene, own);
        assert!(!index.instances[own_instance].detached);
        // (Its new box, rounded outward to `f32`, ends at x = 0.5, no longer at 1.)
        let own_box = index.instances[own_instance].world_box;
        assert!((0.5..0.501).contains(&own_box.max.x), "{own_box:?}");
        assert!(
            (1..=12).contains(&index.refitted_boxes()),
            "{}",
            index.refitted_boxes()
        );
        assert_eq!(index.bvh, refitted_whole(&index));
    }

    /// The tree of detached instances refitted whole from their current boxes.
    fn detached_refitted_whole(index: &SceneIndex) -> WideBvh {
        let mut whole = index.detached_bvh.clone();
        whole.refit(|range| {
            let mut b = Aabb::EMPTY;
            for &k in &index.detached[range] {
                b.grow(&index.instances[k as usize].world_box);
            }
            b
        });
        whole
    }

    #[test]
    fn many_movers_refit_the_tree_of_detached_instances_and_rebuild_it_once_a_round() {
        let inside = |a: &Aabb, b: &Aabb| a.min.cmple(b.min).all() && b.max.cmple(a.max).all();
        let (mut scene, root, _, movers) = row(800);
        let mut index = SceneIndex::build(&scene, root);
        let movers = &movers[..40];
        let mut rebuilds = [0; 3];
        for (round, rebuilt) in rebuilds.iter_mut().enumerate() {
            for (i, &t) in movers.iter().enumerate() {
                let at = DVec3::new(7.0 * i as f64, 5.0 * round as f64, -40.0 * round as f64);
                scene.set_matrix(t, DMat4::from_translation(at)).unwrap();
                index.refit_under(&scene, root, t);
                if index.edit_lookup.as_ref().unwrap().detached_refits == 0 {
                    *rebuilt += 1;
                }
                let detached = if round == 0 { i + 1 } else { movers.len() };
                assert_eq!(index.detached.len(), detached);
                assert_eq!(index.detached_bvh, detached_refitted_whole(&index));
                // The moved instance where it now is, in a leaf whose path holds it.
                let moved = (index.instances.iter())
                    .position(|inst| inst.path.contains(&t))
                    .unwrap();
                let moved_box = index.instances[moved].world_box;
                let position = (index.detached.iter())
                    .position(|&k| k as usize == moved)
                    .unwrap();
                let mut held = false;
                index.detached_bvh.for_each_leaf(
                    |b| inside(b, &moved_box),
                    |items| held |= items.contains(&position),
                );
                assert!(held, "round {round}, move {i}");
            }
        }
        // Rebuilt at every move that detached one more instance; after that, once for
        // every 40 moves (as many as it holds), refitted at the others.
        assert_eq!(rebuilds, [40, 0, 1]);
    }
}
