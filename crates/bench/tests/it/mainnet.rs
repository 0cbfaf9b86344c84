//! Every bundled mainnet block verifies sequentially and in parallel with every scheduler at
//! 1, 2, 3 and 8 threads: gas used, logs bloom and (from Byzantium) receipts root against the
//! header, parallel == sequential per transaction, every transaction against the BAL, and the
//! rebuilt BAL against the sequential one.

use crate::common;

use gigagas_bench::{prepare, run_block, Mode};
use gigagas_data::Dataset;
use gigagas_exec::{Scheduler, WorkerPool};

fn verify_everywhere(dataset: &Dataset) {
    let cases: Vec<_> = dataset
        .blocks
        .iter()
        .map(|b| prepare(b).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    for case in &cases {
        run_block(case, Mode::Sequential, None).unwrap_or_else(|e| panic!("{e}"));
    }
    for threads in [1, 2, 3, 8] {
        // As `run` and `bench` build it: workers kept awake between blocks.
        let pool = WorkerPool::with_warm_spin(threads, gigagas_exec::WARM_SPIN);
        for scheduler in Scheduler::ALL {
            for case in &cases {
                run_block(case, Mode::Parallel { threads, scheduler }, Some(&pool))
                    .unwrap_or_else(|e| panic!("{threads} threads, {scheduler}: {e}"));
            }
        }
    }
    // The set spans Frontier to Cancun; receipts roots are checkable from Byzantium on.
    let with_root = cases
        .iter()
        .filter(|c| c.header_check.receipts_root)
        .count();
    let byzantium_on = cases.iter().filter(|c| c.number() >= 4_370_000).count();
    assert_eq!(with_root, byzantium_on);
    // Pre-Cancun self-destructs and pre-EIP-161 materialisations occur in this set, so the
    // lifecycle records are exercised, not just present.
    let events: usize = cases
        .iter()
        .map(|c| c.baseline.access.lifecycle.len())
        .sum();
    assert!(events > 0, "no lifecycle events in the mainnet set");
}

#[test]
fn bundled_sample_verifies_in_every_mode() {
    let dataset = common::embedded();
    assert_eq!(
        dataset.blocks.len(),
        50,
        "the bundled sample holds all 50 mainnet blocks"
    );
    verify_everywhere(&dataset);
}

#[test]
#[cfg_attr(
    not(gigagas_shared_mainnet),
    ignore = "needs ../shared/data/mainnet (GIGAGAS_SHARED_DATA)"
)]
fn shared_mainnet_set_verifies_in_every_mode() {
    let dataset = common::shared_mainnet();
    assert_eq!(dataset.blocks.len(), 50);
    verify_everywhere(&dataset);
}

/// The runs of consecutive mainnet blocks in the set (Spurious Dragon → Byzantium, Istanbul →
/// Berlin, London → Paris: every one crosses a fork) execute as mega-blocks: each transaction
/// under its own block's rules, from the pre-state merged from both blocks' pre-states, and
/// every block verifies exactly as on its own.
#[test]
fn consecutive_mainnet_blocks_run_as_mega_blocks() {
    let dataset = common::embedded();
    let cases: Vec<_> = dataset
        .blocks
        .iter()
        .map(|b| prepare(b).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let units = gigagas_bench::mega_plan(&cases, 50).unwrap_or_else(|e| panic!("{e}"));
    let pairs: Vec<Vec<u64>> = units
        .iter()
        .filter(|u| u.blocks.len() > 1)
        .map(|u| cases[u.blocks.clone()].iter().map(|c| c.number()).collect())
        .collect();
    assert_eq!(
        pairs,
        vec![
            vec![4_369_999, 4_370_000],
            vec![12_243_999, 12_244_000],
            vec![15_537_393, 15_537_394],
        ]
    );
    for threads in [1, 3] {
        let pool = WorkerPool::new(threads);
        for scheduler in Scheduler::ALL {
            for unit in &units {
                let blocks = &cases[unit.blocks.clone()];
                let run = gigagas_bench::run_mega(&cases, unit, &pool, scheduler)
                    .unwrap_or_else(|e| panic!("{threads} threads, {scheduler}: {e}"));
                let txs: usize = blocks.iter().map(|c| c.prepared.txs.len()).sum();
                assert_eq!(run.tx_nanos.len(), txs);
            }
        }
    }
}
