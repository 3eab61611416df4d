//! [`HitRecords`]: what an intersector makes of its hits at the end of a traversal,
//! full records or only summaries.
//!
//! A full record carries the hit's node path in a vector of its own, the drawable's
//! matrix, local and world points (and, by intersector, normals, barycentric weights,
//! the clipped polygon): building them is ~18 % of an all-hits segment query on
//! littlest_tokyo (`benches/HISTORY.md`, seventh part of the session of 2026-11-27). A
//! caller that reads only what was hit, in what order and where in the world (a batch of
//! queries written out, a pick that wants the drawable under the mouse, a vehicle that
//! wants the nodes its box touches) can ask for summaries instead: the same hits, in the
//! same order, with the same numbers, borrowed from what the intersector kept while it
//! searched. A caller that puts the hits in an order of its own, or needs none (the set
//! of triangles a vehicle's box touches), can also leave out their sort: on the query
//! tool's boxes and balls on littlest_tokyo, which meet ~100 and ~200 triangles each,
//! the sort was ~17 % of the instructions.

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
    /// Only summaries, as [`Summaries`](Self::Summaries), left in the order the
    /// traversal found them instead of sorted: the same hits with the same numbers, in
    /// an order that depends on the scene's structure and on acceleration (the plain
    /// traversal and the accelerated one find them in different orders). For callers
    /// that sort the hits their own way or need only the set.
    UnsortedSummaries,
}

impl HitRecords {
    /// Whether the hits are kept as summaries only (no full records).
    ///
    /// ```
    /// use scene_intersect::intersectors::HitRecords;
    /// assert!(!HitRecords::Full.summarizes());
    /// assert!(HitRecords::Summaries.summarizes());
    /// assert!(HitRecords::UnsortedSummaries.summarizes());
    /// ```
    #[inline]
    pub fn summarizes(self) -> bool {
        self != HitRecords::Full
    }
}
