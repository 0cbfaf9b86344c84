//! The block pipeline: recover → execute → verify → write → root, per block, either back to
//! back (`overlap: false`) or as three overlapped stage threads joined by bounded queues
//! (`overlap: true`): the senders of block N+1 are recovered while block N executes, and the
//! state of block N is written and hashed while block N+1 executes.
//!
//! Every stage of every block is timed (start and end on one clock), so the report can show
//! a timeline, each stage's share, the end-to-end throughput and the pipeline's own bound:
//! `wall ≥ max(process CPU time / threads, the busiest stage's total, the longest block)`
//! — a stage handles one block at a time, and one block's stages depend on each other.
//!
//! A block that arrives with its BAL (generated Amsterdam chains) has every post-value before
//! it executes, so its write and root stages start from the BAL at once, beside its
//! execution; the root is accepted only after execution verified that BAL. Without a shipped
//! BAL (mainnet data: the BAL is built by the baseline run) they wait for execution's changes.
//!
//! State on disk ([`IncrementalState::snapshot`] answers a [`DiskSnapshot`]): the thread that
//! writes and hashes from the BAL takes a read snapshot of the store before writing block N
//! (so it holds the state after N-1), prefetches every account and slot N's BAL names from it
//! in parallel in on-disk key order (the prefetch stage, beside N-1's execution), and hands it
//! to the execute stage: block N executes reading the store. In memory there is nothing to
//! prefetch; the stage is reported as zero rather than hidden.

use crate::block::{BlockCase, Mode};
use alloy_primitives::B256;
use gigagas_data::PreState;
use gigagas_exec::{
    execute_parallel, execute_sequential, recover_senders, BlockAccess, ExecError, PreparedBlock,
    StateProvider, WorkerPool,
};
use gigagas_receipt::TxReceipt;
use gigagas_verify::VerifyError;
use revm::database::CacheState;
use std::{
    collections::BTreeMap,
    sync::mpsc::{sync_channel, Receiver, SyncSender},
    time::Instant,
};

/// Stage names, in pipeline order (the keys of [`PipelineRun::phases_ns`]).
pub const STAGES: [&str; 6] = ["recover", "prefetch", "execute", "verify", "write", "root"];

/// Which state root the pipeline computes after each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootMode {
    /// No root: the pure-execution condition.
    None,
    /// The root on one thread.
    Serial,
    /// Storage tries hashed in parallel on the thread budget, then the account trie.
    Parallel,
    /// Incremental and parallel (`gigagas_trie`): the branch nodes of the state are kept
    /// between blocks and only the paths the block's BAL names are re-hashed, hot storage
    /// tries split by key prefix. Needs complete states that ship their BALs (generated
    /// chains); the node store is built from the first block's pre-state before timing starts.
    Incremental,
}

impl RootMode {
    /// Name as used on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Serial => "serial",
            Self::Parallel => "parallel",
            Self::Incremental => "incremental",
        }
    }
}

impl std::str::FromStr for RootMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Self::None),
            "serial" => Ok(Self::Serial),
            "parallel" => Ok(Self::Parallel),
            "incremental" => Ok(Self::Incremental),
            _ => Err(format!(
                "unknown root mode {s:?} (expected none, serial, parallel or incremental)"
            )),
        }
    }
}

/// Where `RootMode::Incremental` keeps the state's branch nodes between blocks: in memory
/// ([`gigagas_trie::MemoryStore`], built from the first pre-state) or on disk
/// ([`crate::DiskRoot`], one write transaction per block). Used in block order, on the thread
/// budget's rayon pool, in two steps per block: [`Self::compute`] (reads only; runs beside
/// the block's execution, from the changes its shipped BAL gives) and, once the block
/// verified, [`Self::commit`]. The next block's `compute` and [`Self::snapshot`] come after
/// that commit, so nothing is written for a block that failed, nor after it.
pub trait IncrementalState: Send {
    /// Computes one block's new root and the updates that give it; writes nothing. A store
    /// that checks roots refuses one that differs from `input.header.state_root` on complete
    /// states.
    fn compute(
        &self,
        input: &gigagas_data::BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String>;

    /// Writes what [`Self::compute`] computed for `input` (a verified block); returns the
    /// new root.
    fn commit(
        &mut self,
        input: &gigagas_data::BlockInput,
        pending: PendingRoot,
    ) -> Result<B256, String>;

    /// The state as it is now (after the last commit) for the next block to execute
    /// against, read by up to `readers` threads at once; `None` when execution reads the
    /// block's in-memory pre-state instead.
    fn snapshot(&self, readers: usize) -> Result<Option<DiskSnapshot>, String> {
        let _ = readers;
        Ok(None)
    }

    /// Work between blocks that is not a node's (cold mode: dropping the page cache), run
    /// after each commit; its time is left out of the run's wall time. Back-to-back pipelines
    /// only (the stages of other blocks would overlap it).
    fn between_blocks(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Whether [`Self::between_blocks`] has work to do.
    fn needs_between_blocks(&self) -> bool {
        false
    }
}

/// A block's root computed by [`IncrementalState::compute`], not yet written.
#[derive(Debug)]
pub enum PendingRoot {
    /// The in-memory node store's updates.
    Memory(gigagas_trie::StateUpdates),
    /// The disk store's computed block.
    Disk(gigagas_store::PendingBlock),
}

impl PendingRoot {
    /// The root the block will have.
    pub fn root(&self) -> B256 {
        match self {
            Self::Memory(u) => u.root,
            Self::Disk(p) => p.head().state_root,
        }
    }
}

impl IncrementalState for gigagas_trie::MemoryStore {
    fn compute(
        &self,
        _input: &gigagas_data::BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String> {
        gigagas_trie::compute_updates(self, changes, gigagas_trie::Parallelism::DEFAULT)
            .map(PendingRoot::Memory)
            .map_err(|e| e.to_string())
    }

    fn commit(
        &mut self,
        input: &gigagas_data::BlockInput,
        pending: PendingRoot,
    ) -> Result<B256, String> {
        let PendingRoot::Memory(updates) = pending else {
            return Err(format!(
                "block {}: a disk store's result given to the in-memory node store",
                input.number()
            ));
        };
        let root = updates.root;
        gigagas_trie::write_updates(self, updates).map_err(|e| e.to_string())?;
        Ok(root)
    }
}

/// The incremental root's node store, shared by the stage that computes roots and the stage
/// that commits them (never at the same time: see [`IncrementalState`]).
type Trie<'a> = std::sync::Mutex<Box<dyn IncrementalState + 'a>>;

fn lock<'g, 'a>(trie: &'g Trie<'a>) -> std::sync::MutexGuard<'g, Box<dyn IncrementalState + 'a>> {
    trie.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How [`run_pipeline`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Execution mode (a parallel mode needs a worker pool with its thread count).
    pub mode: Mode,
    /// State root after each block.
    pub root: RootMode,
    /// Overlap stages across blocks (`false`: each block's stages back to back).
    pub overlap: bool,
    /// The thread budget: the worker pool's size, and the size of the pool that recovers
    /// senders and hashes the parallel root.
    pub threads: usize,
}

/// Start and end of one stage of one block, ns since the pipeline started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StageSpan {
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

impl StageSpan {
    /// Duration, ns.
    pub fn nanos(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One block's way through the pipeline.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BlockTimeline {
    /// Block number.
    pub number: u64,
    /// Gas used.
    pub gas: u64,
    /// Transactions.
    pub txs: usize,
    /// Span of each stage that ran (keys from [`STAGES`]).
    pub stages: BTreeMap<&'static str, StageSpan>,
    /// The state root computed (with a root mode other than `none`).
    pub state_root: Option<B256>,
    /// Whether that root was compared with the header's and matched (complete states only;
    /// a touched-only pre-state gives the root of that partial state, not compared).
    pub root_checked: bool,
    /// Bytes the process read from storage (`/proc/self/io` `read_bytes`: page-cache misses)
    /// between the previous block's commit and this one's: exactly this block's reads with
    /// the pipeline off; with it on, also the next block's prefetch and recovery, which
    /// overlap. `None` where unreadable.
    pub read_bytes: Option<u64>,
}

/// A verified pipeline run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PipelineRun {
    /// Execution mode name.
    pub mode: String,
    /// Root mode.
    pub root: RootMode,
    /// Whether stages overlapped.
    pub overlap: bool,
    /// Thread budget.
    pub threads: usize,
    /// Every block, in order.
    pub blocks: Vec<BlockTimeline>,
    /// Wall time of the whole run, ns, without the time spent between blocks on work that is
    /// not a node's ([`IncrementalState::between_blocks`]: cold mode's cache drop).
    pub wall_ns: u64,
    /// The time left out of `wall_ns`, ns.
    pub untimed_ns: u64,
    /// Process CPU time (user + system) during the run, ns; `None` where unreadable.
    pub cpu_ns: Option<u64>,
}

impl PipelineRun {
    /// Gas of all blocks.
    pub fn gas(&self) -> u64 {
        self.blocks.iter().map(|b| b.gas).sum()
    }

    /// End-to-end throughput: gas / wall time of the whole pipeline, Mgas/s.
    pub fn e2e_mgas_per_s(&self) -> f64 {
        self.gas() as f64 / self.wall_ns.max(1) as f64 * 1e3
    }

    /// Busy time of each stage summed over blocks, ns (every key of [`STAGES`]).
    pub fn phases_ns(&self) -> BTreeMap<&'static str, u64> {
        let mut phases: BTreeMap<&'static str, u64> = STAGES.iter().map(|s| (*s, 0)).collect();
        for b in &self.blocks {
            for (stage, span) in &b.stages {
                *phases.entry(stage).or_default() += span.nanos();
            }
        }
        phases
    }

    /// The pipeline's lower bound on wall time, ns: the largest of the process CPU time over
    /// the thread budget, the busiest stage's total (a stage handles one block at a time) and
    /// the longest block (its stages depend on each other).
    pub fn bound_ns(&self) -> u64 {
        let busiest_stage = self.phases_ns().values().copied().max().unwrap_or(0);
        let longest_block = self
            .blocks
            .iter()
            .map(|b| b.stages.values().map(StageSpan::nanos).sum::<u64>())
            .max()
            .unwrap_or(0);
        let cpu = self.cpu_ns.unwrap_or(0) / self.threads.max(1) as u64;
        busiest_stage.max(longest_block).max(cpu)
    }

    /// Bound / wall, percent (how close the run came to its bound).
    pub fn percent_of_bound(&self) -> f64 {
        self.bound_ns() as f64 / self.wall_ns.max(1) as f64 * 100.0
    }
}

/// Process CPU time (user + system) so far, from `/proc/self/stat`; `None` elsewhere.
fn process_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // The kernel's USER_HZ is 100 on every Linux architecture gigagas targets.
    Some((utime + stime) * 10_000_000)
}

/// The clock every span is read from.
struct Clock(Instant);

impl Clock {
    fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }

    /// Runs `f`, returning its result and its span.
    fn time<T>(&self, f: impl FnOnce() -> T) -> (T, StageSpan) {
        let start_ns = self.now();
        let out = f();
        (
            out,
            StageSpan {
                start_ns,
                end_ns: self.now(),
            },
        )
    }

    /// Runs `f` on the thread budget, timed from the moment one of its threads takes it up
    /// (a stage's span is its work, not its wait for a free thread).
    fn on<T: Send>(
        &self,
        budget: &rayon::ThreadPool,
        f: impl FnOnce() -> T + Send,
    ) -> (T, StageSpan) {
        budget.install(|| self.time(f))
    }
}

/// Stage 1 output: the block's transactions with their recovered senders.
struct Recovered<'a> {
    index: usize,
    prepared: PreparedBlock<'a>,
    recover: StageSpan,
}

/// The state a block executes against when it is on disk: a read snapshot of the store taken
/// before the block was written.
pub type DiskSnapshot = gigagas_store::DiskState<gigagas_store::ReadTxn>;

/// The write and root stages done from a shipped BAL, before execution confirmed it.
struct EarlyRoot {
    prefetch: Option<StageSpan>,
    post_state: PreState,
    write: StageSpan,
    root: Option<(Result<B256, String>, StageSpan)>,
    /// The incremental root's updates, written by the commit stage once the block verified.
    pending: Option<PendingRoot>,
}

/// The accounts `bal` writes, as they are after the block: what [`change_set`] needs, without
/// copying the rest of the state. Storage is copied only for an account whose info ends
/// empty (EIP-161: it is deleted unless storage remains); other accounts carry none (the
/// storage changes come from the BAL itself).
fn touched_post_state(pre: &PreState, bal: &alloy_eip7928::BlockAccessList) -> PreState {
    let mut accounts: alloy_primitives::map::HashMap<_, _> = Default::default();
    for changes in bal {
        if !gigagas_data::chain::writes_anything(changes) {
            continue;
        }
        let before = pre.account(&changes.address);
        let mut info = before.map(|a| a.info.clone()).unwrap_or_default();
        if let Some(c) = changes.balance_changes.last() {
            info.balance = c.post_balance;
        }
        if let Some(c) = changes.nonce_changes.last() {
            info.nonce = c.new_nonce;
        }
        if let Some(c) = changes.code_changes.last() {
            info.code_hash = alloy_primitives::keccak256(&c.new_code);
        }
        let storage = match before {
            Some(a) if info.is_empty() => a.storage.clone(),
            _ => Default::default(),
        };
        let account = gigagas_data::PreAccount {
            info: before.map(|a| a.info.clone()).unwrap_or_default(),
            storage,
        };
        accounts.insert(changes.address, account);
    }
    gigagas_data::chain::apply_bal(&mut accounts, bal);
    PreState::new(accounts, pre.block_hashes().clone())
}

/// A block's changes as the incremental trie takes them, from its BAL and the post-state the
/// BAL gives (hashed keys; an account left out of the post-state is deleted).
pub fn change_set(
    bal: &alloy_eip7928::BlockAccessList,
    post: &PreState,
) -> gigagas_trie::ChangeSet {
    use alloy_primitives::keccak256;
    let mut changes = gigagas_trie::ChangeSet::default();
    for account in bal {
        if !gigagas_data::chain::writes_anything(account) {
            continue;
        }
        let info = post
            .account(&account.address)
            .map(|a| gigagas_trie::AccountInfo {
                nonce: a.info.nonce,
                balance: a.info.balance,
                code_hash: a.info.code_hash,
            });
        let storage = account
            .storage_changes
            .iter()
            .filter_map(|slot| {
                let last = slot.changes.last()?;
                Some((keccak256(slot.slot.to_be_bytes::<32>()), last.new_value))
            })
            .collect();
        changes.accounts.insert(
            keccak256(account.address),
            gigagas_trie::AccountChange {
                info,
                storage_wiped: false,
                storage,
            },
        );
    }
    changes
}

/// Write and root from the block's shipped BAL; `None` for blocks without one or without a
/// complete state (whose root is computed from execution's changes).
///
/// Before anything is written, the state the block executes against is handed to
/// `to_execute` (one call per block, always): a read snapshot of the store with the block's
/// BAL prefetched, or `None` when the state is in memory.
fn early_root_stage(
    case: &BlockCase<'_>,
    options: &PipelineOptions,
    clock: &Clock,
    budget: &rayon::ThreadPool,
    io: &rayon::ThreadPool,
    trie: Option<&Trie<'_>>,
    to_execute: impl FnOnce(Result<Option<DiskSnapshot>, ExecError>),
) -> Option<EarlyRoot> {
    let input = case.prepared.input;
    let snapshot = match trie.map(|t| lock(t).snapshot(options.threads * 2 + 2)) {
        Some(Err(e)) => Err(ExecError::Unsupported {
            block: input.number(),
            what: format!("state store snapshot: {e}"),
        }),
        Some(Ok(s)) => Ok(s),
        None => Ok(None),
    };
    if snapshot.is_err() {
        to_execute(snapshot);
        return None;
    }
    let mut snapshot = snapshot;
    let prefetch = match (&mut snapshot, &input.access_list) {
        (Ok(Some(snap)), Some(bal)) => {
            let (read, span) = clock.on(io, || snap.prefetch(bal));
            if let Err(e) = read {
                to_execute(Err(ExecError::Unsupported {
                    block: input.number(),
                    what: format!("prefetch: {e}"),
                }));
                return None;
            }
            Some(span)
        }
        _ => None,
    };
    to_execute(snapshot);
    let bal = input
        .access_list
        .as_ref()
        .filter(|_| input.complete_state)?;
    let rebuild = || {
        let mut accounts: alloy_primitives::map::HashMap<_, _> = input
            .pre_state
            .accounts()
            .map(|(a, acc)| (*a, acc.clone()))
            .collect();
        gigagas_data::chain::apply_bal(&mut accounts, bal);
        PreState::new(accounts, input.pre_state.block_hashes().clone())
    };
    if let (RootMode::Incremental, Some(trie)) = (options.root, trie) {
        // The root from the BAL's changes, computed while the block executes; written by the
        // commit stage only once the block verified.
        let ((post_state, computed), span) = clock.on(budget, || {
            let post_state = touched_post_state(&input.pre_state, bal);
            let changes = change_set(bal, &post_state);
            let computed = lock(trie).compute(input, &changes);
            (post_state, computed)
        });
        let (root, pending) = match computed {
            Ok(p) => (Ok(p.root()), Some(p)),
            Err(e) => (Err(e), None),
        };
        return Some(EarlyRoot {
            prefetch,
            post_state,
            write: StageSpan::default(),
            root: Some((root, span)),
            pending,
        });
    }
    let (post_state, write) = clock.on(budget, rebuild);
    let root = match options.root {
        RootMode::None => None,
        mode => Some(clock.on(budget, || Ok(full_root(mode, &post_state)))),
    };
    Some(EarlyRoot {
        prefetch,
        post_state,
        write,
        root,
        pending: None,
    })
}

/// Stage 2 output: the verified block's changes.
struct Executed {
    index: usize,
    post: CacheState,
    recover: StageSpan,
    execute: StageSpan,
    verify: StageSpan,
}

fn recover_stage<'a>(
    case: &BlockCase<'a>,
    index: usize,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> Result<Recovered<'a>, ExecError> {
    let input = case.prepared.input;
    let (prepared, recover) = clock.on(budget, || {
        let senders = recover_senders(input)?;
        PreparedBlock::new(input, &senders)
    });
    Ok(Recovered {
        index,
        prepared: prepared?,
        recover,
    })
}

/// Runs the block in `options.mode` against `state` (monomorphised per state provider).
fn execute_on<S: StateProvider>(
    case: &BlockCase<'_>,
    prepared: &PreparedBlock<'_>,
    state: &S,
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
) -> Result<(Vec<TxReceipt>, CacheState, Option<BlockAccess>), ExecError> {
    Ok(match options.mode {
        Mode::Sequential => {
            let run = execute_sequential(prepared, state)?;
            (run.receipts, run.post, Some(run.access))
        }
        Mode::SequentialNoBal => {
            let run = gigagas_exec::execute_sequential_without_bal(prepared, state)?;
            (run.receipts, run.post, None)
        }
        Mode::Parallel { threads, scheduler } => {
            let pool =
                pool.filter(|p| p.threads() == threads)
                    .ok_or_else(|| ExecError::Unsupported {
                        block: case.number(),
                        what: format!("no worker pool with {threads} threads"),
                    })?;
            let run = execute_parallel(prepared, state, &case.plan, pool, scheduler)?;
            (run.receipts, run.post, None)
        }
    })
}

fn execute_stage(
    case: &BlockCase<'_>,
    rec: Recovered<'_>,
    disk: Option<DiskSnapshot>,
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> Result<Executed, ExecError> {
    let input = case.prepared.input;
    let run = || match &disk {
        Some(state) => execute_on(case, &rec.prepared, state, options, pool),
        None => execute_on(case, &rec.prepared, &*input.pre_state, options, pool),
    };
    // Execution runs on one of the budget's threads. In parallel mode the budget is the
    // worker pool itself: the workers start from that thread (no wake-up and hand-back
    // through the stage thread) and the canonical commit runs on the budget too.
    let (out, execute) = clock.time(|| budget.install(run));
    drop(disk);
    let (receipts, post, access) = out?;
    let (checked, verify) = clock.on(budget, || {
        crate::block::verify_run(case, &receipts, access.as_ref())
    });
    checked?;
    Ok(Executed {
        index: rec.index,
        post,
        recover: rec.recover,
        execute,
        verify,
    })
}

/// The write and root stages: the block's changes applied to its pre-state, then (unless
/// `RootMode::None`) the root of the result, compared with the header's on complete states.
#[allow(clippy::too_many_arguments)]
fn commit_stage(
    case: &BlockCase<'_>,
    done: Executed,
    early: Option<EarlyRoot>,
    trie: Option<&Trie<'_>>,
    options: &PipelineOptions,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> Result<BlockTimeline, ExecError> {
    let input = case.prepared.input;
    let (post_state, write, early_root, prefetch, pending) = match early {
        Some(e) => (e.post_state, e.write, Some(e.root), e.prefetch, e.pending),
        None => {
            let (post_state, write): (PreState, _) = clock.on(budget, || {
                gigagas_state::apply_changes(&input.pre_state, &done.post)
            });
            (post_state, write, None, None, None)
        }
    };
    let mut stages = BTreeMap::from([
        ("recover", done.recover),
        (
            "prefetch",
            prefetch.unwrap_or(StageSpan {
                start_ns: done.recover.end_ns,
                end_ns: done.recover.end_ns,
            }),
        ),
        ("execute", done.execute),
        ("verify", done.verify),
        ("write", write),
    ]);
    let (mut state_root, mut root_checked) = (None, false);
    if options.root != RootMode::None {
        let (root, span) = match early_root.flatten() {
            Some((Ok(root), span)) => (root, span),
            Some((Err(e), _)) => {
                return Err(ExecError::Unsupported {
                    block: input.number(),
                    what: format!("incremental state root: {e}"),
                })
            }
            None => clock.on(budget, || full_root(options.root, &post_state)),
        };
        stages.insert("root", span);
        if input.complete_state {
            if root != input.header.state_root {
                return Err(ExecError::Verify(VerifyError::Header {
                    block: input.number(),
                    field: "state_root",
                    expected: input.header.state_root.to_string(),
                    actual: root.to_string(),
                }));
            }
            root_checked = true;
        }
        state_root = Some(root);
    }
    // The block verified and its root matched: only now is it written.
    if let (Some(pending), Some(trie)) = (pending, trie) {
        let (written, span) = clock.on(budget, || lock(trie).commit(input, pending));
        written.map_err(|e| ExecError::Unsupported {
            block: input.number(),
            what: format!("writing the state: {e}"),
        })?;
        stages.insert("write", span);
    }
    let _ = done.index;
    Ok(BlockTimeline {
        number: input.number(),
        gas: input.gas_used(),
        txs: input.transactions.len(),
        stages,
        state_root,
        root_checked,
        read_bytes: None,
    })
}

/// Runs `cases` (consecutive prepared blocks) through the pipeline. A parallel mode needs
/// `pool` with `options.threads` workers. The first error, in block order, stops the run:
/// no block after it is written or hashed.
pub fn run_pipeline(
    cases: &[BlockCase<'_>],
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
) -> Result<PipelineRun, ExecError> {
    run_pipeline_with(cases, options, pool, None)
}

/// [`run_pipeline`] with the incremental root's node store given (`state`; with
/// `RootMode::Incremental` and `None`, an in-memory store is built from the first block's
/// pre-state). A given store must hold the first block's pre-state.
pub fn run_pipeline_with(
    cases: &[BlockCase<'_>],
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
    state: Option<Box<dyn IncrementalState + '_>>,
) -> Result<PipelineRun, ExecError> {
    let threads = options.threads.max(1);
    let build = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| ExecError::Unsupported {
                block: cases.first().map_or(0, BlockCase::number),
                what: format!("cannot start a {n}-thread pool: {e}"),
            })
    };
    // One thread budget for every stage: the execution workers' own pool when there is one
    // (recovery, verification, writes and roots queue for the same threads), else a pool of
    // `threads`. Stage threads only wait on queues and hand work to it.
    let own;
    let budget: &rayon::ThreadPool = match pool {
        Some(p) if matches!(options.mode, Mode::Parallel { .. }) => {
            if p.threads() != threads {
                return Err(ExecError::Unsupported {
                    block: cases.first().map_or(0, BlockCase::number),
                    what: format!(
                        "the worker pool has {} threads, the pipeline's budget is {threads}",
                        p.threads()
                    ),
                });
            }
            p.rayon_pool()
        }
        _ => {
            own = build(threads)?;
            &own
        }
    };
    // The incremental root's node store: the state before the first block, built before
    // timing starts (a node has it on disk when it starts).
    let mut trie = state.filter(|_| options.root == RootMode::Incremental);
    if options.root == RootMode::Incremental {
        if let Some(bad) = cases
            .iter()
            .find(|c| !c.prepared.input.complete_state || c.prepared.input.access_list.is_none())
        {
            return Err(ExecError::Unsupported {
                block: bad.number(),
                what: "--root incremental needs complete states that ship their block access lists (generated chains); use --root serial or parallel".into(),
            });
        }
        if let (None, Some(first)) = (&trie, cases.first()) {
            let (_, store) = budget.install(|| {
                gigagas_trie::from_prestate(
                    &first.prepared.input.pre_state,
                    gigagas_trie::Parallelism::DEFAULT,
                )
            });
            trie = Some(Box::new(store) as Box<dyn IncrementalState>);
        }
    }
    let between = trie.as_ref().is_some_and(|t| t.needs_between_blocks());
    if between && options.overlap {
        return Err(ExecError::Unsupported {
            block: cases.first().map_or(0, BlockCase::number),
            what: "cold reads need the stages back to back (--pipeline off): dropping the page cache between blocks would overlap other blocks' stages".into(),
        });
    }
    // The prefetch's reads wait on the device, not on a CPU: they run on their own small
    // pool, beside the budget (one thread when the state is in memory: nothing to read).
    let io = build(if trie.is_some() { PREFETCH_THREADS } else { 1 })?;
    let trie: Option<Trie<'_>> = trie.map(std::sync::Mutex::new);
    let trie = trie.as_ref();
    let clock = Clock(Instant::now());
    let cpu0 = process_cpu_ns();
    let read0 = crate::disk::io_read_bytes();
    let mut untimed_ns = 0u64;
    let mut blocks = if options.overlap {
        overlapped(cases, options, pool, &clock, budget, &io, trie)?
    } else {
        let mut blocks = Vec::with_capacity(cases.len());
        for (i, case) in cases.iter().enumerate() {
            let rec = recover_stage(case, i, &clock, budget)?;
            let mut disk = Ok(None);
            let early = early_root_stage(case, options, &clock, budget, &io, trie, |s| disk = s);
            let done = execute_stage(case, rec, disk?, options, pool, &clock, budget)?;
            let mut block = commit_stage(case, done, early, trie, options, &clock, budget)?;
            block.read_bytes = crate::disk::io_read_bytes();
            blocks.push(block);
            if let (true, Some(t)) = (between, trie) {
                let t0 = Instant::now();
                lock(t)
                    .between_blocks()
                    .map_err(|e| ExecError::Unsupported {
                        block: case.number(),
                        what: e,
                    })?;
                untimed_ns += t0.elapsed().as_nanos() as u64;
            }
        }
        blocks
    };
    let wall_ns = clock.now().saturating_sub(untimed_ns);
    let cpu_ns = cpu0.zip(process_cpu_ns()).map(|(a, b)| b.saturating_sub(a));
    // Each block's reading of the counter at its commit, turned into bytes since the last.
    let mut last = read0;
    for b in &mut blocks {
        let at = b.read_bytes;
        b.read_bytes = at.zip(last).map(|(now, before)| now.saturating_sub(before));
        last = at;
    }
    Ok(PipelineRun {
        mode: options.mode.to_string(),
        root: options.root,
        overlap: options.overlap,
        threads,
        blocks,
        wall_ns,
        untimed_ns,
        cpu_ns,
    })
}

/// Threads of the prefetch stage's reads from a disk store. They spend their time waiting on
/// the device, so they run beside the CPU budget, not in it: on this repository's VM a cold
/// 1M-slot hot-account block prefetched 1.8× faster on 8 threads than on the 2 of the budget,
/// and 16 to 64 threads gained nothing more (`docs/results/hot-account-2core.md`).
pub const PREFETCH_THREADS: usize = 8;

/// Depth of the queues between stages: one block waiting per stage (back-pressure: a fast
/// stage never runs more than one block ahead, so memory stays bounded).
const QUEUE: usize = 1;

fn overlapped(
    cases: &[BlockCase<'_>],
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
    io: &rayon::ThreadPool,
    trie: Option<&Trie<'_>>,
) -> Result<Vec<BlockTimeline>, ExecError> {
    std::thread::scope(|scope| {
        let (to_exec, from_recover): (SyncSender<Recovered<'_>>, Receiver<_>) = sync_channel(QUEUE);
        let (to_commit, from_exec): (SyncSender<Executed>, Receiver<_>) = sync_channel(QUEUE);
        let (to_commit_root, from_root): (SyncSender<Option<EarlyRoot>>, Receiver<_>) =
            sync_channel(QUEUE);
        type Snapshot = Result<Option<DiskSnapshot>, ExecError>;
        let (to_exec_state, from_state): (SyncSender<Snapshot>, Receiver<_>) = sync_channel(QUEUE);
        // With an incremental root, block N's state and root come only after block N-1 was
        // committed (verified and written): one token per commit.
        let (committed, wait_commit): (SyncSender<()>, Receiver<()>) = sync_channel(QUEUE);
        // Write and root from shipped BALs, beside execution (`None` for other blocks); first
        // the state each block executes against (prefetched, when on disk).
        scope.spawn(move || {
            for (i, case) in cases.iter().enumerate() {
                if i > 0 && trie.is_some() && wait_commit.recv().is_err() {
                    break; // the commit stage stopped
                }
                let mut stopped = false;
                let early = early_root_stage(case, options, clock, budget, io, trie, |s| {
                    stopped = to_exec_state.send(s).is_err()
                });
                if stopped || to_commit_root.send(early).is_err() {
                    break;
                }
            }
        });
        let recover = scope.spawn(move || -> Result<(), ExecError> {
            for (i, case) in cases.iter().enumerate() {
                let rec = recover_stage(case, i, clock, budget)?;
                if to_exec.send(rec).is_err() {
                    break; // a later stage stopped
                }
            }
            Ok(())
        });
        let execute = scope.spawn(move || -> Result<(), ExecError> {
            for rec in from_recover {
                // Block order on both queues: the next state belongs to this block.
                let Ok(disk) = from_state.recv() else { break };
                let done =
                    execute_stage(&cases[rec.index], rec, disk?, options, pool, clock, budget)?;
                if to_commit.send(done).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let mut blocks = Vec::with_capacity(cases.len());
        let mut commit_error = None;
        for done in from_exec {
            // Block order on both queues: the next early root belongs to this block.
            let early = from_root.recv().ok().flatten();
            match commit_stage(
                &cases[done.index],
                done,
                early,
                trie,
                options,
                clock,
                budget,
            ) {
                Ok(mut b) => {
                    b.read_bytes = crate::disk::io_read_bytes();
                    blocks.push(b);
                    if trie.is_some() {
                        let _ = committed.send(());
                    }
                }
                Err(e) => {
                    commit_error = Some(e);
                    break;
                }
            }
        }
        // Dropping the receivers (and the commit tokens) stops the stages above at their next
        // send or wait.
        drop(from_root);
        drop(committed);
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<(), ExecError>>| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        let executed = join(execute);
        let recovered = join(recover);
        // Errors in block order: a stage further down only saw earlier blocks.
        if let Some(e) = commit_error {
            return Err(e);
        }
        executed?;
        recovered?;
        Ok(blocks)
    })
}

/// The root of a whole post-state, `mode` `serial` (on the calling thread) or `parallel`
/// (storage tries spread over the current pool: the budget).
fn full_root(mode: RootMode, state: &PreState) -> B256 {
    match mode {
        RootMode::Serial => gigagas_state::state_root_serial(state),
        _ => gigagas_state::state_root(state),
    }
}
