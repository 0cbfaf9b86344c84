//! The recover stage: every transaction's sender recovered from its signature (by the run's
//! [`crate::recovery::Recoverer`]: the CPU on the thread budget, or the GPU) and checked
//! against the block file's.

use super::{Ctx, StageSpan};
use gigagas_exec::{ExecError, PreparedBlock};
use std::ops::Range;

/// The recover stage's output: the block's transactions with their recovered senders.
pub(super) struct Recovered<'a> {
    /// Index of the block in the run's case list.
    pub(super) index: usize,
    /// The block ready to execute.
    pub(super) prepared: PreparedBlock<'a>,
    /// When its senders were recovered.
    pub(super) recover: StageSpan,
}

/// The recover stage for a unit: every block's senders, each block timed on its own.
pub(super) fn recover_unit<'a>(
    ctx: Ctx<'_, 'a>,
    blocks: Range<usize>,
) -> Result<Vec<Recovered<'a>>, ExecError> {
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
