//! The on-disk state store of gigagas.
//!
//! One directory holding an MDBX database ([`mdbx`], behind the small [`kv::Backend`] trait
//! so that another engine can be measured beside it) with these tables ([`kv::Table`]):
//! hashed accounts, hashed storage (key = keccak(address) ‖ keccak(slot), so a storage trie's
//! slots are contiguous and sorted by hashed key), code by hash, the branch nodes of the
//! account trie and of every storage trie keyed by (owner, nibble path), block hashes and a
//! head record (block number, block hash, state root).
//!
//! - [`Store::load`] bulk-loads a complete state (sorted appends in one transaction).
//! - [`Store::apply_block`] computes the block's new root with `gigagas_trie` against a read
//!   snapshot (one read transaction per rayon worker), then writes the trie updates, leaves,
//!   codes, block hash and head in **one** write transaction and commits: a crash at any
//!   point leaves the store at the last whole block.
//! - [`Store::load_genesis`] loads a genesis with `storage_fill` accounts in memory bounded
//!   independently of its size (slots generated in hashed order, tries streamed).
//! - [`Store::verify`] recomputes the root and every branch node from scratch;
//!   [`Store::verify_streaming`] does the same in bounded memory.
//! - [`View`] answers execution's reads (revm's `DatabaseRef`) and the trie's
//!   ([`gigagas_trie::NodeStore`]).
//!
//! Layout and encodings: `docs/store.md`.

pub mod codec;
mod genesis;
pub mod index_cache;
mod journal;
pub mod kv;
mod lock;
pub mod mdbx;
pub mod overlay;
mod persist;
mod state;
mod view;
mod wal;

use alloy_primitives::{keccak256, Bytes, B256, U256};
use alloy_trie::Nibbles;
pub use genesis::{
    estimate_store_bytes, fill_slots_sorted, free_bytes, genesis_slots, GenesisOptions,
    STORE_BYTES_PER_SLOT,
};
use gigagas_trie::{ChangeSet, MemoryStore, Parallelism, StoreError};
pub use journal::{JournalStats, Resumed, TRIE_JOURNAL};
use kv::{Backend, KvRead, KvWrite, Table};
pub use lock::{WriterLock, WRITER_LOCK};
pub use overlay::{KvDiff, Layered, SharedTrieBuffer, TrieBuffer};
pub use persist::{FlushStats, FLAT_TABLES};
pub use state::{CodeCache, DiskState};
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};
pub use view::{ReadError, View};
pub use wal::{wal_head, Wal, WalAppend, WalReplay, WAL_FILE, WAL_OLD};

/// What the `format` record of a gigagas store says.
pub const FORMAT: &[u8] = b"gigagas.store/1";

/// A store failure. Every variant names what failed: the path, the table and key, or the
/// block.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The directory is not a gigagas store (or not one this version reads).
    #[error("{}: not a gigagas store: {why}", path.display())]
    NotAStore {
        /// The directory.
        path: PathBuf,
        /// Why not.
        why: String,
    },
    /// Another process holds the store for writing (its writer lock).
    #[error("{}: {holder} holds this store for writing ({WRITER_LOCK} is locked): wait for it to end, or work on a copy of the store", path.display())]
    Busy {
        /// The store's directory.
        path: PathBuf,
        /// Who holds it ("process 1234").
        holder: String,
    },
    /// The database engine failed.
    #[error("{0}")]
    Backend(String),
    /// A stored record does not decode.
    #[error("corrupt store: table {table}, key {key}: {what}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// The key, hex.
        key: String,
        /// What is wrong.
        what: String,
    },
    /// A genesis to load is not valid (its `storage_fill` entries).
    #[error("genesis: {0}")]
    Genesis(String),
    /// The trie update failed (a node it needs is missing, or a read failed).
    #[error("state root: {0}")]
    Trie(#[from] StoreError),
    /// The block's computed root is not the one it must have; nothing was written.
    #[error("block {block}: state root {computed} differs from the header's {expected}; the store stays at block {head}")]
    RootMismatch {
        /// The block.
        block: u64,
        /// The header's root.
        expected: B256,
        /// The root computed from the store and the block's changes.
        computed: B256,
        /// The store's head block.
        head: u64,
    },
    /// The block does not follow the store's head.
    #[error("block {block} (parent {parent_hash}) does not follow the store's head, block {} {}", head.number, head.hash)]
    NotNext {
        /// The block.
        block: u64,
        /// Its parent hash.
        parent_hash: B256,
        /// The store's head.
        head: Head,
    },
    /// The store holds no state yet.
    #[error("{}: the store holds no state yet (no head record)", path.display())]
    Empty {
        /// The directory.
        path: PathBuf,
    },
    /// The store belongs to another chain than the data it is used with.
    #[error("{}: the store belongs to another chain: {what}; use the store built from this data set, or build one with `gigagas db init`", path.display())]
    WrongChain {
        /// The directory.
        path: PathBuf,
        /// What differs (both values).
        what: String,
    },
    /// A state was loaded into a store that already holds one.
    #[error("{}: the store already holds block {}", path.display(), head.number)]
    NotEmpty {
        /// The directory.
        path: PathBuf,
        /// Its head.
        head: Head,
    },
}

/// The error of a group commit given no block.
fn no_blocks() -> Error {
    Error::Backend("a group commit was given no block".to_owned())
}

/// Which block the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Block number.
    pub number: u64,
    /// Block hash.
    pub hash: B256,
    /// State root after the block.
    pub state_root: B256,
}

/// The chain a store belongs to, recorded when it is built and checked whenever it is used
/// with a data set: the chain id and the hash of the genesis block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainIdentity {
    /// Chain id of the transactions.
    pub chain_id: u64,
    /// Hash of block 0.
    pub genesis_hash: B256,
}

impl ChainIdentity {
    /// The identity of the chain `block` belongs to: its chain id, and block 0's hash from its
    /// pre-state's block-hash table (a generated or fetched chain has it); `None` without it.
    pub fn of_block(block: &gigagas_data::BlockInput) -> Option<Self> {
        let genesis_hash = if block.number() == 0 {
            block.hash
        } else {
            *block.pre_state.block_hashes().get(&0)?
        };
        Some(Self {
            chain_id: block.chain_id,
            genesis_hash,
        })
    }

    fn encode(&self) -> Vec<u8> {
        [
            &self.chain_id.to_be_bytes()[..],
            self.genesis_hash.as_slice(),
        ]
        .concat()
    }

    fn decode(bytes: &[u8]) -> Result<Self, Error> {
        let corrupt = || Error::Corrupt {
            table: Table::Meta.name(),
            key: codec::hex(b"chain"),
            what: format!(
                "{} bytes, expected 40 (chain id, genesis hash)",
                bytes.len()
            ),
        };
        let (id, hash) = bytes.split_at_checked(8).ok_or_else(corrupt)?;
        let id: [u8; 8] = id.try_into().map_err(|_| corrupt())?;
        if hash.len() != 32 {
            return Err(corrupt());
        }
        Ok(Self {
            chain_id: u64::from_be_bytes(id),
            genesis_hash: B256::from_slice(hash),
        })
    }
}

impl std::fmt::Display for ChainIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "chain {} with genesis {}",
            self.chain_id, self.genesis_hash
        )
    }
}

/// A flush started by [`Store::sync_in_background`]. Dropped without [`Self::wait`] (a run
/// that failed meanwhile), it still waits for the flush, so that it never outlives the
/// process's other work on the store; its result is then lost to the error that dropped it.
#[derive(Debug)]
pub struct PendingSync(Option<PendingSyncState>);

#[derive(Debug)]
enum PendingSyncState {
    /// Running on its own thread.
    Running(std::thread::JoinHandle<Result<(), Error>>),
    /// Done already: no thread could be started, so it ran on the caller's (boxed: the
    /// handle stays small inside its holders).
    Done(Result<(), Box<Error>>),
}

impl PendingSync {
    /// Runs `task` on a thread named `name` (on this one, before returning, where no thread
    /// can be started).
    pub(crate) fn spawn(
        name: &str,
        task: impl FnOnce() -> Result<(), Error> + Send + 'static,
    ) -> Self {
        let task = std::sync::Arc::new(std::sync::Mutex::new(Some(task)));
        let theirs = task.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(
                move || match theirs.lock().ok().and_then(|mut t| t.take()) {
                    Some(task) => task(),
                    None => Ok(()),
                },
            );
        Self(Some(match spawned {
            Ok(thread) => PendingSyncState::Running(thread),
            Err(_) => PendingSyncState::Done(
                match task.lock().ok().and_then(|mut t| t.take()) {
                    Some(task) => task(),
                    None => Ok(()),
                }
                .map_err(Box::new),
            ),
        }))
    }

    /// Work already done, with its result.
    pub(crate) fn done(result: Result<(), Error>) -> Self {
        Self(Some(PendingSyncState::Done(result.map_err(Box::new))))
    }

    /// Whether the work is over ([`Self::wait`] then returns at once).
    pub fn is_finished(&self) -> bool {
        match &self.0 {
            Some(PendingSyncState::Running(thread)) => thread.is_finished(),
            _ => true,
        }
    }

    /// Waits for the flush: every commit made before it started is durable when this
    /// returns `Ok`.
    pub fn wait(mut self) -> Result<(), Error> {
        match self.0.take() {
            Some(PendingSyncState::Running(thread)) => thread.join().unwrap_or_else(|_| {
                Err(Error::Backend(
                    "the thread flushing the store panicked".into(),
                ))
            }),
            Some(PendingSyncState::Done(result)) => result.map_err(|e| *e),
            None => Ok(()),
        }
    }
}

impl Drop for PendingSync {
    fn drop(&mut self) {
        if let Some(PendingSyncState::Running(thread)) = self.0.take() {
            let _ = thread.join();
        }
    }
}

/// A block as the store records it.
#[derive(Debug, Clone, Copy)]
pub struct BlockRef {
    /// Block number (the head's + 1).
    pub number: u64,
    /// Block hash.
    pub hash: B256,
    /// Parent hash (the head's hash).
    pub parent_hash: B256,
    /// The root the block must reach (its header's), or `None` to accept whatever the
    /// changes give (partial states; never on complete ones).
    pub expected_root: Option<B256>,
}

/// The result of [`Store::verify`].
#[derive(Debug, Clone)]
pub struct Verified {
    /// The head record.
    pub head: Head,
    /// Root computed from scratch from the account and storage tables.
    pub computed_root: B256,
    /// Accounts, slots and branch nodes stored.
    pub counts: Counts,
    /// The first stored branch node that differs from a from-scratch build (owner, path),
    /// or `None` when every node matches.
    pub node_difference: Option<String>,
}

impl Verified {
    /// Root and nodes both agree.
    pub fn ok(&self) -> bool {
        self.computed_root == self.head.state_root && self.node_difference.is_none()
    }
}

/// How much a store holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Accounts.
    pub accounts: usize,
    /// Non-zero slots.
    pub slots: usize,
    /// Branch nodes, all tries.
    pub nodes: usize,
    /// Codes.
    pub codes: usize,
    /// Entries of the block-hash table.
    pub block_hashes: usize,
}

/// A block whose root [`Store::compute_block`] computed and checked, not yet written: every
/// write of its transaction, held in memory ([`KvDiff`]: trie nodes, leaves, codes, block
/// hash and head), so that the next block can read through it before it commits
/// ([`Store::compute_block_over`], [`Store::snapshot_over`]).
#[derive(Debug)]
pub struct PendingBlock {
    parent: Head,
    head: Head,
    diff: std::sync::Arc<KvDiff>,
}

impl PendingBlock {
    /// The head the store will have once the block is committed (its root included).
    pub fn head(&self) -> Head {
        self.head
    }

    /// The head the block follows (the store's head when it is committed).
    pub fn parent(&self) -> Head {
        self.parent
    }

    /// The block's writes, to lay over a snapshot until it is committed.
    pub fn diff(&self) -> std::sync::Arc<KvDiff> {
        self.diff.clone()
    }
}

/// What a read sees over the store's snapshot, bottom up: trie buffers (committed blocks'
/// trie nodes not yet flushed, oldest first), then blocks computed and not yet committed
/// (oldest first). Clone every part before the snapshot is taken.
#[derive(Debug, Clone)]
pub struct Overlay {
    /// Trie buffers, oldest first.
    pub buffers: Vec<std::sync::Arc<SharedTrieBuffer>>,
    /// The block whose state the read is of (the newest layer's, else the last committed):
    /// a buffer that merged a later block is refused, never read.
    pub block: u64,
    /// Blocks computed and not yet committed, oldest first.
    pub layers: Vec<std::sync::Arc<KvDiff>>,
    /// The buffers hold flat writes too (the write-ahead log's runs): every table reads
    /// through them.
    pub flat: bool,
}

impl Default for Overlay {
    fn default() -> Self {
        Self {
            buffers: Vec::new(),
            block: u64::MAX,
            layers: Vec::new(),
            flat: false,
        }
    }
}

impl Overlay {
    /// `base` with this overlay over it.
    pub fn over<R: KvRead>(self, base: R) -> Layered<R> {
        Layered::buffered(base, self.buffers, self.block, self.layers).with_flat_buffers(self.flat)
    }
}

/// The MDBX read snapshot.
pub type ReadTxn = mdbx::MdbxRead;
/// The MDBX write transaction.
pub type WriteTxn = mdbx::MdbxWrite;

/// A state store in one directory.
#[derive(Debug)]
pub struct Store<B: Backend = mdbx::Mdbx> {
    backend: B,
    path: PathBuf,
    /// The store's trie lock (`trie.lock`), held from this process's first block whose trie
    /// nodes go to a trie buffer until the store is dropped: another process that opens the
    /// store meanwhile must not rebuild the tries the buffer holds.
    trie_lock: std::sync::OnceLock<std::fs::File>,
    /// The store's writer lock, held while this store is open when it was opened to write
    /// ([`Store::create`], [`Store::open`], [`Store::open_with`]); `None` for a reader beside
    /// a writer ([`Store::open_unrecovered`]).
    writer: Option<WriterLock>,
}

impl Store<mdbx::Mdbx> {
    /// Every table's B-tree shape ([`mdbx::Mdbx::table_stats`]); with
    /// [`Store::open_unrecovered`] (whose checks refuse symbolic links and files that are not
    /// a store's) beside any writer.
    pub fn table_stats(&self) -> Result<Vec<mdbx::TableStat>, Error> {
        self.backend.table_stats()
    }

    /// The size of the data file's pages, bytes (what [`index_cache`] walks the file in).
    pub fn page_bytes(&self) -> u64 {
        kv::Backend::page_bytes(&self.backend)
    }
}

fn at(path: &Path, e: Error) -> Error {
    match e {
        Error::Backend(msg) => {
            // MDBX reports a write that found no space as a plain I/O error (EIO on tmpfs):
            // say so when the store's file system is (nearly) full.
            let full = match free_bytes(path).ok() {
                Some(free)
                    if free < FULL_BELOW
                        && !msg.contains("disk full")
                        && !msg.contains("mdbx open") =>
                {
                    format!(
                        " (disk full: the store's file system has {free} bytes free; free space \
                     and run again: the store stays at its last whole block)"
                    )
                }
                _ => String::new(),
            };
            Error::Backend(format!("{}: {msg}{full}", path.display()))
        }
        e => e,
    }
}

/// Free space below which a failed write is reported as a full disk (bytes).
const FULL_BELOW: u64 = 16 << 20;

impl<B: Backend> Store<B> {
    /// Creates a new, empty store in `path` (a directory that does not exist or is empty).
    pub fn create(path: &Path) -> Result<Self, Error> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        lock::check_files(path)?;
        if let Ok(mut entries) = std::fs::read_dir(path) {
            if entries.next().is_some() {
                return Err(Error::NotAStore {
                    path: path.to_owned(),
                    why: "refusing to create a store in a non-empty directory".into(),
                });
            }
        }
        std::fs::create_dir_all(path).map_err(io)?;
        let writer = WriterLock::take(path)?;
        let backend = B::open(path, true, true).map_err(|e| at(path, e))?;
        let txn = backend.write().map_err(|e| at(path, e))?;
        txn.put(Table::Meta, b"format", FORMAT)?;
        txn.commit().map_err(|e| at(path, e))?;
        Ok(Self {
            backend,
            path: path.to_owned(),
            trie_lock: std::sync::OnceLock::new(),
            writer: Some(writer),
        })
    }

    /// Opens the store in `path` to write it, checking that it is one; every commit is durable
    /// when it returns. Another process writing the store is refused ([`Error::Busy`]).
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::open_with(path, true)
    }

    /// [`Store::open`]; without `durable`, a commit is durable only after [`Store::sync`]
    /// (a crash leaves the store at its last synced block: MDBX keeps the previous steady
    /// commit): how a node batches its persistence (`run --sync`).
    pub fn open_with(path: &Path, durable: bool) -> Result<Self, Error> {
        Ok(Self::open_resuming(path, durable, 0)?.0)
    }

    /// [`Store::open_with`] for a run that goes on with a trie buffer of at most `keep`
    /// bytes: a journal the last run left (its trie buffer at its end) that continues the
    /// store's tries and fits is taken as that buffer instead of being written into the trie
    /// tables. Returns it and what reading it took (`None`: there was none, or it was
    /// written or removed).
    pub fn open_resuming(
        path: &Path,
        durable: bool,
        keep: u64,
    ) -> Result<(Self, Option<Resumed>), Error> {
        let store = Self::open_inner(path, durable, true)?;
        let say = |what: &str| eprintln!("{what}");
        // The last run's write-ahead log before anything: the blocks it holds are the
        // store's state (their tries come from the journal or the rebuild below).
        store.replay_wal(&say)?;
        // The last run's journal first: written into the tries (or taken), it spares the
        // rebuild; one that does not continue them is removed.
        let journal = store.settle_journal(keep, &say)?;
        if journal.is_none() {
            // Tries left behind by a run stopped between two flushes of its trie buffer are
            // rebuilt before anything reads them (unless a live process holds them: then it
            // writes them).
            store.recover_trie(&say)?;
        }
        Ok((store, journal))
    }

    /// Reopens, every commit durable, the store a process closed with its tries lagging its
    /// flat state on purpose (their nodes in its trie buffer; cold reads close the store
    /// between blocks): the writer lock and the trie lock taken again, nothing rebuilt and
    /// no journal settled.
    pub fn reopen_buffered(path: &Path) -> Result<Self, Error> {
        let store = Self::open_inner(path, true, true)?;
        store.hold_trie_lock()?;
        Ok(store)
    }

    /// [`Store::open_with`] without rebuilding tries that lag the flat state: for a process
    /// that reads only the head or the flat state beside a running one (whose trie buffer
    /// holds the rest). Its trie reads and verification are refused or fail while the tries
    /// lag.
    /// It takes no writer lock: a reader beside the process that writes the store.
    pub fn open_unrecovered(path: &Path, durable: bool) -> Result<Self, Error> {
        Self::open_inner(path, durable, false)
    }

    /// Opens the store in `path`; `write`: takes its writer lock first. Nothing in the
    /// directory is opened before its files are checked (no symbolic link, regular files).
    fn open_inner(path: &Path, durable: bool, write: bool) -> Result<Self, Error> {
        lock::check_files(path)?;
        let meta = std::fs::metadata(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(Error::NotAStore {
                path: path.to_owned(),
                why: "not a directory".into(),
            });
        }
        let dat = path.join("mdbx.dat");
        match std::fs::metadata(&dat) {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                return Err(Error::NotAStore {
                    path: path.to_owned(),
                    why: "mdbx.dat is not a regular file".into(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotAStore {
                    path: path.to_owned(),
                    why: "it has no mdbx.dat (the store's data file)".into(),
                })
            }
            Err(source) => return Err(Error::Io { path: dat, source }),
        }
        let writer = write.then(|| WriterLock::take(path)).transpose()?;
        let backend = B::open(path, false, durable).map_err(|e| at(path, e))?;
        let store = Self {
            backend,
            path: path.to_owned(),
            trie_lock: std::sync::OnceLock::new(),
            writer,
        };
        let format = store.read_kv()?.get(Table::Meta, b"format")?;
        if format.as_deref() != Some(FORMAT) {
            return Err(Error::NotAStore {
                path: path.to_owned(),
                why: format!(
                    "format record is {:?}, expected {:?}",
                    format.map(|f| String::from_utf8_lossy(&f).into_owned()),
                    String::from_utf8_lossy(FORMAT)
                ),
            });
        }
        Ok(store)
    }

    /// Makes every commit so far durable (a store opened without `durable`).
    pub fn sync(&self) -> Result<(), Error> {
        self.backend.sync().map_err(|e| at(&self.path, e))
    }

    /// Starts writing the commits made so far to the device on its own thread, without
    /// waiting for the device (a store opened without `durable`), so that the next
    /// [`Self::sync`] waits for less; durability is unchanged. `None` where the backend has no
    /// such thing or no thread can be started (nothing is lost: the sync writes it all).
    pub fn writeback_in_background(&self) -> Option<PendingSync> {
        let task = self.backend.writeback_task()?;
        let path = self.path.clone();
        std::thread::Builder::new()
            .name("store-writeback".into())
            .spawn(move || task().map_err(|e| at(&path, e)))
            .ok()
            .map(|thread| PendingSync(Some(PendingSyncState::Running(thread))))
    }

    /// Starts [`Self::sync`] on its own thread and returns at once: the flush runs beside
    /// this thread's reads (MDBX readers never wait), and the next write transaction waits
    /// for it. [`PendingSync::wait`] gives its result. Where no thread can be started, it
    /// flushes on this one before returning.
    pub fn sync_in_background(&self) -> PendingSync {
        let task = self.backend.sync_task();
        let path = self.path.clone();
        let spawned = std::thread::Builder::new()
            .name("store-flush".into())
            .spawn(move || task().map_err(|e| at(&path, e)));
        PendingSync(Some(match spawned {
            Ok(thread) => PendingSyncState::Running(thread),
            Err(_) => PendingSyncState::Done(self.sync().map_err(Box::new)),
        }))
    }

    /// Whether this process holds the store's writer lock (it opened the store to write it).
    pub fn is_writer(&self) -> bool {
        self.writer.is_some()
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes the database occupies on disk.
    pub fn size_bytes(&self) -> Result<u64, Error> {
        self.backend.size_bytes()
    }

    fn read_kv(&self) -> Result<B::Read, Error> {
        self.backend
            .read(rayon::current_num_threads() + 1)
            .map_err(|e| at(&self.path, e))
    }

    /// A read snapshot usable from every thread of the current rayon pool at once.
    pub fn read(&self) -> Result<View<B::Read>, Error> {
        Ok(View {
            kv: self.read_kv()?,
        })
    }

    /// A read snapshot for `readers` threads at once (execution's workers and the thread
    /// budget's pool), as the state a block executes against.
    pub fn snapshot(&self, readers: usize) -> Result<View<B::Read>, Error> {
        Ok(View {
            kv: self
                .backend
                .read(readers.max(1))
                .map_err(|e| at(&self.path, e))?,
        })
    }

    /// [`Self::snapshot`] with `layers` laid over it (blocks computed and not yet committed,
    /// oldest first): the state after the newest layer's block. Clone the layers before
    /// taking the snapshot: a layer whose block commits meanwhile then reads the same,
    /// while one dropped before the snapshot was taken would be missing.
    pub fn snapshot_over(
        &self,
        readers: usize,
        layers: Vec<std::sync::Arc<KvDiff>>,
    ) -> Result<View<Layered<B::Read>>, Error> {
        Ok(View {
            kv: Layered::new(self.snapshot(readers)?.kv, layers),
        })
    }

    /// [`Self::snapshot`] with `overlay` laid over it (clone its parts before taking the
    /// snapshot, as for [`Self::snapshot_over`]).
    pub fn snapshot_overlay(
        &self,
        readers: usize,
        overlay: Overlay,
    ) -> Result<View<Layered<B::Read>>, Error> {
        Ok(View {
            kv: overlay.over(self.snapshot(readers)?.kv),
        })
    }

    /// The head record, `None` before a state is loaded.
    pub fn head(&self) -> Result<Option<Head>, Error> {
        self.read_kv()?
            .get(Table::Meta, b"head")?
            .map(|v| codec::decode_head(&v))
            .transpose()
    }

    fn require_head(&self) -> Result<Head, Error> {
        self.head()?.ok_or_else(|| Error::Empty {
            path: self.path.clone(),
        })
    }

    /// The chain the store belongs to, `None` for a store built before it was recorded.
    pub fn chain(&self) -> Result<Option<ChainIdentity>, Error> {
        self.read_kv()?
            .get(Table::Meta, b"chain")?
            .map(|v| ChainIdentity::decode(&v))
            .transpose()
    }

    /// Records the chain the store belongs to (once: another chain is refused).
    pub fn record_chain(&self, chain: ChainIdentity) -> Result<(), Error> {
        let txn = self.backend.write().map_err(|e| at(&self.path, e))?;
        if let Some(old) = txn.get(Table::Meta, b"chain")? {
            let old = ChainIdentity::decode(&old)?;
            if old != chain {
                return Err(Error::WrongChain {
                    path: self.path.clone(),
                    what: format!("it records {old}, not {chain}"),
                });
            }
            return Ok(());
        }
        txn.put(Table::Meta, b"chain", &chain.encode())?;
        if txn.get(Table::Meta, HASHES_DIGEST)?.is_none() {
            let digest = table_digest(&txn)?;
            txn.put(Table::Meta, HASHES_DIGEST, digest.as_slice())?;
        }
        txn.commit().map_err(|e| at(&self.path, e))
    }

    /// Records the genesis allocation the store was built from and the state root it gave
    /// (checked against the genesis header first: `db init`), so that loading the same chain
    /// again need not hash it ([`gigagas_data::chain::KnownGenesis`]).
    pub fn record_genesis_alloc(
        &self,
        known: gigagas_data::chain::KnownGenesis,
    ) -> Result<(), Error> {
        let txn = self.backend.write().map_err(|e| at(&self.path, e))?;
        let value = [known.alloc_digest.as_slice(), known.state_root.as_slice()].concat();
        txn.put(Table::Meta, GENESIS_ALLOC, &value)?;
        txn.commit().map_err(|e| at(&self.path, e))
    }

    /// The genesis allocation recorded by [`Self::record_genesis_alloc`], `None` for a store
    /// without the record (built before it, or from a block's pre-state).
    pub fn genesis_alloc(&self) -> Result<Option<gigagas_data::chain::KnownGenesis>, Error> {
        let Some(v) = self.read_kv()?.get(Table::Meta, GENESIS_ALLOC)? else {
            return Ok(None);
        };
        if v.len() != 64 {
            return Err(Error::Corrupt {
                table: Table::Meta.name(),
                key: codec::hex(GENESIS_ALLOC),
                what: format!(
                    "{} bytes, expected 64 (allocation digest, state root)",
                    v.len()
                ),
            });
        }
        Ok(Some(gigagas_data::chain::KnownGenesis {
            alloc_digest: B256::from_slice(&v[..32]),
            state_root: B256::from_slice(&v[32..]),
        }))
    }

    /// The hash the block-hash table records for block `number`.
    pub fn block_hash(&self, number: u64) -> Result<Option<B256>, Error> {
        self.read_kv()?
            .get(Table::BlockHashes, &number.to_be_bytes())?
            .map(|v| codec::b256(Table::BlockHashes, &number.to_be_bytes(), &v))
            .transpose()
    }

    /// Checks that the store belongs to the chain of a data set: its recorded chain (or, for
    /// a store without the record, its block 0) is `expected` when known, and every block of
    /// `blocks` (number, hash) the store's block-hash table also names has the same hash.
    /// A store of another chain is [`Error::WrongChain`], naming both.
    pub fn check_chain(
        &self,
        expected: Option<ChainIdentity>,
        blocks: &[(u64, B256)],
    ) -> Result<(), Error> {
        let wrong = |what: String| Error::WrongChain {
            path: self.path.clone(),
            what,
        };
        if let Some(expected) = expected {
            match self.chain()? {
                Some(recorded) if recorded != expected => {
                    return Err(wrong(format!(
                        "it records {recorded}, the data set is {expected}"
                    )))
                }
                Some(_) => {}
                None => {
                    if let Some(genesis) = self.block_hash(0)? {
                        if genesis != expected.genesis_hash {
                            return Err(wrong(format!(
                                "its block 0 is {genesis}, the data set's genesis is {}",
                                expected.genesis_hash
                            )));
                        }
                    }
                }
            }
        }
        let kv = self.read_kv()?;
        for (number, hash) in blocks {
            let key = number.to_be_bytes();
            if let Some(v) = kv.get(Table::BlockHashes, &key)? {
                let stored = codec::b256(Table::BlockHashes, &key, &v)?;
                if stored != *hash {
                    return Err(wrong(format!(
                        "its block {number} is {stored}, the data set's block {number} is {hash}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Checks the block-hash table and the meta records: every entry decodes (8-byte number,
    /// 32-byte hash), the table's entry for the head block (where there is one) is the head's
    /// hash, block 0's entry is the recorded genesis, the table digests to the digest every
    /// commit keeps (stores that record their chain), and the format record is intact.
    /// Returns the number of entries.
    fn verify_block_hashes(&self, head: &Head) -> Result<usize, Error> {
        let kv = self.read_kv()?;
        let corrupt = |table: Table, key: &[u8], what: String| Error::Corrupt {
            table: table.name(),
            key: codec::hex(key),
            what,
        };
        let mut entries = 0usize;
        let mut at_head = None;
        let mut genesis = None;
        kv.scan(Table::BlockHashes, &[], &mut |k, v| {
            let number: [u8; 8] = k.try_into().map_err(|_| {
                corrupt(
                    Table::BlockHashes,
                    k,
                    format!("key of {} bytes, expected an 8-byte block number", k.len()),
                )
            })?;
            let hash = codec::b256(Table::BlockHashes, k, v)?;
            match u64::from_be_bytes(number) {
                0 => genesis = Some(hash),
                n if n == head.number => at_head = Some(hash),
                _ => {}
            }
            if head.number == 0 {
                at_head = genesis;
            }
            entries += 1;
            Ok(true)
        })?;
        let key = head.number.to_be_bytes();
        match at_head {
            Some(h) if h != head.hash => {
                return Err(corrupt(
                    Table::BlockHashes,
                    &key,
                    format!(
                        "block {} is {h} in the table but the head record says {}",
                        head.number, head.hash
                    ),
                ))
            }
            // A store loaded without the head's hash (a partial table) has none to compare.
            Some(_) | None => {}
        }
        if let (Some(chain), Some(genesis)) = (self.chain()?, genesis) {
            if chain.genesis_hash != genesis {
                return Err(corrupt(
                    Table::BlockHashes,
                    &0u64.to_be_bytes(),
                    format!("block 0 is {genesis} in the table but the store records {chain}"),
                ));
            }
        }
        if let Some(recorded) = kv.get(Table::Meta, HASHES_DIGEST)? {
            let recorded = codec::b256(Table::Meta, HASHES_DIGEST, &recorded)?;
            let digest = table_digest(&kv)?;
            if digest != recorded {
                return Err(corrupt(
                    Table::BlockHashes,
                    &[],
                    format!(
                        "the table's {entries} entries digest to {digest}, the store recorded \
                         {recorded} at its last commit: an entry was changed, added or removed"
                    ),
                ));
            }
        }
        let format = kv.get(Table::Meta, b"format")?;
        if format.as_deref() != Some(FORMAT) {
            return Err(corrupt(
                Table::Meta,
                b"format",
                "the format record is missing or changed".into(),
            ));
        }
        Ok(entries)
    }

    /// Bulk-loads a complete state into an empty store: builds every trie from scratch (in
    /// parallel on the current rayon pool), then appends each table in key order in one write
    /// transaction with the codes, the block hashes and the head (`number`, `hash`, the
    /// computed root). Returns the head. A state with rule-filled storage
    /// ([`gigagas_data::PreState::has_fills`]) is streamed instead
    /// ([`Store::load_streaming`]: memory independent of the rules' slots).
    pub fn load(
        &self,
        state: &gigagas_data::PreState,
        number: u64,
        hash: B256,
    ) -> Result<Head, Error> {
        if state.has_fills() {
            return self.load_streaming(state, number, hash, &|_| {});
        }
        if let Some(head) = self.head()? {
            return Err(Error::NotEmpty {
                path: self.path.clone(),
                head,
            });
        }
        let (root, memory) = gigagas_trie::from_prestate(state, Parallelism::DEFAULT);
        let codes = state_codes(state)?;
        let head = Head {
            number,
            hash,
            state_root: root,
        };
        let hashes: BTreeMap<u64, B256> =
            state.block_hashes().iter().map(|(n, h)| (*n, *h)).collect();
        self.load_memory(&memory, &codes, &hashes, head)?;
        Ok(head)
    }

    /// Writes a whole [`MemoryStore`] (every trie already built) with `codes`, `block_hashes`
    /// and `head` into an empty store, appending in key order in one transaction.
    pub fn load_memory(
        &self,
        memory: &MemoryStore,
        codes: &BTreeMap<B256, Bytes>,
        block_hashes: &BTreeMap<u64, B256>,
        head: Head,
    ) -> Result<(), Error> {
        let txn = self.backend.write().map_err(|e| at(&self.path, e))?;
        if txn.get(Table::Meta, b"head")?.is_some() {
            return Err(Error::NotEmpty {
                path: self.path.clone(),
                head: self.require_head()?,
            });
        }
        for (hashed, account) in &memory.accounts {
            txn.append(
                Table::Accounts,
                hashed.as_slice(),
                &codec::encode_account(account),
            )?;
        }
        let mut owners: Vec<&B256> = memory.storage.keys().collect();
        owners.sort_unstable();
        for owner in owners {
            for (slot, value) in &memory.storage[owner] {
                txn.append(
                    Table::Storage,
                    &codec::slot_key(owner, slot),
                    &codec::encode_value(value),
                )?;
            }
        }
        let mut nodes: Vec<(Vec<u8>, &gigagas_trie::BranchNode)> = memory
            .account_nodes
            .iter()
            .map(|(p, n)| (codec::node_key(None, p).1, n))
            .collect();
        nodes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (key, node) in nodes {
            txn.append(Table::AccountTrie, &key, &codec::encode_node(node))?;
        }
        let mut nodes: Vec<(Vec<u8>, &gigagas_trie::BranchNode)> = memory
            .storage_nodes
            .iter()
            .flat_map(|(o, m)| m.iter().map(|(p, n)| (codec::node_key(Some(*o), p).1, n)))
            .collect();
        nodes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (key, node) in nodes {
            txn.append(Table::StorageTrie, &key, &codec::encode_node(node))?;
        }
        for (hash, code) in codes {
            txn.append(Table::Code, hash.as_slice(), code)?;
        }
        for (number, hash) in block_hashes {
            txn.append(Table::BlockHashes, &number.to_be_bytes(), hash.as_slice())?;
        }
        txn.put(Table::Meta, b"head", &codec::encode_head(&head))?;
        txn.commit().map_err(|e| at(&self.path, e))
    }

    /// Applies one block: [`Self::compute_block`] then [`Self::commit_block`]. Returns the
    /// new head.
    pub fn apply_block(
        &self,
        block: BlockRef,
        changes: &ChangeSet,
        codes: &[Bytes],
        parallelism: Parallelism,
    ) -> Result<Head, Error> {
        let pending = self.compute_block(block, changes, codes, parallelism)?;
        self.commit_block(&pending)
    }

    /// Computes one block's root against a read snapshot of the head (`parallelism` on the
    /// current rayon pool; reads only) and checks it against `block.expected_root`. Nothing
    /// is written: [`Self::commit_block`] writes the result (with `codes`, the code the block
    /// deployed), so the root can be computed while the block still executes and written
    /// only once it verified.
    pub fn compute_block(
        &self,
        block: BlockRef,
        changes: &ChangeSet,
        codes: &[Bytes],
        parallelism: Parallelism,
    ) -> Result<PendingBlock, Error> {
        self.compute_block_over(&[], block, changes, codes, parallelism)
    }

    /// [`Self::compute_block`] against the head with `layers` laid over it: blocks computed
    /// and not yet committed, oldest first ([`PendingBlock::diff`]), so that a block is
    /// hashed while the one before it is still being written. The block must follow the
    /// newest layer's head. A layer whose block committed meanwhile reads the same.
    pub fn compute_block_over(
        &self,
        layers: &[std::sync::Arc<KvDiff>],
        block: BlockRef,
        changes: &ChangeSet,
        codes: &[Bytes],
        parallelism: Parallelism,
    ) -> Result<PendingBlock, Error> {
        let overlay = Overlay {
            layers: layers.to_vec(),
            ..Overlay::default()
        };
        self.compute_block_overlay(&overlay, block, changes, codes, parallelism)
    }

    /// [`Self::compute_block`] against the head with `overlay` laid over it: trie buffers
    /// (blocks committed, their trie nodes not yet flushed) and blocks computed and not yet
    /// committed.
    pub fn compute_block_overlay(
        &self,
        overlay: &Overlay,
        block: BlockRef,
        changes: &ChangeSet,
        codes: &[Bytes],
        parallelism: Parallelism,
    ) -> Result<PendingBlock, Error> {
        let view = View {
            kv: overlay.clone().over(self.read_kv()?),
        };
        let head = view
            .kv
            .get(Table::Meta, b"head")?
            .map(|v| codec::decode_head(&v))
            .transpose()?
            .ok_or_else(|| Error::Empty {
                path: self.path.clone(),
            })?;
        if block.number != head.number + 1 || block.parent_hash != head.hash {
            return Err(Error::NotNext {
                block: block.number,
                parent_hash: block.parent_hash,
                head,
            });
        }
        let updates = gigagas_trie::compute_updates(&view, changes, parallelism)?;
        drop(view);
        if let Some(expected) = block.expected_root {
            if updates.root != expected {
                return Err(Error::RootMismatch {
                    block: block.number,
                    expected,
                    computed: updates.root,
                    head: head.number,
                });
            }
        }
        let new_head = Head {
            number: block.number,
            hash: block.hash,
            state_root: updates.root,
        };
        let mut diff = KvDiff::default();
        diff.record_updates(&updates);
        for code in codes {
            diff.put(Table::Code, keccak256(code).as_slice(), code);
        }
        diff.put(
            Table::BlockHashes,
            &new_head.number.to_be_bytes(),
            new_head.hash.as_slice(),
        );
        diff.put(Table::Meta, b"head", &codec::encode_head(&new_head));
        Ok(PendingBlock {
            parent: head,
            head: new_head,
            diff: std::sync::Arc::new(diff),
        })
    }

    /// Writes a computed block — trie nodes, leaves, codes, the block hash and the new head —
    /// in one write transaction, provided the head is still the block's parent (blocks
    /// commit in order). Returns the new head.
    pub fn commit_block(&self, pending: &PendingBlock) -> Result<Head, Error> {
        self.commit_blocks(std::slice::from_ref(pending))
    }

    /// [`Self::commit_block`] of consecutive blocks, oldest first, in one write transaction:
    /// a page several of them change is copied and written once. Returns the last block's
    /// head; an empty list is an error.
    pub fn commit_blocks(&self, group: &[PendingBlock]) -> Result<Head, Error> {
        let last = group.last().ok_or_else(no_blocks)?.head;
        let txn = self.backend.write().map_err(|e| at(&self.path, e))?;
        for pending in group {
            self.begin_commit(&txn, pending)?;
            pending.diff.apply(&txn)?;
        }
        txn.commit().map_err(|e| at(&self.path, e))?;
        Ok(last)
    }

    /// Reads every account, slot and branch node into a [`MemoryStore`] (for verification
    /// and tests), with the number of codes.
    pub fn to_memory(&self) -> Result<(MemoryStore, usize), Error> {
        let kv = self.read_kv()?;
        let mut memory = MemoryStore::default();
        kv.scan(Table::Accounts, &[], &mut |k, v| {
            let hashed = codec::b256(Table::Accounts, k, k)?;
            memory.accounts.insert(hashed, codec::decode_account(k, v)?);
            Ok(true)
        })?;
        kv.scan(Table::Storage, &[], &mut |k, v| {
            if k.len() != 64 {
                return Err(Error::Corrupt {
                    table: Table::Storage.name(),
                    key: codec::hex(k),
                    what: "storage key is not 64 bytes".into(),
                });
            }
            let value: U256 = codec::decode_value(k, v)?;
            memory
                .storage
                .entry(B256::from_slice(&k[..32]))
                .or_default()
                .insert(B256::from_slice(&k[32..]), value);
            Ok(true)
        })?;
        kv.scan(Table::AccountTrie, &[], &mut |k, v| {
            let path: Nibbles = codec::decode_path(Table::AccountTrie, k, k)?;
            memory
                .account_nodes
                .insert(path, codec::decode_node(Table::AccountTrie, k, v)?);
            Ok(true)
        })?;
        kv.scan(Table::StorageTrie, &[], &mut |k, v| {
            if k.len() < 32 {
                return Err(Error::Corrupt {
                    table: Table::StorageTrie.name(),
                    key: codec::hex(k),
                    what: "key shorter than its owner".into(),
                });
            }
            let path = codec::decode_path(Table::StorageTrie, k, &k[32..])?;
            memory
                .storage_nodes
                .entry(B256::from_slice(&k[..32]))
                .or_default()
                .insert(path, codec::decode_node(Table::StorageTrie, k, v)?);
            Ok(true)
        })?;
        let mut codes = 0;
        kv.scan(Table::Code, &[], &mut |k, v| {
            if keccak256(v).as_slice() != k {
                return Err(Error::Corrupt {
                    table: Table::Code.name(),
                    key: codec::hex(k),
                    what: "code does not hash to its key".into(),
                });
            }
            codes += 1;
            Ok(true)
        })?;
        Ok((memory, codes))
    }

    /// Recomputes the state root and every branch node from scratch from the account and
    /// storage tables and compares them with the head record and the stored nodes.
    pub fn verify(&self) -> Result<Verified, Error> {
        self.check_trie_whole()?;
        let head = self.require_head()?;
        let block_hashes = self.verify_block_hashes(&head)?;
        let (stored, codes) = self.to_memory()?;
        let accounts = stored.accounts.iter().map(|(k, a)| {
            (
                *k,
                gigagas_trie::AccountInfo {
                    nonce: a.nonce,
                    balance: a.balance,
                    code_hash: a.code_hash,
                },
            )
        });
        let storages = stored
            .storage
            .iter()
            .map(|(o, m)| (*o, m.iter().map(|(k, v)| (*k, *v)).collect()));
        let (computed_root, scratch) =
            gigagas_trie::from_scratch(accounts, storages, Parallelism::DEFAULT);
        let counts = Counts {
            accounts: stored.accounts.len(),
            slots: stored.storage.values().map(BTreeMap::len).sum(),
            nodes: stored.node_count(),
            codes,
            block_hashes,
        };
        Ok(Verified {
            head,
            computed_root,
            counts,
            node_difference: first_difference(&stored, &scratch),
        })
    }
}

/// Meta key of the block-hash table's digest ([`entry_digest`] of every entry, XORed: any
/// changed, added or removed entry changes it; kept up to date by every commit).
const HASHES_DIGEST: &[u8] = b"block_hashes_digest";
const GENESIS_ALLOC: &[u8] = b"genesis_alloc";

/// One block-hash entry's share of the table's digest.
fn entry_digest(key: &[u8], value: &[u8]) -> B256 {
    keccak256([key, value].concat())
}

fn xor(a: B256, b: B256) -> B256 {
    B256::from(std::array::from_fn::<u8, 32, _>(|i| a[i] ^ b[i]))
}

/// The digest of a whole block-hash table.
fn table_digest(kv: &impl KvRead) -> Result<B256, Error> {
    let mut digest = B256::ZERO;
    kv.scan(Table::BlockHashes, &[], &mut |k, v| {
        digest = xor(digest, entry_digest(k, v));
        Ok(true)
    })?;
    Ok(digest)
}

/// The first place where the branch nodes or leaves of `a` and `b` differ, described.
pub fn first_difference(a: &MemoryStore, b: &MemoryStore) -> Option<String> {
    if a.accounts != b.accounts {
        let key = a
            .accounts
            .iter()
            .zip(b.accounts.iter())
            .find(|(x, y)| x != y)
            .map(|(x, _)| x.0.to_string());
        return Some(format!(
            "account leaves differ (first at {})",
            key.unwrap_or_else(|| "the end".into())
        ));
    }
    fn nodes_diff(
        owner: &str,
        a: Option<&BTreeMap<Nibbles, gigagas_trie::BranchNode>>,
        b: Option<&BTreeMap<Nibbles, gigagas_trie::BranchNode>>,
    ) -> Option<String> {
        let empty = BTreeMap::new();
        let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
        if a == b {
            return None;
        }
        let path = a
            .keys()
            .chain(b.keys())
            .filter(|p| a.get(*p) != b.get(*p))
            .min()
            .map(|p| format!("{p:?}"));
        Some(format!(
            "branch node of the {owner} trie at path {} differs ({} stored, {} from scratch)",
            path.unwrap_or_default(),
            a.len(),
            b.len()
        ))
    }
    if let Some(d) = nodes_diff("account", Some(&a.account_nodes), Some(&b.account_nodes)) {
        return Some(d);
    }
    let mut owners: Vec<&B256> = a
        .storage_nodes
        .keys()
        .chain(b.storage_nodes.keys())
        .collect();
    owners.sort_unstable();
    owners.dedup();
    for owner in owners {
        if let Some(d) = nodes_diff(
            &format!("storage {owner}"),
            a.storage_nodes.get(owner),
            b.storage_nodes.get(owner),
        ) {
            return Some(d);
        }
    }
    None
}

/// Every code of `state`'s accounts by hash (from the account, or the state's code table).
pub(crate) fn state_codes(state: &gigagas_data::PreState) -> Result<BTreeMap<B256, Bytes>, Error> {
    use revm::DatabaseRef;
    let mut codes = BTreeMap::new();
    for (_, account) in state.accounts() {
        let hash = account.info.code_hash;
        if hash != revm::primitives::KECCAK_EMPTY && !codes.contains_key(&hash) {
            let code = match &account.info.code {
                Some(code) if !code.is_empty() => code.original_bytes(),
                _ => state
                    .code_by_hash_ref(hash)
                    .map_err(|e| Error::Backend(format!("loading code {hash}: {e}")))?
                    .original_bytes(),
            };
            codes.insert(hash, code);
        }
    }
    Ok(codes)
}
