//! The key-value backend the store sits on: a few sorted tables, read views that many threads
//! read at once, and one write transaction at a time. MDBX ([`crate::mdbx`]) is the one
//! implementation; a second engine (e.g. `redb`) plugs in here to be measured beside it.

use crate::Error;
use std::path::Path;

/// The store's tables. Keys sort bytewise; see `docs/store.md` for each key's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// keccak(address) → RLP `TrieAccount` (nonce, balance, storage root, code hash).
    Accounts,
    /// keccak(address) ‖ keccak(slot) → value (big-endian, leading zeros stripped, non-zero).
    Storage,
    /// code hash → code bytes.
    Code,
    /// nibble path (one byte per nibble) → branch node of the account trie.
    AccountTrie,
    /// keccak(address) ‖ nibble path → branch node of that account's storage trie.
    StorageTrie,
    /// block number (8 bytes big-endian) → block hash (the hashes `BLOCKHASH` may ask for).
    BlockHashes,
    /// `format`, `head`: what this store is and which block it holds.
    Meta,
}

impl Table {
    /// Every table, in a fixed order.
    pub const ALL: [Table; 7] = [
        Table::Accounts,
        Table::Storage,
        Table::Code,
        Table::AccountTrie,
        Table::StorageTrie,
        Table::BlockHashes,
        Table::Meta,
    ];

    /// The table's name in the database.
    pub fn name(self) -> &'static str {
        match self {
            Table::Accounts => "accounts",
            Table::Storage => "storage",
            Table::Code => "code",
            Table::AccountTrie => "account_trie",
            Table::StorageTrie => "storage_trie",
            Table::BlockHashes => "block_hashes",
            Table::Meta => "meta",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// One entry: key and value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Keys in increasing order with their new values (`None`: removed), for
/// [`KvWrite::write_sorted`].
pub type SortedWrites<'a> = &'a mut dyn Iterator<Item = (&'a [u8], Option<&'a [u8]>)>;

/// What [`KvRead::scan`] calls per entry: `Ok(false)` stops.
pub type Visit<'a> = &'a mut dyn FnMut(&[u8], &[u8]) -> Result<bool, Error>;

/// A consistent read-only snapshot. `Sync`: any number of threads read it at once.
pub trait KvRead: Sync {
    /// The value under `key`.
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, Error>;
    /// The first entry whose key is `>= key`.
    fn seek(&self, table: Table, key: &[u8]) -> Result<Option<Entry>, Error>;
    /// The first entry whose key is `>= key` and `< end` (`None`: no bound): a seek inside a
    /// key range, which a reader that merges sources ([`crate::Layered`]) stops at the bound
    /// instead of walking past it. Default: [`Self::seek`], filtered.
    fn seek_below(
        &self,
        table: Table,
        key: &[u8],
        end: Option<&[u8]>,
    ) -> Result<Option<Entry>, Error> {
        Ok(self
            .seek(table, key)?
            .filter(|(k, _)| end.is_none_or(|e| k.as_slice() < e)))
    }
    /// Calls `f` on every entry from the first key `>= from`, in key order, until it returns
    /// `false`.
    fn scan(&self, table: Table, from: &[u8], f: Visit<'_>) -> Result<(), Error>;
}

/// The one write transaction: nothing it does is visible to anyone until [`KvWrite::commit`],
/// and dropping it without committing discards everything.
pub trait KvWrite: KvRead + Send {
    /// Sets `key` to `value`.
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), Error>;
    /// Sets `key`, which must sort after every key in the table (bulk loads in key order).
    fn append(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), Error>;
    /// Removes `key` (no-op when absent).
    fn delete(&self, table: Table, key: &[u8]) -> Result<(), Error>;
    /// Removes every key starting with `prefix`.
    fn delete_prefix(&self, table: Table, prefix: &[u8]) -> Result<(), Error>;
    /// Sets (`Some`) or removes (`None`) each key of `entries`, given in increasing key order
    /// (one batch: a backend may write it through one cursor). Default: one call each.
    fn write_sorted(&self, table: Table, entries: SortedWrites<'_>) -> Result<(), Error> {
        for (key, value) in entries {
            match value {
                Some(v) => self.put(table, key, v)?,
                None => self.delete(table, key)?,
            }
        }
        Ok(())
    }
    /// Makes everything durable at once.
    fn commit(self) -> Result<(), Error>;
}

/// A key-value engine holding the store's tables in one directory.
pub trait Backend: Send + Sync + Sized {
    /// A read snapshot.
    type Read: KvRead;
    /// The write transaction.
    type Write: KvWrite;
    /// Opens (with `create`: creates) the database in directory `path` with every table;
    /// with `durable`, every commit is on disk when it returns, otherwise only after
    /// [`Backend::sync`] (a crash then leaves the last synced commit, never a torn one).
    fn open(path: &Path, create: bool, durable: bool) -> Result<Self, Error>;
    /// Makes every commit so far durable (flushes the data and the meta page to disk).
    fn sync(&self) -> Result<(), Error> {
        (self.sync_task())()
    }
    /// [`Backend::sync`] as a task another thread can run while this one reads and writes on
    /// (the next write transaction waits for it).
    fn sync_task(&self) -> Box<dyn FnOnce() -> Result<(), Error> + Send + 'static>;
    /// A task that starts writing the commits made so far to the device without waiting for
    /// the writes (a store opened without `durable`), so that the next [`Backend::sync`] has
    /// less left to write; durability is unchanged (only a sync makes a commit durable).
    /// `None` where the backend has no such thing.
    fn writeback_task(&self) -> Option<Box<dyn FnOnce() -> Result<(), Error> + Send + 'static>> {
        None
    }
    /// A snapshot for up to `threads` reading threads at once.
    fn read(&self, threads: usize) -> Result<Self::Read, Error>;
    /// Starts the write transaction (waits while another one is open).
    fn write(&self) -> Result<Self::Write, Error>;
    /// Bytes the database occupies on disk (allocated, not the sparse file length).
    fn size_bytes(&self) -> Result<u64, Error>;
    /// Drops the database pages mapped into this process from its resident set: they stay
    /// in the page cache and a later read maps them again. A scan of the whole store calls it
    /// as it goes, so its resident memory does not grow with the store. Default: nothing to
    /// drop (a backend that maps nothing).
    fn release_resident(&self) -> Result<(), Error> {
        Ok(())
    }
    /// Database pages written so far by this environment's write transactions (new pages
    /// and pages copied on write, of [`Backend::page_bytes`] each), for the write stage's
    /// statistics; `None` where the engine does not count them.
    fn pages_written(&self) -> Option<u64> {
        None
    }
    /// Bytes per database page.
    fn page_bytes(&self) -> u64 {
        4096
    }
    /// Tells the OS that reads will now go through the database in file order (a whole-store
    /// scan), so it reads ahead of each one. Default: nothing to advise.
    fn advise_sequential(&self) -> Result<(), Error> {
        Ok(())
    }
}
