//! [`PolytopeIntersector`]: which primitives meet a closed convex polytope.

use glam::{DMat4, DQuat, DVec3, DVec4, Vec3};
use smallvec::SmallVec;

use super::clipping::{
    clip_segment, contains_point, plane_in_clipping_range, plane_value, TriangleClipper,
};
use super::hit_order::{
    box_cull_padding, box_padding, bvh_padding, cull_padding, padded_box, record_hits, sort_hits,
    HitKey, HitSorter, OrderedHit,
};
use super::node_path_pool::NodePathPool;
use super::volume_hit_store::{VolumeHitParts, VolumeHitStore};
use super::{HitRecords, Polytope, PrimitiveKind, PrimitiveMask, QueryError, VolumeHitSummaries};
use crate::accel::{Aabb, Aabb4, PlaneCuller, WideEntries};
use crate::bounding::{BoundingBox, BoundingSphere};
use crate::drawable::{Drawable, PrimitiveFunctor};
use crate::graph::{DrawableId, NodeId};
use crate::length::length_at_any_scale;
use crate::visitor::{
    CoordinateFrame, DrawableContext, FrameContext, IndexContext, IntersectionLimit, Intersector,
};

/// One hit of a [`PolytopeIntersector`].
#[derive(Clone, Debug, PartialEq)]
pub struct PolytopeHit {
    /// Root-first node path to the geode holding the drawable.
    pub node_path: Vec<NodeId>,
    /// The drawable.
    pub drawable: DrawableId,
    /// The primitive's index in the drawable.
    pub primitive_index: u32,
    /// What was hit.
    pub primitive_kind: PrimitiveKind,
    /// The part of the primitive inside the polytope, in world space: a convex polygon
    /// for a triangle, one or two points for a line or point.
    pub polygon: SmallVec<[DVec3; 8]>,
    /// The mean of [`polygon`](Self::polygon)'s vertices (world space).
    pub world_point: DVec3,
    /// The same point in the drawable's frame.
    pub local_point: DVec3,
    /// Signed world distance of [`world_point`](Self::world_point) to the reference plane
    /// (positive on the inner side).
    pub distance: f64,
    /// The largest signed world distance of a [`polygon`](Self::polygon) vertex to the
    /// reference plane: how deep the primitive reaches past it.
    pub max_distance: f64,
    /// The drawable's local-to-world matrix.
    pub local_to_world: DMat4,
}

impl OrderedHit for PolytopeHit {
    fn key(&self) -> HitKey<'_> {
        (
            self.distance,
            self.drawable,
            self.primitive_index,
            &self.node_path,
        )
    }
}

/// Finds every primitive whose closed set meets a closed convex polytope (OSG's
/// `PolytopeIntersector`, with its clipping bugs fixed).
///
/// A primitive is hit iff some point of it is inside or on the polytope: touching at a
/// single vertex counts, a triangle crossing the polytope without any vertex inside
/// counts, a zero-area triangle counts as its edges. The
/// [primitive mask](Self::set_primitive_mask) selects points, lines and triangles. For
/// each hit the clipped part is reported with its mean point and distances to the
/// reference plane (the last plane unless [set](Self::set_reference_plane)), in world
/// units. Hits are sorted by distance (ties by drawable, primitive index, node path).
///
/// Given in PROJECTION or WINDOW coordinates, the polytope is mapped to world space
/// exactly (planes transform by the inverse transpose); it should then include a near
/// plane, as [`from_window_rect`](Self::from_window_rect) does, so that nothing behind
/// the eye is selected.
#[derive(Clone, Debug)]
pub struct PolytopeIntersector {
    frame: CoordinateFrame,
    polytope: Polytope,
    reference_plane: Option<DVec4>,
    pub(super) limit: IntersectionLimit,
    pub(super) primitive_mask: PrimitiveMask,
    /// The polytope in world space when its frame is not MODEL (in MODEL coordinates
    /// it is [`polytope`](Self::polytope) itself, and is not copied).
    world_planes: Option<Polytope>,
    /// The world planes with unit normals, when the polytope's own are not those (see
    /// [`world_unit_planes`](Self::world_unit_planes)).
    world_normalized: SmallVec<[DVec4; 8]>,
    /// The world planes prepared for a scene index's boxes (see
    /// [`Intersector::begin_world_boxes`]); `None` when the index's boxes are tested in
    /// `f64` or all lie outside `world_bounds`.
    world_culler: Option<PlaneCuller>,
    /// The polytope's bounds in world space (see [`Polytope::bounds`]), rounded outward
    /// to `f32`, when known: scene-index boxes outside them are rejected at once.
    pub(super) world_bounds: Option<Aabb>,
    world_reference: DVec4,
    pub(super) hits: Vec<PolytopeHit>,
    /// Full records or summaries.
    records: HitRecords,
    /// The hits as summaries (with [`HitRecords::Summaries`]).
    summarized: VolumeHitStore,
    /// The node-path vectors of dropped hits, for the next hits.
    spare_paths: NodePathPool,
    /// The room `end`'s sort of the hits reuses.
    sorter: HitSorter,
    pub(super) scratch_hits: Vec<RawHit>,
    pub(super) scratch_points: Vec<DVec3>,
}

/// The polytope in one local frame.
#[derive(Clone, Debug)]
pub struct LocalPolytope {
    pub(super) planes: SmallVec<[DVec4; 8]>,
    /// The planes in `f32` for the BVH walk (`None` when they do not fit). The
    /// unit-normal planes the `f64` bound tests use are made when needed: this is copied
    /// for every frame a query is localized to, so it stays small.
    culler: Option<PlaneCuller>,
}

impl PolytopeIntersector {
    /// A polytope in world (MODEL) coordinates.
    pub fn new(polytope: Polytope) -> Self {
        Self::with_frame(CoordinateFrame::Model, polytope)
    }

    /// A polytope in another coordinate frame.
    pub fn with_frame(frame: CoordinateFrame, polytope: Polytope) -> Self {
        PolytopeIntersector {
            frame,
            world_planes: None,
            world_normalized: SmallVec::new(),
            world_culler: None,
            world_bounds: None,
            polytope,
            reference_plane: None,
            limit: IntersectionLimit::None,
            primitive_mask: PrimitiveMask::ALL,
            world_reference: DVec4::ZERO,
            hits: Vec::new(),
            records: HitRecords::Full,
            summarized: VolumeHitStore::default(),
            spare_paths: NodePathPool::default(),
            sorter: HitSorter::default(),
            scratch_hits: Vec::new(),
            scratch_points: Vec::new(),
        }
    }

    /// Rubber-band selection: the window rectangle `[x0, x1] x [y0, y1]` (window
    /// coordinates, y up) extruded from the near plane away from the eye. Planes: x >= x0,
    /// x <= x1, y >= y0, y <= y1, and the near plane (window z >= 0) last, as reference.
    pub fn from_window_rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Result<Self, QueryError> {
        let (x0, x1) = (x0.min(x1), x0.max(x1));
        let (y0, y1) = (y0.min(y1), y0.max(y1));
        let polytope = Polytope::new([
            DVec4::new(1.0, 0.0, 0.0, -x0),
            DVec4::new(-1.0, 0.0, 0.0, x1),
            DVec4::new(0.0, 1.0, 0.0, -y0),
            DVec4::new(0.0, -1.0, 0.0, y1),
            DVec4::new(0.0, 0.0, 1.0, 0.0),
        ])?;
        Ok(Self::with_frame(CoordinateFrame::Window, polytope))
    }

    /// Replaces the polytope (given in the same frame), keeping everything else: the
    /// limit, the primitive mask, a reference plane [set](Self::set_reference_plane) and
    /// the room made for hits. A query repeated every frame (a vehicle's bounding box)
    /// reuses one intersector instead of making a new one (for a box,
    /// [`set_oriented_box`](Self::set_oriented_box) writes it in place); the last
    /// traversal's hits are dropped.
    ///
    /// ```
    /// use scene_intersect::intersectors::{Polytope, PolytopeIntersector};
    /// use glam::{DQuat, DVec3};
    /// let half = DVec3::new(1.0, 0.75, 2.0);
    /// let car = |x: f64| {
    ///     Polytope::from_oriented_box(DVec3::new(x, 0.75, 0.0), half, DQuat::IDENTITY)
    /// };
    /// let mut query = PolytopeIntersector::new(car(0.0)?);
    /// query.set_polytope(car(5.0)?);
    /// assert!(query.polytope().contains(DVec3::new(5.5, 0.5, 1.0)));
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    // (Always inlined: called, with the summaries' store to clear too, it cost
    // truck_town's box queries, which mostly meet nothing, 1.5 % more instructions.)
    #[inline(always)]
    pub fn set_polytope(&mut self, polytope: Polytope) {
        self.polytope = polytope;
        // Derived from the polytope in `begin`; an empty list means not yet.
        self.world_normalized.clear();
        self.drop_hits();
    }

    /// [`set_polytope`](Self::set_polytope) with the box
    /// [`Polytope::from_oriented_box`] makes, written in place (a vehicle's box every
    /// frame: the box is not made aside and moved in). On an error the polytope and the
    /// last hits are left as they were.
    ///
    /// ```
    /// use scene_intersect::intersectors::{Polytope, PolytopeIntersector};
    /// use glam::{DQuat, DVec3};
    /// let half = DVec3::new(1.0, 0.75, 2.0);
    /// let start = Polytope::from_oriented_box(DVec3::ZERO, half, DQuat::IDENTITY)?;
    /// let mut query = PolytopeIntersector::new(start);
    /// query.set_oriented_box(DVec3::new(5.0, 0.75, 0.0), half, DQuat::IDENTITY)?;
    /// assert!(query.polytope().contains(DVec3::new(5.5, 0.5, 1.0)));
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    #[inline]
    pub fn set_oriented_box(
        &mut self,
        center: DVec3,
        half_extents: DVec3,
        rotation: DQuat,
    ) -> Result<(), QueryError> {
        self.polytope
            .set_oriented_box(center, half_extents, rotation)?;
        self.world_normalized.clear();
        self.drop_hits();
        Ok(())
    }

    /// [`set_polytope`](Self::set_polytope) with the polytope [`Polytope::new`] makes of
    /// `planes`, written in place (planes read from a file, or a renderer's own box,
    /// replaced every frame: not made into a polytope aside and moved in). On an error
    /// the polytope and the last hits are left as they were.
    ///
    /// ```
    /// use scene_intersect::intersectors::{Polytope, PolytopeIntersector};
    /// use glam::{DVec3, DVec4};
    /// let mut query = PolytopeIntersector::new(Polytope::from_box(DVec3::ZERO, DVec3::ONE)?);
    /// // The box [4, 6] x [0, 1] x [-1, 1], its faces given as planes.
    /// query.set_planes(&[
    ///     DVec4::new(1.0, 0.0, 0.0, -4.0),
    ///     DVec4::new(-1.0, 0.0, 0.0, 6.0),
    ///     DVec4::new(0.0, 1.0, 0.0, 0.0),
    ///     DVec4::new(0.0, -1.0, 0.0, 1.0),
    ///     DVec4::new(0.0, 0.0, 1.0, 1.0),
    ///     DVec4::new(0.0, 0.0, -1.0, 1.0),
    /// ])?;
    /// assert!(query.polytope().contains(DVec3::new(5.0, 0.5, 0.0)));
    /// // Found to be a box: it has bounds (padded a little), as `Polytope::new` finds.
    /// let (min, max) = query.polytope().bounds().unwrap();
    /// assert!(min.cmple(DVec3::new(4.0, 0.0, -1.0)).all() && max.cmpge(DVec3::new(6.0, 1.0, 1.0)).all());
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    #[inline]
    pub fn set_planes(&mut self, planes: &[DVec4]) -> Result<(), QueryError> {
        self.polytope.set_planes(planes)?;
        self.world_normalized.clear();
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

    /// Sets the plane (in the polytope's frame, inward normal) distances are measured
    /// from; by default the last plane.
    pub fn set_reference_plane(&mut self, plane: DVec4) -> Result<(), QueryError> {
        if !plane.is_finite() {
            return Err(QueryError::NonFinite("reference plane"));
        }
        if plane.truncate() == DVec3::ZERO {
            return Err(QueryError::ZeroNormal(0));
        }
        self.reference_plane = Some(plane);
        Ok(())
    }

    /// The polytope, in its own frame.
    pub fn polytope(&self) -> &Polytope {
        &self.polytope
    }

    /// The polytope in world space, as of the last traversal.
    pub fn world_polytope(&self) -> &Polytope {
        self.world_planes.as_ref().unwrap_or(&self.polytope)
    }

    /// Builder form of [`set_records`](Self::set_records).
    pub fn with_records(mut self, records: HitRecords) -> Self {
        self.records = records;
        self
    }

    /// Chooses what the next traversals make of their hits: full records (the default)
    /// or only [summaries](Self::summaries), which skip the clipped polygons, matrices
    /// and node-path copies of the records (on littlest_tokyo, ~9 % of a vehicle box
    /// query's instructions). The last traversal's hits are dropped.
    ///
    /// ```
    /// use glam::{DQuat, DVec3, Vec3};
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    /// use scene_intersect::graph::SceneGraph;
    /// use scene_intersect::intersectors::{HitRecords, Polytope, PolytopeIntersector};
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
    /// // A box around the whole triangle: its hit point is the mean of the corners.
    /// let around =
    ///     Polytope::from_oriented_box(DVec3::new(0.5, 0.0, 0.5), DVec3::splat(0.6), DQuat::IDENTITY)?;
    /// let mut query = PolytopeIntersector::new(around).with_records(HitRecords::Summaries);
    /// IntersectionVisitor::new().apply(&scene, root, &mut query)?;
    /// assert!(query.intersections().is_empty());
    /// let hits: Vec<_> = query.summaries().collect();
    /// assert_eq!(hits.len(), 1);
    /// assert_eq!((hits[0].drawable, hits[0].primitive_index), (drawable, 0));
    /// assert_eq!(hits[0].world_point, DVec3::new(1.0 / 3.0, 0.0, 1.0 / 3.0));
    /// assert_eq!(hits[0].node_path, [root, geode]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_records(&mut self, records: HitRecords) {
        self.records = records;
        self.drop_hits();
    }

    /// The hits of the last traversal, sorted by distance (empty when
    /// [`HitRecords`] asks for summaries).
    pub fn intersections(&self) -> &[PolytopeHit] {
        &self.hits
    }

    /// The hits of the last traversal as summaries, in the order of
    /// [`intersections`](Self::intersections): made from the full records, or, with
    /// [`HitRecords::Summaries`], from what the traversal kept (until the polytope is
    /// replaced or the next traversal begins).
    /// With [`HitRecords::UnsortedSummaries`], the same hits in the order the traversal
    /// found them.
    pub fn summaries(&self) -> VolumeHitSummaries<'_> {
        match self.records {
            HitRecords::Full => VolumeHitSummaries::of_polytope_hits(&self.hits),
            HitRecords::Summaries | HitRecords::UnsortedSummaries => {
                VolumeHitSummaries::of_store(&self.summarized)
            }
        }
    }

    /// Takes the hits out.
    pub fn take_intersections(&mut self) -> Vec<PolytopeHit> {
        std::mem::take(&mut self.hits)
    }

    /// The polytope's planes in the frame whose local-to-world matrix is
    /// `local_to_world`: a world plane `p` is the local plane `local_to_worldᵀ p`
    /// (scaled by a power of two where its values at the frame's `f32` vertices would
    /// pass `f64`'s range: [`plane_in_clipping_range`]).
    pub(super) fn local_planes(&self, local_to_world: &DMat4) -> SmallVec<[DVec4; 8]> {
        let t = local_to_world.transpose();
        let mut local = SmallVec::new();
        map_planes_into(self.world_polytope().planes(), &mut local, |p| {
            plane_in_clipping_range(t * *p)
        });
        local
    }

    /// Turns one drawable visit's raw hits (clipped polygons in the drawable's frame,
    /// their points in `points`) into hits, kept as the limit says.
    /// `distinct`: every raw hit is a primitive of its own (the triangles of a triangle
    /// list), so none need merging, whatever their order.
    pub(super) fn keep_hits(
        &mut self,
        raw: &mut [RawHit],
        points: &[DVec3],
        context: &DrawableContext<'_>,
        distinct: bool,
    ) {
        let reference = self.world_reference;
        let distance_to = |p: DVec3| reference.truncate().dot(p) + reference.w;
        if self.records.summarizes() {
            // The world point and distance as the full record computes them.
            let to_world = |p: &DVec3| context.local_to_world.transform_point3(*p);
            let store = &mut self.summarized;
            store.begin_visit();
            for_each_primitive(raw, points, distinct, |r, local| {
                let world_point = local.iter().map(to_world).sum::<DVec3>() / local.len() as f64;
                store.push(VolumeHitParts {
                    distance: distance_to(world_point),
                    world_point,
                    primitive_index: r.primitive_index,
                    kind: r.kind,
                });
            });
            store.end_visit(context, self.limit);
            return;
        }
        // Every hit is kept without a limit: straight into the list (a hit is a few
        // hundred bytes; each move costs).
        let limit = self.limit;
        let mut limited: SmallVec<[PolytopeHit; 4]> = SmallVec::new();
        let kept = &mut self.hits;
        let paths = &mut self.spare_paths;
        // Each hit is added first and filled in place: built aside, it (~430 bytes) and
        // its polygon were each copied once more (1.2 % of a box query on littlest_tokyo).
        let start = |r: &RawHit, local: &[DVec3], paths: &mut NodePathPool| PolytopeHit {
            node_path: paths.copy_of(context.node_path),
            drawable: context.drawable,
            primitive_index: r.primitive_index,
            primitive_kind: r.kind,
            distance: 0.0,
            max_distance: f64::NEG_INFINITY,
            polygon: SmallVec::new(),
            world_point: DVec3::ZERO,
            local_point: local.iter().copied().sum::<DVec3>() / local.len() as f64,
            local_to_world: *context.local_to_world,
        };
        let finish = |hit: Option<&mut PolytopeHit>, local: &[DVec3]| {
            let Some(hit) = hit else { return };
            let to_world = |p: &DVec3| context.local_to_world.transform_point3(*p);
            hit.polygon.extend(local.iter().map(to_world));
            let polygon = &hit.polygon;
            hit.world_point = polygon.iter().copied().sum::<DVec3>() / polygon.len() as f64;
            hit.distance = distance_to(hit.world_point);
            hit.max_distance = (polygon.iter())
                .map(|p| distance_to(*p))
                .fold(f64::NEG_INFINITY, f64::max);
        };
        for_each_primitive(raw, points, distinct, |r, local_polygon| {
            if limit == IntersectionLimit::None {
                // Made by the iterator once there is room, the hit is written in place;
                // made before `push` checks for room, it was built aside and copied in
                // by `memcpy` (1 % of a box query on littlest_tokyo and on the city).
                kept.extend(std::iter::once_with(|| start(r, local_polygon, paths)));
                finish(kept.last_mut(), local_polygon);
            } else {
                limited.push(start(r, local_polygon, paths));
                finish(limited.last_mut(), local_polygon);
            }
        });
        // (Moving the inline list into an iterator copies it whole: only when needed.)
        if !limited.is_empty() {
            record_hits(&mut self.hits, limited.into_iter(), limit);
        }
    }

    /// [`Intersector::enter_world_box`] without a plane culler (before
    /// [`Intersector::begin_world_boxes`], or for planes the culler cannot take): the
    /// plane test in `f64`, for the box alone.
    #[cold]
    #[inline(never)]
    fn enter_world_box_exactly(&self, bound: &Aabb) -> Option<f64> {
        let (bound, pad) = padded_box(bound);
        box_outside_no_plane(self.world_unit_planes(), bound.min, bound.max, pad).then_some(0.0)
    }

    /// The polytope's planes in world space with unit normals, as of the last
    /// [`begin`](Intersector::begin): a box's own planes in MODEL coordinates (no copy),
    /// else the ones `begin` made.
    pub(super) fn world_unit_planes(&self) -> &[DVec4] {
        if self.frame == CoordinateFrame::Model && self.polytope.has_unit_normals() {
            self.polytope.planes()
        } else {
            &self.world_normalized
        }
    }
}

/// A primitive's clipped part in the drawable's frame, before it becomes a hit: its
/// vertices are `points[start..start + len]` of the visit's point arena (so sorting raw
/// hits moves 32 bytes each, not whole polygons).
#[derive(Clone, Copy, Debug)]
pub(super) struct RawHit {
    primitive_index: u32,
    indices: [u32; 3],
    kind: PrimitiveKind,
    start: u32,
    len: u32,
}

#[cfg(test)]
thread_local! {
    /// How many triangles the functors of this thread have tested against their planes,
    /// and against how many planes in all: what the walks that take triangles inside
    /// every plane whole, and leave out the planes a leaf is inside, save, for their
    /// tests.
    pub(super) static TRIANGLES_TESTED: std::cell::Cell<(usize, usize)> =
        const { std::cell::Cell::new((0, 0)) };
}

pub(super) struct PolytopeFunctor<'a> {
    /// Every plane of the polytope in the drawable's frame.
    all_planes: &'a [DVec4],
    /// The planes the current BVH leaf may cross (bit `k`: plane `k`); the others are
    /// certainly satisfied by every vertex there.
    active_mask: u64,
    /// Those planes.
    planes: SmallVec<[DVec4; 8]>,
    mask: PrimitiveMask,
    /// Made when a triangle first needs clipping: its buffers are some 900 bytes, and
    /// zeroing them cost a box query that clips nothing (most of them, in a city) 5 %
    /// of its instructions.
    clipper: Option<TriangleClipper>,
    out: &'a mut Vec<RawHit>,
    points: &'a mut Vec<DVec3>,
}

impl<'a> PolytopeFunctor<'a> {
    /// A functor clipping by all of `all_planes` (the polytope in the drawable's frame),
    /// testing the primitive kinds of `mask`, its hits going to `out` and their clipped
    /// points to `points`.
    pub(super) fn new(
        all_planes: &'a [DVec4],
        mask: PrimitiveMask,
        out: &'a mut Vec<RawHit>,
        points: &'a mut Vec<DVec3>,
    ) -> Self {
        PolytopeFunctor {
            all_planes,
            active_mask: u64::MAX,
            planes: SmallVec::from_slice(all_planes),
            mask,
            clipper: None,
            out,
            points,
        }
    }

    /// A functor without planes yet (see [`use_planes`](Self::use_planes)), for a walk
    /// that meets the primitives of many drawables, each in its own frame.
    pub(super) fn without_planes(
        mask: PrimitiveMask,
        out: &'a mut Vec<RawHit>,
        points: &'a mut Vec<DVec3>,
    ) -> Self {
        Self::new(&[], mask, out, points)
    }

    /// Clips by the planes of `planes` whose bits are set in `mask` (bit `k` for
    /// `planes[k]`; `None`: all of them) from now on: a walk leaves out the planes a
    /// leaf's box is inside.
    pub(super) fn use_planes(&mut self, planes: &[DVec4], mask: Option<u64>) {
        self.planes.clear();
        let Some(mask) = mask else {
            self.planes.extend_from_slice(planes);
            return;
        };
        let mut remaining = mask;
        while remaining != 0 {
            let k = remaining.trailing_zeros() as usize;
            remaining &= remaining - 1;
            if let Some(&p) = planes.get(k) {
                self.planes.push(p);
            }
        }
    }

    /// Keeps triangle `primitive_index` (vertices `v`, `indices`) as the hit
    /// [`triangle`](PrimitiveFunctor::triangle) makes of a triangle inside every plane,
    /// without testing it: for a walk that found it inside them all, with margins for
    /// the rounding of the test it skips.
    pub(super) fn triangle_inside(
        &mut self,
        v: &[Vec3; 3],
        indices: [u32; 3],
        primitive_index: u32,
    ) {
        if self.mask.contains(PrimitiveMask::TRIANGLES) {
            let [a, b, c] = v.map(|v| v.as_dvec3());
            self.push(
                primitive_index,
                indices,
                PrimitiveKind::Triangle,
                &[a, b, c],
            );
        }
    }

    /// How many raw hits it has made.
    pub(super) fn hit_count(&self) -> usize {
        self.out.len()
    }

    /// Clips by the planes of `mask` only from now on.
    fn set_active_planes(&mut self, mask: u64) {
        if mask != self.active_mask {
            self.active_mask = mask;
            self.planes.clear();
            self.planes.extend(
                (0..self.all_planes.len())
                    .filter(|&k| mask & (1 << k) != 0)
                    .map(|k| self.all_planes[k]),
            );
        }
    }

    fn push(
        &mut self,
        primitive_index: u32,
        indices: [u32; 3],
        kind: PrimitiveKind,
        points: &[DVec3],
    ) {
        let start = self.points.len();
        self.points.extend_from_slice(points);
        self.record(primitive_index, indices, kind, start);
    }

    /// Records a hit whose points are the point list's from `start` on.
    fn record(
        &mut self,
        primitive_index: u32,
        indices: [u32; 3],
        kind: PrimitiveKind,
        start: usize,
    ) {
        self.out.push(RawHit {
            primitive_index,
            indices,
            kind,
            start: start as u32,
            len: (self.points.len() - start) as u32,
        });
    }
}

impl PrimitiveFunctor for PolytopeFunctor<'_> {
    fn point(&mut self, v: Vec3, index: u32, primitive_index: u32) {
        if self.mask.contains(PrimitiveMask::POINTS) && contains_point(v.as_dvec3(), &self.planes) {
            self.push(
                primitive_index,
                [index; 3],
                PrimitiveKind::Point,
                &[v.as_dvec3()],
            );
        }
    }

    fn line(&mut self, v: [Vec3; 2], indices: [u32; 2], primitive_index: u32) {
        if !self.mask.contains(PrimitiveMask::LINES) {
            return;
        }
        let (p, q) = (v[0].as_dvec3(), v[1].as_dvec3());
        if let Some((t0, t1)) = clip_segment(p, q, &self.planes) {
            let a = if t0 == 0.0 { p } else { p + (q - p) * t0 };
            let b = if t1 == 1.0 { q } else { p + (q - p) * t1 };
            let indices = [indices[0], indices[1], indices[1]];
            if a == b {
                self.push(primitive_index, indices, PrimitiveKind::Line, &[a]);
            } else {
                self.push(primitive_index, indices, PrimitiveKind::Line, &[a, b]);
            }
        }
    }

    fn triangle(&mut self, v: [Vec3; 3], indices: [u32; 3], primitive_index: u32) {
        self.clip_triangle(&v, indices, primitive_index);
    }
}

impl PolytopeFunctor<'_> {
    /// [`triangle`](PrimitiveFunctor::triangle) with the corners borrowed: the world
    /// walk hands them over where it read them. (Passed by value, they were copied on
    /// to the argument in 16-byte pieces from the 8- and 4-byte stores that wrote
    /// them, which on an Intel Xeon waits for those stores to retire: 1.5 % of a box
    /// query's `perf` samples on littlest_tokyo.)
    pub(super) fn clip_triangle(&mut self, v: &[Vec3; 3], indices: [u32; 3], primitive_index: u32) {
        if !self.mask.contains(PrimitiveMask::TRIANGLES) {
            return;
        }
        #[cfg(test)]
        TRIANGLES_TESTED.with(|n| {
            let (triangles, planes) = n.get();
            n.set((triangles + 1, planes + self.planes.len()));
        });
        let [a, b, c] = v.map(|v| v.as_dvec3());
        // Most candidates lie wholly outside one plane or wholly inside all of them:
        // decide those from the vertices' plane values alone. A triangle wholly inside a
        // plane is left unchanged by clipping with it, so clipping is needed only when
        // some plane separates its vertices.
        let mut crossed = false;
        for &p in &self.planes {
            let (da, db, dc) = (plane_value(p, a), plane_value(p, b), plane_value(p, c));
            // (`&` and `|`: short-circuited, each comparison branched on the data.)
            if (da < 0.0) & (db < 0.0) & (dc < 0.0) {
                return;
            }
            crossed |= (da < 0.0) | (db < 0.0) | (dc < 0.0);
        }
        if !crossed {
            self.push(
                primitive_index,
                indices,
                PrimitiveKind::Triangle,
                &[a, b, c],
            );
            return;
        }
        let start = self.points.len();
        let clipper = self.clipper.get_or_insert_with(TriangleClipper::default);
        if clipper.clip([a, b, c], &self.planes, self.points) > 0 {
            self.record(primitive_index, indices, PrimitiveKind::Triangle, start);
        }
    }
}

/// Puts one visit's raw hits in primitive order, whatever order they were found in, and
/// groups the two triangles of a quad (same primitive index): calls `hit` once per
/// primitive with its clipped vertices (a quad's merged, shared vertices once). With
/// `distinct` (every raw hit a primitive of its own) it calls `hit` for each as it is:
/// the final sort's key alone orders them.
fn for_each_primitive(
    raw: &mut [RawHit],
    points: &[DVec3],
    distinct: bool,
    mut hit: impl FnMut(&RawHit, &[DVec3]),
) {
    let slice = |r: &RawHit| &points[r.start as usize..(r.start + r.len) as usize];
    if distinct {
        for r in raw.iter() {
            hit(r, slice(r));
        }
        return;
    }
    raw.sort_unstable_by(|a, b| {
        a.primitive_index
            .cmp(&b.primitive_index)
            .then_with(|| a.indices.cmp(&b.indices))
    });
    let mut merged: SmallVec<[DVec3; 12]> = SmallVec::new();
    let mut k = 0;
    while k < raw.len() {
        let first = raw[k];
        let mut end = k + 1;
        while end < raw.len()
            && first.kind == PrimitiveKind::Triangle
            && raw[end].kind == PrimitiveKind::Triangle
            && raw[end].primitive_index == first.primitive_index
        {
            end += 1;
        }
        if end == k + 1 {
            hit(&first, slice(&first));
        } else {
            merged.clear();
            for r in &raw[k..end] {
                for p in slice(r) {
                    if !merged.contains(p) {
                        merged.push(*p);
                    }
                }
            }
            hit(&first, &merged);
        }
        k = end;
    }
}

/// The planes scaled to unit normals (for distance tests against bounds).
fn normalized_planes(planes: &[DVec4]) -> SmallVec<[DVec4; 8]> {
    let mut normalized = SmallVec::new();
    normalize_planes_into(planes, &mut normalized);
    normalized
}

/// [`normalized_planes`] into `out` (its old contents dropped), where they are kept:
/// returning them copies the whole inline list.
fn normalize_planes_into(planes: &[DVec4], out: &mut SmallVec<[DVec4; 8]>) {
    map_planes_into(planes, out, |p| {
        let n = length_at_any_scale(p.truncate());
        if n > 0.0 {
            *p / n
        } else {
            *p
        }
    });
}

/// Replaces the contents of `out` by `f` of each of `planes`. Boxes and frustums are
/// written into an inline array first: pushing, or sizing the list first, checks its
/// room and layout at every step (collecting a box's planes moved to a drawable's frame
/// cost three times as much).
#[inline(always)]
fn map_planes_into(planes: &[DVec4], out: &mut SmallVec<[DVec4; 8]>, f: impl Fn(&DVec4) -> DVec4) {
    let mut room = [DVec4::ZERO; 8];
    if planes.len() <= room.len() {
        for (slot, p) in room.iter_mut().zip(planes) {
            *slot = f(p);
        }
        *out = SmallVec::from_buf_and_len(room, planes.len());
    } else {
        out.clear();
        out.extend(planes.iter().map(f));
    }
}

/// True unless the box `[min, max]` lies wholly outside one of the (unit-normal) planes,
/// with `pad` of slack.
///
/// The box may be infinite (an instance under a transform that throws it past `f32`
/// range, and every index box holding it): where the normal has a zero component, that
/// coordinate does not count, as `0 · ∞` would make the plane's value NaN and reject the
/// box, and with it every instance under it. (The other components take the corner
/// furthest along the normal, whose coordinates are never infinite the other way: a
/// box's outward-rounded `max` is never `-∞`, nor its `min` `+∞`.)
#[inline]
fn box_outside_no_plane(planes: &[DVec4], min: DVec3, max: DVec3, pad: f64) -> bool {
    planes.iter().all(|p| {
        let n = p.truncate();
        // The box corner furthest along the inward normal.
        let corner = DVec3::select(n.cmpge(DVec3::ZERO), max, min);
        let corner = DVec3::select(n.cmpeq(DVec3::ZERO), DVec3::ZERO, corner);
        n.dot(corner) + p.w >= -pad
    })
}

#[inline]
fn box_meets_planes(planes: &[DVec4], b: &Aabb, pad: f64) -> bool {
    let (min, max) = b.as_dvec3();
    box_outside_no_plane(planes, min, max, pad)
}

impl Intersector for PolytopeIntersector {
    type Local = LocalPolytope;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        self.drop_hits();
        // Made afresh by `begin_world_boxes` for each scene index.
        self.world_culler = None;
        // World -> frame, for frames other than MODEL (whose two identity matrices,
        // asked of `frames` for every query, were written out: 8 % of a box query on
        // truck_town, where every box meets nothing).
        let world_to_frame = if self.frame == CoordinateFrame::Model {
            // World coordinates: the planes as given, normalized once per polytope (a
            // polytope has a plane, so an empty list means not yet). A box's are already
            // unit: normalizing them again would only round them anew (1 % of a box
            // query on littlest_tokyo, 3.5 % on truck_town), and they are used as they
            // are (`world_unit_planes`).
            self.world_planes = None;
            if !self.polytope.has_unit_normals() && self.world_normalized.is_empty() {
                normalize_planes_into(self.polytope.planes(), &mut self.world_normalized);
            }
            None
        } else {
            // Planes map by the inverse transpose of the point map frame -> world, whose
            // inverse is world -> frame.
            let m = frames.matrices(self.frame)?;
            let world = self.polytope.transformed_by_inverse(&m.world_to_frame);
            normalize_planes_into(world.planes(), &mut self.world_normalized);
            self.world_planes = Some(world);
            Some(m.world_to_frame)
        };
        let reference = match self.reference_plane {
            Some(p) => world_to_frame.unwrap_or(DMat4::IDENTITY).transpose() * p,
            None => *self
                .world_polytope()
                .planes()
                .last()
                .ok_or(QueryError::NoPlanes)?,
        };
        let n = length_at_any_scale(reference.truncate());
        if n == 0.0 || !n.is_finite() {
            return Err(QueryError::SingularFrame(self.frame.name()));
        }
        self.world_reference = reference / n;
        // Model coordinates are world coordinates: the polytope's own bounds hold.
        self.world_bounds = match (self.frame, self.polytope.bounds()) {
            (CoordinateFrame::Model, Some((min, max))) if min.is_finite() && max.is_finite() => {
                Some(Aabb::from_f64_outward(min, max))
            }
            _ => None,
        };
        Ok(())
    }

    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        let (pad, scale) = box_padding(scene_bounds, 0.0);
        // Every box of the index lies in `scene_bounds`: when the query's own bounds miss
        // it, they reject every box and the planes are never needed.
        let missed = self
            .world_bounds
            .is_some_and(|b| !b.intersects(scene_bounds));
        self.world_culler = if missed {
            None
        } else {
            PlaneCuller::new(self.world_unit_planes(), pad, scale)
        };
    }

    #[inline]
    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        if let Some(b) = &self.world_bounds {
            if !b.intersects(bound) {
                return None;
            }
        }
        match &self.world_culler {
            Some(culler) => culler.overlaps(bound).then_some(0.0),
            None => self.enter_world_box_exactly(bound),
        }
    }

    #[inline]
    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        let mut mask = 0b1111;
        if let Some(b) = &self.world_bounds {
            mask = boxes.intersecting(b);
            if mask == 0 {
                return WideEntries::NONE;
            }
        }
        mask &= match &self.world_culler {
            Some(culler) => culler.overlapping(boxes),
            None => {
                WideEntries::from_lanes(std::array::from_fn(|lane| {
                    self.enter_world_box_exactly(&boxes.get(lane))
                }))
                .mask
            }
        };
        WideEntries {
            mask,
            keys: glam::Vec4::ZERO,
        }
    }

    fn localize(&self, local_to_world: &DMat4, _world_to_local: &DMat4) -> LocalPolytope {
        let planes = self.local_planes(local_to_world);
        // The culler normalizes the planes itself.
        let culler = PlaneCuller::for_planes(&planes);
        LocalPolytope { planes, culler }
    }

    fn enter_node(&self, local: &LocalPolytope, bound: &BoundingSphere) -> bool {
        if bound.is_empty() {
            return false;
        }
        if bound.radius == f64::INFINITY {
            return true;
        }
        let reach = bound.radius + cull_padding(bound.radius, bound.center.abs().max_element());
        // Culled only by a plane that surely leaves the sphere outside. In the frame of a
        // transform whose matrix carries the planes past `f64`'s range a plane is not a
        // number; the frames below, where the planes are moved from the world again,
        // may still be in range (and the walks of the scene index, which move them
        // straight to a drawable's frame, find what is hit there).
        normalized_planes(&local.planes).iter().all(|p| {
            let value = p.truncate().dot(bound.center) + p.w;
            value >= -reach || value.is_nan()
        })
    }

    fn enter_drawable(&self, local: &LocalPolytope, bound: &BoundingBox) -> bool {
        if bound.is_empty() {
            return false;
        }
        let pad = box_cull_padding(bound);
        box_outside_no_plane(&normalized_planes(&local.planes), bound.min, bound.max, pad)
    }

    fn intersect(
        &mut self,
        local: &LocalPolytope,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        let mut raw = std::mem::take(&mut self.scratch_hits);
        let mut points = std::mem::take(&mut self.scratch_points);
        raw.clear();
        points.clear();
        let mut functor = PolytopeFunctor {
            all_planes: &local.planes,
            // No plane yet: every path below sets its planes before the first primitive.
            active_mask: 0,
            planes: SmallVec::new(),
            mask: self.primitive_mask,
            clipper: None,
            out: &mut raw,
            points: &mut points,
        };
        match context.accelerated(drawable) {
            Some((bvh, geometry)) => {
                let (pad, scale) = bvh_padding(bvh);
                let culler = local
                    .culler
                    .as_ref()
                    .and_then(|c| Some((c, c.margins_for(pad, scale)?)));
                match culler {
                    // Planes a node is inside are dropped below it; a node inside every
                    // plane is taken whole.
                    Some((culler, margins)) => bvh.for_each_candidate_with(
                        geometry,
                        culler.all_planes(),
                        |b| culler.overlapping_with(b, margins),
                        |b, active| culler.classify_with(b, active, margins),
                        |active| active == 0,
                        &mut functor,
                        |functor, active| functor.set_active_planes(active),
                    ),
                    None => {
                        functor.set_active_planes(u64::MAX);
                        let normalized = normalized_planes(&local.planes);
                        let enter = |b: &Aabb| box_meets_planes(&normalized, b, pad);
                        bvh.for_each_candidate(geometry, enter, &mut functor);
                    }
                }
            }
            None => {
                functor.set_active_planes(u64::MAX);
                drawable.accept(&mut functor);
            }
        }
        self.keep_hits(&mut raw, &points, context, false);
        self.scratch_hits = raw;
        self.scratch_points = points;
    }

    fn reached_limit(&self) -> bool {
        self.limit == IntersectionLimit::One
            && !(self.hits.is_empty() && self.summarized.is_empty())
    }

    /// Yes: the polytope walks the world tree itself (see `polytope_world_walk.rs`).
    fn intersect_index(&mut self, context: &mut IndexContext<'_>) -> bool {
        self.walk_world(context)
    }

    /// Yes: the padded plane test only culls.
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
