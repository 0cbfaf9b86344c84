//! A run's execution units: each block alone, or consecutive blocks as one mega-block.

use super::PipelineOptions;
use crate::block::{BlockCase, Mode};
use crate::variant::{BalVariant, FullValues};
use gigagas_exec::ExecError;
use std::ops::Range;

/// One execution unit of a run: a block, or consecutive blocks run as a mega-block.
pub(super) struct Unit<'a> {
    /// Indices of its blocks in the case list.
    pub(super) blocks: Range<usize>,
    /// The mega-block's merged plan and pre-state (`None` for a single block).
    pub(super) mega: Option<crate::mega::MegaUnit<'a>>,
    /// The pre-block values a `full` list carries for the unit ([`BalVariant::Full`] only).
    pub(super) full: Option<FullValues>,
}

/// The run's units: every block on its own, or (`options.mega` > 1, parallel mode only) runs
/// of consecutive block numbers cut into mega-blocks of `options.mega`.
pub(super) fn units_of<'a>(
    cases: &[BlockCase<'a>],
    options: &PipelineOptions,
) -> Result<Vec<Unit<'a>>, ExecError> {
    let full = |blocks: &Range<usize>| {
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
