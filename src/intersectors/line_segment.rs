//! [`LineSegmentIntersector`]: picking and ray queries with a closed line segment.

use std::cell::Cell;

use glam::{DMat4, DVec3, Vec3};
use smallvec::SmallVec;

use super::hit_order::{box_cull_padding, box_padding, bvh_padding, cull_padding, padded_box};
use super::local_reach::FrameReach;
use super::node_path_pool::NodePathPool;
use super::segment_hit_store::{
    compare_records, normal_matrix, record_in, PendingHit, SegmentHitStore,
};
use super::segment_hit_summary::SummarySource;
use super::segment_triangle::crossing_deviation;
use super::{
    intersect_segment_triangle_up_to, HitRecords, PrimitiveKind, QueryError, SegmentHitSummaries,
};
use crate::accel::{Aabb, Aabb4, SegmentSlab, WideEntries, WideSegmentSlab};
use crate::bounding::{BoundingBox, BoundingSphere};
use crate::collide::closest_point_on_segment;
use crate::drawable::{Drawable, PrimitiveFunctor};
use crate::graph::{DrawableId, NodeId};
use crate::length::length_at_any_scale;
use crate::visitor::{
    CoordinateFrame, DrawableContext, FrameContext, IndexContext, IntersectionLimit, Intersector,
};

/// One hit of a [`LineSegmentIntersector`].
#[derive(Clone, Debug, PartialEq)]
pub struct LineSegmentHit {
    /// Position along the root segment, `0` at its start and `1` at its end (in world
    /// space for segments given in other frames).
    pub ratio: f64,
    /// Root-first node path to the geode holding the drawable.
    pub node_path: Vec<NodeId>,
    /// The drawable.
    pub drawable: DrawableId,
    /// The primitive's index in the drawable.
    pub primitive_index: u32,
    /// What was hit.
    pub primitive_kind: PrimitiveKind,
    /// Vertex indices of the primitive (3 for a triangle, 2 for a line, 1 for a point).
    pub vertex_indices: SmallVec<[u32; 3]>,
    /// Barycentric weights of those vertices at the hit point (sum 1).
    pub barycentric: SmallVec<[f64; 3]>,
    /// The hit point in the drawable's frame.
    pub local_point: DVec3,
    /// The hit point in world space.
    pub world_point: DVec3,
    /// The triangle's unit normal (winding order) in the drawable's frame; zero for
    /// points and lines.
    pub local_normal: DVec3,
    /// The same normal in world space (through the inverse transpose); zero for points and
    /// lines.
    pub world_normal: DVec3,
    /// The drawable's local-to-world matrix.
    pub local_to_world: DMat4,
}

/// Intersects a closed line segment with the scene (OSG's `LineSegmentIntersector`).
///
/// Every triangle the segment touches is hit, two-sided, edges and vertices included (a
/// segment through an edge shared by two triangles hits both). Zero-area triangles and
/// triangles coplanar with the segment are not hit. Points and lines are hit only when a
/// [picking tolerance](Self::set_picking_tolerance) is set: then any within that world
/// distance of the segment is. Hits are sorted by [`LineSegmentHit::ratio`] (ties by
/// drawable, primitive index, node path, then vertex indices).
///
/// ```
/// use scene_intersect::intersectors::LineSegmentIntersector;
/// use scene_intersect::visitor::IntersectionLimit;
/// use glam::DVec3;
/// let picker = LineSegmentIntersector::new(DVec3::ZERO, DVec3::new(0.0, -100.0, 0.0))?
///     .with_limit(IntersectionLimit::Nearest);
/// assert!(LineSegmentIntersector::new(DVec3::ONE, DVec3::ONE).is_err());
/// # Ok::<(), scene_intersect::intersectors::QueryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct LineSegmentIntersector {
    frame: CoordinateFrame,
    start: DVec3,
    end: DVec3,
    pub(super) limit: IntersectionLimit,
    pub(super) tolerance: Option<f64>,
    pub(super) world_start: DVec3,
    pub(super) world_end: DVec3,
    /// The hits of the last traversal, once it has ended.
    hits: Vec<LineSegmentHit>,
    /// The node-path vectors of dropped hits, for the next hits.
    spare_paths: NodePathPool,
    /// The hits while a traversal runs (and after it, with summaries).
    pub(super) pending: SegmentHitStore,
    /// Whether the traversal's one hit is in `hits` already, made by the world walk (see
    /// [`keep_only_record`](Self::keep_only_record)).
    record_kept: bool,
    /// Full records or summaries.
    records: HitRecords,
    /// The world segment prepared for the scene index's boxes (see
    /// [`Intersector::begin_world_boxes`]).
    world_slab: Option<SegmentSlab>,
    /// The same, spread over four lanes for the index's four-box tests.
    world_slab4: Option<WideSegmentSlab>,
}

/// Refuses a segment with a non-finite end or of zero length.
fn check_segment(start: DVec3, end: DVec3) -> Result<(), QueryError> {
    if !start.is_finite() {
        return Err(QueryError::NonFinite("segment start point"));
    }
    if !end.is_finite() {
        return Err(QueryError::NonFinite("segment end point"));
    }
    if start == end {
        return Err(QueryError::ZeroLengthSegment);
    }
    Ok(())
}

/// The segment in one local frame.
#[derive(Clone, Debug)]
pub struct LocalSegment {
    pub(super) start: DVec3,
    pub(super) direction: DVec3,
    /// The picking tolerance in local units, enlarged to hold the world tolerance under
    /// any direction of this frame's scale (for culling only).
    tolerance: f64,
}

impl LineSegmentIntersector {
    /// A segment from `start` to `end` in world (MODEL) coordinates.
    pub fn new(start: DVec3, end: DVec3) -> Result<Self, QueryError> {
        Self::with_frame(CoordinateFrame::Model, start, end)
    }

    /// A segment given in another coordinate frame (mapped through the visitor's view,
    /// projection and viewport).
    pub fn with_frame(
        frame: CoordinateFrame,
        start: DVec3,
        end: DVec3,
    ) -> Result<Self, QueryError> {
        check_segment(start, end)?;
        Ok(LineSegmentIntersector {
            frame,
            start,
            end,
            limit: IntersectionLimit::None,
            tolerance: None,
            world_start: start,
            world_end: end,
            hits: Vec::new(),
            spare_paths: NodePathPool::default(),
            pending: SegmentHitStore::default(),
            record_kept: false,
            records: HitRecords::Full,
            world_slab: None,
            world_slab4: None,
        })
    }

    /// Moves the segment to run from `start` to `end`, in the same frame, keeping
    /// everything else: the limit, the picking tolerance and the room made for hits.
    /// A query repeated every frame (a pick under the mouse) reuses one intersector
    /// instead of making a new one; the last traversal's hits are dropped.
    ///
    /// ```
    /// use scene_intersect::intersectors::LineSegmentIntersector;
    /// use glam::DVec3;
    /// let mut picker = LineSegmentIntersector::new(DVec3::ZERO, DVec3::Y)?;
    /// picker.set_segment(DVec3::X, DVec3::new(1.0, 5.0, 0.0))?;
    /// assert_eq!(picker.end(), DVec3::new(1.0, 5.0, 0.0));
    /// assert!(picker.set_segment(DVec3::X, DVec3::X).is_err());
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    pub fn set_segment(&mut self, start: DVec3, end: DVec3) -> Result<(), QueryError> {
        check_segment(start, end)?;
        self.start = start;
        self.end = end;
        self.spare_paths
            .drop_hits(&mut self.hits, |hit| hit.node_path);
        if self.records.summarizes() {
            // The last traversal's summaries (full records keep nothing here).
            self.pending.clear();
        }
        Ok(())
    }

    /// A pick through window position `(x, y)` (OSG's convention: y up from the
    /// viewport's bottom; see [`Viewport::window_from_top_left`](crate::visitor::Viewport::window_from_top_left)):
    /// the segment from the near plane (window z 0) to the far plane (z 1).
    pub fn from_window(x: f64, y: f64) -> Result<Self, QueryError> {
        Self::with_frame(
            CoordinateFrame::Window,
            DVec3::new(x, y, 0.0),
            DVec3::new(x, y, 1.0),
        )
    }

    /// Builder form of [`set_limit`](Self::set_limit).
    pub fn with_limit(mut self, limit: IntersectionLimit) -> Self {
        self.limit = limit;
        self
    }

    /// Sets how many hits are kept.
    pub fn set_limit(&mut self, limit: IntersectionLimit) {
        self.limit = limit;
    }

    /// Builder form of [`set_records`](Self::set_records).
    pub fn with_records(mut self, records: HitRecords) -> Self {
        self.records = records;
        self
    }

    /// Chooses what the next traversals make of their hits: full records (the default)
    /// or only [summaries](Self::summaries), which skip building the records (on
    /// littlest_tokyo, 13 % of an all-hits query's instructions, ~10 % of its time).
    /// The last traversal's hits are dropped.
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    /// use scene_intersect::graph::SceneGraph;
    /// use scene_intersect::intersectors::{LineSegmentIntersector, HitRecords};
    /// use scene_intersect::visitor::IntersectionVisitor;
    ///
    /// // One triangle in the plane y = 0, under a geode.
    /// let mut scene = SceneGraph::new();
    /// let root = scene.add_group("root");
    /// let triangle = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z])
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
    /// let drawable = scene.add_drawable("triangle", triangle);
    /// let geode = scene.add_geode("geode");
    /// scene.add_drawable_to_geode(geode, drawable)?;
    /// scene.add_child(root, geode)?;
    ///
    /// let down = LineSegmentIntersector::new(DVec3::new(0.25, 1.0, 0.25), DVec3::new(0.25, -1.0, 0.25))?;
    /// let mut summarized = down.with_records(HitRecords::Summaries);
    /// IntersectionVisitor::new().apply(&scene, root, &mut summarized)?;
    /// assert!(summarized.intersections().is_empty());
    /// let hits: Vec<_> = summarized.summaries().collect();
    /// assert_eq!(hits.len(), 1);
    /// assert_eq!((hits[0].ratio, hits[0].drawable, hits[0].primitive_index), (0.5, drawable, 0));
    /// assert_eq!(hits[0].world_point, DVec3::new(0.25, 0.0, 0.25));
    /// assert_eq!(hits[0].node_path, [root, geode]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_records(&mut self, records: HitRecords) {
        self.records = records;
        self.spare_paths
            .drop_hits(&mut self.hits, |hit| hit.node_path);
        self.pending.clear();
    }

    /// The hits of the last traversal as summaries, in the order of
    /// [`intersections`](Self::intersections): made from the full records, or, with
    /// [`HitRecords::Summaries`], from what the traversal kept (until the segment
    /// moves or the next traversal begins).
    /// With [`HitRecords::UnsortedSummaries`], the same hits in the order the traversal
    /// found them.
    pub fn summaries(&self) -> SegmentHitSummaries<'_> {
        let source = match self.records {
            HitRecords::Full => SummarySource::Records(self.hits.iter()),
            HitRecords::Summaries | HitRecords::UnsortedSummaries => {
                SummarySource::Store(self.pending.summaries())
            }
        };
        SegmentHitSummaries { source }
    }

    /// Lets the segment hit points and lines within `tolerance` world units of it (`None`
    /// or never set: points and lines are not hit).
    pub fn set_picking_tolerance(&mut self, tolerance: Option<f64>) -> Result<(), QueryError> {
        match tolerance {
            Some(t) if !t.is_finite() => return Err(QueryError::NonFinite("picking tolerance")),
            Some(t) if t < 0.0 => return Err(QueryError::NegativeTolerance(t)),
            _ => {}
        }
        self.tolerance = tolerance;
        Ok(())
    }

    /// Builder form of [`set_picking_tolerance`](Self::set_picking_tolerance).
    pub fn with_picking_tolerance(mut self, tolerance: f64) -> Result<Self, QueryError> {
        self.set_picking_tolerance(Some(tolerance))?;
        Ok(self)
    }

    /// The segment's start, in its own frame.
    pub fn start(&self) -> DVec3 {
        self.start
    }

    /// The segment's end, in its own frame.
    pub fn end(&self) -> DVec3 {
        self.end
    }

    /// The segment in world space, as of the last traversal.
    pub fn world_segment(&self) -> (DVec3, DVec3) {
        (self.world_start, self.world_end)
    }

    /// The hits of the last traversal, sorted by ratio.
    pub fn intersections(&self) -> &[LineSegmentHit] {
        &self.hits
    }

    /// Takes the hits out.
    pub fn take_intersections(&mut self) -> Vec<LineSegmentHit> {
        std::mem::take(&mut self.hits)
    }

    /// The first (nearest) hit, if any.
    pub fn first_intersection(&self) -> Option<&LineSegmentHit> {
        self.hits.first()
    }

    /// [`Intersector::enter_world_box`] before [`Intersector::begin_world_boxes`] (not
    /// on the visitor's path): the slab test in `f64`, for the box alone.
    #[cold]
    #[inline(never)]
    fn enter_world_box_exactly(&self, bound: &Aabb) -> Option<f64> {
        let (bound, pad) = padded_box(bound);
        let pad = self.tolerance.unwrap_or(0.0) + pad;
        segment_box_entry(
            self.world_start,
            self.world_end - self.world_start,
            bound.min,
            bound.max,
            pad,
        )
    }

    /// Whether [`enter_drawable`](Intersector::enter_drawable) would let a drawable
    /// through whenever the exact test hits one of its triangles: every such hit lies
    /// within [`crossing_deviation`] of its triangle's box, so inside `bound` grown by
    /// the box test's pad unless the segment starts so far from the box that the
    /// deviation reaches the pad (10^-9 of the box's size and 10^-12 of its place's
    /// magnitude: a start some 10^6 sizes away). A walk that only tests triangles may
    /// then leave the box test to the exact tests, with the same answers.
    pub(super) fn drawable_test_follows_from_triangle_hits(
        &self,
        local: &LocalSegment,
        bound: &BoundingBox,
    ) -> bool {
        if bound.is_empty() {
            return false;
        }
        // The box test's pad with half the box's longest side for its radius (half its
        // diagonal): a smaller pad, so a `true` here holds for the real one too, with no
        // square root on the way.
        let half_longest_side = (bound.max - bound.min).max_element() * 0.5;
        let pad = cull_padding(half_longest_side, bound.center().abs().max_element());
        let box_magnitude = bound.min.abs().max(bound.max.abs()).max_element();
        crossing_deviation(local.start, box_magnitude) <= pad
    }

    /// Whether hits are kept as full records (not summaries).
    pub(super) fn makes_full_records(&self) -> bool {
        self.records == HitRecords::Full
    }

    /// Makes `hit`, the world walk's one kept hit (`Nearest`, `One`), of the drawable
    /// visit `context`, into its record at once, as the hit store would at the end of
    /// the traversal (full records only). A hit the store holds, of a whole item visited
    /// during the walk or of a detached instance visited after it, is weighed against
    /// it at the end ([`end`](Intersector::end)). (Through the store, the visit's node
    /// path and matrices were copied there, then into the record: ~2 % of a nearest
    /// segment's instructions on littlest_tokyo, ~5 % on truck_town.)
    pub(super) fn keep_only_record(&mut self, hit: &PendingHit, context: &DrawableContext<'_>) {
        debug_assert!(self.makes_full_records() && self.hits.is_empty() && !self.record_kept);
        self.hits.reserve_exact(1);
        self.hits.push(record_in(
            hit,
            (context.drawable, context.node_path),
            context.local_to_world,
            &normal_matrix(context.world_to_local),
            &mut self.spare_paths,
        ));
        self.record_kept = true;
    }

    /// The first of the kept record and the store's hit (`Nearest`: at most one), by
    /// the hits' order, left alone in `hits`.
    fn keep_first_of_record_and_store(&mut self) {
        let Some(kept) = self.hits.pop() else {
            return;
        };
        self.pending
            .drain_sorted_into(&mut self.hits, &mut self.spare_paths);
        debug_assert!(self.hits.len() <= 1, "a limited store keeps one hit");
        let dropped = match self.hits.first_mut() {
            Some(stored) if compare_records(&kept, stored).is_lt() => {
                std::mem::replace(stored, kept)
            }
            Some(_) => kept,
            None => {
                self.hits.push(kept);
                return;
            }
        };
        self.spare_paths.keep(dropped.node_path);
    }

    fn best_ratio(&self) -> f64 {
        match self.limit {
            IntersectionLimit::Nearest => {
                let stored = self.pending.first_ratio().unwrap_or(f64::INFINITY);
                match self.hits.first() {
                    Some(kept) if self.record_kept => stored.min(kept.ratio),
                    _ => stored,
                }
            }
            _ => f64::INFINITY,
        }
    }
}

/// Collects the raw hits of one drawable.
struct SegmentFunctor<'a> {
    segment: &'a LocalSegment,
    tolerance: Option<f64>,
    world_start: DVec3,
    world_end: DVec3,
    local_to_world: &'a DMat4,
    world_to_local: &'a DMat4,
    /// When only the nearest hit matters: the best ratio so far, lowered as hits come;
    /// triangles crossed beyond it are not tested further.
    ratio_limit: Option<&'a Cell<f64>>,
    out: &'a mut SegmentHitStore,
}

impl SegmentFunctor<'_> {
    fn push(&mut self, hit: PendingHit) {
        match self.ratio_limit {
            Some(limit) => {
                if hit.ratio < limit.get() {
                    limit.set(hit.ratio);
                }
                self.out.push_best_of_visit(hit);
            }
            None => self.out.push(hit),
        }
    }
}

impl PrimitiveFunctor for SegmentFunctor<'_> {
    fn point(&mut self, v: Vec3, index: u32, primitive_index: u32) {
        let Some(tol) = self.tolerance else { return };
        let w = self.local_to_world.transform_point3(v.as_dvec3());
        let c = closest_point_on_segment(w, self.world_start, self.world_end);
        if length_at_any_scale(c.point - w) <= tol {
            self.push(PendingHit::new(
                c.t,
                primitive_index,
                PrimitiveKind::Point,
                [index, 0, 0],
                [1.0, 0.0, 0.0],
                v.as_dvec3(),
                DVec3::ZERO,
            ));
        }
    }

    fn line(&mut self, v: [Vec3; 2], indices: [u32; 2], primitive_index: u32) {
        let Some(tol) = self.tolerance else { return };
        let p = self.local_to_world.transform_point3(v[0].as_dvec3());
        let q = self.local_to_world.transform_point3(v[1].as_dvec3());
        let (s, t, on_segment, on_line) =
            closest_points_segment_segment(self.world_start, self.world_end, p, q);
        if length_at_any_scale(on_segment - on_line) <= tol {
            self.push(PendingHit::new(
                s,
                primitive_index,
                PrimitiveKind::Line,
                [indices[0], indices[1], 0],
                [1.0 - t, t, 0.0],
                self.world_to_local.transform_point3(on_line),
                DVec3::ZERO,
            ));
        }
    }

    #[inline]
    fn triangle(&mut self, v: [Vec3; 3], indices: [u32; 3], primitive_index: u32) {
        let [a, b, c] = v.map(|v| v.as_dvec3());
        let t_max = self.ratio_limit.map_or(1.0, Cell::get);
        if let Some(hit) = intersect_segment_triangle_up_to(
            self.segment.start,
            self.segment.direction,
            a,
            b,
            c,
            t_max,
        ) {
            self.push(PendingHit::new(
                hit.t,
                primitive_index,
                PrimitiveKind::Triangle,
                indices,
                hit.weights,
                self.segment.start + self.segment.direction * hit.t,
                hit.normal,
            ));
        }
    }
}

/// Closest points of segments `p1 → q1` and `p2 → q2` (Ericson, Real-Time Collision
/// Detection 5.1.9): `(s, t, point on first, point on second)`.
fn closest_points_segment_segment(
    p1: DVec3,
    q1: DVec3,
    p2: DVec3,
    q2: DVec3,
) -> (f64, f64, DVec3, DVec3) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let (s, t);
    if a == 0.0 && e == 0.0 {
        return (0.0, 0.0, p1, p2);
    }
    if a == 0.0 {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(r);
        if e == 0.0 {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            } else {
                t = t0;
                s = s0;
            }
        }
    }
    (s, t, p1 + d1 * s, p2 + d2 * t)
}

/// Inclusive slab test of the segment `s + t d, t in [0, 1]` against the box
/// `[min, max]` grown by `pad`: the parameter at which it enters, or `None`.
#[inline]
fn segment_box_entry(s: DVec3, d: DVec3, min: DVec3, max: DVec3, pad: f64) -> Option<f64> {
    SlabSegment::new(s, d, pad).entry_box(min, max)
}

/// The relative rounding allowed for a slab parameter of [`SlabSegment`] (4 ulps).
const SLAB_ROUNDING: f64 = 4.0 * f64::EPSILON;

/// A segment ready for many box tests: the inverse direction per axis, computed once.
struct SlabSegment {
    start: DVec3,
    inverse: DVec3,
    parallel: [bool; 3],
    pad: f64,
}

impl SlabSegment {
    fn new(start: DVec3, direction: DVec3, pad: f64) -> Self {
        SlabSegment {
            start,
            inverse: DVec3::ONE / direction,
            parallel: [direction.x == 0.0, direction.y == 0.0, direction.z == 0.0],
            pad,
        }
    }

    /// The entry parameter into the box `[min, max]` grown by the pad (no divisions).
    #[inline]
    fn entry_box(&self, min: DVec3, max: DVec3) -> Option<f64> {
        let (min, max) = (min - DVec3::splat(self.pad), max + DVec3::splat(self.pad));
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for k in 0..3 {
            let s = self.start[k];
            if self.parallel[k] {
                if s < min[k] || s > max[k] {
                    return None;
                }
            } else {
                let (mut ta, mut tb) = (
                    (min[k] - s) * self.inverse[k],
                    (max[k] - s) * self.inverse[k],
                );
                if ta > tb {
                    std::mem::swap(&mut ta, &mut tb);
                }
                // Each parameter is rounded three times (the difference, the inverse,
                // the product): widened by 4 of its ulps, the slab holds the exact one,
                // however long the segment (8.5·10^303 units long, one ulp of the
                // parameter is 2·10^288 units along it, and a box touching its end came
                // out past `t = 1`). The absolute term covers subnormal products.
                ta -= ta.abs() * SLAB_ROUNDING + f64::MIN_POSITIVE;
                tb += tb.abs() * SLAB_ROUNDING + f64::MIN_POSITIVE;
                t0 = t0.max(ta);
                t1 = t1.min(tb);
                if t0 > t1 {
                    return None;
                }
            }
        }
        Some(t0)
    }
}

/// The picking `tolerance` of the segment from `start` to `end` (world space) as the
/// frame of `local_to_world` sees it, for its culls (points and lines are tested in
/// world space): the tolerance times the frame's largest stretch, grown by the rounding
/// of moving points between the frames (see [`FrameReach::rounding`]).
fn local_tolerance(
    tolerance: f64,
    [start, end]: [DVec3; 2],
    local_to_world: &DMat4,
    world_to_local: &DMat4,
) -> f64 {
    let frame = FrameReach::of(local_to_world, world_to_local);
    let magnitude = start.abs().max_element().max(end.abs().max_element()) + tolerance;
    tolerance * frame.largest_stretch + frame.rounding(magnitude)
}

impl Intersector for LineSegmentIntersector {
    type Local = LocalSegment;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        self.spare_paths
            .drop_hits(&mut self.hits, |hit| hit.node_path);
        self.pending.clear();
        self.record_kept = false;
        self.world_slab = None;
        self.world_slab4 = None;
        if self.frame == CoordinateFrame::Model {
            // World coordinates already (checked finite and apart when set).
            self.world_start = self.start;
            self.world_end = self.end;
            return Ok(());
        }
        let m = frames.matrices(self.frame)?;
        self.world_start = m.frame_to_world.project_point3(self.start);
        self.world_end = m.frame_to_world.project_point3(self.end);
        if !self.world_start.is_finite() || !self.world_end.is_finite() {
            return Err(QueryError::SingularFrame(self.frame.name()));
        }
        if self.world_start == self.world_end {
            return Err(QueryError::ZeroLengthSegment);
        }
        Ok(())
    }

    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> LocalSegment {
        let start = world_to_local.transform_point3(self.world_start);
        let end = world_to_local.transform_point3(self.world_end);
        LocalSegment {
            start,
            direction: end - start,
            // Only with a tolerance: its scales cost every instance a walk meets (`0 ·`
            // them would be 0 anyway, or NaN for a frame whose inverse's entries square
            // past `f64`).
            tolerance: self.tolerance.map_or(0.0, |tolerance| {
                local_tolerance(
                    tolerance,
                    [self.world_start, self.world_end],
                    local_to_world,
                    world_to_local,
                )
            }),
        }
    }

    fn enter_node(&self, local: &LocalSegment, bound: &BoundingSphere) -> bool {
        if bound.is_empty() {
            return false;
        }
        if bound.radius == f64::INFINITY {
            return true;
        }
        // The closest point `start + t·direction` is rounded at the segment's own
        // magnitude: a segment starting 10^269 units away ends near the scene only to
        // within 10^253 of where it should.
        let segment_magnitude =
            local.start.abs().max_element() + local.direction.abs().max_element();
        let reach = bound.radius
            + local.tolerance
            + cull_padding(bound.radius, bound.center.abs().max_element())
            + segment_magnitude * (4.0 * f64::EPSILON);
        let c = closest_point_on_segment(bound.center, local.start, local.start + local.direction);
        if c.point.distance_squared(bound.center) > reach * reach {
            return false;
        }
        let best = self.best_ratio();
        if best.is_finite() {
            // The sphere cannot hold a point nearer than this along the segment. (Lengths
            // at any scale: in the frame of an extreme matrix a sphere 10^289 across
            // squares past `f64`, and an infinite distance culled a sphere the segment
            // starts in.)
            let earliest = (length_at_any_scale(local.start - bound.center) - reach)
                / length_at_any_scale(local.direction);
            if earliest > best {
                return false;
            }
        }
        true
    }

    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        let (pad, scale) = box_padding(scene_bounds, 0.0);
        let pad = self.tolerance.unwrap_or(0.0) + pad;
        let slab = SegmentSlab::new(
            self.world_start,
            self.world_end - self.world_start,
            pad,
            scale,
        );
        self.world_slab = Some(slab);
        self.world_slab4 = Some(slab.wide());
    }

    #[inline]
    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        match &self.world_slab {
            Some(slab) => slab.entry(bound).map(f64::from),
            None => self.enter_world_box_exactly(bound),
        }
    }

    #[inline]
    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        match &self.world_slab4 {
            Some(slab) => slab.entries(boxes),
            None => WideEntries::from_lanes(std::array::from_fn(|lane| {
                self.enter_world_box_exactly(&boxes.get(lane))
            })),
        }
    }

    fn world_limit(&self) -> f64 {
        self.best_ratio()
    }

    /// Only when the walk can stop early: `Nearest` (and `One`, which stops at the first
    /// hit it meets, nearest first).
    fn orders_world_boxes(&self) -> bool {
        matches!(
            self.limit,
            IntersectionLimit::Nearest | IntersectionLimit::One
        )
    }

    fn enter_drawable(&self, local: &LocalSegment, bound: &BoundingBox) -> bool {
        if bound.is_empty() {
            return false;
        }
        let pad = local.tolerance + box_cull_padding(bound);
        segment_box_entry(local.start, local.direction, bound.min, bound.max, pad).is_some()
    }

    fn intersect(
        &mut self,
        local: &LocalSegment,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        self.pending.begin_visit();
        // Unless every hit is wanted, only this visit's nearest can be kept: the limit
        // starts at the best ratio so far (Nearest) and drops as hits are found.
        let limit = Cell::new(self.best_ratio());
        let mut functor = SegmentFunctor {
            segment: local,
            tolerance: self.tolerance,
            world_start: self.world_start,
            world_end: self.world_end,
            local_to_world: context.local_to_world,
            world_to_local: context.world_to_local,
            ratio_limit: (self.limit != IntersectionLimit::None).then_some(&limit),
            out: &mut self.pending,
        };
        match context.accelerated(drawable) {
            Some((bvh, geometry)) => {
                let (pad, scale) = bvh_padding(bvh);
                let pad = local.tolerance + pad;
                let slab = SegmentSlab::new(local.start, local.direction, pad, scale).wide();
                if self.limit == IntersectionLimit::None {
                    // Every hit is wanted: no order can save work, so none is kept.
                    bvh.for_each_candidate_wide(geometry, |b| slab.entries(b).mask, &mut functor);
                } else {
                    bvh.for_each_candidate_ordered(
                        geometry,
                        |b| slab.entries(b),
                        &limit,
                        &mut functor,
                    );
                }
            }
            None => drawable.accept(&mut functor),
        }
        // Hits are kept whatever order the primitives came in: the final order breaks
        // every tie.
        self.pending.end_visit(context, self.limit);
    }

    fn reached_limit(&self) -> bool {
        self.limit == IntersectionLimit::One && (self.record_kept || !self.pending.is_empty())
    }

    /// Yes: the segment walks the world tree itself (see `segment_world_walk.rs`).
    fn intersect_index(&mut self, context: &mut IndexContext<'_>) -> bool {
        self.walk_world(context);
        true
    }

    /// No: for a segment from so far away that a triangle's corners vanish in the
    /// rounding of `corner - start`, the exact test can pass without touching the
    /// triangle, and the box test decides (tests/precision.rs); whole visits ask it as the
    /// plain traversal does, and the world walk when it meets an instance.
    fn drawable_test_only_culls(&self) -> bool {
        false
    }

    /// When no point or line can be hit (no picking tolerance) and the segment starts
    /// near enough for every triangle hit to lie inside the box the test pads.
    fn drawable_test_follows_from_hits(&self, local: &LocalSegment, bound: &BoundingBox) -> bool {
        !self.hits_points_or_lines() && self.drawable_test_follows_from_triangle_hits(local, bound)
    }

    /// Only with a picking tolerance.
    fn hits_points_or_lines(&self) -> bool {
        self.tolerance.is_some()
    }

    fn end(&mut self) {
        match self.records {
            // The one hit the world walk made into its record, and the store's, if any.
            HitRecords::Full if std::mem::take(&mut self.record_kept) => {
                if !self.pending.is_empty() {
                    self.keep_first_of_record_and_store();
                }
            }
            HitRecords::Full => self
                .pending
                .drain_sorted_into(&mut self.hits, &mut self.spare_paths),
            HitRecords::Summaries => self.pending.sort_for_summaries(),
            HitRecords::UnsortedSummaries => self.pending.keep_found_order(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intersectors::intersect_segment_triangle;

    #[test]
    fn the_box_test_lets_through_every_hit_when_it_is_left_to_the_exact_tests() {
        // Triangles of sizes 10^-3 to 10^3, from the origin to 10^6 away; segments
        // through them or (nearly) in their planes, from up to 10^20 of their sizes
        // away. Whenever
        // `drawable_test_follows_from_triangle_hits` says the box test may be left to the
        // exact test, a hit of the exact test must pass the box test.
        let mut rng = crate::test_rng::XorShift::new(0x2545_f491_4f6c_dd1du64);
        let mut next = || rng.next();
        let (mut left, mut asked, mut hits) = (0, 0, 0);
        for case in 0..40_000 {
            let size = 10f64.powi((next() * 7.0) as i32 - 3);
            let place = DVec3::new(next(), next(), next()) * 10f64.powi((next() * 7.0) as i32);
            let mut corner = || {
                (place + DVec3::new(next(), next(), next()) * size)
                    .as_vec3()
                    .as_dvec3()
            };
            let [a, b, c] = [corner(), corner(), corner()];
            let normal = (b - a).cross(c - a).normalize_or_zero();
            let inside = a + (b - a) * 0.3 + (c - a) * 0.3;
            let mut direction = DVec3::new(next(), next(), next()) - 0.5;
            if case % 2 == 0 {
                // In the plane, but for rounding.
                direction -= normal * normal.dot(direction);
            }
            let direction = direction.normalize_or_zero();
            let reach = 10f64.powi((next() * 21.0) as i32) * size;
            let segment =
                LineSegmentIntersector::new(inside - direction * reach, inside + direction * size)
                    .unwrap();
            let local = segment.localize(&DMat4::IDENTITY, &DMat4::IDENTITY);
            let bound = BoundingBox {
                min: a.min(b).min(c),
                max: a.max(b).max(c),
            };
            if !segment.drawable_test_follows_from_triangle_hits(&local, &bound) {
                asked += 1;
                continue;
            }
            left += 1;
            if intersect_segment_triangle(local.start, local.direction, a, b, c).is_some() {
                hits += 1;
                assert!(
                    segment.enter_drawable(&local, &bound),
                    "case {case}: {a} {b} {c}, from {} along {}",
                    local.start,
                    local.direction
                );
            }
        }
        assert!(
            left > 10_000 && asked > 1_000 && hits > 5_000,
            "{left} {asked} {hits}"
        );
    }
}
