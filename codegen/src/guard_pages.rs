//! The runtime's debug allocator: with `HL_GUARD_PAGES=end` (or `start`)
//! in the environment, every heap allocation of generated code gets pages
//! of its own, its last byte right before an inaccessible guard page (or
//! its first byte right after one), and its pages are unmapped when it is
//! freed. An access past the end (or before the start) of an allocation,
//! or after it was freed, then faults at once instead of corrupting
//! memory. In this mode code generation also puts the small constant-size
//! allocations it would keep on the stack on the heap, so that every
//! allocation is guarded. For hunting compiler bugs: each allocation costs
//! system calls and at least two pages.
//!
//! An allocation of `n` elements of `b` bytes placed to end at a page
//! boundary starts at a multiple of `b` (a power of two dividing the page
//! size), so elements stay naturally aligned.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Which end of each allocation touches its guard page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardSide {
    /// The byte after the last one is inaccessible (catches overruns).
    End,
    /// The byte before the first one is inaccessible (catches underruns).
    Start,
}

/// The mode of this process, read once from `HL_GUARD_PAGES`.
pub fn mode() -> Option<GuardSide> {
    static MODE: OnceLock<Option<GuardSide>> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("HL_GUARD_PAGES").ok()?.trim() {
        "end" | "1" => Some(GuardSide::End),
        "start" => Some(GuardSide::Start),
        _ => None,
    })
}

/// The mapping behind each live guarded allocation: address returned to
/// generated code, to (mapping base, mapping length).
fn mappings() -> &'static Mutex<HashMap<usize, (usize, usize)>> {
    static MAPPINGS: OnceLock<Mutex<HashMap<usize, (usize, usize)>>> = OnceLock::new();
    MAPPINGS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// Allocates `bytes` bytes against a guard page on `side`; null on failure.
pub fn allocate(bytes: usize, side: GuardSide) -> *mut u8 {
    let page = page_size();
    let Some(data) = bytes.checked_next_multiple_of(page).map(|d| d.max(page)) else {
        return std::ptr::null_mut();
    };
    let Some(length) = data.checked_add(page) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a fresh anonymous private mapping; nothing else refers to it.
    let base = unsafe {
        libc::mmap(std::ptr::null_mut(), length, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    };
    if base == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    let base = base as usize;
    let (guard, ptr) = match side {
        GuardSide::End => (base + data, base + data - bytes),
        GuardSide::Start => (base, base + page),
    };
    // SAFETY: `guard` is a page of the mapping just made.
    if unsafe { libc::mprotect(guard as *mut libc::c_void, page, libc::PROT_NONE) } != 0 {
        // SAFETY: the mapping just made, not handed out.
        unsafe { libc::munmap(base as *mut libc::c_void, length) };
        return std::ptr::null_mut();
    }
    mappings().lock().unwrap_or_else(|e| e.into_inner()).insert(ptr, (base, length));
    ptr as *mut u8
}

/// Unmaps an allocation of [`allocate`]; returns false if `ptr` is not one.
pub fn free(ptr: *mut u8) -> bool {
    let Some((base, length)) = mappings().lock().unwrap_or_else(|e| e.into_inner()).remove(&(ptr as usize)) else {
        return false;
    };
    // SAFETY: the mapping was made by `allocate` and is freed once (it was
    // just removed from the table).
    unsafe { libc::munmap(base as *mut libc::c_void, length) };
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_end_or_start_at_their_guard_page_and_are_naturally_aligned() {
        let page = page_size();
        for side in [GuardSide::End, GuardSide::Start] {
            for bytes in [0usize, 4, 12, 4096, 5000, 3 * 4096 + 8] {
                let p = allocate(bytes, side);
                assert!(!p.is_null());
                let at = p as usize;
                match side {
                    GuardSide::End => assert_eq!((at + bytes) % page, 0, "{bytes} bytes end at a page boundary"),
                    GuardSide::Start => assert_eq!(at % page, 0, "{bytes} bytes start at a page boundary"),
                }
                assert_eq!(at % 4, 0);
                // Every byte of the allocation is usable.
                // SAFETY: `bytes` bytes at `p` were just allocated.
                unsafe { std::ptr::write_bytes(p, 0xAB, bytes) };
                assert!(free(p));
                assert!(!free(p), "a second free is refused, not performed");
            }
        }
    }
}
