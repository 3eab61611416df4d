//! [`VolumeHitSummary`]: a polytope or sphere hit as the few numbers most callers read
//! (see [`HitRecords`](super::HitRecords) for why), and [`VolumeHitSummaries`], a
//! traversal's in order.

use glam::DVec3;

use super::volume_hit_store::VolumeHitStore;
use super::{PolytopeHit, PrimitiveKind, SphereHit};
use crate::graph::{DrawableId, NodeId};

/// One hit of a [`PolytopeIntersector`](super::PolytopeIntersector) or a
/// [`SphereIntersector`](super::SphereIntersector), summarized: every field equals the
/// same field of the full [`PolytopeHit`] or [`SphereHit`], bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeHitSummary<'a> {
    /// The hit's distance: to the reference plane for a polytope
    /// ([`PolytopeHit::distance`]), from the centre for a sphere
    /// ([`SphereHit::distance`]).
    pub distance: f64,
    /// Root-first node path to the geode holding the drawable.
    pub node_path: &'a [NodeId],
    /// The drawable.
    pub drawable: DrawableId,
    /// The primitive's index in the drawable.
    pub primitive_index: u32,
    /// What was hit.
    pub primitive_kind: PrimitiveKind,
    /// The hit's point in world space: the mean of the clipped part's vertices for a
    /// polytope, the point closest to the centre for a sphere.
    pub world_point: DVec3,
}

impl<'a> From<&'a PolytopeHit> for VolumeHitSummary<'a> {
    fn from(hit: &'a PolytopeHit) -> Self {
        VolumeHitSummary {
            distance: hit.distance,
            node_path: &hit.node_path,
            drawable: hit.drawable,
            primitive_index: hit.primitive_index,
            primitive_kind: hit.primitive_kind,
            world_point: hit.world_point,
        }
    }
}

impl<'a> From<&'a SphereHit> for VolumeHitSummary<'a> {
    fn from(hit: &'a SphereHit) -> Self {
        VolumeHitSummary {
            distance: hit.distance,
            node_path: &hit.node_path,
            drawable: hit.drawable,
            primitive_index: hit.primitive_index,
            primitive_kind: hit.primitive_kind,
            world_point: hit.world_point,
        }
    }
}

/// The summaries of a traversal's hits, in order (see
/// [`PolytopeIntersector::summaries`](super::PolytopeIntersector::summaries) and
/// [`SphereIntersector::summaries`](super::SphereIntersector::summaries)).
#[derive(Clone, Debug)]
pub struct VolumeHitSummaries<'a> {
    source: Source<'a>,
}

/// Where [`VolumeHitSummaries`] takes its hits from.
#[derive(Clone, Debug)]
enum Source<'a> {
    Polytopes(std::slice::Iter<'a, PolytopeHit>),
    Spheres(std::slice::Iter<'a, SphereHit>),
    /// The store's sorted hits, at these places in its order.
    Store {
        store: &'a VolumeHitStore,
        places: std::ops::Range<usize>,
    },
}

impl<'a> VolumeHitSummaries<'a> {
    /// The summaries of full polytope records.
    pub(super) fn of_polytope_hits(hits: &'a [PolytopeHit]) -> Self {
        let source = Source::Polytopes(hits.iter());
        VolumeHitSummaries { source }
    }

    /// The summaries of full sphere records.
    pub(super) fn of_sphere_hits(hits: &'a [SphereHit]) -> Self {
        let source = Source::Spheres(hits.iter());
        VolumeHitSummaries { source }
    }

    /// The summaries a store sorted.
    pub(super) fn of_store(store: &'a VolumeHitStore) -> Self {
        let places = 0..store.sorted_len();
        VolumeHitSummaries {
            source: Source::Store { store, places },
        }
    }
}

impl<'a> Iterator for VolumeHitSummaries<'a> {
    type Item = VolumeHitSummary<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.source {
            Source::Polytopes(hits) => hits.next().map(VolumeHitSummary::from),
            Source::Spheres(hits) => hits.next().map(VolumeHitSummary::from),
            Source::Store { store, places } => places.next().map(|k| store.summary(k)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.source {
            Source::Polytopes(hits) => hits.len(),
            Source::Spheres(hits) => hits.len(),
            Source::Store { places, .. } => places.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for VolumeHitSummaries<'_> {}
