//! [`WholeVisits`]: an intersector answered as the visitor answers a custom one, shared
//! by `tests/world_tree.rs` and `support/reference.rs` (which include this file by
//! path).

use glam::DMat4;
use scene_intersect::accel::{Aabb, Aabb4, WideEntries};
use scene_intersect::bounding::{BoundingBox, BoundingSphere};
use scene_intersect::drawable::Drawable;
use scene_intersect::graph::DrawableId;
use scene_intersect::intersectors::QueryError;
use scene_intersect::visitor::{DrawableContext, FrameContext, Intersector};

/// `inner` with every method passed on but
/// [`intersect_index`](Intersector::intersect_index), left to the trait's default (no
/// walk of its own): so the visitor visits every instance whole, from the tree over the
/// instances and the tree of those detached by moves and edits, culled by `inner`'s
/// own world-box tests (a stale box there would hide an instance from it). Records the
/// drawables it visits.
pub struct WholeVisits<I> {
    pub inner: I,
    pub visits: Vec<DrawableId>,
}

impl<I> WholeVisits<I> {
    /// `inner`, no drawable visited yet.
    pub fn new(inner: I) -> Self {
        WholeVisits {
            inner,
            visits: Vec::new(),
        }
    }
}

impl<I: Intersector> Intersector for WholeVisits<I> {
    type Local = I::Local;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        self.inner.begin(frames)
    }
    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> Self::Local {
        self.inner.localize(local_to_world, world_to_local)
    }
    fn enter_node(&self, local: &Self::Local, bound: &BoundingSphere) -> bool {
        self.inner.enter_node(local, bound)
    }
    fn enter_drawable(&self, local: &Self::Local, bound: &BoundingBox) -> bool {
        self.inner.enter_drawable(local, bound)
    }
    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        self.inner.begin_world_boxes(scene_bounds)
    }
    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        self.inner.enter_world_box(bound)
    }
    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        self.inner.enter_world_boxes(boxes)
    }
    fn orders_world_boxes(&self) -> bool {
        self.inner.orders_world_boxes()
    }
    fn world_limit(&self) -> f64 {
        self.inner.world_limit()
    }
    fn intersect(
        &mut self,
        local: &Self::Local,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        self.visits.push(context.drawable);
        self.inner.intersect(local, context, drawable)
    }
    fn reached_limit(&self) -> bool {
        self.inner.reached_limit()
    }
    fn drawable_test_only_culls(&self) -> bool {
        self.inner.drawable_test_only_culls()
    }
    fn drawable_test_follows_from_hits(&self, local: &Self::Local, bound: &BoundingBox) -> bool {
        self.inner.drawable_test_follows_from_hits(local, bound)
    }
    fn hits_points_or_lines(&self) -> bool {
        self.inner.hits_points_or_lines()
    }
    fn end(&mut self) {
        // (Through the trait: a segment's own `end` is its end point.)
        Intersector::end(&mut self.inner)
    }
}
