//! A counting global allocator for diagnostics: how many allocations each thread makes.
//!
//! The binary installs [`CountingAlloc`] only when built with the `count-alloc` feature
//! (`cargo build --release --features gigagas-cli/count-alloc`), which also turns on
//! gigagas-exec's `count-alloc` feature: only then do the executors read
//! [`thread_allocations`] around each transaction (a normal build reads nothing there; the
//! always-on reads measured 2-9% slower). [`counting`] says whether the allocator is
//! installed. Counts are
//! per thread (a thread-local cell, no shared cache line), so counting does not add the kind
//! of sharing it is meant to find.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    cell::Cell,
    sync::atomic::{AtomicBool, Ordering},
};

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting every allocation (`alloc`, `alloc_zeroed`, `realloc`) of
/// the calling thread.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

#[inline]
fn count() {
    // `try_with`: a thread being torn down has no cell any more; its allocations go uncounted.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to `System`; counting touches only a
// const-initialised thread-local without a destructor, which never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations the calling thread has made so far (0 when [`CountingAlloc`] is not the
/// global allocator).
#[inline]
pub fn thread_allocations() -> u64 {
    ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
}

/// Whether [`CountingAlloc`] is the process's global allocator (it has counted at least one
/// allocation).
pub fn counting() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}
