//! The BAL-parallel executor: every transaction runs at once against "pre-state + BAL writes
//! of earlier indices"; results merge in block order and are checked against the BAL.

use crate::{
    commit::{commit_block, commit_lanes, StreamCommit},
    lifecycle::{events_of, LifecycleEvent},
    receipt_of,
    worker_db::WorkerDb,
    BlockAccess, ExecError, Lifecycle, PreparedBlock, Scheduler, StateProvider, WorkerPool,
};
use alloy_eip7928::{validate_block_access_list, BlockAccessIndex, BlockAccessList};
use alloy_primitives::Address;
use gigagas_data::PreStateError;
use gigagas_receipt::TxReceipt;
use gigagas_verify::{
    bal_divergence, check_tx_against_bal, count_writes_per_index, BalItem, BalViolation,
};
use revm::{
    context::{result::EVMError, ContextTr},
    database_interface::bal::EvmDatabaseError,
    handler::{instructions::EthInstructions, MainBuilder},
    primitives::AddressIndexMap,
    state::{
        bal::{AccountBal, Bal, BalError},
        EvmState,
    },
    ExecuteEvm,
};
use std::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, OnceLock,
    },
    time::Instant,
};

/// A block's BAL prepared for parallel execution: validated, converted to revm's lookup
/// structure, with per-index write counts for the completeness check.
#[derive(Debug)]
pub struct ParallelPlan {
    bal: Arc<Bal>,
    expected: BlockAccessList,
    writes_per_index: Vec<u32>,
    lifecycle: Lifecycle,
    events_by_index: Vec<Vec<(Address, LifecycleEvent)>>,
    gas_weights: Option<Vec<u64>>,
    small_block_gas: u64,
}

/// The small-block threshold `gigagas run` and `bench` use by default
/// ([`ParallelPlan::set_small_block_gas`]): blocks whose header states less gas used run
/// through the sequential executor on the calling thread, their rebuilt BAL required to equal
/// the plan's, instead of waking the worker pool — below it the pool's fixed cost per block
/// outweighs the parallel gain. A plan starts with the threshold off (0), so that the
/// verification tools (conformance, differential, `gen`) exercise the parallel machinery on
/// every block. Measured on the 2-core development VM
/// (`docs/results/small-block-threshold-2core.md`): on blocks of independent transfers 2
/// workers lost to the sequential executor by 1.5–2× up to 0.6M gas, by 8% at 1.26M, and
/// won by 6% at 2.6M.
pub const SMALL_BLOCK_GAS: u64 = 1_500_000;

impl ParallelPlan {
    /// Validates `access` for a block of `tx_count` transactions. `gas_weights` (gas used per
    /// transaction from an earlier run) enable the gas-used scheduler.
    pub fn new(
        block: u64,
        access: &BlockAccess,
        tx_count: usize,
        gas_weights: Option<Vec<u64>>,
    ) -> Result<Self, ExecError> {
        Self::new_owned(block, access.clone(), tx_count, gas_weights)
    }

    /// [`Self::new`] keeping `access` itself (no copy of the list).
    pub fn new_owned(
        block: u64,
        access: BlockAccess,
        tx_count: usize,
        gas_weights: Option<Vec<u64>>,
    ) -> Result<Self, ExecError> {
        // Validation and revm's lookup structure are independent: on the current pool at
        // once (measured on a dense 300M block: this step was a quarter of the work around
        // execution, most of it the list's hash, which the comparison no longer needs).
        let (valid, bal) = rayon::join(
            || validate_block_access_list(&access.bal, tx_count),
            || lookup_from_alloy(&access.bal),
        );
        valid.map_err(|e| ExecError::bal(block, BalViolation::Malformed(e.to_string())))?;
        let bal =
            bal.map_err(|e| ExecError::bal(block, BalViolation::Malformed(format!("{e:?}"))))?;
        let max_index = tx_count as u64 + 1;
        Ok(Self {
            writes_per_index: count_writes_per_index(&bal, max_index),
            bal: Arc::new(bal),
            events_by_index: access.lifecycle.by_index(max_index),
            expected: access.bal,
            lifecycle: access.lifecycle,
            gas_weights,
            small_block_gas: 0,
        })
    }

    /// Sets the small-block threshold of [`execute_parallel`] (0, the default, runs every
    /// block on the worker pool; [`SMALL_BLOCK_GAS`] is the measured policy).
    pub fn set_small_block_gas(&mut self, gas: u64) {
        self.small_block_gas = gas;
    }

    /// The small-block threshold in force, gas.
    pub fn small_block_gas(&self) -> u64 {
        self.small_block_gas
    }

    /// The BAL as revm's lookup structure.
    pub(crate) fn bal(&self) -> &Bal {
        &self.bal
    }

    /// The BAL as the block gave it.
    pub(crate) fn expected(&self) -> &BlockAccessList {
        &self.expected
    }
}

/// revm's lookup structure of `list`: the map of accounts made first, in list order, then
/// each account converted into its entry on the current pool (revm's `Bal::clone_from_alloy`
/// converts them one after another: on a dense 300M block it was the whole of the BAL's
/// preparation, ~3 ms a block whatever the thread count). The error is that of the first
/// account in list order whose code does not decode, as with revm's conversion.
pub(crate) fn lookup_from_alloy(
    list: &[alloy_eip7928::AccountChanges],
) -> Result<Bal, revm::bytecode::BytecodeDecodeError> {
    use rayon::prelude::*;
    let mut accounts = AddressIndexMap::with_capacity_and_hasher(list.len(), Default::default());
    for account in list {
        accounts.insert(account.address, AccountBal::default());
    }
    if accounts.len() != list.len() {
        // An account named twice (a list its validation refuses): revm's conversion, whose
        // later entry replaces the earlier.
        return Bal::clone_from_alloy(list);
    }
    let entries: Vec<&mut AccountBal> = accounts.values_mut().collect();
    let failed = entries
        .into_par_iter()
        .zip(list.par_iter())
        .with_min_len(64)
        .map(|(entry, account)| AccountBal::clone_from_alloy(account).map(|(_, bal)| *entry = bal))
        .find_first(Result::is_err);
    match failed {
        Some(Err(e)) => Err(e),
        _ => Ok(Bal { accounts }),
    }
}

/// Result of a parallel run.
#[derive(Debug, Clone)]
pub struct ParallelRun {
    /// One receipt per transaction, merged in block order.
    pub receipts: Vec<TxReceipt>,
    /// Time of each transaction on its worker (execution and its check against the BAL), ns.
    pub tx_nanos: Vec<u64>,
    /// Worker that ran each transaction.
    pub tx_worker: Vec<u32>,
    /// Heap allocations the transactions made on their workers, summed (0 unless the
    /// counting allocator is installed: `gigagas_alloc`).
    pub tx_allocations: u64,
    /// Wall time of the worker phase (all transactions executed and checked against the BAL,
    /// receipts merged), nanoseconds. A block run alone commits while it executes: the part
    /// of the commit the workers did is in here.
    pub exec_nanos: u64,
    /// The head of `exec_nanos`: from its start until the last worker that ran a
    /// transaction took its first one (waking the pool's threads and building each worker's
    /// EVM), nanoseconds. Time every worker but the first spends idle at a block's start.
    pub head_nanos: u64,
    /// The serial tail of `exec_nanos`: after the last worker finished its last transaction,
    /// joining the workers back (waking the caller if it waited), collecting the results and
    /// merging the receipts in block order, nanoseconds.
    pub serial_nanos: u64,
    /// Wall time of the canonical commit after the workers: post-execution, the BAL
    /// rebuilt and compared, and whatever of the transactions' state changes the workers
    /// left (all of them for a mega-block's blocks and before Byzantium, with pre-execution);
    /// nanoseconds.
    pub commit_nanos: u64,
    /// Every account the block touched, in its final state after the canonical commit (the
    /// input of `gigagas_state::apply_changes`).
    pub post: gigagas_data::PostState,
}

/// A transaction's outcome as a worker hands it over.
pub(crate) struct TxDone {
    /// Its receipt, built on the worker; the block-order merge only fills in the cumulative
    /// gas ([`merge_receipts`] takes it).
    pub(crate) receipt: Option<TxReceipt>,
    pub(crate) diff: EvmState,
    pub(crate) nanos: u64,
    pub(crate) worker: u32,
    /// Heap allocations on the worker while it ran and checked the transaction.
    pub(crate) allocations: u64,
}

impl TxDone {
    /// Builds transaction `tx`'s receipt from `out` (cumulative gas 0 until the merge); its
    /// time on the worker and its allocations, receipt included, are counted from `started`
    /// (the time and the thread's allocation count when it was picked up).
    pub(crate) fn new(
        tx: &revm::context::TxEnv,
        out: revm::context::result::ResultAndState,
        started: (Instant, u64),
        worker: usize,
    ) -> Self {
        let receipt = receipt_of(tx, out.result, 0);
        Self {
            receipt: Some(receipt),
            diff: out.state,
            nanos: started.0.elapsed().as_nanos() as u64,
            worker: worker as u32,
            allocations: crate::thread_allocations() - started.1,
        }
    }
}

pub(crate) fn evm_error(
    block: u64,
    tx: usize,
    index: BlockAccessIndex,
    err: EVMError<EvmDatabaseError<PreStateError>>,
) -> ExecError {
    let missing = |address, item| {
        ExecError::bal(
            block,
            BalViolation::MissingAccess {
                index: index.get(),
                address,
                item,
            },
        )
    };
    match err {
        EVMError::Database(EvmDatabaseError::Bal(BalError::AccountNotFound { address })) => {
            missing(address, BalItem::Account)
        }
        EVMError::Database(EvmDatabaseError::Bal(BalError::SlotNotFound { address, slot })) => {
            missing(address, BalItem::Storage(slot))
        }
        other => ExecError::from_evm(block, tx, other),
    }
}

/// Executes `block` on `pool` from the BAL in `plan`, dispatching transactions in the order
/// of `scheduler`, commits the results in block order as they come ([`StreamCommit`]) and
/// checks the rebuilt BAL. The worker loop is the mega-block's with one block ([`run_unit`]).
pub fn execute_parallel<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
    plan: &ParallelPlan,
    pool: &WorkerPool,
    scheduler: Scheduler,
) -> Result<ParallelRun, ExecError> {
    if block.input.gas_used() < plan.small_block_gas {
        return execute_small(block, pre_state, plan);
    }
    let number = block.number();
    let gas_limits: Vec<u64> = block.txs.iter().map(|t| t.gas_limit).collect();
    let order = scheduler.order(&gas_limits, plan.gas_weights.as_deref(), number)?;
    let unit = Unit {
        blocks: std::slice::from_ref(&block),
        bal: &plan.bal,
        lifecycle: &plan.lifecycle,
        writes_per_index: &plan.writes_per_index,
        offsets: &[0],
        plans: std::slice::from_ref(plan),
    };
    let start = Instant::now();
    let stream = StreamCommit::new(block, pre_state, plan, commit_lanes(pool.threads()), pool)?;
    let (mut done, times) = run_unit(&unit, pre_state, pool, &order, stream.as_ref())?;
    debug_assert_eq!(done.len(), block.txs.len());
    let receipts = merge_receipts(block, &mut done)?;
    let exec_nanos = start.elapsed().as_nanos() as u64;
    let (head_nanos, serial_nanos) = times.since(start);
    let mut run = commit_block(block, pre_state, plan, stream, done, receipts, exec_nanos)?;
    (run.head_nanos, run.serial_nanos) = (head_nanos, serial_nanos);
    Ok(run)
}

/// A block below the small-block threshold: the sequential executor on the calling thread,
/// its rebuilt BAL (and lifecycle records) required to equal the plan's — the same guarantee
/// as the parallel path's per-transaction checks and canonical rebuild.
fn execute_small<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
    plan: &ParallelPlan,
) -> Result<ParallelRun, ExecError> {
    let run = crate::execute_sequential(block, pre_state)?;
    if run.access.bal != plan.expected || run.access.lifecycle != plan.lifecycle {
        let what = bal_divergence(&plan.expected, &run.access.bal)
            .unwrap_or_else(|| "lifecycle records differ".into());
        return Err(ExecError::bal(
            block.number(),
            BalViolation::RebuiltDiffers(what),
        ));
    }
    Ok(ParallelRun {
        receipts: run.receipts,
        tx_worker: vec![0; run.tx_nanos.len()],
        tx_allocations: run.tx_allocations,
        tx_nanos: run.tx_nanos,
        exec_nanos: run.exec_nanos,
        head_nanos: 0,
        serial_nanos: 0,
        commit_nanos: 0,
        post: run.post,
    })
}

/// What the one worker loop runs: K consecutive blocks (K = 1 for a block alone) in one BAL
/// index space, block b's index 0 at `offsets[b]`.
pub(crate) struct Unit<'u, 'b> {
    /// The blocks, in order.
    pub(crate) blocks: &'u [&'u PreparedBlock<'b>],
    /// The (merged) BAL every worker reads earlier writes from.
    pub(crate) bal: &'u Arc<Bal>,
    /// The (merged) lifecycle records.
    pub(crate) lifecycle: &'u Lifecycle,
    /// Writes the BAL lists per (global) index, for the completeness check.
    pub(crate) writes_per_index: &'u [u32],
    /// Global index of each block's index 0.
    pub(crate) offsets: &'u [u64],
    /// Each block's own plan (its lifecycle events per local index).
    pub(crate) plans: &'u [ParallelPlan],
}

/// When the workers of one [`run_unit`] call joined and finished.
pub(crate) struct UnitTimes {
    /// The last worker that ran a transaction took its first one.
    joined: Instant,
    /// The last worker finished its last transaction (joining the workers back, collecting
    /// and merging come after).
    done: Instant,
}

impl UnitTimes {
    /// `(head, tail)` in nanoseconds for a unit whose timing started at `start`: until the
    /// last worker joined, and from the last worker's last transaction until now.
    pub(crate) fn since(&self, start: Instant) -> (u64, u64) {
        let head = self.joined.saturating_duration_since(start).as_nanos() as u64;
        (head, self.done.elapsed().as_nanos() as u64)
    }
}

/// The one worker loop: every transaction of `unit`, dispatched in `order` (indices into the
/// unit's transactions, block after block) to `pool`'s workers, each run against `pre_state`
/// plus the BAL's earlier writes and checked against the BAL. Returns the results in unit
/// order (or the error of the first failing transaction in that order) and when the workers
/// joined and finished. With `stream` (a unit of one block) each transaction's checked
/// changes go to it instead of into its result.
pub(crate) fn run_unit<S: StateProvider>(
    unit: &Unit<'_, '_>,
    pre_state: &S,
    pool: &WorkerPool,
    order: &[usize],
    stream: Option<&StreamCommit<'_, S>>,
) -> Result<(Vec<TxDone>, UnitTimes), ExecError> {
    debug_assert!(stream.is_none() || unit.blocks.len() == 1);
    let jobs: Vec<(usize, usize)> = unit
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(b, block)| (0..block.txs.len()).map(move |i| (b, i)))
        .collect();
    let n = jobs.len();
    let cursor = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let slots: Vec<OnceLock<Result<TxDone, ExecError>>> = (0..n).map(|_| OnceLock::new()).collect();
    // When each worker that ran a transaction took its first one and finished its last one
    // (written once per worker and unit, after its loop).
    let spans: Vec<OnceLock<(Instant, Instant)>> =
        (0..pool.threads()).map(|_| OnceLock::new()).collect();
    pool.run_workers(|worker| {
        if cursor.load(Ordering::Relaxed) >= n {
            return;
        }
        let db = WorkerDb::new(pre_state, unit.bal.clone(), unit.lifecycle);
        let first = unit.blocks[0];
        let mut evm = crate::eip7610::context(db, first.envs.block.clone(), first.envs.cfg.clone())
            .build_mainnet();
        let mut current = 0;
        let mut first = None;
        loop {
            let k = cursor.fetch_add(1, Ordering::Relaxed);
            if k >= n || abort.load(Ordering::Relaxed) {
                break;
            }
            let (b, i) = jobs[order[k]];
            let block = unit.blocks[b];
            let number = block.number();
            let index = BlockAccessIndex::new(unit.offsets[b] + i as u64 + 1);
            let t0 = (Instant::now(), crate::thread_allocations());
            first.get_or_insert(t0.0);
            if b != current {
                current = b;
                evm.ctx.block = block.envs.block.clone();
                if evm.ctx.cfg.spec != block.envs.cfg.spec {
                    // A fork boundary inside the unit: the journal keeps its own copy of the
                    // spec (`modify_cfg` syncs it) and the instruction gas table is per spec.
                    evm.ctx.modify_cfg(|cfg| *cfg = block.envs.cfg.clone());
                    evm.instruction = EthInstructions::new_mainnet_with_spec(block.envs.spec);
                }
            }
            evm.ctx.db_mut().position(index);
            let outcome = block
                .tx_env(i)
                .and_then(|tx| evm.transact(tx).map_err(|e| evm_error(number, i, index, e)));
            // The transaction's time on its worker: execution, its check against the BAL and
            // its receipt.
            let done = outcome.and_then(|out| {
                let listed = unit.writes_per_index[index.get() as usize];
                check_tx_against_bal(unit.bal, index, &out.state, listed)
                    .map_err(|v| ExecError::bal(number, v))?;
                let local = BlockAccessIndex::from_tx_index(i as u64);
                check_lifecycle(&unit.plans[b], number, i, local, &out.state)?;
                Ok(TxDone::new(&block.txs[i], out, t0, worker))
            });
            // The changes go to the commit after the transaction's own time is taken.
            let done = done.map(|mut d| {
                if let Some(stream) = stream {
                    stream.offer(i, std::mem::take(&mut d.diff));
                }
                d
            });
            record(&slots[order[k]], &abort, done);
        }
        // The loop ends right after the last transaction (one failed claim later).
        if let Some(first) = first {
            let _ = spans[worker].set((first, Instant::now()));
        }
    });
    let returned = Instant::now();
    let spans = spans.iter().filter_map(OnceLock::get);
    let times = UnitTimes {
        joined: spans.clone().map(|s| s.0).max().unwrap_or(returned),
        done: spans.map(|s| s.1).max().unwrap_or(returned),
    };
    Ok((collect_done(slots)?, times))
}

/// Stores a worker's result for one transaction; a failure tells every worker to stop taking
/// new transactions.
pub(crate) fn record(
    slot: &OnceLock<Result<TxDone, ExecError>>,
    abort: &AtomicBool,
    done: Result<TxDone, ExecError>,
) {
    if done.is_err() {
        abort.store(true, Ordering::Relaxed);
    }
    let _ = slot.set(done);
}

/// The workers' results in slot order, or the error of the lowest slot that failed (slots
/// never taken after an abort are skipped).
pub(crate) fn collect_done(
    slots: Vec<OnceLock<Result<TxDone, ExecError>>>,
) -> Result<Vec<TxDone>, ExecError> {
    let mut done = Vec::with_capacity(slots.len());
    for slot in slots {
        match slot.into_inner() {
            Some(Ok(d)) => done.push(d),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    Ok(done)
}

/// Receipts of a block's transactions in block order (taken from `done`), with the
/// cumulative gas filled in and the block-gas allowance check.
pub(crate) fn merge_receipts(
    block: &PreparedBlock<'_>,
    done: &mut [TxDone],
) -> Result<Vec<TxReceipt>, ExecError> {
    let mut cumulative = 0u64;
    let mut receipts: Vec<TxReceipt> = Vec::with_capacity(done.len());
    for (i, (d, tx)) in done.iter_mut().zip(&block.txs).enumerate() {
        ExecError::check_gas_allowance(
            block.number(),
            i,
            tx.gas_limit,
            block.envs.block.gas_limit,
            cumulative,
        )?;
        let Some(mut receipt) = d.receipt.take() else {
            return Err(ExecError::Unsupported {
                block: block.number(),
                what: format!("tx {i}: no receipt to merge (merged twice?)"),
            });
        };
        cumulative += receipt.gas_used;
        receipt.cumulative_gas_used = cumulative;
        receipts.push(receipt);
    }
    Ok(receipts)
}

/// Requires the lifecycle events `diff` implies to be the ones `plan` records at `index`.
pub(crate) fn check_lifecycle(
    plan: &ParallelPlan,
    block: u64,
    tx: usize,
    index: BlockAccessIndex,
    diff: &EvmState,
) -> Result<(), ExecError> {
    let actual = events_of(diff);
    let expected = &plan.events_by_index[index.get() as usize];
    if actual != *expected {
        let (address, exp, act) = first_event_difference(expected, &actual);
        return Err(ExecError::Lifecycle {
            block,
            tx,
            address,
            expected: exp,
            actual: act,
        });
    }
    Ok(())
}

fn first_event_difference(
    expected: &[(Address, LifecycleEvent)],
    actual: &[(Address, LifecycleEvent)],
) -> (Address, String, String) {
    let show = |e: Option<&(Address, LifecycleEvent)>| {
        e.map_or_else(|| "nothing".to_owned(), |(_, ev)| ev.to_string())
    };
    for k in 0..expected.len().max(actual.len()) {
        let (e, a) = (expected.get(k), actual.get(k));
        if e != a {
            let address = e.or(a).map(|(addr, _)| *addr).unwrap_or_default();
            return (address, show(e), show(a));
        }
    }
    (Address::ZERO, "nothing".into(), "nothing".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_eip7928::{AccountChanges, BalanceChange, CodeChange, SlotChanges, StorageChange};
    use alloy_primitives::{Bytes, U256};
    use proptest::prelude::*;

    /// Code bytes, some of them malformed EIP-7702 designations (the magic prefix with a
    /// wrong length), which revm's conversion refuses.
    fn code() -> impl Strategy<Value = Bytes> {
        prop_oneof![
            4 => prop::collection::vec(any::<u8>(), 0..24).prop_map(Bytes::from),
            1 => prop::collection::vec(any::<u8>(), 0..4)
                .prop_map(|tail| Bytes::from([&[0xef, 0x01, 0x00][..], &tail].concat())),
        ]
    }

    fn account() -> impl Strategy<Value = AccountChanges> {
        (
            any::<[u8; 20]>(),
            prop::collection::vec(
                (0u64..50, prop::collection::vec((0u64..9, 0u64..5), 1..3)),
                0..3,
            ),
            prop::collection::vec(0u64..50, 0..3),
            prop::collection::vec((0u64..9, 0u64..5), 0..2),
            prop::collection::vec((0u64..9, code()), 0..2),
        )
            .prop_map(|(a, writes, reads, balances, codes)| AccountChanges {
                address: Address::from(a),
                storage_changes: writes
                    .into_iter()
                    .map(|(slot, ch)| {
                        let ch = ch
                            .into_iter()
                            .map(|(i, v)| {
                                StorageChange::new(BlockAccessIndex::new(i), U256::from(v))
                            })
                            .collect();
                        SlotChanges::new(U256::from(slot), ch)
                    })
                    .collect(),
                storage_reads: reads.into_iter().map(U256::from).collect(),
                balance_changes: balances
                    .into_iter()
                    .map(|(i, v)| BalanceChange::new(BlockAccessIndex::new(i), U256::from(v)))
                    .collect(),
                code_changes: codes
                    .into_iter()
                    .map(|(i, c)| CodeChange::new(BlockAccessIndex::new(i), c))
                    .collect(),
                ..Default::default()
            })
    }

    proptest! {
        /// The conversion on the pool equals revm's serial one: the same accounts in the same
        /// order, or the same (first) error; also for a list that names an account twice.
        #[test]
        fn the_lookup_built_on_the_pool_equals_revms(
            mut list in prop::collection::vec(account(), 0..300),
            twice in any::<Option<prop::sample::Index>>(),
        ) {
            if let (Some(twice), false) = (twice, list.is_empty()) {
                let mut again = list[twice.index(list.len())].clone();
                again.balance_changes.clear();
                list.push(again);
            }
            let ours = lookup_from_alloy(&list);
            let revms = Bal::clone_from_alloy(&list);
            match (ours, revms) {
                (Ok(ours), Ok(revms)) => {
                    prop_assert!(ours.accounts.iter().eq(revms.accounts.iter()));
                }
                (Err(ours), Err(revms)) => prop_assert_eq!(format!("{ours:?}"), format!("{revms:?}")),
                (ours, revms) => prop_assert!(false, "{ours:?} against {revms:?}"),
            }
        }
    }
}
