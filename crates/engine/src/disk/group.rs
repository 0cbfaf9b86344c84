//! The blocks of a write group written in one transaction, without the write-ahead log
//! (`state.write_group`; one block per write by default): their flat state, or everything
//! without a trie buffer, and the policy's sync or early writeback.

use super::{poisoned, wait_writeback, DiskRoot, Writes};
use crate::root::BlockWrite;
use crate::sync::SyncPolicy;
use std::time::Instant;

impl DiskRoot {
    /// Writes the blocks held for their group (`writes.group`, oldest first) in one write
    /// transaction, merges their trie nodes into the trie buffer (flushing it when full),
    /// starts the policy's sync when due, and takes them off the overlay. The stat is the
    /// last block's.
    pub(super) fn write_group(&self, writes: &mut Writes) -> Result<BlockWrite, String> {
        if self.wal {
            return self.log_group(writes);
        }
        let group = std::mem::take(&mut writes.group);
        let Some(last) = group.last().map(|p| p.head().number) else {
            return Err("a group write with no block held".to_owned());
        };
        // The previous flush first: its error belongs to the blocks before these (and MDBX
        // would make this write transaction wait for it anyway).
        let t0 = Instant::now();
        self.wait_flush(writes)?;
        let mut persist_wait_ns = t0.elapsed().as_nanos() as u64;
        let buffered = self.trie_buffer > 0;
        let mut stat = BlockWrite {
            number: last,
            ..BlockWrite::default()
        };
        let flushing = self.with_store(|store| {
            let t1 = Instant::now();
            if buffered {
                store.commit_blocks_flat(&group)
            } else {
                store.commit_blocks(&group)
            }
            .map_err(|e| format!("store {}: {e}", store.path().display()))?;
            stat.write_ns = t1.elapsed().as_nanos() as u64;
            if buffered {
                let active = self.active_buffer()?;
                let (blocks, bytes) = {
                    let mut b = active.write().map_err(poisoned)?;
                    for pending in &group {
                        b.merge(&pending.diff(), pending.head());
                    }
                    (b.blocks(), b.bytes() as u64)
                };
                if bytes >= self.trie_buffer {
                    let t2 = Instant::now();
                    stat.flush = self.flush_buffer(store)?;
                    persist_wait_ns += t2.elapsed().as_nanos() as u64;
                } else {
                    (stat.buffer_blocks, stat.buffer_bytes) = (blocks, bytes);
                }
            }
            let written = group.len() as u64;
            let flush = matches!(self.sync, SyncPolicy::Every(n) if writes.unsynced + written >= n);
            // Beside the next block's snapshot, prefetch and root, which only read.
            Ok(flush.then(|| store.sync_in_background()))
        })?;
        writes.unsynced = if flushing.is_some() {
            0
        } else {
            writes.unsynced + group.len() as u64
        };
        if flushing.is_none() && self.sync != SyncPolicy::EveryBlock {
            // The policy's sync comes later: the device starts on these blocks' pages now,
            // beside the next blocks, so that sync (the last one inside the run's time) waits
            // for less. One at a time: while the last one still queues pages, these are left
            // to the next one or to the sync.
            if writes
                .writeback
                .as_ref()
                .is_none_or(|(_, w)| w.is_finished())
            {
                if let Some(done) = writes.writeback.take() {
                    wait_writeback(done)?;
                }
                writes.writeback = self
                    .with_store(|store| Ok(store.writeback_in_background()))?
                    .map(|w| (last, w));
            }
        }
        writes.flushing = flushing.map(|f| (last, f));
        stat.persist_wait_ns = persist_wait_ns;
        let mut pending = self.pending.lock().map_err(poisoned)?;
        pending.committed = Some(last);
        if self.overlay {
            // Only now that they are in the store (or the trie buffer): a reader cloning the
            // layers from here on takes a snapshot that holds them.
            for _ in &group {
                pending.blocks.pop_front();
            }
        }
        Ok(stat)
    }
}
