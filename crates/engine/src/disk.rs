//! The on-disk state store (`gigagas-store`) as the pipeline's state: the incremental root's
//! node store, and the state every block executes against.

pub use crate::os::{drop_file_cache, io_read_bytes};
use crate::root::{BlockWrite, DiskSnapshot, Flush, IncrementalState, PendingRoot};
pub use crate::sync::SyncPolicy;
use alloy_primitives::B256;
pub use cold::ColdIndex;
use gigagas_data::BlockInput;
use gigagas_store::{
    BlockRef, CodeCache, DiskState, JournalStats, KvDiff, Overlay, SharedTrieBuffer, Store,
};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

/// A store at the parent of the next block to run: [`IncrementalState::compute`] computes a
/// block's root from a read snapshot, [`IncrementalState::commit`] writes it in one
/// transaction, [`IncrementalState::snapshot`] gives execution its pre-state. Analysed code
/// is cached across blocks, except when cold.
///
/// With the overlay (the default; [`Self::with_overlay`]) a computed block's writes are
/// held in memory until it commits, and the next block's snapshot and root read through
/// them: block N+1 is prefetched, executed and hashed while N's write transaction runs.
#[derive(Debug)]
pub struct DiskRoot {
    /// `None` only while [`Self::evict`] reopens it (and after a failed reopen). Shared with
    /// a background flush of the trie buffer (the write-ahead log's).
    store: RwLock<Option<Arc<Store>>>,
    codes: RwLock<Arc<CodeCache>>,
    cold: bool,
    /// With cold reads: the store's B-tree index stays cached between blocks.
    keep_index: bool,
    sync: SyncPolicy,
    overlay: bool,
    /// With the overlay: the blocks computed and not yet committed (number, writes), oldest
    /// first. A commit removes its block only after its transaction committed, and a reader
    /// clones the list before it takes its snapshot, so no block is ever missing from a read.
    pending: Mutex<Pending>,
    writes: Mutex<Writes>,
    /// The trie buffer's bound, bytes (0: trie nodes are written with their block).
    trie_buffer: u64,
    /// The trie buffers readers read through, oldest first: while a flush runs, the buffer
    /// being flushed, then the one blocks are merged into. A buffer leaves the list only
    /// after its flush committed (readers clone the list before their snapshot).
    buffers: Mutex<Vec<Arc<SharedTrieBuffer>>>,
    /// What each block's commit waited for and wrote, in block order.
    stats: Mutex<Vec<BlockWrite>>,
    /// The flush [`IncrementalState::finish`] did, if any.
    final_flush: Mutex<Option<Flush>>,
    /// At the end of the run, the trie buffer journaled (`true`) instead of flushed.
    journal: bool,
    /// The journal [`IncrementalState::finish`] wrote, if any.
    final_journal: Mutex<Option<JournalStats>>,
    /// The last run's journal this state's trie buffer started from, if any.
    resumed: Option<JournalStats>,
    /// Blocks per write transaction ([`Self::with_write_group`]).
    write_group: usize,
    /// The flat state held in the trie buffer and appended to the write-ahead log
    /// ([`Self::with_wal`]).
    wal: bool,
    /// The log, once the first block is appended.
    log: Mutex<Option<gigagas_store::Wal>>,
}

/// The blocks computed and not yet committed, and the last block committed.
#[derive(Debug, Default)]
struct Pending {
    blocks: VecDeque<(u64, Arc<KvDiff>)>,
    committed: Option<u64>,
}

/// The trie buffer's bound a node would take: geth's path database buffers 64–256 MiB of
/// trie-node writes before it flushes them.
pub const DEFAULT_TRIE_BUFFER: u64 = 256 << 20;
/// Most blocks written in one write transaction (`state.write_group`): the blocks held
/// meanwhile stay in memory as overlay layers that every read looks through (~7 MB a block
/// on the seed's hot account at 30M gas).
pub const MAX_WRITE_GROUP: usize = 16;
/// The smallest trie-buffer bound taken (below it every block would flush).
pub const MIN_TRIE_BUFFER: u64 = 1 << 20;

/// What the commits leave to the sync policy.
#[derive(Debug, Default)]
struct Writes {
    /// Blocks committed and held for their group's write transaction, oldest first (read
    /// from the overlay meanwhile).
    group: Vec<gigagas_store::PendingBlock>,
    /// Blocks committed since the last sync.
    unsynced: u64,
    /// The flush after the last `every-N` block (its number), running beside the next
    /// block's prefetch and root; the next commit (or the end of the run) waits for it.
    flushing: Option<(u64, gigagas_store::PendingSync)>,
    /// The early writeback after the last block that was not synced (its number), if one
    /// was started (`Store::writeback_in_background`).
    writeback: Option<(u64, gigagas_store::PendingSync)>,
    /// With the write-ahead log: the flush of a full trie buffer running on its own thread
    /// while the next blocks go on (`disk/wal.rs`).
    background: Option<wal::BackgroundFlush>,
}

/// The result of the early writeback started after block `.0`: an error names that block
/// (it is seen at a later block's commit, or at the end).
fn wait_writeback((block, done): (u64, gigagas_store::PendingSync)) -> Result<(), String> {
    done.wait().map_err(|e| {
        format!("the early writeback of the blocks up to {block} failed (they are committed, not known durable): {e}")
    })
}

fn poisoned<T>(_: T) -> String {
    "the disk state's lock was poisoned: a thread panicked while it held it".to_owned()
}

impl DiskRoot {
    /// The pipeline's state in `store`, every block durable at its commit, the next block
    /// read through the last one's writes while they commit, trie nodes gathered in a trie
    /// buffer of [`DEFAULT_TRIE_BUFFER`] bytes ([`Self::with_trie_buffer`]).
    pub fn new(store: Store) -> Self {
        Self {
            store: RwLock::new(Some(Arc::new(store))),
            codes: RwLock::default(),
            cold: false,
            keep_index: false,
            sync: SyncPolicy::EveryBlock,
            overlay: true,
            pending: Mutex::default(),
            writes: Mutex::default(),
            trie_buffer: DEFAULT_TRIE_BUFFER,
            buffers: Mutex::new(vec![Arc::default()]),
            stats: Mutex::default(),
            final_flush: Mutex::default(),
            journal: true,
            final_journal: Mutex::default(),
            resumed: None,
            write_group: 1,
            wal: false,
            log: Mutex::default(),
        }
    }

    /// The same state with (`true`) or without a write-ahead log of the flat state (the run
    /// spec's `state.wal`): a block's commit appends its accounts, slots, codes, block hash
    /// and head to the store's log (`blocks.wal`, one sequential record, durable under the
    /// sync policy) and merges them into the trie buffer with its trie nodes; the store's
    /// B-tree is written only when the buffer fills, many blocks at once, as geth keeps
    /// its flat-state diffs in memory. Any writable open replays the log into the store
    /// first, so a crash loses nothing the policy synced. Needs a trie buffer (set it
    /// first) and one block per write; with or without the overlay and cold reads (the next
    /// block reads the flat state through the buffer either way).
    pub fn with_wal(self, wal: bool) -> Result<Self, String> {
        if wal && (self.trie_buffer == 0 || self.write_group > 1) {
            return Err(format!(
                "state.wal on needs a trie buffer and one block per write (this state: trie buffer {} bytes, write group {})",
                self.trie_buffer, self.write_group
            ));
        }
        // Started here, before the run's clock (its header and the directory synced): the
        // first block only appends.
        let log = if wal {
            Some(self.with_store(|store| {
                store.create_wal().map_err(|e| {
                    format!(
                        "store {}: starting its write-ahead log: {e}",
                        store.path().display()
                    )
                })
            })?)
        } else {
            None
        };
        Ok(Self {
            wal,
            log: Mutex::new(log),
            ..self
        })
    }

    /// The same state writing `blocks` blocks per write transaction (the run spec's
    /// `state.write_group`; 1, the default, writes each block at its commit): the blocks of
    /// a group stay in memory as overlay layers, read by the next blocks, until the last one
    /// commits and all are written at once, a page several of them change copied and
    /// written once (reth saves the blocks behind its persistence threshold in one
    /// transaction). A crash loses the blocks held, as it loses those not yet synced; the
    /// store stays at its last whole block. Without the overlay or with cold reads each
    /// block is still written at its commit.
    pub fn with_write_group(self, blocks: usize) -> Result<Self, String> {
        if blocks == 0 || blocks > MAX_WRITE_GROUP {
            return Err(format!(
                "state.write_group = {blocks}: from 1 to {MAX_WRITE_GROUP} blocks per write transaction"
            ));
        }
        Ok(Self {
            write_group: blocks,
            ..self
        })
    }

    /// What each committed block's commit waited for and wrote, in block order: its write
    /// time, its persistence wait and the trie-buffer flush it made, if any (for the run's
    /// timeline: `BlockTimeline`).
    pub fn block_writes(&self) -> Vec<BlockWrite> {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// [`Self::block_writes`] of one block (`None`: not committed by this state).
    pub fn block_write(&self, number: u64) -> Option<BlockWrite> {
        let stats = self.stats.lock().ok()?;
        stats.iter().rev().find(|w| w.number == number).copied()
    }

    /// The same state with (`true`) or without the overlay: without it the next block's
    /// snapshot and root wait for the last block's commit (`run --overlay off`, to measure
    /// what the overlay gains).
    pub fn with_overlay(self, overlay: bool) -> Self {
        Self { overlay, ..self }
    }

    fn writes(&self) -> Result<MutexGuard<'_, Writes>, String> {
        self.writes.lock().map_err(poisoned)
    }

    /// Waits for the flush started after the last `every-N` block, if any.
    fn wait_flush(&self, writes: &mut Writes) -> Result<(), String> {
        match writes.flushing.take() {
            Some((block, f)) => f.wait().map_err(|e| {
                format!(
                    "making the store's writes up to block {block} durable (sync {}): {e}",
                    self.sync
                )
            }),
            None => Ok(()),
        }
    }

    /// The same state with writes made durable by `sync` (the store should be opened with
    /// [`SyncPolicy::durable_commits`]: `Store::open_with`). Cold mode closes the store after
    /// every block, which flushes it outside the timed run, so only `every-block` goes with it.
    pub fn with_sync(self, sync: SyncPolicy) -> Result<Self, String> {
        if self.cold && sync != SyncPolicy::EveryBlock {
            return Err(format!(
                "sync {sync} with cold reads: cold mode closes the store after every block, which flushes it untimed; only every-block is measured honestly there"
            ));
        }
        Ok(Self { sync, ..self })
    }

    /// Runs `f` on the store (an error after a failed reopen in cold mode).
    fn with_store<T>(&self, f: impl FnOnce(&Store) -> Result<T, String>) -> Result<T, String> {
        let store = self.store.read().map_err(poisoned)?;
        match store.as_ref() {
            Some(store) => f(store),
            None => Err("the state store could not be reopened after the last block".to_owned()),
        }
    }

    /// The trie buffer blocks are merged into (the newest).
    fn active_buffer(&self) -> Result<Arc<SharedTrieBuffer>, String> {
        self.buffers
            .lock()
            .map_err(poisoned)?
            .last()
            .cloned()
            .ok_or_else(|| "the trie buffer is missing".to_owned())
    }

    /// The store itself, shared (a background flush holds it while the run goes on).
    fn shared_store(&self) -> Result<Arc<Store>, String> {
        self.store
            .read()
            .map_err(poisoned)?
            .clone()
            .ok_or_else(|| "the state store could not be reopened after the last block".to_owned())
    }

    /// Blocks per write transaction ([`Self::with_write_group`]): one without the overlay
    /// (the next block reads the store itself), with `every-block` or with cold reads.
    fn group_size(&self) -> usize {
        if !self.overlay || self.cold || self.wal || self.sync == SyncPolicy::EveryBlock {
            return 1;
        }
        self.write_group
    }

    /// The sync that makes the blocks committed so far durable, started on its own thread:
    /// the log's with the write-ahead log (`None` when it has none), else the store's.
    fn sync_in_background(
        &self,
        store: &Store,
    ) -> Result<Option<gigagas_store::PendingSync>, String> {
        if self.wal {
            return self.log_sync_in_background();
        }
        Ok(Some(store.sync_in_background()))
    }

    /// What the next block reads through: the trie buffers, and the blocks computed and not
    /// yet committed. Cloned before the store's snapshot is taken.
    fn overlay(&self) -> Result<Overlay, String> {
        let pending = self.pending.lock().map_err(poisoned)?;
        let buffers = if self.trie_buffer > 0 {
            self.buffers.lock().map_err(poisoned)?.clone()
        } else {
            Vec::new()
        };
        Ok(Overlay {
            buffers,
            block: pending
                .blocks
                .back()
                .map(|(n, _)| *n)
                .or(pending.committed)
                .unwrap_or(u64::MAX),
            layers: pending.blocks.iter().map(|(_, d)| d.clone()).collect(),
            flat: self.wal,
        })
    }
}

impl IncrementalState for DiskRoot {
    fn block_write(&self, number: u64) -> Option<BlockWrite> {
        DiskRoot::block_write(self, number)
    }

    fn final_flush(&self) -> Option<Flush> {
        DiskRoot::final_flush(self)
    }

    fn final_journal(&self) -> Option<JournalStats> {
        DiskRoot::final_journal(self)
    }

    fn compute(
        &self,
        input: &BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String> {
        let block = BlockRef {
            number: input.number(),
            hash: input.hash,
            parent_hash: input.header.parent_hash,
            expected_root: input.complete_state.then_some(input.header.state_root),
        };
        let codes: Vec<_> = input
            .access_list
            .iter()
            .flatten()
            .flat_map(|a| a.code_changes.iter().map(|c| c.new_code.clone()))
            .filter(|c| !c.is_empty())
            .collect();
        // Cloned before the store's snapshot is taken (see `pending`).
        let overlay = self.overlay()?;
        let pending = self.with_store(|store| {
            store
                .compute_block_overlay(
                    &overlay,
                    block,
                    changes,
                    &codes,
                    gigagas_trie::Parallelism::DEFAULT,
                )
                .map_err(|e| format!("store {}: {e}", store.path().display()))
        })?;
        if self.overlay {
            self.pending
                .lock()
                .map_err(poisoned)?
                .blocks
                .push_back((block.number, pending.diff()));
        }
        Ok(PendingRoot::Disk(pending))
    }

    fn commit(&self, input: &BlockInput, pending: PendingRoot) -> Result<B256, String> {
        let PendingRoot::Disk(pending) = pending else {
            return Err(format!(
                "block {}: an in-memory result given to the disk store",
                input.number()
            ));
        };
        let mut writes = self.writes()?;
        if self.overlay {
            // Blocks commit in the order they were computed: checked before anything is
            // written (the blocks held for the group's transaction come first).
            let layers = self.pending.lock().map_err(poisoned)?;
            match layers.blocks.get(writes.group.len()) {
                Some((number, _)) if *number == input.number() => {}
                other => {
                    return Err(format!(
                        "block {} is to be committed, but the oldest block held in memory is {}: blocks must commit in the order they were computed",
                        input.number(),
                        other.map_or("none".to_owned(), |(n, _)| n.to_string())
                    ))
                }
            }
        }
        let root = pending.head().state_root;
        writes.group.push(pending);
        if writes.group.len() < self.group_size() {
            // Held for the group's transaction; read from memory (the overlay) until then.
            let stat = BlockWrite {
                number: input.number(),
                ..BlockWrite::default()
            };
            tracing::debug!(?stat, "block held for its group's write");
            self.stats.lock().map_err(poisoned)?.push(stat);
            return Ok(root);
        }
        let stat = self.write_group(&mut writes)?;
        tracing::debug!(?stat, "block written");
        self.stats.lock().map_err(poisoned)?.push(stat);
        Ok(root)
    }

    fn overlays(&self) -> bool {
        self.overlay
    }

    fn finish(&self) -> Result<bool, String> {
        let mut writes = self.writes()?;
        if !writes.group.is_empty() {
            // The last group, short: written before the end's sync, journal or flush.
            let stat = self.write_group(&mut writes)?;
            tracing::debug!(?stat, "last group written");
            let mut stats = self.stats.lock().map_err(poisoned)?;
            if let Some(held) = stats.iter_mut().rev().find(|w| w.number == stat.number) {
                *held = stat;
            }
        }
        // A background flush still running: its blocks durable in the store before the end's
        // journal (which continues the store it leaves).
        if let Some(stats) = self.collect_background(&mut writes, true)? {
            let mut all = self.stats.lock().map_err(poisoned)?;
            if let Some(last) = all.last_mut() {
                last.flush = Some(stats);
            }
        }
        let mut flushed = writes.flushing.is_some();
        if self.trie_buffer > 0 && self.journal {
            // The trie nodes still buffered, as the store's journal (a file beside the store,
            // written without a write transaction), beside the flat state's last sync — the
            // policy's, still in flight after the last block, or one started here: inside
            // the run's time.
            let stats = self.with_store(|store| {
                let syncing = if self.sync != SyncPolicy::EveryBlock && writes.unsynced > 0 {
                    self.sync_in_background(store)?
                } else {
                    None
                };
                let journal = self.journal_buffer(store);
                if let Some(pending) = syncing {
                    pending.wait().map_err(|e| {
                        format!(
                            "store {}: making the last blocks durable: {e}",
                            store.path().display()
                        )
                    })?;
                    writes.unsynced = 0;
                    flushed = true;
                }
                journal
            });
            // The policy's last sync, waited for even when the journal failed (its error
            // then comes first).
            let waited = self.wait_flush(&mut writes);
            let stats = stats?;
            waited?;
            if let Some(stats) = stats {
                tracing::debug!(?stats, "trie buffer journaled at the end");
                *self.final_journal.lock().map_err(poisoned)? = Some(stats);
                flushed = true;
            }
        } else {
            // A flush writes the store, which would wait for the sync anyway.
            self.wait_flush(&mut writes)?;
        }
        if self.trie_buffer > 0 && !self.journal {
            // The trie nodes still buffered, as one batch: inside the run's time.
            let stats = self.with_store(|store| self.flush_buffer(store))?;
            if let Some(stats) = stats {
                tracing::debug!(?stats, "trie buffer flushed at the end");
                *self.final_flush.lock().map_err(poisoned)? = Some(stats);
                if self.sync == SyncPolicy::EveryBlock || self.wal {
                    // Durable at its commit (with the log, synced before the log restarts).
                    writes.unsynced = 0;
                    flushed = true;
                } else {
                    writes.unsynced += 1;
                }
            }
        }
        if self.sync != SyncPolicy::EveryBlock && writes.unsynced > 0 {
            let t0 = Instant::now();
            self.with_store(|store| match self.sync_in_background(store)? {
                Some(sync) => sync
                    .wait()
                    .map_err(|e| format!("store {}: {e}", store.path().display())),
                None => Ok(()),
            })?;
            tracing::debug!(ns = t0.elapsed().as_nanos() as u64, "final sync");
            writes.unsynced = 0;
            flushed = true;
        }
        if let Some(done) = writes.writeback.take() {
            // Long over (the sync wrote what it queued); an error it met is still the run's.
            wait_writeback(done)?;
        }
        // What did commit is durable by now; a block computed and never committed is a
        // run that ended early, not a finished one.
        let left = self.pending.lock().map_err(poisoned)?.blocks.len();
        if left > 0 {
            return Err(format!(
                "{left} computed block(s) were never committed: the run ended before writing them"
            ));
        }
        Ok(flushed)
    }

    fn between_blocks(&self) -> Result<(), String> {
        if self.cold {
            self.evict()?;
        }
        Ok(())
    }

    fn needs_between_blocks(&self) -> bool {
        self.cold
    }

    fn snapshot(&self, readers: usize) -> Result<Option<DiskSnapshot>, String> {
        // Cloned before the store's snapshot is taken (see `pending`).
        let overlay = self.overlay()?;
        let codes = self.codes.read().map_err(poisoned)?.clone();
        self.with_store(|store| {
            let view = store
                .snapshot_overlay(readers, overlay)
                .map_err(|e| format!("store {}: {e}", store.path().display()))?;
            Ok(Some(DiskState::new(view, codes)))
        })
    }
}

mod buffer;
mod cold;
mod group;
#[cfg(test)]
mod tests;
mod wal;
