//! The counting allocator installed as this test binary's global allocator.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use gigagas_alloc::{counting, thread_allocations, CountingAlloc};
use std::hint::black_box;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn counts_this_threads_allocations_only() {
    let _warm = black_box(vec![0u8; 8]);
    assert!(counting());
    let before = thread_allocations();
    let boxes: Vec<Box<u64>> = (0..10).map(|i| black_box(Box::new(i))).collect();
    // Ten boxes and the vector holding them.
    assert_eq!(thread_allocations() - before, 11);
    drop(boxes);
    // Another thread's allocations are not this thread's.
    let before = thread_allocations();
    let other = std::thread::spawn(|| {
        let start = thread_allocations();
        let v: Vec<Vec<u8>> = (0..100).map(|_| black_box(vec![1u8; 16])).collect();
        black_box(v);
        thread_allocations() - start
    });
    let theirs = other.join().unwrap();
    assert_eq!(theirs, 101);
    let mine = thread_allocations() - before;
    assert!(
        mine < 100,
        "spawning a thread counted {mine} allocations here"
    );
    // Growing a vector counts its reallocations.
    let before = thread_allocations();
    let mut v: Vec<u64> = Vec::new();
    for i in 0..1000 {
        v.push(black_box(i));
    }
    let grown = thread_allocations() - before;
    assert!(
        (5..=20).contains(&grown),
        "{grown} allocations for 1000 pushes"
    );
}
