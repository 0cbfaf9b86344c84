//! A BAL is checked, not trusted: each kind of lie in a real block's BAL is rejected by the
//! parallel path with an error naming the index, account and item.

use crate::common;

use alloy_eip7928::{AccountChanges, BalanceChange, BlockAccessIndex};
use gigagas_bench::{prepare, BlockCase};
use gigagas_exec::{execute_parallel, BlockAccess, ExecError, ParallelPlan, Scheduler, WorkerPool};
use gigagas_verify::{BalItem, BalViolation, VerifyError};
use revm::primitives::U256;
use std::sync::OnceLock;

fn dataset() -> &'static gigagas_data::Dataset {
    static DATA: OnceLock<gigagas_data::Dataset> = OnceLock::new();
    DATA.get_or_init(common::embedded)
}

fn case(number: u64) -> BlockCase<'static> {
    let block = dataset()
        .blocks
        .iter()
        .find(|b| b.number() == number)
        .expect("block in sample");
    prepare(block).unwrap()
}

/// Runs `case` in parallel from `access` and returns the error it must produce: at 2 threads
/// (one commit) and at 8 (the commit in lanes), which must reject it for the same reason.
fn run_with(case: &BlockCase<'_>, access: &BlockAccess) -> ExecError {
    let plan = match ParallelPlan::new(case.number(), access, case.prepared.txs.len(), None) {
        Ok(plan) => plan,
        Err(e) => return e,
    };
    let [two, eight] = [2, 8].map(|threads| {
        let pool = WorkerPool::new(threads);
        match execute_parallel(
            &case.prepared,
            &*case.prepared.input.pre_state,
            &plan,
            &pool,
            Scheduler::Ordered,
        ) {
            Ok(_) => panic!("a lying BAL was accepted ({threads} threads)"),
            Err(e) => e,
        }
    });
    assert_eq!(
        reason(&two),
        reason(&eight),
        "2 threads: {two}\n8 threads: {eight}"
    );
    two
}

/// The kind of a rejection (the violation's, for a BAL violation), without its details.
fn reason(err: &ExecError) -> String {
    match err {
        ExecError::Verify(VerifyError::Bal { violation, .. }) => {
            format!("{:?}", std::mem::discriminant(&**violation))
        }
        other => format!("{:?}", std::mem::discriminant(other)),
    }
}

fn violation(err: ExecError) -> BalViolation {
    match err {
        ExecError::Verify(VerifyError::Bal { violation, .. }) => *violation,
        other => panic!("expected a BAL violation, got: {other}"),
    }
}

/// A transaction-index storage write: (account position, slot position, change position).
fn storage_write(access: &BlockAccess, txs: usize) -> (usize, usize, usize) {
    for (a, account) in access.bal.iter().enumerate() {
        for (s, slot) in account.storage_changes.iter().enumerate() {
            for (c, change) in slot.changes.iter().enumerate() {
                let i = change.block_access_index.get();
                if i >= 1 && i <= txs as u64 && slot.changes.len() == 1 {
                    return (a, s, c);
                }
            }
        }
    }
    panic!("no storage write in block");
}

const BLOCK: u64 = 4_370_000; // Byzantium, 97 txs, receipts root checkable

#[test]
fn wrong_post_value_is_rejected() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    let (a, s, c) = storage_write(&access, case.prepared.txs.len());
    let (address, slot) = (access.bal[a].address, access.bal[a].storage_changes[s].slot);
    let change = &mut access.bal[a].storage_changes[s].changes[c];
    change.new_value += U256::from(1);
    let index = change.block_access_index.get();
    match violation(run_with(&case, &access)) {
        BalViolation::WrongWrite {
            index: i,
            address: at,
            item,
            ..
        } => {
            assert_eq!((i, at, item), (index, address, BalItem::Storage(slot)));
        }
        other => panic!("unexpected: {other}"),
    }
}

#[test]
fn missing_write_is_rejected() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    let (a, s, _) = storage_write(&access, case.prepared.txs.len());
    let address = access.bal[a].address;
    let account = &mut access.bal[a];
    let removed = account.storage_changes.remove(s);
    account.storage_reads.push(removed.slot);
    account.storage_reads.sort_unstable();
    let index = removed.changes[0].block_access_index.get();
    match violation(run_with(&case, &access)) {
        BalViolation::WrongWrite {
            index: i,
            address: at,
            item,
            bal,
            ..
        } => {
            assert_eq!(
                (i, at, item),
                (index, address, BalItem::Storage(removed.slot))
            );
            assert_eq!(bal, "no write");
        }
        other => panic!("unexpected: {other}"),
    }
}

#[test]
fn extra_write_is_rejected() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    // An account that is only read: claim tx 0 changed its balance.
    let a = access
        .bal
        .iter()
        .position(|acc| acc.balance_changes.is_empty() && acc.nonce_changes.is_empty())
        .expect("a read-only account");
    access.bal[a].balance_changes.push(BalanceChange::new(
        BlockAccessIndex::new(1),
        U256::from(12345),
    ));
    let address = access.bal[a].address;
    match violation(run_with(&case, &access)) {
        BalViolation::WrongWrite {
            index,
            address: at,
            item,
            actual,
            ..
        } => {
            assert_eq!((index, at, item), (1, address, BalItem::Balance));
            assert_eq!(actual, "no write");
        }
        other => panic!("unexpected: {other}"),
    }
}

#[test]
fn write_at_wrong_index_is_rejected() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    let (a, s, c) = storage_write(&access, case.prepared.txs.len());
    let change = &mut access.bal[a].storage_changes[s].changes[c];
    let index = change.block_access_index.get();
    change.block_access_index = BlockAccessIndex::new(index + 1);
    let v = violation(run_with(&case, &access));
    // The transaction that really wrote the slot is caught first.
    assert_eq!(v.index(), Some(index), "{v}");
}

#[test]
fn missing_read_is_rejected() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    let a = access
        .bal
        .iter()
        .position(|acc| !acc.storage_reads.is_empty())
        .expect("an account with storage reads");
    let slot = access.bal[a].storage_reads.remove(0);
    let address = access.bal[a].address;
    match violation(run_with(&case, &access)) {
        BalViolation::MissingAccess {
            address: at, item, ..
        } => assert_eq!((at, item), (address, BalItem::Storage(slot))),
        other => panic!("unexpected: {other}"),
    }
}

#[test]
fn missing_account_is_rejected() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    let a = access
        .bal
        .iter()
        .position(|acc: &AccountChanges| !acc.has_changes() && acc.storage_reads.is_empty())
        .expect("an account that is only touched");
    let removed = access.bal.remove(a);
    match violation(run_with(&case, &access)) {
        BalViolation::MissingAccess { address, item, .. } => {
            assert_eq!((address, item), (removed.address, BalItem::Account))
        }
        other => panic!("unexpected: {other}"),
    }
}

#[test]
fn extra_read_is_caught_by_the_rebuilt_bal() {
    let case = case(BLOCK);
    let mut access = case.baseline.access.clone();
    let address = access.bal[0].address;
    let account = &mut access.bal[0];
    account.storage_reads.push(U256::MAX);
    account.storage_reads.sort_unstable();
    match violation(run_with(&case, &access)) {
        BalViolation::RebuiltDiffers(what) => {
            assert!(what.contains(&format!("{address}")), "{what}")
        }
        other => panic!("unexpected: {other}"),
    }
}

#[test]
fn non_canonical_bals_are_rejected() {
    let case = case(BLOCK);
    let mut duplicate = case.baseline.access.clone();
    let first = duplicate.bal[0].clone();
    duplicate.bal.insert(0, first);
    assert!(matches!(
        violation(run_with(&case, &duplicate)),
        BalViolation::Malformed(_)
    ));

    let mut unordered = case.baseline.access.clone();
    unordered.bal.swap(0, 1);
    assert!(matches!(
        violation(run_with(&case, &unordered)),
        BalViolation::Malformed(_)
    ));
}

#[test]
fn lifecycle_records_are_checked_not_trusted() {
    // Block 2,462,997 (Homestead, the 2016 DoS clean-up era) materialises and destroys
    // accounts; without its records the parallel path must fail, not guess.
    let case = case(2_462_997);
    assert!(!case.baseline.access.lifecycle.is_empty());
    let access = BlockAccess {
        bal: case.baseline.access.bal.clone(),
        lifecycle: Default::default(),
    };
    let err = run_with(&case, &access);
    assert!(
        matches!(err, ExecError::Lifecycle { .. }),
        "expected a lifecycle error, got: {err}"
    );
}

/// The generic mutation suite (`gigagas_verify::mutation`) on real mainnet blocks of several
/// forks: every mutant is rejected with a BAL or lifecycle error.
#[test]
fn generic_mutants_of_mainnet_blocks_are_all_rejected() {
    use gigagas_verify::mutation::{mutants, MutationKind};
    let mut rejected = std::collections::BTreeMap::<MutationKind, usize>::new();
    for number in [1_150_000, 2_462_997, 4_370_000, 12_244_000, 19_426_587] {
        let case = case(number);
        let n = case.prepared.txs.len();
        for mutant in mutants(&case.baseline.access.bal, n, 2) {
            let access = BlockAccess {
                bal: mutant.bal,
                lifecycle: case.baseline.access.lifecycle.clone(),
            };
            match run_with(&case, &access) {
                ExecError::Verify(VerifyError::Bal { .. }) | ExecError::Lifecycle { .. } => {
                    *rejected.entry(mutant.kind).or_default() += 1;
                }
                other => panic!(
                    "block {number}: {:?} mutant ({}) rejected without naming the defect: {other}",
                    mutant.kind, mutant.description
                ),
            }
        }
    }
    for kind in MutationKind::ALL {
        assert!(
            rejected.get(&kind).copied().unwrap_or(0) >= 2,
            "{kind:?}: {rejected:?}"
        );
    }
}

/// Below the small-block threshold the parallel path runs the block sequentially: the true
/// BAL gives the baseline's receipts, and a lie is still rejected (the rebuilt BAL differs),
/// naming the account.
#[test]
fn the_small_block_path_checks_the_bal_too() {
    let case = case(BLOCK);
    let pool = WorkerPool::new(2);
    let run = |access: &BlockAccess| {
        let mut plan =
            ParallelPlan::new(case.number(), access, case.prepared.txs.len(), None).unwrap();
        plan.set_small_block_gas(case.prepared.input.gas_used() + 1);
        execute_parallel(
            &case.prepared,
            &*case.prepared.input.pre_state,
            &plan,
            &pool,
            Scheduler::Ordered,
        )
    };
    let honest = run(&case.baseline.access).unwrap();
    assert_eq!(honest.receipts, case.baseline.receipts);
    assert_eq!(
        honest.commit_nanos, 0,
        "the small path has no canonical commit"
    );

    let mut access = case.baseline.access.clone();
    let (a, s, c) = storage_write(&access, case.prepared.txs.len());
    let address = access.bal[a].address;
    access.bal[a].storage_changes[s].changes[c].new_value += U256::from(1);
    match violation(run(&access).unwrap_err()) {
        BalViolation::RebuiltDiffers(what) => {
            assert!(what.contains(&address.to_string()), "{what}")
        }
        other => panic!("unexpected: {other}"),
    }
    // At the threshold itself the block runs on the pool (the check is `gas < threshold`).
    let mut plan =
        ParallelPlan::new(case.number(), &access, case.prepared.txs.len(), None).unwrap();
    plan.set_small_block_gas(case.prepared.input.gas_used());
    let err = execute_parallel(
        &case.prepared,
        &*case.prepared.input.pre_state,
        &plan,
        &pool,
        Scheduler::Ordered,
    )
    .unwrap_err();
    assert!(matches!(violation(err), BalViolation::WrongWrite { .. }));
}
