//! [`NodePathPool`]: the node-path vectors of an intersector's dropped hits, refilled
//! for its next hits.
//!
//! Every hit carries its node path as its own `Vec` (a plain, owned record for the
//! user). An intersector moved from query to query (`set_segment` and the like) drops
//! its last hits when the next traversal begins; their emptied vectors wait here, so
//! that a query repeated every frame stops allocating paths once its first hits are
//! made (callgrind, littlest_tokyo, all hits: 6 % of the query was malloc and free of
//! paths).

use crate::graph::NodeId;

/// The room a new node-path vector is made with, at least: a vector is reused for any
/// later hit's path, and one made to its first path's length grew (was reallocated)
/// whenever a longer one came (truck_town, whose paths differ in depth: a reallocation
/// of some 460 instructions in one sphere query of seven, 3 % of their time). Eight
/// ids, one cache line: room for 16 cost zdm2's all-hits segments ~2 % (more memory
/// between the hits' paths), 8 within the noise.
const PATH_ROOM: usize = 8;

/// Emptied node-path vectors, each with the room of a path it once held.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodePathPool {
    spare: Vec<Vec<NodeId>>,
}

impl NodePathPool {
    /// A copy of `path`, in a spare vector when one is left.
    #[inline]
    pub fn copy_of(&mut self, path: &[NodeId]) -> Vec<NodeId> {
        match self.spare.pop() {
            Some(mut spare) => {
                spare.extend_from_slice(path);
                spare
            }
            None => {
                let mut fresh = Vec::with_capacity(path.len().max(PATH_ROOM));
                fresh.extend_from_slice(path);
                fresh
            }
        }
    }

    /// Empties `hits`, keeping each hit's node-path vector (taken out by `node_path`),
    /// emptied, for a later [`copy_of`](Self::copy_of).
    #[inline]
    pub fn drop_hits<H>(&mut self, hits: &mut Vec<H>, node_path: impl Fn(H) -> Vec<NodeId>) {
        while let Some(hit) = hits.pop() {
            self.keep(node_path(hit));
        }
    }

    /// Keeps the node-path vector of a dropped hit, emptied, for a later
    /// [`copy_of`](Self::copy_of).
    #[inline]
    pub fn keep(&mut self, mut path: Vec<NodeId>) {
        path.clear();
        self.spare.push(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotmap::SlotMap;

    #[test]
    fn copies_reuse_recycled_vectors_emptied() {
        let mut ids: SlotMap<NodeId, ()> = SlotMap::with_key();
        let (a, b, c) = (ids.insert(()), ids.insert(()), ids.insert(()));
        let mut pool = NodePathPool::default();
        let first = pool.copy_of(&[a, b, c]);
        assert_eq!(first, [a, b, c]);
        let room = first.as_ptr();
        let mut hits = vec![(first, 1.0)];
        pool.drop_hits(&mut hits, |(path, _)| path);
        assert!(hits.is_empty());
        let second = pool.copy_of(&[c]);
        assert_eq!(second, [c], "the old contents are gone");
        assert_eq!(second.as_ptr(), room, "the recycled vector was reused");
        // Empty again: a new vector.
        assert_eq!(pool.copy_of(&[b, a]), [b, a]);
    }

    #[test]
    fn a_vector_made_for_a_short_path_takes_a_longer_one_in_place() {
        let mut ids: SlotMap<NodeId, ()> = SlotMap::with_key();
        let deep: Vec<NodeId> = (0..PATH_ROOM).map(|_| ids.insert(())).collect();
        let mut pool = NodePathPool::default();
        let short = pool.copy_of(&deep[..2]);
        let room = short.as_ptr();
        let mut hits = vec![short];
        pool.drop_hits(&mut hits, |path| path);
        let long = pool.copy_of(&deep);
        assert_eq!(long, deep);
        assert_eq!(long.as_ptr(), room, "not reallocated");
    }
}
