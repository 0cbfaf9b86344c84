//! Property: for any thread count, scheduler and selection of real blocks, parallel execution
//! from the BAL gives exactly the sequential receipts and post-state (a block run alone
//! commits while it executes, in whatever order its workers finish).

use crate::common;

use gigagas_bench::prepare;
use gigagas_exec::{execute_parallel, Scheduler, WorkerPool};
use proptest::prelude::*;
use std::sync::OnceLock;

fn dataset() -> &'static gigagas_data::Dataset {
    static DATA: OnceLock<gigagas_data::Dataset> = OnceLock::new();
    DATA.get_or_init(common::embedded)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn parallel_equals_sequential(
        threads in 1usize..=16,
        scheduler in prop::sample::select(Scheduler::ALL.to_vec()),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let data = dataset();
        // Odd thread counts with the workers kept awake between blocks (as `run` and `bench`
        // build the pool), even ones without.
        let pool = if threads % 2 == 1 {
            WorkerPool::with_warm_spin(threads, gigagas_exec::WARM_SPIN)
        } else {
            WorkerPool::new(threads)
        };
        for pick in picks {
            let block = &data.blocks[pick.index(data.blocks.len())];
            let case = prepare(block).unwrap();
            let run = execute_parallel(&case.prepared, &*block.pre_state, &case.plan, &pool, scheduler)
                .unwrap_or_else(|e| panic!("{threads} threads, {scheduler}: {e}"));
            prop_assert_eq!(&run.receipts, &case.baseline.receipts);
            prop_assert_eq!(
                gigagas_engine::post_state_root(&block.pre_state, &run.post),
                gigagas_engine::post_state_root(&block.pre_state, &case.baseline.post),
                "block {}: post-state", block.number()
            );
            prop_assert_eq!(run.tx_nanos.len(), block.transactions.len());
            prop_assert!(run.tx_worker.iter().all(|&w| (w as usize) < threads));
        }
    }
}

/// With the workers running queued jobs between transactions (as the pipeline sets the pool
/// when senders come from a GPU), every bundled block still gives the sequential receipts
/// and post-state while another thread keeps handing the pool parallel jobs of its own (the
/// pipeline's verification and roots), and each of those jobs still computes its own value.
#[test]
fn parallel_equals_sequential_while_workers_run_queued_jobs() {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let data = dataset();
    for threads in [2, 8] {
        let pool = WorkerPool::with_warm_spin(threads, gigagas_exec::WARM_SPIN);
        let guard = pool.yield_between_transactions();
        assert!(pool.yields());
        let stop = AtomicBool::new(false);
        let jobs = AtomicUsize::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let sum: u64 = pool
                        .rayon_pool()
                        .install(|| (0..20_000u64).into_par_iter().map(|i| i * i % 7).sum());
                    let expected: u64 = (0..20_000u64).map(|i| i * i % 7).sum();
                    assert_eq!(sum, expected);
                    jobs.fetch_add(1, Ordering::Relaxed);
                }
            });
            for block in &data.blocks {
                let case = prepare(block).unwrap();
                for scheduler in Scheduler::ALL {
                    let run = execute_parallel(
                        &case.prepared,
                        &*block.pre_state,
                        &case.plan,
                        &pool,
                        scheduler,
                    )
                    .unwrap_or_else(|e| panic!("{threads} threads, {scheduler}: {e}"));
                    assert_eq!(
                        run.receipts,
                        case.baseline.receipts,
                        "block {}",
                        block.number()
                    );
                    assert_eq!(
                        gigagas_engine::post_state_root(&block.pre_state, &run.post),
                        gigagas_engine::post_state_root(&block.pre_state, &case.baseline.post),
                        "block {}: post-state",
                        block.number()
                    );
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(
            jobs.load(Ordering::Relaxed) > 0,
            "no job of the other thread ran"
        );
        drop(guard);
        assert!(!pool.yields(), "the guard restores the setting");
    }
}
