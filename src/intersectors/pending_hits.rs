//! [`PendingHits`]: a sphere or polytope query's hits while the traversal runs, kept as
//! small records naming their drawable visit, and made full hits once, in their final
//! order, at the end.
//!
//! A full hit carries its node path (its own `Vec`) and its drawable's matrix: a
//! [`SphereHit`](super::SphereHit) is ~200 bytes, a [`PolytopeHit`](super::PolytopeHit)
//! ~430. They used to be built per primitive hit as each visit ended, the query's list
//! growing by doubling, and were moved again by the final sort. Here each visit with
//! hits stores its path (in one shared buffer) and matrix once, the sort orders
//! positions, and each full hit is built once, at its place. (Callgrind, littlest_tokyo:
//! a sphere query's record keeping and sort fell by ~400 instructions, but building the
//! full hits at the end keeps most of the cost: −1 % for spheres in all, boxes even.)
//! [`SegmentHitStore`](super::segment_hit_store::SegmentHitStore) does the same for
//! segments, whose limits need more bookkeeping.

use std::ops::Range;

use glam::DMat4;
use smallvec::SmallVec;

use super::hit_order::{compare_keys, sort_keyed, total_order_key, HitKey};
use crate::graph::{DrawableId, NodeId};
use crate::visitor::{DrawableContext, IntersectionLimit};

/// What a pending hit must tell for the order of hits: the leading number of the sort
/// key (the distance) and the primitive index; the drawable and node path come from
/// its visit.
pub(crate) trait PendingRecord: Copy {
    /// The distance hits are sorted by.
    fn distance(&self) -> f64;
    /// The primitive's index in its drawable.
    fn primitive_index(&self) -> u32;
}

/// A drawable visit with hits.
#[derive(Clone, Debug)]
pub(crate) struct PendingVisit {
    /// The drawable.
    pub drawable: DrawableId,
    /// Its node path, in [`PendingHits::paths`].
    path: Range<usize>,
    /// Its local-to-world matrix.
    pub local_to_world: DMat4,
}

/// One query's pending hits (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct PendingHits<R> {
    /// Each hit with its visit's position in `visits`.
    hits: Vec<(R, u32)>,
    visits: Vec<PendingVisit>,
    paths: Vec<NodeId>,
}

impl<R> Default for PendingHits<R> {
    fn default() -> Self {
        PendingHits {
            hits: Vec::new(),
            visits: Vec::new(),
            paths: Vec::new(),
        }
    }
}

impl<R: PendingRecord> PendingHits<R> {
    /// Forgets every hit, keeping the room.
    pub fn clear(&mut self) {
        self.hits.clear();
        self.visits.clear();
        self.paths.clear();
    }

    /// Whether no hit is pending.
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }

    /// The sort key of pending hit `r` of `visit` (see [`compare_keys`]).
    fn key<'s>(&'s self, r: &R, visit: u32) -> HitKey<'s> {
        let v = &self.visits[visit as usize];
        (
            r.distance(),
            v.drawable,
            r.primitive_index(),
            &self.paths[v.path.clone()],
        )
    }

    /// Adds one drawable visit's hits as `limit` says: every hit; the visit's best
    /// (`OnePerDrawable`, `One`); or the visit's best in place of the query's when it
    /// comes first (`Nearest`).
    pub fn add_visit<I: Iterator<Item = R>>(
        &mut self,
        context: &DrawableContext<'_>,
        new: I,
        limit: IntersectionLimit,
    ) {
        let visit = self.visits.len() as u32;
        let start = self.hits.len();
        // One visit: one drawable and path, so distance and primitive decide (the first
        // of equals stays, as `min_by` keeps it).
        let best_of_visit = |new: I| {
            new.min_by(|a, b| {
                (a.distance().total_cmp(&b.distance()))
                    .then(a.primitive_index().cmp(&b.primitive_index()))
            })
        };
        match limit {
            IntersectionLimit::None => self.hits.extend(new.map(|r| (r, visit))),
            IntersectionLimit::OnePerDrawable | IntersectionLimit::One => {
                self.hits.extend(best_of_visit(new).map(|r| (r, visit)));
            }
            IntersectionLimit::Nearest => {
                let Some(best) = best_of_visit(new) else {
                    return;
                };
                // The new visit is not stored yet: its key comes from its context.
                let key = (
                    best.distance(),
                    context.drawable,
                    best.primitive_index(),
                    context.node_path,
                );
                if let Some((kept, kept_visit)) = self.hits.first() {
                    if !compare_keys(key, self.key(kept, *kept_visit)).is_lt() {
                        return;
                    }
                }
                self.clear();
                self.hits.push((best, 0));
                self.store_visit(context);
                return;
            }
        }
        if self.hits.len() > start {
            self.store_visit(context);
        }
    }

    /// Stores `context` as the next visit.
    fn store_visit(&mut self, context: &DrawableContext<'_>) {
        let path_start = self.paths.len();
        self.paths.extend_from_slice(context.node_path);
        self.visits.push(PendingVisit {
            drawable: context.drawable,
            path: path_start..self.paths.len(),
            local_to_world: *context.local_to_world,
        });
    }

    /// Makes every pending hit a full hit with `make` (given the record, its visit and
    /// its node path), appended to `out` in the order of hits (equal keys in the order
    /// they were added), and forgets them.
    pub fn drain_sorted_into<H>(
        &mut self,
        out: &mut Vec<H>,
        mut make: impl FnMut(&R, &PendingVisit, &[NodeId]) -> H,
    ) {
        let mut build = |(r, visit): &(R, u32)| {
            let v = &self.visits[*visit as usize];
            make(r, v, &self.paths[v.path.clone()])
        };
        if self.hits.len() <= 1 {
            out.extend(self.hits.first().map(&mut build));
        } else {
            // Positions sorted by distance; only equal distances (rare) compare the rest,
            // then the position, so equal keys keep their order.
            let mut order: SmallVec<[(i64, u32); 32]> = (self.hits.iter().enumerate())
                .map(|(k, (r, _))| (total_order_key(r.distance()), k as u32))
                .collect();
            sort_keyed(&mut order, |a, b| {
                let ((ra, va), (rb, vb)) = (&self.hits[a as usize], &self.hits[b as usize]);
                compare_keys(self.key(ra, *va), self.key(rb, *vb)).then(a.cmp(&b))
            });
            out.reserve(order.len());
            out.extend(order.iter().map(|&(_, k)| build(&self.hits[k as usize])));
        }
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SceneGraph;
    use slotmap::SlotMap;

    /// A hit at `distance` of primitive `primitive`, labelled `label` to follow it.
    #[derive(Clone, Copy, Debug)]
    struct Record {
        distance: f64,
        primitive: u32,
        label: u32,
    }

    impl PendingRecord for Record {
        fn distance(&self) -> f64 {
            self.distance
        }
        fn primitive_index(&self) -> u32 {
            self.primitive
        }
    }

    fn records(list: &[(f64, u32, u32)]) -> Vec<Record> {
        (list.iter())
            .map(|&(distance, primitive, label)| Record {
                distance,
                primitive,
                label,
            })
            .collect()
    }

    /// Two drawables (the first ordered first) and two paths (the first shorter, so
    /// ordered first).
    struct Fixture {
        scene: SceneGraph,
        drawables: [DrawableId; 2],
        paths: [Vec<NodeId>; 2],
        matrices: [DMat4; 2],
    }

    impl Fixture {
        fn new() -> Fixture {
            let mut drawables: SlotMap<DrawableId, ()> = SlotMap::with_key();
            let mut nodes: SlotMap<NodeId, ()> = SlotMap::with_key();
            let (d0, d1) = (drawables.insert(()), drawables.insert(()));
            let (n0, n1) = (nodes.insert(()), nodes.insert(()));
            assert!(d0 < d1 && n0 < n1);
            Fixture {
                scene: SceneGraph::new(),
                drawables: [d0, d1],
                paths: [vec![n0], vec![n0, n1]],
                matrices: [DMat4::IDENTITY, DMat4::from_scale(glam::DVec3::splat(2.0))],
            }
        }

        fn context(&self, drawable: usize, path: usize) -> DrawableContext<'_> {
            DrawableContext {
                scene: &self.scene,
                node_path: &self.paths[path],
                drawable: self.drawables[drawable],
                local_to_world: &self.matrices[drawable],
                world_to_local: &self.matrices[drawable],
                use_acceleration: true,
            }
        }
    }

    /// (label, drawable position, path length, matrix scale) of every hit, in order.
    fn drain(f: &Fixture, pending: &mut PendingHits<Record>) -> Vec<(u32, usize, usize, f64)> {
        let mut out = Vec::new();
        pending.drain_sorted_into(&mut out, |r, visit, path| {
            let drawable = f.drawables.iter().position(|&d| d == visit.drawable);
            (
                r.label,
                drawable.unwrap_or(9),
                path.len(),
                visit.local_to_world.x_axis.x,
            )
        });
        assert!(pending.is_empty(), "drained");
        out
    }

    #[test]
    fn every_hit_sorted_by_distance_then_drawable_primitive_path_then_arrival() {
        let f = Fixture::new();
        let mut pending = PendingHits::default();
        let none = IntersectionLimit::None;
        // Drawable 1, long path: distances 2, 1, 1 (primitives 5, 7, 3).
        pending.add_visit(
            &f.context(1, 1),
            records(&[(2.0, 5, 10), (1.0, 7, 11), (1.0, 3, 12)]).into_iter(),
            none,
        );
        // A visit without hits stores nothing.
        pending.add_visit(&f.context(0, 0), std::iter::empty(), none);
        // Drawable 0, short path: distance 1 twice for primitive 7 (equal keys: arrival
        // order), and distance 2 for primitive 5 (the same key as label 10 but for the
        // drawable, which comes first).
        pending.add_visit(
            &f.context(0, 0),
            records(&[(1.0, 7, 20), (1.0, 7, 21), (2.0, 5, 22)]).into_iter(),
            none,
        );
        // Drawable 0 again, long path: after the short one at equal keys.
        pending.add_visit(&f.context(0, 1), records(&[(2.0, 5, 30)]).into_iter(), none);
        assert_eq!(
            drain(&f, &mut pending),
            [
                (20, 0, 1, 1.0),
                (21, 0, 1, 1.0),
                (12, 1, 2, 2.0),
                (11, 1, 2, 2.0),
                (22, 0, 1, 1.0),
                (30, 0, 2, 1.0),
                (10, 1, 2, 2.0),
            ]
        );
    }

    #[test]
    fn limits_keep_what_they_say() {
        let f = Fixture::new();
        let first = records(&[(3.0, 1, 10), (2.0, 9, 11), (2.0, 4, 12)]);
        let second = records(&[(2.0, 4, 20), (5.0, 0, 21)]);
        let run = |limit| {
            let mut pending = PendingHits::default();
            pending.add_visit(&f.context(1, 0), first.clone().into_iter(), limit);
            pending.add_visit(&f.context(0, 0), second.clone().into_iter(), limit);
            drain(&f, &mut pending)
        };
        // Each visit's best: distance 2, then the smaller primitive.
        assert_eq!(
            run(IntersectionLimit::OnePerDrawable),
            [(20, 0, 1, 1.0), (12, 1, 1, 2.0)]
        );
        // The best overall: label 20 ties label 12 but for its drawable, first.
        assert_eq!(run(IntersectionLimit::Nearest), [(20, 0, 1, 1.0)]);
        // `One` keeps each visit's best it is given (the walks stop once one is kept).
        let mut pending = PendingHits::default();
        pending.add_visit(
            &f.context(1, 0),
            first.clone().into_iter(),
            IntersectionLimit::One,
        );
        assert_eq!(drain(&f, &mut pending), [(12, 1, 1, 2.0)]);
        // `Nearest` keeps the earlier hit when the later one is not before it.
        let mut pending = PendingHits::default();
        let nearest = IntersectionLimit::Nearest;
        pending.add_visit(&f.context(0, 0), second.clone().into_iter(), nearest);
        pending.add_visit(&f.context(1, 0), first.clone().into_iter(), nearest);
        assert_eq!(drain(&f, &mut pending), [(20, 0, 1, 1.0)]);
    }
}
