//! The runtime that generated code calls through the C ABI: a thread pool
//! for parallel loops and aligned heap allocation (guarded, in the debug
//! mode of [`crate::guard_pages`]).
//!
//! Parallel loops run on one process-wide [`ThreadPool`]. It starts with
//! the `HL_NUM_THREADS` environment variable's count, else the number of
//! hardware threads; [`set_num_threads`] changes it between runs. A parallel loop nested inside
//! another runs on the same threads, so nesting never oversubscribes the
//! machine.

use super::guard_pages;
use super::thread_pool::ThreadPool;
use std::alloc::{alloc, dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The body of an outlined parallel loop: `body(closure, index)`; non-zero
/// means the iteration failed with that code.
pub type LoopBody = extern "C" fn(*const u8, i32) -> i32;

/// Alignment of heap allocations, in bytes (a cache line, and the widest
/// vector register of any x86 host).
pub const ALLOCATION_ALIGN: usize = 64;

static POOL: OnceLock<ThreadPool> = OnceLock::new();

/// Sets the number of threads parallel loops run on, from the next loop
/// on (between runs: loops already running keep their threads); returns
/// the count in effect.
pub fn set_num_threads(n: usize) -> usize {
    pool().set_threads(n)
}

/// The number of threads parallel loops run on.
pub fn num_threads() -> usize {
    pool().threads()
}

fn threads_from_env() -> Option<usize> {
    std::env::var("HL_NUM_THREADS").ok()?.trim().parse().ok().filter(|&n| n > 0)
}

fn pool() -> &'static ThreadPool {
    POOL.get_or_init(|| {
        let threads = threads_from_env().unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        ThreadPool::new(threads)
    })
}

/// The closure pointer, shared read-only by every iteration.
#[derive(Clone, Copy)]
struct Closure(*const u8);
// SAFETY: generated code only reads the closure, which outlives the loop.
unsafe impl Send for Closure {}
unsafe impl Sync for Closure {}

/// Runs `body(closure, i)` for `i` in `[min, min + extent)` on the pool;
/// returns 0, or the failure code of some failed iteration.
///
/// # Safety
/// `body` must be safe to call concurrently with `closure` for every index.
#[no_mangle]
pub unsafe extern "C" fn hl_parallel_for(body: LoopBody, closure: *const u8, min: i32, extent: i32) -> i32 {
    if extent <= 0 {
        return 0;
    }
    let closure = Closure(closure);
    pool().parallel_for(min, extent, &move |i| {
        let c = closure;
        body(c.0, i)
    })
}

/// Size of the header in front of each allocation (holds its size).
const HEADER: usize = ALLOCATION_ALIGN;

/// The blocks each thread freed last, kept for its next allocations: the
/// realizations allocated per iteration of a loop (per tile, at several
/// levels of a loop nest, with several sizes alive at once) then reuse
/// their blocks instead of going back to the system allocator, which may
/// return the memory and fault it in again page by page.
struct Spares(RefCell<Vec<(NonNull<u8>, usize)>>);

/// Freed blocks a thread keeps at most (the oldest beyond go back).
const MAX_SPARES: usize = 8;

impl Drop for Spares {
    fn drop(&mut self) {
        for (base, total) in self.0.get_mut().drain(..) {
            // SAFETY: the block came from `alloc` with this layout.
            unsafe { release(base.as_ptr(), total) };
        }
    }
}

thread_local! {
    static SPARES: Spares = const { Spares(RefCell::new(Vec::new())) };
}

/// Returns a block to the system allocator.
///
/// # Safety
/// `base` must come from `alloc` with `total` bytes at [`ALLOCATION_ALIGN`].
unsafe fn release(base: *mut u8, total: usize) {
    dealloc(base, Layout::from_size_align_unchecked(total, ALLOCATION_ALIGN))
}

/// Allocates `bytes` bytes aligned to [`ALLOCATION_ALIGN`] (under
/// `HL_GUARD_PAGES`, against a guard page and aligned to the element size:
/// see [`crate::guard_pages`]); null on failure or for a negative or absurd
/// size.
#[no_mangle]
pub extern "C" fn hl_malloc(bytes: i64) -> *mut u8 {
    let Ok(bytes) = usize::try_from(bytes) else {
        return std::ptr::null_mut();
    };
    if let Some(side) = guard_pages::mode() {
        return guard_pages::allocate(bytes, side);
    }
    let Some(total) = bytes.checked_add(HEADER) else {
        return std::ptr::null_mut();
    };
    let Ok(layout) = Layout::from_size_align(total, ALLOCATION_ALIGN) else {
        return std::ptr::null_mut();
    };
    // The smallest spare block at least as large, and not wastefully
    // larger, is reused.
    let reused = SPARES.try_with(|s| {
        let mut spares = s.0.borrow_mut();
        let fitting =
            spares.iter().enumerate().filter(|(_, &(_, size))| size >= total && size / 2 <= total).min_by_key(|(_, &(_, size))| size);
        fitting.map(|(i, _)| i).map(|i| spares.remove(i))
    });
    // SAFETY: a reused block is at least `total` bytes; a new one has a
    // non-zero size (it includes the header).
    unsafe {
        let (base, size) = match reused.ok().flatten() {
            Some((base, size)) => (base.as_ptr(), size),
            None => (alloc(layout), total),
        };
        if base.is_null() {
            return base;
        }
        (base as *mut usize).write(size);
        base.add(HEADER)
    }
}

/// Frees what [`hl_malloc`] returned (null is ignored).
///
/// # Safety
/// `ptr` must come from [`hl_malloc`] and not be freed twice.
#[no_mangle]
pub unsafe extern "C" fn hl_free(ptr: *mut u8) {
    if ptr.is_null() || (guard_pages::mode().is_some() && guard_pages::free(ptr)) {
        return;
    }
    let base = ptr.sub(HEADER);
    let total = (base as *const usize).read();
    // Kept as the newest spare; the oldest beyond the limit goes back.
    let kept = SPARES.try_with(|s| {
        let mut spares = s.0.borrow_mut();
        spares.push((NonNull::new(base)?, total));
        if spares.len() > MAX_SPARES {
            let (oldest, size) = spares.remove(0);
            release(oldest.as_ptr(), size);
        }
        Some(())
    });
    if kept.ok().flatten().is_none() {
        release(base, total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    extern "C" fn add_index(closure: *const u8, i: i32) -> i32 {
        // SAFETY: the test passes a pointer to an AtomicI64.
        let sum = unsafe { &*(closure as *const AtomicI64) };
        sum.fetch_add(i as i64, Ordering::Relaxed);
        0
    }

    extern "C" fn fail_at_seven(_: *const u8, i: i32) -> i32 {
        if i == 7 {
            42
        } else {
            0
        }
    }

    #[test]
    fn parallel_for_runs_every_index_once_and_reports_failures() {
        let sum = AtomicI64::new(0);
        let code = unsafe { hl_parallel_for(add_index, &sum as *const AtomicI64 as *const u8, -5, 100) };
        assert_eq!(code, 0);
        assert_eq!(sum.load(Ordering::Relaxed), (-5..95).sum::<i64>());
        assert_eq!(unsafe { hl_parallel_for(fail_at_seven, std::ptr::null(), 0, 20) }, 42);
        assert_eq!(unsafe { hl_parallel_for(fail_at_seven, std::ptr::null(), 0, 0) }, 0);
    }

    #[test]
    fn allocations_are_aligned_and_bad_sizes_fail() {
        let p = hl_malloc(1000);
        assert!(!p.is_null());
        assert_eq!(p as usize % ALLOCATION_ALIGN, 0);
        unsafe {
            p.write_bytes(7, 1000);
            hl_free(p);
            hl_free(std::ptr::null_mut());
        }
        assert!(hl_malloc(-1).is_null());
        assert!(hl_malloc(i64::MAX).is_null());
    }

    #[test]
    fn realizations_nested_in_a_loop_reuse_their_blocks() {
        std::thread::spawn(|| unsafe {
            let sizes = [1 << 20, 300_000, 40_000, 5_000];
            let first: Vec<*mut u8> = sizes.iter().map(|&n| hl_malloc(n)).collect();
            first.iter().rev().for_each(|&p| hl_free(p));
            for _ in 0..3 {
                let again: Vec<*mut u8> = sizes.iter().map(|&n| hl_malloc(n)).collect();
                assert_eq!(again, first, "each level's block is reused");
                for (&p, &n) in again.iter().zip(&sizes) {
                    p.write_bytes(3, n as usize);
                }
                again.iter().rev().for_each(|&p| hl_free(p));
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_freed_block_serves_the_next_allocation_of_a_similar_size() {
        std::thread::spawn(|| unsafe {
            let first = hl_malloc(4000);
            hl_free(first);
            let again = hl_malloc(3000);
            assert_eq!(again, first, "the spare block is reused");
            again.write_bytes(1, 3000);
            // Far smaller requests do not pin a large block.
            let small = hl_malloc(10);
            assert_ne!(small, again);
            hl_free(small);
            hl_free(again);
            let bigger = hl_malloc(9000);
            assert!(!bigger.is_null() && (bigger as usize).is_multiple_of(ALLOCATION_ALIGN));
            bigger.write_bytes(2, 9000);
            hl_free(bigger);
        })
        .join()
        .unwrap();
    }
}
