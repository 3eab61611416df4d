//! [`WideBvh`]: a [`Bvh`] collapsed to four children per node, their boxes side by side
//! ([`Aabb4`]) so that a query tests all four with one set of SIMD operations.
//!
//! The binary tree is built by the SAH as before; collapsing it keeps its leaves and
//! lifts grandchildren into their grandparent (largest box first) until a node has four
//! children, as Embree's BVH4 does. A walk then visits about half as many nodes, each
//! for one wide test instead of two scalar ones, and the tree takes less memory than
//! the binary one (a 112-byte node per two to three leaves, against two 28-byte nodes
//! per leaf). The scene index's two trees are wide: every query walks one of them.

use std::ops::Range;

use glam::Vec4;
use smallvec::SmallVec;

use super::aabb::Aabb;
use super::aabb4::{Aabb4, WideEntries};
use super::bvh::{Bvh, OrderedVisitor};
use super::walk_stack::sort_four_descending;

/// Bits of a child reference holding a leaf's first item or a node's index; the top
/// four hold a leaf's item count (0 for a node), as in [`BvhNode`](super::BvhNode).
const FIRST_BITS: u32 = 28;
const FIRST_MASK: u32 = (1 << FIRST_BITS) - 1;

/// One node: up to four children, each a leaf (an item range) or another node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideNode {
    /// The children's boxes (unused lanes: empty boxes).
    pub boxes: Aabb4,
    /// Per lane: `first | count << 28` for a leaf of `count` items, the node's index
    /// for a node (count 0), [`NO_CHILD`] for an unused lane (lanes fill from the first).
    children: [u32; 4],
}

/// An unused lane's child reference (a count of 15: no leaf holds that many items).
const NO_CHILD: u32 = u32::MAX;

impl WideNode {
    /// Bit `k` set when lane `k` holds a child. (Derived from the references rather
    /// than stored: a stored mask would make the node 128 bytes instead of 112, and
    /// the generated city's index would go over 32 bytes per triangle.)
    #[inline]
    pub fn lanes(&self) -> u32 {
        // One SIMD compare for the four references: read as `f32` bits, `NO_CHILD` is a
        // NaN and no reference is (a NaN needs bits 23 to 30 set, and bit 27 of a
        // reference is clear: `first` stays below 2^27, `MAX_BVH_ITEMS`).
        let bits = Vec4::from_array(self.children.map(f32::from_bits));
        !bits.is_nan_mask().bitmask() & 0b1111
    }

    /// Child `lane`: `Ok(node index)` or `Err(leaf item range)`.
    ///
    /// # Panics
    ///
    /// When `lane` is 4 or more.
    #[inline]
    pub fn child(&self, lane: usize) -> Result<u32, Range<usize>> {
        child_of(self.children[lane])
    }
}

/// The lanes of `lanes` ordered by their keys, the largest first, equal keys the
/// higher lane first (so that, pushed in this order, the left one comes off a stack
/// first), and how many there are.
///
/// Sorted without a branch on the keys by [`sort_four_descending`], as integer codes:
/// the key's bits made to order as the keys do (any key but NaN; -0 as +0), then the
/// lane; 0 for the lanes left out.
#[inline(always)]
fn farthest_first(lanes: u32, keys: &[f32; 4]) -> ([usize; 4], usize) {
    let code = |lane: usize| {
        // (`+ 0.0`: -0 is +0, as the comparisons take it.)
        let bits = (keys[lane] + 0.0).to_bits();
        // Negative keys order backwards as integers: flip them, and put the others
        // above them.
        let ordered = if bits >> 31 == 1 {
            !bits
        } else {
            bits | 1 << 31
        };
        let on = u64::from((lanes >> lane) & 1).wrapping_neg();
        ((u64::from(ordered) + 1) << 2 | lane as u64) & on
    };
    let mut codes = [code(0), code(1), code(2), code(3)];
    sort_four_descending(&mut codes);
    (codes.map(|c| (c & 3) as usize), lanes.count_ones() as usize)
}

/// Decodes a child reference.
#[inline(always)]
fn child_of(reference: u32) -> Result<u32, Range<usize>> {
    let count = reference >> FIRST_BITS;
    let first = (reference & FIRST_MASK) as usize;
    if count == 0 {
        Ok(first as u32)
    } else {
        Err(first..first + count as usize)
    }
}

/// A hierarchy of four children per node over items stored in leaf order.
///
/// ```
/// use glam::Vec3;
/// use scene_intersect::accel::{Aabb, Bvh, WideBvh};
///
/// let boxes: Vec<Aabb> = (0..100)
///     .map(|i| Aabb { min: Vec3::splat(i as f32), max: Vec3::splat(i as f32 + 1.0) })
///     .collect();
/// let (binary, order) = Bvh::build(&boxes);
/// let wide = WideBvh::from_binary(&binary);
/// assert_eq!(wide.bounds(), binary.bounds());
/// // Every item is in exactly one leaf.
/// let mut seen = vec![0; 100];
/// wide.for_each_leaf(|_| true, |items| items.for_each(|i| seen[order[i] as usize] += 1));
/// assert!(seen.iter().all(|&n| n == 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WideBvh {
    /// The box of everything (the root's box).
    bounds: Aabb,
    /// The length of the diagonal of `bounds` ([`Aabb::diagonal`]), which queries pad
    /// their tests of the tree with: kept, not a square root per visit.
    diagonal: f64,
    /// Nodes, the root's children first (`nodes[0]`); a node's children come after it.
    nodes: Vec<WideNode>,
}

impl Default for WideBvh {
    /// The empty tree.
    fn default() -> Self {
        WideBvh {
            bounds: Aabb::EMPTY,
            diagonal: Aabb::EMPTY.diagonal(),
            nodes: Vec::new(),
        }
    }
}

impl WideBvh {
    /// Collapses a binary tree: the same leaves (the same item ranges), at most four
    /// children per node.
    pub fn from_binary(binary: &Bvh) -> WideBvh {
        let Some(root) = binary.nodes.first() else {
            return WideBvh::default();
        };
        let empty = WideNode {
            boxes: Aabb4::EMPTY,
            children: [NO_CHILD; 4],
        };
        let mut nodes = vec![empty];
        // (wide node to fill, binary node whose children it gets)
        let mut work = vec![(0usize, 0u32)];
        while let Some((wide, index)) = work.pop() {
            let node = &binary.nodes[index as usize];
            // The binary nodes whose subtrees become this node's children, left to
            // right: a leaf root is its own only child.
            let mut lanes: SmallVec<[u32; 4]> = if node.is_leaf() {
                SmallVec::from_slice(&[index])
            } else {
                SmallVec::from_slice(&[node.first(), node.first() + 1])
            };
            while lanes.len() < 4 {
                // Open the interior child with the largest box.
                let widest = lanes
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| !binary.nodes[n as usize].is_leaf())
                    .max_by(|(_, &a), (_, &b)| {
                        let area = |n: u32| binary.nodes[n as usize].bounds.half_area();
                        area(a).total_cmp(&area(b))
                    })
                    .map(|(k, _)| k);
                let Some(k) = widest else { break };
                let opened = binary.nodes[lanes[k] as usize];
                lanes[k] = opened.first();
                lanes.insert(k + 1, opened.first() + 1);
            }
            let mut filled = empty;
            for (lane, &n) in lanes.iter().enumerate() {
                let child = &binary.nodes[n as usize];
                filled.boxes.set(lane, &child.bounds);
                filled.children[lane] = if child.is_leaf() {
                    child.first() | child.count() << FIRST_BITS
                } else {
                    let next = nodes.len();
                    nodes.push(empty);
                    work.push((next, n));
                    next as u32
                };
            }
            nodes[wide] = filled;
        }
        WideBvh {
            bounds: root.bounds,
            diagonal: root.bounds.diagonal(),
            nodes,
        }
    }

    /// The box of everything (empty for an empty tree).
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// The length of the diagonal of [`bounds`](Self::bounds), kept with it.
    pub fn diagonal(&self) -> f64 {
        self.diagonal
    }

    /// The nodes, the root's children in `nodes()[0]`.
    pub fn nodes(&self) -> &[WideNode] {
        &self.nodes
    }

    /// Bytes used by the nodes.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<WideNode>()
    }

    /// Recomputes every box bottom-up after items moved: a leaf whose items moved gets
    /// `leaf_bounds(items)` (`None`: its items did not move, its box is kept), a node
    /// the union of its children.
    pub fn refit_leaves(&mut self, mut leaf_bounds: impl FnMut(Range<usize>) -> Option<Aabb>) {
        for i in (0..self.nodes.len()).rev() {
            for lane in 0..4 {
                let node = &self.nodes[i];
                if node.lanes() & (1 << lane) == 0 {
                    continue;
                }
                let b = match node.child(lane) {
                    Ok(child) => {
                        let child = &self.nodes[child as usize];
                        child.boxes.union(child.lanes())
                    }
                    Err(items) => match leaf_bounds(items) {
                        Some(b) => b,
                        None => continue,
                    },
                };
                self.nodes[i].boxes.set(lane, &b);
            }
        }
        if let Some(root) = self.nodes.first() {
            self.set_bounds(root.boxes.union(root.lanes()));
        }
    }

    /// Sets the box of lane `lane` (below 4) of node `node`; false when it already was
    /// `b` or there is no such node (then nothing is written). For
    /// [`LeafPaths`](super::LeafPaths), which keeps the boxes above it the unions of
    /// their children.
    pub(super) fn set_child_box(&mut self, node: usize, lane: usize, b: &Aabb) -> bool {
        let Some(boxes) = self.nodes.get_mut(node).map(|n| &mut n.boxes) else {
            return false;
        };
        if boxes.get(lane) == *b {
            return false;
        }
        boxes.set(lane, b);
        true
    }

    /// Sets the box of everything (the union of the root's lanes, kept by the caller).
    pub(super) fn set_bounds(&mut self, b: Aabb) {
        self.bounds = b;
        self.diagonal = b.diagonal();
    }

    /// [`refit_leaves`](Self::refit_leaves) recomputing every leaf.
    pub fn refit(&mut self, mut leaf_bounds: impl FnMut(Range<usize>) -> Aabb) {
        self.refit_leaves(|items| Some(leaf_bounds(items)));
    }

    /// Calls `leaf` with every leaf's item range whose path `enter` accepts (depth
    /// first, left child first). `enter` sees every lane's box of a node it enters,
    /// the empty boxes of unused lanes included (whatever it answers for those, they
    /// are never walked).
    pub fn for_each_leaf(&self, enter: impl FnMut(&Aabb) -> bool, leaf: impl FnMut(Range<usize>)) {
        /// The two closures as a depth-first walk's visitor.
        struct Closures<E, L>(E, L);
        impl<E: FnMut(&Aabb) -> bool, L: FnMut(Range<usize>)> OrderedVisitor for Closures<E, L> {
            fn entry(&mut self, bounds: &Aabb) -> Option<f64> {
                (self.0)(bounds).then_some(0.0)
            }
            fn limit(&self) -> f64 {
                f64::INFINITY
            }
            fn leaf(&mut self, items: Range<usize>) -> bool {
                (self.1)(items);
                true
            }
        }
        self.for_each_leaf_depth_first(&mut Closures(enter, leaf));
    }

    /// Depth-first traversal driven by `visitor`, ignoring its keys and limit (for
    /// queries that want every hit): every leaf whose path it enters, left child first,
    /// until a leaf returns false.
    pub fn for_each_leaf_depth_first(&self, visitor: &mut impl OrderedVisitor) {
        if self.nodes.is_empty() || visitor.entry(&self.bounds).is_none() {
            return;
        }
        // Child references still to visit, the next on top.
        let mut stack: SmallVec<[u32; 64]> = SmallVec::new();
        stack.push(0);
        while let Some(reference) = stack.pop() {
            match child_of(reference) {
                Ok(index) => {
                    let node = &self.nodes[index as usize];
                    let mut entered = visitor.entries(&node.boxes).mask & node.lanes();
                    // Highest lane pushed first, so the leftmost is visited first.
                    while entered != 0 {
                        let lane = 31 - entered.leading_zeros();
                        entered &= !(1 << lane);
                        stack.push(node.children[lane as usize]);
                    }
                }
                Err(items) => {
                    if !visitor.leaf(items) {
                        return;
                    }
                }
            }
        }
    }

    /// Depth-first walk carrying a state down the tree (for example the planes a box
    /// still crosses), as [`Bvh::for_each_leaf_with`]: `enter(bounds, parent_state)`
    /// gives a child's state, or `None` to skip it (it sees only used lanes' boxes); a
    /// child whose state satisfies `whole` has its entire subtree handed to `leaf` as
    /// one item range, without testing the boxes below it. Leaves come left first.
    ///
    /// `lanes(boxes)` first picks, for four boxes at once, the lanes worth asking
    /// `enter` about (bit `k` for lane `k`; `|_| 0b1111` asks about every lane): a cheap
    /// test that never drops a box `enter` would enter.
    pub fn for_each_leaf_with<S: Copy>(
        &self,
        root_state: S,
        mut lanes: impl FnMut(&Aabb4) -> u32,
        mut enter: impl FnMut(&Aabb, S) -> Option<S>,
        whole: impl Fn(S) -> bool,
        mut leaf: impl FnMut(Range<usize>, S),
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let Some(state) = enter(&self.bounds, root_state) else {
            return;
        };
        if whole(state) {
            leaf(self.subtree_items(0), state);
            return;
        }
        // (node index, the state it was entered with), the next on top.
        let mut stack: SmallVec<[(u32, S); 32]> = SmallVec::new();
        stack.push((0, state));
        while let Some((index, parent_state)) = stack.pop() {
            let node = &self.nodes[index as usize];
            let mut wanted = lanes(&node.boxes) & node.lanes();
            // Leaves are handed over in lane order, inner nodes pushed so that the
            // leftmost is visited next.
            let mut inner: SmallVec<[(u32, S); 4]> = SmallVec::new();
            while wanted != 0 {
                let lane = wanted.trailing_zeros() as usize;
                wanted &= wanted - 1;
                let Some(state) = enter(&node.boxes.get(lane), parent_state) else {
                    continue;
                };
                match node.child(lane) {
                    Err(items) => leaf(items, state),
                    Ok(child) if whole(state) => leaf(self.subtree_items(child), state),
                    Ok(child) => inner.push((child, state)),
                }
            }
            stack.extend(inner.into_iter().rev());
        }
    }

    /// The items under node `index`: one contiguous range, from its leftmost leaf to its
    /// rightmost (collapsing keeps the binary tree's left-to-right leaf order).
    ///
    /// # Panics
    ///
    /// If `index` is not a node of this tree.
    pub fn subtree_items(&self, index: u32) -> Range<usize> {
        let end_of = |mut index: u32, rightmost: bool| loop {
            let node = &self.nodes[index as usize];
            let lane = if rightmost {
                node.lanes().count_ones().saturating_sub(1) as usize
            } else {
                0
            };
            match node.child(lane) {
                Ok(child) => index = child,
                Err(items) => break if rightmost { items.end } else { items.start },
            }
        };
        end_of(index, false)..end_of(index, true)
    }

    /// Nearest-first traversal driven by `visitor`: children it enters are visited in
    /// the order of their keys, one keyed past the visitor's limit is skipped, and the
    /// walk stops when a leaf returns false.
    pub fn for_each_leaf_ordered(&self, visitor: &mut impl OrderedVisitor) {
        if self.nodes.is_empty() {
            return;
        }
        let Some(t_root) = visitor.entry(&self.bounds) else {
            return;
        };
        // (child reference, key) still to visit, the nearest on top.
        let mut stack: SmallVec<[(u32, f32); 64]> = SmallVec::new();
        // The one child a node entered, visited next without the stack.
        let mut only = Some((0, WideEntries::key_below(t_root)));
        while let Some((reference, t)) = only.take().or_else(|| stack.pop()) {
            if f64::from(t) > visitor.limit() {
                continue;
            }
            let index = match child_of(reference) {
                Ok(index) => index,
                Err(items) => {
                    if !visitor.leaf(items) {
                        return;
                    }
                    continue;
                }
            };
            let node = &self.nodes[index as usize];
            let entries = visitor.entries(&node.boxes);
            let keys = entries.keys.to_array();
            let entered = entries.mask & node.lanes();
            if entered != 0 && entered & (entered - 1) == 0 {
                let lane = entered.trailing_zeros() as usize;
                only = Some((node.children[lane], keys[lane]));
                continue;
            }
            let (lanes, count) = farthest_first(entered, &keys);
            // Pushed farthest first: the nearest on top.
            for &lane in &lanes[..count] {
                stack.push((node.children[lane], keys[lane]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;

    #[test]
    fn children_are_ordered_farthest_first_equal_keys_the_higher_lane_first() {
        let values = [
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1.0e-40,
            0.5,
            0.5,
            3.0e38,
        ];
        let mut rng = crate::test_rng::XorShift::new(5);
        for round in 0..4000 {
            let mut next = || rng.bits16();
            let keys = [0; 4].map(|_| values[next() % values.len()]);
            let lanes = (round % 16) as u32;
            let mut expected: Vec<usize> = (0..4).rev().filter(|k| lanes & (1 << k) != 0).collect();
            // Stable, from the highest lane down: equal keys keep that order.
            expected.sort_by(|&a, &b| keys[b].partial_cmp(&keys[a]).unwrap());
            let (sorted, count) = farthest_first(lanes, &keys);
            assert_eq!(
                &sorted[..count],
                &expected[..],
                "{keys:?}, lanes {lanes:04b}"
            );
        }
    }

    /// Boxes scattered over a 100-unit cube (a fixed pseudo-random sequence).
    fn scattered(n: usize) -> Vec<Aabb> {
        let mut state = 12345u32;
        let mut next = move || {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (state >> 8) as f32 / (1 << 24) as f32
        };
        (0..n)
            .map(|_| {
                let min = Vec3::new(next(), next(), next()) * 100.0;
                let size = Vec3::new(next(), next(), next()) * 3.0;
                Aabb {
                    min,
                    max: min + size,
                }
            })
            .collect()
    }

    /// The binary tree over `boxes`, the boxes in its leaf order, and its wide form.
    fn built(boxes: &[Aabb]) -> (Bvh, Vec<Aabb>, WideBvh) {
        let (binary, order) = Bvh::build(boxes);
        let stored = order.iter().map(|&i| boxes[i as usize]).collect();
        let wide = WideBvh::from_binary(&binary);
        (binary, stored, wide)
    }

    fn contains(outer: &Aabb, inner: &Aabb) -> bool {
        outer.min.cmple(inner.min).all() && outer.max.cmpge(inner.max).all()
    }

    /// Checks that every lane's box holds its subtree's items; returns the leaf ranges
    /// below `reference`, left to right.
    fn check_subtree(
        wide: &WideBvh,
        reference: u32,
        bounds: &Aabb,
        stored: &[Aabb],
    ) -> Vec<Range<usize>> {
        match child_of(reference) {
            Err(items) => {
                assert!((1..=crate::accel::MAX_LEAF_ITEMS).contains(&items.len()));
                for b in &stored[items.clone()] {
                    assert!(contains(bounds, b));
                }
                vec![items]
            }
            Ok(index) => {
                let node = &wide.nodes()[index as usize];
                // Lanes fill from the first; a node has fewer than four children only
                // when all are leaves (nothing left to open), and at least two unless
                // it is a root leaf's.
                let count = node.lanes().count_ones() as usize;
                assert_eq!(node.lanes(), (1 << count) - 1);
                assert!(count >= 2 || index == 0);
                assert!(count == 4 || (0..count).all(|k| node.child(k).is_err()));
                let mut leaves = Vec::new();
                for lane in (0..4).filter(|k| node.lanes() & (1 << k) != 0) {
                    let b = node.boxes.get(lane);
                    assert!(contains(bounds, &b));
                    leaves.extend(check_subtree(wide, node.children[lane], &b, stored));
                }
                leaves
            }
        }
    }

    #[test]
    fn a_walk_with_state_hands_over_what_the_binary_walk_does() {
        let (binary, stored, wide) = built(&scattered(1000));
        // The state: the depth. A box the probe misses is skipped; under the probe
        // holding everything, the root is taken whole.
        let probes = [
            Aabb {
                min: Vec3::splat(10.0),
                max: Vec3::splat(60.0),
            },
            Aabb {
                min: Vec3::new(40.0, 0.0, 0.0),
                max: Vec3::new(45.0, 100.0, 100.0),
            },
            Aabb {
                min: Vec3::splat(-5.0),
                max: Vec3::splat(105.0),
            },
        ];
        for (k, probe) in probes.iter().enumerate() {
            let enter = |b: &Aabb, depth: u32| b.intersects(probe).then_some(depth + 1);
            let whole = |_: u32| k == 2;
            let mut from_binary = Vec::new();
            binary.for_each_leaf_with(0u32, enter, whole, |items, _| from_binary.extend(items));
            let mut from_wide = Vec::new();
            let lanes = |b: &Aabb4| b.intersecting(probe);
            wide.for_each_leaf_with(0u32, lanes, enter, whole, |items, _| {
                from_wide.extend(items)
            });
            // The same items, left to right (the whole probe: every item at once).
            assert_eq!(from_wide, from_binary, "probe {k}");
            // Nothing the probe overlaps is left out.
            let overlapped = (0..stored.len()).filter(|&i| stored[i].intersects(probe));
            assert!(overlapped.clone().count() > 0);
            assert!(overlapped.into_iter().all(|i| from_wide.contains(&i)));
        }
        assert_eq!(wide.subtree_items(0), 0..1000);
        // Leaves left to right tile the items: what `subtree_items` relies on.
        let mut leaves: Vec<Range<usize>> = Vec::new();
        wide.for_each_leaf(|_| true, |items| leaves.push(items));
        assert!(leaves.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!((leaves[0].start, leaves[leaves.len() - 1].end), (0, 1000));
        for (index, node) in wide.nodes().iter().enumerate() {
            let range = wide.subtree_items(index as u32);
            // The range of a node is the union of its lanes' ranges.
            let lanes: Vec<Range<usize>> = (0..node.lanes().count_ones() as usize)
                .map(|lane| match node.child(lane) {
                    Ok(child) => wide.subtree_items(child),
                    Err(items) => items,
                })
                .collect();
            assert_eq!(range.start, lanes[0].start);
            assert_eq!(range.end, lanes[lanes.len() - 1].end);
        }
    }

    #[test]
    fn collapsing_keeps_every_leaf_and_fills_the_nodes() {
        let (binary, stored, wide) = built(&scattered(1000));
        assert_eq!(wide.bounds(), binary.bounds());
        let leaves = check_subtree(&wide, 0, &wide.bounds(), &stored);
        // The binary tree's leaves, in the same left-to-right order: they partition the
        // items.
        let mut binary_leaves = Vec::new();
        binary.for_each_leaf(|_| true, |items| binary_leaves.push(items));
        assert_eq!(leaves, binary_leaves);
        assert_eq!(leaves.first().map(|r| r.start), Some(0));
        assert!(leaves.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(leaves.last().map(|r| r.end), Some(1000));
        // Fewer bytes than the binary tree it replaces (9 744 against 11 116 here: 87
        // nodes of 112 bytes, 397 of 28).
        assert_eq!(std::mem::size_of::<WideNode>(), 112);
        assert!(wide.memory_bytes() < binary.memory_bytes());
        // A single leaf and the empty tree.
        let (one, _) = Bvh::build(&scattered(3));
        let wide_one = WideBvh::from_binary(&one);
        assert_eq!(wide_one.nodes().len(), 1);
        assert_eq!(wide_one.nodes()[0].child(0), Err(0..3));
        assert_eq!(wide_one.nodes()[0].lanes(), 0b1);
        let empty = WideBvh::from_binary(&Bvh::default());
        assert!(empty.nodes().is_empty());
        empty.for_each_leaf(|_| true, |_| panic!("no leaf in an empty tree"));
    }

    /// Leaves whose box holds the point, nearest-first keys by x distance to the
    /// point's x; the limit is the best item key found so far.
    struct NearestAlongX {
        x: f32,
        stored: Vec<Aabb>,
        best: f64,
        leaves: usize,
    }

    impl OrderedVisitor for NearestAlongX {
        fn entry(&mut self, b: &Aabb) -> Option<f64> {
            (b.max.x >= self.x).then(|| f64::from((b.min.x - self.x).max(0.0)))
        }
        fn limit(&self) -> f64 {
            self.best
        }
        fn leaf(&mut self, items: Range<usize>) -> bool {
            self.leaves += 1;
            let x = self.x;
            for b in &self.stored[items] {
                if b.max.x >= x {
                    self.best = self.best.min(f64::from((b.min.x - x).max(0.0)));
                }
            }
            true
        }
    }

    #[test]
    fn the_ordered_walk_finds_the_nearest_and_skips_past_the_limit() {
        let (_, stored, wide) = built(&scattered(2000));
        for x in [-5.0f32, 0.0, 17.5, 50.0, 99.0, 150.0] {
            let brute = stored
                .iter()
                .filter(|b| b.max.x >= x)
                .map(|b| f64::from((b.min.x - x).max(0.0)))
                .min_by(f64::total_cmp)
                .unwrap_or(f64::INFINITY);
            let mut walk = NearestAlongX {
                x,
                stored: stored.clone(),
                best: f64::INFINITY,
                leaves: 0,
            };
            wide.for_each_leaf_ordered(&mut walk);
            assert_eq!(walk.best, brute, "x = {x}");
            // Nearest first with a limit: far fewer leaves than the whole tree.
            let mut all = 0;
            wide.for_each_leaf(|_| true, |_| all += 1);
            assert!(walk.leaves * 4 < all, "{} of {all} leaves", walk.leaves);
        }
    }

    #[test]
    fn the_depth_first_walk_sees_the_entered_leaves_in_order_and_stops_when_told() {
        struct Overlapping {
            probe: Aabb,
            leaves: Vec<Range<usize>>,
            stop_after: usize,
        }
        impl OrderedVisitor for Overlapping {
            fn entry(&mut self, b: &Aabb) -> Option<f64> {
                // A key past the limit: the depth-first walk ignores both.
                b.intersects(&self.probe).then_some(f64::INFINITY)
            }
            fn limit(&self) -> f64 {
                0.0
            }
            fn leaf(&mut self, items: Range<usize>) -> bool {
                self.leaves.push(items);
                self.leaves.len() < self.stop_after
            }
        }
        let boxes = scattered(1500);
        let (binary, _) = Bvh::build(&boxes);
        let wide = WideBvh::from_binary(&binary);
        let probe = Aabb {
            min: Vec3::new(20.0, 0.0, 30.0),
            max: Vec3::new(45.0, 100.0, 40.0),
        };
        let mut expected = Vec::new();
        binary.for_each_leaf(|b| b.intersects(&probe), |r| expected.push(r));
        assert!(expected.len() > 10);
        let mut all = Overlapping {
            probe,
            leaves: Vec::new(),
            stop_after: usize::MAX,
        };
        wide.for_each_leaf_depth_first(&mut all);
        assert_eq!(all.leaves, expected);
        let mut closures = Vec::new();
        wide.for_each_leaf(|b| b.intersects(&probe), |r| closures.push(r));
        assert_eq!(closures, expected);
        let mut three = Overlapping {
            probe,
            leaves: Vec::new(),
            stop_after: 3,
        };
        wide.for_each_leaf_depth_first(&mut three);
        assert_eq!(three.leaves, expected[..3]);
    }

    #[test]
    fn refits_hold_moved_items_and_keep_unmoved_leaves() {
        let mut boxes = scattered(500);
        let (binary, order) = Bvh::build(&boxes);
        let mut wide = WideBvh::from_binary(&binary);
        // Move every item whose stored position is even far away along y.
        for (position, &i) in order.iter().enumerate() {
            if position % 2 == 0 {
                boxes[i as usize].min.y += 1000.0;
                boxes[i as usize].max.y += 1000.0;
            }
        }
        let stored: Vec<Aabb> = order.iter().map(|&i| boxes[i as usize]).collect();
        wide.refit(|items| {
            let mut b = Aabb::EMPTY;
            stored[items].iter().for_each(|s| b.grow(s));
            b
        });
        check_subtree(&wide, 0, &wide.bounds(), &stored);
        assert!(wide.bounds().max.y > 1000.0);
        // A refit that moves nothing keeps every box.
        let before = wide.clone();
        wide.refit_leaves(|_| None);
        assert_eq!(wide, before);
    }

    #[test]
    fn lanes_tell_unused_slots_from_every_reference() {
        use crate::accel::MAX_BVH_ITEMS;
        let last = MAX_BVH_ITEMS as u32;
        // The extreme references: leaves of 7 and 8 items at the highest item numbers,
        // a node, and the two smallest.
        let node = |children| WideNode {
            boxes: Aabb4::EMPTY,
            children,
        };
        let extremes = [
            (last - 8) | 8 << FIRST_BITS,
            (last - 7) | 7 << FIRST_BITS,
            last,
            0,
        ];
        assert_eq!(node(extremes).lanes(), 0b1111);
        assert_eq!(
            node([1 << FIRST_BITS, 1, NO_CHILD, NO_CHILD]).lanes(),
            0b0011
        );
        assert_eq!(node([0, NO_CHILD, NO_CHILD, NO_CHILD]).lanes(), 0b0001);
        assert_eq!(
            node(extremes).child(0),
            Err(last as usize - 8..last as usize)
        );
    }

    #[test]
    fn a_chain_deeper_than_the_inline_stack_is_walked_whole() {
        // Boxes doubling in size along x: the SAH peels one off per level, a chain far
        // deeper than the 64 inline stack entries once collapsed.
        let boxes: Vec<Aabb> = (0..400)
            .map(|i| Aabb {
                min: Vec3::new(1.02f32.powi(i) * 10.0, 0.0, 0.0),
                max: Vec3::new(1.02f32.powi(i) * 10.0 + 1.0, 1.0, 1.0),
            })
            .collect();
        let (binary, _) = Bvh::build(&boxes);
        let wide = WideBvh::from_binary(&binary);
        struct Count(usize);
        impl OrderedVisitor for Count {
            fn entry(&mut self, _: &Aabb) -> Option<f64> {
                Some(0.0)
            }
            fn limit(&self) -> f64 {
                f64::INFINITY
            }
            fn leaf(&mut self, items: Range<usize>) -> bool {
                self.0 += items.len();
                true
            }
        }
        let mut depth_first = Count(0);
        wide.for_each_leaf_depth_first(&mut depth_first);
        assert_eq!(depth_first.0, 400);
        let mut ordered = Count(0);
        wide.for_each_leaf_ordered(&mut ordered);
        assert_eq!(ordered.0, 400);
    }
}
