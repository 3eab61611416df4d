//! [`SegmentHitStore`]: a line segment query's hits while the traversal runs, kept
//! compact and turned into [`LineSegmentHit`] records once, in their final order, at the
//! end.
//!
//! A full hit is ~330 bytes with its own node path allocation. It used to be built per
//! primitive hit, in a list then grown by doubling, sorted by moving records and (under
//! `Nearest`) replaced hit after hit. Here a hit is a ~100-byte record naming its
//! drawable visit; each visit with hits stores its path (in one shared buffer) and
//! matrices once; the sort moves positions, not records; and each full record is built
//! once, in place (callgrind, littlest_tokyo, all hits: 4 % fewer instructions).

use std::cmp::Ordering;
use std::ops::Range;

use glam::{DMat3, DMat4, DVec3};
use smallvec::SmallVec;

use super::hit_order::compare_keys;
use super::node_path_pool::NodePathPool;
use super::sorted_positions::{Positions, SortedPositions};
use super::{LineSegmentHit, PrimitiveKind, SegmentHitSummary};
use crate::graph::{DrawableId, NodeId};
use crate::visitor::{DrawableContext, IntersectionLimit};

/// The room made for hits when they outgrow their inline room.
const FIRST_CAPACITY: usize = 16;

/// One primitive hit, in its drawable's frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingHit {
    pub ratio: f64,
    pub primitive_index: u32,
    pub kind: PrimitiveKind,
    /// Vertex indices; the first 1, 2 or 3 count (by `kind`).
    pub indices: [u32; 3],
    /// Barycentric weights of those vertices.
    pub weights: [f64; 3],
    pub local_point: DVec3,
    /// The triangle's normal in the drawable's frame as the exact test found it (the
    /// cross product of two edges; zero for points and lines), made a unit vector only
    /// when the hit's record is made: summaries have no normals, and a limited query's
    /// hits that are passed by a better one need none (callgrind, littlest_tokyo: ~2 %
    /// of an all-hits query as unsorted summaries).
    pub normal: DVec3,
    /// Index of its drawable visit in [`SegmentHitStore::visits`].
    visit: u32,
}

impl PendingHit {
    /// A hit of the drawable visit being tested.
    pub fn new(
        ratio: f64,
        primitive_index: u32,
        kind: PrimitiveKind,
        indices: [u32; 3],
        weights: [f64; 3],
        local_point: DVec3,
        normal: DVec3,
    ) -> PendingHit {
        PendingHit {
            ratio,
            primitive_index,
            kind,
            indices,
            weights,
            local_point,
            normal,
            visit: u32::MAX,
        }
    }

    fn vertex_count(&self) -> usize {
        match self.kind {
            PrimitiveKind::Point => 1,
            PrimitiveKind::Line => 2,
            PrimitiveKind::Triangle => 3,
        }
    }

    /// The order among hits of one drawable visit: ratio, then primitive index, then
    /// vertex indices.
    pub fn compare_in_visit(&self, other: &PendingHit) -> Ordering {
        self.ratio
            .total_cmp(&other.ratio)
            .then(self.primitive_index.cmp(&other.primitive_index))
            .then_with(|| {
                self.indices[..self.vertex_count()].cmp(&other.indices[..other.vertex_count()])
            })
    }
}

/// A drawable visit that produced hits.
#[derive(Clone, Debug)]
struct HitVisit {
    drawable: DrawableId,
    /// Its node path, in [`SegmentHitStore::paths`].
    path: Range<usize>,
    local_to_world: DMat4,
    /// The inverse transpose of the local-to-world matrix's linear part (for normals).
    normal_matrix: DMat3,
}

/// The hits found so far, kept as the intersection limit says.
#[derive(Clone, Debug, Default)]
pub(crate) struct SegmentHitStore {
    // Inline room for what a query with a limit keeps (one hit, and the best so far of
    // the visit being tested).
    hits: SmallVec<[PendingHit; 2]>,
    // The visits and their paths: `Vec`s, reused from query to query. (As `SmallVec`s
    // with one visit and 32 nodes inline, every visit paid for asking which form they
    // were in, and every new intersector for ~480 bytes more to make and move:
    // callgrind, a query, littlest_tokyo, all hits 22 513 → 22 186 instructions,
    // nearest with a new intersector each time 5 818 → 5 526; truck_town 3 976 →
    // 3 893 and 3 056 → 2 763; the city, where a limited query's whole items now
    // allocate the visit, 5 054 → 5 013 with a new intersector. `hits` as a `Vec`
    // too saved 0.5 % more of an all-hits query but cost the city's new intersectors
    // 4 %.)
    visits: Vec<HitVisit>,
    paths: Vec<NodeId>,
    /// Where the current visit's hits start in `hits`.
    visit_start: usize,
    /// The sorts' positions; after [`sort_for_summaries`](Self::sort_for_summaries) or
    /// [`keep_found_order`](Self::keep_found_order), the positions in `hits` in the
    /// final order, for [`summaries`](Self::summaries). Reused from query to query:
    /// filled from the hits in one pass, where a `SmallVec` with 32 pairs inline checked
    /// its room at every pair (0.45 % of an all-hits query on littlest_tokyo). A new
    /// intersector allocates it at its first sort of two hits or more.
    sorted: SortedPositions,
}

impl SegmentHitStore {
    /// Forgets every hit.
    pub fn clear(&mut self) {
        self.hits.clear();
        self.visits.clear();
        self.paths.clear();
        self.visit_start = 0;
        self.sorted.clear();
    }

    /// True before the first hit is kept.
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }

    /// The ratio of the first hit kept (the nearest, under `Nearest`).
    pub fn first_ratio(&self) -> Option<f64> {
        self.hits.first().map(|h| h.ratio)
    }

    /// Starts a drawable visit: the hits pushed until [`end_visit`](Self::end_visit)
    /// belong to it.
    pub fn begin_visit(&mut self) {
        self.visit_start = self.hits.len();
    }

    /// Adds a hit of the current visit.
    #[inline]
    pub fn push(&mut self, hit: PendingHit) {
        if !self.hits.spilled() && self.hits.len() == self.hits.inline_size() {
            // Spilling: a segment through a scene hits a few dozen primitives at most,
            // and growing by doubling from 2 cost more than the hits themselves.
            self.hits.reserve(FIRST_CAPACITY);
        }
        self.hits.push(PendingHit {
            visit: self.visits.len() as u32,
            ..hit
        });
    }

    /// Adds a hit of the current visit when only the visit's best hit will be kept (any
    /// limit but `None`): it replaces the visit's hit so far if it comes first, so the
    /// store holds at most one hit per visit and never leaves its inline room for it.
    #[inline]
    pub fn push_best_of_visit(&mut self, hit: PendingHit) {
        match self.hits.get_mut(self.visit_start) {
            Some(best) => {
                if hit.compare_in_visit(best).is_lt() {
                    *best = PendingHit {
                        visit: best.visit,
                        ..hit
                    };
                }
            }
            None => self.push(hit),
        }
    }

    /// Ends the current visit, in `context`, keeping its hits as `limit` says: all of
    /// them; or its best one (`One`, `OnePerDrawable`: the only one, as a limited
    /// visit's hits come through [`push_best_of_visit`](Self::push_best_of_visit)); or,
    /// under `Nearest`, that one only if it comes before the best kept so far.
    pub fn end_visit(&mut self, context: &DrawableContext<'_>, limit: IntersectionLimit) {
        let start = self.visit_start;
        if self.hits.len() == start {
            return;
        }
        debug_assert!(
            limit == IntersectionLimit::None || self.hits.len() == start + 1,
            "a limited visit keeps its hits through push_best_of_visit"
        );
        if limit == IntersectionLimit::Nearest && start > 0 {
            let path = &self.paths[self.visits[0].path.clone()];
            let new_first = compare_across(
                &self.hits[start],
                (context.drawable, context.node_path),
                &self.hits[0],
                (self.visits[0].drawable, path),
            )
            .is_lt();
            if !new_first {
                self.hits.truncate(start);
                return;
            }
            self.hits.swap(0, start);
            self.hits.truncate(1);
            self.hits[0].visit = 0;
            self.visits.clear();
            self.paths.clear();
        }
        self.add_visit(context);
    }

    /// Records `context`'s drawable visit (its path and matrices) for hits pushed with
    /// [`push_in_visit`](Self::push_in_visit): a walk of the world tree meets the
    /// triangles of many instances interleaved, so it gives each instance with hits one
    /// visit and files its hits there (every hit wanted: limit `None`).
    pub fn add_visit(&mut self, context: &DrawableContext<'_>) -> u32 {
        let path_start = self.paths.len();
        self.paths.extend_from_slice(context.node_path);
        self.visits.push(HitVisit {
            drawable: context.drawable,
            path: path_start..self.paths.len(),
            local_to_world: *context.local_to_world,
            normal_matrix: normal_matrix(context.world_to_local),
        });
        (self.visits.len() - 1) as u32
    }

    /// Adds a hit of the visit [`add_visit`](Self::add_visit) returned as `visit`.
    #[inline]
    pub fn push_in_visit(&mut self, hit: PendingHit, visit: u32) {
        if !self.hits.spilled() && self.hits.len() == self.hits.inline_size() {
            self.hits.reserve(FIRST_CAPACITY);
        }
        self.hits.push(PendingHit { visit, ..hit });
    }

    /// Puts the kept hits in their final order (as
    /// [`drain_sorted_into`](Self::drain_sorted_into) does) and keeps them, for
    /// [`summaries`](Self::summaries), until the store is cleared.
    pub fn sort_for_summaries(&mut self) {
        sort_into(&self.hits, &self.visits, &self.paths, &mut self.sorted);
    }

    /// Leaves the kept hits in the order they were kept (instead of
    /// [`sort_for_summaries`](Self::sort_for_summaries)): they stay, for
    /// [`summaries`](Self::summaries), until the store is cleared.
    pub fn keep_found_order(&mut self) {
        self.sorted.in_found_order(self.hits.len());
    }

    /// The summaries of the hits in the order
    /// [`sort_for_summaries`](Self::sort_for_summaries) (or
    /// [`keep_found_order`](Self::keep_found_order)) made.
    pub fn summaries(&self) -> StoredSummaries<'_> {
        // The lists as slices, once: read per hit, the hits' `SmallVec` (and the visits'
        // and paths', when they were `SmallVec`s too) asked which of its two forms it was
        // in (callgrind, the query tool's all-hits segments on
        // littlest_tokyo: ~43 instructions a hit, 2.3 % of a query).
        StoredSummaries {
            hits: &self.hits,
            visits: &self.visits,
            paths: &self.paths,
            order: self.sorted.positions(),
        }
    }

    /// Replaces the contents of `out` by the kept hits as full records, sorted by ratio
    /// (ties by drawable, primitive index, node path and vertex indices), in the room
    /// `out` already has, their node paths copied by `paths`; the store is left empty.
    pub fn drain_sorted_into(&mut self, out: &mut Vec<LineSegmentHit>, paths: &mut NodePathPool) {
        out.clear();
        // The lists as slices, once: every access to the hits' `SmallVec` asks which of
        // its two forms it is in (callgrind, littlest_tokyo, when the visits and paths
        // were `SmallVec`s too: 1.2 % of an all-hits query).
        let (hits, visits, ids, order) = (
            &self.hits[..],
            &self.visits[..],
            &self.paths[..],
            &mut self.sorted,
        );
        if hits.len() <= 1 {
            // A limited query's one hit (or none): nothing to sort. (Through the slice's
            // iterator, as below: made from `hits.first()`, the record was built aside
            // and copied in by `memcpy`, 1 % of a nearest query on littlest_tokyo.)
            out.reserve_exact(hits.len());
            out.extend(hits.iter().map(|h| record(h, visits, ids, paths)));
            self.clear();
            return;
        }
        sort_into(hits, visits, ids, order);
        // Exactly: a new intersector's first traversal allocates what it needs, no more.
        out.reserve_exact(order.len());
        out.extend((order.positions()).map(|k| record(&hits[k as usize], visits, ids, paths)));
        self.clear();
    }
}

/// The summaries of a [`SegmentHitStore`]'s hits, in its order (see
/// [`SegmentHitStore::summaries`]).
#[derive(Clone, Debug)]
pub(crate) struct StoredSummaries<'a> {
    hits: &'a [PendingHit],
    visits: &'a [HitVisit],
    paths: &'a [NodeId],
    order: Positions<'a>,
}

impl<'a> Iterator for StoredSummaries<'a> {
    type Item = SegmentHitSummary<'a>;

    #[inline]
    fn next(&mut self) -> Option<SegmentHitSummary<'a>> {
        let k = self.order.next()?;
        let h = &self.hits[k as usize];
        let visit = &self.visits[h.visit as usize];
        Some(SegmentHitSummary {
            ratio: h.ratio,
            node_path: &self.paths[visit.path.clone()],
            drawable: visit.drawable,
            primitive_index: h.primitive_index,
            primitive_kind: h.kind,
            // As the full record computes it.
            world_point: visit.local_to_world.transform_point3(h.local_point),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.order.size_hint()
    }
}

impl ExactSizeIterator for StoredSummaries<'_> {}

/// Replaces the contents of `order` by the positions of `hits` (whose visits are
/// `visits`, their paths in `ids`) in the final order: by ratio; only equal ratios
/// (rare) look up visits and paths. (Filled in place, and inlined: a list returned from
/// a call was copied out by `memcpy`, ~170 instructions of an all-hits query on
/// littlest_tokyo.)
#[inline(always)]
fn sort_into(
    hits: &[PendingHit],
    visits: &[HitVisit],
    ids: &[NodeId],
    order: &mut SortedPositions,
) {
    order.sort(
        hits.len(),
        |k| hits[k as usize].ratio,
        |a, b| {
            let (a, b) = (&hits[a as usize], &hits[b as usize]);
            let (va, vb) = (&visits[a.visit as usize], &visits[b.visit as usize]);
            compare_across(
                a,
                (va.drawable, &ids[va.path.clone()]),
                b,
                (vb.drawable, &ids[vb.path.clone()]),
            )
        },
    );
}

/// The full record of a kept hit of `visits` (whose paths are in `ids`), its node path
/// copied by `paths`. (Always inlined: built inside the caller, the record is written
/// straight into the output list; returned from a call, each was built aside and copied
/// there by `memcpy`, 3 % of an all-hits query on littlest_tokyo.)
#[inline(always)]
fn record(
    h: &PendingHit,
    visits: &[HitVisit],
    ids: &[NodeId],
    paths: &mut NodePathPool,
) -> LineSegmentHit {
    let visit = &visits[h.visit as usize];
    record_in(
        h,
        (visit.drawable, &ids[visit.path.clone()]),
        &visit.local_to_world,
        &visit.normal_matrix,
        paths,
    )
}

/// The matrix that takes a visit's local normals to world space (before
/// normalization): the transpose of the linear part of its world-to-local matrix.
#[inline]
pub(crate) fn normal_matrix(world_to_local: &DMat4) -> DMat3 {
    DMat3::from_mat4(*world_to_local).transpose()
}

/// The full record of hit `h` of drawable `drawable` at `path`, whose visit had
/// `local_to_world` and [`normal_matrix`] `normal_matrix`; its path copied into a vector
/// of `paths`. (The one place records are made: the store's and the world walk's kept
/// hit are alike to the bit. Always inlined, as [`record`] is.)
#[inline(always)]
pub(crate) fn record_in(
    h: &PendingHit,
    (drawable, path): (DrawableId, &[NodeId]),
    local_to_world: &DMat4,
    normal_matrix: &DMat3,
    paths: &mut NodePathPool,
) -> LineSegmentHit {
    let n = h.vertex_count();
    let local_normal = h.normal.normalize_or_zero();
    LineSegmentHit {
        ratio: h.ratio,
        node_path: paths.copy_of(path),
        drawable,
        primitive_index: h.primitive_index,
        primitive_kind: h.kind,
        // From the arrays themselves (the inline size): `from_slice` copies three
        // numbers through a call to `memcpy`.
        vertex_indices: SmallVec::from_buf_and_len(h.indices, n),
        barycentric: SmallVec::from_buf_and_len(h.weights, n),
        local_point: h.local_point,
        world_point: local_to_world.transform_point3(h.local_point),
        local_normal,
        world_normal: (*normal_matrix * local_normal).normalize_or_zero(),
        local_to_world: *local_to_world,
    }
}

/// The hit order across visits: the intersectors' shared key (ratio, drawable,
/// primitive index, node path), then vertex indices (hits equal in all of these are
/// equal in every field).
pub(crate) fn compare_across(
    a: &PendingHit,
    (drawable_a, path_a): (DrawableId, &[NodeId]),
    b: &PendingHit,
    (drawable_b, path_b): (DrawableId, &[NodeId]),
) -> Ordering {
    compare_keys(
        (a.ratio, drawable_a, a.primitive_index, path_a),
        (b.ratio, drawable_b, b.primitive_index, path_b),
    )
    .then_with(|| a.indices[..a.vertex_count()].cmp(&b.indices[..b.vertex_count()]))
}

/// [`compare_across`] for two records made from pending hits: the same key, then the
/// same vertex indices.
pub(crate) fn compare_records(a: &LineSegmentHit, b: &LineSegmentHit) -> Ordering {
    compare_keys(
        (a.ratio, a.drawable, a.primitive_index, &a.node_path),
        (b.ratio, b.drawable, b.primitive_index, &b.node_path),
    )
    .then_with(|| a.vertex_indices.cmp(&b.vertex_indices))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(ratio: f64, primitive_index: u32) -> PendingHit {
        PendingHit::new(
            ratio,
            primitive_index,
            PrimitiveKind::Triangle,
            [0, 1, 2],
            [1.0, 0.0, 0.0],
            DVec3::ZERO,
            DVec3::Z,
        )
    }

    #[test]
    fn a_limited_visit_keeps_only_its_best_hit_inline() {
        let mut store = SegmentHitStore::default();
        store.begin_visit();
        for (ratio, primitive) in [(0.5, 7), (0.25, 9), (0.75, 1), (0.25, 3), (0.3, 0)] {
            store.push_best_of_visit(hit(ratio, primitive));
        }
        // The nearest; of the two at 0.25, the lower primitive index.
        assert_eq!(store.hits.len(), 1);
        assert_eq!(
            (store.hits[0].ratio, store.hits[0].primitive_index),
            (0.25, 3)
        );
        assert!(!store.hits.spilled());
        // A second visit keeps its own best beside the first's.
        store.begin_visit();
        store.push_best_of_visit(hit(0.9, 4));
        store.push_best_of_visit(hit(0.1, 5));
        assert_eq!(store.hits.len(), 2);
        assert_eq!(store.hits[0].primitive_index, 3);
        assert_eq!(store.hits[1].primitive_index, 5);
    }
}
