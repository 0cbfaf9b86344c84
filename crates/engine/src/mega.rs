//! Mega-blocks: K consecutive blocks executed as one unit of parallel work (their BALs merged
//! into one index space), every block still verified on its own. `run --mega`, `bench --mega`
//! and the pipeline's execute stage all run a unit here.

use crate::block::{BlockCase, BlockRun};
use gigagas_data::PreState;
use gigagas_exec::{ExecError, PreparedBlock, Scheduler, WorkerPool};
use gigagas_verify::{check_against_header, compare_receipts};
use std::{borrow::Cow, ops::Range, time::Instant};

/// Consecutive blocks run as one mega-block: their merged plan and the state before the
/// first of them, prepared once (outside every timing) and reused by every run.
#[derive(Debug)]
pub struct MegaUnit<'a> {
    /// Indices of the unit's blocks in the case list.
    pub blocks: Range<usize>,
    /// Pre-state of the unit (see [`mega_pre_state`]).
    pub pre_state: Cow<'a, PreState>,
    /// The blocks' BALs and lifecycle records merged into one index space.
    pub plan: gigagas_exec::MegaPlan,
}

impl<'a> MegaUnit<'a> {
    /// The unit of `cases[blocks]` (consecutive blocks, each the child of the one before).
    pub fn new(cases: &[BlockCase<'a>], blocks: Range<usize>) -> Result<Self, ExecError> {
        let unit = &cases[blocks.clone()];
        let prepared: Vec<&PreparedBlock<'_>> = unit.iter().map(|c| &c.prepared).collect();
        let accesses: Vec<&gigagas_exec::BlockAccess> =
            unit.iter().map(|c| &c.baseline.access).collect();
        let weights = unit
            .iter()
            .map(|c| c.baseline.receipts.iter().map(|r| r.gas_used).collect())
            .collect();
        Ok(Self {
            plan: gigagas_exec::MegaPlan::new(&prepared, &accesses, weights)?,
            pre_state: mega_pre_state(unit),
            blocks,
        })
    }
}

/// The state before the first of `cases` (consecutive blocks), from their pre-states and
/// BALs (see [`PreState::for_consecutive`]): the first block's where it holds everything
/// (generated chains), else merged (mainnet data, whose pre-states hold only what each block
/// touches).
pub fn mega_pre_state<'a>(cases: &[BlockCase<'a>]) -> Cow<'a, PreState> {
    let states: Vec<&'a PreState> = cases.iter().map(|c| &*c.prepared.input.pre_state).collect();
    let bals: Vec<&alloy_eip7928::BlockAccessList> =
        cases.iter().map(|c| &c.baseline.access.bal).collect();
    PreState::for_consecutive(&states, &bals).unwrap_or_default()
}

/// `cases` grouped into mega-blocks of `k` (runs of consecutive block numbers cut into
/// chunks of `k`, see [`gigagas_lab::mega_units`]), each with its plan and pre-state.
pub fn mega_plan<'a>(cases: &[BlockCase<'a>], k: usize) -> Result<Vec<MegaUnit<'a>>, ExecError> {
    let numbers: Vec<u64> = cases.iter().map(BlockCase::number).collect();
    gigagas_lab::mega_units(&numbers, k)
        .into_iter()
        .map(|blocks| MegaUnit::new(cases, blocks))
        .collect()
}

/// Runs `unit` (of `cases`, the full case list) as one mega-block on `pool` and verifies
/// every original block: receipts equal to its sequential run, header gas/bloom/receipts
/// root. The returned run's `exec_nanos` is the whole unit's worker phase, `commit_nanos` the
/// summed per-block canonical commits (BAL rebuilt and compared per block), `tx_nanos` every
/// transaction in block order.
pub fn run_mega(
    cases: &[BlockCase<'_>],
    unit: &MegaUnit<'_>,
    pool: &WorkerPool,
    scheduler: Scheduler,
) -> Result<BlockRun, ExecError> {
    let cases = &cases[unit.blocks.clone()];
    let blocks: Vec<&PreparedBlock<'_>> = cases.iter().map(|c| &c.prepared).collect();
    let (plan, pre_state) = (&unit.plan, &*unit.pre_state);
    let runs = gigagas_exec::execute_mega(&blocks, pre_state, plan, pool, scheduler)?;
    let t0 = Instant::now();
    for (case, run) in cases.iter().zip(&runs) {
        compare_receipts(case.number(), &case.baseline.receipts, &run.receipts)?;
        check_against_header(
            &case.prepared.input.header,
            &run.receipts,
            case.prepared.header_rules(),
        )?;
    }
    Ok(BlockRun {
        exec_nanos: runs.first().map_or(0, |r| r.exec_nanos),
        head_nanos: runs.first().map_or(0, |r| r.head_nanos),
        serial_nanos: runs.first().map_or(0, |r| r.serial_nanos),
        commit_nanos: runs.iter().map(|r| r.commit_nanos).sum(),
        verify_nanos: t0.elapsed().as_nanos() as u64,
        tx_nanos: runs
            .iter()
            .flat_map(|r| r.tx_nanos.iter().copied())
            .collect(),
        tx_allocations: runs.iter().map(|r| r.tx_allocations).sum(),
    })
}
