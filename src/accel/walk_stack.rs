//! [`WalkStack`]: the stack of a tree walk, on the call stack while it is shallow.
//!
//! A query walking the world tree keeps at most three entries per level it descends,
//! about twenty on the real scenes, more only in unbalanced trees. A `Vec`
//! kept in the intersector costs an allocation per new intersector (a parallel batch
//! makes thousands, and their allocations stopped two threads from doubling its
//! speed); a `SmallVec` checks which of its two forms it is in at every push and pop.
//! This keeps 32 entries inline and only spills past them, a branch the processor
//! always predicts.

/// Entries kept inline.
const INLINE: usize = 32;

/// A stack of `Copy` entries: the first 32 inline, the rest in a `Vec`.
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
}
