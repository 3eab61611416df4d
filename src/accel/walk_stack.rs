//! [`WalkStack`]: the stack of a tree walk, on the call stack while it is shallow.
//!
//! A query walking the world tree keeps at most three entries per level it descends:
//! at most 13 for the nearest-first segments of littlest_tokyo, zdm2 and city_s10,
//! more only in unbalanced trees. A `Vec` kept in the intersector
//! costs an allocation per new intersector (a parallel batch makes thousands, and
//! their allocations stopped two threads from doubling its speed); a `SmallVec` checks
//! which of its two forms it is in at every push and pop. This keeps 24 entries inline
//! and only spills past them, a branch the processor always predicts.

/// Entries kept inline. (32 packed entries, 256 bytes, were set up by a call to
/// `memset` in every walk; with 24 or 16 the nearest segments take 1.1–1.4 % fewer
/// instructions on littlest_tokyo and city_s10, callgrind.)
pub(super) const INLINE: usize = 24;

/// Writes `entries[k]` for every bit `k` set in `lanes` (bits 0 to 3) to the front of
/// `room` (at least 4 long), the lowest lane first, without a branch on the lanes:
/// every entry is written, and the next place moves past those wanted. Returns how
/// many were wanted.
#[inline(always)]
pub(crate) fn push_lanes<T: Copy>(room: &mut [T], entries: &[T; 4], lanes: u32) -> usize {
    let room = &mut room[..4];
    // Before lane `k` at most `k` entries are kept: `at` stays below 4.
    let mut at = 0;
    for (k, &entry) in entries.iter().enumerate() {
        room[at & 3] = entry;
        at += ((lanes >> k) & 1) as usize;
    }
    at
}

/// Sorts four codes, the largest first, by a network of five compare-exchanges: no
/// branch on the codes. The nearest-first walks order a node's entered children so
/// (children packed as codes that order as they are to be visited); sorted by
/// insertion, with a branch per comparison that the keys decide, they mispredicted
/// about once a node.
#[inline(always)]
pub(crate) fn sort_four_descending(codes: &mut [u64; 4]) {
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        let (a, b) = (codes[i], codes[j]);
        codes[i] = a.max(b);
        codes[j] = a.min(b);
    }
}

/// A stack of `Copy` entries: the first 24 inline, the rest in a `Vec`.
///
/// ```
/// use scene_intersect::accel::WalkStack;
/// let mut stack = WalkStack::new();
/// for k in 0..100u32 {
///     stack.push(k);
/// }
/// assert_eq!(stack.pop(), Some(99));
/// assert_eq!((0..99).filter_map(|_| stack.pop()).count(), 99);
/// assert_eq!(stack.pop(), None);
/// ```
#[derive(Clone, Debug)]
pub struct WalkStack<T: Copy + Default> {
    inline: [T; INLINE],
    len: usize,
    spilled: Vec<T>,
}

impl<T: Copy + Default> Default for WalkStack<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default> WalkStack<T> {
    /// An empty stack.
    #[inline]
    pub fn new() -> Self {
        WalkStack {
            inline: [T::default(); INLINE],
            len: 0,
            spilled: Vec::new(),
        }
    }

    /// Pushes `entry`.
    #[inline(always)]
    pub fn push(&mut self, entry: T) {
        if self.len < INLINE {
            self.inline[self.len] = entry;
            self.len += 1;
        } else {
            self.spilled.push(entry);
        }
    }

    /// Pushes `entry` if `keep`. While the inline room lasts, without a branch on
    /// `keep`: the entry is written either way and the length moves past it if kept.
    #[inline(always)]
    pub(crate) fn push_if(&mut self, entry: T, keep: bool) {
        if let Some(room) = self.inline.get_mut(self.len) {
            *room = entry;
            self.len += usize::from(keep);
        } else if keep {
            self.spilled.push(entry);
        }
    }

    /// Hands the last entry pushed to `take`, which may change it and returns what to
    /// give back and whether the entry is done with (then it is popped, inline without
    /// a branch on it); `None` when the stack is empty.
    #[inline(always)]
    pub(crate) fn take_from_top<R>(&mut self, take: impl FnOnce(&mut T) -> (R, bool)) -> Option<R> {
        if let Some(top) = self.spilled.last_mut() {
            let (taken, done) = take(top);
            if done {
                self.spilled.pop();
            }
            return Some(taken);
        }
        let top = self.inline.get_mut(self.len.checked_sub(1)?)?;
        let (taken, done) = take(top);
        self.len -= usize::from(done);
        Some(taken)
    }

    /// Pushes `entries[k]` for every bit `k` set in `lanes` (bits 0 to 3), the lowest
    /// lane first.
    ///
    /// While four more fit inline, without a branch on the lanes: every entry is
    /// written and the length moves past those wanted. (A loop over the set bits
    /// mispredicts its exit about once a node: callgrind's branch simulation counted
    /// 28 mispredictions per all-hits query on littlest_tokyo in the two branches it
    /// replaces.)
    #[inline(always)]
    pub fn push_lanes(&mut self, entries: &[T; 4], lanes: u32) {
        if let Some(room) = self.inline.get_mut(self.len..self.len + 4) {
            self.len += push_lanes(room, entries, lanes);
        } else {
            for (k, &entry) in entries.iter().enumerate() {
                if lanes & (1 << k) != 0 {
                    self.push(entry);
                }
            }
        }
    }

    /// Pushes the first `count - 1` of `entries` (`count` from 1 to 4), the first
    /// first, and returns `entries[count - 1]`, the one left out: the nearest-first
    /// walk pushes a node's sorted children, the farthest first, and goes on to the
    /// nearest.
    ///
    /// While four more fit inline, all four are written one by one and the length moves
    /// past the first `count - 1`: no loop over the entries (pushing them by a lane mask
    /// cost the walk some 80 instructions a query on littlest_tokyo), and the one left
    /// out is read back from its place. (Copied as a block, the sorted entries, just
    /// stored one by one, were read back in halves of two: on an Intel Xeon such a
    /// load waits for both stores to retire. `perf` put 6 % of a nearest query's
    /// samples there, though the query was not measurably faster without it.)
    ///
    /// # Panics
    ///
    /// When `count` is 0 or above 4.
    #[inline(always)]
    pub(crate) fn push_all_but_last(&mut self, entries: [T; 4], count: usize) -> T {
        assert!(
            (1..=4).contains(&count),
            "push_all_but_last takes one to four entries, not {count}"
        );
        let pushed = count - 1;
        if let Some(room) = self.inline.get_mut(self.len..self.len + 4) {
            let [a, b, c, d] = entries;
            room[0] = a;
            room[1] = b;
            room[2] = c;
            room[3] = d;
            self.len += pushed;
            room[pushed]
        } else {
            for &entry in &entries[..pushed] {
                self.push(entry);
            }
            entries[pushed]
        }
    }

    /// Pops the last entry pushed.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        if !self.spilled.is_empty() {
            return self.spilled.pop();
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.inline[self.len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_codes_come_out_largest_first() {
        // Every list of four from three values (ties included) covers the network.
        for n in 0..81u64 {
            let mut codes = [n % 3, n / 3 % 3, n / 9 % 3, n / 27 % 3].map(|c| c * 10);
            let mut expected = codes;
            expected.sort_unstable_by(|a, b| b.cmp(a));
            sort_four_descending(&mut codes);
            assert_eq!(codes, expected);
        }
    }

    #[test]
    fn deep_stacks_spill_and_come_back_in_order() {
        let mut stack = WalkStack::new();
        for k in 0..1000u64 {
            stack.push(k);
            if k % 3 == 0 {
                assert_eq!(stack.pop(), Some(k));
            }
        }
        let rest: Vec<u64> = std::iter::from_fn(|| stack.pop()).collect();
        let expected: Vec<u64> = (0..1000).rev().filter(|k| k % 3 != 0).collect();
        assert_eq!(rest, expected);
    }

    #[test]
    fn all_but_the_last_entry_are_pushed_in_order_inline_and_spilled() {
        let mut stack = WalkStack::new();
        let mut expected = Vec::new();
        // Counts 1 to 4 in turn; past the inline room the same entries spill.
        for round in 0..40u32 {
            let count = round as usize % 4 + 1;
            let entries = [round * 10, round * 10 + 1, round * 10 + 2, round * 10 + 3];
            let left_out = stack.push_all_but_last(entries, count);
            assert_eq!(left_out, entries[count - 1]);
            expected.extend_from_slice(&entries[..count - 1]);
        }
        assert!(expected.len() > INLINE);
        let popped: Vec<u32> = std::iter::from_fn(|| stack.pop()).collect();
        expected.reverse();
        assert_eq!(popped, expected);
    }

    #[test]
    fn lanes_are_pushed_lowest_first_inline_and_spilled() {
        let mut stack = WalkStack::new();
        let mut expected = Vec::new();
        // 0b1010 pushes lanes 1 and 3; 0 pushes nothing; 0b1111 all four. Past the
        // inline room the same lanes spill in the same order.
        for round in 0..40u32 {
            let lanes = [0b1010, 0, 0b1111, 0b0001][round as usize % 4];
            let entries = [round * 10, round * 10 + 1, round * 10 + 2, round * 10 + 3];
            stack.push_lanes(&entries, lanes);
            expected.extend((0..4).filter(|k| lanes & (1 << k) != 0).map(|k| entries[k]));
        }
        assert!(expected.len() > INLINE);
        let popped: Vec<u32> = std::iter::from_fn(|| stack.pop()).collect();
        expected.reverse();
        assert_eq!(popped, expected);
    }
}
