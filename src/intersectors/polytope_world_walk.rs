//! The [`PolytopeIntersector`]'s own walk of a scene index's world tree
//! ([`Intersector::intersect_index`]).
//!
//! Depth first: four node boxes at a time are tested against the polytope's own bounds
//! when it has some, and against its world planes in `f32` ([`PlaneCuller::overlapping`])
//! unless those bounds hug it (`Polytope::has_tight_bounds`); a leaf's triangles, four
//! at a time, against the planes ([`PlaneCuller::triangles_outside`]: all three
//! quantized corners beyond one plane, by more than the quantization error) and, for a
//! box, against the box along the triangle's own normal and the crossings of its edges
//! with the box's axes (`BoxTriangleFilter`: the triangles beside a box's corner or
//! edge, outside none of its planes, which clipping would reduce to nothing; on
//! littlest_tokyo's vehicle boxes, 5 220 of the 10 295 triangles the clipping saw
//! without it). A triangle left is clipped exactly as the plain traversal clips it: by
//! the polytope moved to its instance's frame (once per instance met), on the
//! drawable's own vertices.
//!
//! Each leaf's box is classified against the planes ([`PlaneCuller::classify_with`],
//! with the outward pad on the inside too, since the clipping runs in the instances'
//! frames): the planes it is inside are left out of its triangles' tests and clipping,
//! as the drawables' own trees leave them out (every point clipping makes there is
//! inside them by the margins, so the plain traversal's clipping by them changes
//! nothing), and a box inside every plane (three-mesh-bvh's `CONTAINED`) is taken
//! whole: its triangles are hits as they are, with no test of theirs. Nodes inside
//! every plane ([`PlaneCuller::inside_every_plane`]) are taken whole with their
//! subtrees, with no test of the boxes below them; only a box within the polytope's
//! bounds can be, so a polytope too narrow to hold a typical leaf (a vehicle's box on
//! littlest_tokyo) does not look. On littlest_tokyo's query file of large boxes (~100
//! triangles each, half of them inside), 32 % fewer instructions. The raw
//! hits are then made hits one instance at a time, each instance a drawable visit, so
//! every limit keeps what the plain traversal keeps.

use std::borrow::Cow;
use std::cell::OnceCell;

use glam::{DVec3, DVec4, Vec3};
use smallvec::SmallVec;

use super::hit_order::world_tree_padding;
use super::polytope_intersector::{PolytopeFunctor, RawHit};
use super::slot_runs::for_each_slot_run;
use super::{PolytopeIntersector, PrimitiveMask};
use crate::accel::{
    Aabb, BoxTriangleFilter, PlaneCuller, TriangleLanes, TriangleList, WorldBvh, WorldChild,
    WorldFrame, WorldNode, FILTER_LANES,
};
use crate::visitor::{IndexContext, IntersectionLimit, Intersector};

/// An instance the walk met.
struct Met<'a> {
    instance: u32,
    /// The polytope's planes in the instance's frame.
    planes: SmallVec<[DVec4; 8]>,
    vertices: &'a [Vec3],
    list: TriangleList<'a>,
}

impl Met<'_> {
    /// The drawable's primitive `primitive` (a triangle): its vertices and their
    /// indices, when it is there; for `with`, which gets them borrowed.
    ///
    /// (Returned, the corners were stored piece by piece, 8 and 4 bytes a corner, and
    /// copied on in 16-byte pieces, which on an Intel Xeon wait for the stores they
    /// span to retire: 1.5 % of a box query's `perf` samples on littlest_tokyo.)
    #[inline(always)]
    fn with_triangle<R>(
        &self,
        primitive: u32,
        with: impl FnOnce(&[Vec3; 3], [u32; 3]) -> R,
    ) -> Option<R> {
        let indices = self.list.triangle(primitive)?;
        let vertex = |i: u32| self.vertices.get(i as usize).copied();
        let corners = [
            vertex(indices[0])?,
            vertex(indices[1])?,
            vertex(indices[2])?,
        ];
        Some(with(&corners, indices))
    }

    /// Clips the drawable's primitive `primitive` (a triangle) with `functor`, which
    /// clips by this instance's planes.
    #[inline]
    fn clip(&self, functor: &mut PolytopeFunctor<'_>, primitive: u32) {
        self.with_triangle(primitive, |corners, indices| {
            functor.clip_triangle(corners, indices, primitive)
        });
    }

    /// Keeps the drawable's primitive `primitive` (a triangle inside every plane) as a
    /// hit of `functor` without clipping it; false when it is not there to keep.
    #[inline]
    fn keep_inside(&self, functor: &mut PolytopeFunctor<'_>, primitive: u32) -> bool {
        self.with_triangle(primitive, |corners, indices| {
            let before = functor.hit_count();
            functor.triangle_inside(corners, indices, primitive);
            functor.hit_count() > before
        })
        .unwrap_or(false)
    }
}

/// The polytope's world planes prepared for a world tree, when it can be walked.
enum WorldCuller {
    /// Nothing to walk: the tree is empty, or the polytope's bounds miss it.
    Nothing,
    /// The planes do not fit the `f32` tests.
    Unusable,
    /// The planes, for the tree's boxes, and the pad and scale they were prepared
    /// with.
    Planes {
        culler: PlaneCuller,
        pad: f64,
        scale: f64,
    },
    /// The tree's boxes are tested against the polytope's bounds alone (they hug it):
    /// the planes are only for the leaves' triangles, and made when the walk first
    /// reaches a leaf (many small polytopes' walks reach none). Should they not fit the
    /// `f32` tests, every triangle there is clipped.
    ForLeaves { pad: f64, scale: f64 },
}

impl PolytopeIntersector {
    /// Whether [`walk_world`](Self::walk_world) walks `world` (false when the tree's
    /// boxes must be tested against the planes and those do not fit the `f32` tests;
    /// the visitor then visits every instance whole).
    pub(super) fn walks_world(&self, world: &WorldBvh) -> bool {
        let bounds = self.bounds_in(world.frame());
        !matches!(self.world_culler_for(world, bounds), WorldCuller::Unusable)
    }

    /// The world planes prepared for `world`'s boxes, given the polytope's bounds in its
    /// frame ([`bounds_in`](Self::bounds_in)).
    fn world_culler_for(&self, world: &WorldBvh, query_bounds: Option<Aabb>) -> WorldCuller {
        if world.is_empty() {
            return WorldCuller::Nothing;
        }
        let bounds = world.bounds();
        if query_bounds.is_some_and(|b| !b.intersects(&bounds)) {
            return WorldCuller::Nothing;
        }
        // The tree's boxes are measured in its frame; the exact clipping's rounding
        // grows with the absolute coordinates.
        let frame = world.frame();
        let (pad, scale) = world_tree_padding(world);
        let pad = pad + frame.pad();
        if self.world_bounds.is_some() && self.polytope().has_tight_bounds() {
            return WorldCuller::ForLeaves { pad, scale };
        }
        match PlaneCuller::new(&self.planes_in(frame), pad, scale) {
            Some(culler) => WorldCuller::Planes { culler, pad, scale },
            None => WorldCuller::Unusable,
        }
    }

    /// The polytope's world bounds in the tree's `frame` (padded by the frame's
    /// allowance for the rounding of absolute coordinates).
    #[inline]
    fn bounds_in(&self, frame: &WorldFrame) -> Option<Aabb> {
        if frame.is_world() {
            return self.world_bounds;
        }
        // `world_bounds` is only ever made from these bounds, in world coordinates.
        self.world_bounds?;
        let (min, max) = self.polytope().bounds()?;
        let (min, max) = frame.bounds(min, max);
        let pad = DVec3::splat(frame.pad());
        Some(Aabb::from_f64_outward(min - pad, max + pad))
    }

    /// The filter of triangles beside the polytope, when it is a box given in world
    /// coordinates, in the tree's `frame`, with the walk's `pad` and `scale`.
    fn box_filter_in(&self, frame: &WorldFrame, pad: f64, scale: f64) -> Option<BoxTriangleFilter> {
        // World bounds are known only for a polytope in world coordinates.
        self.world_bounds?;
        let shape = self.polytope().oriented_box()?;
        let half_edges = shape.half_edges().map(|e| frame.vector(e));
        BoxTriangleFilter::new(frame.point(shape.center), half_edges, pad, scale)
    }

    /// The normalized world planes in the tree's `frame`.
    fn planes_in(&self, frame: &WorldFrame) -> Cow<'_, [DVec4]> {
        if frame.is_world() {
            return Cow::Borrowed(self.world_unit_planes());
        }
        let moved = self.world_unit_planes().iter().map(|&p| frame.plane(p));
        Cow::Owned(moved.collect())
    }

    /// Walks the world tree of `context`'s index (see the module docs); false when it
    /// does not (see [`walks_world`](Self::walks_world); then the visitor visits the
    /// instances whole).
    pub(super) fn walk_world(&mut self, context: &mut IndexContext<'_>) -> bool {
        // Slots are this walk's own (another walk may have run in this query).
        context.forget_slots();
        let world = context.index().world();
        // The planes for the leaves' triangles, and for the tree's boxes when those are
        // tested against them: then made now, else when the walk first reaches a leaf.
        let query_bounds = self.bounds_in(world.frame());
        let (culler, later, (pad, scale)) = match self.world_culler_for(world, query_bounds) {
            WorldCuller::Nothing => return true,
            WorldCuller::Unusable => return false,
            WorldCuller::Planes { culler, pad, scale } => {
                (OnceCell::from(Some(culler)), None, (pad, scale))
            }
            WorldCuller::ForLeaves { pad, scale } => {
                (OnceCell::new(), Some((pad, scale)), (pad, scale))
            }
        };
        let boxes_meet_planes = later.is_none();
        let mut raw = std::mem::take(&mut self.scratch_hits);
        let mut points = std::mem::take(&mut self.scratch_points);
        let this = &*self;
        let culler = || {
            let make = || {
                let (pad, scale) = later?;
                PlaneCuller::new(&this.planes_in(world.frame()), pad, scale)
            };
            culler.get_or_init(make).as_ref()
        };
        // A box's triangles beside it along their own normals, also made when the walk
        // first reaches a leaf.
        let box_filter = OnceCell::new();
        let box_filter = || {
            let make = || this.box_filter_in(world.frame(), pad, scale);
            box_filter.get_or_init(make).as_ref()
        };
        let triangles_wanted = self.primitive_mask.contains(PrimitiveMask::TRIANGLES);
        raw.clear();
        points.clear();
        // Per raw hit, the slot of its instance.
        let mut raw_slots: SmallVec<[u32; 16]> = SmallVec::new();
        let mut met: SmallVec<[Option<Met<'_>>; 8]> = SmallVec::new();
        let stop_at_first = self.limit == IntersectionLimit::One;
        let mut functor =
            PolytopeFunctor::without_planes(self.primitive_mask, &mut raw, &mut points);
        // Whole items met, visited once the walk is over (each visit takes the whole
        // intersector, which the walk's own tests only read meanwhile).
        let mut wholes: SmallVec<[u32; 8]> = SmallVec::new();
        // The slot whose planes the functor clips by, and which of them.
        let mut planes_of = (usize::MAX, Some(0));
        // The polytope's box first: cheaper than its planes, and most boxes a small
        // polytope's walk tests lie beside it. When that box hugs the polytope, the
        // planes would keep almost every box it keeps (their test cost 9 % of a box
        // query on littlest_tokyo): the leaves' triangles still meet them.
        let enter = |node: &WorldNode| {
            let lanes = match &query_bounds {
                Some(b) => node.boxes.intersecting(b),
                None => 0b1111,
            };
            if lanes == 0 || !boxes_meet_planes {
                return lanes;
            }
            culler().map_or(lanes, |c| lanes & c.overlapping(&node.boxes))
        };
        let leaf = |node: &WorldNode, lane: usize, whole: bool| {
            let (first, count) = match node.child(lane) {
                WorldChild::Triangles { first, count } if triangles_wanted => {
                    (first as usize, count as usize)
                }
                WorldChild::Whole(k) => {
                    wholes.push(k);
                    return true;
                }
                _ => return true,
            };
            // The planes the leaf's box may cross (`None`: every plane, when they do
            // not fit the `f32` tests). It is inside the others by the margins for the
            // instances' frames, and so is all that clipping its triangles makes: they
            // are left out of its tests and its clipping, as the drawables' own trees
            // leave them out. Inside every plane, the leaf is taken whole.
            let active = match culler() {
                _ if whole => Some(0),
                Some(c) => {
                    let margins = c.margins_padded_both_ways();
                    match c.classify_with(&node.boxes.get(lane), c.all_planes(), margins) {
                        Some(active) => Some(active),
                        // Outside one plane: a box polytope's walk tests the tree's
                        // boxes against its bounds alone.
                        None => return true,
                    }
                }
                None => None,
            };
            if active == Some(0) {
                for record in &world.triangles()[first..first + count] {
                    let Some((instance, primitive)) = context.index().locate(record.id) else {
                        continue;
                    };
                    let slot = this.slot_of(context, &mut met, instance);
                    let Some(m) = &met[slot] else { continue };
                    if m.keep_inside(&mut functor, primitive) {
                        raw_slots.push(slot as u32);
                        if stop_at_first {
                            return false;
                        }
                    }
                }
                return true;
            }
            let (lo, hi) = node.boxes.splat_lane(lane);
            let (mut group, end) = (first, first + count);
            while group < end {
                let records = &world.triangles()[group..group + FILTER_LANES];
                let lanes = (end - group).min(FILTER_LANES);
                group += FILTER_LANES;
                let decoded = TriangleLanes::decode(records, lo, hi, Vec3::ZERO);
                let all = (1 << lanes) - 1;
                let outside = |c: &PlaneCuller| {
                    c.triangles_outside(&decoded, lanes, active.unwrap_or(u64::MAX))
                };
                let mut left = !culler().map_or(0, outside) & all;
                if left != 0 {
                    left &= !box_filter().map_or(0, |f| f.triangles_beside(&decoded, lanes));
                }
                while left != 0 {
                    let k = left.trailing_zeros() as usize;
                    left &= left - 1;
                    let Some((instance, primitive)) = context.index().locate(records[k].id) else {
                        continue;
                    };
                    let slot = this.slot_of(context, &mut met, instance);
                    let Some(m) = &met[slot] else { continue };
                    if planes_of != (slot, active) {
                        functor.use_planes(&m.planes, active);
                        planes_of = (slot, active);
                    }
                    let before = functor.hit_count();
                    m.clip(&mut functor, primitive);
                    if functor.hit_count() > before {
                        raw_slots.push(slot as u32);
                        if stop_at_first {
                            return false;
                        }
                    }
                }
            }
            true
        };
        // Boxes inside every plane are taken whole (only boxes within the polytope's
        // bounds can be). Their triangles are clipped in their instances' frames: the
        // margins allow for that rounding on the inside too.
        let look_for_inside = self.may_hold_leaves(world);
        let enter_or_take = |node: &WorldNode| {
            let lanes = enter(node);
            if !look_for_inside {
                return (lanes, 0);
            }
            let maybe_inside = match &query_bounds {
                Some(b) => lanes & node.boxes.within(b),
                None => lanes,
            };
            if maybe_inside == 0 {
                return (lanes, 0);
            }
            let inside = culler().map_or(0, |c| {
                c.inside_every_plane(&node.boxes, c.margins_padded_both_ways())
            });
            (lanes, maybe_inside & inside)
        };
        world.walk_depth_first_taking_whole(enter_or_take, leaf);
        drop(functor);
        // Each instance's raw hits, as one visit of it, instance by instance. (Most
        // walks of a vehicle's box find none: then not even the grouping is set up.)
        let mut group: SmallVec<[RawHit; 8]> = SmallVec::new();
        for_each_slot_run(&raw_slots, met.len(), |slot, run| {
            let Some(m) = &met[slot as usize] else {
                return;
            };
            group.clear();
            group.extend(run.iter().map(|&k| raw[k as usize]));
            if !self.reached_limit() {
                self.keep_hits(
                    &mut group,
                    &points,
                    &context.drawable_context(m.instance),
                    true,
                );
            }
        });
        self.scratch_hits = raw;
        self.scratch_points = points;
        for k in wholes {
            if self.reached_limit() {
                break;
            }
            context.visit_whole(self, k);
        }
        true
    }

    /// Whether the walk looks for boxes inside every plane, to take them whole: unless
    /// `world` holds no triangle, or the polytope is a box in world coordinates too
    /// narrow to hold a typical leaf of it, as a vehicle's is on littlest_tokyo (0.005
    /// triangles inside a query on average), where the search would cost the nodes it
    /// meets 3.6 % more instructions for nothing.
    fn may_hold_leaves(&self, world: &WorldBvh) -> bool {
        match (self.world_bounds, self.polytope().oriented_box()) {
            _ if world.triangle_count() == 0 => false,
            (Some(_), Some(b)) => 2.0 * b.half.min_element() >= f64::from(world.leaf_extent()),
            _ => true,
        }
    }

    /// The slot of instance `k` among those the walk has met (`met`), meeting it now
    /// when it is new.
    #[inline]
    fn slot_of<'a>(
        &self,
        context: &mut IndexContext<'a>,
        met: &mut SmallVec<[Option<Met<'a>>; 8]>,
        k: u32,
    ) -> usize {
        match context.slot(k) {
            Some(slot) => slot as usize,
            None => {
                let slot = met.len();
                met.push(self.meet(context, k));
                context.set_slot(k, slot as u32);
                slot
            }
        }
    }

    /// What the walk keeps of instance `k`, or `None` when the traversal does not reach
    /// it.
    #[cold]
    fn meet<'a>(&self, context: &IndexContext<'a>, k: u32) -> Option<Met<'a>> {
        if !context.reaches(k) {
            return None;
        }
        let instance = context.instance(k);
        let geometry = context.scene().drawable(instance.drawable)?.as_geometry()?;
        Some(Met {
            instance: k,
            planes: self.local_planes(&instance.local_to_world),
            vertices: geometry.vertices(),
            list: TriangleList::of(geometry)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use glam::{DMat4, DQuat, DVec3, Vec3};

    use super::super::polytope_intersector::TRIANGLES_TESTED;
    use crate::accel::Placement;
    use crate::prelude::*;

    /// A hit: the primitive's index and its world polygon.
    type Hit = (u32, Vec<DVec3>);

    /// A 20 x 20 grid of triangles (two per cell) over `[0, 20]^2` in the plane z = 0.
    fn grid() -> Geometry {
        let mut vertices = Vec::new();
        for j in 0..=20 {
            for i in 0..=20 {
                vertices.push(Vec3::new(i as f32, j as f32, 0.0));
            }
        }
        let mut indices = Vec::new();
        for j in 0..20 {
            for i in 0..20 {
                let a = j * 21 + i;
                indices.extend([a, a + 1, a + 22, a, a + 22, a + 21]);
            }
        }
        Geometry::new(vertices)
            .with_primitive_set(PrimitiveSet::draw_elements_u32(
                PrimitiveMode::Triangles,
                indices,
            ))
            .unwrap()
    }

    /// The grid's transform: scaled, turned and moved, so that its triangles are
    /// clipped in a frame other than the world tree's.
    fn grid_to_world() -> DMat4 {
        DMat4::from_scale_rotation_translation(
            DVec3::splat(2.0),
            DQuat::from_rotation_x(0.3) * DQuat::from_rotation_z(0.7),
            DVec3::new(5.0, -3.0, 1.0),
        )
    }

    /// The hits (primitive index and world polygon) of the box over the grid's
    /// `[x0, x1] x [-3, 23]` (5 units above and below it: the world boxes of the turned
    /// grid's leaves stick out of its cells and its plane), how many triangles were
    /// tested against its planes, and against how many planes in all.
    fn box_hits(x: (f64, f64), accelerated: bool) -> (Vec<Hit>, (usize, usize)) {
        let mut scene = SceneGraph::new();
        let root = scene.add_group("root");
        let t = scene.add_transform("grid", grid_to_world()).unwrap();
        let g = scene.add_geode("grid-geode");
        let d = scene.add_drawable("grid", grid());
        scene.add_drawable_to_geode(g, d).unwrap();
        scene.add_child(t, g).unwrap();
        scene.add_child(root, t).unwrap();
        scene.build_acceleration();
        let index = scene.scene_index(root).unwrap();
        assert!(matches!(
            index.instances()[0].placement,
            Placement::Triangles { .. }
        ));
        // The box in the grid's frame, moved to the world with it (scale 2).
        let m = grid_to_world();
        let center = m.transform_point3(DVec3::new((x.0 + x.1) / 2.0, 10.0, 0.0));
        let half = DVec3::new((x.1 - x.0) / 2.0, 13.0, 5.0) * 2.0;
        let (_, rotation, _) = m.to_scale_rotation_translation();
        let box_planes = Polytope::from_oriented_box(center, half, rotation).unwrap();
        let mut polytope = PolytopeIntersector::new(box_planes);
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        TRIANGLES_TESTED.with(|n| n.set((0, 0)));
        visitor.apply(&scene, root, &mut polytope).unwrap();
        let tested = TRIANGLES_TESTED.with(|n| n.get());
        let mut hits: Vec<Hit> = (polytope.intersections().iter())
            .map(|h| (h.primitive_index, h.polygon.to_vec()))
            .collect();
        hits.sort_by_key(|h| h.0);
        (hits, tested)
    }

    #[test]
    fn boxes_inside_every_plane_are_taken_whole_and_planes_left_out_with_the_same_hits() {
        // The whole grid inside the box (by three units and more): every triangle a
        // hit, its polygon the triangle itself, and none tested against the planes.
        let (hits, (tested, _)) = box_hits((-3.0, 23.0), true);
        let (plain, plain_tested) = box_hits((-3.0, 23.0), false);
        assert_eq!(hits.len(), 800);
        assert_eq!(hits, plain);
        assert!(hits.iter().all(|(_, polygon)| polygon.len() == 3));
        assert_eq!((tested, plain_tested), (0, (800, 6 * 800)));
        // The box ends at x = 10.5, across a column of cells: the triangles there are
        // clipped, the others taken whole or left out.
        let (hits, (tested, planes)) = box_hits((-3.0, 10.5), true);
        let (plain, plain_tested) = box_hits((-3.0, 10.5), false);
        assert_eq!(hits.len(), 11 * 40);
        assert_eq!(hits, plain);
        // The 40 across the face, and the others of the leaves they share (not many:
        // the rest are taken whole), each against the one plane their leaves cross.
        assert!((40..=80).contains(&tested), "{tested} tested");
        assert_eq!(planes, tested);
        assert_eq!(plain_tested, (800, 6 * 800));
    }
}
