//! [`WorldBvh`]: every triangle of a scene in one four-wide BVH in world space, the
//! structure most queries walk.
//!
//! A two-level index (a tree over instances, each entered through its drawable's own
//! tree in its own frame) pays at every instance a query meets: the query is moved to
//! the instance's frame, the drawable's tree is entered from its root, and big
//! overlapping meshes are each entered although one would do. Here the triangles of all
//! instances are placed in world space once, at build time, and sorted into one tree,
//! as Embree and parry do with a flattened scene: a query walks one tree and meets each
//! triangle at most once.
//!
//! The tree is built by the binned SAH ([`build_binary`]) and collapsed to four
//! children per node (grandchildren lifted into the grandparent, largest box first), the
//! four boxes side by side ([`Aabb4`]). A child is another node, a leaf of up to eight
//! triangles ([`LeafTriangle`]: the primitive's id and its corners quantized in the
//! leaf's box, 16 bytes), or a *whole item*: an instance whose drawable cannot be placed
//! in world space triangle by triangle (not a triangle list, a custom drawable, a
//! degenerate transform), which the query visits through the drawable as the plain
//! traversal does.
//!
//! Boxes and corners are measured from the tree's [`WorldFrame`]: the world origin, or
//! for a scene far from it (georeferenced), the centre of its box, so that the `f32`
//! coordinates keep the precision of the scene's own size.
//!
//! The quantized corners only filter: a query rejects the triangles that certainly
//! miss it even moved by the quantization error, and decides the others with its exact
//! `f64` test on the drawable's own vertices in the instance's frame, as the plain
//! traversal does. The answers are therefore the plain traversal's, bit for bit.

use std::collections::HashMap;
use std::ops::Range;

use glam::{DVec3, Vec4};

use super::binned_sah::{build_binary, build_threads, BinaryBuild, ItemBox, LeafRule};
use super::lane_stack::LaneStack;
use super::leaf_triangles::{LeafTriangle, Quantizer};
use super::runs::fill_runs;
use super::{Aabb, Aabb4, WalkStack, WorldFrame};

/// Where a leaf record is: its position among the records and its leaf (node index
/// times four plus lane), for packing it anew ([`WorldBvh::repack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecordPlace {
    at: u32,
    leaf: u32,
}

/// Triangles per leaf at most.
pub const LEAF_TRIANGLES: usize = 8;

/// Triangles one SIMD filter test covers: a leaf is tested in groups of this many
/// (the last group padded).
pub const FILTER_LANES: usize = 4;

/// What a split costs the SAH, in units of one filter test of four triangles: a
/// leaf of five to eight triangles is kept whole unless splitting it saves more.
const SPLIT_COST: f32 = 0.75;

/// The most triangles a [`WorldBvh`] holds (a leaf reference numbers its first record
/// in 27 bits).
pub const MAX_WORLD_TRIANGLES: usize = (1 << 27) - FILTER_LANES;

/// The most whole items a [`WorldBvh`] holds.
pub const MAX_WHOLE_ITEMS: usize = 1 << 29;

// A tree has fewer nodes than items, so a node's index, its reference, stays below
// 2^30: bits 30 and 31 of a node reference are clear (the segment's nearest-first walk
// keeps a lane there while it sorts a node's children).
const _: () = assert!(MAX_WORLD_TRIANGLES + MAX_WHOLE_ITEMS <= 1 << 30);

/// Child reference tags (top bits): a node (bit 31 clear), a leaf of triangles (`10`),
/// a whole item (`11`); [`NO_CHILD`] for an unused lane.
const LEAF_TAG: u32 = 0x8000_0000;
const WHOLE_TAG: u32 = 0xC000_0000;
const FIRST_MASK: u32 = (1 << 27) - 1;
/// An unused lane's reference: a NaN when read as `f32` bits, which no other reference
/// is (see [`WorldNode::lanes`]).
const NO_CHILD: u32 = u32::MAX;

/// What [`WorldBvh::build`] sorts: a triangle or a whole instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldItem {
    /// A triangle, by its primitive id.
    Triangle(u32),
    /// An instance visited whole, by its number.
    Whole(u32),
}

/// A child of a [`WorldNode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldChild {
    /// Another node, by index.
    Node(u32),
    /// A leaf: `count` records of [`WorldBvh::triangles`] from `first`.
    Triangles {
        /// The first record.
        first: u32,
        /// How many (1 to [`LEAF_TRIANGLES`]).
        count: u32,
    },
    /// A whole item, by number.
    Whole(u32),
    /// An unused lane.
    Empty,
}

/// One node: up to four children and their boxes (an unused lane has an empty box).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct WorldNode {
    /// The children's boxes, in the tree's [`WorldFrame`] (outward-rounded `f32`).
    pub boxes: Aabb4,
    children: [u32; 4],
}

impl WorldNode {
    const EMPTY: WorldNode = WorldNode {
        boxes: Aabb4::EMPTY,
        children: [NO_CHILD; 4],
    };

    /// The references as `f32` bits, for the lane masks (one SIMD load).
    #[inline(always)]
    fn references(&self) -> Vec4 {
        Vec4::from_array(self.children.map(f32::from_bits))
    }

    /// Bit `k` set when lane `k` holds a child.
    #[inline(always)]
    pub fn lanes(&self) -> u32 {
        // `NO_CHILD` is a NaN; no used reference is, as a NaN needs bits 23 to 30 set:
        // a node index stays below 2^30 (there are fewer nodes than items), a leaf has
        // bit 30 clear and a whole item bit 29.
        !self.references().is_nan_mask().bitmask() & 0b1111
    }

    /// Bit `k` set when lane `k` holds a leaf or a whole item (not a node), or is
    /// unused.
    #[inline(always)]
    pub fn not_nodes(&self) -> u32 {
        self.references().is_negative_bitmask()
    }

    /// Child `lane`.
    ///
    /// # Panics
    ///
    /// When `lane` is 4 or more.
    #[inline(always)]
    pub fn child(&self, lane: usize) -> WorldChild {
        let r = self.children[lane];
        if r & LEAF_TAG == 0 {
            WorldChild::Node(r)
        } else if r == NO_CHILD {
            WorldChild::Empty
        } else if r & WHOLE_TAG == WHOLE_TAG {
            WorldChild::Whole(r & !WHOLE_TAG)
        } else {
            WorldChild::Triangles {
                first: r & FIRST_MASK,
                count: ((r >> 27) & 0b111) + 1,
            }
        }
    }

    /// The raw reference of lane `lane` (what the walks keep on their stacks).
    #[inline(always)]
    pub fn reference(&self, lane: usize) -> u32 {
        self.children[lane]
    }
}

/// Decodes a reference taken from [`WorldNode::reference`].
#[inline(always)]
pub fn decode_reference(r: u32) -> WorldChild {
    WorldNode {
        boxes: Aabb4::EMPTY,
        children: [r, NO_CHILD, NO_CHILD, NO_CHILD],
    }
    .child(0)
}

/// Every triangle and whole item of a scene in one four-wide BVH (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct WorldBvh {
    /// What the boxes and corners are measured from.
    frame: WorldFrame,
    bounds: Aabb,
    /// The length of the diagonal of `bounds` ([`Aabb::diagonal`]), which every query's
    /// padding needs.
    diagonal: f64,
    /// The root is `nodes[0]` (absent for an empty tree).
    nodes: Vec<WorldNode>,
    /// Leaf records, in leaf order, followed by `FILTER_LANES - 1` padding records so
    /// that a filter group of four can always be read from any record of a leaf.
    triangles: Vec<LeafTriangle>,
    whole_items: usize,
    /// The median of the leaves' largest extents.
    leaf_extent: f32,
}

impl Default for WorldBvh {
    fn default() -> Self {
        WorldBvh {
            frame: WorldFrame::default(),
            bounds: Aabb::EMPTY,
            diagonal: Aabb::EMPTY.diagonal(),
            nodes: Vec::new(),
            triangles: vec![LeafTriangle::default(); FILTER_LANES - 1],
            whole_items: 0,
            leaf_extent: 0.0,
        }
    }
}

impl WorldBvh {
    /// Builds the tree over `items` with their world boxes `boxes` (outward-rounded, no
    /// NaN corner); `corners(k)` gives the world corners of item `k` when it is a
    /// triangle (each must lie in its box; large builds call it from several threads at
    /// once). `None` when there are more triangles than [`MAX_WORLD_TRIANGLES`] or more
    /// whole items than [`MAX_WHOLE_ITEMS`].
    ///
    /// # Panics
    ///
    /// When `boxes` and `items` differ in length.
    pub fn build(
        boxes: &[Aabb],
        items: &[WorldItem],
        corners: impl Fn(usize) -> [DVec3; 3] + Sync,
    ) -> Option<WorldBvh> {
        WorldBvh::build_in(WorldFrame::default(), boxes, items, corners)
    }

    /// [`build`](Self::build) with the boxes and corners given in `frame` (world
    /// coordinates minus its origin), which the tree keeps for its queries.
    ///
    /// # Panics
    ///
    /// When `boxes` and `items` differ in length.
    pub fn build_in(
        frame: WorldFrame,
        boxes: &[Aabb],
        items: &[WorldItem],
        corners: impl Fn(usize) -> [DVec3; 3] + Sync,
    ) -> Option<WorldBvh> {
        let boxes = boxes.iter().map(ItemBox::new).collect();
        WorldBvh::build_from_item_boxes(frame, boxes, items, corners)
    }

    /// [`build_in`](Self::build_in) from the boxes in the form the build moves them,
    /// which it takes (a scene index writes them in that form as it places the
    /// triangles: no second copy of millions of boxes).
    ///
    /// # Panics
    ///
    /// When `boxes` and `items` differ in length.
    pub(crate) fn build_from_item_boxes(
        frame: WorldFrame,
        boxes: Vec<ItemBox>,
        items: &[WorldItem],
        corners: impl Fn(usize) -> [DVec3; 3] + Sync,
    ) -> Option<WorldBvh> {
        assert_eq!(boxes.len(), items.len(), "one box per item");
        let whole_items = items
            .iter()
            .filter(|i| matches!(i, WorldItem::Whole(_)))
            .count();
        if whole_items > MAX_WHOLE_ITEMS || items.len() - whole_items > MAX_WORLD_TRIANGLES {
            return None;
        }
        let alone = |k: u32| matches!(items[k as usize], WorldItem::Whole(_));
        let rule = LeafRule {
            block: FILTER_LANES,
            max: LEAF_TRIANGLES,
            split_cost: SPLIT_COST,
        };
        let binary = build_binary(boxes, rule, alone);
        let mut tree = collapse(&binary, items, corners, whole_items);
        tree.frame = frame;
        Some(tree)
    }

    /// What the boxes and corners are measured from.
    pub fn frame(&self) -> &WorldFrame {
        &self.frame
    }

    /// Moves everything the tree holds with its frame, which becomes `frame`: the boxes
    /// and corners, measured in the frame, stay as they are. For a move of every
    /// instance alike, by one translation or one similarity
    /// ([`SceneIndex::refit_under`](super::SceneIndex::refit_under)).
    pub(crate) fn set_frame(&mut self, frame: WorldFrame) {
        self.frame = frame;
    }

    /// The box of everything, in the tree's [`frame`](Self::frame) (empty for an empty
    /// tree).
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// The length of the diagonal of [`bounds`](Self::bounds), kept with the tree.
    pub fn diagonal(&self) -> f64 {
        self.diagonal
    }

    /// The nodes; the root is the first.
    pub fn nodes(&self) -> &[WorldNode] {
        &self.nodes
    }

    /// The leaf records, padded (see [`WorldChild::Triangles`]).
    pub fn triangles(&self) -> &[LeafTriangle] {
        &self.triangles
    }

    /// Number of triangles held.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len() + 1 - FILTER_LANES
    }

    /// The median over the leaves of triangles of their boxes' largest extent (0 for a
    /// tree without any): how large a query must be to hold a typical leaf whole.
    pub fn leaf_extent(&self) -> f32 {
        self.leaf_extent
    }

    /// Number of whole items held.
    pub fn whole_count(&self) -> usize {
        self.whole_items
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Where the records of the triangles `ids` are: one scan of every leaf (for
    /// [`repack`](Self::repack), which a scene index calls at every edit of a drawable
    /// it keeps in the tree, with the places it found at the first).
    pub(crate) fn places_of(&self, ids: Range<u32>) -> Vec<RecordPlace> {
        let mut places = Vec::with_capacity(ids.len());
        for (node, n) in self.nodes.iter().zip(0u32..) {
            for lane in 0..4u32 {
                let WorldChild::Triangles { first, count } = node.child(lane as usize) else {
                    continue;
                };
                for at in first..first + count {
                    if ids.contains(&self.triangles[at as usize].id) {
                        places.push(RecordPlace {
                            at,
                            leaf: n << 2 | lane,
                        });
                    }
                }
            }
        }
        places
    }

    /// The box of every whole item (by its instance), as its leaf holds it: one scan of
    /// every node (for [`SceneIndex::refit_drawable`](super::SceneIndex::refit_drawable),
    /// which keeps an edited whole item in place while it stays in that box).
    pub(crate) fn whole_item_boxes(&self) -> HashMap<u32, Aabb> {
        let mut boxes = HashMap::with_capacity(self.whole_items);
        for node in &self.nodes {
            for lane in 0..4 {
                if let WorldChild::Whole(k) = node.child(lane) {
                    boxes.insert(k, node.boxes.get(lane));
                }
            }
        }
        boxes
    }

    /// Packs the records at `places` ([`places_of`](Self::places_of)) anew, for corners
    /// that moved without leaving their leaves: `moved(id)` gives a triangle's corners
    /// (in the tree's frame) and its box as the build pads it, `None` when it has none
    /// now. When every triangle's new box lies in its leaf's box, every record is packed
    /// anew in its leaf's grid and the boxes above stay as they are (they hold the
    /// leaves' boxes, which hold the new ones); otherwise nothing changes and the answer
    /// is false.
    pub(crate) fn repack(
        &mut self,
        places: &[RecordPlace],
        moved: impl Fn(u32) -> Option<([DVec3; 3], Aabb)>,
    ) -> bool {
        let mut packed: Vec<LeafTriangle> = Vec::with_capacity(places.len());
        // The places of one leaf come together: its box and grid are made once.
        let mut current: Option<(u32, Aabb, Quantizer)> = None;
        for place in places {
            let (leaf, grid) = match current {
                Some((at, leaf, grid)) if at == place.leaf => (leaf, grid),
                _ => {
                    let Some(node) = self.nodes.get((place.leaf >> 2) as usize) else {
                        return false;
                    };
                    let leaf = node.boxes.get((place.leaf & 3) as usize);
                    let grid = Quantizer::new(leaf.min, leaf.max);
                    current = Some((place.leaf, leaf, grid));
                    (leaf, grid)
                }
            };
            let id = self.triangles[place.at as usize].id;
            let Some((corners, bound)) = moved(id) else {
                return false;
            };
            // (False for a NaN corner.)
            if !leaf.contains(&bound) {
                return false;
            }
            packed.push(grid.pack(id, corners));
        }
        for (place, record) in places.iter().zip(packed) {
            self.triangles[place.at as usize] = record;
        }
        true
    }

    /// Bytes used by the nodes and leaf records.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<WorldNode>()
            + self.triangles.len() * std::mem::size_of::<LeafTriangle>()
    }

    /// The depth-first walk the queries that want every hit share: `enter` gives the
    /// lanes of a node to go into (bit `k` for lane `k`; unused lanes are dropped
    /// here), `leaf` is called with each entered lane that is not a node (a leaf or a
    /// whole item) and returns false to stop the walk.
    #[inline(always)]
    pub fn walk_depth_first(
        &self,
        mut enter: impl FnMut(&WorldNode) -> u32,
        mut leaf: impl FnMut(&WorldNode, usize) -> bool,
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = LaneStack::new();
        let mut current = 0u32;
        loop {
            let node = &self.nodes[current as usize];
            let entered = enter(node) & node.lanes();
            let not_nodes = node.not_nodes();
            let mut leaves = entered & not_nodes;
            while leaves != 0 {
                let lane = leaves.trailing_zeros() as usize;
                leaves &= leaves - 1;
                if !leaf(node, lane) {
                    return;
                }
            }
            // The inner children entered kept; the lowest of them next, or else the
            // next left from the nodes above.
            stack.push(current, entered & !not_nodes);
            match stack.next() {
                Some((parent, lane)) => current = self.nodes[parent as usize].children[lane],
                None => return,
            }
        }
    }

    /// [`walk_depth_first`](Self::walk_depth_first) taking subtrees whole, as
    /// three-mesh-bvh's shapecast does with `CONTAINED` boxes: `enter` gives the lanes of
    /// a node to go into and, among them, those taken whole (both bit `k` for lane `k`).
    /// A subtree taken whole is walked next, without `enter`: every lane below it is
    /// entered and taken whole. `leaf` is called with each entered lane that is not a
    /// node and whether it is taken whole, and returns false to stop the walk.
    #[inline(always)]
    pub fn walk_depth_first_taking_whole(
        &self,
        mut enter: impl FnMut(&WorldNode) -> (u32, u32),
        mut leaf: impl FnMut(&WorldNode, usize, bool) -> bool,
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = WalkStack::new();
        // The nodes below lanes taken whole, walked before the rest of the stack. (One
        // loop, one call of `leaf`: the callers' big closures stay inlined.)
        let mut whole_stack = WalkStack::new();
        let (mut current, mut taking_whole) = (0u32, false);
        loop {
            let node = &self.nodes[current as usize];
            let (entered, whole) = if taking_whole {
                (node.lanes(), u32::MAX)
            } else {
                let (entered, whole) = enter(node);
                (entered & node.lanes(), whole)
            };
            let not_nodes = node.not_nodes();
            let mut leaves = entered & not_nodes;
            while leaves != 0 {
                let lane = leaves.trailing_zeros() as usize;
                leaves &= leaves - 1;
                if !leaf(node, lane, whole & (1 << lane) != 0) {
                    return;
                }
            }
            let inner = entered & !not_nodes;
            let inner_whole = inner & whole;
            if inner_whole != 0 {
                whole_stack.push_lanes(&node.children, inner_whole);
            }
            // The inner children entered and not taken whole, the last of them next.
            stack.push_lanes(&node.children, inner & !whole);
            if taking_whole || inner_whole != 0 {
                if let Some(below) = whole_stack.pop() {
                    (current, taking_whole) = (below, true);
                    continue;
                }
            }
            taking_whole = false;
            match stack.pop() {
                Some(next) => current = next,
                None => return,
            }
        }
    }

    /// Calls `visit` with every child reference whose box `enter` accepts, depth first:
    /// a simple walk for tests and tools (the queries have their own).
    pub fn for_each_child(
        &self,
        mut enter: impl FnMut(&Aabb) -> bool,
        mut visit: impl FnMut(WorldChild, &Aabb),
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![0u32];
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            let lanes = node.lanes();
            for lane in (0..4).filter(|k| lanes & (1 << k) != 0) {
                let b = node.boxes.get(lane);
                if !enter(&b) {
                    continue;
                }
                match node.child(lane) {
                    WorldChild::Node(n) => stack.push(n),
                    child => visit(child, &b),
                }
            }
        }
    }
}

/// The four-wide tree of a binary build, with its leaf records.
///
/// The nodes are made first, on this thread; the leaf records, which read every
/// triangle's corners in the build's order (scattered reads, most of the 7 ms a
/// one-thread collapse of littlest_tokyo took), are written after, on up to as many
/// threads as the binary build used.
fn collapse(
    binary: &BinaryBuild,
    items: &[WorldItem],
    corners: impl Fn(usize) -> [DVec3; 3] + Sync,
    whole_items: usize,
) -> WorldBvh {
    let Some(root) = binary.nodes.first() else {
        return WorldBvh::default();
    };
    let bn = &binary.nodes;
    let half_area = |n: u32| {
        let b = &bn[n as usize].bounds;
        let d = (b.max - b.min).max(glam::Vec3::ZERO);
        d.x * d.y + d.y * d.z + d.z * d.x
    };
    let mut nodes = vec![WorldNode::EMPTY];
    let mut leaves = Vec::new();
    // The leaf records so far.
    let mut records = 0u32;
    // (wide node to fill, binary node whose children it gets)
    let mut work = vec![(0usize, 0u32)];
    while let Some((wide, index)) = work.pop() {
        let node = &bn[index as usize];
        // The binary nodes becoming this node's children, left to right: a leaf root is
        // its own only child.
        let mut lanes: smallvec::SmallVec<[u32; 4]> = if node.count > 0 {
            smallvec::smallvec![index]
        } else {
            smallvec::smallvec![node.first, node.first + 1]
        };
        while lanes.len() < 4 {
            let widest = (0..lanes.len())
                .filter(|&k| bn[lanes[k] as usize].count == 0)
                .max_by(|&a, &b| half_area(lanes[a]).total_cmp(&half_area(lanes[b])));
            let Some(k) = widest else { break };
            let opened = bn[lanes[k] as usize];
            lanes[k] = opened.first;
            lanes.insert(k + 1, opened.first + 1);
        }
        let mut filled = WorldNode::EMPTY;
        for (lane, &n) in lanes.iter().enumerate() {
            let child = &bn[n as usize];
            filled.boxes.set(lane, &child.bounds);
            filled.children[lane] = if child.count == 0 {
                let next = nodes.len();
                nodes.push(WorldNode::EMPTY);
                work.push((next, n));
                next as u32
            } else {
                let first_item = binary.order[child.first as usize] as usize;
                match items[first_item] {
                    // The build gives every whole item a leaf of its own.
                    WorldItem::Whole(k) => WHOLE_TAG | k,
                    // (Every item of a leaf is then a triangle.)
                    WorldItem::Triangle(_) => {
                        let first = records;
                        records += child.count;
                        leaves.push(n);
                        LEAF_TAG | (child.count - 1) << 27 | first
                    }
                }
            };
        }
        nodes[wide] = filled;
    }
    debug_assert_eq!(records as usize, items.len() - whole_items);
    let fill = |leaves: &[u32], out: &mut Vec<LeafTriangle>| {
        for &n in leaves {
            let leaf = &bn[n as usize];
            let grid = Quantizer::new(leaf.bounds.min, leaf.bounds.max);
            for &item in &binary.order[leaf.first as usize..(leaf.first + leaf.count) as usize] {
                if let WorldItem::Triangle(id) = items[item as usize] {
                    out.push(grid.pack(id, corners(item as usize)));
                }
            }
        }
    };
    let records_of = |n: &u32| bn[*n as usize].count as usize;
    // Room for the padding too.
    let room = records as usize + FILTER_LANES - 1;
    let threads = build_threads(records as usize);
    let mut triangles = fill_in_runs(&leaves, records_of, room, threads, fill);
    triangles.extend([LeafTriangle::default(); FILTER_LANES - 1]);
    let mut extents: Vec<f32> = (leaves.iter())
        .map(|&n| {
            let b = &bn[n as usize].bounds;
            (b.max - b.min).max_element()
        })
        .collect();
    let leaf_extent = match extents.len() {
        0 => 0.0,
        n => *extents.select_nth_unstable_by(n / 2, f32::total_cmp).1,
    };
    WorldBvh {
        frame: WorldFrame::default(),
        bounds: root.bounds,
        diagonal: root.bounds.diagonal(),
        nodes,
        triangles,
        whole_items,
        leaf_extent,
    }
}

/// The records `fill` writes for `leaves` (binary leaves, `records_of` records each),
/// in their order, in a list with room for `room` records: on one thread, or in runs of
/// about the same number of records on up to `threads` scoped threads (the first run on
/// this one, straight into the list; each other into a list of its own, appended).
fn fill_in_runs(
    leaves: &[u32],
    records_of: impl Fn(&u32) -> usize,
    room: usize,
    threads: usize,
    fill: impl Fn(&[u32], &mut Vec<LeafTriangle>) + Sync,
) -> Vec<LeafTriangle> {
    let mut out = Vec::with_capacity(room);
    if threads <= 1 {
        fill(leaves, &mut out);
        return out;
    }
    let per_run = room.div_ceil(threads);
    let mut runs = Vec::with_capacity(threads);
    let mut rest = leaves;
    while !rest.is_empty() {
        let (mut count, mut records) = (0, 0);
        while count < rest.len() && (count == 0 || records < per_run) {
            records += records_of(&rest[count]);
            count += 1;
        }
        let (run, after) = rest.split_at(count);
        runs.push((run, records));
        rest = after;
    }
    fill_runs(&mut out, &runs, fill);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` small triangles along a diagonal and, every tenth item, a whole item.
    fn items(n: usize) -> (Vec<Aabb>, Vec<WorldItem>, Vec<[DVec3; 3]>) {
        let mut boxes = Vec::new();
        let mut items = Vec::new();
        let mut corners = Vec::new();
        for k in 0..n {
            let p = DVec3::splat(k as f64);
            let c = [p, p + DVec3::X, p + DVec3::Y];
            corners.push(c);
            boxes.push(Aabb::from_f64_outward(p, p + DVec3::new(1.0, 1.0, 0.0)));
            items.push(if k % 10 == 9 {
                WorldItem::Whole(k as u32)
            } else {
                WorldItem::Triangle(k as u32)
            });
        }
        (boxes, items, corners)
    }

    #[test]
    fn records_are_packed_anew_only_when_every_triangle_stays_in_its_leaf() {
        let (boxes, list, corners) = items(250);
        let mut bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
        let ids = 40..60u32;
        let places = bvh.places_of(ids.clone());
        // Items 49 and 59 are whole: they have no record.
        assert_eq!(places.len(), 18);
        let before = bvh.triangles().to_vec();
        // Each triangle turned inside its own box.
        let turned = |id: u32| {
            let p = DVec3::splat(f64::from(id));
            let c = [p + DVec3::new(1.0, 1.0, 0.0), p + DVec3::X, p];
            Some((c, boxes[id as usize]))
        };
        assert!(bvh.repack(&places, turned));
        for place in &places {
            let leaf = bvh.nodes[(place.leaf >> 2) as usize]
                .boxes
                .get((place.leaf & 3) as usize);
            let id = before[place.at as usize].id;
            let (c, _) = turned(id).unwrap();
            let expected = LeafTriangle::new(id, c, leaf.min, leaf.max);
            assert_eq!(bvh.triangles()[place.at as usize], expected);
            assert_ne!(expected, before[place.at as usize]);
        }
        let untouched = |a: &[LeafTriangle], b: &[LeafTriangle]| {
            (a.iter().zip(b)).all(|(a, b)| ids.contains(&a.id) || a == b)
        };
        assert!(untouched(&before, bvh.triangles()));
        // One triangle out of its leaf, or without corners: nothing changes.
        let packed = bvh.triangles().to_vec();
        let far = Aabb {
            min: glam::Vec3::splat(500.0),
            max: glam::Vec3::splat(501.0),
        };
        let one_out = |id: u32| turned(id).map(|(c, b)| (c, if id == 50 { far } else { b }));
        assert!(!bvh.repack(&places, one_out));
        let one_gone = |id: u32| turned(id).filter(|_| id != 55);
        assert!(!bvh.repack(&places, one_gone));
        assert_eq!(bvh.triangles(), &packed[..]);
    }

    #[test]
    fn whole_items_are_found_with_their_own_boxes() {
        let (boxes, list, corners) = items(250);
        let bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
        let found = bvh.whole_item_boxes();
        // Items 9, 19, ..., 249, each in a leaf of its own: its box is its item's.
        let mut keys: Vec<u32> = found.keys().copied().collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..25).map(|k| 10 * k + 9).collect::<Vec<u32>>());
        for (k, b) in &found {
            assert_eq!(*b, boxes[*k as usize], "item {k}");
        }
        assert!(WorldBvh::default().whole_item_boxes().is_empty());
    }

    #[test]
    fn every_item_is_reached_once_in_a_box_holding_it() {
        for n in [0, 1, 3, 4, 5, 9, 10, 11, 250] {
            let (boxes, list, corners) = items(n);
            let bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
            let mut seen = vec![0; n];
            bvh.for_each_child(
                |_| true,
                |child, b| match child {
                    WorldChild::Whole(k) => {
                        seen[k as usize] += 1;
                        assert!(b.min.cmple(boxes[k as usize].min).all());
                    }
                    WorldChild::Triangles { first, count } => {
                        assert!((1..=LEAF_TRIANGLES as u32).contains(&count));
                        for r in &bvh.triangles()[first as usize..(first + count) as usize] {
                            seen[r.id as usize] += 1;
                            let own = boxes[r.id as usize];
                            assert!(b.min.cmple(own.min).all() && b.max.cmpge(own.max).all());
                        }
                    }
                    other => panic!("unexpected {other:?}"),
                },
            );
            assert!(seen.iter().all(|&s| s == 1), "{n}: {seen:?}");
            assert_eq!(bvh.triangle_count(), n - n / 10);
            assert_eq!(bvh.whole_count(), n / 10);
            assert_eq!(bvh.is_empty(), n == 0);
        }
    }

    #[test]
    fn lane_masks_tell_nodes_leaves_and_unused_lanes_apart() {
        let (boxes, list, corners) = items(250);
        let bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
        for node in bvh.nodes() {
            for lane in 0..4 {
                let used = node.lanes() & (1 << lane) != 0;
                let not_node = node.not_nodes() & (1 << lane) != 0;
                match node.child(lane) {
                    WorldChild::Empty => assert!(!used && not_node),
                    WorldChild::Node(_) => assert!(used && !not_node),
                    _ => assert!(used && not_node),
                }
                assert_eq!(decode_reference(node.reference(lane)), node.child(lane));
            }
        }
        // Extreme references decode.
        for r in [
            LEAF_TAG | 7 << 27 | FIRST_MASK,
            WHOLE_TAG | (MAX_WHOLE_ITEMS as u32 - 1),
        ] {
            let node = WorldNode {
                boxes: Aabb4::EMPTY,
                children: [r, 5, NO_CHILD, NO_CHILD],
            };
            assert_eq!(node.lanes(), 0b11);
            assert_eq!(node.not_nodes(), 0b1101);
        }
    }

    #[test]
    fn subtrees_taken_whole_hand_out_the_leaves_the_plain_walk_does() {
        let (boxes, list, corners) = items(250);
        let bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
        let child_key =
            |node: &WorldNode, lane: usize| (node.reference(lane), node.boxes.get(lane));
        // Boxes meeting the probe entered; those within it taken whole.
        for (lo, hi) in [(40.0, 120.0), (-1.0, 300.0), (17.5, 18.5), (400.0, 500.0)] {
            let probe = Aabb {
                min: glam::Vec3::splat(lo),
                max: glam::Vec3::splat(hi),
            };
            let mut plain = Vec::new();
            bvh.walk_depth_first(
                |node| node.boxes.intersecting(&probe),
                |node, lane| {
                    plain.push(child_key(node, lane));
                    true
                },
            );
            let (mut taken, mut entered_nodes, mut whole_leaves) = (Vec::new(), 0, 0);
            bvh.walk_depth_first_taking_whole(
                |node| {
                    entered_nodes += 1;
                    (node.boxes.intersecting(&probe), node.boxes.within(&probe))
                },
                |node, lane, whole| {
                    let b = node.boxes.get(lane);
                    // Taken whole exactly when within the probe (a box within lies
                    // within every box above it).
                    let within = b.min.cmpge(probe.min).all() && b.max.cmple(probe.max).all();
                    assert_eq!(whole, within, "[{lo}, {hi}]: {b:?}");
                    whole_leaves += usize::from(whole);
                    taken.push(child_key(node, lane));
                    true
                },
            );
            // The same leaves, each once (a subtree taken whole comes at once: the order
            // may differ).
            let by_reference = |v: &mut Vec<(u32, Aabb)>| v.sort_by_key(|c| c.0);
            by_reference(&mut taken);
            by_reference(&mut plain);
            assert_eq!(taken, plain, "[{lo}, {hi}]");
            // `enter` is asked only about nodes not taken whole: only the root when the
            // probe holds the whole tree.
            if lo < 0.0 {
                assert_eq!(entered_nodes, 1);
                assert_eq!(whole_leaves, taken.len());
            }
            if lo == 40.0 {
                // Leaves within the probe and leaves across its ends.
                assert!(0 < whole_leaves && whole_leaves < taken.len());
            }
            assert_eq!(plain.is_empty(), lo > 300.0);
        }
        // A stop ends the walk at once.
        let mut seen = 0;
        bvh.walk_depth_first_taking_whole(
            |node| (node.lanes(), node.lanes()),
            |_, _, _| {
                seen += 1;
                seen < 3
            },
        );
        assert_eq!(seen, 3);
    }

    #[test]
    fn a_single_triangle_is_one_leaf_under_the_root() {
        let (boxes, list, corners) = items(1);
        let bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
        assert_eq!(bvh.nodes().len(), 1);
        assert_eq!(
            bvh.nodes()[0].child(0),
            WorldChild::Triangles { first: 0, count: 1 }
        );
        assert_eq!(bvh.bounds(), boxes[0]);
        assert_eq!(bvh.leaf_extent(), 1.0);
        assert_eq!(WorldBvh::default().leaf_extent(), 0.0);
    }

    #[test]
    fn the_leaf_extent_is_the_median_leafs_largest_extent() {
        let (boxes, list, corners) = items(250);
        let bvh = WorldBvh::build(&boxes, &list, |k| corners[k]).unwrap();
        let mut extents = Vec::new();
        bvh.for_each_child(
            |_| true,
            |child, b| {
                if let WorldChild::Triangles { .. } = child {
                    extents.push((b.max - b.min).max_element());
                }
            },
        );
        extents.sort_by(f32::total_cmp);
        assert_eq!(bvh.leaf_extent(), extents[extents.len() / 2]);
        // Runs of one to eight unit triangles along the diagonal.
        assert!((1.0..=8.0).contains(&bvh.leaf_extent()));
    }

    #[test]
    fn leaf_records_filled_in_runs_on_threads_come_in_leaf_order() {
        // 500 leaves of 1 to 8 records; a record's id names its leaf and place in it.
        let sizes: Vec<u32> = (0..500).map(|k| 1 + (k * 7) % 8).collect();
        let fill = |leaves: &[u32], out: &mut Vec<LeafTriangle>| {
            for &leaf in leaves {
                for k in 0..sizes[leaf as usize] {
                    let id = leaf * 16 + k;
                    out.push(LeafTriangle::new(
                        id,
                        [DVec3::ZERO; 3],
                        glam::Vec3::ZERO,
                        glam::Vec3::ONE,
                    ));
                }
            }
        };
        let leaves: Vec<u32> = (0..500).collect();
        let expected: Vec<u32> = (0..500u32)
            .flat_map(|leaf| (0..sizes[leaf as usize]).map(move |k| leaf * 16 + k))
            .collect();
        let room = expected.len();
        for threads in [1, 2, 3, 7, 1000] {
            let records_of = |n: &u32| sizes[*n as usize] as usize;
            let out = fill_in_runs(&leaves, records_of, room, threads, fill);
            let ids: Vec<u32> = out.iter().map(|r| r.id).collect();
            assert_eq!(ids, expected, "{threads} threads");
        }
    }
}
