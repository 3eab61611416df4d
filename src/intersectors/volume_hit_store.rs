//! [`VolumeHitStore`]: a polytope or sphere query's hits kept as summaries
//! ([`HitRecords::Summaries`](super::HitRecords::Summaries)), in place of full records.
//!
//! A hit here is its distance, world point, primitive and kind (40 bytes) and the index
//! of its drawable visit; each visit with hits keeps its drawable and node path once (the
//! paths in one shared list). The limits keep what [`record_hits`](super::hit_order)
//! keeps of full records, and [`sort`](VolumeHitStore::sort) orders positions by the
//! same key, stably, so the summaries read in the order of the full records
//! ([`keep_found_order`](VolumeHitStore::keep_found_order) leaves them as they were
//! kept, for unsorted summaries).

use std::cmp::Ordering;
use std::ops::Range;

use glam::DVec3;

use super::hit_order::{compare_keys, HitKey};
use super::sorted_positions::SortedPositions;
use super::{PrimitiveKind, VolumeHitSummary};
use crate::graph::{DrawableId, NodeId};
use crate::visitor::{DrawableContext, IntersectionLimit};

/// What a hit is, in world space, before it is filed under its visit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VolumeHitParts {
    /// The hit's distance (the sort's leading key).
    pub distance: f64,
    pub world_point: DVec3,
    pub primitive_index: u32,
    pub kind: PrimitiveKind,
}

impl VolumeHitParts {
    /// The order among hits of one drawable visit (same drawable and path): distance,
    /// then primitive index.
    fn compare_in_visit(&self, other: &VolumeHitParts) -> Ordering {
        self.distance
            .total_cmp(&other.distance)
            .then(self.primitive_index.cmp(&other.primitive_index))
    }
}

/// A kept hit and the index of its visit in [`VolumeHitStore::visits`].
#[derive(Clone, Copy, Debug)]
struct StoredHit {
    parts: VolumeHitParts,
    visit: u32,
}

/// A drawable visit that produced kept hits.
#[derive(Clone, Debug)]
struct HitVisit {
    drawable: DrawableId,
    /// Its node path, in [`VolumeHitStore::paths`].
    path: Range<usize>,
}

/// The kept hits of a traversal answered with summaries.
#[derive(Clone, Debug, Default)]
pub(crate) struct VolumeHitStore {
    hits: Vec<StoredHit>,
    visits: Vec<HitVisit>,
    paths: Vec<NodeId>,
    /// Where the current visit's hits start in `hits` (see
    /// [`begin_visit`](Self::begin_visit)).
    visit_start: usize,
    /// After [`sort`](Self::sort) or [`keep_found_order`](Self::keep_found_order): the
    /// positions in `hits` in the final order (its room kept from query to query).
    sorted: SortedPositions,
}

impl VolumeHitStore {
    /// Forgets every hit.
    #[inline]
    pub fn clear(&mut self) {
        // Every list is empty when `hits` is (visits and sorted positions are only made
        // for hits): the check alone is inlined where an intersector drops its last
        // hits, full or summarized, before every query.
        if !self.hits.is_empty() {
            self.forget_all();
        }
    }

    #[inline(never)]
    fn forget_all(&mut self) {
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

    /// Starts a drawable visit: the hits [`push`](Self::push)ed until
    /// [`end_visit`](Self::end_visit) belong to it.
    pub fn begin_visit(&mut self) {
        self.visit_start = self.hits.len();
    }

    /// Adds a hit of the current visit.
    #[inline]
    pub fn push(&mut self, parts: VolumeHitParts) {
        self.hits.push(StoredHit {
            parts,
            visit: self.visits.len() as u32,
        });
    }

    /// Ends the current visit, in `context`, keeping its hits as `limit` says (as
    /// `record_hits` keeps full records): all of them; or the visit's first (by
    /// distance, then primitive index; the earliest pushed of equals) for `One` and
    /// `OnePerDrawable`; or, for `Nearest`, that one only if it comes before the hit
    /// kept so far, which it then replaces.
    pub fn end_visit(&mut self, context: &DrawableContext<'_>, limit: IntersectionLimit) {
        let start = self.visit_start;
        if self.hits.len() == start {
            return;
        }
        if limit != IntersectionLimit::None {
            // `min_by` keeps the first of equal hits, as `record_hits` does.
            let best = (self.hits[start..].iter())
                .min_by(|a, b| a.parts.compare_in_visit(&b.parts))
                .copied();
            self.hits.truncate(start);
            let Some(best) = best else { return };
            if limit == IntersectionLimit::Nearest && start > 0 {
                let first = self.hits[0].parts;
                let first_visit = &self.visits[self.hits[0].visit as usize];
                let ours: HitKey<'_> = (
                    best.parts.distance,
                    context.drawable,
                    best.parts.primitive_index,
                    context.node_path,
                );
                let kept: HitKey<'_> = (
                    first.distance,
                    first_visit.drawable,
                    first.primitive_index,
                    &self.paths[first_visit.path.clone()],
                );
                if compare_keys(ours, kept).is_ge() {
                    return;
                }
                self.clear();
            }
            self.hits.push(StoredHit {
                parts: best.parts,
                visit: self.visits.len() as u32,
            });
        }
        self.add_visit(context);
    }

    /// Records `context`'s drawable visit for hits pushed with
    /// [`push_in_visit`](Self::push_in_visit) (a world walk meets the triangles of many
    /// instances interleaved, and keeps them all: limit `None`).
    pub fn add_visit(&mut self, context: &DrawableContext<'_>) -> u32 {
        let path_start = self.paths.len();
        self.paths.extend_from_slice(context.node_path);
        self.visits.push(HitVisit {
            drawable: context.drawable,
            path: path_start..self.paths.len(),
        });
        (self.visits.len() - 1) as u32
    }

    /// Adds a hit of the visit [`add_visit`](Self::add_visit) returned as `visit`.
    #[inline]
    pub fn push_in_visit(&mut self, parts: VolumeHitParts, visit: u32) {
        self.hits.push(StoredHit { parts, visit });
    }

    /// The sort key of the hit at `k`.
    fn key(&self, k: u32) -> HitKey<'_> {
        let hit = &self.hits[k as usize];
        let visit = &self.visits[hit.visit as usize];
        (
            hit.parts.distance,
            visit.drawable,
            hit.parts.primitive_index,
            &self.paths[visit.path.clone()],
        )
    }

    /// Puts the kept hits in their final order: by distance, drawable, primitive index
    /// and node path, equal keys in the order they were kept (the order `sort_hits`
    /// gives full records). They stay, for [`summary`](Self::summary), until the store
    /// is cleared.
    pub fn sort(&mut self) {
        if self.hits.len() <= 1 {
            self.sorted.in_found_order(self.hits.len());
            return;
        }
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.sort(
            self.hits.len(),
            |k| self.hits[k as usize].parts.distance,
            |a, b| compare_keys(self.key(a), self.key(b)).then(a.cmp(&b)),
        );
        self.sorted = sorted;
    }

    /// Leaves the kept hits in the order they were kept (instead of [`sort`](Self::sort)):
    /// they stay, for [`summary`](Self::summary), until the store is cleared.
    pub fn keep_found_order(&mut self) {
        self.sorted.in_found_order(self.hits.len());
    }

    /// How many hits [`sort`](Self::sort) put in order.
    pub fn sorted_len(&self) -> usize {
        self.sorted.len()
    }

    /// The summary of the `k`-th hit in the order [`sort`](Self::sort) made.
    ///
    /// # Panics
    ///
    /// When `k` is not below [`sorted_len`](Self::sorted_len).
    pub fn summary(&self, k: usize) -> VolumeHitSummary<'_> {
        let hit = &self.hits[self.sorted.position(k) as usize];
        let visit = &self.visits[hit.visit as usize];
        VolumeHitSummary {
            distance: hit.parts.distance,
            node_path: &self.paths[visit.path.clone()],
            drawable: visit.drawable,
            primitive_index: hit.parts.primitive_index,
            primitive_kind: hit.parts.kind,
            world_point: hit.parts.world_point,
        }
    }
}
