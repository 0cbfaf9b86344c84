//! The sequential path without the BAL builder (`Mode::SequentialNoBal`, a plain revm
//! `State`) against the baseline that builds it, on every bundled mainnet block (Frontier to
//! Cancun): the same receipts, the same final state of every touched account, and a verified
//! run (gas, bloom, receipts root against the header).

use gigagas_data::DataSource;
use gigagas_engine::{post_state_root, prepare, run_block, Mode};
use gigagas_exec::{execute_sequential, execute_sequential_without_bal};

#[test]
fn plain_sequential_run_equals_the_bal_building_one_on_every_bundled_block() {
    let dataset = gigagas_data::load(&DataSource::embedded().unwrap()).unwrap();
    assert_eq!(dataset.blocks.len(), 50);
    let mut txs = 0;
    for block in &dataset.blocks {
        let case = prepare(block).unwrap();
        let pre = &*block.pre_state;
        let with_bal = execute_sequential(&case.prepared, pre).unwrap();
        let plain = execute_sequential_without_bal(&case.prepared, pre).unwrap();
        assert_eq!(
            plain.receipts,
            with_bal.receipts,
            "block {}",
            block.number()
        );
        assert_eq!(plain.tx_nanos.len(), block.transactions.len());
        // Every touched account ends in the same state: the same root over the (touched-only)
        // pre-state with the changes applied.
        assert_eq!(
            post_state_root(pre, &plain.post),
            post_state_root(pre, &with_bal.post),
            "block {}",
            block.number()
        );
        // The mode verifies like the baseline (receipts against it, header values).
        let run = run_block(&case, Mode::SequentialNoBal, None).unwrap();
        assert_eq!(run.tx_nanos.len(), block.transactions.len());
        assert_eq!((run.head_nanos, run.commit_nanos), (0, 0));
        txs += block.transactions.len();
    }
    assert!(txs > 10_000, "{txs} transactions compared");
    assert_eq!(Mode::SequentialNoBal.to_string(), "sequential-nobal");
    assert_eq!(Mode::SequentialNoBal.threads(), 1);
}

/// A block whose receipts the plain run cannot reproduce is refused by the mode's
/// verification: a header claiming other gas fails `run_block` in `SequentialNoBal` too.
#[test]
fn plain_sequential_run_is_checked_against_the_header() {
    let dataset = gigagas_data::load(&DataSource::embedded().unwrap()).unwrap();
    let block = dataset
        .blocks
        .iter()
        .find(|b| b.transactions.len() > 1)
        .unwrap();
    let case = prepare(block).unwrap();
    let mut wrong = block.clone();
    wrong.header.gas_used += 1;
    let prepared = gigagas_exec::PreparedBlock {
        input: &wrong,
        ..case.prepared.clone()
    };
    let plan = gigagas_engine::plan_from(&prepared, &case.baseline.access, &case.baseline).unwrap();
    let wrong_case = gigagas_engine::BlockCase {
        prepared,
        baseline: case.baseline.clone(),
        plan,
        recover_nanos: 0,
        bal_prepare_nanos: 0,
        header_check: case.header_check,
        state_root_checked: false,
    };
    let e = run_block(&wrong_case, Mode::SequentialNoBal, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("gas"), "{e}");
}
