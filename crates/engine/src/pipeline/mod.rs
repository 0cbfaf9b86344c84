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
//! writes and hashes from the BAL takes a read snapshot of the state after N-1 (the store,
//! with N-1's writes laid over it from memory while N-1 still commits: the overlay, when the
//! state [`IncrementalState::overlays`]), prefetches every account and slot N's BAL names from it
//! in parallel in on-disk key order (the prefetch stage, beside N-1's execution), and hands it
//! to the execute stage: block N executes reading the store. In memory there is nothing to
//! prefetch; the stage is reported as zero rather than hidden. What the prefetch reads, and
//! what execution must read on demand, depends on what the list carries
//! ([`PipelineOptions::bal`], [`BalVariant`]); every read that goes to the store while
//! executing is counted ([`BlockTimeline::demand_reads`]).

use crate::block::{BlockCase, Mode};
use crate::root::{
    change_set, change_set_of_execution, full_root, touched_post_state, DiskSnapshot,
    IncrementalState, PendingRoot, RootMode,
};
use crate::variant::{BalVariant, FullValues};
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

/// The incremental root's node store, shared by the stage that computes roots and the stage
/// that commits them (each implementation synchronises itself: see [`IncrementalState`]).
type Trie<'a> = dyn IncrementalState + 'a;

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
    /// Blocks per execution unit: 1 runs each block on its own; K > 1 runs K consecutive
    /// blocks as one mega-block ([`crate::mega`]; parallel mode only), every block still
    /// verified, written and rooted on its own. Runs of consecutive block numbers are cut
    /// into chunks of K.
    pub mega: usize,
    /// What each block's access list carries ([`BalVariant`]): what is prefetched, what
    /// execution reads on demand. [`BalVariant::None`] needs [`Mode::SequentialNoBal`] (there
    /// is no list to run in parallel from) and every other variant a mode that has one.
    pub bal: BalVariant,
}

impl PipelineOptions {
    /// The options `gigagas run` starts from: `mode` on `mode.threads()`, no root, stages
    /// overlapped, one block per unit.
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            root: RootMode::None,
            overlap: true,
            threads: mode.threads(),
            mega: 1,
            bal: if mode == Mode::SequentialNoBal {
                BalVariant::None
            } else {
                BalVariant::Keys
            },
        }
    }
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
    /// Number of the first block of the execution unit this block ran in (its own number
    /// unless it ran inside a mega-block). A unit's execute span is recorded on its first
    /// block; its other blocks carry an empty span at the unit's end.
    pub unit: u64,
    /// What this run verified for the block.
    pub checks: crate::block::Checks,
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
    /// Accounts, slots and code execution read from the store on demand (not prefetched,
    /// not supplied by a `full` list, not in the code cache): reads on the executing
    /// threads' critical path. A mega-block's count is on its first block. `None` when the
    /// state is in memory.
    pub demand_reads: Option<u64>,
}

/// A verified pipeline run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PipelineRun {
    /// Execution mode name.
    pub mode: String,
    /// The BAL variant the blocks ran from.
    pub bal: BalVariant,
    /// Root mode.
    pub root: RootMode,
    /// Whether stages overlapped.
    pub overlap: bool,
    /// Whether any unit started without waiting for the last one's commit, reading its
    /// writes from memory ([`IncrementalState::overlays`], overlapped stages, roots computed
    /// from shipped BALs: never with `--bal none` or where every unit is a mega-block).
    pub overlay: bool,
    /// Thread budget.
    pub threads: usize,
    /// Every block, in order.
    pub blocks: Vec<BlockTimeline>,
    /// Wall time of the whole run, ns, without the time spent between blocks on work that is
    /// not a node's ([`IncrementalState::between_blocks`]: cold mode's cache drop).
    pub wall_ns: u64,
    /// The time left out of `wall_ns`, ns.
    pub untimed_ns: u64,
    /// The wait, after the last block's commit, for every write to be durable (`--sync
    /// every-N|end`: the flush the last commit started, or the one done then), ns; inside
    /// `wall_ns`.
    pub final_sync_ns: u64,
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

/// The write and root stages done from a shipped BAL, before execution confirmed it.
struct EarlyRoot {
    prefetch: Option<StageSpan>,
    post_state: PreState,
    write: StageSpan,
    root: Option<(Result<B256, String>, StageSpan)>,
    /// The incremental root's updates, written by the commit stage once the block verified.
    pending: Option<PendingRoot>,
}

/// The state a unit of blocks executes against, handed to `to_execute` (one call per unit,
/// always): a read snapshot of the store with every BAL of the unit prefetched, or `None`
/// when the state is in memory. Then each block's write and root from its shipped BAL where
/// they can start before execution ([`early_root`]); inside a mega-block an incremental root
/// needs the block before it written, so only the unit's first block has one.
#[allow(clippy::too_many_arguments)]
fn early_unit_stage(
    unit: &[BlockCase<'_>],
    full: Option<&FullValues>,
    options: &PipelineOptions,
    clock: &Clock,
    budget: &rayon::ThreadPool,
    io: &rayon::ThreadPool,
    trie: Option<&Trie<'_>>,
    to_execute: impl FnOnce(Result<Option<DiskSnapshot>, ExecError>),
) -> Vec<Option<EarlyRoot>> {
    let nothing = || (0..unit.len()).map(|_| None).collect();
    let Some(first) = unit.first() else {
        to_execute(Ok(None));
        return nothing();
    };
    let number = first.number();
    // One read transaction per reading thread (each serialises its readers behind a lock):
    // execution's workers and the budget's pool, and every prefetch thread, so that the
    // prefetch's reads are really in flight at once.
    let readers = options.threads * 2 + 2 + PREFETCH_THREADS;
    let snapshot = match trie.map(|t| t.snapshot(readers)) {
        Some(Err(e)) => Err(ExecError::Unsupported {
            block: number,
            what: format!("state store snapshot: {e}"),
        }),
        Some(Ok(s)) => Ok(s),
        None => Ok(None),
    };
    let mut snapshot = match snapshot {
        Ok(s) => s,
        Err(e) => {
            to_execute(Err(e));
            return nothing();
        }
    };
    let mut prefetch = None;
    if let Some(snap) = &mut snapshot {
        // A `full` list's values came with the block: held before anything is read.
        if let Some(values) = full {
            snap.supply(
                values.accounts.iter().cloned(),
                values.slots.iter().cloned(),
            );
        }
        let bals: Vec<_> = unit
            .iter()
            .filter_map(|c| c.prepared.input.access_list.as_ref())
            .filter(|_| options.bal.has_bal())
            .collect();
        if !bals.is_empty() {
            let variant = options.bal;
            let (read, span) = clock.on(io, || {
                bals.iter().try_for_each(|bal| {
                    if let Some(list) = variant.prefetch_values(bal) {
                        snap.prefetch_values(&list)?;
                        snap.warm_trie_paths(&list)?;
                    } else if variant.prefetch_paths() {
                        snap.warm_trie_paths(bal)?;
                    }
                    Ok::<(), gigagas_data::PreStateError>(())
                })
            });
            if let Err(e) = read {
                to_execute(Err(ExecError::Unsupported {
                    block: number,
                    what: format!("prefetch: {e}"),
                }));
                return nothing();
            }
            prefetch = Some(span);
        }
    }
    to_execute(Ok(snapshot));
    unit.iter()
        .enumerate()
        .map(|(j, case)| {
            // Without a list nothing is known before execution; inside a mega-block an
            // incremental root needs the block before it written.
            if !options.bal.has_bal() || (j > 0 && options.root == RootMode::Incremental) {
                return None;
            }
            let mut early = early_root(case, options, clock, budget, trie)?;
            if j == 0 {
                early.prefetch = prefetch;
            }
            Some(early)
        })
        .collect()
}

/// Write and root from the block's shipped BAL; `None` for blocks without one or without a
/// complete state (whose root is computed from execution's changes).
fn early_root(
    case: &BlockCase<'_>,
    options: &PipelineOptions,
    clock: &Clock,
    budget: &rayon::ThreadPool,
    trie: Option<&Trie<'_>>,
) -> Option<EarlyRoot> {
    let input = case.prepared.input;
    let bal = input
        .access_list
        .as_ref()
        .filter(|_| input.complete_state)?;
    if let (RootMode::Incremental, Some(trie)) = (options.root, trie) {
        return Some(incremental_root(input, bal, trie, clock, budget));
    }
    let rebuild = || {
        let mut accounts: alloy_primitives::map::HashMap<_, _> = input
            .pre_state
            .accounts()
            .map(|(a, acc)| (*a, acc.clone()))
            .collect();
        gigagas_data::chain::apply_bal(&mut accounts, bal);
        PreState::new(accounts, input.pre_state.block_hashes().clone())
    };
    let (post_state, write) = clock.on(budget, rebuild);
    let root = match options.root {
        RootMode::None => None,
        mode => Some(clock.on(budget, || Ok(full_root(mode, &post_state)))),
    };
    Some(EarlyRoot {
        prefetch: None,
        post_state,
        write,
        root,
        pending: None,
    })
}

/// The incremental root of `input` from its BAL's changes (computed on the node store as it
/// is after the block before it: written, or computed and laid over it with the overlay);
/// written by the commit stage only once the block verified.
fn incremental_root(
    input: &gigagas_data::BlockInput,
    bal: &alloy_eip7928::BlockAccessList,
    trie: &Trie<'_>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> EarlyRoot {
    let ((post_state, computed), span) = clock.on(budget, || {
        let post_state = touched_post_state(&input.pre_state, bal);
        let changes = change_set(bal, &post_state);
        let computed = trie.compute(input, &changes);
        (post_state, computed)
    });
    let (root, pending) = match computed {
        Ok(p) => (Ok(p.root()), Some(p)),
        Err(e) => (Err(e), None),
    };
    EarlyRoot {
        prefetch: None,
        post_state,
        write: StageSpan::default(),
        root: Some((root, span)),
        pending,
    }
}

/// The incremental root of `input` from the changes its execution made (`--bal none`: a
/// node without a list knows its writes only now); written by the commit stage.
fn incremental_root_of_execution(
    input: &gigagas_data::BlockInput,
    post: &CacheState,
    trie: &Trie<'_>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> EarlyRoot {
    let (computed, span) = clock.on(budget, || {
        let changes = change_set_of_execution(&input.pre_state, post);
        trie.compute(input, &changes)
    });
    let (root, pending) = match computed {
        Ok(p) => (Ok(p.root()), Some(p)),
        Err(e) => (Err(e), None),
    };
    EarlyRoot {
        prefetch: None,
        // Only a full root reads the post-state; an incremental one has its changes.
        post_state: PreState::new(Default::default(), Default::default()),
        write: StageSpan::default(),
        root: Some((root, span)),
        pending,
    }
}

/// Stage 2 output: the verified block's changes.
struct Executed {
    index: usize,
    /// Number of the first block of its execution unit.
    unit: u64,
    /// Reads execution sent to the store ([`BlockTimeline::demand_reads`]).
    demand_reads: Option<u64>,
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
    let demand_reads = disk.as_ref().map(DiskSnapshot::demand_reads);
    drop(disk);
    let (receipts, post, access) = out?;
    let (checked, verify) = clock.on(budget, || {
        crate::block::verify_run(case, &receipts, access.as_ref())
    });
    checked?;
    Ok(Executed {
        index: rec.index,
        unit: case.number(),
        demand_reads,
        post,
        recover: rec.recover,
        execute,
        verify,
    })
}

/// Executes one unit: a single block ([`execute_stage`]) or a mega-block of consecutive
/// blocks (`mega`, prepared before timing) as one parallel run, then verifies each of its
/// blocks on its own (receipts equal to the sequential baseline's, the header's gas, bloom
/// and receipts root; each block's writes were checked against its BAL during execution).
#[allow(clippy::too_many_arguments)]
fn execute_unit_stage(
    cases: &[BlockCase<'_>],
    recs: Vec<Recovered<'_>>,
    mega: Option<&crate::mega::MegaUnit<'_>>,
    disk: Option<DiskSnapshot>,
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> Result<Vec<Executed>, ExecError> {
    let (Some(mega), Mode::Parallel { threads, scheduler }) = (mega, options.mode) else {
        // A unit without a mega-block plan is one block.
        let mut disk = disk;
        return recs
            .into_iter()
            .map(|rec| {
                let case = &cases[rec.index];
                execute_stage(case, rec, disk.take(), options, pool, clock, budget)
            })
            .collect();
    };
    let first = cases[mega.blocks.start].number();
    let pool = pool
        .filter(|p| p.threads() == threads)
        .ok_or_else(|| ExecError::Unsupported {
            block: first,
            what: format!("no worker pool with {threads} threads"),
        })?;
    let blocks: Vec<&PreparedBlock<'_>> = recs.iter().map(|r| &r.prepared).collect();
    let run = || match &disk {
        Some(state) => gigagas_exec::execute_mega(&blocks, state, &mega.plan, pool, scheduler),
        None => gigagas_exec::execute_mega(&blocks, &*mega.pre_state, &mega.plan, pool, scheduler),
    };
    let (out, execute) = clock.time(|| budget.install(run));
    let demand_reads = disk.as_ref().map(DiskSnapshot::demand_reads);
    drop(disk);
    let runs = out?;
    recs.iter()
        .zip(runs)
        .enumerate()
        .map(|(j, (rec, run))| {
            let case = &cases[rec.index];
            let (checked, verify) = clock.on(budget, || {
                crate::block::verify_run(case, &run.receipts, None)
            });
            checked?;
            Ok(Executed {
                index: rec.index,
                unit: first,
                demand_reads: demand_reads.map(|n| if j == 0 { n } else { 0 }),
                post: run.post,
                recover: rec.recover,
                execute: if j == 0 {
                    execute
                } else {
                    StageSpan {
                        start_ns: execute.end_ns,
                        end_ns: execute.end_ns,
                    }
                },
                verify,
            })
        })
        .collect()
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
    // Inside a mega-block, a block after the first gets its incremental root only now, on
    // the node store the block before it was written to.
    let early = match (early, trie, &input.access_list) {
        (None, Some(trie), _)
            if options.root == RootMode::Incremental && !options.bal.has_bal() =>
        {
            Some(incremental_root_of_execution(
                input, &done.post, trie, clock, budget,
            ))
        }
        (None, Some(trie), Some(bal)) if options.root == RootMode::Incremental => {
            Some(incremental_root(input, bal, trie, clock, budget))
        }
        (early, ..) => early,
    };
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
        let (written, span) = clock.on(budget, || trie.commit(input, pending));
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
        unit: done.unit,
        checks: crate::block::Checks::of(case, options.mode, state_root.is_some(), root_checked),
        state_root,
        root_checked,
        read_bytes: None,
        demand_reads: done.demand_reads,
    })
}

/// Runs `cases` (consecutive prepared blocks) through the pipeline. A parallel mode needs
/// `pool` with `options.threads` workers. The first error, in block order, stops the run:
/// no block after it is written (with the overlay, later blocks may already have been
/// hashed over its writes in memory; they are discarded, never committed).
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
    match (options.bal, options.mode) {
        (BalVariant::None, Mode::SequentialNoBal) => {}
        (BalVariant::None, mode) => {
            return Err(ExecError::Unsupported {
                block: cases.first().map_or(0, BlockCase::number),
                what: format!("--bal none runs a block without a list (sequential, building none); mode {mode} needs one"),
            })
        }
        (variant, Mode::SequentialNoBal) => {
            return Err(ExecError::Unsupported {
                block: cases.first().map_or(0, BlockCase::number),
                what: format!("sequential execution without a BAL has no list to read from: --bal none, not {variant}"),
            })
        }
        _ => {}
    }
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
    }
    // The incremental root's node store: the state before the first block, built before
    // timing starts (a node has it on disk when it starts).
    let trie = budget.install(|| {
        crate::root::incremental_state(
            options.root,
            state,
            cases.first().map(|c| &*c.prepared.input.pre_state),
        )
    });
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
    // Execution units (one block each, or mega-blocks) and the mega-blocks' merged plans and
    // pre-states, built before timing starts (as a node would have them from the BALs).
    let units = units_of(cases, options)?;
    let trie = trie.as_deref();
    let clock = Clock(Instant::now());
    let cpu0 = process_cpu_ns();
    let read0 = crate::disk::io_read_bytes();
    let mut untimed_ns = 0u64;
    let overlaid = std::sync::atomic::AtomicBool::new(false);
    let mut blocks = if options.overlap {
        overlapped(
            cases, &units, options, pool, &clock, budget, &io, trie, &overlaid,
        )?
    } else {
        let mut blocks = Vec::with_capacity(cases.len());
        for unit in &units {
            let recs = recover_unit(cases, unit.blocks.clone(), &clock, budget)?;
            let mut disk = Ok(None);
            let early = early_unit_stage(
                &cases[unit.blocks.clone()],
                unit.full.as_ref(),
                options,
                &clock,
                budget,
                &io,
                trie,
                |s| disk = s,
            );
            let done = execute_unit_stage(
                cases,
                recs,
                unit.mega.as_ref(),
                disk?,
                options,
                pool,
                &clock,
                budget,
            )?;
            for (done, early) in done.into_iter().zip(early) {
                let case = &cases[done.index];
                let mut block = commit_stage(case, done, early, trie, options, &clock, budget)?;
                block.read_bytes = crate::disk::io_read_bytes();
                blocks.push(block);
            }
            if let (true, Some(t)) = (between, trie) {
                let t0 = Instant::now();
                t.between_blocks().map_err(|e| ExecError::Unsupported {
                    block: cases[unit.blocks.start].number(),
                    what: e,
                })?;
                untimed_ns += t0.elapsed().as_nanos() as u64;
            }
        }
        blocks
    };
    // What the sync policy left for the end is written inside the timed run.
    let mut final_sync_ns = 0u64;
    if let Some(t) = trie {
        let t0 = Instant::now();
        let flushed = t.finish().map_err(|e| ExecError::Unsupported {
            block: cases.last().map_or(0, BlockCase::number),
            what: format!("making the state durable: {e}"),
        })?;
        if flushed {
            final_sync_ns = t0.elapsed().as_nanos().max(1) as u64;
        }
    }
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
        bal: options.bal,
        root: options.root,
        overlap: options.overlap,
        overlay: overlaid.load(std::sync::atomic::Ordering::Relaxed),
        threads,
        blocks,
        wall_ns,
        untimed_ns,
        final_sync_ns,
        cpu_ns,
    })
}

/// One execution unit of a run: a block, or consecutive blocks run as a mega-block.
struct Unit<'a> {
    /// Indices of its blocks in the case list.
    blocks: std::ops::Range<usize>,
    /// The mega-block's merged plan and pre-state (`None` for a single block).
    mega: Option<crate::mega::MegaUnit<'a>>,
    /// The pre-block values a `full` list carries for the unit (`--bal full` only).
    full: Option<FullValues>,
}

/// The run's units: every block on its own, or (`options.mega` > 1, parallel mode only) runs
/// of consecutive block numbers cut into mega-blocks of `options.mega`.
fn units_of<'a>(
    cases: &[BlockCase<'a>],
    options: &PipelineOptions,
) -> Result<Vec<Unit<'a>>, ExecError> {
    let full = |blocks: &std::ops::Range<usize>| {
        (options.bal == BalVariant::Full).then(|| {
            let mut values = FullValues::default();
            for case in &cases[blocks.clone()] {
                let input = case.prepared.input;
                if let Some(bal) = &input.access_list {
                    values.add(bal, &input.pre_state);
                }
            }
            values
        })
    };
    if options.mega <= 1 {
        return Ok((0..cases.len())
            .map(|i| Unit {
                blocks: i..i + 1,
                mega: None,
                full: full(&(i..i + 1)),
            })
            .collect());
    }
    if !matches!(options.mode, Mode::Parallel { .. }) {
        return Err(ExecError::Unsupported {
            block: cases.first().map_or(0, BlockCase::number),
            what: "a mega-block is parallel work (its blocks' transactions run at once from their merged BALs); sequential mode runs one transaction after another".into(),
        });
    }
    crate::mega::mega_plan(cases, options.mega).map(|units| {
        units
            .into_iter()
            .map(|u| Unit {
                blocks: u.blocks.clone(),
                full: full(&u.blocks),
                mega: (u.blocks.len() > 1).then_some(u),
            })
            .collect()
    })
}

/// Stage 1 for a unit: every block's senders recovered, each block timed on its own.
fn recover_unit<'a>(
    cases: &[BlockCase<'a>],
    blocks: std::ops::Range<usize>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
) -> Result<Vec<Recovered<'a>>, ExecError> {
    blocks
        .map(|i| recover_stage(&cases[i], i, clock, budget))
        .collect()
}

/// Threads of the prefetch stage's reads from a disk store. They spend their time waiting on
/// the device, so they run beside the CPU budget, not in it; the block's snapshot holds one
/// read transaction for each of them (a transaction serialises its readers), so all of them
/// are reads in flight. This VM's disk serves 8k random 4 KiB reads/s at 1 in flight, 28.5k at
/// 8 and ~36k at 16, no more at 32–64; with 16 threads (and their own transactions) a cold
/// 300M `bal-prefetch-cold` block's prefetch took 312–341 ms against 478–534 ms with 8 threads
/// sharing 6 transactions (A-B-B-A, docs/results/eest-bal-shapes-2core.md § 4).
pub const PREFETCH_THREADS: usize = 16;

/// Depth of the queues between stages: one block waiting per stage (back-pressure: a fast
/// stage never runs more than one block ahead, so memory stays bounded).
const QUEUE: usize = 1;

#[allow(clippy::too_many_arguments)]
fn overlapped(
    cases: &[BlockCase<'_>],
    units: &[Unit<'_>],
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
    clock: &Clock,
    budget: &rayon::ThreadPool,
    io: &rayon::ThreadPool,
    trie: Option<&Trie<'_>>,
    overlaid: &std::sync::atomic::AtomicBool,
) -> Result<Vec<BlockTimeline>, ExecError> {
    std::thread::scope(|scope| {
        // Every queue carries one unit (a block, or a mega-block's blocks) per message.
        let (to_exec, from_recover): (SyncSender<Vec<Recovered<'_>>>, Receiver<_>) =
            sync_channel(QUEUE);
        let (to_commit, from_exec): (SyncSender<Vec<Executed>>, Receiver<_>) = sync_channel(QUEUE);
        let (to_commit_root, from_root): (SyncSender<Vec<Option<EarlyRoot>>>, Receiver<_>) =
            sync_channel(QUEUE);
        type Snapshot = Result<Option<DiskSnapshot>, ExecError>;
        let (to_exec_state, from_state): (SyncSender<Snapshot>, Receiver<_>) = sync_channel(QUEUE);
        // With an incremental root, unit N's state and roots come only after unit N-1 was
        // committed (verified and written): one token per committed unit (unbounded: the
        // commit stage never waits to hand one over). A state that overlays reads unit N-1's
        // writes from memory instead, so unit N starts as soon as N-1's roots were computed
        // here; it still waits for the commit when they were not (a mega-block's later
        // blocks, or roots computed from execution's changes).
        let (committed, wait_commit) = std::sync::mpsc::channel::<()>();
        let overlays = trie.is_some_and(|t| t.overlays());
        // Write and root from shipped BALs, beside execution (`None` for other blocks); first
        // the state each unit executes against (prefetched, when on disk).
        scope.spawn(move || {
            // Units known committed, and whether the last unit's roots were all computed here.
            let (mut seen, mut computed) = (0, false);
            for (u, unit) in units.iter().enumerate() {
                if u > 0 && trie.is_some() && overlays && computed {
                    // Started on the last unit's writes in memory, whether or not its
                    // commit has landed by now.
                    overlaid.store(true, std::sync::atomic::Ordering::Relaxed);
                } else if u > 0 && trie.is_some() {
                    while seen < u {
                        if wait_commit.recv().is_err() {
                            return; // the commit stage stopped
                        }
                        seen += 1;
                    }
                }
                let mut stopped = false;
                let early = early_unit_stage(
                    &cases[unit.blocks.clone()],
                    unit.full.as_ref(),
                    options,
                    clock,
                    budget,
                    io,
                    trie,
                    |s| stopped = to_exec_state.send(s).is_err(),
                );
                computed = early
                    .iter()
                    .all(|e| e.as_ref().is_some_and(|e| e.pending.is_some()));
                if stopped || to_commit_root.send(early).is_err() {
                    break;
                }
            }
        });
        let recover = scope.spawn(move || -> Result<(), ExecError> {
            for unit in units {
                let recs = recover_unit(cases, unit.blocks.clone(), clock, budget)?;
                if to_exec.send(recs).is_err() {
                    break; // a later stage stopped
                }
            }
            Ok(())
        });
        let execute = scope.spawn(move || -> Result<(), ExecError> {
            for (unit, recs) in units.iter().zip(from_recover) {
                // Unit order on both queues: the next state belongs to this unit.
                let Ok(disk) = from_state.recv() else { break };
                let done = execute_unit_stage(
                    cases,
                    recs,
                    unit.mega.as_ref(),
                    disk?,
                    options,
                    pool,
                    clock,
                    budget,
                )?;
                if to_commit.send(done).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let mut blocks = Vec::with_capacity(cases.len());
        let mut commit_error = None;
        'units: for done in from_exec {
            // Unit order on both queues: the next early roots belong to this unit.
            let early = from_root.recv().unwrap_or_default();
            let mut early = early.into_iter();
            for done in done {
                match commit_stage(
                    &cases[done.index],
                    done,
                    early.next().flatten(),
                    trie,
                    options,
                    clock,
                    budget,
                ) {
                    Ok(mut b) => {
                        b.read_bytes = crate::disk::io_read_bytes();
                        blocks.push(b);
                    }
                    Err(e) => {
                        commit_error = Some(e);
                        break 'units;
                    }
                }
            }
            if trie.is_some() {
                let _ = committed.send(());
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
