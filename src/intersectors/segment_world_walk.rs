//! The [`LineSegmentIntersector`]'s own walk of a scene index's world tree
//! ([`Intersector::intersect_index`]).
//!
//! The world segment is prepared once in `f32` ([`SegmentFilter`]); the walk tests four
//! node boxes at a time and filters the triangles of every leaf it reaches four at a
//! time. A triangle that passes is located
//! ([`SceneIndex::locate`](crate::accel::SceneIndex::locate)), and the first time the
//! walk meets its instance the segment is moved to the instance's frame exactly as
//! the plain traversal moves it; the exact test then runs on the drawable's own
//! vertices there, so every hit is the plain traversal's, bit for bit. Whole items go
//! through [`Intersector::intersect`] as the plain traversal visits them.
//!
//! With a limit that can stop early (`Nearest`, `One`) the walk is nearest first: at
//! every node the leaves it enters are filtered at once, nearest first, and the inner
//! nodes it enters are visited by their entry parameter, the nearest at once and the
//! others from a stack; leaves and nodes that start beyond the best hit so far are
//! skipped. For every hit (`None`, and `OnePerDrawable`, whose best hit per instance
//! needs them all) it is depth first.

use glam::{DVec3, Vec3, Vec4};
use smallvec::SmallVec;

use super::hit_order::world_tree_padding;
use super::segment_hit_store::{compare_across, PendingHit};
use super::world_candidate;
use super::{intersect_segment_triangle_up_to, LineSegmentIntersector, PrimitiveKind};
use crate::accel::{
    f32_at_least, push_lanes, sort_four_descending, Aabb, LeafTriangle, SegmentFilter,
    TriangleList, WalkStack, WorldBvh, WorldChild, WorldNode, FILTER_LANES,
};
use crate::visitor::{IndexContext, IntersectionLimit, Intersector};

/// An instance the walk met.
struct Met<'a> {
    instance: u32,
    /// The segment in the instance's frame, as [`LineSegmentIntersector::localize`]
    /// makes it.
    start: DVec3,
    direction: DVec3,
    vertices: &'a [Vec3],
    list: TriangleList<'a>,
    /// Its visit in the hit store, once it has a hit (every hit wanted).
    visit: Option<u32>,
}

/// A candidate triangle, its corners as the exact test takes them.
type Candidate = world_candidate::Candidate<DVec3>;

/// One walk: the query, the index, and the instances met.
struct Walk<'q, 'c, 'a> {
    query: &'q mut LineSegmentIntersector,
    context: &'c mut IndexContext<'a>,
    world: &'a WorldBvh,
    /// Per slot (see [`IndexContext::slot`]): the instance met, or `None` when the
    /// traversal does not reach it.
    met: SmallVec<[Option<Met<'a>>; 8]>,
    /// `OnePerDrawable`: per slot, the instance's best hit so far (kept apart from
    /// [`Met`]: every limit moves instance records about, and a pending hit would more
    /// than double their size).
    best_per_slot: SmallVec<[Option<PendingHit>; 4]>,
    /// `Nearest` and `One`: the best hit of the world tree's triangles so far and its
    /// slot, handed to the hit store once, at the end (whole items, visited through
    /// [`Intersector::intersect`], keep theirs in the store as the plain traversal does).
    best: Option<(PendingHit, usize)>,
    /// The ratio past which no hit is wanted (`Nearest`: the best so far, here or in the
    /// store).
    limit: f64,
    /// The same rounded up to `f32`, for the `f32` keys of the boxes (a key above it is
    /// above `limit`).
    limit32: f32,
}

impl LineSegmentIntersector {
    /// Walks the world tree of `context`'s index (see the module docs).
    pub(super) fn walk_world(&mut self, context: &mut IndexContext<'_>) {
        // Slots are this walk's own (another walk may have run in this query).
        context.forget_slots();
        let world = context.index().world();
        if world.is_empty() {
            return;
        }
        // Boxes and corners are measured in the tree's frame; the exact tests' rounding
        // grows with the absolute coordinates.
        let frame = world.frame();
        let (pad, scale) = world_tree_padding(world);
        // Whole items may hold points and lines, hit within the picking tolerance.
        let pad = frame.length(self.tolerance.unwrap_or(0.0)) + pad;
        let filter = SegmentFilter::in_frame(
            self.world_start,
            self.world_end - self.world_start,
            pad,
            scale,
            frame,
        );
        let limit = self.limit;
        let mut walk = Walk {
            query: self,
            context,
            world,
            met: SmallVec::new(),
            best_per_slot: SmallVec::new(),
            best: None,
            limit: f64::INFINITY,
            limit32: f32::INFINITY,
        };
        walk.update_limit();
        match limit {
            IntersectionLimit::Nearest | IntersectionLimit::One => walk.nearest_first(&filter),
            IntersectionLimit::None | IntersectionLimit::OnePerDrawable => {
                walk.depth_first(&filter)
            }
        }
        walk.finish();
    }
}

/// The lane of `lanes` (a non-empty mask) with the smallest key, the first of equals.
#[inline(always)]
fn nearest_lane(lanes: u32, keys: &[f32; 4]) -> usize {
    let mut best = lanes.trailing_zeros() as usize;
    let mut rest = lanes & (lanes - 1);
    while rest != 0 {
        let lane = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if keys[lane] < keys[best] {
            best = lane;
        }
    }
    best
}

/// Bits 30 and 31 of a packed child: its lane's order.
const LANE_BITS: u32 = 0b11 << 30;

/// The children of the lanes of `lanes` (a non-empty mask; node references, all below
/// 2^30), packed with their keys, ordered by key, the largest first, equal keys in lane
/// order; and how many there are (the places past them hold 0).
///
/// A child is packed as an integer that orders as the children are to be visited: the
/// key's bits plus one (which order as the keys do, keys being neither negative, `-0`
/// nor NaN) above two bits for the lane (bits 30 and 31 of the reference, which a node
/// reference leaves clear: see
/// [`MAX_WORLD_TRIANGLES`](crate::accel::MAX_WORLD_TRIANGLES)) and the reference; 0 for
/// the lanes left out; sorted by [`sort_four_descending`], without a branch on the keys
/// (littlest_tokyo, nearest segments, callgrind's branch simulation: 34 mispredictions
/// a query with the insertion sort this replaced, 23 with this).
#[inline(always)]
fn farthest_first(lanes: u32, keys: &[f32; 4], references: &[u32; 4]) -> ([u64; 4], usize) {
    let packed = |lane: usize| {
        let on = u64::from((lanes >> lane) & 1).wrapping_neg();
        let order = u64::from(3 - lane as u32) << 30;
        (key_code(keys[lane]) << 32 | order | u64::from(references[lane])) & on
    };
    let mut sorted = [packed(0), packed(1), packed(2), packed(3)];
    sort_four_descending(&mut sorted);
    (sorted, lanes.count_ones() as usize)
}

/// A key as [`farthest_first`] packs it: its bits plus one, which order as the keys
/// do for keys from `+0` to `+∞`.
#[inline(always)]
fn key_code(key: f32) -> u64 {
    u64::from(key.to_bits().wrapping_add(1))
}

/// The reference of a child packed by [`farthest_first`].
#[inline(always)]
fn packed_reference(packed: u64) -> u32 {
    packed as u32 & !LANE_BITS
}

/// Whether the key of a child packed by [`farthest_first`] is at most `limit` (not
/// negative: `+ 0.0` turns `-0` into `+0`).
#[inline(always)]
fn packed_key_at_most(packed: u64, limit: f32) -> bool {
    packed >> 32 <= key_code(limit + 0.0)
}

/// Triangles [`Walk::depth_first`] gathers (at most) before testing them.
const DEFERRED_TRIANGLES: usize = 32;

/// Filters the leaf of `count` triangles from `first` in lane `lane` of `node`, four at
/// a time: hands `group` each group's records (four, the tree pads its array) with the
/// lanes that may be hit (bit `k` for record `k`).
#[inline(always)]
fn filtered_groups(
    world: &WorldBvh,
    filter: &SegmentFilter,
    node: &WorldNode,
    lane: usize,
    first: u32,
    count: u32,
    mut group: impl FnMut(&[LeafTriangle], u32),
) {
    let (min, max) = node.boxes.splat_lane(lane);
    // The leaf's box again, from the splats' first lanes (no second lookup).
    let corner = |v: [Vec4; 3]| Vec3::new(v[0].x, v[1].x, v[2].x);
    let reach = filter.leaf(&Aabb {
        min: corner(min),
        max: corner(max),
    });
    let (mut at, end) = (first as usize, (first + count) as usize);
    while at < end {
        let records = &world.triangles()[at..at + FILTER_LANES];
        let lanes = (end - at).min(FILTER_LANES);
        group(records, filter.triangles(records, lanes, min, max, reach));
        at += FILTER_LANES;
    }
}

impl<'a> Walk<'_, '_, 'a> {
    /// Recomputes [`limit`](Self::limit) after a hit.
    #[inline(always)]
    fn update_limit(&mut self) {
        if self.query.limit == IntersectionLimit::Nearest {
            let stored = self.query.pending.first_ratio().unwrap_or(f64::INFINITY);
            let here = self.best.map_or(f64::INFINITY, |(hit, _)| hit.ratio);
            self.limit = stored.min(here);
            self.limit32 = f32_at_least(self.limit);
        }
    }

    /// Whether no further hit is wanted (`One` has one).
    #[inline(always)]
    fn done(&self) -> bool {
        self.query.limit == IntersectionLimit::One
            && (self.best.is_some() || self.query.reached_limit())
    }

    /// Every leaf and whole item the segment may touch, depth first.
    ///
    /// The triangles that pass the filter are gathered and tested a batch at a time:
    /// looping over each group's few passes mispredicted its exit about once a group
    /// (callgrind's branch simulation, all hits on littlest_tokyo). Every hit is kept,
    /// so the order of the tests does not matter, and a batch's triangles are all read
    /// before any is tested ([`triangles`](Self::triangles)).
    fn depth_first(&mut self, filter: &SegmentFilter) {
        let world = self.world;
        let mut passed = [0u32; DEFERRED_TRIANGLES];
        let mut count = 0;
        world.walk_depth_first(
            |node| filter.entries(&node.boxes).mask,
            |node, lane| {
                match node.child(lane) {
                    WorldChild::Triangles { first, count: n } => {
                        filtered_groups(world, filter, node, lane, first, n, |records, kept| {
                            if count + FILTER_LANES > passed.len() {
                                self.triangles(&passed[..count]);
                                count = 0;
                            }
                            let ids = [0, 1, 2, 3].map(|k| records[k].id);
                            count += push_lanes(&mut passed[count..], &ids, kept);
                        });
                    }
                    WorldChild::Whole(k) => self.context.visit_whole(self.query, k),
                    WorldChild::Node(_) | WorldChild::Empty => {}
                }
                true
            },
        );
        self.triangles(&passed[..count]);
    }

    /// Nearest first, skipping what starts past the best hit so far, until the limit is
    /// reached.
    fn nearest_first(&mut self, filter: &SegmentFilter) {
        let nodes = self.world.nodes();
        // Inner nodes as `farthest_first` packs them (entry key, lane, reference), the
        // nearest on top.
        let mut stack: WalkStack<u64> = WalkStack::new();
        let mut current = 0u32;
        'walk: loop {
            let node = &nodes[current as usize];
            let entries = filter.entries(&node.boxes);
            // Keys are lower bounds: a child keyed past the limit holds no wanted hit.
            let within = entries.keys.cmple(Vec4::splat(self.limit32)).bitmask();
            let entered = entries.mask & node.lanes() & within;
            let not_nodes = node.not_nodes();
            // (`+ 0`: a key of -0, which the slab's `max` with 0 may give where glam
            // has no SIMD, is +0 to `farthest_first`.)
            let keys = (entries.keys + Vec4::ZERO).to_array();
            let mut leaves = entered & not_nodes;
            while leaves != 0 {
                // The nearest first; none keyed past the best hit found meanwhile.
                let lane = nearest_lane(leaves, &keys);
                if keys[lane] > self.limit32 {
                    break;
                }
                leaves &= !(1 << lane);
                self.leaf(filter, node, lane);
                if self.done() {
                    return;
                }
            }
            let inner = entered & !not_nodes;
            if inner != 0 && inner & (inner - 1) == 0 {
                // One child entered (a third of the visits): nothing to order.
                current = node.reference(inner.trailing_zeros() as usize);
                continue;
            }
            if inner != 0 {
                let references = [0, 1, 2, 3].map(|lane| node.reference(lane));
                let (sorted, count) = farthest_first(inner, &keys, &references);
                // The others on the stack, the nearest of them on top; the nearest next.
                current = packed_reference(stack.push_all_but_last(sorted, count));
                continue;
            }
            while let Some(packed) = stack.pop() {
                if packed_key_at_most(packed, self.limit32) {
                    current = packed_reference(packed);
                    continue 'walk;
                }
            }
            return;
        }
    }

    /// A leaf or whole item in lane `lane` of `node`, tested at once (`filter`, the
    /// segment's, is kept out of the walk so that the tests may borrow the walk).
    #[inline(always)]
    fn leaf(&mut self, filter: &SegmentFilter, node: &WorldNode, lane: usize) {
        match node.child(lane) {
            WorldChild::Triangles { first, count } => {
                let world = self.world;
                filtered_groups(world, filter, node, lane, first, count, |records, kept| {
                    let mut passed = kept;
                    while passed != 0 && !self.done() {
                        let k = passed.trailing_zeros() as usize;
                        passed &= passed - 1;
                        self.triangle(records[k].id);
                    }
                });
            }
            WorldChild::Whole(k) => {
                self.context.visit_whole(self.query, k);
                self.update_limit();
            }
            WorldChild::Node(_) | WorldChild::Empty => {}
        }
    }

    /// The slot of instance `k`, meeting it if it is new.
    #[inline(always)]
    fn slot(&mut self, k: u32) -> usize {
        if let Some(slot) = self.context.slot(k) {
            return slot as usize;
        }
        let met = self.meet(k);
        let slot = self.met.len();
        self.met.push(met);
        self.context.set_slot(k, slot as u32);
        slot
    }

    /// What the walk keeps of instance `k`, or `None` when the traversal does not reach
    /// it.
    #[cold]
    fn meet(&self, k: u32) -> Option<Met<'a>> {
        if !self.context.reaches(k) {
            return None;
        }
        let instance = self.context.instance(k);
        let geometry = self
            .context
            .scene()
            .drawable(instance.drawable)?
            .as_geometry()?;
        let local = self
            .query
            .localize(&instance.local_to_world, &instance.world_to_local);
        // The drawable's box test, which the plain traversal asks before it tests any
        // primitive, is not only a cull: a segment from so far away that a triangle's
        // corners vanish in the rounding of `corner - start` can pass the exact test
        // without touching the triangle, and the box test, which such a segment does not
        // pass, then decides (tests/precision.rs). From nearer, every hit of the exact
        // test lies in the box the test pads, and the test is left to the exact tests.
        let bound = self.context.scene().drawable_bound(instance.drawable)?;
        if !self
            .query
            .drawable_test_follows_from_triangle_hits(&local, &bound)
            && !self.query.enter_drawable(&local, &bound)
        {
            return None;
        }
        Some(Met {
            instance: k,
            start: local.start,
            direction: local.direction,
            vertices: geometry.vertices(),
            list: TriangleList::of(geometry)?,
            visit: None,
        })
    }

    /// The exact test of the world tree's triangle `id`.
    #[inline(always)]
    fn triangle(&mut self, id: u32) {
        if let Some(candidate) = self.candidate(id) {
            self.test_exactly(candidate);
        }
    }

    /// The exact tests of the world tree's triangles `ids`: every triangle's instance,
    /// indices and corners are read first, then the tests run. (No triangle's reads
    /// depend on another's, so the processor overlaps their cache misses; read just
    /// before its test, each triangle's reads came some 200 instructions after the
    /// previous ones, too far ahead for the processor to start them early. All hits on
    /// littlest_tokyo: 8 % less wall time, for 5 % more instructions.)
    fn triangles(&mut self, ids: &[u32]) {
        let mut candidates: SmallVec<[Candidate; DEFERRED_TRIANGLES]> = SmallVec::new();
        for &id in ids {
            if let Some(candidate) = self.candidate(id) {
                candidates.push(candidate);
            }
        }
        for &candidate in &candidates {
            self.test_exactly(candidate);
        }
    }

    /// What the exact test of the world tree's triangle `id` needs, when its instance is
    /// reached.
    #[inline(always)]
    fn candidate(&mut self, id: u32) -> Option<Candidate> {
        let (k, primitive) = self.context.index().locate(id)?;
        let slot = self.slot(k);
        let met = self.met[slot].as_ref()?;
        let indices = met.list.triangle(primitive)?;
        let vertex = |i: u32| met.vertices.get(i as usize).map(|v| v.as_dvec3());
        Some(Candidate {
            slot: slot as u32,
            primitive,
            indices,
            corners: [
                vertex(indices[0])?,
                vertex(indices[1])?,
                vertex(indices[2])?,
            ],
        })
    }

    /// The exact test of a candidate triangle, and its hit recorded.
    #[inline(always)]
    fn test_exactly(&mut self, candidate: Candidate) {
        let slot = candidate.slot as usize;
        let Some(met) = &self.met[slot] else {
            return;
        };
        let [a, b, c] = candidate.corners;
        let (primitive, indices) = (candidate.primitive, candidate.indices);
        let t_max = self.limit.min(1.0);
        let Some(hit) = intersect_segment_triangle_up_to(met.start, met.direction, a, b, c, t_max)
        else {
            return;
        };
        let hit = PendingHit::new(
            hit.t,
            primitive,
            PrimitiveKind::Triangle,
            indices,
            hit.weights,
            met.start + met.direction * hit.t,
            hit.normal,
        );
        self.record(slot, hit);
    }

    /// Keeps a hit of the instance in `slot` as the limit says. (Inlined: called out
    /// of line, each hit was built aside and copied into the call; callgrind,
    /// littlest_tokyo, a query: all hits −34 instructions, nearest −37.)
    #[inline(always)]
    fn record(&mut self, slot: usize, hit: PendingHit) {
        let Some(met) = self.met[slot].as_mut() else {
            return;
        };
        match self.query.limit {
            IntersectionLimit::None => {
                let pending = &mut self.query.pending;
                let visit = match met.visit {
                    Some(visit) => visit,
                    None => {
                        let visit = pending.add_visit(&self.context.drawable_context(met.instance));
                        met.visit = Some(visit);
                        visit
                    }
                };
                pending.push_in_visit(hit, visit);
            }
            IntersectionLimit::OnePerDrawable => {
                if self.best_per_slot.len() <= slot {
                    self.best_per_slot.resize(slot + 1, None);
                }
                let best = &mut self.best_per_slot[slot];
                if best.is_none_or(|best| hit.compare_in_visit(&best).is_lt()) {
                    *best = Some(hit);
                }
            }
            IntersectionLimit::Nearest | IntersectionLimit::One => {
                let better = match &self.best {
                    None => true,
                    Some((best, best_slot)) => {
                        let (a, b) = (self.visit_key(slot), self.visit_key(*best_slot));
                        compare_across(&hit, a, best, b).is_lt()
                    }
                };
                if better {
                    self.best = Some((hit, slot));
                    self.update_limit();
                }
            }
        }
    }

    /// The drawable and node path of the instance in `slot` (which the walk met).
    fn visit_key(&self, slot: usize) -> (crate::graph::DrawableId, &'a [crate::graph::NodeId]) {
        let k = self.met[slot].as_ref().map_or(0, |m| m.instance);
        let instance = self.context.instance(k);
        (instance.drawable, &instance.path)
    }

    /// Hands the kept hits to the store: each instance's best (`OnePerDrawable`), or the
    /// best of all (`Nearest`, `One`), as a visit of its instance.
    fn finish(&mut self) {
        let limit = self.query.limit;
        let commit = |query: &mut LineSegmentIntersector, hit: PendingHit, k: u32| {
            query.pending.begin_visit();
            query.pending.push_best_of_visit(hit);
            query
                .pending
                .end_visit(&self.context.drawable_context(k), limit);
        };
        match limit {
            IntersectionLimit::OnePerDrawable => {
                for (met, best) in self.met.iter().zip(&self.best_per_slot) {
                    if let (Some(met), Some(best)) = (met, best) {
                        commit(self.query, *best, met.instance);
                    }
                }
            }
            IntersectionLimit::Nearest | IntersectionLimit::One => {
                if let Some((best, slot)) = self.best {
                    if let Some(met) = &self.met[slot] {
                        if self.query.reached_limit() {
                            // `One`: a whole item's hit came first.
                        } else if self.query.makes_full_records() {
                            let context = self.context.drawable_context(met.instance);
                            self.query.keep_only_record(&best, &context);
                        } else {
                            commit(self.query, best, met.instance);
                        }
                    }
                }
            }
            IntersectionLimit::None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_ordered_farthest_first_with_ties_in_lane_order() {
        // Keys from a few values, so that ties are common; every mask of lanes.
        let values: [f32; 8] = [0.0, 0.0, 0.25, 0.5, 1.0, 0.25, 3.0e-39, 1.0e-7];
        let mut rng = crate::test_rng::XorShift::new(7);
        for round in 0..4000 {
            let mut next = || rng.bits16();
            let keys = [0; 4].map(|_| values[next() % values.len()]);
            let references = [0; 4].map(|_| (next() as u32) << 14 | next() as u32 & 0x3FFF);
            let lanes = (round % 15 + 1) as u32;
            let mut expected: Vec<(u32, f32)> = (0..4)
                .filter(|k| lanes & (1 << k) != 0)
                .map(|k| (references[k], keys[k]))
                .collect();
            // Stable: equal keys keep lane order.
            expected.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
            let (sorted, count) = farthest_first(lanes, &keys, &references);
            assert_eq!(count, expected.len());
            let references: Vec<u32> = sorted[..count]
                .iter()
                .map(|&p| packed_reference(p))
                .collect();
            let wanted: Vec<u32> = expected.iter().map(|e| e.0).collect();
            assert_eq!(references, wanted, "{keys:?}, lanes {lanes:04b}");
            // Each key compares with a limit as the keys themselves do.
            for (&packed, &(_, key)) in sorted.iter().zip(&expected) {
                for limit in values.into_iter().chain([-0.0, f32::INFINITY]) {
                    assert_eq!(
                        packed_key_at_most(packed, limit),
                        key <= limit,
                        "{key} {limit}"
                    );
                }
            }
        }
    }
}
