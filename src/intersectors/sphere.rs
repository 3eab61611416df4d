//! [`SphereIntersector`]: which primitives meet a closed ball.

use std::cmp::Ordering;

use glam::{DMat4, DVec3, Vec3};

use super::hit_order::{
    box_cull_padding, box_padding, bvh_padding, cull_padding, padded_box, record_hits, sort_hits,
    HitKey, HitSorter, OrderedHit,
};
use super::local_reach::FrameReach;
use super::node_path_pool::NodePathPool;
use super::volume_hit_store::{VolumeHitParts, VolumeHitStore};
use super::{HitRecords, PrimitiveKind, PrimitiveMask, QueryError, VolumeHitSummaries};
use crate::accel::{Aabb, Aabb4, BallCuller, LocalBallCuller, WideEntries};
use crate::bounding::{BoundingBox, BoundingSphere};
use crate::collide::{closest_point_on_segment, closest_point_on_triangle};
use crate::drawable::{Drawable, PrimitiveFunctor};
use crate::graph::{DrawableId, NodeId};
use crate::length::length_at_any_scale;
use crate::visitor::{
    CoordinateFrame, DrawableContext, FrameContext, IndexContext, IntersectionLimit, Intersector,
};

/// One hit of a [`SphereIntersector`].
#[derive(Clone, Debug, PartialEq)]
pub struct SphereHit {
    /// Root-first node path to the geode holding the drawable.
    pub node_path: Vec<NodeId>,
    /// The drawable.
    pub drawable: DrawableId,
    /// The primitive's index in the drawable.
    pub primitive_index: u32,
    /// What was hit.
    pub primitive_kind: PrimitiveKind,
    /// The point of the primitive closest to the centre, in world space.
    pub world_point: DVec3,
    /// The same point in the drawable's frame.
    pub local_point: DVec3,
    /// World distance from the centre to that point (0 when the centre is on the
    /// primitive).
    pub distance: f64,
    /// The drawable's local-to-world matrix.
    pub local_to_world: DMat4,
}

impl OrderedHit for SphereHit {
    fn key(&self) -> HitKey<'_> {
        (
            self.distance,
            self.drawable,
            self.primitive_index,
            &self.node_path,
        )
    }
}

/// Finds every primitive whose closed set meets a closed ball.
///
/// The test runs in world space (the primitive's vertices are transformed), so the
/// ball stays a ball under non-uniform scales. Hits report the primitive's closest point
/// to the centre and its distance, sorted by distance (ties by drawable, primitive index,
/// node path). Given in VIEW coordinates the view matrix must be rigid (no scale).
///
/// ```
/// use scene_intersect::intersectors::SphereIntersector;
/// use glam::DVec3;
/// assert!(SphereIntersector::new(DVec3::ZERO, 2.0).is_ok());
/// assert!(SphereIntersector::new(DVec3::ZERO, -1.0).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct SphereIntersector {
    frame: CoordinateFrame,
    center: DVec3,
    pub(super) radius: f64,
    pub(super) limit: IntersectionLimit,
    pub(super) primitive_mask: PrimitiveMask,
    pub(super) world_center: DVec3,
    pub(super) hits: Vec<SphereHit>,
    /// Full records or summaries.
    pub(super) records: HitRecords,
    /// The hits as summaries (with [`HitRecords::Summaries`]).
    pub(super) summarized: VolumeHitStore,
    /// The node-path vectors of dropped hits, for the next hits.
    pub(super) spare_paths: NodePathPool,
    /// The room `end`'s sort of the hits reuses (its sorted positions also for the
    /// sorts of raw hits by distance, which run before `end`'s).
    pub(super) sorter: HitSorter,
    /// Raw hits of one drawable visit ([`Intersector::intersect`]), kept between
    /// visits.
    pub(super) scratch: Vec<RawHit>,
    /// The world tree walk's raw hits, kept between queries: apart from `scratch`,
    /// which the visits of whole items the walk meets take meanwhile (sharing one, the
    /// walk's list was set aside empty during those visits, which then grew a new one,
    /// dropped when the walk put its own back: a reallocation in one sphere query of
    /// five on the city, 3 % of their instructions).
    pub(super) walk_scratch: Vec<RawHit>,
    /// The world tree walk's raw hits of one instance, kept between queries.
    pub(super) walk_group: Vec<RawHit>,
    /// The world ball prepared for the scene index's boxes (see
    /// [`Intersector::begin_world_boxes`]).
    world_ball: Option<BallCuller>,
}

/// Refuses a ball with a non-finite centre or radius, or a negative radius.
fn check_ball(center: DVec3, radius: f64) -> Result<(), QueryError> {
    if !center.is_finite() {
        return Err(QueryError::NonFinite("sphere centre"));
    }
    if !radius.is_finite() {
        return Err(QueryError::NonFinite("sphere radius"));
    }
    if radius < 0.0 {
        return Err(QueryError::NegativeRadius(radius));
    }
    Ok(())
}

/// The largest condition number (the product of a frame's matrix's and its inverse's
/// largest scales, see [`FrameReach`]) of a frame in which the ball culls. The rounding
/// of a vertex moved to world space, seen back in its frame, is about 2·10^-16 of the
/// vertex's size times the condition: up to this limit at most 2·10^-12, the order of
/// the culls' padding (10^-9 of a bound's radius, 10^-12 of its distance from the
/// frame's origin); far past it (10^300 in the input that found this) the culls refused
/// what the world-space tests hit. Frames of real scenes are far better conditioned:
/// by this measure (from Frobenius norms, which bound the largest scales from above) a
/// rotation or a uniform scale is 3, a scale of 100 along one axis and 1 along the
/// others about 140.
const MAX_CULLING_CONDITION: f64 = 1e4;

/// The ball as seen from one local frame (for culling; tests run in world space): an
/// ellipsoid, held by a ball and by a box along the frame's axes.
#[derive(Clone, Debug)]
pub struct LocalSphere {
    center: DVec3,
    /// A radius large enough to hold the world ball in this frame.
    radius: f64,
    /// Half extents, along this frame's axes, of a box around `center` holding the
    /// world ball in this frame.
    extents: DVec3,
}

impl LocalSphere {
    /// A ball holding the whole frame: what a ball the frame cannot express becomes, so
    /// that the frame's node and drawable tests let everything through.
    const EVERYWHERE: LocalSphere = LocalSphere {
        center: DVec3::ZERO,
        radius: f64::INFINITY,
        extents: DVec3::INFINITY,
    };
}

impl SphereIntersector {
    /// A ball in world (MODEL) coordinates.
    pub fn new(center: DVec3, radius: f64) -> Result<Self, QueryError> {
        Self::with_frame(CoordinateFrame::Model, center, radius)
    }

    /// A ball in MODEL or VIEW coordinates (a ball has no exact image under the
    /// projective PROJECTION and WINDOW maps: those are refused).
    pub fn with_frame(
        frame: CoordinateFrame,
        center: DVec3,
        radius: f64,
    ) -> Result<Self, QueryError> {
        check_ball(center, radius)?;
        if matches!(frame, CoordinateFrame::Projection | CoordinateFrame::Window) {
            return Err(QueryError::UnsupportedFrame("sphere", frame.name()));
        }
        Ok(SphereIntersector {
            frame,
            center,
            radius,
            limit: IntersectionLimit::None,
            primitive_mask: PrimitiveMask::ALL,
            world_center: center,
            hits: Vec::new(),
            records: HitRecords::Full,
            summarized: VolumeHitStore::default(),
            spare_paths: NodePathPool::default(),
            sorter: HitSorter::default(),
            scratch: Vec::new(),
            walk_scratch: Vec::new(),
            walk_group: Vec::new(),
            world_ball: None,
        })
    }

    /// Moves and resizes the ball, in the same frame, keeping everything else: the
    /// limit, the primitive mask and the room made for hits. A query repeated every
    /// frame reuses one intersector instead of making a new one; the last traversal's
    /// hits are dropped.
    ///
    /// ```
    /// use scene_intersect::intersectors::SphereIntersector;
    /// use glam::DVec3;
    /// let mut ball = SphereIntersector::new(DVec3::ZERO, 2.0)?;
    /// ball.set_sphere(DVec3::X, 0.5)?;
    /// assert_eq!((ball.center(), ball.radius()), (DVec3::X, 0.5));
    /// assert!(ball.set_sphere(DVec3::X, -1.0).is_err());
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    #[inline]
    pub fn set_sphere(&mut self, center: DVec3, radius: f64) -> Result<(), QueryError> {
        check_ball(center, radius)?;
        self.center = center;
        self.radius = radius;
        self.drop_hits();
        Ok(())
    }

    /// Drops the last traversal's hits, full or summarized.
    #[inline]
    fn drop_hits(&mut self) {
        self.spare_paths
            .drop_hits(&mut self.hits, |hit| hit.node_path);
        self.summarized.clear();
    }

    /// Builder form of [`set_limit`](Self::set_limit).
    pub fn with_limit(mut self, limit: IntersectionLimit) -> Self {
        self.limit = limit;
        self
    }

    /// Sets how many hits are kept (`Nearest`: the smallest distance).
    pub fn set_limit(&mut self, limit: IntersectionLimit) {
        self.limit = limit;
    }

    /// Builder form of [`set_primitive_mask`](Self::set_primitive_mask).
    pub fn with_primitive_mask(mut self, mask: PrimitiveMask) -> Self {
        self.primitive_mask = mask;
        self
    }

    /// Selects which primitive kinds are tested (default: all).
    pub fn set_primitive_mask(&mut self, mask: PrimitiveMask) {
        self.primitive_mask = mask;
    }

    /// The centre, in its own frame.
    pub fn center(&self) -> DVec3 {
        self.center
    }

    /// The radius.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Builder form of [`set_records`](Self::set_records).
    pub fn with_records(mut self, records: HitRecords) -> Self {
        self.records = records;
        self
    }

    /// Chooses what the next traversals make of their hits: full records (the default)
    /// or only [summaries](Self::summaries), which skip the local points, matrices and
    /// node-path copies of the records (on littlest_tokyo, ~10 % of a ball query's
    /// instructions). The last traversal's hits are dropped.
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    /// use scene_intersect::graph::SceneGraph;
    /// use scene_intersect::intersectors::{HitRecords, SphereIntersector};
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
    /// // A ball 0.5 above the triangle's inside: the nearest point is right below.
    /// let ball = SphereIntersector::new(DVec3::new(0.25, 0.5, 0.25), 1.0)?;
    /// let mut query = ball.with_records(HitRecords::Summaries);
    /// IntersectionVisitor::new().apply(&scene, root, &mut query)?;
    /// assert!(query.intersections().is_empty());
    /// let hits: Vec<_> = query.summaries().collect();
    /// assert_eq!(hits.len(), 1);
    /// assert_eq!((hits[0].drawable, hits[0].primitive_index), (drawable, 0));
    /// assert_eq!((hits[0].world_point, hits[0].distance), (DVec3::new(0.25, 0.0, 0.25), 0.5));
    /// assert_eq!(hits[0].node_path, [root, geode]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_records(&mut self, records: HitRecords) {
        self.records = records;
        self.drop_hits();
    }

    /// The hits of the last traversal, sorted by distance (empty when
    /// [`HitRecords`] asks for summaries).
    pub fn intersections(&self) -> &[SphereHit] {
        &self.hits
    }

    /// The hits of the last traversal as summaries, in the order of
    /// [`intersections`](Self::intersections): made from the full records, or, with
    /// [`HitRecords::Summaries`], from what the traversal kept (until the ball moves or
    /// the next traversal begins).
    /// With [`HitRecords::UnsortedSummaries`], the same hits in the order the traversal
    /// found them.
    pub fn summaries(&self) -> VolumeHitSummaries<'_> {
        match self.records {
            HitRecords::Full => VolumeHitSummaries::of_sphere_hits(&self.hits),
            HitRecords::Summaries | HitRecords::UnsortedSummaries => {
                VolumeHitSummaries::of_store(&self.summarized)
            }
        }
    }

    /// Takes the hits out.
    pub fn take_intersections(&mut self) -> Vec<SphereHit> {
        std::mem::take(&mut self.hits)
    }

    /// Turns one drawable visit's raw hits into hits, kept as the limit says (`raw` is
    /// left empty). `distinct`: every raw hit is a primitive of its own (the triangles
    /// of a triangle list), so none need merging, whatever their order.
    pub(super) fn keep_hits(
        &mut self,
        raw: &mut Vec<RawHit>,
        context: &DrawableContext<'_>,
        distinct: bool,
    ) {
        if !distinct {
            normalize(raw);
        }
        if self.records.summarizes() {
            let store = &mut self.summarized;
            store.begin_visit();
            for r in raw.drain(..) {
                store.push(r.parts());
            }
            store.end_visit(context, self.limit);
            return;
        }
        if self.limit == IntersectionLimit::None && raw.len() > IN_ORDER_FROM {
            self.keep_all_in_order(raw, context);
            return;
        }
        let paths = &mut self.spare_paths;
        let hits = raw.drain(..).map(|r| sphere_hit(r, context, paths));
        record_hits(&mut self.hits, hits, self.limit);
    }

    /// [`keep_hits`](Self::keep_hits) without a limit for many hits: they are made in
    /// the order of the final sort's leading key, so that with one visit (most
    /// queries) that sort finds them in place, where it would move each hit (a few
    /// hundred bytes) about three times. Positions are sorted, as integer keys, not
    /// the raw hits. (zdm2's spheres, some 400 hits a query: 4.6 % fewer instructions.)
    #[inline(never)]
    fn keep_all_in_order(&mut self, raw: &mut Vec<RawHit>, context: &DrawableContext<'_>) {
        let order = &mut self.sorter.sorted;
        // Equal distances in any order: the final sort settles them.
        order.sort(
            raw.len(),
            |k| raw[k as usize].distance,
            |_, _| Ordering::Equal,
        );
        let paths = &mut self.spare_paths;
        let kept = &*raw;
        (self.hits)
            .extend((order.positions()).map(|k| sphere_hit(kept[k as usize], context, paths)));
        raw.clear();
    }

    /// [`Intersector::enter_world_box`] before [`Intersector::begin_world_boxes`] (not
    /// on the visitor's path): the ball test in `f64`, for the box alone.
    #[cold]
    #[inline(never)]
    fn enter_world_box_exactly(&self, bound: &Aabb) -> Option<f64> {
        let (bound, pad) = padded_box(bound);
        let reach = self.radius + pad;
        let nearest = self.world_center.clamp(bound.min, bound.max);
        (nearest.distance_squared(self.world_center) <= reach * reach).then_some(0.0)
    }
}

pub(super) struct SphereFunctor<'a> {
    center: DVec3,
    radius: f64,
    mask: PrimitiveMask,
    local_to_world: &'a DMat4,
    /// The ball in the drawable's frame, as the BVH walk culls boxes with it: a
    /// triangle whose own local box it rejects is dropped before its vertices are
    /// mapped to world space (the same conservative test the BVH leaf passed, on a
    /// smaller box). `None` in the plain traversal.
    local_ball: Option<LocalBallCuller>,
    out: &'a mut Vec<RawHit>,
}

/// One primitive's closest point, before it becomes a hit.
#[derive(Clone, Copy, Debug)]
pub(super) struct RawHit {
    pub(super) primitive_index: u32,
    indices: [u32; 3],
    kind: PrimitiveKind,
    point: DVec3,
    pub(super) distance: f64,
}

impl RawHit {
    /// The hit's summary parts (world point and distance as the full record has them).
    #[inline]
    pub(super) fn parts(&self) -> VolumeHitParts {
        VolumeHitParts {
            distance: self.distance,
            world_point: self.point,
            primitive_index: self.primitive_index,
            kind: self.kind,
        }
    }
}

/// Above this many raw hits in one visit, [`SphereIntersector::keep_hits`] makes the
/// full hits in their final order (up to it, the final sort's insertion sort is the
/// cheaper).
const IN_ORDER_FROM: usize = 24;

/// The full hit of a raw one, in the visit `context`, its node path copied by `paths`.
#[inline(always)]
pub(super) fn sphere_hit(
    r: RawHit,
    context: &DrawableContext<'_>,
    paths: &mut NodePathPool,
) -> SphereHit {
    SphereHit {
        node_path: paths.copy_of(context.node_path),
        drawable: context.drawable,
        primitive_index: r.primitive_index,
        primitive_kind: r.kind,
        world_point: r.point,
        local_point: context.world_to_local.transform_point3(r.point),
        distance: r.distance,
        local_to_world: *context.local_to_world,
    }
}

/// Puts one visit's raw hits in primitive order and keeps, for a quad (two triangles
/// with one primitive index), the nearer triangle's point.
fn normalize(raw: &mut Vec<RawHit>) {
    raw.sort_unstable_by(|a, b| {
        a.primitive_index
            .cmp(&b.primitive_index)
            .then_with(|| a.indices.cmp(&b.indices))
    });
    raw.dedup_by(|later, kept| {
        let same = later.primitive_index == kept.primitive_index
            && later.kind == PrimitiveKind::Triangle
            && kept.kind == PrimitiveKind::Triangle;
        if same && later.distance < kept.distance {
            *kept = *later;
        }
        same
    });
}

impl<'a> SphereFunctor<'a> {
    /// A functor testing the primitive kinds of `mask` of a drawable placed by
    /// `local_to_world` against the world ball, its hits going to `out`.
    pub(super) fn new(
        query: &SphereIntersector,
        local_to_world: &'a DMat4,
        out: &'a mut Vec<RawHit>,
    ) -> Self {
        SphereFunctor {
            center: query.world_center,
            radius: query.radius,
            mask: query.primitive_mask,
            local_to_world,
            local_ball: None,
            out,
        }
    }

    /// False when the local ball certainly misses the primitive with these vertices.
    #[inline]
    fn may_reach(&self, vertices: &[Vec3]) -> bool {
        self.local_ball.is_none_or(|ball| ball.may_reach(vertices))
    }

    fn world(&self, v: Vec3) -> DVec3 {
        self.local_to_world.transform_point3(v.as_dvec3())
    }

    fn record(
        &mut self,
        primitive_index: u32,
        indices: [u32; 3],
        kind: PrimitiveKind,
        point: DVec3,
    ) {
        // Not `point.distance(..)`: its square underflows to 0 below 10^-162 and made a
        // ball of radius 0 hit a triangle 10^-301 away.
        let distance = length_at_any_scale(point - self.center);
        if distance <= self.radius {
            self.out.push(RawHit {
                primitive_index,
                indices,
                kind,
                point,
                distance,
            });
        }
    }
}

impl PrimitiveFunctor for SphereFunctor<'_> {
    fn point(&mut self, v: Vec3, index: u32, primitive_index: u32) {
        if self.mask.contains(PrimitiveMask::POINTS) && self.may_reach(&[v]) {
            let p = self.world(v);
            self.record(primitive_index, [index; 3], PrimitiveKind::Point, p);
        }
    }

    fn line(&mut self, v: [Vec3; 2], indices: [u32; 2], primitive_index: u32) {
        if self.mask.contains(PrimitiveMask::LINES) && self.may_reach(&v) {
            let c = closest_point_on_segment(self.center, self.world(v[0]), self.world(v[1]));
            let indices = [indices[0], indices[1], indices[1]];
            self.record(primitive_index, indices, PrimitiveKind::Line, c.point);
        }
    }

    fn triangle(&mut self, v: [Vec3; 3], indices: [u32; 3], primitive_index: u32) {
        if self.mask.contains(PrimitiveMask::TRIANGLES) && self.may_reach(&v) {
            let [a, b, c] = v.map(|v| self.world(v));
            // A triangle wholly beyond one face of the ball's box, by more than any
            // rounding of the closest-point search could blur, has no point within the
            // radius: most candidates of a BVH leaf end here, cheaply.
            let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
            let magnitude = lo.abs().max(hi.abs()).max(self.center.abs()).max_element();
            let reach = DVec3::splat(self.radius * (1.0 + 1e-9) + magnitude * 1e-9);
            if (lo - self.center).cmpgt(reach).any() || (self.center - hi).cmpgt(reach).any() {
                return;
            }
            self.record_closest([a, b, c], indices, primitive_index);
        }
    }
}

impl SphereFunctor<'_> {
    /// [`triangle`](PrimitiveFunctor::triangle) for a triangle the world walk's ball
    /// test kept: its quantized box is already within the radius, so the box test
    /// above would keep it too (it kept 3 616 of 3 636 such triangles on
    /// littlest_tokyo) and only the exact test is left. The hits are the same: that
    /// test only ever skipped triangles the distance check rejects.
    #[inline]
    pub(super) fn triangle_near_ball(&mut self, v: [Vec3; 3], indices: [u32; 3], primitive: u32) {
        self.record_closest(v.map(|v| self.world(v)), indices, primitive);
    }

    /// Records the world triangle `[a, b, c]`'s point closest to the centre, when it is
    /// within the radius.
    #[inline]
    fn record_closest(&mut self, [a, b, c]: [DVec3; 3], indices: [u32; 3], primitive: u32) {
        let p = closest_point_on_triangle(self.center, a, b, c);
        self.record(primitive, indices, PrimitiveKind::Triangle, p);
    }
}

impl Intersector for SphereIntersector {
    type Local = LocalSphere;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        self.drop_hits();
        self.world_ball = None;
        self.world_center = if self.frame == CoordinateFrame::Model {
            // What the identity's `transform_point3` gives: the centre, but +0 for −0.
            // (Asked of `frames`, MODEL's two identity matrices were written out for
            // every query and the centre multiplied by them: 77 instructions, 3 % of a
            // sphere query on truck_town.)
            self.center + DVec3::ZERO
        } else {
            frames
                .matrices(self.frame)?
                .frame_to_world
                .transform_point3(self.center)
        };
        if !self.world_center.is_finite() {
            return Err(QueryError::SingularFrame(self.frame.name()));
        }
        Ok(())
    }

    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> LocalSphere {
        let center = world_to_local.transform_point3(self.world_center);
        let frame = FrameReach::of(local_to_world, world_to_local);
        // Culls in this frame are exact for the ball, but the exact tests run in world
        // space, on vertices moved there and rounded: seen back in this frame, that
        // rounding grows with the frame's condition number, the product of the
        // matrix's and its inverse's largest scales. A frame that stretches one
        // direction 10^300 times more than another (found by the `edits` fuzz target)
        // made a line 127 units from the ball here pass, in world space, through its
        // centre: the plain traversal culled it and the accelerated one, testing world
        // boxes, found it. Past `MAX_CULLING_CONDITION` no test here refuses anything;
        // below it, the shapes are grown by that rounding (see `FrameReach::rounding`).
        let condition = frame.condition;
        let error = frame.rounding(self.world_center.abs().max_element() + self.radius);
        let radius = self.radius * frame.largest_stretch + error;
        let extents = frame.row_lengths * self.radius + DVec3::splat(error);
        if center.is_finite()
            && radius.is_finite()
            && extents.is_finite()
            && condition <= MAX_CULLING_CONDITION
        {
            LocalSphere {
                center,
                radius,
                extents,
            }
        } else {
            // The frame's inverse takes the ball past `f64` (a centre of +∞ − ∞ = NaN,
            // a radius of 0 × ∞), or the frame is too ill-conditioned: no test in this
            // frame may refuse anything, as the exact tests, in world space, may still
            // find hits.
            LocalSphere::EVERYWHERE
        }
    }

    fn enter_node(&self, local: &LocalSphere, bound: &BoundingSphere) -> bool {
        if bound.is_empty() {
            return false;
        }
        let reach = bound.radius
            + local.radius
            + cull_padding(bound.radius, bound.center.abs().max_element());
        bound.radius == f64::INFINITY
            || bound.center.distance_squared(local.center) <= reach * reach
    }

    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        let (pad, scale) = box_padding(scene_bounds, 0.0);
        self.world_ball = Some(BallCuller::new(self.world_center, self.radius + pad, scale));
    }

    #[inline]
    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        match &self.world_ball {
            Some(ball) => ball.overlaps(bound).then_some(0.0),
            None => self.enter_world_box_exactly(bound),
        }
    }

    #[inline]
    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        match &self.world_ball {
            Some(ball) => WideEntries {
                mask: ball.overlapping(boxes),
                keys: glam::Vec4::ZERO,
            },
            None => WideEntries::from_lanes(std::array::from_fn(|lane| {
                self.enter_world_box_exactly(&boxes.get(lane))
            })),
        }
    }

    fn enter_drawable(&self, local: &LocalSphere, bound: &BoundingBox) -> bool {
        if bound.is_empty() {
            return false;
        }
        let pad = box_cull_padding(bound);
        let nearest = local.center.clamp(bound.min, bound.max);
        let reach = local.radius + pad;
        (nearest - local.center)
            .abs()
            .cmple(local.extents + pad)
            .all()
            && nearest.distance_squared(local.center) <= reach * reach
    }

    fn intersect(
        &mut self,
        local: &LocalSphere,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        let mut raw = std::mem::take(&mut self.scratch);
        raw.clear();
        let mut functor = SphereFunctor {
            center: self.world_center,
            radius: self.radius,
            mask: self.primitive_mask,
            local_to_world: context.local_to_world,
            local_ball: None,
            out: &mut raw,
        };
        match context.accelerated(drawable) {
            Some((bvh, geometry)) => {
                let (pad, scale) = bvh_padding(bvh);
                let reach = local.extents + DVec3::splat(pad);
                let ball = LocalBallCuller::new(local.center, local.radius + pad, reach, scale);
                functor.local_ball = Some(ball);
                bvh.for_each_candidate_wide(geometry, |b| ball.overlapping(b), &mut functor);
            }
            None => drawable.accept(&mut functor),
        }
        self.keep_hits(&mut raw, context, false);
        self.scratch = raw;
    }

    fn reached_limit(&self) -> bool {
        self.limit == IntersectionLimit::One
            && !(self.hits.is_empty() && self.summarized.is_empty())
    }

    /// Yes: the ball walks the world tree itself (see `sphere_world_walk.rs`).
    fn intersect_index(&mut self, context: &mut IndexContext<'_>) -> bool {
        self.walk_world(context);
        true
    }

    /// Yes: the padded ball test only culls.
    fn drawable_test_only_culls(&self) -> bool {
        true
    }

    /// When the primitive mask has points or lines.
    fn hits_points_or_lines(&self) -> bool {
        self.primitive_mask
            .intersects(PrimitiveMask::POINTS | PrimitiveMask::LINES)
    }

    /// No: its boxes have no order key (even `Nearest` must look at every candidate).
    fn orders_world_boxes(&self) -> bool {
        false
    }

    fn end(&mut self) {
        match self.records {
            HitRecords::Full => sort_hits(&mut self.hits, &mut self.sorter),
            HitRecords::Summaries => self.summarized.sort(),
            HitRecords::UnsortedSummaries => self.summarized.keep_found_order(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec4;

    #[test]
    fn a_model_frame_centre_is_the_identity_transform_of_it_bit_for_bit() {
        let frames = FrameContext::default();
        for center in [
            DVec3::new(-0.0, 0.0, -0.0),
            DVec3::new(1.5, -0.0, -2.25e-300),
            DVec3::new(-1e300, 3.0, -0.0),
        ] {
            let mut ball = SphereIntersector::new(center, 1.0).unwrap();
            ball.begin(&frames).unwrap();
            let expected = DMat4::IDENTITY.transform_point3(center);
            assert_eq!(
                ball.world_center.to_array().map(f64::to_bits),
                expected.to_array().map(f64::to_bits),
                "{center}"
            );
        }
    }

    #[test]
    fn a_ball_a_frame_cannot_express_is_refused_by_none_of_its_tests() {
        // x' = 10^200 x − 10^200 y: a centre with x = y far out becomes +∞ − ∞ = NaN;
        // and the matrix's entries are too large to square, so a radius of 0 becomes
        // 0 × ∞ = NaN.
        let world_to_local = DMat4::from_cols(
            DVec4::new(1e200, 0.0, 0.0, 0.0),
            DVec4::new(-1e200, 1.0, 0.0, 0.0),
            DVec4::Z,
            DVec4::W,
        );
        for (center, radius) in [
            (DVec3::new(1e150, 1e150, 0.0), 1.0),
            (DVec3::new(1.0, 2.0, 3.0), 0.0),
        ] {
            let ball = SphereIntersector::new(center, radius).unwrap();
            let local = ball.localize(&world_to_local.inverse(), &world_to_local);
            for place in [
                DVec3::ZERO,
                DVec3::new(-1e200, 2.0, 3.0),
                DVec3::splat(-1e300),
            ] {
                let sphere = BoundingSphere::new(place, 1.0);
                let cube = BoundingBox {
                    min: place - 1.0,
                    max: place + 1.0,
                };
                assert!(
                    ball.enter_node(&local, &sphere),
                    "{center} {radius}: {place}"
                );
                assert!(
                    ball.enter_drawable(&local, &cube),
                    "{center} {radius}: {place}"
                );
            }
        }
        // A frame that does express the ball still culls.
        let ball = SphereIntersector::new(DVec3::new(1.0, 2.0, 3.0), 0.5).unwrap();
        let local = ball.localize(&DMat4::IDENTITY, &DMat4::IDENTITY);
        assert!(!ball.enter_node(&local, &BoundingSphere::new(DVec3::splat(9.0), 1.0)));
    }

    #[test]
    fn a_frame_too_ill_conditioned_for_world_space_tests_culls_nothing() {
        // A ball of radius 0.5 at the origin; a node sphere 8 units away along x in the
        // frame, which culls it unless the frame is too ill-conditioned.
        let ball = SphereIntersector::new(DVec3::ZERO, 0.5).unwrap();
        let far = BoundingSphere::new(DVec3::new(8.0, 0.0, 0.0), 1.0);
        let culls = |x_scale: f64, y_scale: f64| {
            let local_to_world = DMat4::from_scale(DVec3::new(x_scale, y_scale, 1.0));
            let local = ball.localize(&local_to_world, &local_to_world.inverse());
            !ball.enter_node(&local, &far)
        };
        // Frobenius norms: scales (s, 1, 1) give a condition of about s·√2 (s >= 1).
        assert!(culls(1.0, 1.0));
        assert!(culls(1.0, 1e3));
        assert!(culls(7000.0, 1.0));
        // Past 10^4 no test in the frame refuses anything: vertices moved to world space
        // there are rounded by more than the culls pad.
        assert!(!culls(8000.0, 1.0));
        assert!(!culls(1e-300, 1e3));
        assert!(!culls(1.0, 1e200));
    }

    #[test]
    fn a_turned_and_scaled_frame_sees_the_ball_as_tightly_as_its_ellipsoid() {
        // A building's frame: 12 wide, 40 tall, 6 deep, a quarter turn about y, 100
        // units out. The world ball of radius 2 at (100, 10, 0) is, in the frame, an
        // ellipsoid of half extents 2/12 along x, 2/40 along y and 2/6 along z (the
        // turn swaps which world axis each local one lies along, not the lengths); its
        // largest is 1/3, which the ball in the frame needs, where the Frobenius norm
        // of the inverse (√(1/144 + 1/1600 + 1/36) = 0.188) gave 0.376.
        let ball = SphereIntersector::new(DVec3::new(100.0, 10.0, 0.0), 2.0).unwrap();
        let local_to_world = DMat4::from_scale_rotation_translation(
            DVec3::new(12.0, 40.0, 6.0),
            glam::DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
            DVec3::new(100.0, 0.0, 0.0),
        );
        let local = ball.localize(&local_to_world, &local_to_world.inverse());
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-10;
        assert!(close(local.radius, 1.0 / 3.0), "{}", local.radius);
        let expected = [2.0 / 12.0, 2.0 / 40.0, 2.0 / 6.0];
        for (axis, (got, want)) in local.extents.to_array().iter().zip(expected).enumerate() {
            assert!(close(*got, want), "axis {axis}: {got}");
        }
        // The centre is at local height 10/40 = 0.25: a drawable box from local height
        // 0.31 up lies within the ball's radius but above the ellipsoid, and is culled;
        // from 0.29 up it is entered.
        let above = |from: f64| BoundingBox {
            min: DVec3::new(-0.5, from, -0.5),
            max: DVec3::new(0.5, 1.0, 0.5),
        };
        assert!(!ball.enter_drawable(&local, &above(0.31)));
        assert!(ball.enter_drawable(&local, &above(0.29)));
    }
}
