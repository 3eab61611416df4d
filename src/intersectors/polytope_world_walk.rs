//! The [`PolytopeIntersector`]'s own walk of a scene index's world tree
//! ([`Intersector::intersect_index`]).
//!
//! Depth first: four node boxes at a time are tested against the polytope's own bounds
//! when it has some, and against its world planes in `f32` ([`PlaneCuller::overlapping`])
//! unless those bounds hug it (`Polytope::has_tight_bounds`); a leaf's triangles, four
//! at a time, against the planes ([`PlaneCuller::triangles_outside`]: all three
//! quantized corners beyond one plane, by more than the quantization error) and, for a
//! box, against the box along the triangle's own normal (`BoxTriangleFilter`: the
//! triangles beside a box's corner or edge, outside none of its planes, which clipping
//! would reduce to nothing; on littlest_tokyo's vehicle boxes, 3 023 of the 10 295
//! triangles clipped, 10 % of the query's time). A triangle
//! left is clipped exactly as the plain traversal clips it: by the polytope moved to its
//! instance's frame (once per instance met), on the drawable's own vertices. The raw
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
    WorldFrame, FILTER_LANES,
};
use crate::drawable::PrimitiveFunctor;
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
    /// Clips the drawable's primitive `primitive` (a triangle) with `functor`, which
    /// clips by this instance's planes.
    #[inline]
    fn clip(&self, functor: &mut PolytopeFunctor<'_>, primitive: u32) {
        let Some(indices) = self.list.triangle(primitive) else {
            return;
        };
        let vertex = |i: u32| self.vertices.get(i as usize).copied();
        if let (Some(a), Some(b), Some(c)) =
            (vertex(indices[0]), vertex(indices[1]), vertex(indices[2]))
        {
            functor.triangle([a, b, c], indices, primitive);
        }
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
        if frame.origin() == DVec3::ZERO {
            return self.world_bounds;
        }
        // `world_bounds` is only ever made from these bounds, in world coordinates.
        self.world_bounds?;
        let (min, max) = self.polytope().bounds()?;
        let pad = DVec3::splat(frame.pad());
        Some(Aabb::from_f64_outward(
            frame.point(min) - pad,
            frame.point(max) + pad,
        ))
    }

    /// The filter of triangles beside the polytope, when it is a box given in world
    /// coordinates, in the tree's `frame`, with the walk's `pad` and `scale`.
    fn box_filter_in(&self, frame: &WorldFrame, pad: f64, scale: f64) -> Option<BoxTriangleFilter> {
        // World bounds are known only for a polytope in world coordinates.
        self.world_bounds?;
        let shape = self.polytope().oriented_box()?;
        BoxTriangleFilter::new(frame.point(shape.center), shape.half_edges(), pad, scale)
    }

    /// The normalized world planes in the tree's `frame`.
    fn planes_in(&self, frame: &WorldFrame) -> Cow<'_, [DVec4]> {
        if frame.origin() == DVec3::ZERO {
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
        // The slot whose planes the functor clips by.
        let mut planes_of = usize::MAX;
        world.walk_depth_first(
            |node| {
                // The polytope's box first: cheaper than its planes, and most boxes a
                // small polytope's walk tests lie beside it. When that box hugs the
                // polytope, the planes would keep almost every box it keeps (their
                // test cost 9 % of a box query on littlest_tokyo): the leaves'
                // triangles still meet them.
                let lanes = match &query_bounds {
                    Some(b) => node.boxes.intersecting(b),
                    None => 0b1111,
                };
                if lanes == 0 || !boxes_meet_planes {
                    return lanes;
                }
                culler().map_or(lanes, |c| lanes & c.overlapping(&node.boxes))
            },
            |node, lane| match node.child(lane) {
                WorldChild::Triangles { first, count } if triangles_wanted => {
                    let (lo, hi) = node.boxes.splat_lane(lane);
                    let (mut group, end) = (first as usize, (first + count) as usize);
                    while group < end {
                        let records = &world.triangles()[group..group + FILTER_LANES];
                        let lanes = (end - group).min(FILTER_LANES);
                        group += FILTER_LANES;
                        let decoded = TriangleLanes::decode(records, lo, hi, Vec3::ZERO);
                        let all = (1 << lanes) - 1;
                        let mut left =
                            !culler().map_or(0, |c| c.triangles_outside(&decoded, lanes)) & all;
                        if left != 0 {
                            left &=
                                !box_filter().map_or(0, |f| f.triangles_beside(&decoded, lanes));
                        }
                        while left != 0 {
                            let k = left.trailing_zeros() as usize;
                            left &= left - 1;
                            let Some((instance, primitive)) = context.index().locate(records[k].id)
                            else {
                                continue;
                            };
                            let slot = match context.slot(instance) {
                                Some(slot) => slot as usize,
                                None => {
                                    let slot = met.len();
                                    met.push(this.meet(context, instance));
                                    context.set_slot(instance, slot as u32);
                                    slot
                                }
                            };
                            let Some(m) = &met[slot] else { continue };
                            if planes_of != slot {
                                functor.use_planes(&m.planes);
                                planes_of = slot;
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
                }
                WorldChild::Whole(k) => {
                    wholes.push(k);
                    true
                }
                _ => true,
            },
        );
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
