//! Counting the triangles a scene places: each mesh as often as the scene index places
//! it, as a flattened copy of the scene would hold it (the measure the memory budget is
//! stated in).
//!
//! Shared by the `accel_stats` example and by `tests/memory_budget.rs`
//! (`#[path]`-included), so it only uses the library's public API.

use std::collections::HashMap;

use glam::Vec3;
use scene_intersect::drawable::PrimitiveFunctor;
use scene_intersect::prelude::*;

/// Counts the triangles a drawable decomposes into.
struct CountTriangles(usize);

impl PrimitiveFunctor for CountTriangles {
    fn triangle(&mut self, _: [Vec3; 3], _: [u32; 3], _: u32) {
        self.0 += 1;
    }
}

/// The triangles of every instance of the scene index under `root` (0 without one),
/// each drawable decomposed once; points and lines are not counted. Builds nothing: a
/// drawable's BVH is not asked for.
pub fn instanced_triangles(scene: &SceneGraph, root: NodeId) -> usize {
    let Some(index) = scene.scene_index(root) else {
        return 0;
    };
    let mut per_drawable = HashMap::new();
    index
        .instances()
        .iter()
        .map(|i| {
            *per_drawable.entry(i.drawable).or_insert_with(|| {
                let mut count = CountTriangles(0);
                if let Some(d) = scene.drawable(i.drawable) {
                    d.accept(&mut count);
                }
                count.0
            })
        })
        .sum()
}
