//! The recover stage: every transaction's sender recovered from its signature (by the run's
//! [`crate::recovery::Recoverer`]: the CPU on the thread budget, or the GPU) and checked
//! against the block file's.
//!
//! On the CPU each block is recovered on its own. On a GPU one launch costs about the same
//! for 100 signatures as for 10,000 (one thread recovers one signature, in about 2.3 ms on an
//! H200: docs/results/gpu-recovery.md), so the stage gathers consecutive units up to
//! [`GPU_BATCH`] signatures into one launch and hands them on one unit at a time: small
//! blocks (mainnet's few hundred transactions) cost a launch per batch, not per block. The
//! first launch is small ([`FIRST_GPU_BATCH`]): execution waits for it.

use super::{Ctx, StageSpan, Unit};
use crate::recovery::HostWork;
use gigagas_data::BlockInput;
use gigagas_exec::{ExecError, PreparedBlock};
use std::ops::Range;

/// Signatures gathered into one GPU launch at most (whole units; a unit larger than this is
/// one launch of its own). Bounds what the stage holds beyond its queue.
pub(super) const GPU_BATCH: usize = 16_384;

/// Signatures of the first GPU launch at most (whole units; each later launch may hold twice
/// the one before, up to [`GPU_BATCH`]). The first block executes only once its launch is
/// back: the bundled mainnet sample's 12,743 signatures in one launch held it back 13 ms on
/// the H200, most of a small block's execution many times over. (Tried on the H200 and not
/// kept: a first unit larger than this starting the batches at [`GPU_BATCH`], as before, for
/// 300M blocks: 0.95× end to end at 16 threads against the ramp's 1.08×.)
pub(super) const FIRST_GPU_BATCH: usize = 1_024;

/// The recover stage's output: the block's transactions with their recovered senders.
pub(super) struct Recovered<'a> {
    /// Index of the block in the run's case list.
    pub(super) index: usize,
    /// The block ready to execute.
    pub(super) prepared: PreparedBlock<'a>,
    /// When its senders were recovered.
    pub(super) recover: StageSpan,
}

/// The recover stage for one unit: every block's senders (on the CPU each block timed on
/// its own; on a GPU the unit in one launch).
pub(super) fn recover_unit<'a>(
    ctx: Ctx<'_, 'a>,
    blocks: Range<usize>,
) -> Result<Vec<Recovered<'a>>, ExecError> {
    recover_unit_with(ctx, blocks, HostWork::Budget)
}

/// [`recover_unit`] with a GPU launch's own CPU work where `host` says.
fn recover_unit_with<'a>(
    ctx: Ctx<'_, 'a>,
    blocks: Range<usize>,
    host: HostWork,
) -> Result<Vec<Recovered<'a>>, ExecError> {
    if ctx.recovery.on_gpu() {
        return recover_batch(ctx, blocks, host);
    }
    blocks
        .map(|index| {
            let input = ctx.cases[index].prepared.input;
            let (prepared, recover) = ctx.clock.on(ctx.budget, || {
                let senders = ctx.recovery.recover(input)?;
                PreparedBlock::new(input, &senders)
            });
            Ok(Recovered {
                index,
                prepared: prepared?,
                recover,
            })
        })
        .collect()
}

/// The recover stage over every unit, in order, each unit's blocks handed to `send` (which
/// answers false when a later stage stopped). On a GPU, consecutive units are recovered
/// together up to [`GPU_BATCH`] signatures; the first launch's hashes and checks run on the
/// budget (nothing executes yet), every later one's on this thread ([`HostWork::Caller`]:
/// on the budget they would wait behind the executions running there).
pub(super) fn recover_units<'a>(
    ctx: Ctx<'_, 'a>,
    units: &[Unit<'a>],
    mut send: impl FnMut(Vec<Recovered<'a>>) -> bool,
) -> Result<(), ExecError> {
    for (k, group) in launches(ctx, units).into_iter().enumerate() {
        let blocks = units[group.start].blocks.start..units[group.end - 1].blocks.end;
        let host = if k == 0 {
            HostWork::Budget
        } else {
            HostWork::Caller
        };
        let mut recs = recover_unit_with(ctx, blocks, host)?.into_iter();
        for unit in &units[group] {
            if !send(recs.by_ref().take(unit.blocks.len()).collect()) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The units recovered together, in order: one launch each on a GPU ([`batches`] of
/// [`FIRST_GPU_BATCH`] then up to [`GPU_BATCH`] signatures), one unit each on the CPU.
fn launches(ctx: Ctx<'_, '_>, units: &[Unit<'_>]) -> Vec<Range<usize>> {
    let (first, batch) = if ctx.recovery.on_gpu() {
        (FIRST_GPU_BATCH, GPU_BATCH)
    } else {
        (0, 0)
    };
    let sizes: Vec<usize> = units.iter().map(|u| txs(ctx, &u.blocks)).collect();
    batches(&sizes, first, batch)
}

/// How many recovered units the queue to execution must hold so that the next launch starts
/// as soon as the last one is back, while execution works through the last one's units: the
/// most units of any launch (1 on the CPU). On the H200 (run 2's mainnet timelines, 16
/// threads) with a queue of one unit the next launch started only once execution had taken
/// all but one unit of the last, and execution then waited for the whole launch: 4.7, 5.5
/// and 6.7 ms idle at three launch boundaries of the 50-block sample's 161 ms.
pub(super) fn units_ahead(ctx: Ctx<'_, '_>, units: &[Unit<'_>]) -> usize {
    launches(ctx, units)
        .iter()
        .map(|g| g.len())
        .max()
        .unwrap_or(1)
}

/// Consecutive groups of units (by index): the first's sizes sum to at most `first`, each
/// later group's to at most twice the bound before, up to `batch`; a unit larger than its
/// bound is a group of its own, and `batch` 0 gives one unit per group.
fn batches(sizes: &[usize], first: usize, batch: usize) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let (mut start, mut bound) = (0, first.min(batch));
    while start < sizes.len() {
        let (mut end, mut sum) = (start + 1, sizes[start]);
        while end < sizes.len() && sum + sizes[end] <= bound {
            sum += sizes[end];
            end += 1;
        }
        groups.push(start..end);
        start = end;
        bound = bound.saturating_mul(2).min(batch);
    }
    groups
}

/// `span` shared out in consecutive pieces in proportion to `weights` (their ends meet, the
/// last ends at the span's end).
fn share(span: StageSpan, weights: &[u64]) -> Vec<StageSpan> {
    let total = weights.iter().sum::<u64>().max(1);
    let width = span.end_ns - span.start_ns;
    let mut done = 0u64;
    weights
        .iter()
        .map(|w| {
            let start_ns = span.start_ns + width * done / total;
            done += w;
            let end_ns = span.start_ns + width * done / total;
            StageSpan { start_ns, end_ns }
        })
        .collect()
}

/// Transactions of a range of blocks.
fn txs(ctx: Ctx<'_, '_>, blocks: &Range<usize>) -> usize {
    ctx.cases[blocks.clone()]
        .iter()
        .map(|c| c.prepared.input.transactions.len())
        .sum()
}

/// Blocks `blocks` recovered in one GPU launch; the batch's work (not its waits for budget
/// threads) is shared out among the blocks in proportion to their transactions, so the
/// stage's busy time sums to the batch's.
fn recover_batch<'a>(
    ctx: Ctx<'_, 'a>,
    blocks: Range<usize>,
    host: HostWork,
) -> Result<Vec<Recovered<'a>>, ExecError> {
    let inputs: Vec<&'a BlockInput> = ctx.cases[blocks.clone()]
        .iter()
        .map(|c| c.prepared.input)
        .collect();
    // Timed as work, not as waits for a free budget thread: the hashes and checks from the
    // moment the budget takes them up, the launch on this thread.
    let (senders, mut busy) = ctx.recovery.recover_blocks_timed(&inputs, ctx.budget, host);
    let senders = senders?;
    let prepare = || {
        inputs
            .iter()
            .zip(&senders)
            .map(|(input, senders)| PreparedBlock::new(input, senders))
            .collect::<Result<Vec<_>, _>>()
    };
    // Each transaction's environment (a copy of its fields: cheap beside the hashes).
    let (prepared, span) = match host {
        HostWork::Budget => ctx.clock.on(ctx.budget, prepare),
        HostWork::Caller => ctx.clock.time(prepare),
    };
    busy += span.nanos();
    // The batch's work, ending where it ended.
    let span = StageSpan {
        start_ns: span.end_ns.saturating_sub(busy),
        end_ns: span.end_ns,
    };
    let weights: Vec<u64> = inputs.iter().map(|i| i.transactions.len() as u64).collect();
    Ok(blocks
        .zip(prepared?)
        .zip(share(span, &weights))
        .map(|((index, prepared), recover)| Recovered {
            index,
            prepared,
            recover,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_gather_units_up_to_the_bound() {
        assert_eq!(batches(&[], 10, 10), Vec::<Range<usize>>::new());
        assert_eq!(batches(&[3, 3, 3], 0, 0), vec![0..1, 1..2, 2..3]);
        assert_eq!(batches(&[3, 3, 3, 3], 7, 7), vec![0..2, 2..4]);
        // A unit over the bound is a group of its own; the next starts after it.
        assert_eq!(batches(&[2, 20, 2, 2], 5, 5), vec![0..1, 1..2, 2..4]);
        assert_eq!(batches(&[0, 0, 5], 5, 5), vec![0..3]);
        // The bound doubles from the first up to the most: 2, then 4, then 8, 8.
        assert_eq!(
            batches(&[1; 23], 2, 8),
            vec![0..2, 2..6, 6..14, 14..22, 22..23]
        );
        // A first bound over the most is the most.
        assert_eq!(batches(&[3, 3, 3], 100, 6), vec![0..2, 2..3]);
        // A first unit over the first bound is launched alone; the ramp goes on from there.
        assert_eq!(batches(&[3, 1, 1, 3], 2, 8), vec![0..1, 1..3, 3..4]);
    }

    #[test]
    fn a_shared_span_sums_to_the_whole() {
        let span = StageSpan {
            start_ns: 100,
            end_ns: 1_100,
        };
        let parts = share(span, &[1, 3, 0, 1]);
        assert_eq!(parts.first().unwrap().start_ns, 100);
        assert_eq!(parts.last().unwrap().end_ns, 1_100);
        assert!(parts.windows(2).all(|w| w[0].end_ns == w[1].start_ns));
        assert_eq!(parts[1].nanos(), 600);
        assert_eq!(parts[2].nanos(), 0);
        // No transactions at all: the span goes to nobody but the ends still meet.
        let none = share(span, &[0, 0]);
        assert_eq!(none.iter().map(StageSpan::nanos).sum::<u64>(), 0);
    }
}
