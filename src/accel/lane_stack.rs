//! [`LaneStack`]: what a depth-first walk of four-wide nodes has yet to enter, kept a
//! node at a time (the node and the lanes still to go into) instead of a child at a
//! time.
//!
//! Pushing children one by one wrote four entries a node and moved the length past
//! those wanted, then popped one of them: ~33 instructions a node, 5 % of an all-hits
//! segment on littlest_tokyo (callgrind). Here a node goes on once with its lanes, and
//! the next child is the top's lowest lane, read from the node: ~0.9 % fewer
//! instructions for those segments (spheres +0.2 %), and still no branch on the lanes.
//! (Keeping the node's four references on the stack instead, so as not to read them
//! again, saved 1.2 % there but made the stack too big to set up for the small walks
//! of spheres: +0.5 % for them.)
//!
//! The walk's order changes (the lowest lane first, where it was the highest), which no
//! depth-first walk relies on: every hit is kept and the hits are put in order at the
//! end.

use super::walk_stack::WalkStack;

/// One node's children still to enter.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    node: u32,
    /// Bit `k` for lane `k` still to enter; never 0 in a kept entry.
    lanes: u32,
}

/// A stack of nodes' children still to enter, kept in a [`WalkStack`]: one node per
/// level a walk descends with children left over. (No walk, all-hit segments and
/// spheres, of littlest_tokyo, zdm2, truck_town, city or city_s10 keeps more than 16;
/// those of littlest_tokyo and city_s10 keep at most 9. Its inline room is set up by
/// every walk: 32 nodes with their four references each, zeroed by a call to
/// `memset`, cost a sphere on littlest_tokyo, some 4 000 instructions, ~1 %.)
#[derive(Clone, Debug, Default)]
pub(crate) struct LaneStack(WalkStack<Pending>);

impl LaneStack {
    /// An empty stack.
    #[inline(always)]
    pub fn new() -> Self {
        LaneStack(WalkStack::new())
    }

    /// Keeps the lanes of `node` set in `lanes` (bits 0 to 3; nothing kept for 0),
    /// without a branch on the lanes while the inline room lasts.
    #[inline(always)]
    pub fn push(&mut self, node: u32, lanes: u32) {
        self.0.push_if(Pending { node, lanes }, lanes != 0);
    }

    /// Takes the next child to enter: the node pushed last and its lowest lane left
    /// (the node leaves the stack with its last lane); `None` when none is left.
    #[inline(always)]
    pub fn next(&mut self) -> Option<(u32, usize)> {
        self.0.take_from_top(|top| {
            let lane = (top.lanes.trailing_zeros() & 3) as usize;
            top.lanes &= top.lanes.wrapping_sub(1);
            ((top.node, lane), top.lanes == 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::walk_stack::INLINE;
    use super::*;

    #[test]
    fn lanes_come_out_lowest_first_the_last_node_first() {
        let mut stack = LaneStack::new();
        stack.push(1, 0b1010);
        stack.push(2, 0);
        stack.push(3, 0b1101);
        let taken: Vec<(u32, usize)> = std::iter::from_fn(|| stack.next()).collect();
        assert_eq!(taken, [(3, 0), (3, 2), (3, 3), (1, 1), (1, 3)]);
    }

    #[test]
    fn deep_stacks_spill_and_come_back_in_order() {
        // More nodes than the inline room, some with nothing to enter, some taken from
        // between pushes.
        let mut stack = LaneStack::new();
        let mut expected: Vec<Vec<(u32, usize)>> = Vec::new();
        let mut taken = Vec::new();
        let mut wanted = Vec::new();
        for round in 0..200u32 {
            let lanes = [0b1010, 0, 0b1111, 0b0001, 0b0110][round as usize % 5];
            stack.push(round, lanes);
            let kept: Vec<(u32, usize)> = (0..4)
                .filter(|k| lanes & (1 << k) != 0)
                .map(|k| (round, k))
                .collect();
            if !kept.is_empty() {
                expected.push(kept);
            }
            if round % 7 == 0 {
                taken.push(stack.next());
                let top = expected.last_mut().map(|top| top.remove(0));
                if expected.last().is_some_and(|top| top.is_empty()) {
                    expected.pop();
                }
                wanted.push(top);
            }
        }
        assert!(expected.len() > INLINE);
        assert_eq!(taken, wanted);
        let rest: Vec<(u32, usize)> = std::iter::from_fn(|| stack.next()).collect();
        let wanted: Vec<(u32, usize)> = expected.into_iter().rev().flatten().collect();
        assert_eq!(rest, wanted);
    }
}
