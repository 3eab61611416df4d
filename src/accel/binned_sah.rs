//! [`build_binary`]: the binned SAH build the [`WorldBvh`](super::WorldBvh) starts from.
//!
//! Top-down, as in Wald, "On fast Construction of SAH-based Bounding Volume
//! Hierarchies" (2007): at every range the item centres are binned into up to 32 slots
//! along each of the three axes (fewer for small ranges), the surface area heuristic is
//! evaluated at the boundaries between bins, and the items are partitioned at the
//! cheapest. (Small ranges were once binned along their widest axis only, for a build
//! 3–5 % faster; the three axes' trees save littlest_tokyo's segment queries 2 % of
//! their instructions, and nearest segments 3–4 % of their time there and on zdm2 in
//! pinned alternating runs.)
//! Leaves hold at most `max_leaf` items (the four lanes of one SIMD test); the cost of a
//! side counts its items in blocks of that size, so splits that fill whole leaves win
//! (Embree's rule). Items that must be visited alone (a whole instance) never share a
//! leaf.
//!
//! Big builds split the top of the tree on the calling thread and build the ranges below
//! it on scoped threads ([`build_binary`]). The binary tree is then collapsed to four
//! children per node by [`WorldBvh`](super::WorldBvh).

use glam::Vec3A;

use super::Aabb;

/// Ranges of at most this many items are binned in one set of bins (see
/// `choose_split`).
const SMALL_RANGE: usize = 64;

/// Bins per axis.
const BINS: usize = 32;

/// A node of the binary tree: a box and either two children (`first` and `first + 1`,
/// when `count` is 0) or a leaf of `count` items starting at `first` in the build order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BinaryNode {
    /// The box of everything below.
    pub bounds: Aabb,
    /// First child, or first item of a leaf.
    pub first: u32,
    /// Items of a leaf; 0 for an interior node.
    pub count: u32,
}

/// A binary tree and the order its leaves' items are stored in.
#[derive(Clone, Debug, Default)]
pub(crate) struct BinaryBuild {
    /// Nodes, the root first (absent for no items).
    pub nodes: Vec<BinaryNode>,
    /// Position `i` of the stored items holds original item `order[i]`.
    pub order: Vec<u32>,
}

/// One bin: the box of its items and their number. (Also the bins and ranges of the
/// drawables' own build, [`Bvh`](super::Bvh).)
#[derive(Clone, Copy)]
pub(super) struct Bin {
    pub min: Vec3A,
    pub max: Vec3A,
    pub count: u32,
}

impl Bin {
    pub const EMPTY: Bin = Bin {
        min: Vec3A::INFINITY,
        max: Vec3A::NEG_INFINITY,
        count: 0,
    };

    #[inline(always)]
    pub fn add(&mut self, min: Vec3A, max: Vec3A) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
        self.count += 1;
    }

    #[inline(always)]
    pub fn merge(&mut self, other: &Bin) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
    }

    /// Half the surface area (the SAH only compares areas).
    #[inline(always)]
    pub fn half_area(&self) -> f32 {
        let d = (self.max - self.min).max(Vec3A::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    }

    /// The box as an [`Aabb`].
    pub fn aabb(&self) -> Aabb {
        Aabb {
            min: self.min.into(),
            max: self.max.into(),
        }
    }
}

/// An item's box as the build takes and moves it, each corner in a 16-byte SIMD lane
/// (the permutation of these records is the build's order, so binning reads them one
/// after the other instead of gathering them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ItemBox {
    pub(super) min: Vec3A,
    pub(super) max: Vec3A,
}

impl ItemBox {
    /// A box at the origin, to fill room with.
    const ZERO: ItemBox = ItemBox {
        min: Vec3A::ZERO,
        max: Vec3A::ZERO,
    };

    /// The build's form of the box `b`.
    #[inline]
    pub fn new(b: &Aabb) -> ItemBox {
        ItemBox {
            min: b.min.into(),
            max: b.max.into(),
        }
    }
}

/// A range still to build: its node, its records and its box, known from its parent's
/// split.
struct Range {
    node: usize,
    start: usize,
    end: usize,
    bounds: Bin,
}

/// How a build shapes its leaves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeafRule {
    /// Items one leaf test covers at once (the SAH counts a side's items in blocks of
    /// this many); ranges this small are always leaves.
    pub block: usize,
    /// Items per leaf at most: ranges up to this many become leaves when the SAH says a
    /// leaf costs no more than the best split.
    pub max: usize,
    /// The cost of a split (a node lane to test), in units of one block's test.
    pub split_cost: f32,
}

/// Builds the binary tree over `boxes` (whose corners must not be NaN: every box this
/// crate makes is outward-rounded, see [`Aabb::from_f64_outward`]), which it takes to
/// permute as it goes. Leaves are shaped by `rule`, and an item for which `alone` is
/// true always has a leaf of its own.
///
/// Builds of at least [`PARALLEL_ITEMS`] items use the machine's cores: the top of the
/// tree is split on the calling thread until every range left holds at most an eighth
/// of the items, and those ranges, disjoint runs of the build order, are built on
/// scoped threads (not the rayon pool: a build may run inside a query that other pool
/// threads wait on), each as soon as the top hands it over, the calling thread joining
/// them once the top is done. Every range is split exactly as the one-thread build
/// splits it, so the tree is the same; only the nodes' numbering differs.
pub(crate) fn build_binary(
    boxes: Vec<ItemBox>,
    rule: LeafRule,
    alone: impl Fn(u32) -> bool + Sync,
) -> BinaryBuild {
    let threads = build_threads(boxes.len());
    build_binary_on(boxes, rule, alone, threads)
}

/// The threads a build step over `items` items uses: the machine's cores from
/// [`PARALLEL_ITEMS`] items on, one below.
pub(crate) fn build_threads(items: usize) -> usize {
    build_threads_from(items, PARALLEL_ITEMS)
}

/// The threads for work over `items` items that pays for a second thread from
/// `threshold` items on: the machine's cores from there, one below.
pub(crate) fn build_threads_from(items: usize, threshold: usize) -> usize {
    // (Asked only when it matters: the answer reads the process's CPU limits.)
    if items >= threshold {
        std::thread::available_parallelism().map_or(1, |t| t.get())
    } else {
        1
    }
}

/// [`build_binary`] on at most `threads` threads.
fn build_binary_on(
    boxes: Vec<ItemBox>,
    rule: LeafRule,
    alone: impl Fn(u32) -> bool + Sync,
    threads: usize,
) -> BinaryBuild {
    let n = boxes.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    let max_leaf = rule.max.max(rule.block.max(1));
    let mut nodes = Vec::with_capacity(2 * n.div_ceil(max_leaf) + 1);
    if n == 0 {
        return BinaryBuild { nodes, order };
    }
    // The build permutes the boxes it is given (no copy of them).
    let mut records = boxes;
    nodes.push(PLACEHOLDER);
    let root = Range {
        node: 0,
        start: 0,
        end: n,
        bounds: bounds_of(&records),
    };
    let defer_at_most = if n >= PARALLEL_ITEMS && threads > 1 {
        n / 8
    } else {
        0
    };
    let top = Split {
        rule,
        alone: &alone,
        offset: 0,
        defer_at_most,
    };
    if defer_at_most == 0 {
        top.run(root, &mut nodes, &mut order, &mut records, |_| {});
    } else {
        let built = build_with_helpers(&top, root, &mut nodes, &mut order, &mut records, threads);
        link(&mut nodes, built);
    }
    BinaryBuild { nodes, order }
}

/// The items a build needs before it uses more than one thread.
pub(crate) const PARALLEL_ITEMS: usize = 1 << 15;

/// A node not yet written.
const PLACEHOLDER: BinaryNode = BinaryNode {
    bounds: Aabb::EMPTY,
    first: 0,
    count: 0,
};

/// A range the top of the tree leaves to the threads, with its items and records.
type Deferred<'s> = (Range, &'s mut [u32], &'s mut [ItemBox]);

/// Splits the top of the tree (`top`, from `root`) on this thread while up to
/// `threads - 1` scoped threads build the ranges it defers, each as soon as it is
/// deferred, into a node list of its own; this thread joins them when the top is done.
/// Returns each deferred range's node with its subtree.
fn build_with_helpers<F: Fn(u32) -> bool + Sync>(
    top: &Split<'_, F>,
    root: Range,
    nodes: &mut Vec<BinaryNode>,
    order: &mut [u32],
    records: &mut [ItemBox],
    threads: usize,
) -> Vec<(usize, Vec<BinaryNode>)> {
    let (send, receive) = std::sync::mpsc::channel::<Deferred<'_>>();
    let receive = std::sync::Mutex::new(receive);
    let built = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let help = || loop {
            // (Waits holding the lock: the next range goes to one thread anyway. A
            // poisoned lock means a thread panicked, which the scope passes on.)
            let Some((range, order, records)) = receive.lock().ok().and_then(|r| r.recv().ok())
            else {
                return;
            };
            let split = Split {
                rule: top.rule,
                alone: top.alone,
                offset: range.start,
                defer_at_most: 0,
            };
            let local = Range {
                node: 0,
                start: 0,
                end: range.end - range.start,
                ..range
            };
            let mut subtree = vec![PLACEHOLDER];
            split.run(local, &mut subtree, order, records, |_| {});
            if let Ok(mut built) = built.lock() {
                built.push((range.node, subtree));
            }
        };
        for _ in 1..threads {
            scope.spawn(help);
        }
        top.run(root, nodes, order, records, |deferred| {
            // (It cannot fail: the receiver lives until this function returns.)
            let _ = send.send(deferred);
        });
        drop(send);
        help();
    });
    built.into_inner().unwrap_or_default()
}

/// Links the subtrees `built` (each with the node of the range it was built for) into
/// `nodes`, in the order of those nodes.
fn link(nodes: &mut Vec<BinaryNode>, mut built: Vec<(usize, Vec<BinaryNode>)>) {
    built.sort_unstable_by_key(|(node, _)| *node);
    for (node, subtree) in built {
        // The subtree's root takes the range's node; its other nodes go to the end, in
        // their order (children stay side by side).
        let base = nodes.len();
        let place = |local: u32| {
            if local == 0 {
                node
            } else {
                base + local as usize - 1
            }
        };
        for (k, mut sub) in subtree.into_iter().enumerate() {
            if sub.count == 0 {
                sub.first = place(sub.first) as u32;
            }
            if k == 0 {
                nodes[node] = sub;
            } else {
                nodes.push(sub);
            }
        }
    }
}

/// How one thread splits ranges: the leaf rule, the items that must be alone, where its
/// records start in the whole build's order, and the ranges it leaves to others.
struct Split<'a, F> {
    rule: LeafRule,
    alone: &'a F,
    /// Added to a range's start to make a leaf's first item.
    offset: usize,
    /// Ranges of at most this many items are handed back, not split (0: none).
    defer_at_most: usize,
}

impl<F: Fn(u32) -> bool> Split<'_, F> {
    /// Splits `root` and everything below it into `nodes` (`root.node` already there),
    /// permuting `order` and `records` (this range's), and hands each range it defers,
    /// with its own part of them, to `defer`.
    fn run<'s>(
        &self,
        root: Range,
        nodes: &mut Vec<BinaryNode>,
        order: &'s mut [u32],
        records: &'s mut [ItemBox],
        mut defer: impl FnMut(Deferred<'s>),
    ) {
        let rule = self.rule;
        let block = rule.block.max(1);
        let max_leaf = rule.max.max(block);
        let mut bins = Box::new([[Bin::EMPTY; BINS]; 3]);
        // The room partitions write into, as large as this run's order and records.
        let mut spare_items = vec![0; order.len()];
        let mut spare_records = vec![ItemBox::ZERO; records.len()];
        // Each range with its own part of the order and records.
        let mut work = vec![(
            root,
            Part {
                items: order,
                records,
                spare_items: &mut spare_items,
                spare_records: &mut spare_records,
                in_spare: false,
            },
        )];
        while let Some((range, mut part)) = work.pop() {
            let Range {
                node, start, end, ..
            } = range;
            let count = end - start;
            if count <= self.defer_at_most {
                part.settle(true);
                defer((range, part.items, part.records));
                continue;
            }
            let (items, records) = part.current();
            let bounds = range.bounds.aabb();
            let has_alone =
                count > 1 && count <= max_leaf && items.iter().any(|&i| (self.alone)(i));
            let leaf = BinaryNode {
                bounds,
                first: (self.offset + start) as u32,
                count: count as u32,
            };
            if count <= block && !has_alone {
                nodes[node] = leaf;
                part.settle(false);
                continue;
            }
            let choice = if has_alone {
                None
            } else {
                choose_split(records, block, &mut bins)
            };
            if count <= max_leaf && !has_alone {
                // A leaf of more than one block, unless a split is worth its node.
                let area = range.bounds.half_area();
                let split = choice.map_or(f32::INFINITY, |c| {
                    rule.split_cost + if area > 0.0 { c.cost / area } else { 0.0 }
                });
                if count.div_ceil(block) as f32 <= split {
                    nodes[node] = leaf;
                    part.settle(false);
                    continue;
                }
            }
            let (mid, left, right) = if has_alone {
                // A small range holding an item that must be alone: that item goes left.
                let k = items.iter().position(|&i| (self.alone)(i)).unwrap_or(0);
                let (items, records) = part.current_mut();
                items.swap(0, k);
                records.swap(0, k);
                let (l, r) = records.split_at(1);
                (1, bounds_of(l), bounds_of(r))
            } else {
                match choice.and_then(|c| partition(&mut part, c)) {
                    Some(split) => split,
                    None => {
                        // Every centre is one point: halve.
                        let mid = count / 2;
                        let (l, r) = part.current().1.split_at(mid);
                        (mid, bounds_of(l), bounds_of(r))
                    }
                }
            };
            let child = nodes.len();
            nodes.push(PLACEHOLDER);
            nodes.push(PLACEHOLDER);
            nodes[node] = BinaryNode {
                bounds,
                first: child as u32,
                count: 0,
            };
            let (left_part, right_part) = part.split_at(mid);
            let right = Range {
                node: child + 1,
                start: start + mid,
                end,
                bounds: right,
            };
            work.push((right, right_part));
            let left = Range {
                node: child,
                start,
                end: start + mid,
                bounds: left,
            };
            work.push((left, left_part));
        }
    }
}

/// The box of some records' (doubled: `min + max`) centres, which a range's bins
/// divide.
fn centres_of(records: &[ItemBox]) -> Bin {
    let (mut min, mut max) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    for r in records {
        let c = r.min + r.max;
        min = min.min(c);
        max = max.max(c);
    }
    Bin { min, max, count: 0 }
}

/// The box of some records.
fn bounds_of(records: &[ItemBox]) -> Bin {
    let mut bounds = Bin::EMPTY;
    for r in records {
        bounds.add(r.min, r.max);
    }
    bounds
}

/// `2^23`: added to a float in `[0, 2^22)`, it leaves the nearest integer in the low
/// bits of the sum's representation (a bin number without a float-to-integer
/// conversion, whose saturating form costs a dozen instructions).
const TO_INTEGER: f32 = 8_388_608.0;

/// A split chosen for a range: the axis, the first bin of the right side, and its
/// SAH cost (the sides' areas times their items in blocks), with the binning it used
/// and the sides' boxes.
#[derive(Clone, Copy)]
struct Choice {
    axis: usize,
    slot: usize,
    cost: f32,
    binning: Binning,
    left_bounds: Bin,
    right_bounds: Bin,
}

/// The largest power of two at most `n` (at least 1).
fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// How a range's centres (in the box `centres`) are binned: how many bins the sweep
/// reads, the smallest centre and the bins per unit along each axis.
#[derive(Clone, Copy)]
struct Binning {
    bins_used: usize,
    low: Vec3A,
    scale: Vec3A,
}

impl Binning {
    fn of(centres: &Bin, count: usize) -> Binning {
        let extent = centres.max - centres.min;
        // Small ranges use fewer bins: the sweep costs as much as binning them. A power
        // of two, so that a mask keeps any bin number below it.
        let bins_used =
            prev_power_of_two((count / 2).clamp(4, if count > 1024 { BINS } else { 16 }));
        // The largest centre lands at `bins_used - 0.51`, which rounds to the last bin
        // (see `slots`).
        let scale = Vec3A::select(
            extent.cmpgt(Vec3A::ZERO),
            Vec3A::splat(bins_used as f32 - 0.51) / extent,
            Vec3A::ZERO,
        );
        Binning {
            bins_used,
            low: centres.min,
            scale,
        }
    }

    /// The bins of a doubled centre along the three axes. `c - low` is at least 0 and
    /// at most the extent (rounding is monotonic), so each product lies in
    /// `[0, bins_used - 0.51]` and the sum with `TO_INTEGER` holds its nearest integer
    /// in its low bits. A NaN centre (a box infinite both ways) gets some bin below
    /// `bins_used` by the mask, and the partition puts its item on the side its bin
    /// says, so no item is lost.
    #[inline(always)]
    fn slots(&self, c: Vec3A) -> [usize; 3] {
        let f = (c - self.low) * self.scale + Vec3A::splat(TO_INTEGER);
        f.to_array()
            .map(|v| (v.to_bits() as usize) & (self.bins_used - 1))
    }

    /// [`slots`](Self::slots) along `axis` alone, as a function of the doubled centre's
    /// coordinate there: the axis is chosen once, for a loop over a range's items
    /// (indexing the centre by a variable axis put it on the stack and back for every
    /// item).
    #[inline(always)]
    fn slot_along(&self, axis: usize) -> impl Fn(f32) -> usize {
        let (low, scale, mask) = (self.low[axis], self.scale[axis], self.bins_used - 1);
        move |c| (((c - low) * scale + TO_INTEGER).to_bits() as usize) & mask
    }

    /// Adds `r` to its bin along each axis.
    #[inline(always)]
    fn add(&self, bins: &mut [[Bin; BINS]; 3], r: &ItemBox) {
        let [x, y, z] = self.slots(r.min + r.max);
        bins[0][x].add(r.min, r.max);
        bins[1][y].add(r.min, r.max);
        bins[2][z].add(r.min, r.max);
    }
}

/// Finds the cheapest binned SAH split of a range's records over the three axes; `None`
/// when every centre is the same point (or NaN). `bins` is scratch room.
fn choose_split(records: &[ItemBox], block: usize, bins: &mut [[Bin; BINS]; 3]) -> Option<Choice> {
    // Found here rather than by the parent's partition, which paid four selects an
    // item for it, and for ranges that become leaves unbinned.
    let centres = centres_of(records);
    let extent = centres.max - centres.min;
    let binning = Binning::of(&centres, records.len());
    let bins_used = binning.bins_used;
    for axis_bins in bins.iter_mut() {
        axis_bins[..bins_used].fill(Bin::EMPTY);
    }
    if records.len() <= SMALL_RANGE {
        // One set of bins: the second set below costs more to clear and merge than it
        // saves here.
        for r in records.iter() {
            binning.add(bins, r);
        }
    } else {
        // Every other record goes to a second set of bins, merged at the end:
        // consecutive records often share a bin, and each update of a bin waits for
        // the one before (a quarter of the binning's time on littlest_tokyo).
        let mut odd = [[Bin::EMPTY; BINS]; 3];
        let mut pairs = records.chunks_exact(2);
        for pair in &mut pairs {
            binning.add(bins, &pair[0]);
            binning.add(&mut odd, &pair[1]);
        }
        for r in pairs.remainder() {
            binning.add(bins, r);
        }
        for (axis_bins, odd) in bins.iter_mut().zip(&odd) {
            for (bin, o) in axis_bins[..bins_used].iter_mut().zip(odd) {
                bin.merge(o);
            }
        }
    }
    // Cost of a side: its area times its items in blocks of `block` (one leaf test
    // covers a block).
    let blocks = |count: u32| count.div_ceil(block as u32) as f32;
    let mut best: Option<(f32, usize, usize)> = None;
    for (axis, axis_bins) in bins.iter().enumerate() {
        if extent[axis] <= 0.0 || extent[axis].is_nan() {
            continue;
        }
        // Areas and counts of every left part, then sweep from the right.
        let mut left = [(0.0f32, 0u32); BINS];
        let mut acc = Bin::EMPTY;
        for (slot, bin) in axis_bins.iter().enumerate().take(bins_used - 1) {
            acc.merge(bin);
            left[slot] = (acc.half_area(), acc.count);
        }
        let mut right = Bin::EMPTY;
        for slot in (1..bins_used).rev() {
            right.merge(&axis_bins[slot]);
            let (left_area, left_count) = left[slot - 1];
            if left_count == 0 || right.count == 0 {
                continue;
            }
            let cost = left_area * blocks(left_count) + right.half_area() * blocks(right.count);
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, axis, slot));
            }
        }
    }
    let (cost, axis, slot) = best?;
    let (mut left_bounds, mut right_bounds) = (Bin::EMPTY, Bin::EMPTY);
    for bin in &bins[axis][..slot] {
        left_bounds.merge(bin);
    }
    for bin in &bins[axis][slot..bins_used] {
        right_bounds.merge(bin);
    }
    Some(Choice {
        axis,
        slot,
        cost,
        binning,
        left_bounds,
        right_bounds,
    })
}

/// Partitions a range's items and records at a chosen split (left side to the front,
/// by the same bin numbers) and returns the size of the left part with the boxes of
/// both sides; `None` when a side would be empty.
///
/// Out of place and without branches on the side: each item is written to the next
/// free slot of its side in the part's other room (left from the front, right from the
/// back), which then holds the range. An in-place partition's branch mispredicts on
/// about every other item at the top of the tree, where the sides are shuffled; and
/// copying the items back after each partition took an eighth of a build's
/// instructions (callgrind, littlest_tokyo).
fn partition(part: &mut Part<'_, '_>, choice: Choice) -> Option<(usize, Bin, Bin)> {
    let n = part.items.len();
    let slot = choice.binning.slot_along(choice.axis);
    let left = |c: f32| slot(c) < choice.slot;
    // One loop per axis, each reading its coordinate directly.
    let l = match choice.axis {
        0 => part.scatter(|r| left(r.min.x + r.max.x)),
        1 => part.scatter(|r| left(r.min.y + r.max.y)),
        _ => part.scatter(|r| left(r.min.z + r.max.z)),
    };
    (l > 0 && l < n).then_some((l, choice.left_bounds, choice.right_bounds))
}

/// A range's part of the build's order and records (`items`, `records`), and the same
/// part of the room partitions write into (`spare_items`, `spare_records`): the range
/// is in one or the other, by turns (`in_spare`), so that no partition copies it back.
struct Part<'s, 't> {
    items: &'s mut [u32],
    records: &'s mut [ItemBox],
    spare_items: &'t mut [u32],
    spare_records: &'t mut [ItemBox],
    in_spare: bool,
}

impl<'s, 't> Part<'s, 't> {
    /// The range's items and records, where they are now.
    fn current(&self) -> (&[u32], &[ItemBox]) {
        if self.in_spare {
            (self.spare_items, self.spare_records)
        } else {
            (self.items, self.records)
        }
    }

    /// [`current`](Self::current), to change.
    fn current_mut(&mut self) -> (&mut [u32], &mut [ItemBox]) {
        if self.in_spare {
            (self.spare_items, self.spare_records)
        } else {
            (self.items, self.records)
        }
    }

    /// Puts the range's items (and, when `records`, its records) in the build's order
    /// and records, where a leaf's items are read and a deferred range is built.
    fn settle(&mut self, records: bool) {
        if self.in_spare {
            self.items.copy_from_slice(self.spare_items);
            if records {
                self.records.copy_from_slice(self.spare_records);
            }
            self.in_spare = false;
        }
    }

    /// Writes the range to its other room, the items `left` is true of first (in their
    /// order), the others after them (in the reverse of theirs), and returns how many
    /// are left.
    #[inline(always)]
    fn scatter(&mut self, left: impl Fn(&ItemBox) -> bool) -> usize {
        let ((items, records), (to_items, to_records)) = if self.in_spare {
            (
                (&*self.spare_items, &*self.spare_records),
                (&mut *self.items, &mut *self.records),
            )
        } else {
            (
                (&*self.items, &*self.records),
                (&mut *self.spare_items, &mut *self.spare_records),
            )
        };
        let (mut l, mut r) = (0usize, items.len());
        for (item, record) in items.iter().zip(records) {
            let left = left(record);
            let at = if left { l } else { r - 1 };
            to_items[at] = *item;
            to_records[at] = *record;
            l += usize::from(left);
            r -= usize::from(!left);
        }
        self.in_spare = !self.in_spare;
        l
    }

    /// The first `mid` items and the rest, each a part of its own.
    fn split_at(self, mid: usize) -> (Part<'s, 't>, Part<'s, 't>) {
        let (items, right_items) = self.items.split_at_mut(mid);
        let (records, right_records) = self.records.split_at_mut(mid);
        let (spare_items, right_spare_items) = self.spare_items.split_at_mut(mid);
        let (spare_records, right_spare_records) = self.spare_records.split_at_mut(mid);
        let in_spare = self.in_spare;
        (
            Part {
                items,
                records,
                spare_items,
                spare_records,
                in_spare,
            },
            Part {
                items: right_items,
                records: right_records,
                spare_items: right_spare_items,
                spare_records: right_spare_records,
                in_spare,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn item_boxes(boxes: &[Aabb]) -> Vec<ItemBox> {
        boxes.iter().map(ItemBox::new).collect()
    }

    fn scattered(n: usize) -> Vec<Aabb> {
        let mut state = 0x2545_f491u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 10_000) as f32 / 100.0
        };
        (0..n)
            .map(|_| {
                let p = Vec3::new(next(), next(), next());
                Aabb {
                    min: p,
                    max: p + Vec3::splat(next() / 50.0),
                }
            })
            .collect()
    }

    /// Every item in exactly one leaf, leaves within the size limit, every node's box
    /// holding its children's and its items' boxes.
    fn check(boxes: &[Aabb], build: &BinaryBuild, max_leaf: usize) {
        let mut seen = vec![0; boxes.len()];
        let mut stack = vec![0usize];
        while let Some(k) = stack.pop() {
            let node = &build.nodes[k];
            let holds =
                |b: &Aabb| node.bounds.min.cmple(b.min).all() && node.bounds.max.cmpge(b.max).all();
            if node.count == 0 {
                for c in [node.first as usize, node.first as usize + 1] {
                    assert!(holds(&build.nodes[c].bounds));
                    stack.push(c);
                }
            } else {
                assert!(node.count as usize <= max_leaf);
                for slot in node.first..node.first + node.count {
                    let item = build.order[slot as usize] as usize;
                    assert!(holds(&boxes[item]));
                    seen[item] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    const FOUR: LeafRule = LeafRule {
        block: 4,
        max: 4,
        split_cost: 0.5,
    };

    /// The tree from the root down, left before right: each node's box and, for a
    /// leaf, its items (the numbering of the nodes left out).
    fn shape(build: &BinaryBuild) -> Vec<(Aabb, Vec<u32>)> {
        let mut out = Vec::new();
        let mut stack = vec![0usize];
        while let Some(k) = stack.pop() {
            let node = build.nodes[k];
            let (first, count) = (node.first as usize, node.count as usize);
            if count == 0 {
                stack.push(first + 1);
                stack.push(first);
                out.push((node.bounds, Vec::new()));
            } else {
                out.push((node.bounds, build.order[first..first + count].to_vec()));
            }
        }
        out
    }

    #[test]
    fn threads_build_the_one_thread_tree() {
        let boxes = scattered(PARALLEL_ITEMS + 1000);
        let alone = |k: u32| k % 997 == 0;
        let one = build_binary_on(item_boxes(&boxes), FOUR, alone, 1);
        let many = build_binary_on(item_boxes(&boxes), FOUR, alone, 4);
        check(&boxes, &many, 4);
        assert_eq!(many.nodes.len(), one.nodes.len());
        assert_eq!(shape(&many), shape(&one));
        // The top of the tree was split on the calling thread, the rest elsewhere: the
        // nodes are numbered differently.
        assert_ne!(many.nodes, one.nodes);
    }

    #[test]
    fn the_split_is_the_one_of_bins_filled_one_record_at_a_time() {
        // Ranges past SMALL_RANGE are binned in two sets (every other record) merged
        // at the end: the bins, and so the split, must be those of one set filled in
        // order, for even and odd counts (the last record of an odd count alone).
        for n in [SMALL_RANGE + 1, SMALL_RANGE + 2, 255, 1000, 1001] {
            let records = item_boxes(&scattered(n));
            let mut bins = [[Bin::EMPTY; BINS]; 3];
            assert!(choose_split(&records, 4, &mut bins).is_some());
            let binning = Binning::of(&centres_of(&records), n);
            let mut one_by_one = [[Bin::EMPTY; BINS]; 3];
            for r in &records {
                binning.add(&mut one_by_one, r);
            }
            let used = binning.bins_used;
            for axis in 0..3 {
                for (a, b) in bins[axis][..used].iter().zip(&one_by_one[axis][..used]) {
                    assert_eq!((a.min, a.max, a.count), (b.min, b.max, b.count), "{n}");
                }
            }
        }
    }

    #[test]
    fn the_partition_puts_each_item_on_the_side_of_its_bin() {
        // Along each axis in turn (the boxes squeezed along the other two, so that the
        // SAH picks that one), whichever room the range is in: the left side is the
        // items binned below the chosen slot, in their order, and both rooms end up
        // holding the range.
        for axis in 0..3 {
            let squeeze = Vec3::select(
                glam::BVec3::new(axis == 0, axis == 1, axis == 2),
                Vec3::ONE,
                Vec3::splat(0.01),
            );
            let boxes: Vec<Aabb> = (scattered(500).iter())
                .map(|b| Aabb {
                    min: b.min * squeeze,
                    max: b.max * squeeze,
                })
                .collect();
            let records = item_boxes(&boxes);
            let mut bins = [[Bin::EMPTY; BINS]; 3];
            let choice = choose_split(&records, 4, &mut bins).unwrap();
            assert_eq!(choice.axis, axis);
            let slot_of = |r: &ItemBox| choice.binning.slots(r.min + r.max)[axis];
            let left_items: Vec<u32> = (0..500u32)
                .filter(|&k| slot_of(&records[k as usize]) < choice.slot)
                .collect();
            for in_spare in [false, true] {
                let (mut items, mut spare_items): (Vec<u32>, Vec<u32>) =
                    ((0..500).collect(), (0..500).collect());
                let (mut main, mut spare) = (records.clone(), records.clone());
                let mut part = Part {
                    items: &mut items,
                    records: &mut main,
                    spare_items: &mut spare_items,
                    spare_records: &mut spare,
                    in_spare,
                };
                let (l, left, right) = partition(&mut part, choice).unwrap();
                assert_eq!(part.in_spare, !in_spare);
                assert_eq!(l, left_items.len());
                assert_eq!((left.count, right.count), (l as u32, 500 - l as u32));
                let (moved, moved_records) = part.current();
                assert_eq!(moved[..l], left_items[..]);
                assert!(moved[l..]
                    .iter()
                    .all(|&k| slot_of(&records[k as usize]) >= choice.slot));
                for (&k, r) in moved.iter().zip(moved_records) {
                    assert_eq!(
                        (r.min, r.max),
                        (records[k as usize].min, records[k as usize].max)
                    );
                }
                part.settle(true);
                assert!(!part.in_spare);
                assert_eq!(part.items[..l], left_items[..]);
            }
        }
    }

    #[test]
    fn a_small_range_splits_across_its_best_axis_not_its_widest() {
        // 40 unit boxes in two rows along x (0 to 96), one at y = 0 and one at y = 50:
        // x is the widest axis, but cutting across it in the middle leaves two boxes of
        // 46 × 51 × 1 (half area 2 443 each), while cutting between the rows leaves two
        // of 96 × 1 × 1 (half area 193 each).
        let boxes: Vec<Aabb> = (0..40)
            .map(|k| {
                let min = Vec3::new((k / 2 * 5) as f32, (k % 2 * 50) as f32, 0.0);
                Aabb {
                    min,
                    max: min + Vec3::ONE,
                }
            })
            .collect();
        assert!(boxes.len() <= SMALL_RANGE);
        let mut bins = [[Bin::EMPTY; BINS]; 3];
        let choice = choose_split(&item_boxes(&boxes), 4, &mut bins).unwrap();
        assert_eq!(choice.axis, 1);
        assert_eq!(
            (choice.left_bounds.count, choice.right_bounds.count),
            (20, 20)
        );
    }

    #[test]
    fn every_item_lands_in_one_small_leaf() {
        for n in [1, 2, 4, 5, 17, 1000] {
            let boxes = scattered(n);
            let build = build_binary(item_boxes(&boxes), FOUR, |_| false);
            check(&boxes, &build, 4);
        }
    }

    #[test]
    fn coincident_items_are_halved() {
        let b = Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        };
        let boxes = vec![b; 37];
        let build = build_binary(item_boxes(&boxes), FOUR, |_| false);
        check(&boxes, &build, 4);
    }

    #[test]
    fn items_that_must_be_alone_get_their_own_leaf() {
        let boxes = scattered(300);
        let alone = |i: u32| i % 7 == 0;
        let build = build_binary(item_boxes(&boxes), FOUR, alone);
        check(&boxes, &build, 4);
        // With leaves of up to eight, an item alone still gets its own.
        let eight = LeafRule { max: 8, ..FOUR };
        let build = build_binary(item_boxes(&boxes), eight, alone);
        check(&boxes, &build, 8);
        for node in build.nodes.iter().filter(|n| n.count > 1) {
            let items = &build.order[node.first as usize..(node.first + node.count) as usize];
            assert!(items.iter().all(|&i| !alone(i)));
        }
    }

    #[test]
    fn splits_separate_distant_clusters() {
        // Two clusters far apart: the root splits them.
        let mut boxes = scattered(40);
        for b in scattered(40) {
            boxes.push(Aabb {
                min: b.min + Vec3::splat(1000.0),
                max: b.max + Vec3::splat(1000.0),
            });
        }
        let build = build_binary(item_boxes(&boxes), FOUR, |_| false);
        let root = &build.nodes[0];
        let (l, r) = (
            &build.nodes[root.first as usize],
            &build.nodes[root.first as usize + 1],
        );
        assert!(l.bounds.max.x < 500.0 || r.bounds.max.x < 500.0);
        assert!(l.bounds.min.x > 500.0 || r.bounds.min.x > 500.0);
    }
}
