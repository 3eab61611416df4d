//! [`SortedPositions`]: the positions of a list's hits in the order of their leading
//! number (a ratio or a distance), sorted as single integers.
//!
//! Each entry is one `u64`: the leading 32 bits of the number's [`total_order_key`]
//! (read as unsigned, so that integer order is the numbers' order) above the position.
//! The standard unstable sort of `u64` runs about twice as fast as the same sort of
//! `(i64, u32)` pairs by their first field, from 24 items up (a stand-alone measure,
//! 24 to 1 000 items: 6–8 against 11–19 ns an item), which is where long hit lists
//! spend their sort. The 32 bits keep a number to about six significant digits: the
//! few neighbours equal in them (and the numbers equal in full) are then put in order
//! by the full number and the caller's tie-break, run by run.

use std::cmp::Ordering;

/// An integer ordered as [`f64::total_cmp`] orders the floats.
fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    // Negative floats order backwards as integers: flip all but the sign bit.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// Positions `0..n` of a list sorted by each item's leading number (see the module
/// docs); kept by an intersector from query to query, so that sorting stops allocating
/// once its lists have reached their size.
#[derive(Clone, Debug, Default)]
pub(crate) struct SortedPositions {
    packed: Vec<u64>,
}

/// The bits of a packed entry that hold the position.
const POSITION: u64 = 0xFFFF_FFFF;

/// The entry of position `k`, whose number is `number`.
#[inline(always)]
fn pack(number: f64, k: u32) -> u64 {
    // Flipping the sign bit of the `i64` key orders it as an unsigned integer.
    let key = (total_order_key(number) as u64) ^ (1 << 63);
    (key & !POSITION) | u64::from(k)
}

impl SortedPositions {
    /// Replaces the contents by the positions `0..n`, ordered by `number(k)` as
    /// [`f64::total_cmp`] orders them; `tie` orders the positions of equal numbers
    /// (an unstable sort: `tie` decides every order among them, and two positions it
    /// calls equal come in either order).
    ///
    /// # Panics
    ///
    /// When `n` does not fit a `u32` (no hit list comes near).
    #[inline]
    pub fn sort(
        &mut self,
        n: usize,
        number: impl Fn(u32) -> f64,
        mut tie: impl FnMut(u32, u32) -> Ordering,
    ) {
        let n = u32::try_from(n).expect("fewer than 2^32 items to sort");
        let packed = &mut self.packed;
        packed.clear();
        packed.extend((0..n).map(|k| pack(number(k), k)));
        packed.sort_unstable();
        // Neighbours whose numbers share their leading bits are in the order of their
        // positions: most lists have none (one pass finds out).
        let lead = |p: u64| p & !POSITION;
        if packed.windows(2).all(|pair| lead(pair[0]) != lead(pair[1])) {
            return;
        }
        let mut start = 0;
        while start < packed.len() {
            let first = lead(packed[start]);
            let end = start
                + (packed[start..].iter())
                    .take_while(|&&p| lead(p) == first)
                    .count();
            if end - start > 1 {
                packed[start..end].sort_unstable_by(|&a, &b| {
                    let (a, b) = (a as u32, b as u32);
                    number(a).total_cmp(&number(b)).then_with(|| tie(a, b))
                });
            }
            start = end;
        }
    }

    /// Replaces the contents by the positions `0..n` in their own order (the order the
    /// items were found in, for callers that want it kept).
    ///
    /// # Panics
    ///
    /// When `n` does not fit a `u32`, as [`sort`](Self::sort).
    pub fn in_found_order(&mut self, n: usize) {
        let n = u32::try_from(n).expect("fewer than 2^32 items to sort");
        self.packed.clear();
        self.packed.extend((0..n).map(u64::from));
    }

    /// How many positions are sorted.
    pub fn len(&self) -> usize {
        self.packed.len()
    }

    /// The `k`-th position in order.
    ///
    /// # Panics
    ///
    /// When `k` is not below [`len`](Self::len).
    pub fn position(&self, k: usize) -> u32 {
        self.packed[k] as u32
    }

    /// The positions, in order.
    pub fn positions(&self) -> Positions<'_> {
        self.packed.iter().map(|&p| p as u32)
    }

    /// Forgets the positions (the room stays).
    pub fn clear(&mut self) {
        self.packed.clear();
    }

    /// Where the entries are (for tests of reused room).
    #[cfg(test)]
    pub fn as_ptr(&self) -> *const u64 {
        self.packed.as_ptr()
    }
}

/// The positions of a [`SortedPositions`], in order.
pub(crate) type Positions<'a> = std::iter::Map<std::slice::Iter<'a, u64>, fn(&u64) -> u32>;

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

    /// The reference: positions sorted by `total_cmp` of their numbers, then `tie`.
    fn reference(numbers: &[f64], tie: impl Fn(u32, u32) -> Ordering) -> Vec<u32> {
        let mut order: Vec<u32> = (0..numbers.len() as u32).collect();
        order.sort_by(|&a, &b| {
            (numbers[a as usize].total_cmp(&numbers[b as usize])).then_with(|| tie(a, b))
        });
        order
    }

    fn sorted(numbers: &[f64], tie: impl Fn(u32, u32) -> Ordering) -> Vec<u32> {
        let mut sorted = SortedPositions::default();
        sorted.sort(numbers.len(), |k| numbers[k as usize], tie);
        assert_eq!(sorted.len(), numbers.len());
        sorted.positions().collect()
    }

    #[test]
    fn numbers_equal_in_their_leading_bits_are_ordered_in_full() {
        // Listed against their order: 1 + 2^-40 and 1 + 2^-45 share the leading 32 bits
        // of their keys with 1, and come after it; -0.0 comes before 0.0.
        let numbers = [
            1.0 + 2f64.powi(-40),
            1.0,
            1.0 + 2f64.powi(-45),
            0.0,
            -0.0,
            0.5,
            f64::INFINITY,
            -3.0,
        ];
        assert_eq!(sorted(&numbers, |a, b| a.cmp(&b)), [7, 4, 3, 5, 1, 2, 0, 6]);
    }

    #[test]
    fn equal_numbers_follow_the_tie_break() {
        let numbers = [2.0, 1.0, 2.0, 1.0, 2.0];
        // Later positions first.
        assert_eq!(sorted(&numbers, |a, b| b.cmp(&a)), [3, 1, 4, 2, 0]);
    }

    #[test]
    fn long_lists_sort_by_their_leading_bits_and_then_in_full() {
        // Every number equal (the tie-break decides all); then, listed against their
        // order, numbers apart in the last of the leading bits (steps of 2^-20 from 1),
        // numbers of many magnitudes, and numbers equal in all the leading bits (steps
        // of 2^-40 from 1).
        let equal = vec![3.5; 200];
        let later_first: Vec<u32> = (0..200).rev().collect();
        assert_eq!(sorted(&equal, |a, b| b.cmp(&a)), later_first);
        let spread: Vec<f64> = (0..300)
            .map(|k| match k % 3 {
                0 => 1.0 + f64::from(300 - k) * 2f64.powi(-20),
                1 => f64::from(300 - k) * 1024.0,
                _ => 1.0 + f64::from(300 - k) * 2f64.powi(-40),
            })
            .collect();
        assert_eq!(
            sorted(&spread, |a, b| a.cmp(&b)),
            reference(&spread, |a, b| a.cmp(&b))
        );
    }

    #[test]
    fn random_lists_sort_as_the_reference() {
        let mut seed = 11u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 11
        };
        let mut sorter = SortedPositions::default();
        for trial in 0..3000 {
            let n = (trial % 300) as usize;
            // Numbers from a few values, some a unit in the last place apart, some in
            // wide ranges, negative ones and NaNs among them.
            let numbers: Vec<f64> = (0..n)
                .map(|_| match next() % 6 {
                    0 => (next() % 4) as f64,
                    1 => f64::from_bits(1.0f64.to_bits() + next() % 3),
                    2 => (next() % 1_000_000) as f64 * 1e-6,
                    3 => -((next() % 1000) as f64),
                    4 => f64::from_bits(next() << 11),
                    _ => f64::NAN,
                })
                .collect();
            let tie = |a: u32, b: u32| (a % 3).cmp(&(b % 3)).then(a.cmp(&b));
            sorter.sort(n, |k| numbers[k as usize], tie);
            let ours: Vec<u32> = sorter.positions().collect();
            assert_eq!(ours, reference(&numbers, tie), "trial {trial}");
        }
    }

    #[test]
    fn the_room_is_reused() {
        let mut sorter = SortedPositions::default();
        sorter.sort(100, |k| f64::from(100 - k), |a, b| a.cmp(&b));
        assert_eq!((sorter.position(0), sorter.position(99)), (99, 0));
        let room = sorter.as_ptr();
        sorter.clear();
        assert_eq!(sorter.len(), 0);
        sorter.sort(60, f64::from, |a, b| a.cmp(&b));
        assert_eq!(sorter.as_ptr(), room);
        assert!(sorter.positions().eq(0..60));
    }
}
