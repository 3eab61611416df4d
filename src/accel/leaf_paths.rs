//! [`LeafPaths`]: where every item's leaf sits in a [`WideBvh`] and the way from every
//! node up to the root, so that moving a few items refits only their leaves' paths
//! ([`LeafPaths::refit`]) instead of every node of the tree ([`WideBvh::refit`]).
//!
//! An edit changes the boxes of a handful of leaves: refitting a whole tree for it
//! reads every item's box (when every move refitted the whole tree over the 71 717
//! instances of the generated 1.9M-triangle city, up to two milliseconds a move).

use std::ops::Range;

use super::aabb::Aabb;
use super::wide_bvh::WideBvh;

/// A lane of a node, packed as `node << 2 | lane`.
type NodeLane = u32;

/// The root's entry in [`LeafPaths::parents`]: no lane holds it.
const ROOT: NodeLane = u32::MAX;

/// Unpacks a [`NodeLane`].
#[inline]
fn unpack(place: NodeLane) -> (usize, usize) {
    ((place >> 2) as usize, (place & 3) as usize)
}

/// Per item, the node lane holding its leaf; per node, the lane of its parent holding
/// it. Made for one tree; any rebuild of the tree needs a new one (a refit keeps it).
/// Given another tree, [`refit`](Self::refit) does not panic, but sets wrong boxes.
///
/// ```
/// use glam::Vec3;
/// use scene_intersect::accel::{Aabb, Bvh, LeafPaths, WideBvh};
///
/// let mut boxes: Vec<Aabb> = (0..100)
///     .map(|i| Aabb { min: Vec3::splat(i as f32), max: Vec3::splat(i as f32 + 1.0) })
///     .collect();
/// let (binary, order) = Bvh::build(&boxes);
/// let mut tree = WideBvh::from_binary(&binary);
/// let paths = LeafPaths::new(&tree, boxes.len());
/// // Move the item stored first far out, and refit its path alone.
/// let moved = order[0] as usize;
/// boxes[moved].max += Vec3::splat(1000.0);
/// let stored: Vec<Aabb> = order.iter().map(|&i| boxes[i as usize]).collect();
/// let leaf_box = |items: std::ops::Range<usize>| {
///     stored[items].iter().fold(Aabb::EMPTY, |mut b, s| { b.grow(s); b })
/// };
/// paths.refit(&mut tree, &[0], leaf_box);
/// assert_eq!(tree.bounds().max, boxes[moved].max);
/// assert!(tree.bounds().max.x > 1000.0);
/// // The same tree a refit of every node gives.
/// let mut whole = tree.clone();
/// whole.refit(leaf_box);
/// assert_eq!(tree, whole);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeafPaths {
    /// Per item (in the tree's leaf order), the lane of the leaf holding it.
    leaves: Vec<NodeLane>,
    /// Per node, the lane holding it ([`ROOT`] for the root).
    parents: Vec<NodeLane>,
}

impl LeafPaths {
    /// The leaves and parents of `tree`, over its `items` items (items no leaf holds
    /// are never refitted).
    pub fn new(tree: &WideBvh, items: usize) -> LeafPaths {
        let nodes = tree.nodes();
        let mut leaves = vec![ROOT; items];
        let mut parents = vec![ROOT; nodes.len()];
        for (index, node) in nodes.iter().enumerate() {
            for lane in (0..4).filter(|&lane| node.lanes() & 1 << lane != 0) {
                let place = (index as u32) << 2 | lane as u32;
                match node.child(lane) {
                    Ok(child) => {
                        if let Some(parent) = parents.get_mut(child as usize) {
                            *parent = place;
                        }
                    }
                    Err(range) => {
                        let end = range.end.min(items);
                        if let Some(slots) = leaves.get_mut(range.start.min(end)..end) {
                            slots.fill(place);
                        }
                    }
                }
            }
        }
        LeafPaths { leaves, parents }
    }

    /// After the items `moved` (positions in the tree's leaf order) moved: sets the box
    /// of each one's leaf to `leaf_box(its items)` and the boxes above it to the union of
    /// their children, up to the root or to the first box left unchanged (then nothing
    /// above it changes either). Returns how many boxes it set.
    ///
    /// The tree is then the one [`WideBvh::refit`] with the same `leaf_box` would give,
    /// provided no other item moved: boxes are unions, which are exact in `f32`.
    pub fn refit(
        &self,
        tree: &mut WideBvh,
        moved: &[u32],
        mut leaf_box: impl FnMut(Range<usize>) -> Aabb,
    ) -> usize {
        let mut set = 0;
        for &item in moved {
            let Some(&place) = self.leaves.get(item as usize) else {
                continue;
            };
            if place == ROOT {
                continue;
            }
            let (mut node, mut lane) = unpack(place);
            let Some(Err(items)) = tree.nodes().get(node).map(|n| n.child(lane)) else {
                continue;
            };
            let mut b = leaf_box(items);
            loop {
                if !tree.set_child_box(node, lane, &b) {
                    break;
                }
                set += 1;
                let Some(holder) = tree.nodes().get(node) else {
                    break;
                };
                b = holder.boxes.union(holder.lanes());
                match self.parents.get(node) {
                    Some(&parent) if parent != ROOT => (node, lane) = unpack(parent),
                    _ => {
                        tree.set_bounds(b);
                        break;
                    }
                }
            }
        }
        set
    }

    /// Bytes it uses.
    pub fn memory_bytes(&self) -> usize {
        (self.leaves.len() + self.parents.len()) * std::mem::size_of::<NodeLane>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::Bvh;
    use glam::Vec3;

    /// `n` boxes on a wobbly grid (deterministic).
    fn grid(n: usize) -> Vec<Aabb> {
        (0..n)
            .map(|i| {
                let min = Vec3::new((i % 37) as f32 * 3.0, (i / 37) as f32 * 2.0, (i % 5) as f32);
                Aabb {
                    min,
                    max: min + Vec3::new(1.0, 1.5, 0.5),
                }
            })
            .collect()
    }

    fn union_of(stored: &[Aabb], items: Range<usize>) -> Aabb {
        let mut b = Aabb::EMPTY;
        stored[items].iter().for_each(|s| b.grow(s));
        b
    }

    /// The tree's depth (nodes on the longest root-to-leaf path).
    fn depth(tree: &WideBvh, node: usize) -> usize {
        let n = &tree.nodes()[node];
        1 + (0..4)
            .filter(|&lane| n.lanes() & 1 << lane != 0)
            .filter_map(|lane| n.child(lane).ok())
            .map(|child| depth(tree, child as usize))
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn refitting_the_paths_of_moved_items_gives_the_whole_refit_and_touches_only_them() {
        let boxes = grid(3000);
        let (binary, order) = Bvh::build(&boxes);
        let mut stored: Vec<Aabb> = order.iter().map(|&i| boxes[i as usize]).collect();
        let mut tree = WideBvh::from_binary(&binary);
        let paths = LeafPaths::new(&tree, stored.len());
        let levels = depth(&tree, 0);
        assert!(levels >= 4, "a tree of some depth ({levels})");
        for (round, moved) in [[17u32, 18, 2500], [0, 1500, 2999], [17, 17, 42]]
            .into_iter()
            .enumerate()
        {
            // Move them away (and, the last round, back in and shrunk).
            for &m in &moved {
                let s = &mut stored[m as usize];
                let shift = Vec3::new(0.0, 500.0 * (1.0 - round as f32), 7.0);
                *s = Aabb {
                    min: s.min + shift,
                    max: s.max + shift - Vec3::splat(0.25 * round as f32),
                };
            }
            let mut whole = tree.clone();
            whole.refit(|items| union_of(&stored, items));
            let set = paths.refit(&mut tree, &moved, |items| union_of(&stored, items));
            assert_eq!(tree, whole, "round {round}");
            // Each moved item sets at most one box per level, the whole tree far more.
            assert!(
                set >= 1 && set <= moved.len() * levels,
                "round {round}: {set}"
            );
            assert!(set * 20 < tree.nodes().len());
        }
        // Nothing moved: nothing set.
        let before = tree.clone();
        assert_eq!(
            paths.refit(&mut tree, &[3, 4], |items| union_of(&stored, items)),
            0
        );
        assert_eq!(tree, before);
    }

    #[test]
    fn items_outside_the_tree_and_empty_trees_are_left_alone() {
        let mut empty = WideBvh::default();
        let paths = LeafPaths::new(&empty, 0);
        assert_eq!(paths.refit(&mut empty, &[0, 7], |_| Aabb::EMPTY), 0);
        assert_eq!(empty, WideBvh::default());
        // A tree of one leaf: its root holds it; moving its item sets the root's lane.
        let boxes = grid(3);
        let (binary, _) = Bvh::build(&boxes);
        let mut tree = WideBvh::from_binary(&binary);
        let paths = LeafPaths::new(&tree, 3);
        let far = Aabb {
            min: Vec3::splat(-9.0),
            max: Vec3::splat(9.0),
        };
        assert_eq!(paths.refit(&mut tree, &[1, 99], |_| far), 1);
        assert_eq!(tree.bounds(), far);
    }
}
