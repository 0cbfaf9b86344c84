//! The prefetch stage: the state a unit executes against. On disk, a read snapshot of the
//! store (with the blocks computed and not yet committed laid over it, when the state
//! overlays) with every account and slot the unit's lists name read in parallel on the I/O
//! pool, in on-disk key order; in memory, nothing (the block's pre-state is read directly).

use super::{Ctx, StageSpan, Unit, PREFETCH_THREADS};
use crate::root::DiskSnapshot;
use gigagas_exec::ExecError;

/// The snapshot a unit executes against (`None` in memory) and, where the unit's lists were
/// read ahead, when.
pub(super) fn prefetch_unit(
    ctx: Ctx<'_, '_>,
    unit: &Unit<'_>,
) -> Result<(Option<DiskSnapshot>, Option<StageSpan>), ExecError> {
    let (Some(trie), Some(first)) = (ctx.trie, ctx.cases.get(unit.blocks.start)) else {
        return Ok((None, None));
    };
    let number = first.number();
    let failed = |what: String| ExecError::Unsupported {
        block: number,
        what,
    };
    // One read transaction per reading thread (each serialises its readers behind a lock):
    // execution's workers and the budget's pool, and every prefetch thread, so that the
    // prefetch's reads are really in flight at once.
    let readers = ctx.options.threads * 2 + 2 + PREFETCH_THREADS;
    let Some(mut snap) = trie
        .snapshot(readers)
        .map_err(|e| failed(format!("state store snapshot: {e}")))?
    else {
        return Ok((None, None));
    };
    // A `full` list's values came with the block: held before anything is read.
    if let Some(values) = &unit.full {
        snap.supply(
            values.accounts.iter().cloned(),
            values.slots.iter().cloned(),
        );
    }
    let variant = ctx.options.bal;
    let bals: Vec<_> = ctx.cases[unit.blocks.clone()]
        .iter()
        .filter_map(|c| c.prepared.input.access_list.as_ref())
        .filter(|_| variant.has_bal())
        .collect();
    if bals.is_empty() {
        return Ok((Some(snap), None));
    }
    let (read, span) = ctx.clock.on(ctx.io, || {
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
    read.map_err(|e| failed(format!("prefetch: {e}")))?;
    Ok((Some(snap), Some(span)))
}
