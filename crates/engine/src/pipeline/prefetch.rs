//! The prefetch stage: the state a unit executes against. On disk, a read snapshot of the
//! store (with the blocks computed and not yet committed laid over it, when the state
//! overlays) with every account and slot the unit's lists name read in parallel on the I/O
//! pool, in on-disk key order, and the trie nodes on their paths where those reads went to
//! the device; in memory, nothing (the block's pre-state is read directly).

use super::{Ctx, StageSpan, Unit, PREFETCH_THREADS};
use crate::root::DiskSnapshot;
use gigagas_exec::ExecError;

/// The snapshot a unit executes against (`None` in memory) and, where the unit's lists were
/// read ahead, when: [`take_snapshot`], then [`read_ahead`].
pub(super) fn prefetch_unit(
    ctx: Ctx<'_, '_>,
    unit: &Unit<'_>,
) -> Result<(Option<DiskSnapshot>, Option<StageSpan>), ExecError> {
    match take_snapshot(ctx, unit)? {
        Some(snap) => read_ahead(ctx, unit, snap),
        None => Ok((None, None)),
    }
}

/// The read snapshot of the state a unit executes against (the store, with the blocks
/// computed and not yet committed laid over it), holding a `full` list's values; `None` in
/// memory. Taken before the unit's own root is computed: a later snapshot would see the
/// unit's own writes laid over the store.
pub(super) fn take_snapshot(
    ctx: Ctx<'_, '_>,
    unit: &Unit<'_>,
) -> Result<Option<DiskSnapshot>, ExecError> {
    let (Some(trie), Some(first)) = (ctx.trie, ctx.cases.get(unit.blocks.start)) else {
        return Ok(None);
    };
    // One read transaction per reading thread (each serialises its readers behind a lock):
    // execution's workers and the budget's pool, and every prefetch thread, so that the
    // prefetch's reads are really in flight at once.
    let readers = ctx.options.threads * 2 + 2 + PREFETCH_THREADS;
    let Some(mut snap) = trie.snapshot(readers).map_err(|e| ExecError::State {
        block: first.number(),
        what: format!("state store snapshot: {e}"),
    })?
    else {
        return Ok(None);
    };
    // A `full` list's values came with the block: held before anything is read.
    if let Some(values) = &unit.full {
        snap.supply(
            values.accounts.iter().cloned(),
            values.slots.iter().cloned(),
        );
    }
    Ok(Some(snap))
}

/// Reads every account and slot the unit's lists name into `snap`, in parallel on the I/O
/// pool, and the trie nodes on their paths where those reads went to the device; with the
/// span of those reads (`None` where there was no list to read).
pub(super) fn read_ahead(
    ctx: Ctx<'_, '_>,
    unit: &Unit<'_>,
    mut snap: DiskSnapshot,
) -> Result<(Option<DiskSnapshot>, Option<StageSpan>), ExecError> {
    let number = ctx.cases[unit.blocks.start].number();
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
                let before = crate::disk::io_read_bytes();
                let items = snap.prefetch_values(&list)?;
                if went_to_device(before, crate::disk::io_read_bytes(), items) {
                    snap.warm_trie_paths(&list)?;
                } else {
                    tracing::debug!(
                        block = number,
                        "the values were all in the page cache: trie paths not read ahead"
                    );
                }
            } else if variant.prefetch_paths() {
                snap.warm_trie_paths(bal)?;
            }
            Ok::<(), gigagas_data::PreStateError>(())
        })
    });
    read.map_err(|e| ExecError::State {
        block: number,
        what: format!("prefetch: {e}"),
    })?;
    Ok((Some(snap), Some(span)))
}

/// Whether the reads of `items` values between two `read_bytes` samples of this process went
/// to the device: more than one page per [`ITEMS_PER_PAGE`] items (or either sample is
/// missing). A few pages read by the way (another thread's miss, the page cache evicting a
/// little while a sync writes) are not a cold store: on the seed's block at 2M slots, warm, a
/// block after an `every-3` sync read 3 pages for 5,570 values and then walked 19k trie
/// nodes ahead (26 ms) for nothing. The trie nodes on the block's paths are read ahead only then:
/// their pages are hotter than the values' (the upper levels are shared by every path), so
/// when every value was already in the page cache the nodes almost surely are too, and
/// reading them ahead only repeats the root's own walk (on the seed's block at 2M slots,
/// warm: 35–55 ms a block, the prefetch stage 5× what the values take; end to end 1.17×
/// without it over 12 A-B-B-A pairs: `docs/results/trie-buffer-2m-2core.md`). A cold or larger-than-memory
/// store misses on the values and keeps the parallel read-ahead the root's walks need.
fn went_to_device(before: Option<u64>, after: Option<u64>, items: usize) -> bool {
    match (before, after) {
        (Some(before), Some(after)) => {
            after.saturating_sub(before) / 4096 > (items / ITEMS_PER_PAGE) as u64
        }
        _ => true,
    }
}

/// Values read ahead per page read from the device that still count as a warm store (a cold
/// one reads about one page per value: 0.86–1.42 at 2M–75M slots).
const ITEMS_PER_PAGE: usize = 100;

#[cfg(test)]
mod tests {
    use super::went_to_device;

    #[test]
    fn paths_are_read_ahead_unless_the_values_were_all_cached() {
        assert!(!went_to_device(Some(4096), Some(4096), 10));
        assert!(went_to_device(Some(4096), Some(8192), 10));
        // A few pages for thousands of values: warm (one page per 100 values at most).
        assert!(!went_to_device(Some(0), Some(3 * 4096), 5570));
        assert!(!went_to_device(Some(0), Some(55 * 4096), 5570));
        assert!(went_to_device(Some(0), Some(56 * 4096), 5570));
        // A cold store: about a page per value.
        assert!(went_to_device(Some(0), Some(5000 * 4096), 5570));
        // Unknown (no /proc/self/io): read ahead, as before.
        assert!(went_to_device(None, Some(1), 10));
        assert!(went_to_device(Some(1), None, 10));
    }
}
