//! Answering many queries in parallel against one `&SceneGraph`.

use rayon::prelude::*;

use super::{IntersectionVisitor, Intersector};
use crate::graph::{NodeId, SceneGraph};
use crate::intersectors::QueryError;

impl IntersectionVisitor {
    /// Runs every intersector over the subgraph under `root`, in parallel on the current
    /// rayon pool (wrap the call in `pool.install(..)` to choose the threads). Each worker
    /// uses a copy of this visitor's settings; the hits stay in the intersectors, in
    /// input order, identical to running them one by one with [`apply`](Self::apply).
    ///
    /// ```
    /// use scene_intersect::prelude::*;
    /// use glam::DVec3;
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("empty");
    /// let mut queries: Vec<LineSegmentIntersector> = (0..100)
    ///     .map(|i| LineSegmentIntersector::new(DVec3::ZERO, DVec3::new(i as f64 + 1.0, 0.0, 0.0)))
    ///     .collect::<Result<_, _>>()?;
    /// let results = IntersectionVisitor::new().apply_batch(&scene, root, &mut queries);
    /// assert!(results.iter().all(|r| r.is_ok()));
    /// # Ok::<(), QueryError>(())
    /// ```
    pub fn apply_batch<I: Intersector + Send>(
        &self,
        scene: &SceneGraph,
        root: NodeId,
        intersectors: &mut [I],
    ) -> Vec<Result<(), QueryError>> {
        intersectors
            .par_iter_mut()
            .map_init(|| self.clone(), |visitor, i| visitor.apply(scene, root, i))
            .collect()
    }
}
