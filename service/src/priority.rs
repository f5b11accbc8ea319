//! Searches run below the server's own threads in CPU priority.
//!
//! A search is CPU-bound for its whole budget; the server's async workers
//! (decoding requests, firing the timers that answer at a budget's end,
//! encoding replies) need little CPU but need it at once. When more
//! searches run than there are cores, the workers queue behind them and
//! answers come late, however early the searches stop. So every thread
//! that does search work (the thread a call's search runs on, and the
//! threads of rayon's global pool that its parallel steps use) runs at a
//! higher niceness than the workers. Raising one's own niceness needs no
//! privilege; it cannot be undone without one, which is why searches get
//! threads of their own rather than borrowing tokio's blocking pool.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use thiserror::Error;

/// The niceness of search threads (the server's others keep 0): weight
/// 110 against 1024 in Linux's scheduler, so a runnable worker thread
/// preempts searches at once and gets most of a core while it works.
pub const SEARCH_NICENESS: i32 = 10;

/// Lowers the calling thread's CPU priority to [`SEARCH_NICENESS`].
/// Best effort: where the system refuses, the thread keeps its priority.
pub fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread, no memory passed.
    unsafe {
        let tid = libc::gettid();
        if libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, SEARCH_NICENESS) != 0 {
            tracing::debug!("the system kept this search thread's priority");
        }
    }
}

/// Makes rayon's global pool, which the searches' parallel steps run on,
/// a pool of threads at [`SEARCH_NICENESS`]. Only the first call in a
/// process can; if the pool already started, the searches' parallel steps
/// run at its priority (logged).
pub fn lower_search_pool() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Err(e) =
            rayon::ThreadPoolBuilder::new().thread_name(|i| format!("search-{i}")).start_handler(|_| lower_this_thread()).build_global()
        {
            tracing::warn!("search steps keep the priority of the running thread pool: {e}");
        }
    });
}

/// A search thread that panicked: a bug.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("the search panicked, a bug: {}", message.as_deref().unwrap_or("(no message)"))]
pub struct SearchPanic {
    /// The panic's message, when it had one.
    pub message: Option<String>,
}

/// Runs `work` on a new thread (which `work` lowers with
/// [`lower_this_thread`] when it starts searching); the receiver gets its
/// result, or its panic.
pub fn spawn_search<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<tokio::sync::oneshot::Receiver<Result<T, SearchPanic>>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("search".into()).spawn(move || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|panic| {
            let message = crate::panic_message(&*panic).map(str::to_string);
            SEARCH_PANICS.fetch_add(1, Ordering::Relaxed);
            tracing::error!(panic = message.as_deref().unwrap_or_default(), "a search thread panicked: a bug");
            SearchPanic { message }
        });
        let _ = tx.send(result);
    })?;
    Ok(rx)
}

/// Panics caught in search threads since the process started.
static SEARCH_PANICS: AtomicU64 = AtomicU64::new(0);

/// How many search threads have panicked since the process started: each
/// is a bug, logged as an error, whether or not its call had already been
/// answered (with the early answer) when it happened.
pub fn search_panics() -> u64 {
    SEARCH_PANICS.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    fn niceness() -> i32 {
        // SAFETY: plain system calls on the calling thread.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_search_thread_runs_below_its_callers_priority_and_the_caller_keeps_its_own() {
        let before = niceness();
        let searched = spawn_search(|| {
            let at_start = niceness();
            lower_this_thread();
            (at_start, niceness())
        })
        .unwrap();
        let (at_start, lowered) = searched.blocking_recv().unwrap().unwrap();
        assert_eq!(at_start, before, "a search thread starts at its caller's priority (for the early answer)");
        assert!(lowered >= SEARCH_NICENESS, "niceness {lowered}");
        assert_eq!(niceness(), before);
    }

    #[test]
    fn a_search_that_panics_reports_its_message() {
        let searched = spawn_search(|| -> u32 { panic!("a bug in the search") }).unwrap();
        assert_eq!(searched.blocking_recv().unwrap(), Err(SearchPanic { message: Some("a bug in the search".to_string()) }));
        let formatted = spawn_search(|| -> u32 { panic!("{} bugs", 2) }).unwrap();
        assert_eq!(formatted.blocking_recv().unwrap(), Err(SearchPanic { message: Some("2 bugs".to_string()) }));
        let silent = spawn_search(|| -> u32 { std::panic::panic_any(7) }).unwrap();
        let panic = silent.blocking_recv().unwrap().unwrap_err();
        assert_eq!(panic, SearchPanic { message: None });
        assert_eq!(panic.to_string(), "the search panicked, a bug: (no message)");
    }
}
