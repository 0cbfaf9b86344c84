//! The contention floor (`bench --contention-floor`): every stream runs its own deep copy,
//! the 1-stream ratios (summed and per-transaction medians) are 1 by construction, every thread count is reported over every round,
//! and a block that fails verification ends the measurement with its error (no stream hangs
//! on the barrier).

use crate::common;

use gigagas_bench::floor::contention_floor;
use gigagas_lab::FloorSharing;
use revm::database_interface::DatabaseRef;

#[test]
fn floor_reports_every_thread_count_and_one_stream_is_the_reference() {
    let data = common::embedded();
    let blocks = &data.blocks[..4];
    let floor = contention_floor(blocks, &[3, 2], 2, FloorSharing::Nothing, &|| {}).unwrap();
    let threads: Vec<usize> = floor.iter().map(|f| f.threads).collect();
    assert_eq!(threads, [1, 2, 3], "1 is always measured, counts sorted");
    for f in &floor {
        assert_eq!(f.rounds, 2, "{f:?}");
        assert!(
            f.tx_work_ratio.is_finite() && f.tx_work_ratio > 0.0,
            "{f:?}"
        );
        assert!(
            f.p10 <= f.tx_work_ratio && f.tx_work_ratio <= f.p90,
            "{f:?}"
        );
        let typical = f.median_tx_ratio.expect("per-transaction medians measured");
        assert!(typical.is_finite() && typical > 0.0, "{f:?}");
    }
    assert_eq!(floor[0].tx_work_ratio, 1.0, "one stream against itself");
    assert_eq!(
        floor[0].median_tx_ratio,
        Some(1.0),
        "one stream against itself"
    );
}

#[test]
fn a_block_that_fails_verification_ends_the_floor_with_its_error() {
    let data = common::embedded();
    let mut blocks = data.blocks[..3].to_vec();
    blocks[1].header.gas_used += 1;
    let number = blocks[1].number();
    let err = contention_floor(&blocks, &[2], 1, FloorSharing::Nothing, &|| {}).unwrap_err();
    assert!(err.to_string().contains(&number.to_string()), "{err}");
}

#[test]
fn a_deep_clone_shares_no_code_and_executes_the_same() {
    let data = common::embedded();
    let block = data
        .blocks
        .iter()
        .find(|b| b.pre_state.accounts().any(|(_, a)| has_code(a)))
        .expect("a block with contract code");
    let copy = block.deep_clone();
    let (address, account) = block
        .pre_state
        .accounts()
        .find(|(_, a)| has_code(a))
        .unwrap();
    let hash = account.info.code_hash;
    let a = block.pre_state.code_by_hash_ref(hash).unwrap();
    let b = copy.pre_state.code_by_hash_ref(hash).unwrap();
    assert_eq!(a.original_byte_slice(), b.original_byte_slice());
    assert_ne!(
        a.original_byte_slice().as_ptr(),
        b.original_byte_slice().as_ptr(),
        "code of {address} shared"
    );
    let copied = copy.pre_state.account(address).unwrap();
    assert_eq!(copied.storage, account.storage);
    assert_eq!(copy.transactions.len(), block.transactions.len());
    for (x, y) in block.transactions.iter().zip(&copy.transactions) {
        assert_eq!(x.hash(), y.hash());
    }
    let (one, two) = (
        gigagas_bench::prepare(block).unwrap(),
        gigagas_bench::prepare(&copy).unwrap(),
    );
    assert_eq!(one.baseline.receipts, two.baseline.receipts);
}

fn has_code(account: &gigagas_data::PreAccount) -> bool {
    account
        .info
        .code
        .as_ref()
        .is_some_and(|c| !c.original_byte_slice().is_empty())
}

#[test]
fn shared_inputs_variant_reports_its_sharing() {
    let data = common::embedded();
    let floor = contention_floor(&data.blocks[..3], &[2], 1, FloorSharing::Inputs, &|| {}).unwrap();
    assert_eq!(floor.len(), 2);
    assert!(floor
        .iter()
        .all(|f| f.sharing == FloorSharing::Inputs && f.rounds == 1));
    assert_eq!(floor[0].tx_work_ratio, 1.0);
}

/// Streams whose private copies would not fit in memory are refused before any stream
/// starts, naming the streams, the size of one copy, the total and what is available; the
/// same blocks fit when the memory does.
#[test]
fn a_floor_that_would_not_fit_in_memory_is_refused_with_the_numbers() {
    let data = common::embedded();
    let blocks = &data.blocks[..2];
    let err = gigagas_bench::floor::check_memory(blocks, 64, 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("64 streams each hold a private copy")
            && err.contains("GiB in all")
            && err.contains("0.00 GiB available"),
        "{err}"
    );
    gigagas_bench::floor::check_memory(blocks, 64, u64::MAX).unwrap();
}
