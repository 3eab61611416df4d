//! [`MetInstances`]: which scene-index instances the current query has met, and where
//! their localized queries are.

/// A table from instance position to the position of its localized query, for the
/// scene-index walk of one query at a time.
///
/// Every entry carries the number of the query that wrote it, so starting a new query is
/// one increment, not a clear, and a lookup is one load and one comparison (a hash map
/// cost ~100 instructions per index item, about 4 % of an all-hits segment query on
/// littlest_tokyo). It takes 8 bytes per instance of the largest index walked.
#[derive(Debug, Default)]
pub(crate) struct MetInstances {
    /// The current query's number; never 0 once a query has started.
    query: u32,
    /// Per instance: the number of the query that met it last, and its slot then.
    entries: Vec<(u32, u32)>,
}

/// A clone starts empty: the table only serves the query running, and copying it (8
/// bytes per instance) for every visitor a parallel batch clones would cost more than
/// the batch's queries on a city of many instances.
impl Clone for MetInstances {
    fn clone(&self) -> Self {
        MetInstances::default()
    }
}

impl MetInstances {
    /// Starts a query over an index of `instance_count` instances: none is met yet.
    pub fn start(&mut self, instance_count: usize) {
        self.query = self.query.wrapping_add(1);
        if self.query == 0 {
            // After 2^32 queries the numbers come round: forget every old entry.
            self.entries.fill((0, 0));
            self.query = 1;
        }
        if self.entries.len() < instance_count {
            self.entries.resize(instance_count, (0, 0));
        }
    }

    /// The slot of instance `k` if this query has met it.
    #[inline]
    pub fn get(&self, k: u32) -> Option<u32> {
        match self.entries.get(k as usize) {
            Some(&(query, slot)) if query == self.query => Some(slot),
            _ => None,
        }
    }

    /// Records that this query met instance `k`, at `slot` (ignored for an instance
    /// beyond the count given to [`start`](Self::start)).
    #[inline]
    pub fn insert(&mut self, k: u32, slot: u32) {
        if let Some(entry) = self.entries.get_mut(k as usize) {
            *entry = (self.query, slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_query_starts_empty() {
        let mut met = MetInstances::default();
        met.start(4);
        assert_eq!(met.get(2), None);
        met.insert(2, 7);
        met.insert(9, 1); // beyond the count: not recorded
        assert_eq!(met.get(2), Some(7));
        assert_eq!(met.get(9), None);
        met.start(4);
        assert_eq!(met.get(2), None, "an entry of the last query");
        met.insert(0, 3);
        assert_eq!(met.get(0), Some(3));
    }

    #[test]
    fn query_numbers_coming_round_forget_old_entries() {
        let mut met = MetInstances::default();
        met.start(2);
        met.insert(1, 5);
        // Run the counter up to its last value, as 2^32 - 1 queries would.
        met.query = u32::MAX;
        met.insert(0, 4);
        met.start(2);
        assert_eq!(met.query, 1);
        assert_eq!(met.get(0), None);
        assert_eq!(met.get(1), None, "written by query 1 of the previous round");
    }

    #[test]
    fn a_clone_starts_empty() {
        let mut met = MetInstances::default();
        met.start(1000);
        met.insert(3, 1);
        let mut copy = met.clone();
        assert!(copy.entries.is_empty());
        copy.start(1000);
        assert_eq!(copy.get(3), None);
        assert_eq!(met.get(3), Some(1));
    }
}
