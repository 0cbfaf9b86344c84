//! The two drivers of a run's units through the stages: back to back (each unit's stages in
//! turn, then the next unit) or overlapped (a thread per stage, joined by bounded queues:
//! back-pressure, bounded memory).

use super::{
    commit::commit_block,
    early::early_roots,
    execute::{execute_unit, verify, Unverified},
    prefetch::{prefetch_unit, read_ahead, take_snapshot},
    recover::{recover_unit, recover_units, units_ahead},
    BlockTimeline, Ctx, EarlyRoot, Executed, Recovered, Unit,
};
use crate::root::DiskSnapshot;
use gigagas_exec::ExecError;
use std::{
    sync::atomic::{AtomicBool, Ordering},
    sync::mpsc::{sync_channel, Receiver, SyncSender},
    time::Instant,
};

/// Depth of the queues between stages: one unit waiting per stage (back-pressure: a fast
/// stage runs at most a few units ahead, so memory stays bounded). The recovered units'
/// queue holds a GPU launch's units ([`units_ahead`]; at most [`super::recover::GPU_BATCH`]
/// signatures), and the executed units' queue [`VERIFY_QUEUE`] units.
const QUEUE: usize = 1;

/// Executed units waiting for verification at most: execution runs up to this many units
/// ahead of a slow verification (then waits; each holds a unit's receipts and final
/// accounts). One block's verification can outlast several executions after it: the Merge
/// block's (`15537394`, one receipt of thousands of logs) took 13.5 ms at 16 threads on the
/// H200 against 0.9–4.1 ms for each of the two blocks after it, and with one unit waiting
/// execution stood idle 8.5 ms behind it (`docs/results/node-16core-h200-2026-11-28.md`).
pub const VERIFY_QUEUE: usize = 4;

/// The blocks of a back-to-back run and the time spent between units on work that is not a
/// node's (cold mode's cache drop), ns.
pub(super) fn back_to_back(
    ctx: Ctx<'_, '_>,
    units: &[Unit<'_>],
) -> Result<(Vec<BlockTimeline>, u64), ExecError> {
    let between = ctx.trie.filter(|t| t.needs_between_blocks());
    let mut blocks = Vec::with_capacity(ctx.cases.len());
    let mut untimed_ns = 0u64;
    let mut untimed_read = 0u64;
    for unit in units {
        let recs = recover_unit(ctx, unit.blocks.clone())?;
        let (disk, prefetch) = prefetch_unit(ctx, unit)?;
        let early = early_roots(ctx, unit, prefetch);
        let done = execute_unit(ctx, unit, recs, disk)?;
        for (done, early) in done.into_iter().zip(early) {
            let mut block = commit_block(ctx, verify(ctx, done)?, early)?;
            // Cumulative; what the untimed steps between blocks read is not a block's.
            block.read_bytes = crate::disk::io_read_bytes().map(|r| r.saturating_sub(untimed_read));
            blocks.push(block);
        }
        if let Some(t) = between {
            let t0 = Instant::now();
            let read0 = crate::disk::io_read_bytes();
            t.between_blocks().map_err(|e| ExecError::State {
                block: ctx.cases[unit.blocks.start].number(),
                what: e,
            })?;
            untimed_ns += t0.elapsed().as_nanos() as u64;
            // Cold reads that keep the index read it back here (`disk/cold.rs`).
            untimed_read += read0
                .zip(crate::disk::io_read_bytes())
                .map_or(0, |(a, b)| b.saturating_sub(a));
        }
    }
    Ok((blocks, untimed_ns))
}

/// The stages on threads of their own (they only wait on queues; their work runs on the
/// budget, or verification, the roots and the commit on the stages' own pool
/// (`Ctx::stages`), and a GPU launch's hashes and checks after the first on the recover
/// thread itself): recover, prefetch + early roots, execute, verify, and the calling
/// thread's commit. `overlaid` is set when a unit started before the last one's commit,
/// reading its writes from memory.
pub(super) fn overlapped(
    ctx: Ctx<'_, '_>,
    units: &[Unit<'_>],
    overlaid: &AtomicBool,
) -> Result<Vec<BlockTimeline>, ExecError> {
    std::thread::scope(|scope| {
        // Every queue carries one unit (a block, or a mega-block's blocks) per message. The
        // recovered units' queue holds a whole launch (bounded by its signatures), so that the
        // next GPU launch runs while execution works through the last one's units.
        let (to_exec, from_recover): (SyncSender<Vec<Recovered<'_>>>, Receiver<_>) =
            sync_channel(QUEUE.max(units_ahead(ctx, units)));
        let (to_verify, from_exec): (SyncSender<Vec<Unverified>>, Receiver<_>) =
            sync_channel(VERIFY_QUEUE);
        let (to_commit, from_verify): (SyncSender<Vec<Executed>>, Receiver<_>) =
            sync_channel(QUEUE);
        let (to_commit_root, from_root): (SyncSender<Vec<Option<EarlyRoot>>>, Receiver<_>) =
            sync_channel(QUEUE);
        type Snapshot = Result<Option<DiskSnapshot>, ExecError>;
        let (to_exec_state, from_state): (SyncSender<Snapshot>, Receiver<_>) = sync_channel(QUEUE);
        // With an incremental root, unit N's roots (and, on disk, its state) come only after
        // unit N-1 was committed (verified and written): one token per committed unit (unbounded: the
        // commit stage never waits to hand one over). A state that overlays reads unit N-1's
        // writes from memory instead, so unit N starts as soon as N-1's roots were computed
        // here; it still waits for the commit when they were not (a mega-block's later
        // blocks, or roots computed from execution's changes).
        let (committed, wait_commit) = std::sync::mpsc::channel::<()>();
        let trie = ctx.trie;
        let overlays = trie.is_some_and(|t| t.overlays());
        // Only a state on disk hands each unit the state it executes against (a snapshot,
        // read ahead). Every other unit executes against its blocks' own pre-states in
        // memory and waits for nothing of this thread: not for the last unit's roots, nor,
        // through the queue of roots to the commit, for the verification of the unit before
        // that (the 16-thread timelines: 5 ms of a 300M block's root, 10 ms behind the Merge
        // block's verification). Only the roots wait for the last unit's commit, and not
        // where the state overlays, as the in-memory store does.
        let on_snapshot = trie.is_some_and(|t| t.executes_on_snapshot());
        // The state each unit executes against (prefetched, when on disk), then the write and
        // root from shipped BALs, beside execution (`None` for other blocks).
        scope.spawn(move || {
            // Units known committed, and whether the last unit's roots were all computed here.
            let (mut seen, mut computed) = (0, false);
            for (u, unit) in units.iter().enumerate() {
                if u > 0 && trie.is_some() && overlays && computed {
                    // Started on the last unit's writes in memory, whether or not its
                    // commit has landed by now.
                    overlaid.store(true, Ordering::Relaxed);
                } else if u > 0 && trie.is_some() {
                    while seen < u {
                        if wait_commit.recv().is_err() {
                            return; // the commit stage stopped
                        }
                        seen += 1;
                    }
                }
                if !on_snapshot {
                    let early = early_roots(ctx, unit, None);
                    computed = all_computed(&early);
                    if to_commit_root.send(early).is_err() {
                        break;
                    }
                    continue;
                }
                // The snapshot first (it must not see this unit's own roots), then its reads
                // on a thread of their own beside this unit's roots: both need only the state
                // after the last unit, so the roots do not wait for the reads.
                let snap = match take_snapshot(ctx, unit) {
                    Ok(snap) => snap,
                    Err(e) => {
                        let _ = to_exec_state.send(Err(e));
                        break;
                    }
                };
                let to_exec_state = &to_exec_state;
                let (sent, early) = std::thread::scope(|s| {
                    let reads = s.spawn(move || {
                        let (state, span) = match snap.map(|snap| read_ahead(ctx, unit, snap)) {
                            None => (Ok(None), None),
                            Some(Ok((disk, span))) => (Ok(disk), span),
                            Some(Err(e)) => (Err(e), None),
                        };
                        let failed = state.is_err();
                        (to_exec_state.send(state).is_ok() && !failed, span)
                    });
                    let mut early = early_roots(ctx, unit, None);
                    let (sent, span) = reads
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    // The unit's prefetch span sits on its first block's early root.
                    if let Some(Some(first)) = early.first_mut() {
                        first.prefetch = span;
                    }
                    (sent, early)
                });
                if !sent {
                    break;
                }
                computed = all_computed(&early);
                if to_commit_root.send(early).is_err() {
                    break;
                }
            }
        });
        // A later stage that stopped drops its receiver: the send fails and this stops.
        let recover = scope.spawn(move || -> Result<(), ExecError> {
            recover_units(ctx, units, |recs| to_exec.send(recs).is_ok())
        });
        let execute = scope.spawn(move || -> Result<(), ExecError> {
            for (unit, recs) in units.iter().zip(from_recover) {
                // Unit order on both queues: the next state belongs to this unit.
                let disk = match on_snapshot.then(|| from_state.recv()) {
                    None => None,
                    Some(Ok(disk)) => disk?,
                    Some(Err(_)) => break,
                };
                let done = execute_unit(ctx, unit, recs, disk)?;
                if to_verify.send(done).is_err() {
                    break;
                }
            }
            Ok(())
        });
        // Verification beside the next unit's execution (on the budget, or the stages' pool).
        let verified = scope.spawn(move || -> Result<(), ExecError> {
            for done in from_exec {
                let done = done
                    .into_iter()
                    .map(|d| verify(ctx, d))
                    .collect::<Result<Vec<_>, _>>()?;
                if to_commit.send(done).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let mut blocks = Vec::with_capacity(ctx.cases.len());
        let mut commit_error = None;
        'units: for done in from_verify {
            // Unit order on both queues: the next early roots belong to this unit.
            let early = from_root.recv().unwrap_or_default();
            let mut early = early.into_iter();
            for done in done {
                match commit_block(ctx, done, early.next().flatten()) {
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
        let verified = join(verified);
        let executed = join(execute);
        let recovered = join(recover);
        // Errors in block order: a stage further down only saw earlier blocks.
        if let Some(e) = commit_error {
            return Err(e);
        }
        verified?;
        executed?;
        recovered?;
        Ok(blocks)
    })
}

/// Whether every block of a unit had its root computed on the roots' thread (the next unit
/// may then read them laid over the store, where the state overlays).
fn all_computed(early: &[Option<EarlyRoot>]) -> bool {
    early
        .iter()
        .all(|e| e.as_ref().is_some_and(|e| e.pending.is_some()))
}
