//! [`EditedInstances`]: for each node a matrix edit moved and each drawable edited, the
//! instances of a [`SceneIndex`](super::SceneIndex) it changes, found at its first edit
//! and remembered, so that editing it again (moving a vehicle, every frame) does not
//! read every instance.

use std::collections::HashMap;

use super::scene_index::Instance;
use crate::graph::{DrawableId, NodeId};

/// The instances under each node moved so far, and those of each drawable edited so
/// far. Valid while the instances do not change: for one index (a rebuild makes a new
/// one; refits keep the paths and drawables; a restructured index starts a new one).
///
/// Only edited nodes and drawables are remembered: a table of every transform of every
/// path took 2.3 bytes per triangle on the generated cities (paths of seven nodes, five
/// of them transforms), which the memory budget of 32 has no room for.
///
/// ```
/// use glam::{DMat4, DVec3, Vec3};
/// use scene_intersect::accel::EditedInstances;
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
/// let mut edited = EditedInstances::default();
/// // Two instances of the geode; the transform moves one of them.
/// assert_eq!(index.instances().len(), 2);
/// let moved = edited.under(mover, index.instances()).to_vec();
/// assert_eq!(moved.len(), 1);
/// assert!(index.instances()[moved[0] as usize].path.contains(&mover));
/// assert_eq!(edited.under(geode, index.instances()).len(), 2);
/// // Editing the drawable changes both.
/// assert_eq!(edited.of_drawable(drawable, index.instances()), [0, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditedInstances {
    under: HashMap<NodeId, Box<[u32]>>,
    of_drawable: HashMap<DrawableId, Box<[u32]>>,
}

impl EditedInstances {
    /// The positions in `instances` of those whose path goes through `node`, in
    /// increasing order: looked for in every path the first time `node` is asked
    /// about, then remembered (`instances` must be the same each time).
    pub fn under(&mut self, node: NodeId, instances: &[Instance]) -> &[u32] {
        self.under
            .entry(node)
            .or_insert_with(|| positions(instances, |i| i.path.contains(&node)))
    }

    /// The positions in `instances` of those of `drawable`, in increasing order: looked
    /// for among all the first time `drawable` is asked about, then remembered.
    pub fn of_drawable(&mut self, drawable: DrawableId, instances: &[Instance]) -> &[u32] {
        self.of_drawable
            .entry(drawable)
            .or_insert_with(|| positions(instances, |i| i.drawable == drawable))
    }

    /// Bytes it uses (the tables' slots and the remembered lists).
    pub fn memory_bytes(&self) -> usize {
        table_bytes(&self.under) + table_bytes(&self.of_drawable)
    }
}

/// Bytes of a table of remembered lists: its slots and the lists.
fn table_bytes<K>(table: &HashMap<K, Box<[u32]>>) -> usize {
    let lists: usize = table.values().map(|k| k.len()).sum();
    table.capacity() * std::mem::size_of::<(K, Box<[u32]>)>() + lists * std::mem::size_of::<u32>()
}

/// The positions in `instances` of those `wanted` picks (never a removed one: no edit
/// changes what is no longer in the graph).
fn positions(instances: &[Instance], wanted: impl Fn(&Instance) -> bool) -> Box<[u32]> {
    (instances.iter().enumerate())
        .filter(|(_, instance)| !instance.removed && wanted(instance))
        .map(|(k, _)| k as u32)
        .collect()
}
