//! Work over every instance of a scene index, split in consecutive runs, one per core.
//!
//! A move of the whole scene (a model turned in a viewer, a floating origin re-centred)
//! recomputes the frame and world box of every instance. On the generated city_s10
//! that is 71 717 instances, each a node read that misses the caches and a few
//! products of `f64` matrices: some 20 ms on one core. Each instance's work is its
//! own, so runs of them go to scoped threads (not the rayon pool: an edit may be made
//! from a task of that pool, whose other threads may be waiting on it), and the
//! results are the same as on one thread, in the same order. [`fill_runs`] also fills
//! the world tree's leaf records in runs at its build.

use super::binned_sah::build_threads_from;

/// The instances a run needs before a second thread pays for its start. A scoped
/// thread's start and join take some 47 µs (an AMD EPYC, 2026-12-01) against some
/// 0.3 µs an instance, so a second thread pays from a few hundred instances on; from
/// this many it saves half a millisecond or more (city_s3's 6 786 instances: 1.5 →
/// 0.87 ms).
pub(crate) const PARALLEL_INSTANCES: usize = 4096;

/// The threads for work over `items` instances: the machine's cores from
/// [`PARALLEL_INSTANCES`] on, one below.
pub(crate) fn run_threads(items: usize) -> usize {
    build_threads_from(items, PARALLEL_INSTANCES)
}

/// The results `work` appends for consecutive runs of `items`, on up to `threads`
/// threads (the first run on this one), joined in the items' order.
pub(crate) fn map_in_runs<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(&[T], &mut Vec<R>) + Sync,
) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    if threads <= 1 || items.len() < 2 {
        work(items, &mut out);
        return out;
    }
    let per_run = items.len().div_ceil(threads);
    let runs: Vec<_> = items.chunks(per_run).map(|run| (run, run.len())).collect();
    fill_runs(&mut out, &runs, work);
    out
}

/// What `fill` appends for each of `runs` (a run of items and the room its results
/// need), in the runs' order: the first run on this thread, straight into `out`; each
/// other on a scoped thread of its own, into a list of its own, appended.
pub(crate) fn fill_runs<T: Sync, R: Send>(
    out: &mut Vec<R>,
    runs: &[(&[T], usize)],
    fill: impl Fn(&[T], &mut Vec<R>) + Sync,
) {
    std::thread::scope(|scope| {
        let fill = &fill;
        let others: Vec<_> = (runs.iter().skip(1))
            .map(|&(run, room)| {
                scope.spawn(move || {
                    let mut own = Vec::with_capacity(room);
                    fill(run, &mut own);
                    own
                })
            })
            .collect();
        if let Some(&(first, _)) = runs.first() {
            fill(first, out);
        }
        for other in others {
            // A run's thread only panics where the one-thread work would.
            match other.join() {
                Ok(own) => out.extend(own),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
}

/// `work(first, run)` for consecutive runs of `items` (`first`: the place of the run's
/// first item in `items`), on up to `threads` threads (the first run on this one).
pub(crate) fn for_each_run<T: Send>(
    items: &mut [T],
    threads: usize,
    work: impl Fn(usize, &mut [T]) + Sync,
) {
    if threads <= 1 || items.len() < 2 {
        work(0, items);
        return;
    }
    let per_run = items.len().div_ceil(threads);
    let mut runs = items.chunks_mut(per_run);
    let first = runs.next().unwrap_or_default();
    std::thread::scope(|scope| {
        let work = &work;
        let others: Vec<_> = (runs.enumerate())
            .map(|(k, run)| scope.spawn(move || work((k + 1) * per_run, run)))
            .collect();
        work(0, first);
        for other in others {
            if let Err(panic) = other.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_give_the_one_thread_results_in_order() {
        for n in [0, 1, 2, 3, 7, 100, 1001] {
            let items: Vec<u64> = (0..n).map(|k| k * k + 3).collect();
            let doubled_plus_one =
                |run: &[u64], out: &mut Vec<u64>| out.extend(run.iter().map(|v| v * 2 + 1));
            let one: Vec<u64> = items.iter().map(|v| v * 2 + 1).collect();
            for threads in [1, 2, 3, 8] {
                assert_eq!(
                    map_in_runs(&items, threads, doubled_plus_one),
                    one,
                    "{n} items, {threads} threads"
                );
                let mut places = vec![usize::MAX; n as usize];
                for_each_run(&mut places, threads, |first, run| {
                    for (j, p) in run.iter_mut().enumerate() {
                        assert_eq!(*p, usize::MAX, "each item once");
                        *p = first + j;
                    }
                });
                assert!(
                    places.iter().enumerate().all(|(k, &p)| p == k),
                    "{places:?}"
                );
            }
        }
    }

    #[test]
    fn small_lists_stay_on_one_thread() {
        assert_eq!(run_threads(PARALLEL_INSTANCES - 1), 1);
        assert!(run_threads(PARALLEL_INSTANCES) >= 1);
    }
}
