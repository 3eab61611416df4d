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

use std::collections::HashMap;

use glam::{DAffine3, DMat3, DMat4, DVec3, Vec3};
use smallvec::SmallVec;

use super::binned_sah::ItemBox;
use super::bvh::{Aabb, Bvh};
use super::edited_instances::EditedInstances;
use super::leaf_paths::LeafPaths;
use super::path_frames::{path_frame, Frame, PathFrames, PathProducts};
use super::runs::{for_each_run, map_in_runs, run_threads};
use super::triangle_list::TriangleList;
use super::wide_bvh::WideBvh;
use super::world_bvh::{RecordPlace, WorldBvh, WorldItem};
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

/// Transforms whose linear part is worse conditioned than this (the product of the
/// Frobenius norms of the matrix and its inverse) keep their instances whole: the world
/// tree's `f32` filters allow for the exact tests' rounding of positions in the
/// instance's frame only up to it (see [`WorldFrame`]).
const MAX_PLACED_CONDITION: f64 = 1e6;

/// Transforms more skewed than this keep their instances whole too: the world tree's
/// segment filter allows for the exact test's rounding in the instance's frame only up
/// to it (see [`SegmentFilter`](super::SegmentFilter)).
///
/// The skew of a frame is the product of the lengths of the rows of its inverse's
/// linear part (the map from world directions to the instance's coordinates) over that
/// map's determinant, at least 1 (Hadamard's inequality). An edge function in the
/// instance's frame sums products of one coordinate of each of three vectors; each
/// product is at most that product of row lengths times the world vectors' lengths,
/// while the function is the determinant times its world value: its rounding, against
/// the world value, grows with the skew. A turn, a move and a scale along the frame's
/// own axes (a glTF node's translation, rotation and scale, however uneven) have rows
/// at right angles, a skew of 1. A turn *before* an uneven scale (a turned child under
/// an unevenly scaled parent) shears, up to the square of the condition number: under
/// frames squeezing one direction 700 000 times after a turn (a condition number near
/// `10^6`, then placed), the exact test hit triangles that segments 100 to 1 000 units
/// long missed by a tenth of their size, which the filter had rejected (the test
/// `a_segment_grazing_a_triangle_under_a_skewed_frame_answers_as_the_plain_traversal`
/// in tests/precision.rs). At `2^20` the rounding stays some `2^-30` of the products
/// the filter measures, far inside its `2^-17`.
const MAX_PLACED_SKEW: f64 = (1u64 << 20) as f64;

/// How far, relative to the coordinates, a point may land from where it was when moved
/// into an instance's frame by the inverse the traversals compute and back, for the
/// instance to be placed in world space.
///
/// A segment test in an instance's frame tests the segment moved there: with an
/// inaccurate inverse, in effect a segment beside the one the world tree's filter
/// measures. The filter allows for the segment's start off by `2^-22` of its distance
/// from the tree's origin and for `2^-28` of the origin's distance from the world's
/// ([`WorldFrame::pad`](super::WorldFrame::pad)), so `2^-32` leaves room. The inverse's
/// error grows with the condition number and the frame's distance from the origin
/// together: when the traversals took a general 4×4 inverse, a frame 2.2·10^6 units out
/// whose linear part had a condition number of 3.7·10^5 moved points back 0.07 units
/// off, and the plain traversal hit a triangle the segment missed by 0.03 units, which
/// the filter had rejected (the test
/// `a_segment_beside_a_triangle_under_a_far_frame_answers_as_the_plain_traversal` in
/// tests/precision.rs). Their affine inverse (`Transform::frame_below`) brings that
/// frame's points back 10^-5 units off; the frame still stays a whole item, as the
/// rounding of coordinates moved into it may reach, by the bound `localizes_closely`
/// takes (the precision times the rows' and columns' lengths, about the condition
/// number), more than `2^-32` of them.
const MAX_LOCALIZATION_ERROR: f64 = 1.0 / (1u64 << 32) as f64;

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

/// The frame origin of the world tree and every instance's translation when the tree's
/// records were made: what [`SceneIndex::refit_under`] measures a move of the whole
/// scene against, so that the rounding of many moves does not add up unseen.
#[derive(Clone, Debug, PartialEq)]
struct ShiftReference {
    origin: DVec3,
    translations: Vec<DVec3>,
}

/// How far, relative to the world tree's size and coordinates (in its frame) and to the
/// absolute coordinates of the instances' frames, the instances of a move of the whole
/// scene may end up from one common translation (or similarity) for the tree to be
/// moved with them instead of detaching them: `2^-40`, some `2^12` units of `f64`
/// rounding of the coordinates. The walks' `f32` margins allow for the `f32` rounding
/// of the records, some `2^-24` of the coordinates, and their pads for `2^-28` of the
/// absolute ones (see [`WorldFrame`]), which dwarf it. A move of the scene's root by a
/// translation moves every instance by that translation to a unit or two of rounding
/// of their coordinates (a small model 4·10^6 units out: of those millions).
const SHIFT_SLACK: f64 = 1.0 / (1u64 << 40) as f64;

/// An edited instance kept in the world tree ([`SceneIndex::refit_drawable`]).
#[derive(Clone, Debug, PartialEq)]
struct Kept {
    /// Where its triangles' records are.
    places: Vec<RecordPlace>,
    /// The edits that have tried to keep it there.
    edits: u32,
}

/// The detached instances a [`SceneIndex::restructure`] may leave (or a quarter of the
/// instances, when that is more), and the removed ones it may keep (or as many as the
/// instances in the graph), before the index is built afresh instead.
const MAX_RESTRUCTURED_DETACHED: usize = 8;

/// Edits of an instance that may keep it in the world tree: a mesh edited more often
/// is taken for an animated one and detached at its next edit, from then on visited
/// whole. Packing the records anew costs more than the refit of the mesh's own tree
/// that a detached instance's edits pay (littlest_tokyo's biggest mesh, 41 000
/// triangles: 2.8 ms against 0.13 ms an edit), while a query through the world tree
/// takes about half as long (nearest segments 0.9 against 1.7 µs there).
const MAX_KEEPING_EDITS: u32 = 8;

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

    /// After the matrix of `moved` changed: recomputes the matrices and world boxes of
    /// the instances whose path goes through it (this index's root being `root`), and
    /// the matrices their LOD gates below it keep, with the plain traversal's
    /// arithmetic; detaches those still in the world tree, and refits the boxes on the
    /// paths to their leaves in the tree of detached instances (which is rebuilt
    /// instead when it gains an instance, and once it has absorbed as many refits as it
    /// holds instances). Nothing else is read or rebuilt once `moved` has been moved
    /// before: its first edit finds its instances among all ([`EditedInstances`]
    /// remembers them). The instance tree is left as it is: its walks skip detached
    /// instances.
    ///
    /// When `moved` is on every path and the move takes every instance of the world
    /// tree by one translation, or by one turn and uniform scale, the world tree moves
    /// instead and nothing is detached (see the module docs); when it is on the path
    /// every instance starts with, the parts that do not follow such a move are
    /// detached and the world tree moves with the rest. The instance tree is then
    /// refitted as a whole.
    pub fn refit_under(&mut self, scene: &SceneGraph, root: NodeId, moved: NodeId) {
        let mut lookup = self.take_edit_lookup();
        if self.shift_under(scene, root, moved, &mut lookup)
            || self.turn_under(scene, root, moved, &mut lookup)
        {
            self.edit_lookup = Some(lookup);
            return;
        }
        let mut changed = Vec::new();
        let mut newly_detached = false;
        let mut frames = PathFrames::default();
        // (Every path holds `moved`: `under` found them so.)
        for &k in lookup.edited.under(moved, &self.instances) {
            let instance = &mut self.instances[k as usize];
            if instance.path.first() != Some(&root) {
                continue;
            }
            changed.push(k);
            let frame = frames.frame(scene, &instance.path);
            set_frame(scene, instance, frame, moved);
            newly_detached |= self.detach(scene, k);
        }
        self.refit_changed(&mut lookup, &changed, newly_detached);
        self.edit_lookup = Some(lookup);
    }

    /// [`refit_under`](Self::refit_under) for a move of the whole scene by one
    /// translation (a floating origin re-centred, a model dragged as a whole): when
    /// `moved` is on every instance's path, and every instance the world tree holds
    /// keeps its linear part and moves by one translation (to [`SHIFT_SLACK`]), the
    /// world tree moves with them by moving its frame's origin, and nothing is
    /// detached. The instances' matrices, LOD gates and world boxes are recomputed as
    /// for any move, the instance tree refitted, and the tree of detached instances
    /// brought up to date. False, changing nothing, otherwise (and once an edit has
    /// packed an instance's records anew, whose reference it does not keep, and once the
    /// world tree's frame has turned: see [`turn_under`](Self::turn_under)).
    ///
    /// Detached instead, every instance of littlest_tokyo was visited whole from then
    /// on, and its nearest segments took four times as long.
    fn shift_under(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        moved: NodeId,
        lookup: &mut EditLookup,
    ) -> bool {
        let live = self.instances.len() - self.removed;
        if self.world.is_empty()
            || self.world.frame().is_turned()
            || !lookup.kept.is_empty()
            || lookup.edited.under(moved, &self.instances).len() != live
        {
            return false;
        }
        let (instances, world) = (&self.instances, &self.world);
        let reference = lookup
            .shift_reference
            .get_or_insert_with(|| ShiftReference {
                origin: world.frame().origin(),
                translations: (instances.iter())
                    .map(|i| i.local_to_world.w_axis.truncate())
                    .collect(),
            });
        let (min, max) = world.bounds().as_dvec3();
        let size = (max - min).max_element() + min.abs().max(max.abs()).max_element();
        // The new frames of the instances in the world tree first (in runs on the
        // machine's cores), a run refusing at its first instance that does not keep its
        // linear part (a turn refuses at once); nothing changed until all follow.
        let same_linear = |a: &DMat4, b: &DMat4| {
            a.x_axis == b.x_axis && a.y_axis == b.y_axis && a.z_axis == b.z_axis
        };
        let frames = map_in_runs(instances, run_threads(instances.len()), |run, frames| {
            let mut path_frames = PathFrames::default();
            for instance in run {
                if instance.path.first() != Some(&root) {
                    frames.push(Err(()));
                    break;
                }
                if !instance.in_world_tree() {
                    frames.push(Ok(None));
                    continue;
                }
                let (old_l2w, old_w2l) = (&instance.local_to_world, &instance.world_to_local);
                match path_frames.frame(scene, &instance.path) {
                    Some((l2w, w2l))
                        if same_linear(&l2w, old_l2w)
                            && same_linear(&w2l, old_w2l)
                            && l2w.w_axis.w == old_l2w.w_axis.w =>
                    {
                        frames.push(Ok(Some((l2w, w2l))))
                    }
                    _ => {
                        frames.push(Err(()));
                        break;
                    }
                }
            }
        });
        let Ok(frames) = frames.into_iter().collect::<Result<Vec<Frame>, ()>>() else {
            return false;
        };
        // And all by one translation.
        let mut shift: Option<DVec3> = None;
        for (k, frame) in frames.iter().enumerate() {
            let Some((l2w, _)) = frame else {
                continue;
            };
            let (now, then) = (l2w.w_axis.truncate(), reference.translations[k]);
            let moved_by = now - then;
            let shift = *shift.get_or_insert(moved_by);
            let absolute = now.abs().max(then.abs()).max_element();
            let slack = SHIFT_SLACK * (size + absolute);
            // (Compared so that a NaN refuses.)
            if !(moved_by - shift).abs().cmple(DVec3::splat(slack)).all() {
                return false;
            }
        }
        let Some(shift) = shift else {
            return false;
        };
        let origin = reference.origin + shift;
        if !origin.is_finite() {
            return false;
        }
        if self
            .common
            .as_ref()
            .is_some_and(|c| !c.path.contains(&moved))
        {
            // A node on every path but off the common one (shared below different
            // parents) moved: the paths' rests changed, and turns measured against the
            // build would no longer hold (see `turn_under`).
            self.common = None;
        }
        self.carry(scene, moved, WorldFrame::around(origin), frames, lookup);
        true
    }

    /// [`refit_under`](Self::refit_under) for a move of the whole scene that turns or
    /// scales it uniformly (a model turned in a viewer, a scene scaled to other units):
    /// when `moved` is on the path every instance starts with, the frame at that path's
    /// end now and at the build differ by a similarity (the frame now times the
    /// inverse of the one then), and an instance the world tree holds follows it (its
    /// frame now is the similarity times its frame at the build, to [`SHIFT_SLACK`] of
    /// the tree's size and coordinates over its drawable's box), the world tree's frame
    /// is carried by the similarity ([`WorldFrame::carried_by`]); the instances that do
    /// not follow (a part under an absolute transform, which stays put) are detached,
    /// and the rest is done as [`shift_under`](Self::shift_under) does it. False,
    /// changing nothing, when none follows.
    ///
    /// Measured against the build, not against the move before: the rounding of an
    /// orbit of many small turns does not add up. The frames at the build are computed
    /// again from the common path's frame then and each path's rest, whose matrices
    /// cannot have changed while the instance stays in the world tree (a move of a node
    /// there detaches what lies below, or, moving every instance by one translation
    /// from a place off the common path, forgets the common path). Every frame the tree
    /// has had since the build takes an instance's records to where its frame then put
    /// them, so records an edit packed anew in one of them hold in the next too.
    ///
    /// Detached instead, every instance of littlest_tokyo was visited whole from then
    /// on, and its nearest segments took six times as long. (A translation is a
    /// similarity too: a translation of the whole scene that `shift_under` refuses for
    /// a part that stays put comes here, and detaches only that part.)
    ///
    /// Every instance's frame is still computed again (here, and in `shift_under`
    /// and `carry`, in runs on the machine's cores: see [`map_in_runs`]): 13–15 ms
    /// for the 71 717 instances of city_s10 on two cores, 21–23 ms on one.
    fn turn_under(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        moved: NodeId,
        lookup: &mut EditLookup,
    ) -> bool {
        let Some(common) = &self.common else {
            return false;
        };
        if self.world.is_empty()
            || common.path.first() != Some(&root)
            || !common.path.contains(&moved)
        {
            return false;
        }
        let Some((now, _)) = path_frame(scene, &common.path) else {
            return false;
        };
        let then = DAffine3::from_mat4(common.local_to_world);
        let motion = DAffine3::from_mat4(now) * then.inverse();
        let Some(frame) = common.frame.carried_by(&motion) else {
            return false;
        };
        let motion = DMat4::from(motion);
        let (min, max) = self.world.bounds().as_dvec3();
        let size = (max - min).max_element() + min.abs().max(max.abs()).max_element();
        let size = size * frame.unit();
        // The new frames of the instances in the world tree that follow; `None` for the
        // others, which `carry` detaches. Nothing changed unless one follows.
        let rest = common.path.len();
        let threads = run_threads(self.instances.len());
        let frames = map_in_runs(&self.instances, threads, |run, frames| {
            let mut path_frames = PathFrames::default();
            let mut built_frames = PathProducts::below(common.local_to_world);
            for instance in run {
                let mut follows = |(l2w, w2l): (DMat4, DMat4)| {
                    let built = (instance.path.get(rest..))
                        .and_then(|path| built_frames.local_to_world(scene, path))?;
                    let bound = scene.drawable_bound(instance.drawable)?;
                    let absolute = l2w.w_axis.truncate().abs().max_element();
                    let slack = SHIFT_SLACK * (size + absolute);
                    // (Infinite when anything is not finite; a NaN slack does not follow.)
                    let apart = farthest_apart(&l2w, &(motion * built), bound.min, bound.max);
                    (apart <= slack).then_some((l2w, w2l))
                };
                let frame = instance
                    .in_world_tree()
                    .then(|| path_frames.frame(scene, &instance.path))
                    .flatten()
                    .and_then(&mut follows);
                frames.push(frame);
            }
        });
        if frames.iter().all(Option::is_none) {
            return false;
        }
        self.carry(scene, moved, frame, frames, lookup);
        true
    }

    /// The end of a move of the whole scene that the world tree follows: gives the tree
    /// `frame`, and the instances their new `frames` (those in the world tree that
    /// follow the move; the others, `None` there, are moved as any move moves them, and
    /// detached), with their LOD gates and world boxes; refits the instance tree as a
    /// whole and brings the tree of detached instances up to date.
    fn carry(
        &mut self,
        scene: &SceneGraph,
        moved: NodeId,
        frame: WorldFrame,
        frames: Vec<Frame>,
        lookup: &mut EditLookup,
    ) {
        self.world.set_frame(frame);
        // The instances that follow, each on its own (in runs on the machine's cores).
        let threads = run_threads(self.instances.len());
        for_each_run(&mut self.instances, threads, |first, run| {
            for (instance, frame) in run.iter_mut().zip(&frames[first..]) {
                if frame.is_some() && !instance.removed {
                    set_frame(scene, instance, *frame, moved);
                    instance.world_box = world_box_of(scene, instance);
                }
            }
        });
        // The others, detached already or never in the world tree (under a transform
        // singular at the build): moved as any move moves them, and detached.
        let mut newly_detached = false;
        let mut path_frames = PathFrames::default();
        for (k, frame) in frames.iter().enumerate() {
            let instance = &mut self.instances[k];
            if frame.is_none() && !instance.removed {
                let frame = path_frames.frame(scene, &instance.path);
                set_frame(scene, instance, frame, moved);
                newly_detached |= self.detach(scene, k as u32);
            }
        }
        let changed: Vec<u32> = (0..self.instances.len() as u32)
            .filter(|&k| !self.instances[k as usize].removed)
            .collect();
        self.refit_changed(lookup, &changed, newly_detached);
    }

    /// After structural edits below `root` (children linked or unlinked, drawables put
    /// in or taken out of geodes, a switch child turned, a reference frame changed):
    /// brings the index up to date with the graph without building its trees again;
    /// false, changing nothing, when building it afresh is better (below).
    ///
    /// The instances on paths through the nodes `changed` (the children linked or
    /// unlinked, the geodes, switches and transforms edited; `None`: anywhere) are
    /// collected again, as the build collects them, and matched to the ones held there
    /// by node path and drawable; the others are as they were. One found again under
    /// the same frame keeps its place in the world tree and takes its gates and masks
    /// anew (the children of a switch or LOD may have shifted); one found under
    /// another frame (a reference frame changed above it) is moved and detached, as a
    /// move detaches it; a new one (a vehicle spawned, a marker added) is appended,
    /// detached: visited whole from the tree of detached instances, in the place of one
    /// an earlier edit added and then removed if there is one (a marker added and taken
    /// away every frame leaves the index the size it was); one no longer found is
    /// [`removed`](Instance::removed), never visited again. Nothing else is touched.
    /// A marker added under the root of littlest_tokyo (or taken away), with the query
    /// after it, took 80–90 ms with the build of the whole index this replaces, and
    /// takes some 0.003 ms; on the generated city_s10, 120–150 ms against 0.2 ms (the
    /// instances through a changed node are remembered from one edit to the next, and
    /// a node created since the last collection is on no held path: reading the 71 718
    /// held paths for it took 2–3 ms). Collecting every instance again (`changed`
    /// `None`) costs nearly a build on such a city.
    ///
    /// False when the instances detached afterwards would be more than eight and a
    /// quarter of those in the graph, or the removed ones more than eight and more than
    /// those in the graph (whose triangles the world tree still holds, and the walks
    /// still meet): so many are better placed in a world tree built anew.
    pub fn restructure(
        &mut self,
        scene: &SceneGraph,
        root: NodeId,
        changed: Option<&[NodeId]>,
    ) -> bool {
        let region = changed.map(|nodes| Region::around(scene, nodes));
        let fresh = collect_in(scene, root, region.as_ref());
        let mut lookup = self.take_edit_lookup();
        // Whether each held instance may have changed: not removed already, and on a
        // path through a changed node (the others are as they were). The instances
        // through a node are remembered from one edit to the next (the first search
        // reads every held path: 2 ms on the generated city_s10), and a node created
        // since the instances were collected is on no path held.
        let affected: Vec<bool> = match changed {
            None => self.instances.iter().map(|i| !i.removed).collect(),
            Some(nodes) => {
                let mut affected = vec![false; self.instances.len()];
                let held: Vec<NodeId> = (nodes.iter().copied())
                    .filter(|&node| !scene.created_since(node, self.nodes_collected))
                    .collect();
                // One read of the held paths for all the nodes not remembered yet.
                lookup.edited.remember_under(&held, &self.instances);
                for &node in &held {
                    for &k in lookup.edited.under(node, &self.instances) {
                        affected[k as usize] = true;
                    }
                }
                affected
            }
        };
        // The held instance each fresh one is, if any.
        let matches: Vec<Option<u32>> = {
            let held: HashMap<(&[NodeId], DrawableId), u32> = (self.instances.iter())
                .enumerate()
                .filter(|&(k, _)| affected[k])
                .map(|(k, i)| ((&*i.path, i.drawable), k as u32))
                .collect();
            (fresh.iter())
                .map(|i| held.get(&(&*i.path, i.drawable)).copied())
                .collect()
        };
        // Held instances found again, or left as they were.
        let mut found: Vec<bool> = affected.iter().map(|a| !a).collect();
        for &k in matches.iter().flatten() {
            found[k as usize] = true;
        }
        let same_frame = |old: &Instance, new: &Instance| {
            old.local_to_world == new.local_to_world
                && old.world_to_local == new.world_to_local
                && old.active == new.active
        };
        // The instances detached afterwards: those detached now and found again, the
        // ones found under another frame, and the new ones.
        let still_detached = (self.detached.iter())
            .filter(|&&k| found[k as usize])
            .count();
        let newly_detached = (fresh.iter().zip(&matches))
            .filter(|(new, k)| {
                k.is_none_or(|k| {
                    let old = &self.instances[k as usize];
                    !old.detached && !same_frame(old, new)
                })
            })
            .count();
        let detached = still_detached + newly_detached;
        let live = self.instances.len() - self.removed;
        // The instances removed afterwards: those removed already and those not found
        // again, less the places of removed ones that new ones take; and those in the
        // graph then.
        // Places of instances edits added, removed then: nothing refers to them any
        // more, and the new ones take them first (the last on top), so that a marker
        // added and taken away every frame does not grow the index without end.
        let mut reusable: Vec<usize> = (self.built..self.instances.len())
            .rev()
            .filter(|&k| self.instances[k].removed || !found[k])
            .collect();
        let newly_removed = found.iter().filter(|&&found| !found).count();
        let new = matches.iter().filter(|k| k.is_none()).count();
        let removed_after = self.removed + newly_removed - new.min(reusable.len());
        let live_after = self.instances.len() + new.saturating_sub(reusable.len()) - removed_after;
        if detached > MAX_RESTRUCTURED_DETACHED.max(live / 4)
            || removed_after > MAX_RESTRUCTURED_DETACHED.max(live_after)
        {
            self.edit_lookup = Some(lookup);
            return false;
        }
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        for (k, was_found) in found.iter().enumerate() {
            let instance = &mut self.instances[k];
            if *was_found || instance.removed {
                continue;
            }
            instance.removed = true;
            instance.detached = true;
            instance.active = false;
            instance.world_box = Aabb::EMPTY;
            self.removed += 1;
            lookup.kept.remove(&(k as u32));
            removed.push(k as u32);
        }
        self.detached.retain(|&k| found[k as usize]);
        for (new, k) in fresh.into_iter().zip(matches) {
            let Some(k) = k else {
                // New: detached, owning no triangle id (its start is the end of the
                // ids, as the next one's).
                let new = Instance {
                    detached: true,
                    ..new
                };
                let k = match reusable.pop() {
                    Some(k) => {
                        self.instances[k] = new;
                        self.removed -= 1;
                        k as u32
                    }
                    None => {
                        let ids = self.id_starts.last().copied().unwrap_or(0);
                        if self.id_starts.is_empty() {
                            self.id_starts.push(ids);
                        }
                        self.id_starts.push(ids);
                        self.instances.push(new);
                        self.instances.len() as u32 - 1
                    }
                };
                self.detached.push(k);
                added.push(k);
                continue;
            };
            let old = &mut self.instances[k as usize];
            let moved = !same_frame(old, &new);
            old.gates = new.gates;
            old.default_masks = new.default_masks;
            if moved {
                old.local_to_world = new.local_to_world;
                old.world_to_local = new.world_to_local;
                old.active = new.active;
                self.detach(scene, k);
                lookup.kept.remove(&k);
            }
        }
        if changed.is_none() {
            // Every instance's masks were looked at again.
            self.mask_edits = scene.mask_edits();
        }
        self.refits += 1;
        // The instance lists of edited nodes and drawables follow the instances; the
        // leaves of the instance tree were made for the instances before.
        let since = self.nodes_collected;
        (lookup.edited).follow(&removed, &added, &self.instances, |node| {
            scene.created_since(node, since)
        });
        self.nodes_collected = scene.nodes_created();
        lookup.leaf_paths = None;
        self.refit_detached_tree(&mut lookup, &[], true);
        self.edit_lookup = Some(lookup);
        true
    }

    /// After `drawable` was edited in place or replaced (its primitives, its bound, even
    /// its kind may have changed): packs its instances' records in the world tree anew
    /// where every triangle still lies in its leaf's box (for at most eight edits of an
    /// instance: a mesh edited more often is taken for an animated one), keeps its
    /// instances that are whole items where their new world boxes lie in the boxes the
    /// tree holds for them, and detaches the other instances from the world tree, whose
    /// record of their triangles is stale (they are visited whole from then on, through
    /// the drawable as it is now); gives them all the world box of its new bound, and
    /// refits the boxes on the paths to the leaves of the ones kept in the instance
    /// tree (whose [`LeafPaths`] the first such edit makes) and of the detached ones in
    /// their tree, as [`refit_under`](Self::refit_under) does. Its instances are found
    /// among all at its first edit and remembered.
    pub fn refit_drawable(&mut self, scene: &SceneGraph, drawable: DrawableId) {
        let mut lookup = self.take_edit_lookup();
        let changed = lookup
            .edited
            .of_drawable(drawable, &self.instances)
            .to_vec();
        let mut newly_detached = false;
        for &k in &changed {
            let now = world_box_of(scene, &self.instances[k as usize]);
            let kept = self.repack(scene, &mut lookup, k)
                || self.stays_whole_in_place(scene, &mut lookup, k, &now);
            self.instances[k as usize].world_box = now;
            if !kept {
                newly_detached |= self.mark_detached(k);
            }
        }
        self.refit_changed(&mut lookup, &changed, newly_detached);
        self.edit_lookup = Some(lookup);
    }

    /// Whether instance `k`, a whole item of the world tree (a shared mesh, a mesh that
    /// is not a triangle list, a drawable of another kind), may stay there after its
    /// drawable was edited: when its new world box `now` lies in the box the world tree
    /// holds for it. The walks visit a whole item through its drawable as it is now, and
    /// they only need every point of it inside that box (for a cull, a segment's entry
    /// parameter, or a polytope's planes the box is inside), as at the build.
    fn stays_whole_in_place(
        &self,
        scene: &SceneGraph,
        lookup: &mut EditLookup,
        k: u32,
        now: &Aabb,
    ) -> bool {
        let instance = &self.instances[k as usize];
        if instance.placement != Placement::Whole || instance.detached || !instance.active {
            return false;
        }
        let world = &self.world;
        let boxes = lookup
            .whole_boxes
            .get_or_insert_with(|| world.whole_item_boxes());
        let Some(held) = boxes.get(&k) else {
            return false;
        };
        if now.min.cmpgt(now.max).any() {
            // Nothing left to hit.
            return true;
        }
        let frame = world.frame();
        if !frame.is_turned() {
            return held.contains(&whole_item_box(now, frame));
        }
        let Some(bound) = scene.drawable_bound(instance.drawable) else {
            return false;
        };
        held.contains(&turned_whole_item_box(frame, &bound, instance, now))
    }

    /// Keeps instance `k` in the world tree after its drawable was edited, when it is
    /// placed there and still can be (the same triangle list, every vertex finite, every
    /// triangle recorded) and every triangle still lies in its leaf's box: its records
    /// are packed anew from the drawable's vertices as they are now, moved to the world
    /// exactly as the build moves them, so that the walks' filters stay as sure as they
    /// were. False, changing nothing, otherwise.
    ///
    /// An edit that leaves the mesh where it was (a vertex nudged, the triangles'
    /// indices rewritten over the same vertices, an edit that changed nothing) thus
    /// keeps the walk over the world tree: visited whole, the same segments through
    /// littlest_tokyo took twice as long after an edit of its biggest mesh.
    ///
    /// The first such edit finds the records in one scan of every leaf (0.7 ms for
    /// littlest_tokyo's 142 000) and keeps their places for the next ones.
    fn repack(&mut self, scene: &SceneGraph, lookup: &mut EditLookup, k: u32) -> bool {
        let repacked = self.try_repack(scene, lookup, k);
        if !repacked {
            // Detached for good (until the index is built again).
            lookup.kept.remove(&k);
        }
        repacked
    }

    /// [`repack`](Self::repack) but for forgetting the places of an instance it detaches.
    fn try_repack(&mut self, scene: &SceneGraph, lookup: &mut EditLookup, k: u32) -> bool {
        let instance = &self.instances[k as usize];
        let Placement::Triangles { first_id } = instance.placement else {
            return false;
        };
        if instance.detached || !instance.active {
            return false;
        }
        let owned = self.id_starts[k as usize + 1] - self.id_starts[k as usize];
        let Some(geometry) = scene
            .drawable(instance.drawable)
            .and_then(|d| d.as_geometry())
        else {
            return false;
        };
        let list = TriangleList::of(geometry);
        let Some(list) = list.filter(|_| {
            geometry.primitive_count() == owned as usize && geometry.non_finite_vertex_count() == 0
        }) else {
            return false;
        };
        let world = &mut self.world;
        let kept = lookup.kept.entry(k).or_insert_with(|| Kept {
            places: world.places_of(first_id..first_id + owned),
            edits: 0,
        });
        kept.edits += 1;
        // Every triangle recorded (the build leaves out those reading a vertex that was
        // not finite then).
        if kept.edits > MAX_KEEPING_EDITS || kept.places.len() != owned as usize {
            return false;
        }
        // Each vertex moved to the world once, as the build moves them.
        let m = instance.local_to_world;
        let placed: Vec<DVec3> = placed_vertices(&m, geometry.vertices()).collect();
        let frame = *world.frame();
        let moved = |id: u32| {
            let corner = |i: u32| placed.get(i as usize).copied();
            let t = list.triangle(id - first_id)?;
            let [a, b, c] = [corner(t[0])?, corner(t[1])?, corner(t[2])?];
            let bound = placed_triangle_box([a, b, c], &frame);
            Some(([a, b, c].map(|p| frame.point(p)), bound))
        };
        world.repack(&kept.places, moved)
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

/// Places the instances' triangles in a world tree (see the module docs), setting each
/// instance's [`Placement`]; returns the tree and the id starts.
fn place(
    scene: &SceneGraph,
    instances: &mut [Instance],
    axes: Option<&DMat4>,
) -> (WorldBvh, Vec<u32>) {
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
            .filter(|g| {
                uses[&instance.drawable] == 1
                    && placeable(g, &instance.local_to_world, &instance.world_to_local)
            })
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
    // A scene turned off the world's axes as a whole (a model placed at a heading, a
    // city georeferenced with one) is measured along its own axes: its boxes hug it
    // as they would unturned.
    let frame = axes.and_then(|m| frame.along(m)).unwrap_or(frame);
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
                world.extend(placed_vertices(&m, local));
                let placed = &world[base as usize..];
                // The triangles the decomposition emits: those reading finite vertices.
                list.for_each(g.primitive_count() as u32, |p, t| {
                    let usable = |i: u32| local.get(i as usize).is_some_and(|v| v.is_finite());
                    if !(usable(t[0]) && usable(t[1]) && usable(t[2])) {
                        return;
                    }
                    let [a, b, c] = t.map(|i| placed[i as usize]);
                    let bound = placed_triangle_box([a, b, c], &frame);
                    boxes.push(ItemBox::new(&bound));
                    items.push(WorldItem::Triangle(next_id + p));
                    corners.push(t.map(|i| base + i));
                });
                instance.placement = Placement::Triangles { first_id: next_id };
                next_id += g.primitive_count() as u32;
            }
            (Placement::Whole, _) => {
                let held = match scene.drawable_bound(instance.drawable) {
                    Some(b) if frame.is_turned() => {
                        turned_whole_item_box(&frame, &b, instance, &instance.world_box)
                    }
                    _ => whole_item_box(&instance.world_box, &frame),
                };
                boxes.push(ItemBox::new(&held));
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

/// How far apart, at most (the largest coordinate of the difference), the affine maps
/// `a` and `b` take a point of the box `[min, max]`: the difference map at the box's
/// centre plus its linear part's magnitudes times the half diagonal. Infinite when
/// either map or the box is not finite.
fn farthest_apart(a: &DMat4, b: &DMat4, min: DVec3, max: DVec3) -> f64 {
    let column = |k: usize| (a.col(k) - b.col(k)).truncate();
    let (centre, half) = ((min + max) * 0.5, (max - min) * 0.5);
    let linear = DMat3::from_cols(column(0), column(1), column(2));
    let at_centre = linear * centre + column(3);
    let abs = DMat3::from_cols(
        linear.x_axis.abs(),
        linear.y_axis.abs(),
        linear.z_axis.abs(),
    );
    let apart = at_centre.abs() + abs * half;
    if apart.is_finite() {
        apart.max_element()
    } else {
        f64::INFINITY
    }
}

/// The world positions of an instance's vertices, as the world tree's build places
/// them and an edit that keeps them there packs them again
/// ([`SceneIndex::refit_drawable`]): the two must agree for the filters to hold.
fn placed_vertices<'v>(
    local_to_world: &'v DMat4,
    vertices: &'v [Vec3],
) -> impl Iterator<Item = DVec3> + 'v {
    vertices
        .iter()
        .map(|v| local_to_world.transform_point3(v.as_dvec3()))
}

/// The box of a whole item with this world box in a world tree measured in `frame` (not
/// turned: see [`turned_whole_item_box`]), as the build takes it and an edit that keeps
/// the item there checks it.
fn whole_item_box(world_box: &Aabb, frame: &WorldFrame) -> Aabb {
    if frame.is_world() {
        *world_box
    } else {
        let (min, max) = world_box.as_dvec3();
        padded_outward(min, max, frame.origin())
    }
}

/// [`whole_item_box`] in a turned `frame`, for `instance` whose drawable's box is
/// `bound` and world box `world_box`: the drawable's box placed straight into the
/// frame (the box of the world box, turned, would hold the item's corners and more),
/// padded as [`padded_outward`] pads the world box.
fn turned_whole_item_box(
    frame: &WorldFrame,
    bound: &crate::bounding::BoundingBox,
    instance: &Instance,
    world_box: &Aabb,
) -> Aabb {
    let (lo, hi) = world_box.as_dvec3();
    let pad = DVec3::splat(frame.length(rounding_pad(lo, hi)));
    let (min, max) = frame.placed_bounds(bound.min, bound.max, &instance.local_to_world);
    Aabb::from_f64_outward(min - pad, max + pad)
}

/// The box of a placed triangle with these world corners in a world tree measured in
/// `frame`, as the world tree's build takes it and an edit that keeps it there checks
/// it (see [`padded_outward`]).
fn placed_triangle_box([a, b, c]: [DVec3; 3], frame: &WorldFrame) -> Aabb {
    let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
    if !frame.is_turned() {
        return padded_outward(lo, hi, frame.origin());
    }
    // The box of the corners moved into the frame (a turned triangle's box is not the
    // turned box's), padded as in the world.
    let (min, max) = frame.points_bounds(&[a, b, c]);
    let pad = DVec3::splat(frame.length(rounding_pad(lo, hi)));
    Aabb::from_f64_outward(min - pad, max + pad)
}

/// What [`padded_outward`] pads a world box `[lo, hi]` by: a billionth of its size and
/// a trillionth of its distance from the world origin.
#[inline]
fn rounding_pad(lo: DVec3, hi: DVec3) -> f64 {
    let magnitude = lo.abs().max(hi.abs());
    (hi - lo).element_sum() * 1e-9 + magnitude.max_element() * 1e-12 + 1e-12
}

/// Whether a geometry's triangles may be placed in world space under `local_to_world`
/// (affine, as every frame of the graph is), whose inverse as the traversals compute it
/// is `world_to_local`: a triangle list, the transform's linear part well-conditioned
/// and not too skewed, and points moved into the frame and back landing close to where
/// they were (see [`MAX_LOCALIZATION_ERROR`]).
fn placeable(geometry: &Geometry, local_to_world: &DMat4, world_to_local: &DMat4) -> bool {
    let m = local_to_world;
    debug_assert_eq!(m.row(3), glam::DVec4::W, "scene transforms are affine");
    if TriangleList::of(geometry).is_none() {
        return false;
    }
    let linear = glam::DMat3::from_mat4(*m);
    // The inverse's linear part, as the traversals have it.
    let inverse = glam::DMat3::from_mat4(*world_to_local);
    let condition = frobenius(&linear) * frobenius(&inverse);
    condition.is_finite()
        && condition <= MAX_PLACED_CONDITION
        && skew(&inverse) <= MAX_PLACED_SKEW
        && localizes_closely(local_to_world, world_to_local)
}

/// The Frobenius norm of `a`.
fn frobenius(a: &glam::DMat3) -> f64 {
    (a.x_axis.length_squared() + a.y_axis.length_squared() + a.z_axis.length_squared()).sqrt()
}

/// Whether `world_to_local` moves every world point `s` into the frame closely enough
/// (see [`MAX_LOCALIZATION_ERROR`]): `local_to_world` takes the result back within
/// `MAX_LOCALIZATION_ERROR` times `|s|` plus the frame's distance from the world origin.
///
/// Taken back, a point moved with the computed inverse `W` and rounded lands at
/// `(M W − I) s` plus the rounding seen through `M`. The residual `M W − I` is measured
/// (in `f64`, its own rounding far below what is allowed), its linear part per unit of
/// `|s|` and its translation against the frame's distance. The rounding of local
/// coordinate `i`, some four units of `2^-53` of `|row i of W| |s|` plus the translation's
/// coordinate, moves the point back by that times `|column i of M|`; it is allowed
/// twice over. (For a turn and a scale along the frame's axes, each column's length is
/// the inverse of its row's, and the rounding is a few units of `2^-53` of `|s|`.)
fn localizes_closely(local_to_world: &DMat4, world_to_local: &DMat4) -> bool {
    let residual = *local_to_world * *world_to_local - DMat4::IDENTITY;
    let rows = glam::DMat3::from_mat4(*world_to_local).transpose();
    let rows = [rows.x_axis, rows.y_axis, rows.z_axis];
    let columns = [
        local_to_world.x_axis,
        local_to_world.y_axis,
        local_to_world.z_axis,
    ];
    let translation = world_to_local.w_axis.truncate().to_array();
    let (mut per_unit, mut fixed) = (0.0, 0.0);
    for i in 0..3 {
        let back = 8.0 * f64::EPSILON * columns[i].truncate().length();
        per_unit += back * rows[i].length();
        fixed += back * translation[i].abs();
    }
    per_unit += frobenius(&glam::DMat3::from_mat4(residual));
    fixed += residual.w_axis.truncate().length();
    let distance = local_to_world.w_axis.truncate().length();
    per_unit <= MAX_LOCALIZATION_ERROR && fixed <= MAX_LOCALIZATION_ERROR * distance
}

/// The skew of the linear map `to_local` (see [`MAX_PLACED_SKEW`]): the product of its
/// rows' lengths over its determinant's magnitude, 1 when the rows are at right angles;
/// NaN or infinite for a singular map. Measured on the map scaled to a longest row of 1
/// (the ratio does not change), so that no product overflows.
fn skew(to_local: &glam::DMat3) -> f64 {
    let rows = to_local.transpose();
    let lengths = [rows.x_axis, rows.y_axis, rows.z_axis].map(|r| r.length());
    let longest = lengths[0].max(lengths[1]).max(lengths[2]);
    let unit = rows * (1.0 / longest);
    lengths.iter().map(|l| l / longest).product::<f64>() / unit.determinant().abs()
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
    let pad = rounding_pad(lo, hi);
    let (lo, hi) = (lo - origin, hi - origin);
    let widen = DVec3::splat(pad) + lo.abs().max(hi.abs()) * (1.0 / 8_388_608.0);
    let (min, max) = ((lo - widen).as_vec3(), (hi + widen).as_vec3());
    if min.is_finite() && max.is_finite() {
        Aabb { min, max }
    } else {
        Aabb::from_f64_outward(lo - DVec3::splat(pad), hi + DVec3::splat(pad))
    }
}

/// The world box of `instance`'s drawable's bound under its frame; empty under a
/// singular one.
fn world_box_of(scene: &SceneGraph, instance: &Instance) -> Aabb {
    match scene.drawable_bound(instance.drawable) {
        Some(b) if instance.active && !b.is_empty() => world_box(&b, &instance.local_to_world),
        _ => Aabb::EMPTY,
    }
}

/// Gives `instance` its new `frame` (its path's, after `moved`'s matrix changed): its
/// matrices, or inactive under a singular one, and the matrices of its LOD gates below
/// `moved`.
fn set_frame(scene: &SceneGraph, instance: &mut Instance, frame: Frame, moved: NodeId) {
    instance.active = frame.is_some();
    if let Some((l2w, w2l)) = frame {
        instance.local_to_world = l2w;
        instance.world_to_local = w2l;
    }
    refresh_lod_gates(scene, instance, moved);
}

/// The matrices `instance`'s LOD gates below `moved` keep, recomputed after `moved`'s
/// matrix changed: a LOD below the moved node moved with it, and its eye distances
/// change.
fn refresh_lod_gates(scene: &SceneGraph, instance: &mut Instance, moved: NodeId) {
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
    /// Whether it lies below a changed node of the region collected (see
    /// [`collect_in`]).
    inside: bool,
}

/// Every instance under `root`, depth first with an explicit stack (hierarchies may be
/// deep; the call stack must not grow with them).
fn collect(scene: &SceneGraph, root: NodeId) -> Vec<Instance> {
    collect_in(scene, root, None)
}

/// The nodes structural edits changed (see [`SceneIndex::restructure`]), and every
/// node above them: the part of the graph [`collect_in`] walks to collect the
/// instances on paths through a changed node.
struct Region {
    changed: std::collections::HashSet<NodeId>,
    above: std::collections::HashSet<NodeId>,
}

impl Region {
    /// The region of the `changed` nodes (those still in `scene`) and their ancestors.
    fn around(scene: &SceneGraph, changed: &[NodeId]) -> Region {
        let mut above = std::collections::HashSet::new();
        let mut stack: Vec<NodeId> = changed.to_vec();
        while let Some(n) = stack.pop() {
            if let Some(node) = scene.node(n) {
                if above.insert(n) {
                    stack.extend_from_slice(node.parents());
                }
            }
        }
        Region {
            changed: changed.iter().copied().collect(),
            above,
        }
    }
}

/// [`collect`], only the instances on paths through a changed node of `region` (every
/// instance without one).
fn collect_in(scene: &SceneGraph, root: NodeId, region: Option<&Region>) -> Vec<Instance> {
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
        inside: false,
    }];
    while let Some(p) = stack.pop() {
        let inside = p.inside || region.is_none_or(|r| r.changed.contains(&p.id));
        if !inside && !region.is_some_and(|r| r.above.contains(&p.id)) {
            // Off every path through a changed node.
            continue;
        }
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
            inside,
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
            // Only the instances on paths through a changed node are wanted.
            NodeKind::Geode { .. } if !inside => {}
            NodeKind::Geode { drawables } => {
                for &d in drawables {
                    // A drawable with nothing to hit yet (no primitives, no finite
                    // vertex) is kept, with an empty box and out of the world tree, so
                    // that an edit that gives it some finds its instances.
                    let Some(b) = scene.drawable_bound(d) else {
                        continue;
                    };
                    out.push(Instance {
                        path: path.clone().into_boxed_slice(),
                        drawable: d,
                        local_to_world: p.local_to_world,
                        world_to_local: p.world_to_local,
                        world_box: if p.singular || b.is_empty() {
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
                        removed: false,
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

    /// Frames are placed up to a condition number (Frobenius norms) of `10^6` and a skew
    /// of `2^20`: turns, moves and scales of any size, and scales along the frame's own
    /// axes up to a million times uneven; worse ones, and turns before an uneven
    /// scale that shear too much, keep their instances whole.
    #[test]
    fn frames_are_placed_up_to_a_condition_number_and_a_skew() {
        let turn = DQuat::from_rotation_arc(DVec3::X, DVec3::new(1.0, 2.0, 3.0).normalize());
        let other = DQuat::from_rotation_arc(DVec3::Y, DVec3::new(-2.0, 1.0, 0.5).normalize());
        // A turn after the scale (glTF's T·R·S), and one before it too (a shear).
        let frame = |scale: DVec3, shear: bool| {
            let before = if shear { other } else { DQuat::IDENTITY };
            DMat4::from_translation(DVec3::new(4e6, -7.0, 3e5))
                * DMat4::from_quat(turn)
                * DMat4::from_scale(scale)
                * DMat4::from_quat(before)
        };
        for (scale, shear, placed) in [
            (DVec3::ONE, true, true),
            (DVec3::splat(1e-30), true, true),
            (DVec3::splat(1e30), true, true),
            // ‖M‖ ‖M⁻¹‖ = √2 · 10^5: a slab flattened a hundred thousand times.
            (DVec3::new(1.0, 1e-5, 1.0), false, true),
            (DVec3::new(1.0, 1e-7, 1.0), false, false),
            // Sheared: the skew grows with the square of the unevenness.
            (DVec3::new(1.0, 1e-2, 1.0), true, true),
            (DVec3::new(1.0, 1e-5, 1.0), true, false),
            // The frames of the test in tests/precision.rs that found shears wrong.
            (DVec3::new(1e-3, 700.0, 700.0), true, false),
            (DVec3::new(1e-3, 700.0, 700.0), false, true),
        ] {
            assert_eq!(
                placeable(
                    &triangle(),
                    &frame(scale, shear),
                    &frame(scale, shear).inverse()
                ),
                placed,
                "{scale}, shear {shear}"
            );
        }
    }

    #[test]
    fn the_skew_of_right_angled_rows_is_one_and_of_a_shear_more() {
        let scale = glam::DMat3::from_diagonal(DVec3::new(1e-3, 5.0, 2e4));
        let turn = glam::DMat3::from_quat(DQuat::from_rotation_arc(
            DVec3::Z,
            DVec3::new(1.0, -1.0, 2.0).normalize(),
        ));
        // Rows at right angles (a turn, then a scale along the result's axes).
        assert!((skew(&(scale * turn)) - 1.0).abs() < 1e-9);
        // x' = x + y, y' = y, z' = z: rows (1, 1, 0), (0, 1, 0), (0, 0, 1), determinant 1.
        let shear = glam::DMat3::from_cols(DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Z);
        assert!((skew(&shear) - 2f64.sqrt()).abs() < 1e-12);
        // Singular: not a finite skew.
        let flat = glam::DMat3::from_diagonal(DVec3::new(1.0, 0.0, 1.0));
        assert!(!skew(&flat).is_finite() || skew(&flat) > MAX_PLACED_SKEW);
        let flat = DMat4::from_mat3(flat);
        assert!(!placeable(&triangle(), &flat, &flat.inverse()));
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
