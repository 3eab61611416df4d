//! Drawable edits: the instances of an edited drawable kept in place or detached
//! ([`SceneIndex::refit_drawable`]).

use glam::DVec3;

use super::placement::{
    placed_triangle_box, placed_vertices, turned_whole_item_box, whole_item_box, world_box_of,
};
use super::{EditLookup, Placement, SceneIndex};
use crate::accel::triangle_list::TriangleList;
use crate::accel::world_bvh::RecordPlace;
use crate::accel::Aabb;
use crate::graph::{DrawableId, SceneGraph};

/// An edited instance kept in the world tree ([`SceneIndex::refit_drawable`]).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Kept {
    /// Where its triangles' records are.
    pub(super) places: Vec<RecordPlace>,
    /// The edits that have tried to keep it there.
    edits: u32,
}

/// Edits of an instance that may keep it in the world tree: a mesh edited more often
/// is taken for an animated one and detached at its next edit, from then on visited
/// whole. Packing the records anew costs more than the refit of the mesh's own tree
/// that a detached instance's edits pay (littlest_tokyo's biggest mesh, 41 000
/// triangles: 2.8 ms against 0.13 ms an edit), while a query through the world tree
/// takes about half as long (nearest segments 0.9 against 1.7 µs there).
const MAX_KEEPING_EDITS: u32 = 8;

impl SceneIndex {
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
    ///
    /// [`LeafPaths`]: crate::accel::LeafPaths
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
}
