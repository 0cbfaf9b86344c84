//! The write-ahead log's side of [`DiskRoot`] (`state.wal`): a block's commit appends its
//! flat writes to the store's log and merges everything it wrote into the trie buffer; the
//! store's B-tree is written when the buffer fills (`docs/store.md`, "The write-ahead log").

use super::{poisoned, DiskRoot, Writes};
use crate::root::{BlockWrite, Flush};
use crate::sync::SyncPolicy;
use gigagas_store::{PendingSync, SharedTrieBuffer, Store, Wal};
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

/// A full trie buffer being written into the store on its own thread (geth's path database
/// flushes its frozen buffer the same way): the blocks after it go on, appended to a new
/// segment of the log and merged into a new buffer, reading the frozen one until the flush
/// is durable.
#[derive(Debug)]
pub(super) struct BackgroundFlush {
    /// The buffer being written (still read until the flush is taken in).
    frozen: Arc<SharedTrieBuffer>,
    /// Its last block.
    through: u64,
    thread: std::thread::JoinHandle<Result<Flush, String>>,
}

impl DiskRoot {
    fn log(&self) -> Result<MutexGuard<'_, Option<Wal>>, String> {
        self.log.lock().map_err(poisoned)
    }

    /// Commits the blocks held (`writes.group`, one with the log): each appended to the log,
    /// then merged into the trie buffer (flushed when full: the store's B-tree written, synced,
    /// and the log started anew), the policy's sync of the log started when due, and the
    /// blocks taken off the overlay. The stat is the last block's.
    pub(super) fn log_group(&self, writes: &mut Writes) -> Result<BlockWrite, String> {
        let group = std::mem::take(&mut writes.group);
        let Some(last) = group.last().map(|p| p.head().number) else {
            return Err("a write with no block held".to_owned());
        };
        // The previous sync first: its error belongs to the blocks before these.
        let t0 = Instant::now();
        self.wait_flush(writes)?;
        let mut stat = BlockWrite {
            number: last,
            persist_wait_ns: t0.elapsed().as_nanos() as u64,
            ..BlockWrite::default()
        };
        let t1 = Instant::now();
        {
            let mut log = self.log()?;
            // Started with the state (`DiskRoot::with_wal`), before the run's clock.
            let log = log
                .as_mut()
                .ok_or("the write-ahead log was not started with the state")?;
            for pending in &group {
                let n = pending.head().number;
                stat.wal_bytes += log
                    .append(pending)
                    .map_err(|e| format!("block {n}: appending to the write-ahead log: {e} (the block is not committed)"))?
                    .bytes;
            }
            let written = group.len() as u64;
            match self.sync {
                SyncPolicy::EveryBlock => {
                    let t = Instant::now();
                    log.sync().map_err(|e| {
                        format!("block {last}: making the write-ahead log durable: {e}")
                    })?;
                    stat.persist_wait_ns += t.elapsed().as_nanos() as u64;
                }
                SyncPolicy::Every(n) if writes.unsynced + written >= n => {
                    // Beside the next block's snapshot, prefetch and root.
                    writes.flushing = Some((last, log.sync_in_background()));
                    writes.unsynced = 0;
                }
                _ => writes.unsynced += written,
            }
        }
        stat.write_ns = t1.elapsed().as_nanos() as u64;
        let active = self.active_buffer()?;
        let (blocks, bytes) = {
            let mut b = active.write().map_err(poisoned)?;
            for pending in &group {
                b.merge_all(&pending.diff(), pending.parent(), pending.head());
            }
            (b.blocks(), b.bytes() as u64)
        };
        // A background flush that has ended: taken in (its buffer leaves the reads).
        stat.flush = self.collect_background(writes, false)?;
        if bytes >= self.trie_buffer {
            // The one before must end first (one frozen buffer at a time): the wait counts.
            let t2 = Instant::now();
            if let Some(done) = self.collect_background(writes, true)? {
                stat.flush = Some(done);
            }
            self.start_background(writes, &active)?;
            if self.cold {
                // Cold reads close the store after this commit: the flush ends inside it
                // (timed, as a flush without the log), not in the untimed gap.
                if let Some(done) = self.collect_background(writes, true)? {
                    stat.flush = Some(done);
                }
            }
            stat.persist_wait_ns += t2.elapsed().as_nanos() as u64;
        } else {
            (stat.buffer_blocks, stat.buffer_bytes) = (blocks, bytes);
        }
        let mut pending = self.pending.lock().map_err(poisoned)?;
        pending.committed = Some(last);
        // Only now that they are in the trie buffer: a reader cloning the layers from here on
        // reads them there.
        for _ in &group {
            pending.blocks.pop_front();
        }
        Ok(stat)
    }

    /// Freezes `active` (the buffer blocks merged into: full), starts a new one for the next
    /// blocks, starts a new segment of the log at its last block, and writes it into the
    /// store on its own thread: the flush's write transaction, the store's sync, then the
    /// older segment removed. Nothing else writes the store meanwhile (with the log, blocks
    /// only append to it).
    fn start_background(
        &self,
        writes: &mut Writes,
        active: &Arc<SharedTrieBuffer>,
    ) -> Result<(), String> {
        let through = active
            .read()
            .map_err(poisoned)?
            .through()
            .map_or(0, |h| h.number);
        self.buffers.lock().map_err(poisoned)?.push(Arc::default());
        if let Some(log) = &mut *self.log()? {
            log.rotate().map_err(|e| {
                format!("block {through}: starting a new segment of the write-ahead log: {e}")
            })?;
        }
        let store = self.shared_store()?;
        let frozen = active.clone();
        let flushing = frozen.clone();
        let thread = std::thread::Builder::new()
            .name("buffer-flush".into())
            .spawn(move || -> Result<Flush, String> {
                let shown = store.path().display().to_string();
                let stats = store
                    .flush_trie(&*flushing.read().map_err(poisoned)?)
                    .map_err(|e| format!("store {shown}: flushing the buffer: {e}"))?;
                store.sync().map_err(|e| {
                    format!("store {shown}: making the buffer's flush durable: {e}")
                })?;
                store.retire_wal_segment().map_err(|e| {
                    format!(
                        "store {shown}: removing the flushed segment of the write-ahead log: {e}"
                    )
                })?;
                Ok(stats)
            })
            .map_err(|e| format!("block {through}: starting the buffer's flush: {e}"))?;
        writes.background = Some(BackgroundFlush {
            frozen,
            through,
            thread,
        });
        Ok(())
    }

    /// Takes in the background flush when it has ended (or, with `wait`, once it ends): its
    /// buffer leaves the reads (the store holds its blocks now). Its error is the run's,
    /// naming its blocks. `None`: none, or still running.
    pub(super) fn collect_background(
        &self,
        writes: &mut Writes,
        wait: bool,
    ) -> Result<Option<Flush>, String> {
        let Some(flush) = writes.background.take() else {
            return Ok(None);
        };
        if !wait && !flush.thread.is_finished() {
            writes.background = Some(flush);
            return Ok(None);
        }
        let stats = flush
            .thread
            .join()
            .map_err(|_| format!("the flush of the blocks up to {} panicked", flush.through))?
            .map_err(|e| format!("the flush of the blocks up to {}: {e}", flush.through))?;
        self.buffers
            .lock()
            .map_err(poisoned)?
            .retain(|b| !Arc::ptr_eq(b, &flush.frozen));
        Ok(Some(stats))
    }

    /// After the buffer's flush wrote the blocks it held into the store: the store synced
    /// (the log must not go before its blocks are durable there) and the log started anew
    /// at the store's head. A crash between the two replays records the store holds, which
    /// replay skips.
    pub(super) fn restart_log(&self, store: &Store) -> Result<(), String> {
        if !self.wal {
            return Ok(());
        }
        let shown = store.path().display();
        store
            .sync()
            .map_err(|e| format!("store {shown}: making the buffer's flush durable: {e}"))?;
        *self.log()? = Some(
            store
                .create_wal()
                .map_err(|e| format!("store {shown}: starting its write-ahead log anew: {e}"))?,
        );
        Ok(())
    }

    /// The log's sync on its own thread (`None`: no log).
    pub(super) fn log_sync_in_background(&self) -> Result<Option<PendingSync>, String> {
        Ok(self.log()?.as_ref().map(Wal::sync_in_background))
    }
}
