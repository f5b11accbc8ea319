//! The thread pool that runs parallel loops.
//!
//! A parallel loop is a *job*: its iterations are claimed one at a time from
//! an atomic counter by the thread that started it and by every idle worker,
//! so the caller works too and the iterations balance themselves. A worker
//! that finds nothing to do spins for a short while before it sleeps, so
//! that back-to-back loops (the strips of one pipeline after another) do not
//! pay a wake-up each. A loop started inside an iteration of another is
//! just another job on the same threads: nesting never starts threads.
//!
//! The number of threads can change between runs ([`ThreadPool::set_threads`]):
//! workers are started when first needed, and those beyond the current
//! count sleep until it grows again.

use std::sync::atomic::{AtomicI32, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long an idle worker spins before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// One loop iteration's work: `run(i)` returns 0, or a failure code.
pub type Iteration<'a> = &'a (dyn Fn(i32) -> i32 + Sync);

/// Worker threads plus whichever thread starts a loop.
pub struct ThreadPool {
    shared: Arc<Shared>,
    /// Workers started so far (never fewer than `shared.active`).
    started: Mutex<usize>,
}

struct Shared {
    /// Loops with iterations left to claim, the newest last.
    jobs: Mutex<Vec<Arc<Job>>>,
    wake: Condvar,
    /// How many jobs are listed (a hint for spinning workers).
    listed: AtomicUsize,
    /// How many workers take jobs: those with a smaller index.
    active: AtomicUsize,
}

struct Job {
    /// The iteration body; it lives on the stack of the thread that waits
    /// for the job to finish, and is only called before that.
    run: *const (dyn Fn(i32) -> i32 + Sync),
    min: i32,
    extent: i32,
    /// The next unclaimed iteration; i64, so that claims past the end (one
    /// per thread) cannot wrap around even for an extent near `i32::MAX`.
    next: AtomicI64,
    done: AtomicI32,
    failure: AtomicI32,
}

// SAFETY: `run` points to a `Sync` closure that outlives every call to it
// (the starting thread waits until all claimed iterations are done).
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

impl Job {
    fn has_work(&self) -> bool {
        self.next.load(Ordering::Relaxed) < i64::from(self.extent)
    }

    /// Claims and runs iterations until none is left.
    fn work(&self) {
        loop {
            let claimed = self.next.fetch_add(1, Ordering::AcqRel);
            if claimed >= i64::from(self.extent) {
                return;
            }
            let k = claimed as i32; // below `extent`, so it fits
            if self.failure.load(Ordering::Relaxed) == 0 {
                // SAFETY: see the field's comment.
                let code = unsafe { (*self.run)(self.min.wrapping_add(k)) };
                if code != 0 {
                    let _ = self.failure.compare_exchange(0, code, Ordering::AcqRel, Ordering::Relaxed);
                }
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

impl Shared {
    fn find(&self) -> Option<Arc<Job>> {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.iter().rev().find(|j| j.has_work()).cloned()
    }

    fn worker(&self, index: usize) {
        loop {
            if index >= self.active.load(Ordering::Acquire) {
                let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
                if index >= self.active.load(Ordering::Acquire) {
                    drop(self.wake.wait(jobs).unwrap_or_else(|e| e.into_inner()));
                }
                continue;
            }
            if let Some(job) = self.find() {
                job.work();
                continue;
            }
            let idle = Instant::now();
            while self.listed.load(Ordering::Acquire) == 0 && idle.elapsed() < SPIN {
                std::hint::spin_loop();
            }
            if self.listed.load(Ordering::Acquire) > 0 {
                continue;
            }
            let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            if !jobs.iter().any(|j| j.has_work()) {
                drop(self.wake.wait(jobs).unwrap_or_else(|e| e.into_inner()));
            }
        }
    }
}

impl ThreadPool {
    /// A pool in which loops run on `threads` threads: the caller and
    /// `threads - 1` workers.
    pub fn new(threads: usize) -> ThreadPool {
        let shared =
            Arc::new(Shared { jobs: Mutex::new(vec![]), wake: Condvar::new(), listed: AtomicUsize::new(0), active: AtomicUsize::new(0) });
        let pool = ThreadPool { shared, started: Mutex::new(0) };
        pool.set_threads(threads);
        pool
    }

    /// Makes loops run on `threads` threads (the caller and `threads - 1`
    /// workers) from now on, starting workers if needed; returns the count
    /// in effect (lower if the system refused new threads). Loops already
    /// running finish on the threads they have.
    pub fn set_threads(&self, threads: usize) -> usize {
        let workers = threads.max(1) - 1;
        let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        while *started < workers {
            let (shared, index) = (self.shared.clone(), *started);
            let spawned = std::thread::Builder::new().name(format!("hl-worker-{}", index + 1)).spawn(move || shared.worker(index));
            if spawned.is_err() {
                break;
            }
            *started += 1;
        }
        let active = workers.min(*started);
        self.shared.active.store(active, Ordering::Release);
        drop(self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner()));
        self.shared.wake.notify_all();
        active + 1
    }

    /// The number of threads a loop runs on (the caller included).
    pub fn threads(&self) -> usize {
        self.shared.active.load(Ordering::Acquire) + 1
    }

    /// Runs `run(i)` for every `i` in `[min, min + extent)`; returns 0, or
    /// the failure code of a failed iteration (after which no new iteration
    /// starts).
    pub fn parallel_for(&self, min: i32, extent: i32, run: Iteration<'_>) -> i32 {
        if extent <= 0 {
            return 0;
        }
        if self.threads() == 1 || extent == 1 {
            return (0..extent).map(|k| run(min.wrapping_add(k))).find(|&code| code != 0).unwrap_or(0);
        }
        // SAFETY: only the lifetime is erased; this function returns only
        // after every claimed iteration has finished calling `run`.
        let run: *const (dyn Fn(i32) -> i32 + Sync) = unsafe { std::mem::transmute(run) };
        let job = Arc::new(Job { run, min, extent, next: AtomicI64::new(0), done: AtomicI32::new(0), failure: AtomicI32::new(0) });
        {
            let mut jobs = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
            jobs.push(job.clone());
            self.shared.listed.fetch_add(1, Ordering::AcqRel);
        }
        self.shared.wake.notify_all();
        job.work();
        {
            let mut jobs = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
            jobs.retain(|j| !Arc::ptr_eq(j, &job));
            self.shared.listed.fetch_sub(1, Ordering::AcqRel);
        }
        let waiting = Instant::now();
        while job.done.load(Ordering::Acquire) < extent {
            if waiting.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        job.failure.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;

    #[test]
    fn every_iteration_runs_once_and_failures_are_reported() {
        let pool = ThreadPool::new(3);
        let sum = AtomicI64::new(0);
        let code = pool.parallel_for(-5, 1000, &|i| {
            sum.fetch_add(i64::from(i), Ordering::Relaxed);
            0
        });
        assert_eq!((code, sum.load(Ordering::Relaxed)), (0, (-5..995).sum::<i64>()));
        assert_eq!(pool.parallel_for(0, 50, &|i| if i == 7 { 42 } else { 0 }), 42);
        assert_eq!(pool.parallel_for(0, 0, &|_| 1), 0);
    }

    #[test]
    fn the_thread_count_changes_between_loops() {
        let pool = ThreadPool::new(1);
        let count = |pool: &ThreadPool| {
            let seen = Mutex::new(std::collections::HashSet::new());
            let code = pool.parallel_for(0, 200, &|_| {
                seen.lock().unwrap().insert(std::thread::current().id());
                std::thread::sleep(Duration::from_micros(200));
                0
            });
            assert_eq!(code, 0);
            seen.into_inner().unwrap().len()
        };
        assert_eq!(count(&pool), 1);
        assert_eq!(pool.set_threads(3), 3);
        assert_eq!(pool.threads(), 3);
        assert!(count(&pool) > 1, "workers join once the count grows");
        assert_eq!(pool.set_threads(1), 1);
        assert_eq!(count(&pool), 1, "only the caller works once it shrinks to one");
    }

    #[test]
    fn nested_loops_share_the_threads() {
        let pool = ThreadPool::new(2);
        let cells: Vec<AtomicI32> = (0..64 * 16).map(|_| AtomicI32::new(0)).collect();
        let code = pool.parallel_for(0, 64, &|i| {
            pool.parallel_for(0, 16, &|j| {
                cells[(i * 16 + j) as usize].fetch_add(1, Ordering::Relaxed);
                0
            })
        });
        assert_eq!(code, 0);
        assert!(cells.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn loops_from_several_threads_at_once() {
        let pool = Arc::new(ThreadPool::new(2));
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let pool = pool.clone();
                std::thread::spawn(move || {
                    let sum = AtomicI64::new(0);
                    pool.parallel_for(0, 500, &|i| {
                        sum.fetch_add(i64::from(i) * t, Ordering::Relaxed);
                        0
                    });
                    sum.load(Ordering::Relaxed)
                })
            })
            .collect();
        for (t, h) in handles.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), (0..500).sum::<i64>() * t as i64);
        }
    }
}
