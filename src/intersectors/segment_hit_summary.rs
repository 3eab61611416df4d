//! [`SegmentHitSummary`]: a line segment hit as the few numbers most callers read
//! (see [`HitRecords`](super::HitRecords) for why), and [`SegmentHitSummaries`], a
//! traversal's in order.

use glam::DVec3;

use super::{LineSegmentHit, PrimitiveKind};
use crate::graph::{DrawableId, NodeId};

/// One hit of a [`LineSegmentIntersector`](super::LineSegmentIntersector), summarized:
/// every field equals the same field of the full [`LineSegmentHit`], bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentHitSummary<'a> {
    /// Position along the root segment, `0` at its start and `1` at its end.
    pub ratio: f64,
    /// Root-first node path to the geode holding the drawable.
    pub node_path: &'a [NodeId],
    /// The drawable.
    pub drawable: DrawableId,
    /// The primitive's index in the drawable.
    pub primitive_index: u32,
    /// What was hit.
    pub primitive_kind: PrimitiveKind,
    /// The hit point in world space.
    pub world_point: DVec3,
}

impl<'a> SegmentHitSummary<'a> {
    /// The summary of a full record.
    pub fn of(hit: &'a LineSegmentHit) -> Self {
        SegmentHitSummary {
            ratio: hit.ratio,
            node_path: &hit.node_path,
            drawable: hit.drawable,
            primitive_index: hit.primitive_index,
            primitive_kind: hit.primitive_kind,
            world_point: hit.world_point,
        }
    }
}

/// The summaries of a traversal's hits, in order (see
/// [`LineSegmentIntersector::summaries`](super::LineSegmentIntersector::summaries)).
#[derive(Clone, Debug)]
pub struct SegmentHitSummaries<'a> {
    pub(super) source: SummarySource<'a>,
}

/// Where [`SegmentHitSummaries`] takes its hits from.
#[derive(Clone, Debug)]
pub(super) enum SummarySource<'a> {
    /// Full records.
    Records(std::slice::Iter<'a, LineSegmentHit>),
    /// The hit store's hits, in its order.
    Store(super::segment_hit_store::StoredSummaries<'a>),
}

impl<'a> Iterator for SegmentHitSummaries<'a> {
    type Item = SegmentHitSummary<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.source {
            SummarySource::Records(hits) => hits.next().map(SegmentHitSummary::of),
            SummarySource::Store(summaries) => summaries.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.source {
            SummarySource::Records(hits) => hits.len(),
            SummarySource::Store(summaries) => summaries.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for SegmentHitSummaries<'_> {}
