//! The execute and verify stages: a unit (a block, or a mega-block of consecutive blocks)
//! executed in the run's mode against the state the prefetch stage handed over, then every
//! block verified on its own (receipts equal to the sequential baseline's, the header's gas,
//! bloom and receipts root; each block's writes were checked against its BAL while it ran).
//! Overlapped, verification has a thread of its own: the next unit executes meanwhile, and
//! nothing of a block is written before it was verified.

use super::{Ctx, Recovered, StageSpan, Unit};
use crate::block::{execute_mode, pool_for, verify_run, Mode, ModeRun};
use crate::root::DiskSnapshot;
use gigagas_data::PostState;
use gigagas_exec::{ExecError, PreparedBlock};

/// The execute stage's output: a block's results, not yet verified.
pub(super) struct Unverified {
    /// Index of the block in the run's case list.
    index: usize,
    /// Number of the first block of its execution unit.
    unit: u64,
    /// Reads execution sent to the store and items the prefetch read.
    reads: Option<(u64, u64)>,
    /// The receipts, the final state of every touched account, and the BAL a sequential run
    /// built.
    receipts: Vec<gigagas_receipt::TxReceipt>,
    post: PostState,
    access: Option<gigagas_exec::BlockAccess>,
    /// The recover and execute stages' spans.
    recover: StageSpan,
    execute: StageSpan,
}

/// The verify stage's output: a verified block's changes.
pub(super) struct Executed {
    /// Index of the block in the run's case list.
    pub(super) index: usize,
    /// Number of the first block of its execution unit.
    pub(super) unit: u64,
    /// Reads execution sent to the store ([`super::BlockTimeline::demand_reads`]).
    pub(super) demand_reads: Option<u64>,
    /// Items the prefetch read ([`super::BlockTimeline::read_ahead`]).
    pub(super) read_ahead: Option<u64>,
    /// Every account the block touched, in its final state.
    pub(super) post: PostState,
    /// The recover stage's span.
    pub(super) recover: StageSpan,
    /// The execute stage's span (a mega-block's later blocks: empty, at its end).
    pub(super) execute: StageSpan,
    /// The verify stage's span.
    pub(super) verify: StageSpan,
}

/// Executes one unit against `disk` (`None`: the in-memory pre-state); [`verify`] checks
/// each block's results after.
pub(super) fn execute_unit(
    ctx: Ctx<'_, '_>,
    unit: &Unit<'_>,
    recs: Vec<Recovered<'_>>,
    disk: Option<DiskSnapshot>,
) -> Result<Vec<Unverified>, ExecError> {
    match (&unit.mega, ctx.options.mode) {
        (Some(mega), Mode::Parallel { threads, scheduler }) => {
            let pool = pool_for(ctx.pool, threads, ctx.cases[mega.blocks.start].number())?;
            let blocks: Vec<&PreparedBlock<'_>> = recs.iter().map(|r| &r.prepared).collect();
            let run = || match &disk {
                Some(state) => {
                    gigagas_exec::execute_mega(&blocks, state, &mega.plan, pool, scheduler)
                }
                None => gigagas_exec::execute_mega(
                    &blocks,
                    &*mega.pre_state,
                    &mega.plan,
                    pool,
                    scheduler,
                ),
            };
            let (out, execute) = ctx.clock.time(|| ctx.budget.install(run));
            let reads = disk.as_ref().map(|d| (d.demand_reads(), d.read_ahead()));
            drop(disk);
            let first = ctx.cases[mega.blocks.start].number();
            Ok(recs
                .into_iter()
                .zip(out?)
                .enumerate()
                .map(|(j, (rec, run))| {
                    // The unit's execute span sits on its first block; the others carry an
                    // empty span at its end.
                    let execute = match j {
                        0 => execute,
                        _ => StageSpan {
                            start_ns: execute.end_ns,
                            end_ns: execute.end_ns,
                        },
                    };
                    let reads = reads.map(|n| if j == 0 { n } else { (0, 0) });
                    Unverified {
                        index: rec.index,
                        unit: first,
                        reads,
                        receipts: run.receipts,
                        post: run.post,
                        access: None,
                        recover: rec.recover,
                        execute,
                    }
                })
                .collect())
        }
        // A unit without a mega-block plan is one block.
        _ => {
            let mut disk = disk;
            recs.into_iter()
                .map(|rec| execute_block(ctx, rec, disk.take()))
                .collect()
        }
    }
}

/// Executes one block in the run's mode. Execution runs on one of the budget's threads: in
/// parallel mode the budget is the worker pool itself, so the workers start from that thread
/// (no wake-up and hand-back through the stage thread) and the canonical commit runs on the
/// budget too.
fn execute_block(
    ctx: Ctx<'_, '_>,
    rec: Recovered<'_>,
    disk: Option<DiskSnapshot>,
) -> Result<Unverified, ExecError> {
    let case = &ctx.cases[rec.index];
    let (mode, pool) = (ctx.options.mode, ctx.pool);
    let run = || match &disk {
        Some(state) => execute_mode(&rec.prepared, state, &case.plan, mode, pool),
        None => {
            let pre = &*case.prepared.input.pre_state;
            execute_mode(&rec.prepared, pre, &case.plan, mode, pool)
        }
    };
    let (out, execute) = ctx.clock.time(|| ctx.budget.install(run));
    let reads = disk.as_ref().map(|d| (d.demand_reads(), d.read_ahead()));
    drop(disk);
    let ModeRun {
        receipts,
        post,
        access,
        ..
    } = out?;
    Ok(Unverified {
        index: rec.index,
        unit: case.number(),
        reads,
        receipts,
        post,
        access,
        recover: rec.recover,
        execute,
    })
}

/// The verify stage of one executed block: its receipts (and the BAL a sequential run
/// built) against the baseline and the header.
pub(super) fn verify(ctx: Ctx<'_, '_>, done: Unverified) -> Result<Executed, ExecError> {
    let case = &ctx.cases[done.index];
    let (checked, verify) = ctx.clock.on(ctx.stages, || {
        verify_run(case, &done.receipts, done.access.as_ref())
    });
    checked?;
    Ok(Executed {
        index: done.index,
        unit: done.unit,
        demand_reads: done.reads.map(|r| r.0),
        read_ahead: done.reads.map(|r| r.1),
        post: done.post,
        recover: done.recover,
        execute: done.execute,
        verify,
    })
}
