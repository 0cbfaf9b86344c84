//! The trie buffer's side of [`DiskRoot`]: its bound, the journal the run may start from and
//! the one it ends with, and the flushes (`docs/store.md`, "The trie buffer").

use super::{poisoned, DiskRoot, MIN_TRIE_BUFFER};
use crate::os::memory_bytes;
use crate::root::Flush;
use gigagas_store::{FlushStats, JournalStats, Store, TrieBuffer};
use std::sync::{Arc, Mutex, RwLock};

impl DiskRoot {
    /// The same state with its trie buffer, at the end of the run, journaled (`true`, the
    /// default: written as one sequential file beside the store that the next run continues
    /// from, geth's journal at shutdown; the run spec's `state.trie_journal`) or flushed into
    /// the trie tables (`false`). Either is durable when the run ends.
    pub fn with_trie_journal(self, journal: bool) -> Self {
        Self { journal, ..self }
    }

    /// The same state with its trie buffer starting from `buffer`, the last run's journal
    /// (`Store::open_resuming`), described by `stats`; refused without a trie buffer (set
    /// its bound first): the store's tries lag its state until the buffer is flushed.
    pub fn with_resumed_buffer(
        self,
        buffer: TrieBuffer,
        stats: JournalStats,
    ) -> Result<Self, String> {
        if self.trie_buffer == 0 {
            return Err(format!(
                "the last run's trie journal (blocks {}..={}) needs a trie buffer to go on from; this state has none",
                stats.base + 1,
                stats.through
            ));
        }
        Ok(Self {
            buffers: Mutex::new(vec![Arc::new(RwLock::new(buffer))]),
            resumed: Some(stats),
            ..self
        })
    }

    /// The last run's journal this state's trie buffer started from, if any.
    pub fn resumed(&self) -> Option<JournalStats> {
        self.resumed
    }

    /// The journal of the trie buffer written at the end of the run
    /// ([`IncrementalState::finish`]), if it had blocks to journal: inside the run's
    /// `final_sync_ns`.
    pub fn final_journal(&self) -> Option<JournalStats> {
        self.final_journal.lock().ok().and_then(|f| *f)
    }

    /// The same state with its trie-node writes gathered in a buffer of at most `bytes`
    /// (the run spec's `state.trie_buffer`; 0: written with their block, as before), flushed
    /// as one sorted batch when it reaches the bound and at the end of the run. The flat
    /// state (accounts, slots, codes, block hashes, head) is still written per block; a
    /// crash between flushes leaves the store at a whole block, its tries rebuilt from the
    /// flat state when it is next opened. A bound below [`MIN_TRIE_BUFFER`] or above half
    /// this machine's memory is refused, naming the field and both numbers. In cold mode the
    /// store is reopened between blocks as it is (its tries lag on purpose).
    pub fn with_trie_buffer(self, bytes: u64) -> Result<Self, String> {
        if bytes != 0 && bytes < MIN_TRIE_BUFFER {
            return Err(format!(
                "state.trie_buffer = {bytes}: too small, the least is {MIN_TRIE_BUFFER} (1 MiB; 0 writes trie nodes with every block)"
            ));
        }
        if let Some(total) = memory_bytes() {
            if bytes > total / 2 {
                return Err(format!(
                    "state.trie_buffer = {bytes}: more than half of this machine's memory ({total} bytes); the buffer must fit beside the state's page cache"
                ));
            }
        }
        Ok(Self {
            trie_buffer: bytes,
            ..self
        })
    }

    /// The trie buffer's bound, bytes (0: no buffer).
    pub fn trie_buffer(&self) -> u64 {
        self.trie_buffer
    }

    /// The flush of the trie buffer at the end of the run ([`IncrementalState::finish`]),
    /// if it had blocks to flush: inside the run's `final_sync_ns`.
    pub fn final_flush(&self) -> Option<Flush> {
        self.final_flush.lock().ok().and_then(|f| *f)
    }

    /// Writes the buffer blocks are merged into as the store's journal (at the end of the
    /// run; `None` when it holds no block).
    pub(super) fn journal_buffer(&self, store: &Store) -> Result<Option<JournalStats>, String> {
        let buffers = self.buffers.lock().map_err(poisoned)?;
        let Some(active) = buffers.last() else {
            return Ok(None);
        };
        let active = active.read().map_err(poisoned)?;
        if active.blocks() == 0 {
            return Ok(None);
        }
        store.journal_trie(&active).map(Some).map_err(|e| {
            format!(
                "store {}: journaling the trie buffer: {e} (its blocks up to {} are written; its tries are rebuilt from them when it is next opened)",
                store.path().display(),
                active.through().map_or(0, |h| h.number)
            )
        })
    }

    /// Flushes the buffer blocks are merged into: it is frozen (readers from now on read it
    /// under a new, empty one), written as one batch, then dropped from the list.
    pub(super) fn flush_buffer(&self, store: &Store) -> Result<Option<FlushStats>, String> {
        let frozen = {
            let mut buffers = self.buffers.lock().map_err(poisoned)?;
            let Some(active) = buffers.last().cloned() else {
                return Ok(None);
            };
            if active.read().map_err(poisoned)?.blocks() == 0 {
                return Ok(None);
            }
            buffers.push(Arc::default());
            active
        };
        let stats = store
            .flush_trie(&*frozen.read().map_err(poisoned)?)
            .map_err(|e| {
                format!(
                    "store {}: flushing the trie buffer: {e}",
                    store.path().display()
                )
            })?;
        // With the write-ahead log: the store synced, the log started anew.
        self.restart_log(store)?;
        // Only now that its nodes are in the store: a reader cloning the list from here on

        // takes a snapshot that holds them.
        self.buffers
            .lock()
            .map_err(poisoned)?
            .retain(|b| !Arc::ptr_eq(b, &frozen));
        Ok(Some(stats))
    }
}
