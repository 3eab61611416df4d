//! The [`Intersector`] trait: what the visitor asks of a query.

use glam::DMat4;

use super::{FrameContext, IndexContext};
use crate::accel::{Aabb, Aabb4, WideEntries};
use crate::bounding::{BoundingBox, BoundingSphere};
use crate::drawable::Drawable;
use crate::graph::{DrawableId, NodeId, SceneGraph};
use crate::intersectors::QueryError;

/// How many hits an intersector keeps (OSG's `IntersectionLimit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IntersectionLimit {
    /// Every hit.
    #[default]
    None,
    /// The nearest hit of every drawable visit (a drawable shared under two transforms is
    /// visited twice).
    OnePerDrawable,
    /// Stop the whole traversal at the first hit found (any hit: the cheapest "is there
    /// anything?" query). Which hit is found first depends on the order of the
    /// traversal, as with OSG's `LIMIT_ONE` and its KdTrees: the plain traversal meets
    /// nodes in the scene's order, the accelerated one nearest first through its trees.
    /// So with and without acceleration there is one hit exactly when there is any, but
    /// not always the same one; use [`Nearest`](Self::Nearest) for one that is.
    One,
    /// Only the nearest hit of the whole scene.
    Nearest,
}

/// Where a drawable is being intersected: handed to [`Intersector::intersect`].
#[derive(Clone, Copy, Debug)]
pub struct DrawableContext<'a> {
    /// The scene.
    pub scene: &'a SceneGraph,
    /// Root-first path of nodes down to the geode holding the drawable.
    pub node_path: &'a [NodeId],
    /// The drawable.
    pub drawable: DrawableId,
    /// The drawable's local-to-world matrix.
    pub local_to_world: &'a DMat4,
    /// Its inverse.
    pub world_to_local: &'a DMat4,
    /// Whether the intersector may use the drawable's acceleration structure (the
    /// visitor's [`use_acceleration`](super::IntersectionVisitor::set_use_acceleration)).
    pub use_acceleration: bool,
}

impl DrawableContext<'_> {
    /// The drawable's primitive BVH and the geometry it reads its primitives from, when
    /// acceleration is on and the drawable has one.
    pub fn accelerated<'s>(
        &'s self,
        drawable: &'s dyn Drawable,
    ) -> Option<(
        &'s crate::accel::PrimitiveBvh,
        &'s crate::drawable::Geometry,
    )> {
        if !self.use_acceleration {
            return None;
        }
        let geometry = drawable.as_geometry()?;
        Some((self.scene.primitive_bvh(self.drawable)?, geometry))
    }
}

/// A query the [`IntersectionVisitor`](super::IntersectionVisitor) can run.
///
/// The visitor calls [`begin`](Intersector::begin) once, with the matrices that take the
/// intersector's [`CoordinateFrame`](super::CoordinateFrame) to world space; then, for the
/// root and at every transform, [`localize`](Intersector::localize) re-expresses the
/// *root* query in the new local frame (a clone from the root, never from the parent, so
/// no error accumulates); [`enter_node`](Intersector::enter_node) and
/// [`enter_drawable`](Intersector::enter_drawable) cull by bounds; and
/// [`intersect`](Intersector::intersect) tests a drawable's primitives. Finally
/// [`end`](Intersector::end) puts the hits in their order.
pub trait Intersector {
    /// The query expressed in one local frame.
    type Local;

    /// Prepares a new traversal: clears earlier hits and converts the query into world
    /// coordinates.
    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError>;

    /// The query in the frame whose local-to-world matrix is `local_to_world`.
    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> Self::Local;

    /// Whether a node whose bound (in this local frame) is `bound` may hold a hit.
    fn enter_node(&self, local: &Self::Local, bound: &BoundingSphere) -> bool;

    /// Whether a drawable whose box (in this local frame) is `bound` may hold a hit.
    fn enter_drawable(&self, local: &Self::Local, bound: &BoundingBox) -> bool;

    /// Called before a traversal of a scene index, with the world box holding every
    /// instance it may visit: the place to prepare the world-box tests (for example in
    /// `f32`, with rounding margins for that scale). Default: nothing.
    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        let _ = scene_bounds;
    }

    /// Whether a drawable instance whose box in *world* space is `bound` may hold a hit,
    /// and in which order to visit it (smaller first): used when the visitor runs on a
    /// scene index instead of walking the graph. Must never refuse a box the exact tests
    /// could find a hit in. The default enters everything, unordered.
    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        let _ = bound;
        Some(0.0)
    }

    /// [`enter_world_box`](Self::enter_world_box) for four boxes at once (a node of the
    /// scene index's [`WideBvh`](crate::accel::WideBvh)s), keys rounded down to `f32`
    /// ([`WideEntries::key_below`]). The default asks `enter_world_box` box by box; the
    /// built-in intersectors test the four together.
    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        WideEntries::from_lanes(std::array::from_fn(|lane| {
            self.enter_world_box(&boxes.get(lane))
        }))
    }

    /// Whether the scene-index walk visits boxes nearest first, by the keys of
    /// [`enter_world_box`](Self::enter_world_box), skipping those past
    /// [`world_limit`](Self::world_limit): worth it for queries that stop early (the
    /// nearest hit of a segment). Otherwise the walk is depth first, which costs less
    /// per box. Default: yes.
    fn orders_world_boxes(&self) -> bool {
        true
    }

    /// Instances ordered past this key by [`enter_world_box`](Self::enter_world_box)
    /// cannot hold a wanted hit (for example beyond the nearest hit so far). Default:
    /// none is excluded.
    fn world_limit(&self) -> f64 {
        f64::INFINITY
    }

    /// Tests the drawable's primitives and records hits.
    fn intersect(
        &mut self,
        local: &Self::Local,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    );

    /// True when no further hit can be wanted (limit `One` satisfied): the visitor stops.
    fn reached_limit(&self) -> bool;

    /// Answers the query from the scene index's world tree
    /// ([`SceneIndex::world`](crate::accel::SceneIndex::world)) by a walk of its own,
    /// recording every hit the plain traversal would find in the instances the world
    /// tree speaks for ([`IndexContext::reaches`]); true when it did. The visitor then
    /// visits the instances moved since the index was built (as it visits every
    /// instance when this returns false). The built-in intersectors walk the world tree
    /// this way; the default returns false, and the visitor visits every instance whole
    /// through [`intersect`](Self::intersect).
    fn intersect_index(&mut self, context: &mut IndexContext<'_>) -> bool {
        let _ = context;
        false
    }

    /// Whether [`enter_drawable`](Self::enter_drawable) only culls by bounds: it refuses
    /// a drawable only when no primitive inside `bound` could be hit. Then the
    /// scene-index walk, which has already tested the instance's box in world space,
    /// skips it: the primitive tests decide alone, with the same results.
    /// Default: no (the walk asks `enter_drawable`, as the plain traversal does).
    fn drawable_test_only_culls(&self) -> bool {
        false
    }

    /// Whether [`enter_drawable`](Self::enter_drawable) would let a
    /// [`Geometry`](crate::drawable::Geometry) whose box (in this local frame) is
    /// `bound` through whenever one of its primitives is hit: then the scene-index walk
    /// leaves the box test of a whole item to the primitive tests, with the same
    /// results. Default: [`drawable_test_only_culls`](Self::drawable_test_only_culls).
    fn drawable_test_follows_from_hits(&self, local: &Self::Local, bound: &BoundingBox) -> bool {
        let _ = (local, bound);
        self.drawable_test_only_culls()
    }

    /// Whether a point or a line can be hit at all. When not, the scene-index walk
    /// skips the whole items whose drawable is a [`Geometry`](crate::drawable::Geometry)
    /// of points and lines only (a street's lamp posts), before moving the query to
    /// their frame: their primitives could not be hit. Default: yes.
    fn hits_points_or_lines(&self) -> bool {
        true
    }

    /// Called after the traversal: sorts the hits.
    fn end(&mut self) {}
}
