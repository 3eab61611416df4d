//! The total order hits are sorted in, so results do not depend on traversal order, and
//! the padding the intersectors' bound tests share.

use std::cmp::Ordering;

use crate::accel::Aabb;
use crate::bounding::BoundingBox;
use crate::graph::{DrawableId, NodeId};

/// The sort key of a hit: its ratio or distance, then drawable, primitive index and node
/// path, so ties are broken the same way by every traversal (plain or accelerated).
pub(crate) type HitKey<'a> = (f64, DrawableId, u32, &'a [NodeId]);

/// Compares two keys.
pub(crate) fn compare_keys(a: HitKey<'_>, b: HitKey<'_>) -> Ordering {
    a.0.total_cmp(&b.0)
        .then_with(|| a.1.cmp(&b.1))
        .then_with(|| a.2.cmp(&b.2))
        .then_with(|| a.3.cmp(b.3))
}

/// Sorts `(key, position)` pairs by key, ordering the positions of equal keys with
/// `tie` (an unstable sort: `tie` decides every order among equal keys). Keys are the
/// leading number of a hit's order as [`total_order_key`] integers: cheap to compare,
/// and rarely equal, so `tie`, which looks at the hits themselves, seldom runs.
pub(crate) fn sort_keyed(keyed: &mut [(i64, u32)], mut tie: impl FnMut(u32, u32) -> Ordering) {
    keyed.sort_unstable();
    let mut run_start = 0;
    while run_start < keyed.len() {
        let key = keyed[run_start].0;
        let run_end = run_start
            + keyed[run_start..]
                .iter()
                .take_while(|&&(k, _)| k == key)
                .count();
        if run_end - run_start > 1 {
            keyed[run_start..run_end].sort_unstable_by(|&(_, a), &(_, b)| tie(a, b));
        }
        run_start = run_end;
    }
}

/// An integer ordered as [`f64::total_cmp`] orders the floats.
pub(crate) fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    // Negative floats order backwards as integers: flip all but the sign bit.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
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

/// A tiny outward padding for bound culling, so a primitive lying exactly on its
/// drawable's box or node's sphere is never culled by rounding in the test.
#[inline]
pub(crate) fn cull_padding(radius: f64, center_magnitude: f64) -> f64 {
    radius * 1e-9 + center_magnitude * 1e-12 + 1e-12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_order_key_orders_like_total_cmp() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            0.25,
            0.5,
            1.0,
            3.0e10,
            f64::INFINITY,
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    total_order_key(a).cmp(&total_order_key(b)),
                    a.total_cmp(&b),
                    "{a} vs {b}"
                );
            }
        }
    }
}
