//! Property: for any mega-block size, thread count and scheduler, a generated chain executed
//! as mega-blocks gives every block exactly its sequential receipts (and passes every
//! per-block check `run_mega` makes).

use gigagas_bench::{mega_plan, prepare, run_mega, BlockCase, MegaUnit};
use gigagas_exec::{Scheduler, WorkerPool};
use gigagas_gen::{generate, GenOptions, Workload};
use proptest::prelude::*;
use revm::primitives::hardfork::SpecId;
use std::sync::OnceLock;

fn chain() -> &'static gigagas_data::Dataset {
    static DATA: OnceLock<gigagas_data::Dataset> = OnceLock::new();
    DATA.get_or_init(|| {
        let options = GenOptions {
            workload: Workload::MainnetMix,
            blocks: 6,
            block_gas: 2_000_000,
            seed: 5,
            spec: SpecId::AMSTERDAM,
            tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
            senders: 12,
            verify_threads: 2,
            precompiles: Vec::new(),
            slots: None,
            spread: false,
            existing_slots: false,
        };
        let dir = tempfile::tempdir().unwrap();
        generate(&options, &|_| {})
            .unwrap()
            .write(dir.path())
            .unwrap();
        gigagas_data::load(&gigagas_data::DataSource::open(dir.path()).unwrap()).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn mega_blocks_equal_sequential(
        k in 1usize..=6,
        threads in 1usize..=8,
        scheduler in prop::sample::select(Scheduler::ALL.to_vec()),
    ) {
        let cases: Vec<BlockCase<'_>> = chain().blocks.iter().map(|b| prepare(b).unwrap()).collect();
        let pool = WorkerPool::new(threads);
        let units = mega_plan(&cases, k).unwrap();
        prop_assert_eq!(units.len(), cases.len().div_ceil(k));
        for unit in units {
            // A generated chain's pre-states are complete: the first block's is used as is.
            prop_assert!(matches!(unit.pre_state, std::borrow::Cow::Borrowed(_)));
            let run = run_mega(&cases, &unit, &pool, scheduler)
                .unwrap_or_else(|e| panic!("K={k}, {threads} threads, {scheduler}: {e}"));
            let txs: usize = cases[unit.blocks].iter().map(|c| c.prepared.txs.len()).sum();
            prop_assert_eq!(run.tx_nanos.len(), txs);
        }
    }
}

/// Every BAL mutant of a block inside a mega-block is rejected, naming the defect (BAL or
/// lifecycle violation) — the merged index space does not hide a lie.
#[test]
fn a_lie_in_any_block_of_a_mega_block_is_rejected() {
    use gigagas_exec::ExecError;
    use gigagas_verify::{mutation::mutants, VerifyError};
    let pool = WorkerPool::new(2);
    let mut checked = 0;
    for liar in 0..3 {
        let base: Vec<BlockCase<'_>> = chain().blocks[..3]
            .iter()
            .map(|b| prepare(b).unwrap())
            .collect();
        let n = base[liar].prepared.txs.len();
        for mutant in mutants(&base[liar].baseline.access.bal, n, 1) {
            let mut cases: Vec<BlockCase<'_>> = chain().blocks[..3]
                .iter()
                .map(|b| prepare(b).unwrap())
                .collect();
            cases[liar].baseline.access.bal = mutant.bal;
            // A lie is caught when the merged plan is built or when the unit runs.
            let outcome = MegaUnit::new(&cases, 0..cases.len())
                .and_then(|unit| run_mega(&cases, &unit, &pool, Scheduler::Ordered));
            match outcome {
                Err(ExecError::Verify(VerifyError::Bal { .. })) => checked += 1,
                other => panic!(
                    "block {liar}: {:?} ({}) gave {other:?}",
                    mutant.kind, mutant.description
                ),
            }
        }
    }
    assert!(checked >= 15, "only {checked} mutants");
}
