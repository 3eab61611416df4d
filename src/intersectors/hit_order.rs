//! The total order hits are sorted in, so results do not depend on traversal order, and
//! the limit bookkeeping the intersectors share.

use std::cmp::Ordering;

use crate::accel::{Aabb, PrimitiveBvh, WorldBvh};
use crate::bounding::BoundingBox;
use crate::graph::{DrawableId, NodeId};
use crate::visitor::IntersectionLimit;

use super::sorted_positions::SortedPositions;

/// The sort key of a hit: its ratio or distance, then drawable, primitive index and node
/// path, so ties are broken the same way by every traversal (plain or accelerated).
pub(crate) type HitKey<'a> = (f64, DrawableId, u32, &'a [NodeId]);

/// A hit with a sort key.
pub(crate) trait OrderedHit {
    fn key(&self) -> HitKey<'_>;
}

/// Compares two keys.
pub(crate) fn compare_keys(a: HitKey<'_>, b: HitKey<'_>) -> Ordering {
    a.0.total_cmp(&b.0)
        .then_with(|| a.1.cmp(&b.1))
        .then_with(|| a.2.cmp(&b.2))
        .then_with(|| a.3.cmp(b.3))
}

/// Compares two hits by key.
pub(crate) fn compare_hits<H: OrderedHit>(a: &H, b: &H) -> Ordering {
    compare_keys(a.key(), b.key())
}

/// The room [`sort_hits`] reuses from sort to sort: an intersector keeps one, so that
/// answering query after query it stops allocating once its lists have reached their
/// size (each sort of more than 24 hits allocated its keys, and a new list to gather
/// the hits into; lists of more than [`GATHERED`] hits still are gathered so).
#[derive(Clone, Debug, Default)]
pub(crate) struct HitSorter {
    /// The hits' positions sorted by their leading number (also lent to the sphere's
    /// sorts of its raw hits, which run before `end`'s).
    pub(super) sorted: SortedPositions,
    /// The positions in order.
    order: Vec<u32>,
}

/// Sorts hits by their key, stably. Hits are a few hundred bytes, so their positions are
/// sorted instead (sorting the hits themselves moved them once per inversion, and the
/// standard sort would copy them into scratch space). Lists of up to [`GATHERED`] hits
/// (most queries) are then put in order by swaps along the cycles of the permutation,
/// in place. Longer ones are gathered into a new list instead, in order: a swap reads
/// and writes two hits at scattered places, and a list of thousands (a frustum over a
/// town, 1.5 MB of hits) waits on memory at each (15 frustums over truck_town, 3 440
/// hits each, were answered 19 % faster by gathering; 15 half-spaces 16 %).
pub(crate) fn sort_hits<H: OrderedHit>(hits: &mut Vec<H>, sorter: &mut HitSorter) {
    const SHORT: usize = 24;
    let n = hits.len();
    if n <= SHORT {
        // Insertion sort, so equal keys keep their order.
        let mut order = [0u32; SHORT];
        for i in 0..n {
            order[i] = i as u32;
            let mut j = i;
            while j > 0
                && compare_hits(&hits[order[j - 1] as usize], &hits[order[j] as usize]).is_gt()
            {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        apply_order(hits, &mut order[..n]);
    } else if !hits.is_sorted_by(|a, b| compare_hits(a, b).is_le()) {
        // Long lists (sphere and polytope queries touching many triangles) not already
        // in order (a world walk makes its hits in order when it can): positions sorted
        // by the leading number, as integers (cheap to compare, and an unstable sort
        // needs no scratch allocation); only equal numbers need the full key, with the
        // position as last resort so equal keys keep their order.
        let HitSorter { sorted, order } = sorter;
        sorted.sort(
            n,
            |k| hits[k as usize].key().0,
            |a, b| compare_hits(&hits[a as usize], &hits[b as usize]).then(a.cmp(&b)),
        );
        if n <= GATHERED {
            order.clear();
            order.extend(sorted.positions());
            apply_order(hits, order);
        } else {
            gather(hits, sorted.positions());
        }
    }
}

/// The longest hit list [`sort_hits`] puts in order in place; longer ones are gathered
/// into a new list. (Gathering every list of more than 24 moved each hit twice, through
/// slots kept for the purpose, or allocated a new list per sort.)
const GATHERED: usize = 256;

/// Swaps the distinct items at `i` and `j`. (`slice::swap` allows the two places to be
/// one, so a hit of a few hundred bytes goes through a temporary by three `memcpy`
/// calls; two places known apart swap chunk by chunk in registers.)
#[inline(always)]
fn swap_apart<T>(items: &mut [T], i: usize, j: usize) {
    let (low, high) = (i.min(j), i.max(j));
    let (head, tail) = items.split_at_mut(high);
    std::mem::swap(&mut head[low], &mut tail[0]);
}

/// Moves the item at `order[i]` to position `i`, for every `i` (`order` is a
/// permutation; it is left as the identity).
fn apply_order<T>(items: &mut [T], order: &mut [u32]) {
    for start in 0..items.len() {
        // Follow the cycle through `start`: each step brings the item that belongs at
        // `current` there; the item that was at `start` travels along until the cycle
        // closes.
        let mut current = start;
        loop {
            let source = order[current] as usize;
            order[current] = current as u32;
            if source == start || source == current {
                break;
            }
            swap_apart(items, current, source);
            current = source;
        }
    }
}

/// Puts the items of `items` in the order of `order` (a permutation of their
/// positions): each item moves out once and back once, in order. The list keeps its
/// room: with room for exactly its items, the next query with more grew it by
/// reallocating, copying hits of a few hundred bytes each (2 % of zdm2's box queries).
fn gather<T>(items: &mut Vec<T>, order: impl Iterator<Item = u32>) {
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.reserve_exact(slots.capacity());
    items.extend(order.filter_map(|k| slots.get_mut(k as usize).and_then(Option::take)));
    debug_assert_eq!(items.len(), slots.len(), "`order` is a permutation");
}

/// Makes room for `additional` more items. An empty list that must grow gets a fresh
/// allocation: `Vec::reserve` reallocates, and the allocator copies the old block
/// whole, not knowing it holds nothing (a query's hit list is emptied at its start;
/// growing it this way cost 4 % of a sphere query on littlest_tokyo, run in batches of
/// 256 with a new intersector each).
pub(crate) fn reserve_room<T>(items: &mut Vec<T>, additional: usize) {
    if items.is_empty() && items.capacity() < additional {
        *items = Vec::with_capacity(additional.max(2 * items.capacity()));
    } else {
        items.reserve(additional);
    }
}

/// Adds one drawable visit's hits to `hits` as `limit` says.
pub(crate) fn record_hits<H: OrderedHit>(
    hits: &mut Vec<H>,
    new: impl Iterator<Item = H>,
    limit: IntersectionLimit,
) {
    match limit {
        IntersectionLimit::None => hits.extend(new),
        IntersectionLimit::OnePerDrawable | IntersectionLimit::One => {
            hits.extend(new.min_by(compare_hits));
        }
        IntersectionLimit::Nearest => {
            if let Some(best) = new.min_by(compare_hits) {
                if hits.first().is_none_or(|h| compare_hits(&best, h).is_lt()) {
                    hits.clear();
                    hits.push(best);
                }
            }
        }
    }
}

/// An index box in `f64`, with the [`cull_padding`] for its size and place: what the
/// intersectors' exact fallback tests of world boxes start from.
pub(crate) fn padded_box(bound: &Aabb) -> (BoundingBox, f64) {
    let (min, max) = bound.as_dvec3();
    let bound = BoundingBox { min, max };
    let pad = cull_padding(
        bound.radius(),
        bound.min.abs().max(bound.max.abs()).max_element(),
    );
    (bound, pad)
}

/// The margins a walk of a tree whose boxes lie in `bounds` culls them with: `(pad,
/// scale)`, the [`cull_padding`] of `bounds` (its coordinates measured from a frame
/// `offset` away from the origin, since the exact tests' rounding grows with the
/// absolute coordinates) and the largest magnitude of its own coordinates.
pub(crate) fn box_padding(bounds: &Aabb, offset: f64) -> (f64, f64) {
    padding_with_diagonal(bounds, bounds.diagonal(), offset)
}

/// [`box_padding`] given the length of the diagonal of `bounds`.
#[inline]
fn padding_with_diagonal(bounds: &Aabb, diagonal: f64, offset: f64) -> (f64, f64) {
    let (min, max) = bounds.as_dvec3();
    let scale = min.abs().max(max.abs()).max_element();
    let pad = cull_padding(diagonal.min(f64::MAX), scale + offset);
    (pad, scale)
}

/// [`box_padding`] for a walk of a drawable's `bvh` (with the diagonal the tree keeps).
#[inline]
pub(crate) fn bvh_padding(bvh: &PrimitiveBvh) -> (f64, f64) {
    padding_with_diagonal(&bvh.bounds(), bvh.diagonal(), 0.0)
}

/// [`box_padding`] for a walk of `world`, whose boxes are measured in its frame (with
/// the diagonal the tree keeps: its square root was ~4 % of a nearest segment's time,
/// at the head of the walk's set-up).
pub(crate) fn world_tree_padding(world: &WorldBvh) -> (f64, f64) {
    padding_with_diagonal(&world.bounds(), world.diagonal(), world.frame().offset())
}

/// The [`cull_padding`] of a drawable's (or any local) box: for its size and its
/// centre's place. What every intersector's drawable test grows the box by.
#[inline]
pub(crate) fn box_cull_padding(bound: &BoundingBox) -> f64 {
    cull_padding(bound.radius(), bound.center().abs().max_element())
}

/// A tiny outward padding for bound culling, so a primitive lying exactly on its
/// drawable's box or node's sphere is never culled by rounding in the test.
#[inline]
pub(crate) fn cull_padding(radius: f64, center_magnitude: f64) -> f64 {
    radius * 1e-9 + center_magnitude * 1e-12 + 1e-12
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Hit(f64, u32, Vec<NodeId>, usize);
    impl OrderedHit for Hit {
        fn key(&self) -> HitKey<'_> {
            (self.0, DrawableId::default(), self.1, &self.2)
        }
    }

    #[test]
    fn short_and_long_lists_sort_alike_and_stably() {
        for n in [0usize, 1, 2, 7, 24, 25, 60, 256, 257, 600] {
            // Keys repeat (k % 5), so stability shows: equal keys keep their order.
            let make = || -> Vec<Hit> {
                (0..n)
                    .map(|k| Hit(((k * 7) % 5) as f64, (k % 2) as u32, Vec::new(), k))
                    .collect()
            };
            let mut ours = make();
            sort_hits(&mut ours, &mut HitSorter::default());
            let mut reference = make();
            reference.sort_by(compare_hits);
            let order = |v: &[Hit]| v.iter().map(|h| h.3).collect::<Vec<_>>();
            assert_eq!(order(&ours), order(&reference), "{n} hits");
        }
        // Many random lists, short and long: every permutation shape (cycles of every
        // length); one sorter for all, as an intersector keeps one.
        let mut seed = 7u64;
        let mut sorter = HitSorter::default();
        for trial in 0..2000 {
            let n = trial % 40;
            let make = |seed: &mut u64| -> Vec<Hit> {
                (0..n)
                    .map(|k| {
                        *seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        Hit(((*seed >> 40) % 6) as f64, 0, Vec::new(), k)
                    })
                    .collect()
            };
            let before = seed;
            let mut ours = make(&mut seed);
            seed = before;
            let mut reference = make(&mut seed);
            sort_hits(&mut ours, &mut sorter);
            reference.sort_by(compare_hits);
            let order = |v: &[Hit]| v.iter().map(|h| h.3).collect::<Vec<_>>();
            assert_eq!(order(&ours), order(&reference), "trial {trial}");
        }
    }

    #[test]
    fn a_long_list_keeps_its_room() {
        // Out of order and longer than the insertion sort takes.
        let mut hits: Vec<Hit> = Vec::with_capacity(100);
        hits.extend((0..40).map(|k| Hit(f64::from(40 - k), 0, Vec::new(), k as usize)));
        let mut sorter = HitSorter::default();
        sort_hits(&mut hits, &mut sorter);
        assert_eq!(
            hits.iter().map(|h| h.3).collect::<Vec<_>>(),
            (0..40).rev().collect::<Vec<_>>()
        );
        assert!(hits.capacity() >= 100, "room for {}", hits.capacity());
        // The same list out of order again: sorted in the room both already have.
        hits.reverse();
        let rooms = (hits.as_ptr(), sorter.sorted.as_ptr(), sorter.order.as_ptr());
        sort_hits(&mut hits, &mut sorter);
        assert_eq!(
            hits.iter().map(|h| h.3).collect::<Vec<_>>(),
            (0..40).rev().collect::<Vec<_>>()
        );
        assert_eq!(
            (hits.as_ptr(), sorter.sorted.as_ptr(), sorter.order.as_ptr()),
            rooms
        );
    }

    #[test]
    fn reserved_room_holds_the_items_and_keeps_them() {
        let mut items: Vec<u64> = Vec::with_capacity(2);
        reserve_room(&mut items, 10);
        assert!(items.capacity() >= 10);
        items.extend([1, 2, 3]);
        reserve_room(&mut items, 100);
        assert!(items.capacity() >= 103);
        assert_eq!(items, [1, 2, 3]);
    }
}
