//! The on-disk state store (`gigagas-store`) as the pipeline's state: the incremental root's
//! node store, and the state every block executes against.

use crate::root::{DiskSnapshot, IncrementalState, PendingRoot};
use alloy_primitives::B256;
use gigagas_data::BlockInput;
use gigagas_store::{BlockRef, CodeCache, DiskState, KvDiff, Store};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

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
    /// `None` only while [`Self::evict`] reopens it (and after a failed reopen).
    store: RwLock<Option<Store>>,
    codes: RwLock<Arc<CodeCache>>,
    cold: bool,
    sync: SyncPolicy,
    overlay: bool,
    /// With the overlay: the blocks computed and not yet committed (number, writes), oldest
    /// first. A commit removes its block only after its transaction committed, and a reader
    /// clones the list before it takes its snapshot, so no block is ever missing from a read.
    pending: Mutex<VecDeque<(u64, Arc<KvDiff>)>>,
    writes: Mutex<Writes>,
}

/// What the commits leave to the sync policy.
#[derive(Debug, Default)]
struct Writes {
    /// Blocks committed since the last sync.
    unsynced: u64,
    /// The flush after the last `every-N` block (its number), running beside the next
    /// block's prefetch and root; the next commit (or the end of the run) waits for it.
    flushing: Option<(u64, gigagas_store::PendingSync)>,
}

fn poisoned<T>(_: T) -> String {
    "the disk state's lock was poisoned: a thread panicked while it held it".to_owned()
}

/// When the pipeline makes the store's writes durable (`run --sync`). A block is written
/// (committed: visible to the next block's reads) right after it verified in every policy;
/// what differs is when the commits reach the disk: a crash loses the blocks since the last
/// sync, and the store stays whole at that block (MDBX keeps its last steady commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// Every commit is durable when it returns (MDBX's `Durable` mode).
    #[default]
    EveryBlock,
    /// Commits are flushed after every `n`-th block and at the end of the run.
    Every(u64),
    /// Commits are flushed once, at the end of the run (timed: inside its wall time).
    End,
}

impl SyncPolicy {
    /// Most blocks between syncs `every-N` takes.
    pub const MAX_EVERY: u64 = 1_000_000;

    /// What a node does: reth (v2.5, `crates/engine/primitives/src/config.rs`: persistence
    /// threshold 7, memory block buffer target 5) saves 3 blocks at a time in one durable MDBX
    /// commit once 8 are unpersisted; geth's path scheme flushes 64–256 MiB batches and no
    /// longer fsyncs its key-value writes. `run`'s default (`--cold` aside).
    pub const NODE: Self = Self::Every(3);

    /// Whether the store is opened with durable commits (only `every-block`).
    pub fn durable_commits(self) -> bool {
        self == Self::EveryBlock
    }
}

impl std::fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EveryBlock => f.write_str("every-block"),
            Self::Every(n) => write!(f, "every-{n}"),
            Self::End => f.write_str("end"),
        }
    }
}

impl std::str::FromStr for SyncPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown sync policy {s:?} (expected every-block, every-N with N from 2 to {}, or end)",
                Self::MAX_EVERY
            )
        };
        match s {
            "every-block" | "every-1" => Ok(Self::EveryBlock),
            "end" => Ok(Self::End),
            _ => {
                let n: u64 = s
                    .strip_prefix("every-")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(bad)?;
                if (2..=Self::MAX_EVERY).contains(&n) {
                    Ok(Self::Every(n))
                } else {
                    Err(bad())
                }
            }
        }
    }
}

impl DiskRoot {
    /// The pipeline's state in `store`, every block durable at its commit, the next block
    /// read through the last one's writes while they commit.
    pub fn new(store: Store) -> Self {
        Self {
            store: RwLock::new(Some(store)),
            codes: RwLock::default(),
            cold: false,
            sync: SyncPolicy::EveryBlock,
            overlay: true,
            pending: Mutex::default(),
            writes: Mutex::default(),
        }
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
                    "making the store's writes up to block {block} durable (--sync {}): {e}",
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
                "--sync {sync} with --cold: cold mode closes the store after every block, which flushes it untimed; only every-block is measured honestly there"
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

    /// Cold mode: from now on, and between blocks (after each commit, outside the timed
    /// run), the store is closed (its memory map released), the OS page cache of its files is
    /// dropped ([`drop_file_cache`]), the code cache emptied and the store reopened, so that
    /// the next block reads its state from the device. Needs no privileges on Linux;
    /// elsewhere it is an error (there is no warm fallback under this name). The pipeline
    /// must run back to back.
    pub fn make_cold(self) -> Result<Self, String> {
        if self.sync != SyncPolicy::EveryBlock {
            return Err(format!(
                "cold mode with --sync {}: cold mode closes the store after every block, which flushes it untimed; only every-block is measured honestly there",
                self.sync
            ));
        }
        let this = Self { cold: true, ..self };
        this.evict()?;
        Ok(this)
    }

    fn evict(&self) -> Result<(), String> {
        // A flush in flight holds the environment open.
        self.wait_flush(&mut *self.writes()?)?;
        let mut store = self.store.write().map_err(poisoned)?;
        let path = match store.as_ref() {
            Some(s) => s.path().to_owned(),
            None => {
                return Err("the state store could not be reopened after the last block".to_owned())
            }
        };
        // Closing the environment unmaps the file (every snapshot of it is gone by now: the
        // block's execution and root finished before its commit); mapped pages would stay
        // cached.
        drop(store.take());
        drop_file_cache(&path)?;
        let reopened =
            Store::open(&path).map_err(|e| format!("reopening {}: {e}", path.display()))?;
        *store = Some(reopened);
        *self.codes.write().map_err(poisoned)? = Arc::default();
        Ok(())
    }

    /// The layers the next block reads through: the blocks computed and not yet committed.
    fn layers(&self) -> Result<Vec<Arc<KvDiff>>, String> {
        Ok(self
            .pending
            .lock()
            .map_err(poisoned)?
            .iter()
            .map(|(_, d)| d.clone())
            .collect())
    }
}

/// Drops the OS page cache of every regular file in `dir` (`posix_fadvise(DONTNEED)` after an
/// `fsync`; pages still mapped by a process stay cached, so close the store first). Linux
/// only.
pub fn drop_file_cache(dir: &std::path::Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if !path.is_file() {
            continue;
        }
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        file.sync_all()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        fadvise_dontneed(&file)
            .map_err(|e| format!("dropping the page cache of {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn fadvise_dontneed(file: &std::fs::File) -> Result<(), std::io::Error> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

#[cfg(not(target_os = "linux"))]
fn fadvise_dontneed(_: &std::fs::File) -> Result<(), std::io::Error> {
    Err(std::io::Error::other(
        "--cold drops the page cache with posix_fadvise, which gigagas does only on Linux",
    ))
}

/// Bytes this process has caused to be read from storage so far (`read_bytes` of
/// `/proc/self/io`: page-cache misses, memory-mapped reads included); `None` where unreadable.
pub fn io_read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

impl IncrementalState for DiskRoot {
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
        let layers = self.layers()?;
        let pending = self.with_store(|store| {
            store
                .compute_block_over(
                    &layers,
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
        if self.overlay {
            // Blocks commit in the order they were computed: checked before anything is
            // written.
            let layers = self.pending.lock().map_err(poisoned)?;
            match layers.front() {
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
        let mut writes = self.writes()?;
        // The previous flush first: its error belongs to the blocks before this one (and
        // MDBX would make this write transaction wait for it anyway).
        self.wait_flush(&mut writes)?;
        let (root, flushing) = self.with_store(|store| {
            let root = store
                .commit_block(&pending)
                .map(|head| head.state_root)
                .map_err(|e| format!("store {}: {e}", store.path().display()))?;
            let flush = matches!(self.sync, SyncPolicy::Every(n) if writes.unsynced + 1 >= n);
            // Beside the next block's snapshot, prefetch and root, which only read.
            Ok((root, flush.then(|| store.sync_in_background())))
        })?;
        writes.unsynced = if flushing.is_some() {
            0
        } else {
            writes.unsynced + 1
        };
        writes.flushing = flushing.map(|f| (input.number(), f));
        if self.overlay {
            // Only now that it is in the store: a reader cloning the layers from here on
            // takes a snapshot that holds it.
            self.pending.lock().map_err(poisoned)?.pop_front();
        }
        Ok(root)
    }

    fn overlays(&self) -> bool {
        self.overlay
    }

    fn finish(&self) -> Result<bool, String> {
        let mut writes = self.writes()?;
        let mut flushed = writes.flushing.is_some();
        self.wait_flush(&mut writes)?;
        if self.sync != SyncPolicy::EveryBlock && writes.unsynced > 0 {
            self.with_store(|store| {
                store
                    .sync()
                    .map_err(|e| format!("store {}: {e}", store.path().display()))
            })?;
            writes.unsynced = 0;
            flushed = true;
        }
        // What did commit is durable by now; a block computed and never committed is a
        // run that ended early, not a finished one.
        let left = self.pending.lock().map_err(poisoned)?.len();
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
        let layers = self.layers()?;
        let codes = self.codes.read().map_err(poisoned)?.clone();
        self.with_store(|store| {
            let view = store
                .snapshot_over(readers, layers)
                .map_err(|e| format!("store {}: {e}", store.path().display()))?;
            Ok(Some(DiskState::new(view, codes)))
        })
    }
}
