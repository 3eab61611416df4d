//! [`TransformInstances`]: for each node a matrix edit moved, the instances of a
//! [`SceneIndex`](super::SceneIndex) whose path goes through it, found at its first
//! edit and remembered, so that moving it again (a vehicle, every frame) does not read
//! every instance's path.

use std::collections::HashMap;

use super::scene_index::Instance;
use crate::graph::NodeId;

/// The instances under each node moved so far. Valid while the instances' paths do
/// not change: for one index (a rebuild makes a new one; refits keep the paths).
///
/// Only moved nodes are remembered: a table of every transform of every path took 2.3
/// bytes per triangle on the generated cities (paths of seven nodes, five of them
/// transforms), which the memory budget of 32 has no room for.
///
/// ```
/// use glam::{DMat4, DVec3, Vec3};
/// use scene_intersect::accel::TransformInstances;
/// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
/// use scene_intersect::graph::SceneGraph;
///
/// let mut scene = SceneGraph::new();
/// let root = scene.add_group("root");
/// let mover = scene.add_transform("mover", DMat4::from_translation(DVec3::X))?;
/// let triangle = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
/// let geode = scene.add_geode("triangle");
/// let drawable = scene.add_drawable("triangle", triangle);
/// scene.add_drawable_to_geode(geode, drawable)?;
/// scene.add_child(root, mover)?;
/// scene.add_child(mover, geode)?;
/// scene.add_child(root, geode)?; // the same geode once more, not under the mover
/// scene.build_acceleration();
/// let index = scene.scene_index(root).unwrap();
/// let mut under = TransformInstances::default();
/// // Two instances of the geode; the transform moves one of them.
/// assert_eq!(index.instances().len(), 2);
/// let moved = under.under(mover, index.instances()).to_vec();
/// assert_eq!(moved.len(), 1);
/// assert!(index.instances()[moved[0] as usize].path.contains(&mover));
/// assert_eq!(under.under(geode, index.instances()).len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransformInstances {
    found: HashMap<NodeId, Box<[u32]>>,
}

impl TransformInstances {
    /// The positions in `instances` of those whose path goes through `node`, in
    /// increasing order: looked for in every path the first time `node` is asked
    /// about, then remembered (`instances` must be the same each time).
    pub fn under(&mut self, node: NodeId, instances: &[Instance]) -> &[u32] {
        self.found.entry(node).or_insert_with(|| {
            (instances.iter().enumerate())
                .filter(|(_, instance)| instance.path.contains(&node))
                .map(|(k, _)| k as u32)
                .collect()
        })
    }

    /// Bytes it uses (the table's slots and the remembered lists).
    pub fn memory_bytes(&self) -> usize {
        self.found.capacity() * std::mem::size_of::<(NodeId, Box<[u32]>)>()
            + (self.found.values())
                .map(|k| k.len() * std::mem::size_of::<u32>())
                .sum::<usize>()
    }
}
