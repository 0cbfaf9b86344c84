//! The block pipeline: recover → execute → verify → write → root, per block, either back to
//! back (`overlap: false`) or as three overlapped stage threads joined by bounded queues
//! (`overlap: true`): the senders of block N+1 are recovered while block N executes, and the
//! state of block N is written and hashed while block N+1 executes.
//!
//! Every stage of every block is timed (start and end on one clock), so the report can show
//! a timeline, each stage's share, the end-to-end throughput and the pipeline's own bound:
//! `wall ≥ max(process CPU time / (threads + stage_threads), the busiest stage's total, the
//! longest block)` — a stage handles one block at a time, and one block's stages depend on
//! each other.
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
//! in parallel in on-disk key order (the prefetch stage, on a thread of its own beside N-1's
//! execution and N's own root, which needs only the same state and so does not wait for the
//! reads), and hands it to the execute stage: block N executes reading the store. In memory there is nothing to
//! prefetch; the stage is reported as zero rather than hidden. What the prefetch reads, and
//! what execution must read on demand, depends on what the list carries
//! ([`PipelineOptions::bal`], [`BalVariant`]); every read that goes to the store while
//! executing is counted ([`BlockTimeline::demand_reads`]).

mod clock;
mod commit;
mod drive;
mod early;
mod execute;
mod prefetch;
mod recover;
mod report;
mod units;

pub use drive::VERIFY_QUEUE;
pub use report::{BlockTimeline, PipelineRun, StageSpan};

use crate::block::{BlockCase, Mode};
use crate::recovery::Recoverer;
use crate::root::{IncrementalState, RootMode};
use crate::variant::BalVariant;
use clock::Clock;
use early::EarlyRoot;
use execute::Executed;
use gigagas_exec::{ExecError, WorkerPool};
use recover::Recovered;
use units::{units_of, Unit};

/// Stage names, in pipeline order (the keys of [`PipelineRun::phases_ns`]).
pub const STAGES: [&str; 6] = ["recover", "prefetch", "execute", "verify", "write", "root"];

/// The incremental root's node store, shared by the stage that computes roots and the stage
/// that commits them (each implementation synchronises itself: see [`IncrementalState`]).
type Trie<'a> = dyn IncrementalState + 'a;

/// What every stage of one run reads, copied into each stage's thread: the blocks, the
/// options, the clock, the thread budget, the I/O pool, the worker pool, the sender
/// recovery and the incremental root's state.
#[derive(Clone, Copy)]
struct Ctx<'r, 'a> {
    /// The run's prepared blocks, in order.
    cases: &'r [BlockCase<'a>],
    /// How the run runs.
    options: &'r PipelineOptions,
    /// The execution workers (parallel mode).
    pool: Option<&'r WorkerPool>,
    /// The one clock of every span.
    clock: &'r Clock,
    /// The one CPU budget of every stage.
    budget: &'r rayon::ThreadPool,
    /// The prefetch's reads (they wait on the device, beside the budget).
    io: &'r rayon::ThreadPool,
    /// Verification, the roots and the commit: the budget, or a pool of their own
    /// ([`PipelineOptions::stage_threads`]).
    stages: &'r rayon::ThreadPool,
    /// Where senders are recovered.
    recovery: &'r Recoverer,
    /// The incremental root's node store (`None` for the from-scratch roots).
    trie: Option<&'r Trie<'r>>,
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
    /// Blocks per execution unit: 1 runs each block on its own; K > 1 runs K consecutive
    /// blocks as one mega-block ([`crate::mega`]; parallel mode only), every block still
    /// verified, written and rooted on its own. Runs of consecutive block numbers are cut
    /// into chunks of K.
    pub mega: usize,
    /// What each block's access list carries ([`BalVariant`]): what is prefetched, what
    /// execution reads on demand. [`BalVariant::None`] needs [`Mode::SequentialNoBal`] (there
    /// is no list to run in parallel from) and every other variant a mode that has one.
    pub bal: BalVariant,
    /// Threads of a pool of the stages' own, beside the thread budget, for verification, the
    /// roots and the commit (0: they share the budget, the execution workers' pool). On one
    /// pool a stage's job waits until a worker has nothing else, and the execution's worker
    /// loops hold every thread for a block's whole execution: on the H200 at 16 threads a
    /// 300M block's root took 18–25 ms beside an execution against 6.5 alone, and a commit
    /// waited 11 ms (`docs/results/pipeline-deps-2core.md`). With a pool of their own the
    /// machine's scheduler shares the cores instead (more threads than `threads`). Overlapped
    /// stages only.
    pub stage_threads: usize,
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
            stage_threads: 0,
            bal: if mode == Mode::SequentialNoBal {
                BalVariant::None
            } else {
                BalVariant::Keys
            },
        }
    }
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
    run_pipeline_on(cases, options, pool, state, &Recoverer::cpu())
}

/// [`run_pipeline_with`] with senders recovered by `recovery` (the CPU or a GPU).
pub fn run_pipeline_on(
    cases: &[BlockCase<'_>],
    options: &PipelineOptions,
    pool: Option<&WorkerPool>,
    state: Option<Box<dyn IncrementalState + '_>>,
    recovery: &Recoverer,
) -> Result<PipelineRun, ExecError> {
    let first = cases.first().map_or(0, BlockCase::number);
    let refuse = |what: String| ExecError::Unsupported { block: first, what };
    let threads = options.threads.max(1);
    let build = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| refuse(format!("cannot start a {n}-thread pool: {e}")))
    };
    // One thread budget for every stage: the execution workers' own pool when there is one
    // (recovery, verification, writes and roots queue for the same threads, unless the
    // stages have a pool of their own: `stage_threads`), else a pool of `threads`. Stage
    // threads only wait on queues and hand work to it (but for a GPU launch's hashes and
    // checks after the first: `recover.rs`).
    let own;
    let budget: &rayon::ThreadPool = match pool {
        Some(p) if matches!(options.mode, Mode::Parallel { .. }) => {
            if p.threads() != threads {
                return Err(refuse(format!(
                    "the worker pool has {} threads, the pipeline's budget is {threads}",
                    p.threads()
                )));
            }
            p.rayon_pool()
        }
        _ => {
            own = build(threads)?;
            &own
        }
    };
    options.check(cases).map_err(|e| refuse(e.to_string()))?;
    // The incremental root's node store: the state before the first block, built before
    // timing starts (a node has it on disk when it starts).
    let trie = budget.install(|| {
        crate::root::incremental_state(
            options.root,
            state,
            cases.first().map(|c| &*c.prepared.input.pre_state),
        )
    });
    if options.overlap && trie.as_ref().is_some_and(|t| t.needs_between_blocks()) {
        return Err(refuse(crate::spec::SpecError::conflict(
            "state.cold",
            "pipeline",
            "cold reads need the stages back to back: dropping the page cache between blocks would overlap other blocks' stages",
        ).to_string()));
    }
    // The prefetch's reads wait on the device, not on a CPU: they run on their own small
    // pool, beside the budget (one thread when the state is in memory: nothing to read).
    let io = build(if trie.is_some() { PREFETCH_THREADS } else { 1 })?;
    let own_stages = match options.stage_threads {
        0 => None,
        n => Some(build(n)?),
    };
    // Execution units (one block each, or mega-blocks) and the mega-blocks' merged plans and
    // pre-states, built before timing starts (as a node would have them from the BALs).
    let units = units_of(cases, options)?;
    let clock = Clock::start();
    let ctx = Ctx {
        cases,
        options,
        pool,
        clock: &clock,
        budget,
        io: &io,
        stages: own_stages.as_ref().unwrap_or(budget),
        recovery,
        trie: trie.as_deref(),
    };
    let cpu0 = report::process_cpu_ns();
    let read0 = crate::disk::io_read_bytes();
    let overlaid = std::sync::atomic::AtomicBool::new(false);
    let (mut blocks, untimed_ns) = if options.overlap {
        (drive::overlapped(ctx, &units, &overlaid)?, 0)
    } else {
        drive::back_to_back(ctx, &units)?
    };
    // What the sync policy left for the end is written inside the timed run.
    let mut final_sync_ns = 0u64;
    if let Some(t) = ctx.trie {
        let t0 = std::time::Instant::now();
        let flushed = t.finish().map_err(|e| ExecError::State {
            block: cases.last().map_or(0, BlockCase::number),
            what: format!("making the state durable: {e}"),
        })?;
        if flushed {
            final_sync_ns = t0.elapsed().as_nanos().max(1) as u64;
        }
    }
    let wall_ns = clock.now().saturating_sub(untimed_ns);
    let cpu_ns = cpu0
        .zip(report::process_cpu_ns())
        .map(|(a, b)| b.saturating_sub(a));
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
        recovery: recovery.name(),
        threads,
        stage_threads: options.stage_threads,
        blocks,
        wall_ns,
        untimed_ns,
        final_sync_ns,
        cpu_ns,
        final_flush: ctx.trie.and_then(|t| t.final_flush()),
        final_journal: ctx.trie.and_then(|t| t.final_journal()),
    })
}

/// Threads of the prefetch stage's reads from a disk store. They spend their time waiting on
/// the device, so they run beside the CPU budget, not in it; the block's snapshot holds one
/// read transaction for each of them (a transaction serialises its readers), so all of them
/// are reads in flight. This VM's disk serves 8k random 4 KiB reads/s at 1 in flight, 28.5k at
/// 8 and ~36k at 16, no more at 32–64; with 16 threads (and their own transactions) a cold
/// 300M `bal-prefetch-cold` block's prefetch took 312–341 ms against 478–534 ms with 8 threads
/// sharing 6 transactions (A-B-B-A, docs/results/eest-bal-shapes-2core.md § 4).
pub const PREFETCH_THREADS: usize = 16;
