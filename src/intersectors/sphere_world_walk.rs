//! The [`SphereIntersector`]'s own walk of a scene index's world tree
//! ([`Intersector::intersect_index`]).
//!
//! Depth first: four node boxes at a time are tested against the ball in `f32`
//! ([`BallCuller::overlapping`]), and a leaf's triangles four at a time
//! ([`BallCuller::triangles`]: the box of the quantized corners, grown by the
//! quantization error, certainly farther than the radius). A triangle left is tested
//! exactly as the plain traversal tests it: its own vertices moved to world space, the
//! closest point found there. With a limit, the raw hits are then made hits one
//! instance at a time, each instance a drawable visit, so every limit keeps what the
//! plain traversal keeps; without one, every raw hit is kept, and they are made hits
//! all together, in their final order.

use glam::{DMat4, Vec3};
use smallvec::SmallVec;

use super::hit_order::{reserve_room, world_tree_padding};
use super::slot_runs::for_each_slot_run;
use super::sphere::{sphere_hit, RawHit, SphereFunctor};
use super::world_candidate::Candidate;
use super::{PrimitiveMask, SphereIntersector};
use crate::accel::{push_lanes, BallCuller, TriangleLanes, TriangleList, WorldChild, FILTER_LANES};
use crate::visitor::{IndexContext, IntersectionLimit, Intersector};

/// An instance the walk met.
struct Met<'a> {
    instance: u32,
    local_to_world: &'a DMat4,
    vertices: &'a [Vec3],
    list: TriangleList<'a>,
}

impl SphereIntersector {
    /// Walks the world tree of `context`'s index (see the module docs).
    pub(super) fn walk_world(&mut self, context: &mut IndexContext<'_>) {
        // Slots are this walk's own (another walk may have run in this query).
        context.forget_slots();
        let world = context.index().world();
        if world.is_empty() {
            return;
        }
        // Boxes and corners are measured in the tree's frame; the exact test's rounding
        // grows with the absolute coordinates.
        let frame = world.frame();
        let (pad, scale) = world_tree_padding(world);
        let pad = pad + frame.pad();
        let radius = frame.length(self.radius);
        let ball = BallCuller::new(frame.point(self.world_center), radius + pad, scale);
        let triangles_wanted = self.primitive_mask.contains(PrimitiveMask::TRIANGLES);
        let mut raw = std::mem::take(&mut self.walk_scratch);
        raw.clear();
        // Per raw hit, the slot of its instance.
        let mut raw_slots: SmallVec<[u32; 16]> = SmallVec::new();
        let mut met: SmallVec<[Option<Met<'_>>; 8]> = SmallVec::new();
        let stop_at_first = self.limit == IntersectionLimit::One;
        // The triangles near the ball, gathered and tested a batch at a time (every
        // group at once under `One`, which stops at the first hit), in the walk's order.
        let mut passed = [0u32; BATCH];
        let mut count = 0;
        let mut stopped = false;
        world.walk_depth_first(
            |node| ball.overlapping(&node.boxes),
            |node, lane| match node.child(lane) {
                WorldChild::Triangles { first, count: n } if triangles_wanted => {
                    let (lo, hi) = node.boxes.splat_lane(lane);
                    let (mut group, end) = (first as usize, (first + n) as usize);
                    while group < end {
                        let records = &world.triangles()[group..group + FILTER_LANES];
                        let lanes = (end - group).min(FILTER_LANES);
                        group += FILTER_LANES;
                        let decoded = TriangleLanes::decode(records, lo, hi, ball.center());
                        let near = ball.triangles(&decoded, lanes);
                        let ids = [0, 1, 2, 3].map(|k| records[k].id);
                        count += push_lanes(&mut passed[count..], &ids, near);
                        if stop_at_first || count + FILTER_LANES > BATCH {
                            let batch = &passed[..count];
                            count = 0;
                            let hits = (&mut *context, &mut met, &mut raw, &mut raw_slots);
                            if self.test_triangles(hits, batch, stop_at_first) {
                                stopped = true;
                                return false;
                            }
                        }
                    }
                    true
                }
                WorldChild::Whole(k) => {
                    context.visit_whole(self, k);
                    !self.reached_limit()
                }
                _ => true,
            },
        );
        if !stopped {
            let hits = (&mut *context, &mut met, &mut raw, &mut raw_slots);
            self.test_triangles(hits, &passed[..count], stop_at_first);
        }
        if self.limit == IntersectionLimit::None {
            self.keep_all_sorted(&raw, &raw_slots, &met, context);
            raw.clear();
            self.walk_scratch = raw;
            return;
        }
        // Each instance's raw hits, as one visit of it, instance by instance (the
        // triangles of a triangle list are distinct primitives: nothing to merge).
        let single = raw_slots.windows(2).all(|w| w[0] == w[1]);
        let mut group = std::mem::take(&mut self.walk_group);
        if single {
            if let Some(m) = raw_slots
                .first()
                .and_then(|&slot| met[slot as usize].as_ref())
            {
                if !self.reached_limit() {
                    self.keep_hits(&mut raw, &context.drawable_context(m.instance), true);
                }
            }
        } else {
            for_each_slot_run(&raw_slots, met.len(), |slot, run| {
                let Some(m) = &met[slot as usize] else {
                    return;
                };
                group.clear();
                group.extend(run.iter().map(|&k| raw[k as usize]));
                if !self.reached_limit() {
                    self.keep_hits(&mut group, &context.drawable_context(m.instance), true);
                }
            });
        }
        self.walk_scratch = raw;
        self.walk_group = group;
    }

    /// Without a limit every raw hit becomes a hit, whichever visit it belongs to: all
    /// of them are made here, in the final order of `end`'s sort, which then finds
    /// them in place instead of moving each hit (a few hundred bytes) about. Their
    /// positions are sorted, by the distance as an integer, the rest of the key
    /// (drawable, primitive, node path) breaking ties; no two raw hits share a key
    /// (distinct triangles, or instances).
    fn keep_all_sorted(
        &mut self,
        raw: &[RawHit],
        raw_slots: &[u32],
        met: &[Option<Met<'_>>],
        context: &IndexContext<'_>,
    ) {
        if raw.is_empty() {
            return;
        }
        // Raw hits are only made for instances met (`Some`).
        let instance_of = |k: u32| {
            met[raw_slots[k as usize] as usize]
                .as_ref()
                .map(|m| m.instance)
        };
        if self.records.summarizes() {
            // Filed under their instances' visits (one each), in any order: the
            // store's sort orders them (unsorted summaries keep this order).
            let mut visits: SmallVec<[u32; 8]> = SmallVec::from_elem(u32::MAX, met.len());
            for (k, (r, &slot)) in raw.iter().zip(raw_slots).enumerate() {
                let Some(instance) = instance_of(k as u32) else {
                    continue;
                };
                let visit = &mut visits[slot as usize];
                if *visit == u32::MAX {
                    *visit = (self.summarized).add_visit(&context.drawable_context(instance));
                }
                self.summarized.push_in_visit(r.parts(), *visit);
            }
            return;
        }
        let sorted = &mut self.sorter.sorted;
        sorted.sort(
            raw.len(),
            |k| raw[k as usize].distance,
            |a, b| {
                let primitive = |k: u32| raw[k as usize].primitive_index;
                // One instance's hits (most equal distances: a corner its triangles
                // share) differ in their primitives alone.
                if raw_slots[a as usize] == raw_slots[b as usize] {
                    return primitive(a).cmp(&primitive(b));
                }
                let key = |k: u32| {
                    let instance = instance_of(k).map(|i| context.instance(i));
                    let (drawable, path) = instance.map(|i| (i.drawable, &i.path[..])).unzip();
                    (drawable, primitive(k), path)
                };
                key(a).cmp(&key(b))
            },
        );
        reserve_room(&mut self.hits, sorted.len());
        for k in sorted.positions() {
            if let Some(instance) = instance_of(k) {
                let hit = sphere_hit(
                    raw[k as usize],
                    &context.drawable_context(instance),
                    &mut self.spare_paths,
                );
                self.hits.push(hit);
            }
        }
    }

    /// Tests the world tree's triangles `ids` exactly, adding a raw hit (and its
    /// instance's slot) for each within the radius; true when it stopped at a first
    /// hit (`stop_at_first`). Every triangle's instance, indices and corners are read
    /// before any is tested, so that their cache misses overlap (as the segment walk's
    /// batches do).
    fn test_triangles<'a>(
        &self,
        (context, met, raw, raw_slots): HitsSoFar<'_, 'a>,
        ids: &[u32],
        stop_at_first: bool,
    ) -> bool {
        let mut candidates: SmallVec<[Candidate<Vec3>; BATCH]> = SmallVec::new();
        for &id in ids {
            let Some((k, primitive)) = context.index().locate(id) else {
                continue;
            };
            let slot = match context.slot(k) {
                Some(slot) => slot as usize,
                None => {
                    let slot = met.len();
                    met.push(meet(context, k));
                    context.set_slot(k, slot as u32);
                    slot
                }
            };
            let Some(m) = &met[slot] else { continue };
            let Some(indices) = m.list.triangle(primitive) else {
                continue;
            };
            let vertex = |i: u32| m.vertices.get(i as usize).copied();
            if let (Some(a), Some(b), Some(c)) =
                (vertex(indices[0]), vertex(indices[1]), vertex(indices[2]))
            {
                candidates.push(Candidate {
                    slot: slot as u32,
                    primitive,
                    indices,
                    corners: [a, b, c],
                });
            }
        }
        for c in &candidates {
            let Some(m) = &met[c.slot as usize] else {
                continue;
            };
            let before = raw.len();
            SphereFunctor::new(self, m.local_to_world, raw).triangle_near_ball(
                c.corners,
                c.indices,
                c.primitive,
            );
            if raw.len() > before {
                raw_slots.push(c.slot);
                if stop_at_first {
                    return true;
                }
            }
        }
        false
    }
}

/// Triangles the walk gathers (at most) before testing them.
const BATCH: usize = 32;

/// What a batch of exact tests reads and adds to: the index's context, the instances
/// met, the raw hits and their instances' slots.
type HitsSoFar<'h, 'a> = (
    &'h mut IndexContext<'a>,
    &'h mut SmallVec<[Option<Met<'a>>; 8]>,
    &'h mut Vec<RawHit>,
    &'h mut SmallVec<[u32; 16]>,
);

/// What the walk keeps of instance `k`, or `None` when the traversal does not reach it.
#[cold]
fn meet<'a>(context: &IndexContext<'a>, k: u32) -> Option<Met<'a>> {
    if !context.reaches(k) {
        return None;
    }
    let instance = context.instance(k);
    let geometry = context.scene().drawable(instance.drawable)?.as_geometry()?;
    Some(Met {
        instance: k,
        local_to_world: &instance.local_to_world,
        vertices: geometry.vertices(),
        list: TriangleList::of(geometry)?,
    })
}
