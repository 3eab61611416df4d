//! [`IndexContext`]: what an intersector walking a scene index's world tree itself
//! needs from the visitor.

use super::intersection_visitor::visit_whole;
use super::met_instances::MetInstances;
use super::{DrawableContext, IntersectionVisitor, Intersector};
use crate::accel::{Instance, SceneIndex};
use crate::graph::SceneGraph;

/// The scene, its index, and the visitor's decisions about instances, handed to
/// [`Intersector::intersect_index`].
///
/// The world tree ([`SceneIndex::world`]) holds triangles of many instances; a walk
/// meets an instance through its triangles' ids ([`SceneIndex::locate`]) or as a whole
/// item. [`reaches`](Self::reaches) tells whether the plain traversal would get there
/// (node masks, Switch and LOD gates) and whether the world tree speaks for it (an
/// instance moved since the index was built is visited by the visitor afterwards, not
/// from the world tree). A walk keeps per-instance data for the instances it met
/// (its query in their frames) in slots it numbers itself; [`slot`](Self::slot) and
/// [`set_slot`](Self::set_slot) remember them for the current query without clearing
/// anything between queries. A walk starts with [`forget_slots`](Self::forget_slots):
/// another walk may have run in the same query (the members of an
/// [`IntersectorGroup`](crate::intersectors::IntersectorGroup) walk in turn).
pub struct IndexContext<'a> {
    visitor: &'a IntersectionVisitor,
    scene: &'a SceneGraph,
    index: &'a SceneIndex,
    met: &'a mut MetInstances,
    masks_unchanged: bool,
}

impl<'a> IndexContext<'a> {
    /// A context for one query (`met` already started for it).
    pub(crate) fn new(
        visitor: &'a IntersectionVisitor,
        scene: &'a SceneGraph,
        index: &'a SceneIndex,
        met: &'a mut MetInstances,
    ) -> Self {
        IndexContext {
            visitor,
            scene,
            index,
            met,
            masks_unchanged: index.masks_unchanged(scene),
        }
    }

    /// The scene.
    #[inline]
    pub fn scene(&self) -> &'a SceneGraph {
        self.scene
    }

    /// The index being walked.
    #[inline]
    pub fn index(&self) -> &'a SceneIndex {
        self.index
    }

    /// Instance `k`.
    ///
    /// # Panics
    ///
    /// When `k` is not an instance of the index.
    #[inline]
    pub fn instance(&self, k: u32) -> &'a Instance {
        &self.index.instances()[k as usize]
    }

    /// The drawable visit instance `k` stands for: where its hits are recorded.
    ///
    /// # Panics
    ///
    /// When `k` is not an instance of the index.
    pub fn drawable_context(&self, k: u32) -> DrawableContext<'a> {
        let instance = self.instance(k);
        DrawableContext {
            scene: self.scene,
            node_path: &instance.path,
            drawable: instance.drawable,
            local_to_world: &instance.local_to_world,
            world_to_local: &instance.world_to_local,
            use_acceleration: true,
        }
    }

    /// Whether a walk of the world tree must test instance `k`'s primitives: the world
    /// tree speaks for it (it was not moved since the build) and the plain traversal
    /// would reach it (masks, Switch and LOD gates, as the visitor is set now).
    pub fn reaches(&self, k: u32) -> bool {
        let instance = self.instance(k);
        instance.in_world_tree()
            && self
                .visitor
                .reaches(self.scene, instance, self.masks_unchanged)
    }

    /// The slot the walk gave instance `k` in this query, if it met it already.
    #[inline]
    pub fn slot(&self, k: u32) -> Option<u32> {
        self.met.get(k)
    }

    /// Forgets every slot given so far, so that a walk starts with no instance met
    /// (another walk may have run in this query, numbering its own).
    pub fn forget_slots(&mut self) {
        self.met.start(self.index.instances().len());
    }

    /// Remembers `slot` for instance `k` for the rest of this query.
    #[inline]
    pub fn set_slot(&mut self, k: u32, slot: u32) {
        self.met.insert(k, slot);
    }

    /// Visits instance `k` whole through its drawable (a whole item of the world tree),
    /// as the plain traversal would: nothing when [`reaches`](Self::reaches) says no.
    pub fn visit_whole<I: Intersector>(&self, intersector: &mut I, k: u32) {
        let instance = self.instance(k);
        if instance.in_world_tree() {
            visit_whole(
                self.visitor,
                self.scene,
                instance,
                self.masks_unchanged,
                intersector,
            );
        }
    }
}
