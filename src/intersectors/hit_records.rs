//! [`HitRecords`]: what an intersector makes of its hits at the end of a traversal,
//! full records or only summaries.
//!
//! A full record carries the hit's node path in a vector of its own, the drawable's
//! matrix, local and world points (and, by intersector, normals, barycentric weights,
//! the clipped polygon): building them is ~18 % of an all-hits segment query on
//! littlest_tokyo (`benches/README.md`, seventh part of the session of 2026-11-27). A
//! caller that reads only what was hit, in what order and where in the world (a batch of
//! queries written out, a pick that wants the drawable under the mouse, a vehicle that
//! wants the nodes its box touches) can ask for summaries instead: the same hits, in the
//! same order, with the same numbers, borrowed from what the intersector kept while it
//! searched.

/// What an intersector ([`LineSegmentIntersector`](super::LineSegmentIntersector),
/// [`PolytopeIntersector`](super::PolytopeIntersector),
/// [`SphereIntersector`](super::SphereIntersector)) makes of its hits at the end of a
/// traversal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HitRecords {
    /// Full records, read with the intersector's `intersections()` (and, as summaries,
    /// with its `summaries()`).
    #[default]
    Full,
    /// Only summaries, read with the intersector's `summaries()`; its `intersections()`
    /// is then empty.
    Summaries,
}
