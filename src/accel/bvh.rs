//! A bounding volume hierarchy over boxes: binned SAH build, flat node array.
//!
//! The tree is generic over what its leaves hold: it only sees one box per item and
//! returns the order in which items must be stored so that every leaf is a contiguous
//! range. Node boxes are `f32`: items are `f32` triangles or are padded outward when
//! their bounds come from `f64` (see [`Aabb::from_f64_outward`]), so a box never
//! excludes anything it should hold.

use glam::Vec3A;

use super::aabb::Aabb;
use super::binned_sah::{Bin, ItemBox};

/// One node: a box and either two children (at `first` and `first + 1`) or a leaf range
/// of `count` items starting at `first`; both numbers share one `u32` (the count in the
/// top 4 bits), so a node is 28 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhNode {
    /// The node's box.
    pub bounds: Aabb,
    /// `first | count << FIRST_BITS`.
    packed: u32,
}

/// Bits of [`BvhNode::first`]: a tree holds at most [`MAX_BVH_ITEMS`] items.
const FIRST_BITS: u32 = 28;
const FIRST_MASK: u32 = (1 << FIRST_BITS) - 1;

/// The most items a [`Bvh`] can hold (its nodes number items and children in 28 bits).
pub const MAX_BVH_ITEMS: usize = (1 << (FIRST_BITS - 1)) - 1;

impl BvhNode {
    fn interior(bounds: Aabb, first_child: usize) -> BvhNode {
        BvhNode {
            bounds,
            packed: first_child as u32 & FIRST_MASK,
        }
    }

    fn leaf(bounds: Aabb, first: usize, count: usize) -> BvhNode {
        BvhNode {
            bounds,
            packed: (first as u32 & FIRST_MASK) | (count as u32) << FIRST_BITS,
        }
    }

    /// First child (the second is `first + 1`), or first item of a leaf.
    #[inline]
    pub fn first(&self) -> u32 {
        self.packed & FIRST_MASK
    }

    /// Number of items of a leaf; 0 for an interior node.
    #[inline]
    pub fn count(&self) -> u32 {
        self.packed >> FIRST_BITS
    }

    /// True for a leaf.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.count() > 0
    }

    /// A leaf's item range (empty for an interior node).
    #[inline]
    pub fn items(&self) -> std::ops::Range<usize> {
        self.first() as usize..(self.first() + self.count()) as usize
    }
}

/// What drives [`Bvh::for_each_leaf_ordered`].
pub trait OrderedVisitor {
    /// A node's order key, or `None` to skip it.
    fn entry(&mut self, bounds: &Aabb) -> Option<f64>;
    /// Nodes keyed past this are skipped.
    fn limit(&self) -> f64;
    /// Handles a leaf's item range; false stops the walk.
    fn leaf(&mut self, items: std::ops::Range<usize>) -> bool;
    /// The keys of four boxes at once, for a [`WideBvh`](super::WideBvh) node. The
    /// default asks [`entry`](Self::entry) lane by lane; a visitor with a SIMD test
    /// overrides it (the answer must be the same, keys rounded down to `f32`).
    fn entries(&mut self, boxes: &super::Aabb4) -> super::WideEntries {
        super::WideEntries::from_lanes(std::array::from_fn(|lane| self.entry(&boxes.get(lane))))
    }
}

/// A built hierarchy: the nodes (root first) and the order items must be stored in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bvh {
    /// Nodes; the root is `nodes[0]` (absent for an empty tree).
    pub nodes: Vec<BvhNode>,
}

/// Items per leaf at most (a leaf holds fewer when the SAH says so).
pub const MAX_LEAF_ITEMS: usize = 8;
/// Ranges this small always become leaves (keeps the nodes under ~16 bytes per item).
pub(crate) const MIN_SPLIT_ITEMS: usize = 8;
const BINS: usize = 16;

impl Bvh {
    /// Builds a hierarchy over `boxes`; returns it and the permutation: position `i` of
    /// the stored items holds original item `order[i]`.
    ///
    /// # Panics
    ///
    /// With more than [`MAX_BVH_ITEMS`] boxes (a few hundred million: more than any
    /// scene fits in memory with its meshes). Callers check the count first.
    pub fn build(boxes: &[Aabb]) -> (Bvh, Vec<u32>) {
        Self::build_with_min_split(boxes, MIN_SPLIT_ITEMS)
    }

    /// [`build`](Self::build), with ranges of fewer than `min_split_items` items always
    /// made leaves.
    pub fn build_with_min_split(boxes: &[Aabb], min_split_items: usize) -> (Bvh, Vec<u32>) {
        assert!(
            boxes.len() <= MAX_BVH_ITEMS,
            "a BVH holds at most {MAX_BVH_ITEMS} items"
        );
        let mut order: Vec<u32> = (0..boxes.len() as u32).collect();
        let mut nodes = Vec::with_capacity((boxes.len() / MAX_LEAF_ITEMS + 1) * 2);
        if boxes.is_empty() {
            return (Bvh { nodes }, order);
        }
        // Each box in SIMD lanes (the world build's records and bins). Its centre and
        // the boxes of ranges are the values `Aabb::center` and `Aabb::grow` give: lane
        // by lane, sums and products round as the scalar ones do, and on x86-64
        // `Vec3A::min` is `_mm_min_ps(a, b)`, which is `if a < b { a } else { b }` as
        // `Vec3::min` is, NaN and signed zeros included. So the tree is the one the
        // scalar build made (elsewhere it may differ only for NaN corners), for fewer
        // instructions (callgrind, city_s10's building meshes: 39 % fewer, with the
        // bins kept and the axis chosen once below).
        let wide: Vec<ItemBox> = boxes.iter().map(ItemBox::new).collect();
        // The bin of each item of the range being split, by its position there.
        let mut bins = vec![0u8; boxes.len()];
        nodes.push(BvhNode::leaf(Aabb::EMPTY, 0, 0));
        // (node index, start, end) still to split.
        let mut work = vec![(0usize, 0usize, boxes.len())];
        while let Some((node, start, end)) = work.pop() {
            let items = &mut order[start..end];
            let mut bounds = Bin::EMPTY;
            let mut center_bounds = Bin::EMPTY;
            for &i in items.iter() {
                let b = &wide[i as usize];
                bounds.add(b.min, b.max);
                let c = center(b);
                center_bounds.add(c, c);
            }
            let bounds = bounds.aabb();
            let count = items.len();
            if count < min_split_items {
                nodes[node] = BvhNode::leaf(bounds, start, count);
                continue;
            }
            let range = Split {
                items,
                bins: &mut bins[..count],
                boxes: &wide,
                bounds: &bounds,
            };
            let mid = match range.split(&center_bounds) {
                Some(mid) => mid,
                None if count <= MAX_LEAF_ITEMS => {
                    nodes[node] = BvhNode::leaf(bounds, start, count);
                    continue;
                }
                // All centres coincide or the SAH found nothing better: halve.
                None => count / 2,
            };
            let left = nodes.len();
            nodes.push(BvhNode::leaf(Aabb::EMPTY, 0, 0));
            nodes.push(BvhNode::leaf(Aabb::EMPTY, 0, 0));
            nodes[node] = BvhNode::interior(bounds, left);
            work.push((left + 1, start + mid, end));
            work.push((left, start, start + mid));
        }
        (Bvh { nodes }, order)
    }

    /// Recomputes every node box bottom-up after items moved: a leaf gets
    /// `leaf_bounds(items)`, an interior node the union of its children. The topology is
    /// kept (children are always stored after their parent).
    pub fn refit(&mut self, mut leaf_bounds: impl FnMut(std::ops::Range<usize>) -> Aabb) {
        self.refit_leaves(|items| Some(leaf_bounds(items)));
    }

    /// [`refit`](Self::refit) where `leaf_bounds` returns `None` for a leaf whose items
    /// did not move (its box is kept, and not recomputed from its items).
    pub fn refit_leaves(
        &mut self,
        mut leaf_bounds: impl FnMut(std::ops::Range<usize>) -> Option<Aabb>,
    ) {
        for i in (0..self.nodes.len()).rev() {
            let node = self.nodes[i];
            if node.is_leaf() {
                let items = node.items();
                if let Some(b) = leaf_bounds(items) {
                    self.nodes[i].bounds = b;
                }
            } else {
                let mut b = self.nodes[node.first() as usize].bounds;
                b.grow(&self.nodes[node.first() as usize + 1].bounds);
                self.nodes[i].bounds = b;
            }
        }
    }

    /// Bytes used by the nodes.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<BvhNode>()
    }

    /// The root's box (empty for an empty tree).
    pub fn bounds(&self) -> Aabb {
        self.nodes.first().map_or(Aabb::EMPTY, |n| n.bounds)
    }

    /// Calls `leaf` with every leaf's item range whose path `enter` accepts (depth
    /// first, left child first).
    pub fn for_each_leaf(
        &self,
        enter: impl FnMut(&Aabb) -> bool,
        leaf: impl FnMut(std::ops::Range<usize>),
    ) {
        self.for_each_leaf_below(0, enter, leaf);
    }

    /// [`for_each_leaf`](Self::for_each_leaf) over the subtree of node `start` only.
    pub fn for_each_leaf_below(
        &self,
        start: u32,
        mut enter: impl FnMut(&Aabb) -> bool,
        mut leaf: impl FnMut(std::ops::Range<usize>),
    ) {
        if start as usize >= self.nodes.len() {
            return;
        }
        let mut stack = [0u32; 64];
        stack[0] = start;
        let mut top = 1usize;
        while top > 0 {
            top -= 1;
            let node = &self.nodes[stack[top] as usize];
            if !enter(&node.bounds) {
                continue;
            }
            if node.is_leaf() {
                leaf(node.items());
            } else if top + 2 <= stack.len() {
                stack[top] = node.first() + 1;
                stack[top + 1] = node.first();
                top += 2;
            } else {
                // Deeper than the stack (cannot happen for a balanced-enough tree):
                // fall back to recursion on the subtree.
                self.for_each_leaf_from(node.first(), &mut enter, &mut leaf);
                self.for_each_leaf_from(node.first() + 1, &mut enter, &mut leaf);
            }
        }
    }

    /// Depth-first traversal driven by `visitor`, ignoring its keys and limit (for
    /// queries that want every hit: no order pays for itself there): every leaf whose
    /// path it enters, left child first, until a leaf returns false.
    pub fn for_each_leaf_depth_first(&self, visitor: &mut impl OrderedVisitor) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = [0u32; 64];
        let mut top = 1usize;
        while top > 0 {
            top -= 1;
            let node = &self.nodes[stack[top] as usize];
            if visitor.entry(&node.bounds).is_none() {
                continue;
            }
            if node.is_leaf() {
                if !visitor.leaf(node.items()) {
                    return;
                }
            } else if top + 2 <= stack.len() {
                stack[top] = node.first() + 1;
                stack[top + 1] = node.first();
                top += 2;
            } else if !self.depth_first_from(node.first(), visitor)
                || !self.depth_first_from(node.first() + 1, visitor)
            {
                // Deeper than the stack (not built by `build`): the subtree by recursion.
                return;
            }
        }
    }

    /// [`for_each_leaf_depth_first`](Self::for_each_leaf_depth_first) from node `index`,
    /// by recursion; false when a leaf stopped the walk.
    fn depth_first_from(&self, index: u32, visitor: &mut impl OrderedVisitor) -> bool {
        let node = &self.nodes[index as usize];
        if visitor.entry(&node.bounds).is_none() {
            return true;
        }
        if node.is_leaf() {
            return visitor.leaf(node.items());
        }
        self.depth_first_from(node.first(), visitor)
            && self.depth_first_from(node.first() + 1, visitor)
    }

    /// Nearest-first traversal driven by `visitor`: nodes it enters are visited in the
    /// order of their keys (nearer child first), a node keyed past the visitor's limit is
    /// skipped, and the walk stops when a leaf returns false.
    pub fn for_each_leaf_ordered(&self, visitor: &mut impl OrderedVisitor) {
        self.for_each_leaf_ordered_below(0, visitor);
    }

    /// [`for_each_leaf_ordered`](Self::for_each_leaf_ordered) over the subtree of node
    /// `start` only.
    pub fn for_each_leaf_ordered_below(&self, start: u32, visitor: &mut impl OrderedVisitor) {
        let Some(root) = self.nodes.get(start as usize) else {
            return;
        };
        let Some(t_root) = visitor.entry(&root.bounds) else {
            return;
        };
        let mut stack: smallvec::SmallVec<[(u32, f64); 64]> = smallvec::SmallVec::new();
        // The node being visited: the nearer child goes on at once, only the farther one
        // waits on the stack.
        let mut current = Some((start, t_root));
        loop {
            let (index, t) = match current.take().or_else(|| stack.pop()) {
                Some(next) => next,
                None => return,
            };
            if t > visitor.limit() {
                continue;
            }
            let node = &self.nodes[index as usize];
            if node.is_leaf() {
                if !visitor.leaf(node.items()) {
                    return;
                }
                continue;
            }
            let (a, b) = (node.first(), node.first() + 1);
            let ta = visitor.entry(&self.nodes[a as usize].bounds);
            let tb = visitor.entry(&self.nodes[b as usize].bounds);
            current = match (ta, tb) {
                (Some(ta), Some(tb)) if ta <= tb => {
                    stack.push((b, tb));
                    Some((a, ta))
                }
                (Some(ta), Some(tb)) => {
                    stack.push((a, ta));
                    Some((b, tb))
                }
                (Some(ta), None) => Some((a, ta)),
                (None, Some(tb)) => Some((b, tb)),
                (None, None) => None,
            };
        }
    }

    /// Depth-first walk carrying a state down the tree (for example the planes a box
    /// still crosses): `enter(bounds, parent_state)` gives a node's state, or `None` to
    /// skip the node; a node whose state satisfies `whole` has its entire subtree handed to
    /// `leaf` as one item range, without testing the boxes below it.
    pub fn for_each_leaf_with<S: Copy>(
        &self,
        root_state: S,
        enter: impl FnMut(&Aabb, S) -> Option<S>,
        whole: impl Fn(S) -> bool,
        leaf: impl FnMut(std::ops::Range<usize>, S),
    ) {
        self.for_each_leaf_with_below(0, root_state, enter, whole, leaf);
    }

    /// [`for_each_leaf_with`](Self::for_each_leaf_with) over the subtree of node `start`
    /// only.
    pub fn for_each_leaf_with_below<S: Copy>(
        &self,
        start: u32,
        root_state: S,
        mut enter: impl FnMut(&Aabb, S) -> Option<S>,
        whole: impl Fn(S) -> bool,
        mut leaf: impl FnMut(std::ops::Range<usize>, S),
    ) {
        let mut stack: smallvec::SmallVec<[(u32, S); 64]> = smallvec::SmallVec::new();
        if (start as usize) < self.nodes.len() {
            stack.push((start, root_state));
        }
        while let Some((index, parent_state)) = stack.pop() {
            let node = &self.nodes[index as usize];
            let Some(state) = enter(&node.bounds, parent_state) else {
                continue;
            };
            if node.is_leaf() {
                leaf(node.items(), state);
            } else if whole(state) {
                leaf(self.subtree_items(index), state);
            } else {
                stack.push((node.first() + 1, state));
                stack.push((node.first(), state));
            }
        }
    }

    /// The items under a node: a contiguous range, from its leftmost leaf to its
    /// rightmost (the build partitions items in place, left child first).
    ///
    /// # Panics
    ///
    /// If `index` is not a node of this tree.
    pub fn subtree_items(&self, index: u32) -> std::ops::Range<usize> {
        let (mut left, mut right) = (&self.nodes[index as usize], &self.nodes[index as usize]);
        while !left.is_leaf() {
            left = &self.nodes[left.first() as usize];
        }
        while !right.is_leaf() {
            right = &self.nodes[right.first() as usize + 1];
        }
        left.first() as usize..(right.first() + right.count()) as usize
    }

    fn for_each_leaf_from(
        &self,
        index: u32,
        enter: &mut impl FnMut(&Aabb) -> bool,
        leaf: &mut impl FnMut(std::ops::Range<usize>),
    ) {
        let node = &self.nodes[index as usize];
        if !enter(&node.bounds) {
            return;
        }
        if node.is_leaf() {
            leaf(node.items());
        } else {
            self.for_each_leaf_from(node.first(), enter, leaf);
            self.for_each_leaf_from(node.first() + 1, enter, leaf);
        }
    }
}

/// An item's centre, as [`Aabb::center`] computes it.
#[inline(always)]
fn center(b: &ItemBox) -> Vec3A {
    (b.min + b.max) * 0.5
}

/// A range of a build being split: its items, room for their bins, every item's box,
/// and the range's box.
struct Split<'a> {
    items: &'a mut [u32],
    bins: &'a mut [u8],
    boxes: &'a [ItemBox],
    bounds: &'a Aabb,
}

impl Split<'_> {
    /// Chooses a split of the items by binned SAH along the longest axis of their
    /// centres' box, `center_bounds`, and partitions them; returns the size of the left
    /// part, or `None` when no split beats a leaf.
    fn split(self, center_bounds: &Bin) -> Option<usize> {
        let extent = center_bounds.max - center_bounds.min;
        let low = center_bounds.min;
        // The axis chosen once, each with a loop of its own: a centre indexed by a
        // variable axis was read through the stack for every item.
        if extent.x >= extent.y && extent.x >= extent.z {
            self.split_along((low.x, extent.x), |c| c.x)
        } else if extent.y >= extent.z {
            self.split_along((low.y, extent.y), |c| c.y)
        } else {
            self.split_along((low.z, extent.z), |c| c.z)
        }
    }

    /// [`split`](Self::split) along the axis `coordinate` reads, whose centres lie in
    /// `[lo, lo + width]`.
    #[inline(always)]
    fn split_along(
        self,
        (lo, width): (f32, f32),
        coordinate: impl Fn(Vec3A) -> f32,
    ) -> Option<usize> {
        if width.is_nan() || width <= 0.0 {
            return None;
        }
        let scale = BINS as f32 / width;
        // `(c - lo) * scale` truncated to a bin: below 0 and NaN to the first, past the
        // last to the last (clamped before the conversion, which then has nothing to
        // saturate).
        let last = (BINS - 1) as f32;
        let bin_of = |c: Vec3A| ((coordinate(c) - lo) * scale).max(0.0).min(last) as u8;
        let mut bin_bounds = [Bin::EMPTY; BINS];
        for (&i, bin) in self.items.iter().zip(self.bins.iter_mut()) {
            let b = &self.boxes[i as usize];
            *bin = bin_of(center(b));
            bin_bounds[usize::from(*bin)].add(b.min, b.max);
        }
        // Sweep from the right for suffix areas, then from the left.
        let mut right_area = [0f32; BINS];
        let mut acc = Bin::EMPTY;
        let mut right_count = [0u32; BINS];
        for k in (1..BINS).rev() {
            acc.merge(&bin_bounds[k]);
            right_area[k] = acc.half_area();
            right_count[k] = acc.count;
        }
        let mut best = (f32::INFINITY, 0u8);
        let mut left = Bin::EMPTY;
        for k in 0..BINS - 1 {
            left.merge(&bin_bounds[k]);
            if left.count == 0 || right_count[k + 1] == 0 {
                continue;
            }
            let cost = left.half_area() * left.count as f32
                + right_area[k + 1] * right_count[k + 1] as f32;
            if cost < best.0 {
                best = (cost, k as u8);
            }
        }
        // Leaf cost: intersecting every item; an interior node costs about one item more.
        let items = self.items;
        let leaf_cost = self.bounds.half_area() * items.len() as f32;
        if !best.0.is_finite()
            || (items.len() <= MAX_LEAF_ITEMS && best.0 + self.bounds.half_area() >= leaf_cost)
        {
            return None;
        }
        // In place, by the bins found above: the item at a position is always the one
        // binned there (a swap only moves an item already passed to a later position).
        let split_bin = best.1;
        let mut mid = 0;
        for (i, &bin) in self.bins.iter().enumerate() {
            if bin <= split_bin {
                items.swap(i, mid);
                mid += 1;
            }
        }
        (mid > 0 && mid < items.len()).then_some(mid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn unit_box_at(x: f32) -> Aabb {
        Aabb {
            min: Vec3::new(x, 0.0, 0.0),
            max: Vec3::new(x + 1.0, 1.0, 1.0),
        }
    }

    /// A thousand unit boxes along x, in a scrambled order.
    fn shuffled_unit_boxes() -> Vec<Aabb> {
        (0..1000)
            .map(|i| unit_box_at(((i * 7919) % 1000) as f32))
            .collect()
    }

    #[test]
    fn every_item_is_in_exactly_one_leaf_and_inside_its_boxes() {
        let boxes = shuffled_unit_boxes();
        let (bvh, order) = Bvh::build(&boxes);
        let mut seen = vec![0; boxes.len()];
        bvh.for_each_leaf(
            |_| true,
            |range| {
                for i in range {
                    seen[order[i] as usize] += 1;
                }
            },
        );
        assert!(seen.iter().all(|&n| n == 1));
        // Parents hold their children.
        for node in &bvh.nodes {
            if !node.is_leaf() {
                for c in [node.first(), node.first() + 1] {
                    let child = bvh.nodes[c as usize].bounds;
                    assert!(
                        node.bounds.min.cmple(child.min).all()
                            && node.bounds.max.cmpge(child.max).all()
                    );
                }
            } else {
                assert!(node.count() as usize <= MAX_LEAF_ITEMS);
            }
        }
    }

    #[test]
    fn culling_visits_only_overlapping_leaves() {
        let boxes: Vec<Aabb> = (0..256).map(|i| unit_box_at(i as f32 * 2.0)).collect();
        let (bvh, order) = Bvh::build(&boxes);
        let mut found = Vec::new();
        // Items overlapping x in [100.5, 104.5]: boxes at x = 100, 102, 104.
        bvh.for_each_leaf(
            |b| b.max.x >= 100.5 && b.min.x <= 104.5,
            |range| {
                for i in range {
                    let b = boxes[order[i] as usize];
                    if b.max.x >= 100.5 && b.min.x <= 104.5 {
                        found.push(b.min.x as i32);
                    }
                }
            },
        );
        found.sort();
        assert_eq!(found, vec![100, 102, 104]);
    }

    #[test]
    fn whole_subtrees_are_their_leaves_items() {
        let boxes: Vec<Aabb> = (0..500).map(|i| unit_box_at(i as f32 * 2.0)).collect();
        let (bvh, order) = Bvh::build(&boxes);
        // Boxes wholly inside x in [100, 300] are taken whole; the walk must hand out
        // exactly the items a leaf-by-leaf walk finds, each once.
        let inside = |b: &Aabb| b.min.x >= 100.0 && b.max.x <= 300.0;
        let mut whole_walk = Vec::new();
        bvh.for_each_leaf_with(
            false,
            |b, parent_inside| {
                (parent_inside || b.max.x >= 100.0 && b.min.x <= 300.0)
                    .then(|| parent_inside || inside(b))
            },
            |taken_whole| taken_whole,
            |range, _| whole_walk.extend(range.map(|i| order[i])),
        );
        let mut leaf_walk = Vec::new();
        bvh.for_each_leaf(
            |b| b.max.x >= 100.0 && b.min.x <= 300.0,
            |range| leaf_walk.extend(range.map(|i| order[i])),
        );
        whole_walk.sort();
        leaf_walk.sort();
        assert_eq!(whole_walk, leaf_walk);
        assert!(whole_walk.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn a_walk_below_a_node_sees_exactly_its_subtree_items() {
        let boxes = shuffled_unit_boxes();
        let (bvh, _) = Bvh::build(&boxes);
        for r in (0..bvh.nodes.len() as u32).step_by(7) {
            let items = bvh.subtree_items(r);
            let mut walked = Vec::new();
            bvh.for_each_leaf_below(r, |_| true, |range| walked.extend(range));
            assert_eq!(walked, items.collect::<Vec<_>>());
        }
        assert_eq!(bvh.subtree_items(0), 0..boxes.len());
    }

    #[test]
    fn depth_first_walk_sees_the_entered_leaves_and_stops_when_told() {
        struct Overlapping {
            lo: f32,
            hi: f32,
            leaves: Vec<std::ops::Range<usize>>,
            stop_after: usize,
        }
        impl OrderedVisitor for Overlapping {
            fn entry(&mut self, b: &Aabb) -> Option<f64> {
                // A key that would put every node past the limit: ignored here.
                (b.max.x >= self.lo && b.min.x <= self.hi).then_some(f64::INFINITY)
            }
            fn limit(&self) -> f64 {
                0.0
            }
            fn leaf(&mut self, items: std::ops::Range<usize>) -> bool {
                self.leaves.push(items);
                self.leaves.len() < self.stop_after
            }
        }
        let boxes: Vec<Aabb> = (0..300).map(|i| unit_box_at(i as f32 * 2.0)).collect();
        let (bvh, _) = Bvh::build(&boxes);
        let mut expected = Vec::new();
        bvh.for_each_leaf(
            |b| b.max.x >= 100.0 && b.min.x <= 300.0,
            |range| expected.push(range),
        );
        let mut all = Overlapping {
            lo: 100.0,
            hi: 300.0,
            leaves: Vec::new(),
            stop_after: usize::MAX,
        };
        bvh.for_each_leaf_depth_first(&mut all);
        assert_eq!(all.leaves, expected);
        let mut two = Overlapping {
            stop_after: 2,
            leaves: Vec::new(),
            ..all
        };
        bvh.for_each_leaf_depth_first(&mut two);
        assert_eq!(two.leaves, expected[..2]);
    }

    #[test]
    fn depth_first_walk_goes_deeper_than_its_stack() {
        // A caterpillar 150 levels deep (an SAH build can make such chains from badly
        // spread boxes), leaning left so the walk's stack grows by one per level: the
        // children of node 0 are 1 and 2, and at every level the left child is interior
        // (its children follow) and the right one is a leaf. Leaf items are numbered
        // in left-first order: the deepest first.
        const LEAVES: usize = 151;
        let mut nodes = vec![BvhNode::interior(Aabb::EMPTY, 1)];
        for level in 0..LEAVES - 2 {
            nodes.push(BvhNode::interior(Aabb::EMPTY, nodes.len() + 2));
            nodes.push(BvhNode::leaf(Aabb::EMPTY, LEAVES - 1 - level, 1));
        }
        nodes.push(BvhNode::leaf(Aabb::EMPTY, 0, 1));
        nodes.push(BvhNode::leaf(Aabb::EMPTY, 1, 1));
        let mut bvh = Bvh { nodes };
        bvh.refit(|items| unit_box_at(items.start as f32 * 2.0));
        struct Collect {
            leaves: Vec<usize>,
            stop_after: usize,
        }
        impl OrderedVisitor for Collect {
            fn entry(&mut self, _: &Aabb) -> Option<f64> {
                Some(0.0)
            }
            fn limit(&self) -> f64 {
                f64::INFINITY
            }
            fn leaf(&mut self, items: std::ops::Range<usize>) -> bool {
                self.leaves.push(items.start);
                self.leaves.len() < self.stop_after
            }
        }
        let mut all = Collect {
            leaves: Vec::new(),
            stop_after: usize::MAX,
        };
        bvh.for_each_leaf_depth_first(&mut all);
        assert_eq!(all.leaves, (0..LEAVES).collect::<Vec<_>>());
        // Stopping in the part beyond the stack's depth (the 88 deepest leaves) ends
        // the whole walk.
        let mut some = Collect {
            leaves: Vec::new(),
            stop_after: 40,
        };
        bvh.for_each_leaf_depth_first(&mut some);
        assert_eq!(some.leaves, (0..40).collect::<Vec<_>>());
    }

    #[test]
    fn identical_boxes_still_make_small_leaves() {
        let boxes = vec![unit_box_at(0.0); 100];
        let (bvh, _) = Bvh::build(&boxes);
        assert!(bvh
            .nodes
            .iter()
            .all(|n| !n.is_leaf() || n.count() as usize <= MAX_LEAF_ITEMS));
        assert_eq!(Bvh::build(&[]).0.nodes.len(), 0);
    }

    #[test]
    fn the_root_splits_the_longest_axis_between_its_clusters() {
        // Along each axis in turn: 40 unit boxes, two clusters of 20 far apart on that
        // axis and spread a little on the others, interleaved in the input. The root's
        // children hold one cluster each, with the cluster's box.
        for axis in 0..3 {
            let boxes: Vec<Aabb> = (0..40)
                .map(|k| {
                    let mut min = Vec3::splat((k % 5) as f32);
                    min[axis] = if k % 2 == 0 { 0.0 } else { 1000.0 } + (k / 2) as f32;
                    Aabb {
                        min,
                        max: min + Vec3::ONE,
                    }
                })
                .collect();
            let (bvh, order) = Bvh::build(&boxes);
            let root = &bvh.nodes[0];
            assert!(!root.is_leaf());
            for (child, parity) in [(root.first(), 0), (root.first() + 1, 1)] {
                let node = bvh.nodes[child as usize];
                let mut cluster = Aabb::EMPTY;
                let mut seen = 0;
                bvh.for_each_leaf_below(
                    child,
                    |_| true,
                    |r| {
                        for &i in &order[r] {
                            assert_eq!(i % 2, parity, "axis {axis}");
                            cluster.grow(&boxes[i as usize]);
                            seen += 1;
                        }
                    },
                );
                assert_eq!(seen, 20);
                assert_eq!(node.bounds, cluster);
            }
        }
    }

    #[test]
    fn a_lower_min_split_gives_smaller_leaves() {
        // 512 unit boxes along a line: the SAH splits them as far as it is allowed to.
        let boxes: Vec<Aabb> = (0..512)
            .map(|i| {
                let x = i as f32 * 2.0;
                Aabb {
                    min: Vec3::new(x, 0.0, 0.0),
                    max: Vec3::new(x + 1.0, 1.0, 1.0),
                }
            })
            .collect();
        let leaf_sizes = |bvh: &Bvh| -> Vec<u32> {
            bvh.nodes
                .iter()
                .filter(|n| n.is_leaf())
                .map(|n| n.count())
                .collect()
        };
        let (coarse, _) = Bvh::build(&boxes);
        let (fine, order) = Bvh::build_with_min_split(&boxes, 2);
        assert!(leaf_sizes(&coarse).iter().all(|&n| (1..=8).contains(&n)));
        assert!(
            leaf_sizes(&fine).iter().all(|&n| n == 1),
            "{:?}",
            leaf_sizes(&fine)
        );
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..512).collect::<Vec<u32>>(), "a permutation");
    }
}
