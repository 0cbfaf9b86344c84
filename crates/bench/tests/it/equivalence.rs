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
