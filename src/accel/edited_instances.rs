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

    /// Remembers the instances through each of `nodes` not remembered yet, reading
    /// every path once for all of them (as [`under`](Self::under) would for each).
    pub fn remember_under(&mut self, nodes: &[NodeId], instances: &[Instance]) {
        let new: std::collections::HashSet<NodeId> = (nodes.iter().copied())
            .filter(|node| !self.under.contains_key(node))
            .collect();
        if new.len() < 2 {
            // One node or none: `under` reads the paths as fast.
            return;
        }
        let mut found: HashMap<NodeId, Vec<u32>> = new.iter().map(|&n| (n, Vec::new())).collect();
        for (k, instance) in instances.iter().enumerate() {
            if instance.removed {
                continue;
            }
            for node in instance.path.iter() {
                if let Some(list) = found.get_mut(node) {
                    list.push(k as u32);
                }
            }
        }
        for (node, mut list) in found {
            // (A node twice on one path would list its instance twice.)
            list.dedup();
            self.under.insert(node, list.into_boxed_slice());
        }
    }

    /// The positions in `instances` of those of `drawable`, in increasing order: looked
    /// for among all the first time `drawable` is asked about, then remembered.
    pub fn of_drawable(&mut self, drawable: DrawableId, instances: &[Instance]) -> &[u32] {
        self.of_drawable
            .entry(drawable)
            .or_insert_with(|| positions(instances, |i| i.drawable == drawable))
    }

    /// Follows a structural edit of `instances` (see
    /// [`SceneIndex::restructure`](super::SceneIndex::restructure)): the positions
    /// `removed` (instances now removed) leave every remembered list, and the positions
    /// `added` (instances new there) join the lists remembered for the nodes on their
    /// paths and for their drawables. The nodes for which `fresh` is true, on no path of
    /// the instances before the edit, are remembered from then on with the added
    /// instances through them (none other goes through them), so that taking away
    /// again what an edit added needs no search either.
    ///
    /// The tables are a cache: when their lists hold more than four positions per
    /// instance (and 4 096 more), they are emptied, and later questions look again.
    ///
    /// ```
    /// use glam::{DMat4, DVec3, Vec3};
    /// use scene_intersect::accel::EditedInstances;
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    /// use scene_intersect::graph::SceneGraph;
    ///
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("root");
    /// let triangle = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
    /// let drawable = scene.add_drawable("triangle", triangle);
    /// let mut mover = || -> Result<_, Box<dyn std::error::Error>> {
    ///     let t = scene.add_transform("mover", DMat4::from_translation(DVec3::X))?;
    ///     let geode = scene.add_geode("triangle");
    ///     scene.add_drawable_to_geode(geode, drawable)?;
    ///     scene.add_child(t, geode)?;
    ///     scene.add_child(root, t)?;
    ///     Ok(t)
    /// };
    /// let (first, second) = (mover()?, mover()?);
    /// scene.build_acceleration();
    /// let index = scene.scene_index(root).unwrap();
    /// let mut edited = EditedInstances::default();
    /// assert_eq!(edited.under(root, index.instances()), [0, 1]);
    /// let at_first = edited.under(first, index.instances())[0];
    /// // As if the first mover's instance were removed and one added in its place
    /// // under the second, fresh, mover.
    /// let mut instances = index.instances().to_vec();
    /// instances[at_first as usize].path = Box::new([root, second]);
    /// edited.follow(&[at_first], &[at_first], &instances, |node| node == second);
    /// assert_eq!(edited.under(root, &instances), [0, 1]);
    /// assert!(edited.under(first, &instances).is_empty());
    /// assert_eq!(edited.under(second, &instances), [at_first]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn follow(
        &mut self,
        removed: &[u32],
        added: &[u32],
        instances: &[Instance],
        fresh: impl Fn(NodeId) -> bool,
    ) {
        let mut gone = removed.to_vec();
        gone.sort_unstable();
        if !gone.is_empty() {
            for list in (self.under.values_mut()).chain(self.of_drawable.values_mut()) {
                if list.iter().any(|k| gone.binary_search(k).is_ok()) {
                    *list = (list.iter().copied())
                        .filter(|k| gone.binary_search(k).is_err())
                        .collect();
                }
            }
        }
        let mut joining: HashMap<NodeId, Vec<u32>> = HashMap::new();
        let mut joining_drawables: HashMap<DrawableId, Vec<u32>> = HashMap::new();
        for &k in added {
            let Some(instance) = instances.get(k as usize) else {
                continue;
            };
            for &node in instance.path.iter() {
                if self.under.contains_key(&node) || fresh(node) {
                    joining.entry(node).or_default().push(k);
                }
            }
            if self.of_drawable.contains_key(&instance.drawable) {
                joining_drawables
                    .entry(instance.drawable)
                    .or_default()
                    .push(k);
            }
        }
        join(&mut self.under, joining);
        join(&mut self.of_drawable, joining_drawables);
        let held: usize = (self.under.values())
            .chain(self.of_drawable.values())
            .map(|list| list.len())
            .sum();
        if held > 4 * instances.len() + 4096 {
            *self = EditedInstances::default();
        }
    }

    /// Bytes it uses (the tables' slots and the remembered lists).
    pub fn memory_bytes(&self) -> usize {
        table_bytes(&self.under) + table_bytes(&self.of_drawable)
    }
}

/// Merges the positions `joining` into the lists of `table` (made for keys it lacks),
/// each kept in increasing order.
fn join<K: std::hash::Hash + Eq>(
    table: &mut HashMap<K, Box<[u32]>>,
    joining: HashMap<K, Vec<u32>>,
) {
    for (key, mut positions) in joining {
        let list = table.entry(key).or_default();
        positions.extend_from_slice(list);
        positions.sort_unstable();
        positions.dedup();
        *list = positions.into_boxed_slice();
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
