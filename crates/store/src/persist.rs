//! Trie-node persistence decoupled from the block (geth's path database): a block's commit
//! writes its flat state (accounts, slots, codes, block hash, head) and leaves its trie
//! nodes to a [`TrieBuffer`] many blocks deep, which [`Store::flush_trie`] writes as one
//! sorted batch. The store records the block its trie tables are at (`trie_head`, absent
//! when they are at the head) and the storage tries changed since (`trie_dirty`); on open, a
//! store whose tries lag its flat state (a crash between flushes) has those tries and the
//! account trie rebuilt from the flat state ([`Store::recover_trie`]), so it is again at a
//! whole block.

use crate::{
    codec,
    kv::{Backend, KvRead, KvWrite, Table},
    Error, Head, PendingBlock, Store, TrieBuffer,
};
use alloy_primitives::B256;
use alloy_trie::{Nibbles, EMPTY_ROOT_HASH};
use gigagas_trie::{BranchNode, StreamBuilder, StreamError};
use std::{cell::RefCell, time::Instant};

/// Meta key: the head the trie tables are at, when it is not the store's head.
const TRIE_HEAD: &[u8] = b"trie_head";
/// Meta key prefix: `trie_dirty` ‖ owner → the last block (8 B BE) that changed the owner's
/// storage trie after `trie_head`.
const TRIE_DIRTY: &[u8] = b"trie_dirty";
/// Rebuilt nodes (or deleted keys) per write transaction of a recovery (bounded dirty
/// pages; a crash between them redoes the recovery).
const RECOVERY_BATCH: u64 = 1 << 20;

/// Every table but the trie tables: what a block writes at its commit when its trie nodes
/// go to a [`TrieBuffer`].
pub const FLAT_TABLES: [Table; 5] = [
    Table::Accounts,
    Table::Storage,
    Table::Code,
    Table::BlockHashes,
    Table::Meta,
];

/// What one flush of a trie buffer wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FlushStats {
    /// The block the trie tables are at after the flush.
    pub through: u64,
    /// Blocks whose trie nodes it wrote.
    pub blocks: u64,
    /// Nodes written or deleted, and storage tries wiped.
    pub entries: u64,
    /// Key and value bytes written.
    pub bytes: u64,
    /// Memory the buffer held, estimated.
    pub buffer_bytes: u64,
    /// Database pages the flush's transaction wrote (new and copied on write; `None` where
    /// the engine does not count them).
    pub pages: Option<u64>,
    /// Bytes per page.
    pub page_bytes: u64,
    /// Time the flush took, write transaction and commit, ns.
    pub ns: u64,
}

/// The file a process holding a trie buffer locks (`flock`, released when the process ends,
/// however it ends).
pub const TRIE_LOCK: &str = "trie.lock";

/// Takes the exclusive lock on `dir`'s [`TRIE_LOCK`] without waiting: `Ok(None)` when another
/// process holds it.
fn lock_trie(dir: &std::path::Path) -> Result<Option<std::fs::File>, Error> {
    crate::lock::lock_file(dir, TRIE_LOCK)
}

fn dirty_key(owner: &[u8]) -> Vec<u8> {
    [TRIE_DIRTY, owner].concat()
}

fn stream_err(e: StreamError<Error>) -> Error {
    match e {
        StreamError::Sink(e) => e,
        e => Error::Backend(format!("rebuilding a trie: {e}")),
    }
}

impl<B: Backend> Store<B> {
    /// Checks, inside `txn`, that the store's head is `pending`'s parent (blocks commit in
    /// order, each onto its parent), and keeps the block-hash table's digest.
    pub(crate) fn begin_commit(&self, txn: &B::Write, pending: &PendingBlock) -> Result<(), Error> {
        let new_head = pending.head;
        // The head read inside the write transaction: no other writer moved it meanwhile.
        let current = txn
            .get(Table::Meta, b"head")?
            .map(|v| codec::decode_head(&v))
            .transpose()?;
        if current != Some(pending.parent) {
            return Err(Error::Backend(format!(
                "{}: block {} follows block {} (hash {}), but the store's head is {}",
                self.path.display(),
                new_head.number,
                pending.parent.number,
                pending.parent.hash,
                current.map_or("missing".to_owned(), |h| format!(
                    "block {} (hash {})",
                    h.number, h.hash
                )),
            )));
        }
        let key = new_head.number.to_be_bytes();
        if let Some(digest) = txn.get(Table::Meta, crate::HASHES_DIGEST)? {
            let mut digest = codec::b256(Table::Meta, crate::HASHES_DIGEST, &digest)?;
            if let Some(old) = txn.get(Table::BlockHashes, &key)? {
                digest = crate::xor(digest, crate::entry_digest(&key, &old));
            }
            digest = crate::xor(digest, crate::entry_digest(&key, new_head.hash.as_slice()));
            txn.put(Table::Meta, crate::HASHES_DIGEST, digest.as_slice())?;
        }
        Ok(())
    }

    /// Writes a computed block's flat state — leaves, codes, the block hash and the new head
    /// — in one write transaction, leaving its trie nodes to a [`TrieBuffer`] (merge
    /// [`PendingBlock::diff`] into it, then [`Self::flush_trie`]). Records the block the trie
    /// tables are at (the parent, if they were at the head) and the storage tries the block
    /// changed, so that a crash before the flush is recovered ([`Self::recover_trie`]).
    pub fn commit_block_flat(&self, pending: &PendingBlock) -> Result<Head, Error> {
        self.commit_blocks_flat(std::slice::from_ref(pending))
    }

    /// [`Self::commit_block_flat`] of consecutive blocks, oldest first, in one write
    /// transaction: a page several of them change is copied and written once. Returns the
    /// last block's head; an empty list is an error.
    pub fn commit_blocks_flat(&self, group: &[PendingBlock]) -> Result<Head, Error> {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            return Err(crate::no_blocks());
        };
        self.hold_trie_lock()?;
        let txn = self.backend.write().map_err(|e| crate::at(&self.path, e))?;
        if txn.get(Table::Meta, TRIE_HEAD)?.is_none() {
            txn.put(Table::Meta, TRIE_HEAD, &codec::encode_head(&first.parent))?;
        }
        for pending in group {
            self.begin_commit(&txn, pending)?;
            // The owners of the storage tries the block wrote: keys come in order, so each
            // run of one owner's nodes (a hot account's block writes ~15k) adds it once.
            let mut owners: Vec<&[u8]> = Vec::new();
            // Their slots too: a block replayed from the write-ahead log has no trie nodes.
            for owner in pending
                .diff
                .entries(Table::StorageTrie)
                .chain(pending.diff.entries(Table::Storage))
                .map(|(k, _)| k)
                .chain(pending.diff.wiped(Table::StorageTrie))
                .chain(pending.diff.wiped(Table::Storage))
                .filter_map(|k| k.get(..32))
            {
                if owners.last() != Some(&owner) {
                    owners.push(owner);
                }
            }
            owners.sort_unstable();
            owners.dedup();
            let number = pending.head.number.to_be_bytes();
            for owner in owners {
                txn.put(Table::Meta, &dirty_key(owner), &number)?;
            }
            pending.diff.apply_tables(&txn, &FLAT_TABLES)?;
        }
        txn.commit().map_err(|e| crate::at(&self.path, e))?;
        Ok(last.head)
    }

    /// Writes the trie nodes of `buffer` (the blocks committed with
    /// [`Self::commit_block_flat`] since the last flush, merged in order) as one batch in one
    /// write transaction: wiped tries, then every node in key order; the trie tables are then
    /// at the buffer's last block. A failed flush writes nothing: the store stays at its last
    /// whole block and recovers the tries when opened.
    pub fn flush_trie(&self, buffer: &TrieBuffer) -> Result<FlushStats, Error> {
        let Some(through) = buffer.through() else {
            return Ok(FlushStats::default());
        };
        let t0 = Instant::now();
        let pages0 = self.backend.pages_written();
        let txn = self.backend.write().map_err(|e| crate::at(&self.path, e))?;
        let head = txn
            .get(Table::Meta, b"head")?
            .map(|v| codec::decode_head(&v))
            .transpose()?
            .ok_or_else(|| Error::Empty {
                path: self.path.clone(),
            })?;
        let trie = txn
            .get(Table::Meta, TRIE_HEAD)?
            .map(|v| codec::decode_head(&v))
            .transpose()?;
        let flat = buffer.flat_base();
        let follows = match (trie, flat) {
            // Flat writes held too: the store's head is where they start.
            (t, Some(base)) => {
                base == head
                    && t.unwrap_or(head).number < through.number
                    && head.number < through.number
            }
            (Some(t), None) => t.number < through.number && through.number <= head.number,
            (None, None) => false,
        };
        if !follows {
            return Err(Error::Backend(format!(
                "{}: the trie buffer holds blocks up to {}, but the store's tries are at {} and its head at block {}: it does not continue them",
                self.path.display(),
                through.number,
                trie.map_or("its head".to_owned(), |t| format!("block {}", t.number)),
                head.number
            )));
        }
        let tables: &[Table] = if flat.is_some() {
            self.update_hashes_digest(&txn, buffer.diff())?;
            &Table::ALL
        } else {
            &TrieBuffer::TABLES
        };
        buffer.diff().apply_tables(&txn, tables)?;
        let mut entries = 0u64;
        let mut bytes = 0u64;
        for &table in tables {
            for (k, v) in buffer.diff().entries(table) {
                entries += 1;
                bytes += (k.len() + v.map_or(0, <[u8]>::len)) as u64;
            }
            entries += buffer.diff().wiped(table).count() as u64;
        }
        self.clear_dirty(&txn, through.number)?;
        if through == head || flat.is_some() {
            txn.delete(Table::Meta, TRIE_HEAD)?;
        } else {
            txn.put(Table::Meta, TRIE_HEAD, &codec::encode_head(&through))?;
        }
        txn.commit().map_err(|e| crate::at(&self.path, e))?;
        // The tries moved: a journal of the blocks before no longer continues them.
        crate::journal::remove_file(&self.path.join(crate::journal::TRIE_JOURNAL))?;
        Ok(FlushStats {
            through: through.number,
            blocks: buffer.blocks(),
            entries,
            bytes,
            buffer_bytes: buffer.bytes() as u64,
            pages: pages0
                .zip(self.backend.pages_written())
                .map(|(a, b)| b.saturating_sub(a)),
            page_bytes: self.backend.page_bytes(),
            ns: t0.elapsed().as_nanos() as u64,
        })
    }

    /// Keeps the block-hash table's digest through `diff`'s block hashes (before they are
    /// written: it reads the values they replace).
    fn update_hashes_digest(&self, txn: &B::Write, diff: &crate::KvDiff) -> Result<(), Error> {
        let Some(digest) = txn.get(Table::Meta, crate::HASHES_DIGEST)? else {
            return Ok(());
        };
        let mut digest = codec::b256(Table::Meta, crate::HASHES_DIGEST, &digest)?;
        for (key, value) in diff.entries(Table::BlockHashes) {
            if let Some(old) = txn.get(Table::BlockHashes, key)? {
                digest = crate::xor(digest, crate::entry_digest(key, &old));
            }
            if let Some(new) = value {
                digest = crate::xor(digest, crate::entry_digest(key, new));
            }
        }
        txn.put(Table::Meta, crate::HASHES_DIGEST, digest.as_slice())
    }

    /// Takes the store's trie lock for as long as this store is open (once). Another process
    /// holding it is an error: two processes cannot both buffer the store's trie nodes.
    pub(crate) fn hold_trie_lock(&self) -> Result<(), Error> {
        if self.trie_lock.get().is_some() {
            return Ok(());
        }
        match lock_trie(&self.path)? {
            Some(file) => {
                let _ = self.trie_lock.set(file);
                Ok(())
            }
            None if cfg!(unix) => Err(Error::Backend(format!(
                "{}: another process holds the store's trie nodes in its trie buffer ({TRIE_LOCK} is locked)",
                self.path.display()
            ))),
            None => Ok(()),
        }
    }

    /// An error when the store's tries lag its flat state and another process is writing
    /// them (it holds them in its trie buffer): what verifying it now would find is that
    /// run's unfinished work, not damage.
    pub(crate) fn check_trie_whole(&self) -> Result<(), Error> {
        if let Some((trie, head)) = self.trie_lag()? {
            return Err(Error::Backend(format!(
                "{}: its trie nodes are at block {} and its state at block {}: a running process holds the rest in its trie buffer ({TRIE_LOCK} is locked); verify it once that run has ended",
                self.path.display(),
                trie.number,
                head.number
            )));
        }
        Ok(())
    }

    /// Deletes the records of storage tries last changed at or before block `through`.
    fn clear_dirty(&self, txn: &B::Write, through: u64) -> Result<(), Error> {
        let mut done = Vec::new();
        txn.scan(Table::Meta, TRIE_DIRTY, &mut |k, v| {
            if !k.starts_with(TRIE_DIRTY) {
                return Ok(false);
            }
            let block: [u8; 8] = v.try_into().map_err(|_| Error::Corrupt {
                table: Table::Meta.name(),
                key: codec::hex(k),
                what: format!("{} bytes, expected an 8-byte block number", v.len()),
            })?;
            if u64::from_be_bytes(block) <= through {
                done.push(k.to_vec());
            }
            Ok(true)
        })?;
        for k in done {
            txn.delete(Table::Meta, &k)?;
        }
        Ok(())
    }

    /// Where the trie tables lag the flat state (a run stopped between two flushes of its
    /// trie buffer): the block they are at, and the head. `None` when they are at the head.
    pub fn trie_lag(&self) -> Result<Option<(Head, Head)>, Error> {
        let kv = self.read_kv()?;
        let Some(trie) = kv
            .get(Table::Meta, TRIE_HEAD)?
            .map(|v| codec::decode_head(&v))
            .transpose()?
        else {
            return Ok(None);
        };
        let head = self.require_head()?;
        Ok((trie != head).then_some((trie, head)))
    }

    /// Brings trie tables that lag the flat state ([`Self::trie_lag`]) to the head: every
    /// storage trie changed after the block they are at is deleted and rebuilt from its
    /// slots (streamed), then the account trie from the accounts, each root checked against
    /// the account leaf and the head. Several write transactions; a crash between them
    /// leaves the records that make the next open start over. `progress` is told what
    /// happens. Returns whether there was anything to do.
    pub fn recover_trie(&self, progress: &dyn Fn(&str)) -> Result<bool, Error> {
        let Some((trie, head)) = self.trie_lag()? else {
            return Ok(false);
        };
        // A live process holding the lock is still writing them: not ours to rebuild.
        let lock = match self.trie_lock.get() {
            Some(_) => None,
            None => match lock_trie(&self.path)? {
                Some(file) => Some(file),
                None if cfg!(unix) => return Ok(false),
                None => None,
            },
        };
        let t0 = Instant::now();
        let kv = self.read_kv()?;
        let mut owners: Vec<B256> = Vec::new();
        kv.scan(Table::Meta, TRIE_DIRTY, &mut |k, _| {
            if !k.starts_with(TRIE_DIRTY) {
                return Ok(false);
            }
            let owner = &k[TRIE_DIRTY.len()..];
            owners.push(codec::b256(Table::Meta, k, owner)?);
            Ok(true)
        })?;
        progress(&format!(
            "{}: its trie nodes are at block {}, its state at block {} (a run stopped before writing its trie buffer into them): rebuilding {} storage trie(s) and the account trie from the state",
            self.path.display(),
            trie.number,
            head.number,
            owners.len()
        ));
        let at = |e| crate::at(&self.path, e);
        let batch = Batch {
            store: self,
            txn: RefCell::new(Some(self.backend.write().map_err(at)?)),
            uncommitted: RefCell::new(0),
        };
        for owner in &owners {
            batch.delete_prefix(Table::StorageTrie, owner.as_slice())?;
            let mut slots = 0u64;
            let mut builder = StreamBuilder::new(|path: Nibbles, node: BranchNode| {
                batch.put(
                    Table::StorageTrie,
                    &codec::node_key(Some(*owner), &path).1,
                    &codec::encode_node(&node),
                )
            });
            kv.scan(Table::Storage, owner.as_slice(), &mut |k, v| {
                if !k.starts_with(owner.as_slice()) {
                    return Ok(false);
                }
                let slot = codec::b256(Table::Storage, k, k.get(32..).unwrap_or_default())?;
                builder
                    .push(slot, alloy_rlp::encode(codec::decode_value(k, v)?))
                    .map_err(stream_err)?;
                slots += 1;
                if slots & ((1 << 20) - 1) == 0 {
                    progress(&format!("  storage trie {owner}: {slots} slots"));
                    self.backend.release_resident()?;
                }
                Ok(true)
            })?;
            let root = if slots == 0 {
                EMPTY_ROOT_HASH
            } else {
                builder.finish().map_err(stream_err)?.root
            };
            let recorded = kv
                .get(Table::Accounts, owner.as_slice())?
                .map(|v| codec::decode_account(owner.as_slice(), &v))
                .transpose()?
                .map_or(EMPTY_ROOT_HASH, |a| a.storage_root);
            if root != recorded {
                return Err(Error::Corrupt {
                    table: Table::Accounts.name(),
                    key: codec::hex(owner.as_slice()),
                    what: format!(
                        "the account's slots hash to storage root {root}, its leaf records {recorded}: the store's flat state is inconsistent"
                    ),
                });
            }
            progress(&format!(
                "  storage trie {owner}: {slots} slots, root {root}"
            ));
        }
        batch.delete_prefix(Table::AccountTrie, &[])?;
        let mut accounts = 0u64;
        let mut builder = StreamBuilder::new(|path: Nibbles, node: BranchNode| {
            batch.put(
                Table::AccountTrie,
                &codec::node_key(None, &path).1,
                &codec::encode_node(&node),
            )
        });
        kv.scan(Table::Accounts, &[], &mut |k, v| {
            let hashed = codec::b256(Table::Accounts, k, k)?;
            builder
                .push(hashed, alloy_rlp::encode(codec::decode_account(k, v)?))
                .map_err(stream_err)?;
            accounts += 1;
            Ok(true)
        })?;
        let root = if accounts == 0 {
            EMPTY_ROOT_HASH
        } else {
            builder.finish().map_err(stream_err)?.root
        };
        if root != head.state_root {
            return Err(Error::Corrupt {
                table: Table::Meta.name(),
                key: codec::hex(b"head"),
                what: format!(
                    "the accounts hash to {root}, the head (block {}) records {}: the store's flat state is inconsistent",
                    head.number, head.state_root
                ),
            });
        }
        let txn = batch.txn.borrow_mut().take().ok_or_else(no_txn)?;
        // The head read again: a writer in another process may have moved it meanwhile.
        let now = txn
            .get(Table::Meta, b"head")?
            .map(|v| codec::decode_head(&v))
            .transpose()?;
        if now == Some(head) {
            txn.delete(Table::Meta, TRIE_HEAD)?;
        } else {
            txn.put(Table::Meta, TRIE_HEAD, &codec::encode_head(&head))?;
        }
        self.clear_dirty(&txn, head.number)?;
        txn.commit().map_err(at)?;
        drop(lock);
        progress(&format!(
            "{}: tries rebuilt at block {} (state root {}, {accounts} accounts) in {:.1} s",
            self.path.display(),
            head.number,
            head.state_root,
            t0.elapsed().as_secs_f64()
        ));
        Ok(true)
    }
}

fn no_txn() -> Error {
    Error::Backend("no write transaction".into())
}

/// Writes committed every [`RECOVERY_BATCH`] keys.
struct Batch<'a, B: Backend> {
    store: &'a Store<B>,
    txn: RefCell<Option<B::Write>>,
    uncommitted: RefCell<u64>,
}

impl<B: Backend> Batch<'_, B> {
    fn counted(&self) -> Result<(), Error> {
        let mut n = self.uncommitted.borrow_mut();
        *n += 1;
        if *n >= RECOVERY_BATCH {
            let at = |e| crate::at(&self.store.path, e);
            let mut txn = self.txn.borrow_mut();
            txn.take().ok_or_else(no_txn)?.commit().map_err(at)?;
            *txn = Some(self.store.backend.write().map_err(at)?);
            *n = 0;
        }
        Ok(())
    }

    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.txn
            .borrow()
            .as_ref()
            .ok_or_else(no_txn)?
            .put(table, key, value)?;
        self.counted()
    }

    /// Deletes every key under `prefix`, [`RECOVERY_BATCH`] at a time.
    fn delete_prefix(&self, table: Table, prefix: &[u8]) -> Result<(), Error> {
        loop {
            let mut keys = Vec::new();
            {
                let txn = self.txn.borrow();
                let txn = txn.as_ref().ok_or_else(no_txn)?;
                txn.scan(table, prefix, &mut |k, _| {
                    if !k.starts_with(prefix) {
                        return Ok(false);
                    }
                    keys.push(k.to_vec());
                    Ok((keys.len() as u64) < RECOVERY_BATCH)
                })?;
                for k in &keys {
                    txn.delete(table, k)?;
                }
            }
            if (keys.len() as u64) < RECOVERY_BATCH {
                return Ok(());
            }
            *self.uncommitted.borrow_mut() = RECOVERY_BATCH - 1;
            self.counted()?;
        }
    }
}
