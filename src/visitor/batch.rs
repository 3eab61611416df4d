//! Answering many queries in parallel against one `&SceneGraph`.
//!
//! Two forms: [`IntersectionVisitor::apply_batch`] runs intersectors the caller made and
//! leaves every hit in them; [`IntersectionVisitor::map_batch`] moves one intersector per
//! worker from query to query and keeps only what the caller takes of each answer, so a
//! batch of any size holds a single set of full hit records per worker at a time.

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

    /// Answers `queries` in parallel on the current rayon pool and returns, in input
    /// order, what `keep` takes of each answered intersector (or the query's error).
    ///
    /// Each worker makes one intersector, with `make`, for its first query, then moves it
    /// from query to query with `move_to` (typically `set_segment`, `set_polytope` or
    /// `set_sphere`; a query `move_to` refuses leaves it as it was). Hits, node paths and
    /// scratch space are then reused instead of allocated per query, and only what
    /// `keep` takes outlives a query: for big batches (tens of thousands of queries, each
    /// with its full hit records) this is both less memory and, on a first pass over
    /// fresh memory, much less time than [`apply_batch`](Self::apply_batch) (10 000
    /// segments across littlest_tokyo, every hit kept as its triangle: 28 ms instead of
    /// 68 on one thread, the page faults of the full records gone). The answers are
    /// those of [`apply`](Self::apply) on a new intersector made for each query.
    ///
    /// ```
    /// use scene_intersect::prelude::*;
    /// use glam::{DVec3, Vec3};
    ///
    /// // A unit square in the plane y = 0.
    /// let square = Geometry::new(vec![
    ///     Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0),
    ///     Vec3::new(1.0, 0.0, 1.0), Vec3::new(0.0, 0.0, 1.0),
    /// ])
    /// .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))?;
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_geode("square");
    /// let id = scene.add_drawable("square", square);
    /// scene.add_drawable_to_geode(root, id)?;
    ///
    /// // Vertical picks at x = 0.25, 0.75, ..., 1.75: the first two hit the square.
    /// let picks: Vec<(DVec3, DVec3)> = (0..4)
    ///     .map(|k| {
    ///         let x = 0.25 + 0.5 * k as f64;
    ///         (DVec3::new(x, 1.0, 0.5), DVec3::new(x, -1.0, 0.5))
    ///     })
    ///     .collect();
    /// let ratios = IntersectionVisitor::new().map_batch(
    ///     &scene,
    ///     root,
    ///     &picks,
    ///     |&(start, end)| LineSegmentIntersector::new(start, end),
    ///     |picker, &(start, end)| picker.set_segment(start, end),
    ///     |answered| answered.intersections().iter().map(|hit| hit.ratio).collect::<Vec<_>>(),
    /// );
    /// let ratios: Vec<Vec<f64>> = ratios.into_iter().collect::<Result<_, _>>()?;
    /// assert_eq!(ratios, [vec![0.5], vec![0.5], vec![], vec![]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn map_batch<Q, I, R>(
        &self,
        scene: &SceneGraph,
        root: NodeId,
        queries: &[Q],
        make: impl Fn(&Q) -> Result<I, QueryError> + Sync,
        move_to: impl Fn(&mut I, &Q) -> Result<(), QueryError> + Sync,
        keep: impl Fn(&I) -> R + Sync,
    ) -> Vec<Result<R, QueryError>>
    where
        Q: Sync,
        I: Intersector + Send,
        R: Send,
    {
        queries
            .par_iter()
            .map_init(
                || (self.clone(), None),
                |(visitor, worker), query| {
                    // Moved in place: an intersector is a kilobyte or more.
                    let intersector = match worker {
                        Some(intersector) => {
                            move_to(intersector, query)?;
                            intersector
                        }
                        None => worker.insert(make(query)?),
                    };
                    visitor.apply(scene, root, intersector)?;
                    Ok(keep(intersector))
                },
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use glam::{DVec3, Vec3};

    use super::*;
    use crate::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    use crate::intersectors::LineSegmentIntersector;

    /// A 4 × 4 grid of unit squares in the plane y = 0, x and z in [0, 4].
    fn floor() -> (SceneGraph, NodeId) {
        let mut vertices = Vec::new();
        for z in 0..5 {
            for x in 0..5 {
                vertices.push(Vec3::new(x as f32, 0.0, z as f32));
            }
        }
        let mut indices = Vec::new();
        for z in 0..4u32 {
            for x in 0..4u32 {
                let corner = z * 5 + x;
                indices.extend([corner, corner + 1, corner + 6, corner + 5]);
            }
        }
        let quads = PrimitiveSet::draw_elements_u32(PrimitiveMode::Quads, indices);
        let floor = Geometry::new(vertices).with_primitive_set(quads).unwrap();
        let mut scene = SceneGraph::new();
        let root = scene.add_geode("floor");
        let id = scene.add_drawable("floor", floor);
        scene.add_drawable_to_geode(root, id).unwrap();
        (scene, root)
    }

    #[test]
    fn one_worker_moves_one_intersector_and_answers_as_new_ones() {
        let (scene, root) = floor();
        // Downward picks over a 6 × 6 lattice of points; the outer ring misses, and the
        // third is zero-length, which `make` and `move_to` refuse alike.
        let mut picks: Vec<(DVec3, DVec3)> = (0..36)
            .map(|k| {
                let (x, z) = ((k % 6) as f64 - 0.5, (k / 6) as f64 - 0.5);
                (DVec3::new(x, 2.0, z), DVec3::new(x, -2.0, z))
            })
            .collect();
        picks[2].1 = picks[2].0;
        let made = AtomicUsize::new(0);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let visitor = IntersectionVisitor::new();
        let answers = pool.install(|| {
            visitor.map_batch(
                &scene,
                root,
                &picks,
                |&(a, b)| {
                    made.fetch_add(1, Ordering::Relaxed);
                    LineSegmentIntersector::new(a, b)
                },
                |picker, &(a, b)| picker.set_segment(a, b),
                |picker| picker.intersections().to_vec(),
            )
        });
        let made = made.load(Ordering::Relaxed);
        assert!(made < 4, "one worker reuses its intersector: {made} made");
        let mut hits = 0;
        for (answer, &(a, b)) in answers.iter().zip(&picks) {
            let mut fresh = match LineSegmentIntersector::new(a, b) {
                Ok(fresh) => fresh,
                Err(error) => {
                    assert_eq!(answer.as_ref().err(), Some(&error));
                    continue;
                }
            };
            IntersectionVisitor::new()
                .apply(&scene, root, &mut fresh)
                .unwrap();
            let answer = answer.as_ref().unwrap();
            assert_eq!(answer.len(), fresh.intersections().len());
            for (kept, new) in answer.iter().zip(fresh.intersections()) {
                assert_eq!(
                    (kept.ratio, kept.world_point, kept.primitive_index),
                    (new.ratio, new.world_point, new.primitive_index)
                );
            }
            hits += answer.len();
        }
        // The 16 inner points are the squares' centres, on the diagonal each square's two
        // triangles share: both are hit (edges count).
        assert_eq!(hits, 16 * 2);
    }
}
