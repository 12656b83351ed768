//! Batches on threads: the calling thread plus helpers from one shared pool.
//!
//! [`run_shared`] works through a batch's items on the calling thread and on helpers from a
//! pool shared by the whole process (its threads keep their per-thread caches between calls;
//! a forked child builds its own), largest items first, and hands each result to the calling
//! thread, which alone may hold its language's lock (Python's GIL) to build that language's
//! objects. The caller says how to run work without that lock ([`Unlock`]); a Rust caller
//! has none ([`NoLock`]).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How the calling thread runs work while it does not need its language's lock: the
/// bindings release the lock for the duration of `f` (Python's `allow_threads`).
pub trait Unlock {
    fn unlocked<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T;
}

/// No lock to release: work runs as it is.
pub struct NoLock;

impl Unlock for NoLock {
    fn unlocked<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
        f()
    }
}

/// Work through items `0..count` on this thread and `threads - 1` helpers of the shared pool,
/// largest first (by `size`, so that the last items taken are small and no thread waits long
/// for another at the end) and each item to the same thread on every call (see `Deal`), turn
/// each result into its final form with `keep` on this thread, and return those in item order,
/// or the error `keep` gave for the lowest-index item. When the sizes add up to less than
/// `alone_below`, this thread works alone: waking a helper that sleeps takes tens to hundreds
/// of microseconds, more than a small batch would save. Alone (one thread asked for, a small
/// batch, or no pool), it works in groups of consecutive items (at most 1,024, and
/// `alone_below` of work), with the lock released once per group.
///
/// This thread takes items too, and runs `keep` on the helpers' results between two items of
/// its own: `keep` may need the caller's lock (building Python objects, which only one thread
/// can do), and this way that work overlaps the helpers' instead of waiting for the last
/// item. `unlock` releases that lock while this thread works or waits. Once all items are
/// taken, this thread waits for the helpers' last results by spinning (see `receive`).
#[allow(clippy::too_many_arguments)]
pub fn run_shared<R: Send, T, E>(
    unlock: &impl Unlock,
    count: usize,
    threads: usize,
    size: impl Fn(usize) -> usize,
    alone_below: usize,
    work: impl Fn(usize) -> R + Sync,
    mut keep: impl FnMut(R) -> Result<T, E>,
) -> Result<Vec<T>, E> {
    let mut kept: Vec<Option<T>> = (0..count).map(|_| None).collect();
    // The error of the lowest-index item that fails, as a loop over the items would give
    // (whatever order the threads finish in).
    let mut first_error: Option<(usize, E)> = None;
    let mut store = |i: usize, result: R| {
        if first_error.as_ref().is_none_or(|(failed, _)| i < *failed) {
            match keep(result) {
                Ok(value) => kept[i] = Some(value),
                Err(err) => first_error = Some((i, err)),
            }
        }
    };
    let small = (0..count).map(&size).sum::<usize>() < alone_below;
    let threads = if small {
        1
    } else {
        threads.clamp(1, count.max(1))
    };
    let Some(pool) = helper_pool(threads - 1) else {
        // Alone: no channel and no deal, and the lock released once per group of items, not
        // once per item (for short texts the helpers' machinery costs a real share of the work).
        let mut first = 0;
        while first < count {
            let (mut end, mut work_size) = (first, 0);
            while end < count && end - first < GROUP_ITEMS && work_size < alone_below.max(1) {
                work_size += size(end);
                end += 1;
            }
            let results = unlock.unlocked(|| (first..end).map(&work).collect::<Vec<R>>());
            for (i, result) in (first..end).zip(results) {
                store(i, result);
            }
            first = end;
        }
        return in_order(kept, first_error);
    };
    let helper_count = threads - 1;
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    let (sender, receiver) = std::sync::mpsc::channel();
    let receiver = Mutex::new(receiver); // a &Mutex may cross into `unlocked`
    let helper_senders: Vec<_> = (0..helper_count).map(|_| sender.clone()).collect();
    let deal = Deal::new(helper_count + 1, count);
    let running = AtomicUsize::new(0); // helpers between the start and the end of their job
    let (deal, order, work, running) = (&deal, &order, &work, &running);
    let work_here = move || {
        loop {
            while let Ok((i, result)) = receiver.lock().expect("one receiver").try_recv() {
                store(i, result);
            }
            let Some(i) = deal.next(0).map(|place| order[place]) else {
                break;
            };
            store(i, unlock.unlocked(|| work(i)));
        }
        drop(sender); // the helpers hold the last senders: the loop below ends with them
        let wait = || receive(&receiver.lock().expect("one receiver"), running);
        while let Ok((i, result)) = unlock.unlocked(wait) {
            store(i, result);
        }
    };
    pool.in_place_scope(|scope| {
        for (helper, sender) in helper_senders.into_iter().enumerate() {
            scope.spawn(move |_| {
                running.fetch_add(1, Relaxed);
                deal.start(helper + 1);
                while let Some(i) = deal.next(helper + 1).map(|place| order[place]) {
                    if sender.send((i, work(i))).is_err() {
                        break;
                    }
                }
                // Hang up, then leave `running`: a waiter that sees 0 blocks in `recv`, which
                // the hang-up ends (`running` is only a hint for spinning; the channel
                // carries the results and the hang-up).
                drop(sender);
                running.fetch_sub(1, Relaxed);
            });
        }
        work_here();
    });
    in_order(kept, first_error)
}

/// The kept results in item order, or the error of the lowest-index item that failed.
fn in_order<T, E>(kept: Vec<Option<T>>, first_error: Option<(usize, E)>) -> Result<Vec<T>, E> {
    match first_error {
        Some((_, err)) => Err(err),
        None => Ok(kept
            .into_iter()
            .map(|value| value.expect("every item was kept"))
            .collect()),
    }
}

/// The places `0..count` of a batch's items (largest first), dealt to `threads` threads in
/// turn: thread `t` owns places `t`, `t + threads`, `t + 2 * threads`, ... and takes its own
/// from the first; a thread whose own are gone takes another's from the last, but at most
/// an eighth of those of a helper that has started (all of a helper's that has not: its
/// pool thread may be busy elsewhere). A batch given again then goes to the same threads but
/// for the few items taken from the end of another thread's, and each thread's caches
/// (merged pieces, per thread) hold its items' pieces from the call before. Taken from one
/// shared counter, the items would go to whichever thread is free, different ones on every
/// call, and each thread would learn the whole batch only over several calls. The limit
/// keeps a calling thread whose cache is warm (single encodes of the same text) from taking
/// most of a cold helper's items on every call, so that the helper never learns them.
struct Deal {
    /// Per thread, the range of its own places not yet taken, as counts of its places: the
    /// first in the low 32 bits, the end in the high 32, claimed with one compare-and-swap.
    left: Vec<AtomicU64>,
    /// Per thread, how many places it owns.
    own: Vec<u32>,
    /// Per thread, whether it has started taking places (the calling thread, 0, always has).
    started: Vec<AtomicBool>,
}

impl Deal {
    fn new(threads: usize, count: usize) -> Self {
        let count = u32::try_from(count).expect("a batch of fewer than 2^32 items");
        let own: Vec<u32> = (0..threads as u32)
            .map(|t| (count + threads as u32 - 1 - t) / threads as u32)
            .collect();
        Self {
            left: own
                .iter()
                .map(|&n| AtomicU64::new(u64::from(n) << 32))
                .collect(),
            own,
            started: (0..threads).map(|t| AtomicBool::new(t == 0)).collect(),
        }
    }

    /// Marks helper `thread` as started: from now on others take at most an eighth of its
    /// places.
    fn start(&self, thread: usize) {
        self.started[thread].store(true, Relaxed);
    }

    /// The next place for thread `thread` to work on: its own first one left, else the last
    /// one left of another thread (the next after it first); `None` once all are taken.
    fn next(&self, thread: usize) -> Option<usize> {
        let threads = self.left.len();
        (0..threads).find_map(|k| {
            let owner = (thread + k) % threads;
            let own = k == 0;
            let mut left = self.left[owner].load(Relaxed);
            loop {
                let (first, end) = (left as u32, (left >> 32) as u32);
                if first >= end {
                    return None;
                }
                let (claimed, rest) = if own {
                    (first, u64::from(end) << 32 | u64::from(first + 1))
                } else if owner != 0
                    && self.started[owner].load(Relaxed)
                    && self.own[owner] - end >= self.own[owner] / 8
                {
                    return None;
                } else {
                    (end - 1, u64::from(end - 1) << 32 | u64::from(first))
                };
                match self.left[owner].compare_exchange_weak(left, rest, Relaxed, Relaxed) {
                    Ok(_) => return Some(owner + claimed as usize * threads),
                    Err(now) => left = now,
                }
            }
        })
    }
}

/// Batches smaller than these (bytes of text to encode, ids to decode: about 0.3 ms of work
/// on one thread) are not worth waking a helper for.
pub const ALONE_BELOW_TEXT_BYTES: usize = 32 * 1024;
pub const ALONE_BELOW_IDS: usize = 16 * 1024;

/// The most items the calling thread works through alone with the lock released once (see
/// [`run_shared`]; at most `alone_below` of work too): their results wait in a vector until
/// the lock is taken again.
const GROUP_ITEMS: usize = 1024;

/// How long the calling thread spins for a helper's result before it sleeps.
const SPIN_LIMIT: std::time::Duration = std::time::Duration::from_millis(1);

/// The next message from the helpers, or `Err` once they have all hung up.
///
/// While a helper is working (`running` > 0) its result is due within one item, so this spins
/// for up to [`SPIN_LIMIT`] before it sleeps: waking a thread that sleeps costs tens to
/// hundreds of microseconds, a real share of a batch of a few milliseconds. While no helper
/// has started yet it sleeps at once: a waking helper may need the CPU this thread would
/// spin on.
fn receive<T>(receiver: &Receiver<T>, running: &AtomicUsize) -> Result<T, RecvError> {
    let deadline = Instant::now() + SPIN_LIMIT;
    loop {
        match receiver.try_recv() {
            Ok(message) => return Ok(message),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) if running.load(Relaxed) > 0 && Instant::now() < deadline => {
                std::hint::spin_loop()
            }
            Err(TryRecvError::Empty) => return receiver.recv(),
        }
    }
}

/// The shared pool of helper threads, with at least `helpers` threads, or None when none are
/// wanted or the OS refuses threads (the caller then works alone).
///
/// One pool for the process, grown to the largest count asked for: its threads keep their
/// per-thread caches (merged pieces) from one batch call to the next, as the calling thread's
/// do for single encodes. A call uses only as many of them as it spawns jobs for. After a
/// `fork` the pool's threads do not exist in the child, so a child builds its own.
fn helper_pool(helpers: usize) -> Option<Arc<rayon::ThreadPool>> {
    struct Shared {
        pid: u32,
        size: usize,
        pool: Arc<rayon::ThreadPool>,
    }
    static POOL: Mutex<Option<Shared>> = Mutex::new(None);
    if helpers == 0 {
        return None;
    }
    let mut shared = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let pid = std::process::id();
    let mut size = helpers;
    if let Some(current) = shared.take() {
        if current.pid != pid {
            // Inherited through fork: its threads are not in this process, and dropping it
            // would wait on them.
            std::mem::forget(current.pool);
        } else if current.size >= helpers {
            let pool = current.pool.clone();
            *shared = Some(current);
            return Some(pool);
        } else {
            size = helpers.max(current.size); // the smaller pool ends once its jobs are done
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(size)
        .thread_name(|i| format!("wordsplit-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    *shared = Some(Shared {
        pid,
        size,
        pool: pool.clone(),
    });
    Some(pool)
}

/// `requested` threads, or one per core the process may use.
pub fn default_threads(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receive_returns_messages_then_hangs_up() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let running = AtomicUsize::new(0);
        sender.send(1).unwrap();
        sender.send(2).unwrap();
        drop(sender);
        assert_eq!(receive(&receiver, &running), Ok(1));
        assert_eq!(receive(&receiver, &running), Ok(2));
        assert_eq!(receive(&receiver, &running), Err(RecvError));
    }

    #[test]
    fn a_deal_gives_each_thread_its_own_places_first_then_the_others_last() {
        let deal = Deal::new(3, 8);
        // Thread 1 owns places 1, 4 and 7, and takes them in order.
        let own: Vec<_> = std::iter::from_fn(|| deal.next(1)).take(3).collect();
        assert_eq!(own, [1, 4, 7]);
        // Its own gone, it takes the last ones left of the thread after it, then the next.
        assert_eq!(deal.next(1), Some(5));
        assert_eq!(deal.next(0), Some(0));
        let rest: Vec<_> = std::iter::from_fn(|| deal.next(1)).collect();
        assert_eq!(rest, [2, 6, 3]);
        assert_eq!((deal.next(0), deal.next(2)), (None, None));
    }

    #[test]
    fn a_started_helper_loses_at_most_an_eighth_of_its_places() {
        let deal = Deal::new(2, 64);
        deal.start(1);
        // The calling thread takes its own 32, then 4 of the helper's 32, from the last.
        let taken: Vec<_> = std::iter::from_fn(|| deal.next(0)).collect();
        assert_eq!(taken.len(), 36);
        assert_eq!(&taken[32..], [63, 61, 59, 57]);
        // The helper keeps the other 28, from its first.
        let kept: Vec<_> = std::iter::from_fn(|| deal.next(1)).collect();
        assert_eq!(kept, (1..57).step_by(2).collect::<Vec<_>>());
    }

    #[test]
    fn threads_dealing_at_once_take_every_place_once() {
        for (threads, count) in [(1, 0), (1, 5), (2, 1), (2, 1000), (3, 999), (4, 10_001)] {
            let deal = Deal::new(threads, count);
            let taken: Vec<Vec<usize>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let deal = &deal;
                        scope.spawn(move || {
                            deal.start(t);
                            std::iter::from_fn(|| deal.next(t)).collect()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut all: Vec<usize> = taken.concat();
            all.sort_unstable();
            assert_eq!(
                all,
                (0..count).collect::<Vec<_>>(),
                "{threads} threads, {count}"
            );
        }
    }

    /// CPU time of the calling thread.
    fn thread_cpu_time() -> std::time::Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) },
            0
        );
        std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// Waits for a result that a helper thread sends after `delay`, with `running` helpers;
    /// returns the CPU time the wait took.
    fn wait_cpu_time(delay: std::time::Duration, running: usize) -> std::time::Duration {
        let (sender, receiver) = std::sync::mpsc::channel();
        let running = AtomicUsize::new(running);
        let helper = std::thread::spawn(move || {
            std::thread::sleep(delay);
            sender.send("late").unwrap();
        });
        let start = thread_cpu_time();
        assert_eq!(receive(&receiver, &running), Ok("late"));
        let spent = thread_cpu_time() - start;
        helper.join().unwrap();
        assert_eq!(receive(&receiver, &running), Err(RecvError));
        spent
    }

    #[test]
    fn receive_spins_only_briefly_and_only_for_a_running_helper() {
        // A running helper that answers long after SPIN_LIMIT: the wait spins at most about
        // SPIN_LIMIT, then sleeps (a spin to the end would cost ~20 × SPIN_LIMIT).
        let wait = SPIN_LIMIT * 20;
        assert!(wait_cpu_time(wait, 1) < SPIN_LIMIT * 5);
        // No helper running yet: no spin at all.
        assert!(wait_cpu_time(wait, 0) < SPIN_LIMIT / 2);
    }

    /// Counts the times the lock is released.
    struct CountingLock(std::cell::Cell<usize>);

    impl Unlock for CountingLock {
        fn unlocked<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
            self.0.set(self.0.get() + 1);
            f()
        }
    }

    #[test]
    fn alone_the_lock_is_released_once_per_group_and_results_come_in_order() {
        let lock = CountingLock(std::cell::Cell::new(0));
        let kept = run_shared(&lock, 2500, 1, |_| 1, 1 << 20, |i| i * 3, Ok::<_, ()>);
        assert_eq!(kept, Ok((0..2500).map(|i| i * 3).collect::<Vec<_>>()));
        assert_eq!(
            lock.0.get(),
            2500_usize.div_ceil(GROUP_ITEMS),
            "groups of GROUP_ITEMS"
        );
        // Groups end once they hold `alone_below` of work: items of size 10, 100 per group.
        lock.0.set(0);
        let kept = run_shared(&lock, 250, 1, |_| 10, 1000, |i| i, Ok::<_, ()>);
        assert_eq!(kept.map(|k| k.len()), Ok(250));
        assert_eq!(lock.0.get(), 3);
        // The error is the lowest-index failure's, whichever group it is in.
        let failed = run_shared(
            &lock,
            3000,
            1,
            |_| 1,
            1 << 20,
            |i| i,
            |r| {
                if r % 1100 == 1099 {
                    Err(r)
                } else {
                    Ok(r)
                }
            },
        );
        assert_eq!(failed, Err(1099));
    }

    #[test]
    fn an_empty_batch_gives_no_results_and_releases_no_lock() {
        let lock = CountingLock(std::cell::Cell::new(0));
        let kept = run_shared(&lock, 0, 2, |_| 1, 10, |i| i, Ok::<_, ()>);
        assert_eq!(kept, Ok(vec![]));
        assert_eq!(lock.0.get(), 0);
    }
}
