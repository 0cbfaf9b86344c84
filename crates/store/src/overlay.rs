//! Blocks computed but not yet committed, read as if they were: a block's writes held in
//! memory as a [`KvDiff`] (the final state of every key it touched, and the prefixes it
//! wiped), and [`Layered`], a read snapshot with such diffs laid over it, newest on top.
//!
//! This is what lets block N+1 execute and hash against block N's state while N's write
//! transaction still runs (a node's in-memory blocks: reth's `MemoryOverlayStateProvider`).
//! A diff holds final values, so laying it over a snapshot that already holds its block
//! reads the same: whichever of "snapshot before N + N" or "snapshot after N + N" a reader
//! gets while N commits, it reads the state after N.

use crate::{
    codec,
    kv::{Entry, KvRead, KvWrite, Table, Visit},
    Error,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

/// One block's writes to the store's tables: for every key it touched, the value it left
/// (`None`: deleted), and the key prefixes it wiped (every key under one that the block did
/// not write afterwards is gone). Applied with [`KvDiff::apply`]: wipes first, then entries.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KvDiff {
    tables: [TableDiff; Table::ALL.len()],
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct TableDiff {
    entries: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Prefix-free: no element is a prefix of another.
    wiped: BTreeSet<Vec<u8>>,
    /// Memory the entries and wipes take, estimated ([`ENTRY_BYTES`] each beside their keys
    /// and values).
    bytes: usize,
}

/// What one entry of a diff costs beside its key and value bytes: the map's node share and
/// the two vectors' headers (an estimate, for the trie buffer's bound).
pub const ENTRY_BYTES: usize = 80;

/// What one diff says about one key.
enum Says<'a> {
    /// The diff wrote it: its value, or `None` (deleted).
    Wrote(Option<&'a [u8]>),
    /// The diff wiped a prefix of it (`.0`) and did not write it again.
    Wiped(&'a [u8]),
    /// The diff did not touch it.
    Nothing,
}

/// The least byte string greater than every string starting with `prefix` (`None`: there is
/// none, `prefix` is all `0xff`).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// The least byte string greater than `key`.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

impl TableDiff {
    /// Sets `key` to `value` (`None`: deleted), keeping [`Self::bytes`].
    fn set(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        let len = |v: &Option<Vec<u8>>| v.as_ref().map_or(0, Vec::len);
        let new = len(&value);
        let key_len = key.len();
        match self.entries.insert(key, value) {
            Some(old) => self.bytes = self.bytes + new - len(&old),
            None => self.bytes += key_len + new + ENTRY_BYTES,
        }
    }

    /// [`Self::set`] of every entry of `sorted`, given in increasing key order: into an
    /// empty table at once (a bulk build, no search per key), else one by one.
    fn set_sorted(&mut self, sorted: Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        if !self.entries.is_empty() {
            for (key, value) in sorted {
                self.set(key, value);
            }
            return;
        }
        debug_assert!(sorted.windows(2).all(|w| w[0].0 < w[1].0));
        self.bytes += sorted
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len) + ENTRY_BYTES)
            .sum::<usize>();
        self.entries = sorted.into_iter().collect();
    }

    fn says(&self, key: &[u8]) -> Says<'_> {
        if let Some(v) = self.entries.get(key) {
            return Says::Wrote(v.as_deref());
        }
        match self.says_wiped(key) {
            Some(p) => Says::Wiped(p),
            None => Says::Nothing,
        }
    }

    /// The first key this diff wrote (value or deletion) that is `>= from`.
    fn first_from(&self, from: &[u8]) -> Option<&[u8]> {
        self.entries
            .range::<[u8], _>((Bound::Included(from), Bound::Unbounded))
            .next()
            .map(|(k, _)| k.as_slice())
    }

    fn wipe(&mut self, prefix: &[u8]) {
        let end = prefix_end(prefix);
        let range = |set_end: &Option<Vec<u8>>| -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
            (
                Bound::Included(prefix.to_vec()),
                set_end.clone().map_or(Bound::Unbounded, Bound::Excluded),
            )
        };
        let written: Vec<Vec<u8>> = self
            .entries
            .range(range(&end))
            .map(|(k, _)| k.clone())
            .collect();
        for k in written {
            if let Some(v) = self.entries.remove(&k) {
                self.bytes -= k.len() + v.map_or(0, |v| v.len()) + ENTRY_BYTES;
            }
        }
        if matches!(self.says_wiped(prefix), Some(p) if p.len() <= prefix.len()) {
            return; // a shorter prefix already covers it
        }
        let inner: Vec<Vec<u8>> = self.wiped.range(range(&end)).cloned().collect();
        for p in inner {
            self.wiped.remove(&p);
            self.bytes -= p.len() + ENTRY_BYTES;
        }
        self.wiped.insert(prefix.to_vec());
        self.bytes += prefix.len() + ENTRY_BYTES;
    }

    /// The wiped prefix of `key`, if any. The set is prefix-free, so the greatest element
    /// `<= key` is the only one that can be a prefix of it.
    fn says_wiped(&self, key: &[u8]) -> Option<&[u8]> {
        match self
            .wiped
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
            .next_back()
        {
            Some(p) if key.starts_with(p) => Some(p),
            _ => None,
        }
    }
}

impl KvDiff {
    /// Sets `key` to `value`.
    pub fn put(&mut self, table: Table, key: &[u8], value: &[u8]) {
        self.tables[table.index()].set(key.to_vec(), Some(value.to_vec()));
    }

    /// Deletes `key`.
    pub fn delete(&mut self, table: Table, key: &[u8]) {
        self.tables[table.index()].set(key.to_vec(), None);
    }

    /// Memory the diff takes, estimated: keys, values and [`ENTRY_BYTES`] per entry and per
    /// wiped prefix.
    pub fn bytes(&self) -> usize {
        self.tables.iter().map(|t| t.bytes).sum()
    }

    /// [`Self::bytes`] of the writes to `tables` only.
    pub fn bytes_of(&self, tables: &[Table]) -> usize {
        tables.iter().map(|t| self.tables[t.index()].bytes).sum()
    }

    /// Lays `later`'s writes to `tables` over this diff's, as if its block came after this
    /// one's: its wipes first (they take this diff's writes under them), then its entries.
    /// Repeated writes to a key keep only the last.
    pub fn merge(&mut self, later: &KvDiff, tables: &[Table]) {
        for table in tables {
            let (mine, theirs) = (
                &mut self.tables[table.index()],
                &later.tables[table.index()],
            );
            for prefix in &theirs.wiped {
                mine.wipe(prefix);
            }
            for (key, value) in &theirs.entries {
                mine.set(key.clone(), value.clone());
            }
        }
    }

    /// Only the writes to `tables` (a block's trie nodes, or everything else).
    pub fn only(&self, tables: &[Table]) -> KvDiff {
        let mut out = KvDiff::default();
        for table in tables {
            out.tables[table.index()] = self.tables[table.index()].clone();
        }
        out
    }

    /// Keys written in `table` with their values (`None`: deleted), in key order.
    pub fn entries(&self, table: Table) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.tables[table.index()]
            .entries
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
    }

    /// Prefixes wiped in `table`, in key order.
    pub fn wiped(&self, table: Table) -> impl Iterator<Item = &[u8]> {
        self.tables[table.index()].wiped.iter().map(Vec::as_slice)
    }

    /// Deletes every key starting with `prefix`, this diff's own earlier writes included.
    pub fn delete_prefix(&mut self, table: Table, prefix: &[u8]) {
        self.tables[table.index()].wipe(prefix);
    }

    /// Keys written (values and deletions) and prefixes wiped, over all tables.
    pub fn len(&self) -> usize {
        self.tables
            .iter()
            .map(|t| t.entries.len() + t.wiped.len())
            .sum()
    }

    /// Whether the diff writes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the diff into `txn`: every wiped prefix first, then every entry in key order.
    pub fn apply(&self, txn: &impl KvWrite) -> Result<(), Error> {
        self.apply_tables(txn, &Table::ALL)
    }

    /// [`Self::apply`] of the writes to `tables` only.
    pub fn apply_tables(&self, txn: &impl KvWrite, tables: &[Table]) -> Result<(), Error> {
        for table in tables {
            for prefix in &self.tables[table.index()].wiped {
                txn.delete_prefix(*table, prefix)?;
            }
        }
        for table in tables {
            let entries = &self.tables[table.index()].entries;
            if entries.is_empty() {
                continue;
            }
            let mut sorted = entries.iter().map(|(k, v)| (k.as_slice(), v.as_deref()));
            txn.write_sorted(*table, &mut sorted)?;
        }
        Ok(())
    }

    /// Records a block's trie updates as the store encodes them (`docs/store.md`): branch
    /// nodes, account leaves and slots, a wiped storage trie's nodes and slots first.
    pub fn record_updates(&mut self, updates: &gigagas_trie::StateUpdates) {
        use rayon::prelude::*;
        // The wipes first: each covers one owner's keys only, which this block writes after
        // it, so taking them all before any entry is the order "wipe, then its writes".
        for (owner, trie) in &updates.storage_nodes {
            if trie.wiped {
                self.delete_prefix(Table::StorageTrie, owner.as_slice());
            }
        }
        for (owner, (wiped, _)) in &updates.storage {
            if *wiped {
                self.delete_prefix(Table::Storage, owner.as_slice());
            }
        }
        // Every list below is in key order already (nodes by nibble path, one byte per
        // nibble, owners and slots in maps), so each table takes its entries in one sorted
        // batch. The nodes are encoded on the current pool (a hot account's block writes
        // ~15k of them: this was a serial tenth of the disk root stage).
        type Entries = Vec<(Vec<u8>, Option<Vec<u8>>)>;
        fn nodes(
            owner: Option<alloy_primitives::B256>,
            trie: &gigagas_trie::TrieUpdates,
        ) -> impl IndexedParallelIterator<Item = (Vec<u8>, Option<Vec<u8>>)> + '_ {
            trie.nodes.par_iter().map(move |(path, node)| {
                (
                    codec::node_key(owner, path).1,
                    node.as_ref().map(codec::encode_node),
                )
            })
        }
        let account_nodes: Entries = nodes(None, &updates.account_nodes).collect();
        let storage_nodes: Entries = updates
            .storage_nodes
            .par_iter()
            .flat_map(|(owner, trie)| nodes(Some(*owner), trie))
            .collect();
        let slots: Entries = updates
            .storage
            .iter()
            .flat_map(|(owner, (_, slots))| {
                slots.iter().map(move |(slot, value)| {
                    let key = codec::slot_key(owner, slot).to_vec();
                    (key, (!value.is_zero()).then(|| codec::encode_value(value)))
                })
            })
            .collect();
        let accounts: Entries = updates
            .accounts
            .iter()
            .map(|(hashed, account)| {
                (
                    hashed.as_slice().to_vec(),
                    account.as_ref().map(codec::encode_account),
                )
            })
            .collect();
        self.tables[Table::StorageTrie.index()].set_sorted(storage_nodes);
        self.tables[Table::AccountTrie.index()].set_sorted(account_nodes);
        self.tables[Table::Storage.index()].set_sorted(slots);
        self.tables[Table::Accounts.index()].set_sorted(accounts);
    }
}

/// The trie-node writes of committed blocks not yet flushed into the store (the trie
/// buffer: geth's path database's node buffer): one [`KvDiff`] of the trie tables, every
/// block's writes merged into it in block order (a node written by many blocks is held
/// once, at its last value), with the newest block merged.
///
/// With the write-ahead log (`crate::Wal`), the blocks' flat writes (accounts, slots, codes,
/// block hashes, head) are merged into it too ([`Self::merge_all`]): the store's B-tree then
/// stays at the block before the first of them ([`Self::flat_base`]) until the flush.
#[derive(Debug, Default)]
pub struct TrieBuffer {
    diff: KvDiff,
    through: Option<crate::Head>,
    blocks: u64,
    /// With flat writes merged: the store's head they continue.
    flat: Option<crate::Head>,
}

impl TrieBuffer {
    /// The tables a trie buffer holds.
    pub const TABLES: [Table; 2] = [Table::AccountTrie, Table::StorageTrie];

    /// Merges the trie-node writes of `block` (the next block after [`Self::through`]).
    pub fn merge(&mut self, block: &KvDiff, head: crate::Head) {
        self.diff.merge(block, &Self::TABLES);
        self.through = Some(head);
        self.blocks += 1;
    }

    /// Merges every write of `block` (the next block after [`Self::through`], whose parent is
    /// `parent`): its trie nodes and its flat state, which the store then lacks until the
    /// flush (the write-ahead log holds it durably meanwhile).
    pub fn merge_all(&mut self, block: &KvDiff, parent: crate::Head, head: crate::Head) {
        self.diff.merge(block, &Table::ALL);
        self.flat.get_or_insert(parent);
        self.through = Some(head);
        self.blocks += 1;
    }

    /// With flat writes merged ([`Self::merge_all`]): the store's head the first of them
    /// continues (`None`: trie nodes only).
    pub fn flat_base(&self) -> Option<crate::Head> {
        self.flat
    }

    /// Memory the trie-node writes take, estimated (what a journal of the buffer holds).
    pub fn trie_bytes(&self) -> usize {
        self.diff.bytes_of(&Self::TABLES)
    }

    /// A buffer holding `diff`, the trie-node writes of `blocks` blocks up to `through` (a
    /// journal read back: [`crate::JournalStats`]).
    pub(crate) fn resumed(diff: KvDiff, through: crate::Head, blocks: u64) -> Self {
        Self {
            diff,
            through: Some(through),
            blocks,
            flat: None,
        }
    }

    /// The writes held.
    pub fn diff(&self) -> &KvDiff {
        &self.diff
    }

    /// The newest block merged (`None`: none yet).
    pub fn through(&self) -> Option<crate::Head> {
        self.through
    }

    /// Blocks merged.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Memory held, estimated ([`KvDiff::bytes`]).
    pub fn bytes(&self) -> usize {
        self.diff.bytes()
    }
}

/// A trie buffer shared by the writer, which merges blocks into it, and the readers that
/// read through it. Once frozen for a flush it is never written again.
pub type SharedTrieBuffer = std::sync::RwLock<TrieBuffer>;

/// A read snapshot with the diffs of blocks not yet written laid over it, read as one state:
/// a key's value is the newest diff's that wrote it, else absent if a newer diff wiped a
/// prefix of it, else the snapshot's. Laying a diff over a snapshot that already holds it
/// changes nothing (diffs hold final values), so the snapshot may be taken after the diffs
/// were cloned, while their blocks commit.
///
/// From the bottom: the snapshot, the trie buffers (oldest first: one being flushed, the one
/// blocks are merged into; trie tables only), then the blocks computed and not yet committed
/// (oldest first).
#[derive(Debug)]
pub struct Layered<R> {
    base: R,
    buffers: Vec<Arc<SharedTrieBuffer>>,
    /// The buffers hold flat writes too (the write-ahead log's runs): every table reads
    /// through them, not only the trie tables.
    flat: bool,
    /// The block whose state this reads (checked against the buffers: a buffer that moved
    /// past it would read a later state).
    block: u64,
    layers: Vec<Arc<KvDiff>>,
}

/// How a key reads through the layers.
enum Reads<'a> {
    /// A layer gives its value (`None`: deleted there).
    Layer(Option<&'a [u8]>),
    /// A layer wiped it: the next key that can be visible is `.0` (`None`: none), unless a
    /// layer at or above the wiping one wrote a key before that.
    WipedUntil(Option<Vec<u8>>, usize),
    /// No layer touched it: the snapshot's value.
    Base,
}

/// How `key` reads through `tables` (oldest first).
fn reads<'a>(tables: &[&'a TableDiff], key: &[u8]) -> Reads<'a> {
    for (i, t) in tables.iter().enumerate().rev() {
        match t.says(key) {
            Says::Wrote(v) => return Reads::Layer(v),
            Says::Wiped(p) => return Reads::WipedUntil(prefix_end(p), i),
            Says::Nothing => {}
        }
    }
    Reads::Base
}

/// The least key `>= from` that any of `tables` from `lowest` up wrote.
fn next_written(tables: &[&TableDiff], from: &[u8], lowest: usize) -> Option<Vec<u8>> {
    tables[lowest..]
        .iter()
        .filter_map(|t| t.first_from(from))
        .min()
        .map(<[u8]>::to_vec)
}

impl<R: KvRead> Layered<R> {
    /// `base` with `layers` over it, oldest first.
    pub fn new(base: R, layers: Vec<Arc<KvDiff>>) -> Self {
        Self {
            base,
            buffers: Vec::new(),
            flat: false,
            block: u64::MAX,
            layers,
        }
    }

    /// `base` with the trie buffers `buffers` over it (oldest first), then `layers` (oldest
    /// first), read as the state after block `block`. Reading a buffer that has merged a later
    /// block is an error (the reader outlived the block after it), never a wrong value.
    pub fn buffered(
        base: R,
        buffers: Vec<Arc<SharedTrieBuffer>>,
        block: u64,
        layers: Vec<Arc<KvDiff>>,
    ) -> Self {
        Self {
            base,
            buffers,
            flat: false,
            block,
            layers,
        }
    }

    /// The same reads with every table read through the trie buffers (they hold flat
    /// writes: [`TrieBuffer::merge_all`]), not only the trie tables.
    pub fn with_flat_buffers(self, flat: bool) -> Self {
        Self { flat, ..self }
    }

    /// The snapshot under the layers.
    pub fn base(&self) -> &R {
        &self.base
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Arc<KvDiff>] {
        &self.layers
    }

    /// Runs `f` on the diffs of `table` over the snapshot, oldest first (`None`: there are
    /// none, read the snapshot), the trie buffers read-locked meanwhile.
    fn with_tables<T>(
        &self,
        table: Table,
        f: impl FnOnce(Option<&[&TableDiff]>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let buffered =
            !self.buffers.is_empty() && (self.flat || TrieBuffer::TABLES.contains(&table));
        if !buffered {
            if self.layers.is_empty() {
                return f(None);
            }
            let tables: Vec<&TableDiff> = self
                .layers
                .iter()
                .map(|l| &l.tables[table.index()])
                .collect();
            return f(Some(&tables));
        }
        let guards = self
            .buffers
            .iter()
            .map(|b| {
                b.read().map_err(|_| {
                    Error::Backend(
                        "the trie buffer's lock was poisoned: a thread panicked while merging a block into it"
                            .into(),
                    )
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        for g in &guards {
            if let Some(through) = g.through.filter(|t| t.number > self.block) {
                return Err(Error::Backend(format!(
                    "a read of the state after block {} found the trie buffer at block {}: the reader outlived the block after it",
                    self.block, through.number
                )));
            }
        }
        let tables: Vec<&TableDiff> = guards
            .iter()
            .map(|g| &g.diff.tables[table.index()])
            .chain(self.layers.iter().map(|l| &l.tables[table.index()]))
            .collect();
        f(Some(&tables))
    }
}

impl<R: KvRead> KvRead for Layered<R> {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        self.with_tables(table, |tables| {
            let Some(tables) = tables else {
                return self.base.get(table, key);
            };
            match reads(tables, key) {
                Reads::Layer(v) => Ok(v.map(<[u8]>::to_vec)),
                Reads::WipedUntil(..) => Ok(None),
                Reads::Base => self.base.get(table, key),
            }
        })
    }

    fn seek(&self, table: Table, key: &[u8]) -> Result<Option<Entry>, Error> {
        self.seek_below(table, key, None)
    }

    fn seek_below(
        &self,
        table: Table,
        key: &[u8],
        end: Option<&[u8]>,
    ) -> Result<Option<Entry>, Error> {
        self.with_tables(table, |tables| {
            let Some(tables) = tables else {
                return self.base.seek_below(table, key, end);
            };
            let within = |k: &[u8]| end.is_none_or(|e| k < e);
            let mut at = key.to_vec();
            // The snapshot's first entry >= some earlier `at` (below `end`), once read: still
            // the answer for a later `at` up to its key, so a run of keys only the layers hold
            // costs no snapshot seek.
            let mut below: Option<Option<Entry>> = None;
            loop {
                if !within(&at) {
                    return Ok(None);
                }
                if below
                    .as_ref()
                    .is_none_or(|b| b.as_ref().is_some_and(|(k, _)| *k < at))
                {
                    below = Some(self.base.seek_below(table, &at, end)?);
                }
                let snapshot = below.as_ref().and_then(Option::as_ref);
                // The least key >= `at` that the snapshot or any layer has.
                let written = next_written(tables, &at, 0).filter(|w| within(w));
                let candidate = match (snapshot, written) {
                    (Some((k, _)), Some(w)) if w < *k => w,
                    (Some((k, _)), _) => k.clone(),
                    (None, Some(w)) => w,
                    (None, None) => return Ok(None),
                };
                match reads(tables, &candidate) {
                    // No layer wrote it, so it is the snapshot's key.
                    Reads::Base => return Ok(snapshot.cloned()),
                    Reads::Layer(Some(v)) => return Ok(Some((candidate, v.to_vec()))),
                    Reads::Layer(None) => at = successor(&candidate),
                    Reads::WipedUntil(wipe_end, lowest) => {
                        let after = successor(&candidate);
                        // Keys the wiping layer (or a newer one) wrote under the prefix are
                        // visible; the snapshot's and older layers' are not.
                        let rewritten = next_written(tables, &after, lowest);
                        at = match (rewritten, wipe_end) {
                            (Some(w), Some(e)) => w.min(e),
                            (Some(w), None) => w,
                            (None, Some(e)) => e,
                            (None, None) => return Ok(None),
                        };
                    }
                }
            }
        })
    }

    fn scan(&self, table: Table, from: &[u8], f: Visit<'_>) -> Result<(), Error> {
        let layered = !self.layers.is_empty()
            || (!self.buffers.is_empty() && (self.flat || TrieBuffer::TABLES.contains(&table)));
        if !layered {
            return self.base.scan(table, from, f);
        }
        let mut at = from.to_vec();
        while let Some((key, value)) = self.seek(table, &at)? {
            if !f(&key, &value)? {
                break;
            }
            at = successor(&key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Mutex;

    /// A table held in a `BTreeMap`: the snapshot, and the model the layers must read like.
    #[derive(Debug, Default, Clone)]
    struct Model(BTreeMap<Vec<u8>, Vec<u8>>);

    impl KvRead for Model {
        fn get(&self, _: Table, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
            Ok(self.0.get(key).cloned())
        }
        fn seek(&self, _: Table, key: &[u8]) -> Result<Option<Entry>, Error> {
            Ok(self
                .0
                .range(key.to_vec()..)
                .next()
                .map(|(k, v)| (k.clone(), v.clone())))
        }
        fn scan(&self, t: Table, from: &[u8], f: Visit<'_>) -> Result<(), Error> {
            let mut at = from.to_vec();
            while let Some((k, v)) = self.seek(t, &at)? {
                if !f(&k, &v)? {
                    break;
                }
                at = successor(&k);
            }
            Ok(())
        }
    }

    /// The model's writes, as the write transaction makes them (to apply a diff to it).
    struct ModelTxn(Mutex<Model>);

    impl KvRead for ModelTxn {
        fn get(&self, t: Table, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
            self.0.lock().unwrap().get(t, key)
        }
        fn seek(&self, t: Table, key: &[u8]) -> Result<Option<Entry>, Error> {
            self.0.lock().unwrap().seek(t, key)
        }
        fn scan(&self, t: Table, from: &[u8], f: Visit<'_>) -> Result<(), Error> {
            let m = self.0.lock().unwrap().clone();
            m.scan(t, from, f)
        }
    }

    impl KvWrite for ModelTxn {
        fn put(&self, _: Table, key: &[u8], value: &[u8]) -> Result<(), Error> {
            self.0
                .lock()
                .unwrap()
                .0
                .insert(key.to_vec(), value.to_vec());
            Ok(())
        }
        fn append(&self, t: Table, key: &[u8], value: &[u8]) -> Result<(), Error> {
            self.put(t, key, value)
        }
        fn delete(&self, _: Table, key: &[u8]) -> Result<(), Error> {
            self.0.lock().unwrap().0.remove(key);
            Ok(())
        }
        fn delete_prefix(&self, _: Table, prefix: &[u8]) -> Result<(), Error> {
            self.0
                .lock()
                .unwrap()
                .0
                .retain(|k, _| !k.starts_with(prefix));
            Ok(())
        }
        fn commit(self) -> Result<(), Error> {
            Ok(())
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put(Vec<u8>, u8),
        Delete(Vec<u8>),
        Wipe(Vec<u8>),
    }

    /// Short keys over a 3-letter alphabet, so that writes, deletions and wipes collide.
    fn key(max: usize) -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..3, 0..=max)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (key(4), any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
            2 => key(4).prop_map(Op::Delete),
            1 => key(2).prop_map(Op::Wipe),
        ]
    }

    const T: Table = Table::Storage;

    fn diff_of(ops: &[Op]) -> KvDiff {
        let mut d = KvDiff::default();
        for op in ops {
            match op {
                Op::Put(k, v) => d.put(T, k, &[*v]),
                Op::Delete(k) => d.delete(T, k),
                Op::Wipe(p) => d.delete_prefix(T, p),
            }
        }
        d
    }

    /// The model after the ops, applied one by one (the reference: no diff involved).
    fn replay(mut m: Model, ops: &[Op]) -> Model {
        for op in ops {
            match op {
                Op::Put(k, v) => {
                    m.0.insert(k.clone(), vec![*v]);
                }
                Op::Delete(k) => {
                    m.0.remove(k);
                }
                Op::Wipe(p) => m.0.retain(|k, _| !k.starts_with(p)),
            }
        }
        m
    }

    fn all(r: &impl KvRead) -> Vec<Entry> {
        let mut out = Vec::new();
        r.scan(T, &[], &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(true)
        })
        .unwrap();
        out
    }

    proptest! {
        /// Layers over a snapshot read like the state their blocks left, however far the
        /// snapshot is: before the first block, or already holding some of them (a block
        /// that committed while its diff was still laid over). `get` and `seek` from every
        /// short key agree with the model, and applying a diff equals replaying its ops.
        #[test]
        fn layers_read_like_the_state_they_leave(
            base in prop::collection::btree_map(key(4), any::<u8>(), 0..40),
            blocks in prop::collection::vec(prop::collection::vec(op(), 0..25), 1..4),
        ) {
            let base = Model(base.into_iter().map(|(k, v)| (k, vec![v])).collect());
            let diffs: Vec<Arc<KvDiff>> = blocks.iter().map(|ops| Arc::new(diff_of(ops))).collect();
            // The states after each block, by replaying the ops.
            let mut states = vec![base.clone()];
            for ops in &blocks {
                let next = replay(states.last().unwrap().clone(), ops);
                states.push(next);
            }
            // Applying a diff to a state gives the next state.
            for (i, d) in diffs.iter().enumerate() {
                let txn = ModelTxn(Mutex::new(states[i].clone()));
                d.apply(&txn).unwrap();
                prop_assert_eq!(&txn.0.lock().unwrap().0, &states[i + 1].0);
            }
            let want = states.last().unwrap();
            let mut probes: Vec<Vec<u8>> = (0..=3).flat_map(|n| {
                (0..3usize.pow(n)).map(move |mut i| {
                    (0..n).map(|_| { let d = (i % 3) as u8; i /= 3; d }).collect()
                })
            }).collect();
            probes.push(vec![0xff]);
            // The snapshot before block `from`, with blocks from..: and with every block
            // laid over it (those it holds already laid again).
            for from in 0..=diffs.len() {
                for layers in [diffs[from..].to_vec(), diffs.clone()] {
                    let view = Layered::new(states[from].clone(), layers);
                    prop_assert_eq!(all(&view), all(want));
                    for p in &probes {
                        prop_assert_eq!(view.get(T, p).unwrap(), want.get(T, p).unwrap());
                        prop_assert_eq!(view.seek(T, p).unwrap(), want.seek(T, p).unwrap());
                        // Bounded seeks: inside the prefix `p`, and below an arbitrary key.
                        for end in [prefix_end(p), Some(vec![1, 1]), Some(vec![])] {
                            prop_assert_eq!(
                                view.seek_below(T, p, end.as_deref()).unwrap(),
                                want.seek_below(T, p, end.as_deref()).unwrap()
                            );
                        }
                    }
                }
            }
        }
    }

    fn trie_diff_of(ops: &[Op]) -> KvDiff {
        let mut d = KvDiff::default();
        for op in ops {
            match op {
                Op::Put(k, v) => d.put(TT, k, &[*v]),
                Op::Delete(k) => d.delete(TT, k),
                Op::Wipe(p) => d.delete_prefix(TT, p),
            }
        }
        d
    }

    const TT: Table = Table::StorageTrie;

    /// A table of the trie buffer read as the model does (the same keys under `TT`).
    struct TrieModel(Model);

    impl KvRead for TrieModel {
        fn get(&self, _: Table, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
            self.0.get(T, key)
        }
        fn seek(&self, _: Table, key: &[u8]) -> Result<Option<Entry>, Error> {
            self.0.seek(T, key)
        }
        fn scan(&self, _: Table, from: &[u8], f: Visit<'_>) -> Result<(), Error> {
            self.0.scan(T, from, f)
        }
    }

    fn head(number: u64) -> crate::Head {
        crate::Head {
            number,
            hash: Default::default(),
            state_root: Default::default(),
        }
    }

    proptest! {
        /// Blocks merged into trie buffers (the first `frozen` into one, the next `active`
        /// into another) with the rest laid over them read like the state they leave, over
        /// the snapshot before them; the buffer's byte count is what its entries hold; a
        /// reader of an earlier block than a buffer holds is refused.
        #[test]
        fn trie_buffers_read_like_the_blocks_merged_into_them(
            base in prop::collection::btree_map(key(4), any::<u8>(), 0..40),
            blocks in prop::collection::vec(prop::collection::vec(op(), 0..25), 1..6),
            split in (0usize..6, 0usize..6),
        ) {
            let base = Model(base.into_iter().map(|(k, v)| (k, vec![v])).collect());
            let mut want = base.clone();
            for ops in &blocks {
                want = replay(want, ops);
            }
            let n = blocks.len();
            let frozen_to = split.0.min(n);
            let active_to = (frozen_to + split.1).min(n);
            let (mut frozen, mut active) = (TrieBuffer::default(), TrieBuffer::default());
            for (i, ops) in blocks.iter().enumerate().take(active_to) {
                let b = if i < frozen_to { &mut frozen } else { &mut active };
                b.merge(&trie_diff_of(ops), head(i as u64 + 1));
            }
            let recount: usize = TrieBuffer::TABLES.iter().map(|t| {
                let d = &active.diff.tables[t.index()];
                d.entries.iter().map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len) + ENTRY_BYTES).sum::<usize>()
                    + d.wiped.iter().map(|p| p.len() + ENTRY_BYTES).sum::<usize>()
            }).sum();
            prop_assert_eq!(active.bytes(), recount);
            let layers: Vec<Arc<KvDiff>> = blocks[active_to..].iter().map(|ops| Arc::new(trie_diff_of(ops))).collect();
            let buffers = vec![Arc::new(SharedTrieBuffer::new(frozen)), Arc::new(SharedTrieBuffer::new(active))];
            let view = Layered::buffered(TrieModel(base.clone()), buffers.clone(), n as u64, layers);
            let mut probes: Vec<Vec<u8>> = (0..=3).flat_map(|n| {
                (0..3usize.pow(n)).map(move |mut i| {
                    (0..n).map(|_| { let d = (i % 3) as u8; i /= 3; d }).collect()
                })
            }).collect();
            probes.push(vec![0xff]);
            let mut all_view = Vec::new();
            view.scan(TT, &[], &mut |k, v| { all_view.push((k.to_vec(), v.to_vec())); Ok(true) }).unwrap();
            prop_assert_eq!(all_view, all(&want));
            for p in &probes {
                prop_assert_eq!(view.get(TT, p).unwrap(), want.get(T, p).unwrap());
                prop_assert_eq!(view.seek(TT, p).unwrap(), want.seek(T, p).unwrap());
            }
            if active_to > 0 {
                let stale = Layered::buffered(TrieModel(base), buffers, active_to as u64 - 1, Vec::new());
                prop_assert!(stale.get(TT, &[]).is_err());
            }
        }
    }

    #[test]
    fn a_wipe_takes_the_diffs_own_writes_and_inner_wipes() {
        let mut d = KvDiff::default();
        d.put(T, b"ab1", b"x");
        d.delete_prefix(T, b"abc");
        d.delete_prefix(T, b"ab");
        d.put(T, b"ab2", b"y");
        let t = &d.tables[T.index()];
        assert_eq!(t.wiped.iter().collect::<Vec<_>>(), vec![&b"ab".to_vec()]);
        assert_eq!(t.entries.len(), 1);
        // A longer prefix under a wiped one adds nothing.
        d.delete_prefix(T, b"abd");
        assert_eq!(d.tables[T.index()].wiped.len(), 1);
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
    }

    proptest! {
        /// A sorted batch (`record_updates`' way) leaves a table as the same entries set one
        /// by one: into an empty table (the bulk build) and into one with entries and wipes.
        #[test]
        fn a_sorted_batch_equals_setting_each(
            before in prop::collection::vec((key(4), prop::option::of(any::<u8>())), 0..12),
            wipes in prop::collection::vec(key(2), 0..3),
            batch in prop::collection::btree_map(key(5), prop::option::of(any::<u8>()), 0..40),
        ) {
            let batch: Vec<(Vec<u8>, Option<Vec<u8>>)> =
                batch.into_iter().map(|(k, v)| (k, v.map(|b| vec![b; 1 + b as usize % 3]))).collect();
            let mut start = TableDiff::default();
            for (k, v) in before {
                start.set(k, v.map(|b| vec![b]));
            }
            for w in &wipes {
                start.wipe(w);
            }
            for from in [TableDiff::default(), start] {
                let mut one_by_one = from.clone();
                for (k, v) in batch.clone() {
                    one_by_one.set(k, v);
                }
                let mut sorted = from;
                sorted.set_sorted(batch.clone());
                prop_assert_eq!(sorted, one_by_one);
            }
        }
    }
}
