//! The canonical commit of a block run in parallel: the transactions' state changes applied in
//! block order on one state with revm's BAL builder, pre- and post-execution included, and
//! the rebuilt BAL required to equal the plan's.
//!
//! Two ways reach the same state. A block run alone commits *while it executes*
//! ([`StreamCommit`]): each worker hands over its transaction's changes once they passed the
//! per-transaction checks, and whichever worker finds the commit free applies every
//! consecutive change that is ready, so the commit follows the execution instead of starting
//! after it. The blocks of a mega-block, and blocks whose receipts need a state root after
//! every transaction (before Byzantium), commit after the workers ([`commit_and_rebuild`]).

use crate::{
    parallel::{ParallelPlan, ParallelRun, TxDone},
    system, ExecError, PreparedBlock, StateProvider,
};
use alloy_eip7928::BlockAccessIndex;
use alloy_primitives::B256;
use gigagas_receipt::TxReceipt;
use gigagas_verify::{bal_divergence, BalViolation};
use revm::{
    database::{CacheState, State, WrapDatabaseRef},
    database_interface::DatabaseCommit,
    state::{bal::Bal, EvmState},
};
use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Mutex, MutexGuard, PoisonError,
    },
    time::Instant,
};

/// The canonical state of one block: revm's `State` over the pre-state with the BAL builder.
type Canonical<'a, S> = State<WrapDatabaseRef<&'a S>>;

/// The canonical state of `block` after its pre-execution system calls (BAL index 0).
fn canonical<'a, S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &'a S,
) -> Result<Canonical<'a, S>, ExecError> {
    let mut state = State::builder()
        .with_database_ref(pre_state)
        .with_bal_builder()
        .build();
    state.set_bal_index(BlockAccessIndex::PRE_EXECUTION);
    system::pre_execution(&mut state, block.input, &block.envs.cfg, &block.envs.block)?;
    Ok(state)
}

/// Runs post-execution (BAL index n+1) on `state`, whose transactions are all committed, and
/// requires the rebuilt BAL to equal the plan's. Returns the final accounts.
fn finish<S: StateProvider>(
    mut state: Canonical<'_, S>,
    block: &PreparedBlock<'_>,
    plan: &ParallelPlan,
) -> Result<CacheState, ExecError> {
    state.set_bal_index(BlockAccessIndex::from_tx_index(block.txs.len() as u64));
    system::post_execution(&mut state, block.input, &block.envs.cfg, &block.envs.block)?;
    let rebuilt = state.take_built_bal().unwrap_or_default();
    // Equal lookup structures give equal canonical lists (the conversion sorts); anything
    // else is settled on the canonical list, which also names the first difference.
    if rebuilt != *plan.bal() {
        let rebuilt = rebuilt.into_alloy_bal();
        if rebuilt != *plan.expected() {
            let what = bal_divergence(plan.expected(), &rebuilt)
                .unwrap_or_else(|| "the lists differ".into());
            return Err(ExecError::bal(
                block.number(),
                BalViolation::RebuiltDiffers(what),
            ));
        }
    }
    Ok(std::mem::take(&mut state.cache))
}

/// The commit of one block while its transactions execute: its two jobs, the BAL builder
/// and the canonical cache update, each behind a lock with its own cursor, and one hand-over
/// place per transaction.
///
/// A worker hands over transaction `i`'s checked changes ([`Self::offer`]) and then takes
/// whichever job is free: the builder reads every consecutive transaction from its cursor
/// whose changes are there; the cache update takes, by value, every change the builder has
/// read. The two jobs run at once on different workers, each in block order, as
/// [`commit_and_rebuild`]'s two halves do after the workers. A worker that finds both jobs
/// taken goes back to executing; what is left when the workers are done is committed by
/// [`Self::finish`], so the order and the result are exactly those of
/// [`commit_and_rebuild`].
pub(crate) struct StreamCommit<'a, S: StateProvider> {
    builder: Mutex<Building>,
    cache: Mutex<Committed<'a, S>>,
    /// Transactions the builder has read (their changes may go to the cache).
    built: AtomicUsize,
    pending: Vec<Mutex<Option<EvmState>>>,
}

/// The BAL builder (none where the state has none) and the next transaction it reads.
struct Building {
    bal: Option<Bal>,
    next: usize,
}

/// The canonical state, its builder taken out, and the next transaction it takes.
struct Committed<'a, S: StateProvider> {
    state: Canonical<'a, S>,
    next: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a, S: StateProvider> StreamCommit<'a, S> {
    /// The commit of `block` over `pre_state`, pre-execution done; `None` where the receipts
    /// need a state root after every transaction (the commit must then run after the workers,
    /// [`commit_and_rebuild`]).
    pub(crate) fn new(
        block: &PreparedBlock<'_>,
        pre_state: &'a S,
    ) -> Result<Option<Self>, ExecError> {
        if crate::provider::intermediate_roots(block, pre_state)?.is_some() {
            return Ok(None);
        }
        let mut state = canonical(block, pre_state)?;
        let bal = state.bal_state.bal_builder.take();
        Ok(Some(Self {
            builder: Mutex::new(Building { bal, next: 0 }),
            cache: Mutex::new(Committed { state, next: 0 }),
            built: AtomicUsize::new(0),
            pending: (0..block.txs.len()).map(|_| Mutex::new(None)).collect(),
        }))
    }

    /// Hands over transaction `tx`'s checked state changes, then works on whichever job of
    /// the commit is free while there is work for it.
    pub(crate) fn offer(&self, tx: usize, diff: EvmState) {
        if let Some(slot) = self.pending.get(tx) {
            *lock(slot) = Some(diff);
        }
        loop {
            let built = self
                .builder
                .try_lock()
                .is_ok_and(|mut b| self.build(&mut b));
            let applied = self.cache.try_lock().is_ok_and(|mut c| self.apply(&mut c));
            if !(built || applied) {
                return;
            }
        }
    }

    /// The builder reads every consecutive transaction from its cursor whose changes are
    /// there; true if it read any.
    fn build(&self, building: &mut Building) -> bool {
        let start = building.next;
        while let Some(slot) = self.pending.get(building.next) {
            let diff = lock(slot);
            let Some(diff) = diff.as_ref() else {
                break;
            };
            if let Some(bal) = building.bal.as_mut() {
                let index = BlockAccessIndex::from_tx_index(building.next as u64);
                for (address, account) in diff {
                    bal.update_account(index, *address, account);
                }
            }
            building.next += 1;
            self.built.store(building.next, Ordering::Release);
        }
        building.next > start
    }

    /// The cache update takes every change the builder has read; true if it took any.
    fn apply(&self, committed: &mut Committed<'_, S>) -> bool {
        let start = committed.next;
        while committed.next < self.built.load(Ordering::Acquire) {
            let Some(diff) = lock(&self.pending[committed.next]).take() else {
                break;
            };
            // The builder is out of the state: this commit only updates the cache.
            committed.state.commit_iter(&mut diff.into_iter());
            committed.next += 1;
        }
        committed.next > start
    }

    /// Commits what the workers left, runs post-execution and checks the rebuilt BAL. Every
    /// transaction's changes must have been handed over.
    pub(crate) fn finish(
        self,
        block: &PreparedBlock<'_>,
        plan: &ParallelPlan,
    ) -> Result<CacheState, ExecError> {
        let bal = {
            let mut building = lock(&self.builder);
            self.build(&mut building);
            building.bal.take()
        };
        {
            let mut committed = lock(&self.cache);
            self.apply(&mut committed);
        }
        let mut committed = self
            .cache
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if committed.next != self.pending.len() {
            return Err(ExecError::Unsupported {
                block: block.number(),
                what: format!("tx {}: no state changes to commit", committed.next),
            });
        }
        committed.state.bal_state.bal_builder = bal;
        finish(committed.state, block, plan)
    }
}

/// The canonical commit of one block's worker results and the finished [`ParallelRun`]:
/// `stream`'s, where the block committed while it executed, else [`commit_and_rebuild`].
pub(crate) fn commit_block<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
    plan: &ParallelPlan,
    stream: Option<StreamCommit<'_, S>>,
    done: Vec<TxDone>,
    mut receipts: Vec<TxReceipt>,
    exec_nanos: u64,
) -> Result<ParallelRun, ExecError> {
    let tx_nanos = done.iter().map(|d| d.nanos).collect();
    let tx_worker = done.iter().map(|d| d.worker).collect();
    let tx_allocations = done.iter().map(|d| d.allocations).sum();
    let commit_start = Instant::now();
    let (post, roots) = match stream {
        Some(stream) => (stream.finish(block, plan)?, Vec::new()),
        None => commit_and_rebuild(block, pre_state, plan, done.into_iter().map(|d| d.diff))?,
    };
    for (receipt, root) in receipts.iter_mut().zip(roots) {
        receipt.post_state = Some(root);
    }
    Ok(ParallelRun {
        receipts,
        tx_nanos,
        tx_worker,
        tx_allocations,
        exec_nanos,
        head_nanos: 0,
        serial_nanos: 0,
        commit_nanos: commit_start.elapsed().as_nanos() as u64,
        post,
    })
}

/// Applies the transactions' state changes in block order on a canonical state with the BAL
/// builder (pre- and post-execution included) and requires the rebuilt BAL to equal the
/// given one, after the workers. Returns the final accounts, and the state root after each
/// transaction where the block's receipts need it.
///
/// The two jobs of the commit are independent once the diffs are known: the BAL builder
/// reads each diff, the canonical cache takes it. They run at once on the current pool, the
/// builder a diff ahead of the cache (each diff handed over by value once the builder has
/// read it: nothing is cloned). Where the receipts need a root after every transaction
/// (before Byzantium) the cache must be current at each step, and both run in turn.
///
/// (Sharding both jobs by address over every thread was tried twice: its serial merge of the
/// shards' maps made the commit slower than this on 2 cores, A-B-B-A in
/// docs/results/pipeline-spec-2core.md.)
pub(crate) fn commit_and_rebuild<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
    plan: &ParallelPlan,
    diffs: impl Iterator<Item = EvmState>,
) -> Result<(CacheState, Vec<B256>), ExecError> {
    let hook = crate::provider::intermediate_roots(block, pre_state)?;
    let mut roots = Vec::new();
    let mut state = canonical(block, pre_state)?;
    match hook {
        Some((hook, pre)) => {
            for diff in diffs {
                state.bump_bal_index();
                state.commit(diff);
                roots.push(hook.root(pre, &state.cache));
            }
        }
        None => {
            let diffs: Vec<EvmState> = diffs.collect();
            let mut builder = state.bal_state.bal_builder.take();
            let (to_cache, from_builder) = std::sync::mpsc::channel::<EvmState>();
            let cache = &mut state;
            let (builder, ()) = rayon::join(
                move || {
                    for (i, diff) in diffs.into_iter().enumerate() {
                        if let Some(builder) = builder.as_mut() {
                            let index = BlockAccessIndex::from_tx_index(i as u64);
                            for (address, account) in &diff {
                                builder.update_account(index, *address, account);
                            }
                        }
                        if to_cache.send(diff).is_err() {
                            break;
                        }
                    }
                    builder
                },
                move || {
                    // The builder is out of the state: this commit only updates the cache.
                    for diff in from_builder {
                        cache.commit_iter(&mut diff.into_iter());
                    }
                },
            );
            state.bal_state.bal_builder = builder;
        }
    }
    Ok((finish(state, block, plan)?, roots))
}
