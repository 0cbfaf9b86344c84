//! The verified block: preparing a block (sender recovery, the sequential baseline that
//! builds the BAL, header and state-root checks, the parallel plan) and one verified run of
//! it in either mode.

use gigagas_data::PostState;
use gigagas_data::{BlockInput, PreState};
use gigagas_exec::{
    execute_parallel, execute_sequential, execute_sequential_without_bal, recover_senders, spec,
    BlockAccess, ExecError, ParallelPlan, ParallelRun, PreparedBlock, Scheduler, SequentialRun,
    StateProvider, WorkerPool,
};
use gigagas_receipt::TxReceipt;
use gigagas_verify::{
    bal_divergence, check_against_header, compare_receipts, BalViolation, HeaderCheck, VerifyError,
};
use std::time::Instant;

/// A block prepared for measurement: its verified sequential baseline and parallel plan.
#[derive(Debug)]
pub struct BlockCase<'a> {
    /// Environment and transaction environments.
    pub prepared: PreparedBlock<'a>,
    /// The sequential run that built the BAL (verified against the header).
    pub baseline: SequentialRun,
    /// The validated BAL for parallel runs.
    pub plan: ParallelPlan,
    /// Sender recovery wall time, ns.
    pub recover_nanos: u64,
    /// BAL validation and indexing time, ns.
    pub bal_prepare_nanos: u64,
    /// Which header values were checked.
    pub header_check: HeaderCheck,
    /// Whether the header's state root was recomputed and matched (complete pre-states whose
    /// rule-filled storage, if any, fits one streaming pass: `gigagas_data::FILL_PASS_SLOTS`).
    pub state_root_checked: bool,
}

impl BlockCase<'_> {
    /// Block number.
    pub fn number(&self) -> u64 {
        self.prepared.number()
    }

    /// Fork name.
    pub fn fork(&self) -> &'static str {
        spec::spec_name(self.prepared.envs.spec)
    }
}

/// Whether [`prepare_with`] recomputes the sequential baseline's post-state root from scratch
/// and compares it with the header's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineRoot {
    /// Recompute it (complete pre-states whose rule-filled storage fits one streaming pass):
    /// the only state-root check of a run that computes no root itself.
    FromScratch,
    /// Leave it to the run: every block's root is computed by the run and compared with the
    /// header (a pipeline with a root mode other than `none`), so hashing the whole state
    /// again per block here would only repeat that check, at the whole state's cost (seconds
    /// a block at millions of slots, against milliseconds for the run's incremental root).
    ByTheRun,
}

/// Recovers senders, runs the sequential baseline (building the BAL), verifies it against the
/// header and prepares the BAL for parallel execution ([`BaselineRoot::FromScratch`]).
pub fn prepare(input: &BlockInput) -> Result<BlockCase<'_>, ExecError> {
    prepare_with(input, BaselineRoot::FromScratch)
}

/// [`prepare`], with the baseline's state-root check as `root` says.
pub fn prepare_with(input: &BlockInput, root: BaselineRoot) -> Result<BlockCase<'_>, ExecError> {
    let t0 = Instant::now();
    let senders = recover_senders(input)?;
    let recover_nanos = t0.elapsed().as_nanos() as u64;
    let prepared = PreparedBlock::new(input, &senders)?;
    let baseline = execute_sequential(&prepared, &*input.pre_state)?;
    let header_check =
        check_against_header(&input.header, &baseline.receipts, prepared.header_rules())?;
    // A rule-filled storage (`storage_fill`, up to 10^8 slots) larger than one streaming pass
    // (`FILL_PASS_SLOTS`, seconds to hash) is not hashed from scratch per block here: the
    // run's own root (every mode but `none`; the disk store's for each block) is checked
    // against the header instead.
    let state_root_checked = root == BaselineRoot::FromScratch
        && input.complete_state
        && input.pre_state.fill_slots() <= gigagas_data::FILL_PASS_SLOTS as u64;
    if state_root_checked {
        check_state_root(input, &baseline)?;
    }
    // A block that ships its BAL (generated Amsterdam chains) runs in parallel from *that*
    // list, which must equal the one sequential execution builds.
    let access = match &input.access_list {
        Some(shipped) => {
            if alloy_eip7928::compute_block_access_list_hash(shipped) != baseline.access.hash() {
                let what = bal_divergence(shipped, &baseline.access.bal)
                    .unwrap_or_else(|| "hash differs".into());
                return Err(ExecError::Verify(gigagas_verify::VerifyError::Bal {
                    block: input.number(),
                    violation: Box::new(BalViolation::RebuiltDiffers(format!(
                        "the block's BAL differs from sequential execution: {what}"
                    ))),
                }));
            }
            gigagas_exec::BlockAccess {
                bal: shipped.clone(),
                lifecycle: baseline.access.lifecycle.clone(),
            }
        }
        None => baseline.access.clone(),
    };
    let t1 = Instant::now();
    let plan = plan_from_owned(&prepared, access, &baseline)?;
    Ok(BlockCase {
        prepared,
        baseline,
        plan,
        recover_nanos,
        bal_prepare_nanos: t1.elapsed().as_nanos() as u64,
        header_check,
        state_root_checked,
    })
}

/// The parallel plan of a prepared block from `access` (the BAL its sequential run built, or
/// the one it ships), weighted by the sequential run's gas per transaction (for the gas-used
/// scheduler). Every caller that runs the parallel path builds its plan here.
pub fn plan_from(
    prepared: &PreparedBlock<'_>,
    access: &BlockAccess,
    sequential: &SequentialRun,
) -> Result<ParallelPlan, ExecError> {
    plan_from_owned(prepared, access.clone(), sequential)
}

/// [`plan_from`] keeping `access` itself (no copy of the list).
pub fn plan_from_owned(
    prepared: &PreparedBlock<'_>,
    access: BlockAccess,
    sequential: &SequentialRun,
) -> Result<ParallelPlan, ExecError> {
    let weights = sequential.receipts.iter().map(|r| r.gas_used).collect();
    ParallelPlan::new_owned(prepared.number(), access, prepared.txs.len(), Some(weights))
}

/// The parallel path from a BAL that sequential execution did not build (a block's shipped
/// list, or a deliberately wrong one in the mutation and lie checks): validated into a plan,
/// run in block order (`Scheduler::Ordered`, so the lowest-index defect is the one reported)
/// and checked against itself as every parallel run is. An invalid BAL is an error here.
pub fn execute_from_bal(
    prepared: &PreparedBlock<'_>,
    pre: &PreState,
    access: &BlockAccess,
    pool: &WorkerPool,
) -> Result<ParallelRun, ExecError> {
    let plan = ParallelPlan::new(prepared.number(), access, prepared.txs.len(), None)?;
    execute_parallel(prepared, pre, &plan, pool, Scheduler::Ordered)
}

/// Both paths on one block: the sequential baseline (which builds the BAL), then the parallel
/// path from that BAL once per scheduler in `schedulers`, each required to give the
/// sequential receipts, transaction by transaction. The header is not checked here (callers
/// that build headers from the result, like `gen`, check afterwards).
pub fn execute_both(
    prepared: &PreparedBlock<'_>,
    pre: &PreState,
    pool: &WorkerPool,
    schedulers: &[Scheduler],
) -> Result<BothPaths, ExecError> {
    let sequential = execute_sequential(prepared, pre)?;
    let plan = plan_from(prepared, &sequential.access, &sequential)?;
    let parallel = schedulers
        .iter()
        .map(|&scheduler| {
            let run = execute_parallel(prepared, pre, &plan, pool, scheduler)?;
            compare_receipts(prepared.number(), &sequential.receipts, &run.receipts)?;
            Ok((scheduler, run))
        })
        .collect::<Result<_, ExecError>>()?;
    Ok(BothPaths {
        sequential,
        parallel,
    })
}

/// What [`execute_both`] returns: the sequential run and one parallel run per scheduler, all
/// with equal receipts.
#[derive(Debug)]
pub struct BothPaths {
    /// The sequential baseline (with the BAL it built).
    pub sequential: SequentialRun,
    /// One parallel run per scheduler, in the order asked for.
    pub parallel: Vec<(Scheduler, ParallelRun)>,
}

/// On a complete pre-state, the post-state root of the verified sequential run must equal the
/// header's `stateRoot` (computed from scratch; outside every timed region).
fn check_state_root(input: &BlockInput, run: &SequentialRun) -> Result<(), ExecError> {
    let root = crate::root::post_state_root(&input.pre_state, &run.post);
    if root != input.header.state_root {
        return Err(ExecError::Verify(VerifyError::Header {
            block: input.number(),
            field: "state_root",
            expected: input.header.state_root.to_string(),
            actual: root.to_string(),
        }));
    }
    Ok(())
}

/// Checks `child` against `parent` when they are consecutive (number and parent hash): the
/// header consensus rules an execution client applies before executing (timestamp, gas limit
/// bounds, base fee, difficulty before the merge, blob gas, withdrawals, transaction forms;
/// `gigagas_verify::consensus`). Blocks that are not consecutive have nothing to check here.
pub fn check_parent(child: &BlockCase<'_>, parent: &BlockCase<'_>) -> Result<(), ExecError> {
    use gigagas_verify::consensus::{check, check_transactions_form, Body, Ommers};
    let (c, p) = (child.prepared.input, parent.prepared.input);
    if c.number() != p.number() + 1 || c.header.parent_hash != p.hash {
        return Ok(());
    }
    let transactions: Vec<_> = c.transactions.iter().map(|t| t.envelope.clone()).collect();
    let body = Body {
        transactions: &transactions,
        ommers: if c.ommer_headers.is_empty() {
            Ommers::Hashes(&c.ommers)
        } else {
            Ommers::Headers(&c.ommer_headers)
        },
        // Mainnet data runs on the mainnet schedule, which folds the glacier forks into their
        // predecessors: the bomb delay comes from the block number there.
        bomb_delay: c
            .spec
            .is_none()
            .then(|| gigagas_verify::consensus::mainnet_bomb_delay(c.number())),
        withdrawals: c
            .header
            .withdrawals_root
            .is_some()
            .then_some(c.withdrawals.as_slice()),
    };
    check(
        &c.header,
        &body,
        child.prepared.envs.spec,
        &p.header,
        parent.prepared.envs.spec,
    )
    .and_then(|()| check_transactions_form(&transactions))
    .map_err(|e| {
        ExecError::Verify(VerifyError::HeaderRule {
            block: c.number(),
            rule: e.rule,
            detail: e.detail,
        })
    })
}

/// Prepares every block of `blocks` (ascending) and checks each against its parent where the
/// parent is in the set ([`check_parent`]).
pub fn prepare_chain(blocks: &[BlockInput]) -> Result<Vec<BlockCase<'_>>, ExecError> {
    let mut cases: Vec<BlockCase<'_>> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let case = prepare(block)?;
        if let Some(parent) = cases.last() {
            check_parent(&case, parent)?;
        }
        cases.push(case);
    }
    Ok(cases)
}

/// Verifies one run of `case`: receipts equal to the baseline's, the header's gas, bloom and
/// receipts root, and — for a sequential re-run, which rebuilds the BAL (`access`) — the same
/// BAL and lifecycle records as the baseline. (A parallel run checked every transaction
/// against the BAL and the rebuilt BAL's hash inside execution.)
pub fn verify_run(
    case: &BlockCase<'_>,
    receipts: &[TxReceipt],
    access: Option<&gigagas_exec::BlockAccess>,
) -> Result<(), ExecError> {
    let input = case.prepared.input;
    compare_receipts(input.number(), &case.baseline.receipts, receipts)?;
    check_against_header(&input.header, receipts, case.prepared.header_rules())?;
    if let Some(access) = access {
        if *access != case.baseline.access {
            let what = bal_divergence(&case.baseline.access.bal, &access.bal)
                .unwrap_or_else(|| "lifecycle records differ".into());
            return Err(ExecError::Verify(VerifyError::Bal {
                block: input.number(),
                violation: Box::new(BalViolation::RebuiltDiffers(format!(
                    "this sequential run's BAL differs from the baseline's (built on the in-memory pre-state before the run; a different state source or a non-deterministic run): {what}"
                ))),
            }));
        }
    }
    Ok(())
}

/// One execution mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// The sequential baseline (builds the BAL).
    Sequential,
    /// Sequential on a plain revm `State`, building no BAL (a node without EIP-7928); verified
    /// like the baseline (receipts, header), so that the BAL builder's cost is measurable as
    /// the difference.
    SequentialNoBal,
    /// BAL-parallel on `threads` workers with `scheduler`.
    Parallel {
        /// Worker threads.
        threads: usize,
        /// Dispatch order.
        scheduler: Scheduler,
    },
}

impl Mode {
    /// Worker threads (1 for sequential).
    pub fn threads(&self) -> usize {
        match self {
            Self::Sequential | Self::SequentialNoBal => 1,
            Self::Parallel { threads, .. } => *threads,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sequential => f.write_str("sequential"),
            Self::SequentialNoBal => f.write_str("sequential-nobal"),
            Self::Parallel { threads, scheduler } => write!(f, "parallel/{threads}t/{scheduler}"),
        }
    }
}

/// Where sender recovery happens in a measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Recovery {
    /// Senders recovered in advance; not part of the timed execution (the research setting).
    Pre,
    /// Each sender recovered inside execution, by the thread that runs the transaction.
    Inline,
}

impl Recovery {
    /// Name as used on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pre => "pre",
            Self::Inline => "inline",
        }
    }
}

impl std::str::FromStr for Recovery {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pre" => Ok(Self::Pre),
            "inline" => Ok(Self::Inline),
            _ => Err(format!(
                "unknown sender recovery {s:?} (expected pre or inline)"
            )),
        }
    }
}

/// Timings of one verified run of one block.
#[derive(Debug, Clone)]
pub struct BlockRun {
    /// Execution wall time (the throughput figure), ns.
    pub exec_nanos: u64,
    /// The head of `exec_nanos` until the last worker joined (parallel only), ns.
    pub head_nanos: u64,
    /// The serial tail of `exec_nanos` after the workers (parallel only), ns.
    pub serial_nanos: u64,
    /// Canonical commit + BAL rebuild (parallel only), ns.
    pub commit_nanos: u64,
    /// Verification time, ns.
    pub verify_nanos: u64,
    /// Per-transaction execution times, ns.
    pub tx_nanos: Vec<u64>,
    /// Heap allocations inside the transactions, summed (0 without the counting allocator).
    pub tx_allocations: u64,
}

/// Runs `case` once in `mode` (a parallel mode needs `pool` with the right thread count) and
/// verifies the result: header values, and per transaction against the sequential baseline.
pub fn run_block(
    case: &BlockCase<'_>,
    mode: Mode,
    pool: Option<&WorkerPool>,
) -> Result<BlockRun, ExecError> {
    run_block_with(case, mode, Recovery::Pre, pool)
}

/// [`run_block`] with a choice of where sender recovery happens.
pub fn run_block_with(
    case: &BlockCase<'_>,
    mode: Mode,
    recovery: Recovery,
    pool: Option<&WorkerPool>,
) -> Result<BlockRun, ExecError> {
    let input = case.prepared.input;
    let inline;
    let prepared = match recovery {
        Recovery::Pre => &case.prepared,
        Recovery::Inline => {
            inline = PreparedBlock {
                inline_recovery: true,
                ..case.prepared.clone()
            };
            &inline
        }
    };
    let run = execute_mode(prepared, &*input.pre_state, &case.plan, mode, pool)?;
    let t0 = Instant::now();
    verify_run(case, &run.receipts, run.access.as_ref())?;
    Ok(BlockRun {
        exec_nanos: run.exec_nanos,
        head_nanos: run.head_nanos,
        serial_nanos: run.serial_nanos,
        commit_nanos: run.commit_nanos,
        verify_nanos: t0.elapsed().as_nanos() as u64,
        tx_nanos: run.tx_nanos,
        tx_allocations: run.tx_allocations,
    })
}

/// One block executed in some [`Mode`], not yet verified: what every mode's executor
/// returns, as one value.
#[derive(Debug)]
pub struct ModeRun {
    /// One receipt per transaction.
    pub receipts: Vec<TxReceipt>,
    /// Every account the block touched, in its final state.
    pub post: PostState,
    /// The BAL the run built (the sequential baseline only).
    pub access: Option<BlockAccess>,
    /// Execution wall time, ns.
    pub exec_nanos: u64,
    /// The head of `exec_nanos` until the last worker joined (parallel only), ns.
    pub head_nanos: u64,
    /// The serial tail of `exec_nanos` after the workers (parallel only), ns.
    pub serial_nanos: u64,
    /// Canonical commit + BAL rebuild (parallel only), ns.
    pub commit_nanos: u64,
    /// Per-transaction execution times, ns.
    pub tx_nanos: Vec<u64>,
    /// Heap allocations inside the transactions, summed.
    pub tx_allocations: u64,
}

/// The one execution dispatch: `prepared` run in `mode` against `state` (monomorphised per
/// state provider), from `plan` in parallel mode (which needs `pool` with its thread count).
/// [`run_block_with`] and the pipeline's execute stage both come here.
pub fn execute_mode<S: StateProvider>(
    prepared: &PreparedBlock<'_>,
    state: &S,
    plan: &ParallelPlan,
    mode: Mode,
    pool: Option<&WorkerPool>,
) -> Result<ModeRun, ExecError> {
    Ok(match mode {
        Mode::Sequential => {
            let run = execute_sequential(prepared, state)?;
            ModeRun {
                receipts: run.receipts,
                post: run.post,
                access: Some(run.access),
                exec_nanos: run.exec_nanos,
                head_nanos: 0,
                serial_nanos: 0,
                commit_nanos: 0,
                tx_nanos: run.tx_nanos,
                tx_allocations: run.tx_allocations,
            }
        }
        Mode::SequentialNoBal => {
            let run = execute_sequential_without_bal(prepared, state)?;
            ModeRun {
                receipts: run.receipts,
                post: run.post,
                access: None,
                exec_nanos: run.exec_nanos,
                head_nanos: 0,
                serial_nanos: 0,
                commit_nanos: 0,
                tx_nanos: run.tx_nanos,
                tx_allocations: run.tx_allocations,
            }
        }
        Mode::Parallel { threads, scheduler } => {
            let pool = pool_for(pool, threads, prepared.number())?;
            let run = execute_parallel(prepared, state, plan, pool, scheduler)?;
            ModeRun {
                receipts: run.receipts,
                post: run.post,
                access: None,
                exec_nanos: run.exec_nanos,
                head_nanos: run.head_nanos,
                serial_nanos: run.serial_nanos,
                commit_nanos: run.commit_nanos,
                tx_nanos: run.tx_nanos,
                tx_allocations: run.tx_allocations,
            }
        }
    })
}

/// `pool` when it has `threads` workers; else a named error for `block`.
pub fn pool_for(
    pool: Option<&WorkerPool>,
    threads: usize,
    block: u64,
) -> Result<&WorkerPool, ExecError> {
    pool.filter(|p| p.threads() == threads)
        .ok_or_else(|| ExecError::Unsupported {
            block,
            what: format!("no worker pool with {threads} threads"),
        })
}
