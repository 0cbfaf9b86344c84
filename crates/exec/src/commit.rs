//! The canonical commit of a block run in parallel: the transactions' state changes applied in
//! block order on one state with revm's BAL builder, pre- and post-execution included, and
//! the rebuilt BAL required to equal the plan's.
//!
//! Two ways reach the same state. A block run alone commits *while it executes*
//! ([`StreamCommit`]): each worker hands over its transaction's changes once they passed the
//! per-transaction checks, split by account into lanes, and whichever worker finds a lane's
//! job free applies every consecutive change that is ready, so the commit follows the
//! execution instead of starting after it; the lanes' caches stay apart in the block's
//! [`PostState`]. The blocks of a mega-block, and blocks whose receipts need a state root
//! after every transaction (before Byzantium), commit after the workers
//! ([`commit_and_rebuild`]).

use crate::{
    parallel::{ParallelPlan, ParallelRun, TxDone},
    system, ExecError, PreparedBlock, StateProvider, WorkerPool,
};
use alloy_eip7928::BlockAccessIndex;
use alloy_primitives::{Address, B256};
use gigagas_data::{lane_of, PostState};
use gigagas_receipt::TxReceipt;
use gigagas_verify::{bal_divergence, BalViolation};
use revm::{
    database::{CacheState, State, WrapDatabaseRef},
    database_interface::DatabaseCommit,
    state::{
        bal::{AccountBal, Bal},
        Account, EvmState,
    },
};
use std::{
    sync::{
        atomic::{fence, AtomicU32, AtomicUsize, Ordering},
        Mutex, MutexGuard, OnceLock, PoisonError,
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
/// requires the rebuilt BAL to equal the plan's (on `pool`, else on this thread). Returns
/// the final accounts.
fn finish<S: StateProvider>(
    mut state: Canonical<'_, S>,
    block: &PreparedBlock<'_>,
    plan: &ParallelPlan,
    pool: Option<&rayon::ThreadPool>,
) -> Result<CacheState, ExecError> {
    let rebuilt = post_execute(&mut state, block)?;
    check_rebuilt(block, plan, rebuilt, Vec::new(), pool)?;
    Ok(std::mem::take(&mut state.cache))
}

/// Runs post-execution (BAL index n+1) on `state`, whose transactions are all committed;
/// returns the BAL its builder built.
fn post_execute<S: StateProvider>(
    state: &mut Canonical<'_, S>,
    block: &PreparedBlock<'_>,
) -> Result<Bal, ExecError> {
    state.set_bal_index(BlockAccessIndex::from_tx_index(block.txs.len() as u64));
    system::post_execution(state, block.input, &block.envs.cfg, &block.envs.block)?;
    Ok(state.take_built_bal().unwrap_or_default())
}

/// Requires the rebuilt BAL — `rebuilt` and the disjoint `shards` of it built elsewhere — to
/// equal the plan's, in pieces of [`CHECK_PIECE`] accounts on `pool` (on this thread where
/// none is given). Equal lookup structures give equal canonical lists (the conversion
/// sorts); anything else is settled on the canonical list, which also names the first
/// difference. Equal lists are dropped on the pool, after the check returns.
///
/// One lane's list was compared and dropped on one thread: on a dense 300M block at 2
/// threads that was the whole of the commit after the workers (2.5 ms of its 2.7).
fn check_rebuilt(
    block: &PreparedBlock<'_>,
    plan: &ParallelPlan,
    mut rebuilt: Bal,
    shards: Vec<Bal>,
    pool: Option<&rayon::ThreadPool>,
) -> Result<(), ExecError> {
    use rayon::prelude::*;
    let expected = plan.bal();
    let listed = rebuilt.accounts.len() + shards.iter().map(|b| b.accounts.len()).sum::<usize>();
    let pieces: Vec<_> = std::iter::once(&rebuilt)
        .chain(&shards)
        .flat_map(|b| {
            let n = b.accounts.len();
            (0..n)
                .step_by(CHECK_PIECE)
                .filter_map(move |s| b.accounts.get_range(s..(s + CHECK_PIECE).min(n)))
        })
        .collect();
    let same = |piece: &&revm::primitives::indexmap::map::Slice<Address, AccountBal>| {
        piece
            .iter()
            .all(|(address, account)| expected.accounts.get(address) == Some(account))
    };
    let equal = listed == expected.accounts.len()
        && match pool {
            Some(pool) => pool.install(|| pieces.par_iter().all(same)),
            None => pieces.iter().all(same),
        };
    drop(pieces);
    if equal {
        if let Some(pool) = pool {
            let lists = (rebuilt, shards);
            pool.spawn(move || drop(lists));
        }
        return Ok(());
    }
    for shard in shards {
        rebuilt.accounts.extend(shard.accounts);
    }
    let rebuilt = rebuilt.into_alloy_bal();
    if rebuilt != *plan.expected() {
        let what =
            bal_divergence(plan.expected(), &rebuilt).unwrap_or_else(|| "the lists differ".into());
        return Err(ExecError::bal(
            block.number(),
            BalViolation::RebuiltDiffers(what),
        ));
    }
    Ok(())
}

/// Accounts per task of [`check_rebuilt`]'s comparison.
const CHECK_PIECE: usize = 512;

/// The commit of one block while its transactions execute, split by account into lanes.
///
/// A worker hands over transaction `i`'s checked changes ([`Self::offer`]); once every
/// transaction below some `p` has been handed over (the *prefix*), each lane may commit up to
/// `p`. A lane owns the accounts whose address maps to it ([`lane_of`]) and has the commit's
/// two jobs for them, each behind its own lock with its own cursor, each in block order: the
/// BAL builder reads the lane's accounts of every transaction, the cache update takes them by
/// value once the builder has read them. Lanes never share an account, so their order across
/// lanes does not matter: per account, every change is applied in block order, exactly as
/// [`commit_and_rebuild`] does after the workers. The worker whose hand-over extends the
/// prefix works on the lanes it gave work to, whichever job is free; a worker that finds a
/// job taken goes back to executing (work a holder leaving at that moment did not see waits
/// for the next hand-over to that lane, or for the end). What is left when the workers are
/// done is committed by [`Self::finish`], which keeps the lanes'
/// caches apart (the block's [`PostState`] has them as parts) and checks the lanes' lists
/// against the plan's on the pool.
///
/// One lane is the former single commit (its two jobs on two workers at most). At 16
/// threads a dense block's single commit — a serial pass over every account and slot the
/// block touched — took longer than the parallel execution it follows, and joining the
/// lanes' maps after them cost as much again
/// (`docs/results/pipeline-16core-h200.md`, "The commit in lanes").
pub(crate) struct StreamCommit<'a, S: StateProvider> {
    lanes: Vec<Lane<'a, S>>,
    /// Per transaction: 0 until handed over, then [`OFFERED`] | the mask of lanes its changes
    /// touch.
    offered: Vec<AtomicU32>,
    /// Per transaction, once handed over: its changes split by lane.
    pending: Vec<OnceLock<Box<[Part]>>>,
    /// Every transaction below it has been handed over.
    prefix: AtomicUsize,
    prefix_lock: Mutex<()>,
    /// The block's pre-state (post-execution's scratch run reads it).
    pre_state: &'a S,
    /// The workers' pool, for the lanes' checks after them.
    pool: &'a rayon::ThreadPool,
}

/// Marks a handed-over transaction in [`StreamCommit::offered`] (lane masks use bits 0..31).
const OFFERED: u32 = 1 << 31;

/// The most lanes a commit is split into (a lane mask is 31 bits).
pub(crate) const MAX_LANES: usize = 16;

/// The lanes a block's commit is split into on `threads` workers: one below 8 threads, where
/// the single commit's two jobs keep up with the execution (lanes were 16% slower at 4
/// threads on mainnet-mix 300M), then one per worker, at most [`MAX_LANES`].
pub(crate) const fn commit_lanes(threads: usize) -> usize {
    if threads < LANES_FROM {
        1
    } else if threads < MAX_LANES {
        threads
    } else {
        MAX_LANES
    }
}

/// The fewest workers whose commit is split into lanes.
pub(crate) const LANES_FROM: usize = 8;

/// One lane's share of a transaction's changes: read by the lane's builder, then taken by
/// its cache update (no other lane touches it).
struct Part {
    lane: usize,
    changes: Mutex<Vec<(Address, Account)>>,
}

/// One lane of a [`StreamCommit`].
struct Lane<'a, S: StateProvider> {
    builder: Mutex<Building>,
    /// Transactions the lane's builder has read (their changes may go to its cache).
    built: AtomicUsize,
    cache: Mutex<Committed<'a, S>>,
}

/// A lane's share of the BAL builder (none where the state has none) and the next
/// transaction it reads.
struct Building {
    bal: Option<Bal>,
    next: usize,
}

/// A lane's canonical cache (lane 0's is the block's canonical state, its builder taken
/// out) and the next transaction it takes.
struct Committed<'a, S: StateProvider> {
    state: Canonical<'a, S>,
    next: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a, S: StateProvider> StreamCommit<'a, S> {
    /// The commit of `block` (run from `plan`) over `pre_state` in `lanes` lanes (1 to
    /// [`MAX_LANES`]) for the workers of `pool`, pre-execution done; `None` where the receipts
    /// need a state root after every transaction (the commit must then run after the
    /// workers, [`commit_and_rebuild`]).
    pub(crate) fn new(
        block: &PreparedBlock<'_>,
        pre_state: &'a S,
        plan: &ParallelPlan,
        lanes: usize,
        pool: &'a WorkerPool,
    ) -> Result<Option<Self>, ExecError> {
        if crate::provider::intermediate_roots(block, pre_state)?.is_some() {
            return Ok(None);
        }
        let lanes = lanes.clamp(1, MAX_LANES);
        let mut state = canonical(block, pre_state)?;
        let mut bal = state.bal_state.bal_builder.take();
        // Pre-execution's accounts (cache and list) go to their lanes; lane 0 keeps the
        // canonical state itself.
        let mut caches: Vec<Canonical<'a, S>> = (1..lanes)
            .map(|_| State::builder().with_database_ref(pre_state).build())
            .collect();
        let mut bals: Vec<Option<Bal>> = (1..lanes)
            .map(|_| bal.as_ref().map(|_| Bal::new()))
            .collect();
        if lanes > 1 {
            let accounts = std::mem::take(&mut state.cache.accounts);
            for (address, account) in accounts {
                match lane_of(&address, lanes) {
                    0 => state.cache.accounts.insert(address, account),
                    j => caches[j - 1].cache.accounts.insert(address, account),
                };
            }
            if let Some(bal) = bal.as_mut() {
                for (address, account) in std::mem::take(&mut bal.accounts) {
                    match lane_of(&address, lanes) {
                        0 => bal.accounts.insert(address, account),
                        j => bals[j - 1]
                            .as_mut()
                            .and_then(|b| b.accounts.insert(address, account)),
                    };
                }
            }
        }
        // Each lane's maps sized once for its share of the accounts the plan lists (growing
        // them rehashed every entry at each doubling and touched fresh pages each time).
        let listed = plan.bal().accounts.len();
        let share = listed / lanes + listed / (4 * lanes) + 8;
        for state in std::iter::once(&mut state).chain(caches.iter_mut()) {
            state
                .cache
                .accounts
                .reserve(share.saturating_sub(state.cache.accounts.len()));
        }
        for bal in std::iter::once(&mut bal).chain(bals.iter_mut()).flatten() {
            bal.accounts
                .reserve(share.saturating_sub(bal.accounts.len()));
        }
        let lane = |bal: Option<Bal>, state: Canonical<'a, S>| Lane {
            builder: Mutex::new(Building { bal, next: 0 }),
            built: AtomicUsize::new(0),
            cache: Mutex::new(Committed { state, next: 0 }),
        };
        let mut all = Vec::with_capacity(lanes);
        all.push(lane(bal, state));
        all.extend(bals.into_iter().zip(caches).map(|(b, s)| lane(b, s)));
        let n = block.txs.len();
        Ok(Some(Self {
            lanes: all,
            offered: (0..n).map(|_| AtomicU32::new(0)).collect(),
            pending: (0..n).map(|_| OnceLock::new()).collect(),
            prefix: AtomicUsize::new(0),
            prefix_lock: Mutex::new(()),
            pre_state,
            pool: pool.rayon_pool(),
        }))
    }

    /// Hands over transaction `tx`'s checked state changes, then works on the lanes it gave
    /// work to while there is work for them.
    pub(crate) fn offer(&self, tx: usize, diff: EvmState) {
        let lanes = self.lanes.len();
        let Some(slot) = self.pending.get(tx) else {
            return;
        };
        let mut changes: Vec<(usize, Address, Account)> = diff
            .into_iter()
            .map(|(address, account)| (lane_of(&address, lanes), address, account))
            .collect();
        changes.sort_unstable_by_key(|c| c.0);
        let mut mask = OFFERED;
        let mut parts: Vec<Part> = Vec::new();
        for (lane, address, account) in changes {
            if mask & (1 << lane) == 0 {
                mask |= 1 << lane;
                parts.push(Part {
                    lane,
                    changes: Mutex::new(Vec::new()),
                });
            }
            if let Some(part) = parts.last_mut() {
                part.changes
                    .get_mut()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((address, account));
            }
        }
        let _ = slot.set(parts.into_boxed_slice());
        self.offered[tx].store(mask, Ordering::Release);
        fence(Ordering::SeqCst);
        let ready = self.advance() & !OFFERED;
        if ready == 0 {
            return;
        }
        // Start at a lane of this transaction's own, so that workers spread over the lanes.
        let start = tx % lanes;
        for k in 0..lanes {
            let j = (start + k) % lanes;
            if ready & (1 << j) != 0 {
                self.work(j);
            }
        }
    }

    /// Extends the prefix over every transaction handed over without a gap; returns the
    /// union of their masks (0 where another worker is extending it, or nothing was added).
    fn advance(&self) -> u32 {
        let n = self.offered.len();
        let mut mask = 0;
        loop {
            let Ok(guard) = self.prefix_lock.try_lock() else {
                // Its holder looks again after letting go (below).
                return mask;
            };
            let mut p = self.prefix.load(Ordering::Relaxed);
            while p < n {
                let m = self.offered[p].load(Ordering::Acquire);
                if m == 0 {
                    break;
                }
                mask |= m;
                p += 1;
            }
            self.prefix.store(p, Ordering::Release);
            drop(guard);
            fence(Ordering::SeqCst);
            if p >= n || self.offered[p].load(Ordering::Acquire) == 0 {
                return mask;
            }
        }
    }

    /// Works on lane `j`'s two jobs, whichever is free, while either finds work.
    fn work(&self, j: usize) {
        let lane = &self.lanes[j];
        loop {
            let built = lane
                .builder
                .try_lock()
                .is_ok_and(|mut b| self.build(j, &mut b));
            let applied = lane
                .cache
                .try_lock()
                .is_ok_and(|mut c| self.apply(j, &mut c));
            if !(built || applied) {
                return;
            }
        }
    }

    /// Lane `j`'s share of transaction `i`'s changes, once handed over.
    fn part(&self, i: usize, j: usize) -> Option<&Part> {
        self.pending.get(i)?.get()?.iter().find(|p| p.lane == j)
    }

    /// Lane `j`'s builder reads its accounts of every transaction from its cursor up to the
    /// prefix; true if it read any.
    fn build(&self, j: usize, building: &mut Building) -> bool {
        let start = building.next;
        let prefix = self.prefix.load(Ordering::Acquire);
        while building.next < prefix {
            let i = building.next;
            if self.offered[i].load(Ordering::Acquire) & (1 << j) != 0 {
                if let (Some(bal), Some(part)) = (building.bal.as_mut(), self.part(i, j)) {
                    let index = BlockAccessIndex::from_tx_index(i as u64);
                    for (address, account) in lock(&part.changes).iter() {
                        bal.update_account(index, *address, account);
                    }
                }
            }
            building.next += 1;
            self.lanes[j].built.store(building.next, Ordering::Release);
        }
        building.next > start
    }

    /// Lane `j`'s cache update takes its accounts of every transaction its builder has read;
    /// true if it took any.
    fn apply(&self, j: usize, committed: &mut Committed<'_, S>) -> bool {
        let start = committed.next;
        let built = self.lanes[j].built.load(Ordering::Acquire);
        while committed.next < built {
            let i = committed.next;
            if self.offered[i].load(Ordering::Acquire) & (1 << j) != 0 {
                if let Some(part) = self.part(i, j) {
                    let changes = std::mem::take(&mut *lock(&part.changes));
                    // The builder is out of the state: this commit only updates the cache.
                    committed.state.commit_iter(&mut changes.into_iter());
                }
            }
            committed.next += 1;
        }
        committed.next > start
    }

    /// Commits what the workers left, runs post-execution and checks the rebuilt BAL; the
    /// lanes' caches stay apart (a [`PostState`] of parts: joining them into one map was a
    /// serial pass over every account, longer than the parallel execution of a dense block at
    /// 16 threads). Post-execution runs on lane 0's state, so the accounts it touches move
    /// there first: a run of it on a scratch state names them. Every transaction's changes
    /// must have been handed over.
    pub(crate) fn finish(
        self,
        block: &PreparedBlock<'_>,
        plan: &ParallelPlan,
    ) -> Result<PostState, ExecError> {
        self.advance();
        let prefix = self.prefix.load(Ordering::Acquire);
        if prefix != self.pending.len() {
            return Err(ExecError::Unsupported {
                block: block.number(),
                what: format!("tx {prefix}: no state changes to commit"),
            });
        }
        for (j, lane) in self.lanes.iter().enumerate() {
            self.build(j, &mut lock(&lane.builder));
            self.apply(j, &mut lock(&lane.cache));
        }
        // The hand-overs (a box per transaction, a vector per lane it touched) are freed on
        // the pool, after the block: one thread freeing them was a fifth of this commit on a
        // dense 300M block.
        let pending = self.pending;
        self.pool.spawn(move || drop(pending));
        let lanes = self.lanes.len();
        let (mut bals, mut states): (Vec<Option<Bal>>, Vec<Canonical<'a, S>>) = self
            .lanes
            .into_iter()
            .map(|lane| {
                let building = lane
                    .builder
                    .into_inner()
                    .unwrap_or_else(PoisonError::into_inner);
                let committed = lane
                    .cache
                    .into_inner()
                    .unwrap_or_else(PoisonError::into_inner);
                (building.bal, committed.state)
            })
            .unzip();
        if lanes == 1 {
            let mut state = states.remove(0);
            state.bal_state.bal_builder = bals.remove(0);
            return Ok(finish(state, block, plan, Some(self.pool))?.into());
        }
        // The accounts post-execution touches (its credits and system contracts: which ones
        // does not depend on their values), from a scratch run over the pre-state.
        // Its verdict is the real run's below: a scratch failure only ends the naming early.
        let mut scratch = State::builder().with_database_ref(self.pre_state).build();
        let scratch_run = system::post_execution(
            &mut scratch,
            block.input,
            &block.envs.cfg,
            &block.envs.block,
        );
        if let Err(e) = scratch_run {
            tracing::debug!(block = block.number(), %e, "post-execution's scratch run failed");
        }
        let touched: Vec<Address> = scratch.cache.accounts.into_keys().collect();
        let (first, rest) = states.split_at_mut(1);
        let (first_bal, rest_bals) = bals.split_at_mut(1);
        let lane0 = &mut first[0];
        for address in &touched {
            let j = lane_of(address, lanes);
            if j == 0 {
                continue;
            }
            if let Some(account) = rest[j - 1].cache.accounts.remove(address) {
                // Code the account created in this block travels with it.
                let created = account.account.as_ref().and_then(|a| {
                    let hash = a.info.code_hash;
                    rest[j - 1]
                        .cache
                        .contracts
                        .get(&hash)
                        .map(|c| (hash, c.clone()))
                });
                if let Some((hash, code)) = created {
                    lane0.cache.contracts.insert(hash, code);
                }
                lane0.cache.accounts.insert(*address, account);
            }
            let moved = rest_bals[j - 1]
                .as_mut()
                .and_then(|b| b.accounts.swap_remove(address));
            if let (Some(bal), Some(moved)) = (first_bal[0].as_mut(), moved) {
                bal.accounts.insert(*address, moved);
            }
        }
        lane0.bal_state.bal_builder = first_bal[0].take();
        let rebuilt = post_execute(lane0, block)?;
        // Every account post-execution touched must have moved: one it reached elsewhere
        // would hold two states, or two list entries (an account the transactions only read
        // is in its lane's list and not in its cache).
        let elsewhere = |address: &Address| match lane_of(address, lanes) {
            0 => false,
            j => {
                rest[j - 1].cache.accounts.contains_key(address)
                    || rest_bals[j - 1]
                        .as_ref()
                        .is_some_and(|b| b.accounts.contains_key(address))
            }
        };
        let reached = lane0
            .cache
            .accounts
            .keys()
            .chain(rebuilt.accounts.keys())
            .find(|a| elsewhere(a));
        if let Some(address) = reached {
            return Err(ExecError::Unsupported {
                block: block.number(),
                what: format!(
                    "post-execution touched {address}, which its scratch run did not name"
                ),
            });
        }
        let shards = rest_bals.iter_mut().filter_map(Option::take).collect();
        check_rebuilt(block, plan, rebuilt, shards, Some(self.pool))?;
        Ok(PostState::from_parts(
            states.into_iter().map(|s| s.cache).collect(),
        ))
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
        None => {
            let (post, roots) =
                commit_and_rebuild(block, pre_state, plan, done.into_iter().map(|d| d.diff))?;
            (post.into(), roots)
        }
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
    Ok((finish(state, block, plan, None)?, roots))
}
