//! The MDBX store against the in-memory store and from-scratch builds: random pre-states and
//! random blocks of changes (inserts, updates, deletions, wiped storage, deleted accounts, a
//! hot account) applied through `Store::apply_block` give the same root and the same stored
//! branch nodes and leaves as `MemoryStore` and as a from-scratch build; a generated chain's
//! genesis round-trips through `load` → `verify`, and the store answers execution's reads as
//! the pre-state does; corrupt records are errors naming table and key.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing
#![allow(clippy::manual_is_multiple_of)] // MSRV 1.85

use alloy_primitives::{keccak256, B256, U256};
use alloy_trie::KECCAK_EMPTY;
use gigagas_store::{
    first_difference,
    kv::{Backend, KvWrite, Table},
    mdbx::Mdbx,
    BlockRef, Error, Head, Store,
};
use gigagas_trie::{
    apply, from_scratch, AccountChange, AccountInfo, ChangeSet, MemoryStore, Parallelism,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The state as plain maps (hashed keys).
#[derive(Debug, Clone, Default)]
struct Model {
    accounts: BTreeMap<B256, AccountInfo>,
    storage: BTreeMap<B256, BTreeMap<B256, U256>>,
}

impl Model {
    fn apply(&mut self, changes: &ChangeSet) {
        for (hashed, change) in &changes.accounts {
            match change.info {
                None => {
                    self.accounts.remove(hashed);
                    self.storage.remove(hashed);
                }
                Some(info) => {
                    self.accounts.insert(*hashed, info);
                    let slots = self.storage.entry(*hashed).or_default();
                    if change.storage_wiped {
                        slots.clear();
                    }
                    for (k, v) in &change.storage {
                        if v.is_zero() {
                            slots.remove(k);
                        } else {
                            slots.insert(*k, *v);
                        }
                    }
                    if slots.is_empty() {
                        self.storage.remove(hashed);
                    }
                }
            }
        }
    }

    fn build(&self, parallelism: Parallelism) -> (B256, MemoryStore) {
        from_scratch(
            self.accounts.iter().map(|(k, a)| (*k, *a)),
            self.storage
                .iter()
                .map(|(k, s)| (*k, s.iter().map(|(k, v)| (*k, *v)).collect())),
            parallelism,
        )
    }
}

/// Keys from a small universe with shared prefixes, so that extension nodes, deep branches and
/// collapses onto extensions all occur.
fn key(space: u8, i: u8) -> B256 {
    let mut b = keccak256([space, i]).0;
    b[0] = [0x00, 0x01, 0x10, 0xab, 0x00][usize::from(i % 5)];
    if i % 3 == 0 {
        b[1] = 0;
        b[2] = 0;
    }
    if i % 7 == 0 {
        b[3] = 0x55;
    }
    B256::from(b)
}

fn info(nonce: u64) -> AccountInfo {
    AccountInfo {
        nonce,
        balance: U256::from(nonce * 1000),
        code_hash: if nonce % 2 == 0 {
            KECCAK_EMPTY
        } else {
            keccak256([nonce as u8])
        },
    }
}

type PreSpec = Vec<(u8, u64, Vec<(u8, u16)>)>;
type BlockSpec = Vec<(u8, u8, bool, Vec<(u8, u8)>)>;

fn pre_strategy() -> impl Strategy<Value = PreSpec> {
    prop::collection::vec(
        (
            0u8..24,
            0u64..4,
            prop::collection::vec((0u8..40, 1u16..1000), 0..30),
        ),
        0..16,
    )
}

fn block_strategy() -> impl Strategy<Value = BlockSpec> {
    // (account, kind: 0 delete / else set, wiped (rare), slots (value 0 = delete))
    prop::collection::vec(
        (
            0u8..24,
            0u8..6,
            prop::bool::weighted(0.12),
            prop::collection::vec((0u8..40, 0u8..4), 0..14),
        ),
        0..12,
    )
}

fn model_of(pre: &PreSpec) -> Model {
    let mut model = Model::default();
    for (a, nonce, slots) in pre {
        let hashed = key(1, *a);
        model.accounts.insert(hashed, info(*nonce));
        let s = model.storage.entry(hashed).or_default();
        for (k, v) in slots {
            s.insert(key(2, *k), U256::from(*v));
        }
        if s.is_empty() {
            model.storage.remove(&hashed);
        }
    }
    model
}

fn changes_of(block: &BlockSpec, salt: u64) -> ChangeSet {
    let mut cs = ChangeSet::default();
    for (a, kind, wiped, slots) in block {
        let change = AccountChange {
            info: (*kind != 0).then(|| info(salt + u64::from(*kind))),
            storage_wiped: *wiped,
            storage: slots
                .iter()
                .map(|(k, v)| (key(2, *k), U256::from(*v)))
                .collect(),
        };
        cs.accounts.insert(key(1, *a), change);
    }
    cs
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
}

/// Block `number` of the log tests: account `a` takes info `number` and one slot of its own.
fn account_a_block(number: u64) -> (ChangeSet, BlockRef) {
    let mut changes = ChangeSet::default();
    changes.accounts.insert(
        keccak256(b"a"),
        AccountChange {
            info: Some(info(number)),
            storage_wiped: false,
            storage: [(B256::with_last_byte(number as u8), U256::from(number))]
                .into_iter()
                .collect(),
        },
    );
    let block = BlockRef {
        number,
        hash: block_hash(number),
        parent_hash: block_hash(number - 1),
        expected_root: None,
    };
    (changes, block)
}

fn block_hash(n: u64) -> B256 {
    keccak256(n.to_be_bytes())
}

/// A store holding `model` at block 0, and the in-memory store built the same way.
fn stores(model: &Model, dir: &std::path::Path) -> (Store, MemoryStore) {
    let (root, memory) = model.build(Parallelism::Serial);
    let store: Store = Store::create(dir).unwrap();
    store
        .load_memory(
            &memory,
            &BTreeMap::new(),
            &BTreeMap::new(),
            Head {
                number: 0,
                hash: block_hash(0),
                state_root: root,
            },
        )
        .unwrap();
    (store, memory)
}

/// Applies `changes` as block `number` to the disk store, the memory store and the model;
/// all three must agree, node for node.
fn check_block(
    store: &Store,
    memory: &mut MemoryStore,
    model: &mut Model,
    changes: &ChangeSet,
    number: u64,
    parallelism: Parallelism,
) {
    let pool = pool(2);
    let block = BlockRef {
        number,
        hash: block_hash(number),
        parent_hash: block_hash(number - 1),
        expected_root: None,
    };
    let head = pool
        .install(|| store.apply_block(block, changes, &[], parallelism))
        .unwrap();
    let memory_root = apply(memory, changes, Parallelism::Serial).unwrap();
    model.apply(changes);
    let (scratch_root, scratch) = model.build(Parallelism::Serial);
    assert_eq!(memory_root, scratch_root, "memory store vs from scratch");
    assert_eq!(head.state_root, scratch_root, "disk store vs from scratch");
    assert_eq!(store.head().unwrap(), Some(head));
    let (disk, _) = store.to_memory().unwrap();
    assert_eq!(
        first_difference(&disk, &scratch),
        None,
        "disk store vs from scratch"
    );
    assert!(disk == *memory, "disk store differs from the memory store");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn disk_equals_memory_and_from_scratch(
        pre in pre_strategy(),
        blocks in prop::collection::vec(block_strategy(), 1..5),
        split in 2usize..6,
        parallel in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut model = model_of(&pre);
        let (store, mut memory) = stores(&model, &dir.path().join("db"));
        let parallelism = if parallel { Parallelism::Parallel { split_min_changes: split } } else { Parallelism::Serial };
        for (i, block) in blocks.iter().enumerate() {
            check_block(&store, &mut memory, &mut model, &changes_of(block, i as u64 * 10), i as u64 + 1, parallelism);
        }
        let verified = store.verify().unwrap();
        prop_assert!(verified.ok(), "{:?}", verified);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The overlay: blocks each computed over the ones before it still held in memory (none
    /// committed yet, or the first `committed_early` committed while later ones were
    /// computed over their layers) give the same roots and, once committed in order, the
    /// same store node for node as blocks applied one at a time; wiped storage and deleted
    /// accounts included.
    #[test]
    fn blocks_computed_over_uncommitted_ones_equal_blocks_applied_one_by_one(
        pre in pre_strategy(),
        blocks in prop::collection::vec(block_strategy(), 1..5),
        committed_early in 0usize..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let model = model_of(&pre);
        let (one_by_one, _) = stores(&model, &dir.path().join("a"));
        let (layered, _) = stores(&model, &dir.path().join("b"));
        let mut pending = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            let number = i as u64 + 1;
            let changes = changes_of(block, i as u64 * 10);
            let block = BlockRef {
                number,
                hash: block_hash(number),
                parent_hash: block_hash(number - 1),
                expected_root: None,
            };
            let code = alloy_primitives::Bytes::from(vec![0x60, i as u8]);
            let head = one_by_one.apply_block(block, &changes, std::slice::from_ref(&code), Parallelism::Serial).unwrap();
            let layers: Vec<_> = pending.iter().map(gigagas_store::PendingBlock::diff).collect();
            let computed = layered
                .compute_block_over(&layers, block, &changes, std::slice::from_ref(&code), Parallelism::Serial)
                .unwrap();
            prop_assert_eq!(computed.head(), head);
            // The layered snapshot reads the block's code and hash before any commit.
            let view = layered.snapshot_over(1, layers.into_iter().chain([computed.diff()]).collect()).unwrap();
            prop_assert_eq!(view.code(&keccak256(&code)).unwrap(), Some(code.to_vec()));
            prop_assert_eq!(view.block_hash(number).unwrap(), Some(block_hash(number)));
            pending.push(computed);
            if i < committed_early {
                // Committed while its diff is still laid under the next block's compute.
                layered.commit_block(&pending[i]).unwrap();
            }
        }
        // Blocks commit in order only: a later one first is refused.
        if pending.len() > committed_early.min(pending.len()) + 1 {
            let skip = committed_early.min(pending.len()) + 1;
            prop_assert!(layered.commit_block(&pending[skip]).is_err());
        }
        for p in pending.iter().skip(committed_early.min(blocks.len())) {
            layered.commit_block(p).unwrap();
        }
        prop_assert_eq!(layered.head().unwrap(), one_by_one.head().unwrap());
        let (a, codes_a) = one_by_one.to_memory().unwrap();
        let (b, codes_b) = layered.to_memory().unwrap();
        prop_assert_eq!(first_difference(&a, &b), None);
        prop_assert_eq!(codes_a, codes_b);
        let verified = layered.verify().unwrap();
        prop_assert!(verified.ok(), "{:?}", verified);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Blocks whose trie nodes go to a trie buffer (flat state committed per block; the
    /// buffer flushed at random blocks, or lost with the process at random blocks: the store
    /// reopened, its tries rebuilt from the flat state) leave the store node for node as
    /// blocks applied one by one; every block's root is computed through the buffer (and,
    /// during a flush, the frozen buffer under the next one), over uncommitted blocks.
    #[test]
    fn blocks_through_a_trie_buffer_equal_blocks_applied_one_by_one(
        pre in pre_strategy(),
        blocks in prop::collection::vec(block_strategy(), 1..7),
        flush_at in prop::collection::vec(any::<bool>(), 7),
        crash_at in prop::collection::vec(prop::bool::weighted(0.2), 7),
        journal_at in prop::collection::vec(prop::bool::weighted(0.25), 7),
        take_journal in prop::collection::vec(any::<bool>(), 7),
    ) {
        use gigagas_store::{Overlay, SharedTrieBuffer, TrieBuffer};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let model = model_of(&pre);
        let (one_by_one, _) = stores(&model, &dir.path().join("a"));
        let path = dir.path().join("b");
        let (store, _) = stores(&model, &path);
        let mut store = Some(store);
        let mut active: Arc<SharedTrieBuffer> = Arc::default();
        let mut frozen: Option<Arc<SharedTrieBuffer>> = None;
        for (i, block) in blocks.iter().enumerate() {
            let number = i as u64 + 1;
            let changes = changes_of(block, i as u64 * 10);
            let block = BlockRef {
                number,
                hash: block_hash(number),
                parent_hash: block_hash(number - 1),
                expected_root: None,
            };
            let head = one_by_one.apply_block(block, &changes, &[], Parallelism::Serial).unwrap();
            let s = store.as_ref().unwrap();
            let overlay = Overlay {
                buffers: frozen.iter().cloned().chain([active.clone()]).collect(),
                block: number - 1,
                layers: Vec::new(),
                flat: false,
            };
            let computed = s
                .compute_block_overlay(&overlay, block, &changes, &[], Parallelism::Serial)
                .unwrap();
            prop_assert_eq!(computed.head(), head);
            if let Some(f) = frozen.take() {
                // The flush of the frozen buffer, while the next block was computed over it.
                s.flush_trie(&f.read().unwrap()).unwrap();
            }
            s.commit_block_flat(&computed).unwrap();
            active.write().unwrap().merge(&computed.diff(), computed.head());
            if crash_at[i] {
                // The process dies: the buffer is lost, the store reopened and recovered.
                drop(store.take());
                let s: Store = Store::open(&path).unwrap();
                prop_assert_eq!(s.trie_lag().unwrap(), None);
                let verified = s.verify().unwrap();
                prop_assert!(verified.ok(), "after recovery at block {}: {:?}", number, verified);
                store = Some(s);
                active = Arc::default();
            } else if journal_at[i] {
                // The run ends here: a flush in flight first, then the buffer journaled; the
                // next open takes it back as a buffer, or writes it into the tries.
                if let Some(f) = frozen.take() {
                    s.flush_trie(&f.read().unwrap()).unwrap();
                }
                let stats = s.journal_trie(&active.read().unwrap()).unwrap();
                prop_assert_eq!(stats.through, number);
                drop(store.take());
                let keep = if take_journal[i] { u64::MAX } else { 0 };
                let (s, taken) = Store::open_resuming(&path, true, keep).unwrap();
                match taken {
                    Some((buffer, read)) => {
                        prop_assert!(take_journal[i]);
                        prop_assert_eq!(read.entries, stats.entries);
                        let was = active.read().unwrap();
                        prop_assert_eq!(buffer.diff(), was.diff());
                        drop(was);
                        prop_assert_eq!(buffer.through(), Some(head));
                        active = Arc::new(std::sync::RwLock::new(buffer));
                    }
                    None => {
                        prop_assert!(!take_journal[i]);
                        prop_assert_eq!(s.trie_lag().unwrap(), None);
                        let verified = s.verify().unwrap();
                        prop_assert!(verified.ok(), "journal written at block {}: {:?}", number, verified);
                        active = Arc::default();
                    }
                }
                store = Some(s);
            } else if flush_at[i] {
                frozen = Some(std::mem::take(&mut active));
            }
        }
        let s = store.as_ref().unwrap();
        for b in frozen.iter().chain([&active]) {
            let stats = s.flush_trie(&b.read().unwrap()).unwrap();
            prop_assert!(stats.blocks == 0 || stats.through <= blocks.len() as u64);
        }
        prop_assert_eq!(s.trie_lag().unwrap(), None);
        prop_assert_eq!(s.head().unwrap(), one_by_one.head().unwrap());
        let (a, _) = one_by_one.to_memory().unwrap();
        let (b, _) = s.to_memory().unwrap();
        prop_assert_eq!(first_difference(&a, &b), None);
        let verified = s.verify().unwrap();
        prop_assert!(verified.ok(), "{:?}", verified);
        let _ = TrieBuffer::TABLES;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Blocks through the write-ahead log (each block's flat writes appended to the log and
    /// held with its trie nodes in the buffer; the store's B-tree written only at a flush:
    /// at random blocks, or never) — the process killed at random blocks (the store reopened:
    /// the log replayed, the tries rebuilt), or ended with the buffer journaled (reopened
    /// taking the journal or writing it) — leave the store node for node as blocks applied
    /// one by one; every block's root and pre-state read through the buffer, flat tables
    /// included.
    #[test]
    fn blocks_through_the_write_ahead_log_equal_blocks_applied_one_by_one(
        pre in pre_strategy(),
        blocks in prop::collection::vec(block_strategy(), 1..7),
        flush_at in prop::collection::vec(any::<bool>(), 7),
        crash_at in prop::collection::vec(prop::bool::weighted(0.2), 7),
        journal_at in prop::collection::vec(prop::bool::weighted(0.25), 7),
        take_journal in prop::collection::vec(any::<bool>(), 7),
        late in prop::collection::vec(any::<bool>(), 7),
    ) {
        use gigagas_store::{Overlay, SharedTrieBuffer, WAL_FILE};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let model = model_of(&pre);
        let (one_by_one, _) = stores(&model, &dir.path().join("a"));
        let path = dir.path().join("b");
        let (store, _) = stores(&model, &path);
        let mut wal = Some(store.create_wal().unwrap());
        let mut store = Some(store);
        let mut active: Arc<SharedTrieBuffer> = Arc::default();
        let mut frozen: Option<Arc<SharedTrieBuffer>> = None;
        // A flush (the log's segment was rotated when the buffer froze): the buffer's blocks
        // written into the store, synced, the older segment retired.
        let flush = |s: &Store, b: &SharedTrieBuffer| {
            s.flush_trie(&b.read().unwrap()).unwrap();
            s.sync().unwrap();
            s.retire_wal_segment().unwrap();
        };
        for (i, block) in blocks.iter().enumerate() {
            let number = i as u64 + 1;
            let changes = changes_of(block, i as u64 * 10);
            let block = BlockRef {
                number,
                hash: block_hash(number),
                parent_hash: block_hash(number - 1),
                expected_root: None,
            };
            let head = one_by_one.apply_block(block, &changes, &[], Parallelism::Serial).unwrap();
            let s = store.as_ref().unwrap();
            let overlay = Overlay {
                buffers: frozen.iter().cloned().chain([active.clone()]).collect(),
                block: number - 1,
                layers: Vec::new(),
                flat: true,
            };
            let computed = s
                .compute_block_overlay(&overlay, block, &changes, &[], Parallelism::Serial)
                .unwrap();
            prop_assert_eq!(computed.head(), head);
            // A frozen buffer's flush: now, or (late) still running while this block is
            // appended to the new segment.
            if let Some(f) = frozen.take() {
                if late[i] {
                    frozen = Some(f);
                } else {
                    flush(s, &f);
                }
            }
            let log = wal.as_mut().unwrap();
            log.append(&computed).unwrap();
            prop_assert_eq!(log.last(), head);
            active.write().unwrap().merge_all(&computed.diff(), computed.parent(), computed.head());
            // The store itself is still at the last flush.
            prop_assert!(s.head().unwrap().unwrap().number < number);
            if flush_at[i] && !journal_at[i] {
                // The buffer frozen for a flush (one at a time: a late one ends first) and
                // the log's segment rotated: the next blocks go to a new one.
                if let Some(f) = frozen.take() {
                    flush(s, &f);
                }
                frozen = Some(std::mem::take(&mut active));
                wal.as_mut().unwrap().rotate().unwrap();
            }
            if crash_at[i] {
                // The process dies (the page cache keeps what it appended; a flush frozen and
                // not yet written leaves the older segment too): the buffers are lost, the
                // store reopened, both segments replayed in order and the tries rebuilt.
                frozen = None;
                drop(wal.take());
                drop(store.take());
                let s: Store = Store::open(&path).unwrap();
                prop_assert!(!path.join(WAL_FILE).exists());
                prop_assert!(!path.join(gigagas_store::WAL_OLD).exists());
                prop_assert_eq!(s.head().unwrap(), Some(head));
                prop_assert_eq!(s.trie_lag().unwrap(), None);
                let verified = s.verify().unwrap();
                prop_assert!(verified.ok(), "after replay at block {}: {:?}", number, verified);
                wal = Some(s.create_wal().unwrap());
                store = Some(s);
                active = Arc::default();
            } else if journal_at[i] {
                // The run ends: a flush in flight first, then the buffer's trie nodes
                // journaled (its flat writes are in the log); the next open replays the log,
                // then takes the journal as a buffer or writes it into the tries.
                if let Some(f) = frozen.take() {
                    flush(s, &f);
                }
                let stats = s.journal_trie(&active.read().unwrap()).unwrap();
                prop_assert_eq!(stats.through, number);
                drop(wal.take());
                drop(store.take());
                let keep = if take_journal[i] { u64::MAX } else { 0 };
                let (s, taken) = Store::open_resuming(&path, true, keep).unwrap();
                prop_assert_eq!(s.head().unwrap(), Some(head));
                match taken {
                    Some((buffer, read)) => {
                        prop_assert!(take_journal[i]);
                        prop_assert_eq!(read.entries, stats.entries);
                        prop_assert_eq!(buffer.through(), Some(head));
                        prop_assert_eq!(buffer.flat_base(), None);
                        active = Arc::new(std::sync::RwLock::new(buffer));
                    }
                    None => {
                        prop_assert!(!take_journal[i]);
                        prop_assert_eq!(s.trie_lag().unwrap(), None);
                        let verified = s.verify().unwrap();
                        prop_assert!(verified.ok(), "journal written at block {}: {:?}", number, verified);
                        active = Arc::default();
                    }
                }
                wal = Some(s.create_wal().unwrap());
                store = Some(s);
            }
        }
        let s = store.as_ref().unwrap();
        for b in frozen.iter().chain([&active]) {
            let stats = s.flush_trie(&b.read().unwrap()).unwrap();
            prop_assert!(stats.blocks == 0 || stats.through <= blocks.len() as u64);
        }
        prop_assert_eq!(s.trie_lag().unwrap(), None);
        prop_assert_eq!(s.head().unwrap(), one_by_one.head().unwrap());
        let (a, _) = one_by_one.to_memory().unwrap();
        let (b, _) = s.to_memory().unwrap();
        prop_assert_eq!(first_difference(&a, &b), None);
        let verified = s.verify().unwrap();
        prop_assert!(verified.ok(), "{:?}", verified);
    }
}

/// A log whose last record was cut short (a crash while it was appended): replay drops that
/// block, says so, and leaves a whole store at the block before; a garbled record drops the
/// rest; a damaged header is refused by name, the log kept; a log replayed over a store that
/// holds its blocks skips them.
#[test]
fn a_torn_log_loses_its_last_block_and_a_damaged_header_is_refused() {
    use gigagas_store::WAL_FILE;
    let dir = tempfile::tempdir().unwrap();
    let mut model = Model::default();
    model.accounts.insert(keccak256(b"a"), info(1));
    let path = dir.path().join("db");
    let (store, _) = stores(&model, &path);
    let mut wal = store.create_wal().unwrap();
    let mut heads: Vec<(Head, std::sync::Arc<gigagas_store::KvDiff>)> = Vec::new();
    for number in 1..=3u64 {
        let (changes, block) = account_a_block(number);
        let overlay = gigagas_store::Overlay {
            buffers: Vec::new(),
            block: number - 1,
            layers: Vec::new(),
            flat: true,
        };
        // Each block over the store with the earlier blocks' whole diffs laid over it.
        let layered = gigagas_store::Overlay {
            layers: heads.iter().map(|(_, d)| d.clone()).collect(),
            ..overlay
        };
        let computed = store
            .compute_block_overlay(&layered, block, &changes, &[], Parallelism::Serial)
            .unwrap();
        wal.append(&computed).unwrap();
        heads.push((computed.head(), computed.diff()));
    }
    drop(wal);
    drop(store);
    // Before the copies below: a tail of zeros (what a file system may leave after a power
    // loss: the size extended, the data not written) is a torn record, dropped; every
    // block before it is replayed.
    let zeros = dir.path().join("zeros");
    assert!(std::process::Command::new("cp")
        .args(["-a", path.to_str().unwrap(), zeros.to_str().unwrap()])
        .status()
        .unwrap()
        .success());
    let mut bytes = std::fs::read(zeros.join(WAL_FILE)).unwrap();
    bytes.extend([0u8; 4096]);
    std::fs::write(zeros.join(WAL_FILE), &bytes).unwrap();
    let s: Store = Store::open(&zeros).unwrap();
    assert_eq!(s.head().unwrap(), Some(heads[2].0));
    drop(s);
    let log = path.join(WAL_FILE);
    let whole = std::fs::read(&log).unwrap();
    let copy = |name: &str, bytes: &[u8]| {
        let to = dir.path().join(name);
        let status = std::process::Command::new("cp")
            .args(["-a", path.to_str().unwrap(), to.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::write(to.join(WAL_FILE), bytes).unwrap();
        to
    };
    // Cut short by 5 bytes: block 3 is lost, blocks 1 and 2 replayed.
    let torn = copy("torn", &whole[..whole.len() - 5]);
    let s: Store = Store::open(&torn).unwrap();
    assert_eq!(s.head().unwrap(), Some(heads[1].0));
    assert!(s.verify().unwrap().ok());
    assert!(!torn.join(WAL_FILE).exists());
    // A damaged header: refused, the log kept.
    let mut bad = whole.clone();
    bad[10] ^= 1;
    let damaged = copy("damaged", &bad);
    let err = Store::<Mdbx>::open(&damaged).unwrap_err().to_string();
    assert!(
        err.contains("blocks.wal") && err.contains("header"),
        "{err}"
    );
    assert!(damaged.join(WAL_FILE).exists());
    // A record garbled before the end (its checksum fails): replay stops there, as
    // RocksDB's point-in-time recovery does (after a system crash the unsynced tail may
    // hold a garbled record before a whole one); the store whole at the block before.
    let mut garbled = whole.clone();
    garbled[84 + 12 + 72 + 8 + 1] ^= 0xff; // inside block 1's record
    let cut = copy("garbled", &garbled);
    let s: Store = Store::open(&cut).unwrap();
    assert_eq!(s.head().unwrap().unwrap().number, 0);
    drop(s);
    // The whole log: all three blocks.
    let s: Store = Store::open(&path).unwrap();
    assert_eq!(s.head().unwrap(), Some(heads[2].0));
    assert!(s.verify().unwrap().ok());
    drop(s);
    // Replayed again over a store that holds its blocks: skipped (a crash after a flush,
    // before the log restarted), the same head.
    let again = copy("again", &whole);
    let s: Store = Store::open(&again).unwrap();
    assert_eq!(s.head().unwrap(), Some(heads[2].0));
    drop(s);
}

/// A flush's older segment (`blocks.wal.1`) is replayed before the newer one; one cut short
/// with blocks after it in the newer segment is refused naming both, and both are kept.
#[test]
fn the_log_s_segments_replay_in_order_and_a_gap_between_them_is_refused() {
    use gigagas_store::{WAL_FILE, WAL_OLD};
    let dir = tempfile::tempdir().unwrap();
    let mut model = Model::default();
    model.accounts.insert(keccak256(b"a"), info(1));
    let path = dir.path().join("db");
    let (store, _) = stores(&model, &path);
    let mut wal = store.create_wal().unwrap();
    let mut layers: Vec<std::sync::Arc<gigagas_store::KvDiff>> = Vec::new();
    let mut last = None;
    for number in 1..=3u64 {
        let (changes, block) = account_a_block(number);
        let overlay = gigagas_store::Overlay {
            layers: layers.clone(),
            ..gigagas_store::Overlay::default()
        };
        let computed = store
            .compute_block_overlay(&overlay, block, &changes, &[], Parallelism::Serial)
            .unwrap();
        wal.append(&computed).unwrap();
        layers.push(computed.diff());
        last = Some(computed.head());
        if number == 2 {
            // A flush starts: blocks 1-2 stay in the older segment, block 3 goes to the new.
            wal.rotate().unwrap();
        }
    }
    drop(wal);
    drop(store);
    assert!(path.join(WAL_OLD).is_file() && path.join(WAL_FILE).is_file());
    let gap = dir.path().join("gap");
    assert!(std::process::Command::new("cp")
        .args(["-a", path.to_str().unwrap(), gap.to_str().unwrap()])
        .status()
        .unwrap()
        .success());
    let old = std::fs::read(gap.join(WAL_OLD)).unwrap();
    std::fs::write(gap.join(WAL_OLD), &old[..old.len() - 5]).unwrap();
    let err = Store::<Mdbx>::open(&gap).unwrap_err().to_string();
    assert!(err.contains(WAL_OLD) && err.contains("cut short"), "{err}");
    assert!(gap.join(WAL_OLD).is_file() && gap.join(WAL_FILE).is_file());
    // Whole: both replayed, in order, and both removed.
    let s: Store = Store::open(&path).unwrap();
    assert_eq!(s.head().unwrap(), last);
    assert!(s.verify().unwrap().ok());
    assert!(!path.join(WAL_OLD).exists() && !path.join(WAL_FILE).exists());
}

/// One hot account with thousands of slots and blocks of thousands of changes (the parallel
/// walk forks inside its storage trie, each fork reading its own MDBX read transaction).
#[test]
fn hot_account() {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(7);
    let hot = keccak256(b"hot");
    let mut model = Model::default();
    model.accounts.insert(hot, info(1));
    model.storage.insert(
        hot,
        (0..4000)
            .map(|_| {
                (
                    B256::from(rng.random::<[u8; 32]>()),
                    U256::from(rng.random_range(1u64..1 << 40)),
                )
            })
            .collect(),
    );
    for i in 0..20u8 {
        model.accounts.insert(key(1, i), info(u64::from(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let (store, mut memory) = stores(&model, &dir.path().join("db"));
    for b in 1..4u64 {
        let existing: Vec<B256> = model.storage[&hot].keys().copied().collect();
        let storage = (0..1500)
            .map(|_| {
                let k = if rng.random_bool(0.6) {
                    existing[rng.random_range(0..existing.len())]
                } else {
                    B256::from(rng.random::<[u8; 32]>())
                };
                let v = if rng.random_bool(0.3) {
                    U256::ZERO
                } else {
                    U256::from(rng.random::<u64>())
                };
                (k, v)
            })
            .collect();
        let mut cs = ChangeSet::default();
        cs.accounts.insert(
            hot,
            AccountChange {
                info: Some(info(b + 2)),
                storage_wiped: false,
                storage,
            },
        );
        cs.accounts.insert(
            key(1, b as u8),
            AccountChange {
                info: None,
                ..Default::default()
            },
        );
        check_block(
            &store,
            &mut memory,
            &mut model,
            &cs,
            b,
            Parallelism::Parallel {
                split_min_changes: 16,
            },
        );
    }
}

/// A block that does not follow the head, or whose root is not the expected one, writes
/// nothing.
#[test]
fn refuses_wrong_blocks() {
    let mut model = Model::default();
    model.accounts.insert(key(1, 1), info(1));
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = stores(&model, &dir.path().join("db"));
    let before = store.head().unwrap().unwrap();
    let mut cs = ChangeSet::default();
    cs.accounts.insert(
        key(1, 2),
        AccountChange {
            info: Some(info(3)),
            ..Default::default()
        },
    );
    let wrong_parent = BlockRef {
        number: 1,
        hash: block_hash(1),
        parent_hash: block_hash(7),
        expected_root: None,
    };
    let e = store
        .apply_block(wrong_parent, &cs, &[], Parallelism::Serial)
        .unwrap_err();
    assert!(matches!(e, Error::NotNext { block: 1, .. }), "{e}");
    let wrong_root = BlockRef {
        number: 1,
        hash: block_hash(1),
        parent_hash: block_hash(0),
        expected_root: Some(B256::repeat_byte(1)),
    };
    let e = store
        .apply_block(wrong_root, &cs, &[], Parallelism::Serial)
        .unwrap_err();
    assert!(e.to_string().contains("differs from the header"), "{e}");
    assert_eq!(store.head().unwrap(), Some(before));
    assert!(store.verify().unwrap().ok());
}

/// A generated chain's genesis: `load` → `verify`, and every account, slot and code read
/// through `DatabaseRef` equals the pre-state's.
/// A chain `generate`d with `options`, written and loaded back as a user's would be.
fn generated(options: &gigagas_gen::GenOptions) -> gigagas_data::Dataset {
    let gen_dir = tempfile::tempdir().unwrap();
    gigagas_gen::generate(options, &|_| {})
        .unwrap()
        .write(gen_dir.path())
        .unwrap();
    gigagas_data::load(&gigagas_data::DataSource::open(gen_dir.path()).unwrap()).unwrap()
}

#[test]
fn generated_genesis_round_trip() {
    use revm::DatabaseRef;
    let options = gigagas_gen::GenOptions {
        workload: gigagas_gen::Workload::MainnetMix,
        blocks: 1,
        block_gas: 1_000_000,
        seed: 3,
        spec: revm::primitives::hardfork::SpecId::AMSTERDAM,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 8,
        verify_threads: 2,
        precompiles: Vec::new(),
        slots: None,
        spread: false,
        existing_slots: false,
    };
    let data = generated(&options);
    let first = &data.blocks[0];
    assert!(first.complete_state);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let head = {
        let store: Store = Store::create(&path).unwrap();
        store
            .load(
                &first.pre_state,
                first.number() - 1,
                first.header.parent_hash,
            )
            .unwrap()
    };
    assert_eq!(head.state_root, gigagas_state::state_root(&first.pre_state));
    let store: Store = Store::open(&path).unwrap();
    assert_eq!(store.head().unwrap(), Some(head));
    let verified = store.verify().unwrap();
    assert!(verified.ok(), "{verified:?}");
    assert_eq!(verified.counts.accounts, first.pre_state.len());
    let view = store.read().unwrap();
    for (address, account) in first.pre_state.accounts() {
        let got = view.basic_ref(*address).unwrap().expect("account");
        assert_eq!(
            (got.balance, got.nonce, got.code_hash),
            (
                account.info.balance,
                account.info.nonce,
                account.info.code_hash
            )
        );
        if account.info.code_hash != KECCAK_EMPTY {
            assert_eq!(
                view.code_by_hash_ref(got.code_hash)
                    .unwrap()
                    .original_bytes(),
                first
                    .pre_state
                    .code_by_hash_ref(got.code_hash)
                    .unwrap()
                    .original_bytes()
            );
        }
        for (slot, value) in &account.storage {
            assert_eq!(view.storage_ref(*address, *slot).unwrap(), *value);
        }
    }
    // Workers that miss the same code at once read it from the store once: the demand
    // count is the number of distinct codes, whatever the timing.
    let codes: std::collections::BTreeSet<B256> = first
        .pre_state
        .accounts()
        .map(|(_, a)| a.info.code_hash)
        .filter(|h| *h != KECCAK_EMPTY)
        .collect();
    assert!(!codes.is_empty());
    for _ in 0..20 {
        let state = gigagas_store::DiskState::new(
            store.snapshot(8).unwrap(),
            std::sync::Arc::new(gigagas_store::CodeCache::default()),
        );
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    start.wait();
                    for h in &codes {
                        assert!(!state.code_by_hash_ref(*h).unwrap().is_empty());
                    }
                });
            }
        });
        assert_eq!(state.demand_reads(), codes.len() as u64);
    }
    // Loading twice is refused.
    assert!(matches!(
        store.load(&first.pre_state, 0, B256::ZERO),
        Err(Error::NotEmpty { .. })
    ));
}

/// A pre-state whose storage follows a rule (an `sstore-bloated` chain's block 2: the rule
/// plus block 1's writes, a zero included) loads streamed into the same store as its
/// expansion listed slot by slot: same root, same slots, every node verified.
#[test]
fn a_rule_filled_state_loads_streamed_like_its_expansion() {
    use revm::DatabaseRef;
    let options = gigagas_gen::GenOptions {
        workload: gigagas_gen::Workload::SstoreBloated,
        blocks: 2,
        block_gas: 2_000_000,
        seed: 5,
        spec: revm::primitives::hardfork::SpecId::AMSTERDAM,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 8,
        verify_threads: 2,
        precompiles: Vec::new(),
        slots: Some(3_000),
        spread: false,
        existing_slots: false,
    };
    let data = generated(&options);
    let second = &data.blocks[1];
    let lazy = &second.pre_state;
    assert!(lazy.has_fills());
    // The same state listed slot by slot.
    let expanded = gigagas_data::PreState::new(
        lazy.accounts()
            .map(|(a, acc)| {
                let mut listed = acc.clone();
                if let Some(fill) = listed.fill.take() {
                    for i in 0..fill.slots {
                        let slot = U256::from(i);
                        listed.storage.entry(slot).or_insert(fill.value(&slot));
                    }
                    listed.storage.retain(|_, v| !v.is_zero());
                }
                (*a, listed)
            })
            .collect(),
        lazy.block_hashes().clone(),
    );
    assert!(!expanded.has_fills());
    let dir = tempfile::tempdir().unwrap();
    let load = |name: &str, state: &gigagas_data::PreState| {
        let store: Store = Store::create(&dir.path().join(name)).unwrap();
        let head = store.load(state, 1, second.header.parent_hash).unwrap();
        let verified = store.verify_streaming(&|_| {}).unwrap();
        assert!(verified.ok(), "{name}: {verified:?}");
        (store, head, verified.counts)
    };
    let (streamed, head, counts) = load("streamed", lazy);
    let (listed, listed_head, listed_counts) = load("listed", &expanded);
    assert_eq!(head, listed_head);
    assert_eq!(head.state_root, data.blocks[0].header.state_root);
    assert_eq!(counts, listed_counts);
    let (a, b) = (streamed.read().unwrap(), listed.read().unwrap());
    for (address, account) in expanded.accounts() {
        for (slot, value) in &account.storage {
            assert_eq!(a.storage_ref(*address, *slot).unwrap(), *value);
            assert_eq!(b.storage_ref(*address, *slot).unwrap(), *value);
        }
    }
}

/// Corrupt records and foreign directories are errors naming what is wrong.
#[test]
fn corruption_is_named() {
    let mut model = Model::default();
    for i in 0..30 {
        model.accounts.insert(key(1, i), info(u64::from(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(stores(&model, &path));
    {
        let raw = Mdbx::open(&path, false, true).unwrap();
        let txn = raw.write().unwrap();
        txn.put(Table::AccountTrie, &[], &[0xff, 0xff, 9]).unwrap();
        txn.commit().unwrap();
    }
    let store: Store = Store::open(&path).unwrap();
    let e = store.verify().unwrap_err().to_string();
    assert!(e.contains("account_trie") && e.contains("corrupt"), "{e}");
    // MDBX allows one open environment per database file in a process.
    let e = Mdbx::open(&path, false, true).unwrap_err().to_string();
    assert!(e.contains("already open"), "{e}");
    drop(store);
    {
        let raw = Mdbx::open(&path, false, true).unwrap();
        let txn = raw.write().unwrap();
        txn.put(Table::Meta, b"head", b"short").unwrap();
        txn.commit().unwrap();
    }
    let store: Store = Store::open(&path).unwrap();
    let e = store.head().unwrap_err().to_string();
    assert!(e.contains("head record"), "{e}");
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("x"), b"x").unwrap();
    let e = Store::<Mdbx>::open(&foreign).unwrap_err().to_string();
    assert!(e.contains("not a gigagas store"), "{e}");
    let e = Store::<Mdbx>::create(&foreign).unwrap_err().to_string();
    assert!(e.contains("non-empty"), "{e}");
}

/// A stored code that does not hash to its key (a flipped byte) is a corrupt store naming the
/// hash when execution reads it, never a program handed to the EVM.
#[test]
fn a_flipped_byte_in_stored_code_is_named_on_read() {
    let mut model = Model::default();
    model.accounts.insert(key(1, 1), info(1));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(stores(&model, &path));
    let code = vec![0x60, 0x01, 0x60, 0x02, 0x01, 0x00];
    let hash = keccak256(&code);
    let mut flipped = code.clone();
    flipped[1] ^= 0x40;
    {
        let raw = Mdbx::open(&path, false, true).unwrap();
        let txn = raw.write().unwrap();
        txn.put(Table::Code, hash.as_slice(), &code).unwrap();
        txn.put(Table::Code, keccak256(b"other").as_slice(), &flipped)
            .unwrap();
        txn.commit().unwrap();
    }
    let store: Store = Store::open(&path).unwrap();
    let view = store.snapshot(1).unwrap();
    assert_eq!(view.code(&hash).unwrap(), Some(code));
    let e = view.code(&keccak256(b"other")).unwrap_err().to_string();
    assert!(
        e.contains("corrupt store") && e.contains("table code") && e.contains("not to its key"),
        "{e}"
    );
}

/// A store records the chain it belongs to and refuses another: by the recorded identity,
/// or (a store without the record) by its block 0 and by every block hash both name.
#[test]
fn a_store_of_another_chain_is_refused_naming_both() {
    use gigagas_store::ChainIdentity;
    let mut model = Model::default();
    model.accounts.insert(key(1, 1), info(1));
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = stores(&model, &dir.path().join("db"));
    let ours = ChainIdentity {
        chain_id: 7,
        genesis_hash: block_hash(0),
    };
    let theirs = ChainIdentity {
        chain_id: 7,
        genesis_hash: block_hash(99),
    };
    // Without a record: nothing to compare yet (its table is empty), so accepted.
    store.check_chain(Some(theirs), &[]).unwrap();
    store.record_chain(ours).unwrap();
    assert_eq!(store.chain().unwrap(), Some(ours));
    store.check_chain(Some(ours), &[]).unwrap();
    let e = store
        .check_chain(Some(theirs), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("another chain")
            && e.contains(&ours.to_string())
            && e.contains(&theirs.to_string()),
        "{e}"
    );
    let other_id = ChainIdentity {
        chain_id: 8,
        ..ours
    };
    assert!(store.check_chain(Some(other_id), &[]).is_err());
    let e = store.record_chain(theirs).unwrap_err().to_string();
    assert!(e.contains("another chain"), "{e}");

    // The block-hash table against the data set's blocks.
    let head = store.head().unwrap().unwrap();
    let next = BlockRef {
        number: 1,
        hash: block_hash(1),
        parent_hash: head.hash,
        expected_root: None,
    };
    store
        .apply_block(next, &ChangeSet::default(), &[], Parallelism::Serial)
        .unwrap();
    store.check_chain(None, &[(1, block_hash(1))]).unwrap();
    let e = store
        .check_chain(None, &[(1, block_hash(5))])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("block 1") && e.contains(&block_hash(5).to_string()),
        "{e}"
    );
    assert!(store.verify().unwrap().ok());
}

/// `verify` covers the block-hash table: a changed, added or malformed entry is named.
#[test]
fn a_corrupted_block_hash_table_fails_verify() {
    use gigagas_store::ChainIdentity;
    let mut model = Model::default();
    for i in 0..10 {
        model.accounts.insert(key(1, i), info(u64::from(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let put = |table: Table, k: &[u8], v: &[u8]| {
        let raw = Mdbx::open(&path, false, true).unwrap();
        let txn = raw.write().unwrap();
        txn.put(table, k, v).unwrap();
        txn.commit().unwrap();
    };
    {
        let (store, _) = stores(&model, &path);
        store
            .record_chain(ChainIdentity {
                chain_id: 1,
                genesis_hash: block_hash(0),
            })
            .unwrap();
        let head = store.head().unwrap().unwrap();
        for n in 1..=3 {
            let parent_hash = if n == 1 { head.hash } else { block_hash(n - 1) };
            let block = BlockRef {
                number: n,
                hash: block_hash(n),
                parent_hash,
                expected_root: None,
            };
            store
                .apply_block(block, &ChangeSet::default(), &[], Parallelism::Serial)
                .unwrap();
        }
        let v = store.verify().unwrap();
        assert!(v.ok() && v.counts.block_hashes == 3, "{v:?}");
    }
    // An earlier block's hash changed.
    put(
        Table::BlockHashes,
        &2u64.to_be_bytes(),
        block_hash(77).as_slice(),
    );
    let e = Store::<Mdbx>::open(&path)
        .unwrap()
        .verify()
        .unwrap_err()
        .to_string();
    assert!(e.contains("block_hashes") && e.contains("changed"), "{e}");
    // The head's entry changed: named with both hashes.
    put(
        Table::BlockHashes,
        &2u64.to_be_bytes(),
        block_hash(2).as_slice(),
    );
    put(
        Table::BlockHashes,
        &3u64.to_be_bytes(),
        block_hash(78).as_slice(),
    );
    let e = Store::<Mdbx>::open(&path)
        .unwrap()
        .verify()
        .unwrap_err()
        .to_string();
    assert!(e.contains("block_hashes") && e.contains("block 3"), "{e}");
    // A malformed entry.
    put(
        Table::BlockHashes,
        &3u64.to_be_bytes(),
        block_hash(3).as_slice(),
    );
    put(Table::BlockHashes, &[1, 2, 3], block_hash(3).as_slice());
    let e = Store::<Mdbx>::open(&path)
        .unwrap()
        .verify()
        .unwrap_err()
        .to_string();
    assert!(e.contains("block_hashes") && e.contains("8-byte"), "{e}");
}

/// `open` says what is wrong with `mdbx.dat` instead of "no mdbx.dat" when it exists.
#[test]
fn open_names_what_is_wrong_with_the_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::create_dir_all(db.join("mdbx.dat")).unwrap();
    let e = Store::<Mdbx>::open(&db).unwrap_err().to_string();
    assert!(e.contains("mdbx.dat is not a regular file"), "{e}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = Store::<Mdbx>::open(&empty).unwrap_err().to_string();
    assert!(e.contains("has no mdbx.dat"), "{e}");
    let junk = dir.path().join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(junk.join("mdbx.dat"), vec![7u8; 64 << 10]).unwrap();
    let e = Store::<Mdbx>::open(&junk).unwrap_err().to_string();
    assert!(!e.contains("unknown error code"), "{e}");
}

/// A store never follows a symbolic link it did not create: a symlinked data or lock file (or
/// store directory) is refused by name before MDBX opens anything, and the file it points to
/// is left byte for byte as it was, for the read-only open of `db verify` as for a writer.
#[test]
#[cfg(unix)]
fn a_symlinked_store_file_is_refused_and_its_target_untouched() {
    let mut model = Model::default();
    for i in 0..10 {
        model.accounts.insert(key(1, i), info(u64::from(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(stores(&model, &path));
    let victim = dir.path().join("victim.txt");
    let content = b"the user's own file\n".repeat(100);
    for name in [
        "mdbx.dat",
        "mdbx.lck",
        "trie.lock",
        gigagas_store::WRITER_LOCK,
    ] {
        let copy = dir.path().join(format!("db-{name}"));
        copy_dir(&path, &copy);
        std::fs::write(&victim, &content).unwrap();
        let file = copy.join(name);
        let _ = std::fs::remove_file(&file);
        if name == "mdbx.dat" {
            // The real data file moved beside it, as a user's "clever" relocation would.
            std::fs::copy(path.join("mdbx.dat"), &victim).unwrap();
        }
        let before = std::fs::read(&victim).unwrap();
        std::os::unix::fs::symlink(&victim, &file).unwrap();
        for e in [
            Store::<Mdbx>::open(&copy).unwrap_err().to_string(),
            Store::<Mdbx>::open_unrecovered(&copy, true)
                .unwrap_err()
                .to_string(),
        ] {
            assert!(
                e.contains(&format!("{name} is a symbolic link")) && e.contains("victim.txt"),
                "{name}: {e}"
            );
        }
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            before,
            "{name}: the target changed"
        );
    }
    let link = dir.path().join("db-link");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let e = Store::<Mdbx>::open(&link).unwrap_err().to_string();
    assert!(e.contains("directory is a symbolic link"), "{e}");
    // Also written with a trailing slash (a shell's completion adds one).
    let slashed = std::path::PathBuf::from(format!("{}/", link.display()));
    let e = Store::<Mdbx>::open(&slashed).unwrap_err().to_string();
    assert!(e.contains("directory is a symbolic link"), "{e}");
    let e = Store::<Mdbx>::create(&link).unwrap_err().to_string();
    assert!(e.contains("directory is a symbolic link"), "{e}");
}

/// A copy of a store directory's regular files.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// One writer at a time: a second open to write (in another process, or here on another
/// descriptor) is refused naming the process that holds the store, while a reader beside it
/// opens; once the writer is gone the store opens again.
#[test]
#[cfg(unix)]
fn a_second_writer_is_refused_naming_the_holder() {
    let mut model = Model::default();
    model.accounts.insert(key(1, 1), info(1));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(stores(&model, &path));
    let writer: Store = Store::open(&path).unwrap();
    assert!(writer.is_writer());
    // A second open in this process is named as such (another process is named by its id:
    // crates/cli/tests/it/hostile.rs), before MDBX is asked.
    for e in [
        Store::<Mdbx>::open(&path).unwrap_err().to_string(),
        Store::<Mdbx>::open_with(&path, false)
            .unwrap_err()
            .to_string(),
    ] {
        assert!(e.contains("this process already has the store open"), "{e}");
    }
    drop(writer);
    let reader: Store = Store::open_unrecovered(&path, true).unwrap();
    assert!(!reader.is_writer());
    drop(reader);
    let again: Store = Store::open(&path).unwrap();
    assert!(again.is_writer());
}

/// A truncated or foreign data file is refused before anything writes it: the read-only
/// check of MDBX's meta pages comes first, so the file keeps its bytes and its length (a
/// writable open used to re-initialise a short file as a new, empty database, then call it
/// "not a gigagas store").
#[test]
fn a_truncated_store_is_refused_unchanged() {
    let mut model = Model::default();
    for i in 0..50 {
        model.accounts.insert(key(1, i), info(u64::from(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(stores(&model, &path));
    let whole = std::fs::read(path.join("mdbx.dat")).unwrap();
    for len in [0usize, 100, 4096, 8192, 12288, 16384] {
        let copy = dir.path().join(format!("db-{len}"));
        copy_dir(&path, &copy);
        let dat = copy.join("mdbx.dat");
        std::fs::write(&dat, &whole[..len.min(whole.len())]).unwrap();
        let before = std::fs::read(&dat).unwrap();
        let e = Store::<Mdbx>::open(&copy).unwrap_err().to_string();
        assert!(
            e.contains("not a gigagas store") || e.contains("corrupt"),
            "{len}: {e}"
        );
        let after = std::fs::read(&dat).unwrap();
        assert!(
            after == before,
            "{len} bytes: the file was changed (now {} bytes)",
            after.len()
        );
    }
}

/// The environment variable that makes the full-disk test's child process fill the store
/// at the directory it names (the tmpfs its parent mounted).
const FULL_DISK_CHILD: &str = "GIGAGAS_STORE_FULL_DISK_CHILD";

/// A full disk during a write is a named error, never a panic inside the MDBX binding, and
/// the store stays at its last whole block. Needs a small tmpfs, so root (`CAP_SYS_ADMIN`,
/// probed by `build.rs`: without it the test is reported as ignored with this reason).
///
/// The machine is left as it was found: the store is filled by a child process (this test
/// binary again, with `FULL_DISK_CHILD` set), because after the failed commit the store
/// keeps the environment's handle on purpose (`mdbx::commit`), which keeps the tmpfs busy
/// until the process ends. The parent only mounts, waits and unmounts; its guard unmounts
/// also when an assertion fails, retries, falls back to a lazy unmount, and panics (or, if
/// already unwinding, aborts) when the tmpfs stays mounted.
#[test]
#[cfg_attr(
    not(gigagas_can_mount),
    ignore = "needs root (CAP_SYS_ADMIN) to mount a 4 MiB tmpfs"
)]
fn a_full_disk_is_a_named_error_and_the_store_stays_whole() {
    if let Some(mnt) = std::env::var_os(FULL_DISK_CHILD) {
        fill_the_disk(std::path::Path::new(&mnt));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let status = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "mount -t tmpfs failed ({status}) although build.rs found CAP_SYS_ADMIN"
    );
    // Declared after `dir`, so it drops (unmounts) before the directory is removed.
    let _unmount = Unmount(mnt.clone());
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_full_disk_is_a_named_error_and_the_store_stays_whole",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FULL_DISK_CHILD, &mnt)
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    assert!(child.status.success(), "the child failed:\n{out}");
    assert!(out.contains("1 passed"), "the child ran no test:\n{out}");
}

/// Unmounts a tmpfs when dropped: `umount`, retried for up to 5 s while busy, then
/// `umount -l`; a mount that cannot be removed is a loud failure.
struct Unmount(std::path::PathBuf);

impl Unmount {
    fn mounted(&self) -> bool {
        let Ok(mounts) = std::fs::read_to_string("/proc/mounts") else {
            return true;
        };
        let target = self.0.to_string_lossy().replace(' ', "\\040");
        mounts
            .lines()
            .any(|line| line.split(' ').nth(1) == Some(target.as_str()))
    }
}

impl Drop for Unmount {
    fn drop(&mut self) {
        for attempt in 0..50 {
            let ok = std::process::Command::new("umount")
                .arg(&self.0)
                .status()
                .is_ok_and(|s| s.success());
            if ok || !self.mounted() {
                return;
            }
            if attempt == 0 {
                eprintln!("umount {} failed, retrying", self.0.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
        if self.mounted() {
            let msg = format!(
                "the tmpfs at {} is still mounted: unmount it by hand",
                self.0.display()
            );
            if std::thread::panicking() {
                eprintln!("{msg}");
                std::process::abort();
            }
            panic!("{msg}");
        }
        eprintln!(
            "the tmpfs at {} needed a lazy unmount (a handle was still open)",
            self.0.display()
        );
    }
}

/// The child's part of the full-disk test: fills a store under `mnt` until a write fails.
fn fill_the_disk(mnt: &std::path::Path) {
    let path = mnt.join("db");
    let mut model = Model::default();
    model.accounts.insert(key(1, 1), info(1));
    let (store, _) = stores(&model, &path);
    let head = store.head().unwrap().unwrap();
    // Blocks that each write many slots, until the 4 MiB file system is full.
    let mut parent = head;
    let mut failed = None;
    for n in 1..=64u64 {
        let mut changes = ChangeSet::default();
        let account = changes.accounts.entry(key(2, n as u8)).or_default();
        account.info = Some(info(n));
        for i in 0..2000u64 {
            account.storage.insert(
                keccak256((n * 100_000 + i).to_be_bytes()),
                U256::from(i + 1),
            );
        }
        let block = BlockRef {
            number: n,
            hash: block_hash(n),
            parent_hash: parent.hash,
            expected_root: None,
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store.apply_block(block, &changes, &[], Parallelism::Serial)
        }));
        match result {
            Err(_) => panic!("block {n}: the store panicked on a full disk"),
            Ok(Ok(h)) => parent = h,
            Ok(Err(e)) => {
                failed = Some(e.to_string());
                break;
            }
        }
    }
    let e = failed.expect("4 MiB filled up");
    assert!(
        e.contains("disk full") || e.contains("store is full"),
        "{e}"
    );
    assert!(!e.contains("unknown error code"), "{e}");
    // Nothing of the failed block was written: the head is the last whole block, and the
    // store still verifies. (The failed transaction's handle is kept, so this process cannot
    // reopen the store, nor can the tmpfs be unmounted before it ends; a new process can.)
    assert_eq!(store.head().unwrap(), Some(parent));
    assert!(store.verify().unwrap().ok());
}

/// Commits made without a sync (the `every-N` policies) can be started on the device early
/// (`Store::writeback_in_background`) any number of times, beside the policy's sync, and
/// what the sync makes durable is unchanged: the store reopens at the last block, verified
/// from scratch.
#[test]
fn early_writeback_beside_batched_syncs_leaves_the_store_whole() {
    let mut model = Model::default();
    for i in 0..40 {
        model.accounts.insert(key(1, i), info(u64::from(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(stores(&model, &path));
    let store: Store = Store::open_with(&path, false).unwrap();
    let mut writeback: Option<gigagas_store::PendingSync> = None;
    for number in 1..=6u64 {
        let block: BlockSpec = vec![(number as u8, 1, false, vec![(number as u8, 7)])];
        let changes = changes_of(&block, number);
        let b = BlockRef {
            number,
            hash: block_hash(number),
            parent_hash: block_hash(number - 1),
            expected_root: None,
        };
        store
            .apply_block(b, &changes, &[], Parallelism::Serial)
            .unwrap();
        if number % 3 == 0 {
            store.sync().unwrap();
        } else {
            if let Some(w) = writeback.take() {
                w.wait().unwrap();
            }
            writeback = store.writeback_in_background();
            // MDBX on Linux has the call; elsewhere it is a no-op and none is started.
            assert_eq!(writeback.is_some(), cfg!(target_os = "linux"));
        }
    }
    if let Some(w) = writeback {
        w.wait().unwrap();
    }
    drop(store);
    let reopened: Store = Store::open(&path).unwrap();
    let verified = reopened.verify().unwrap();
    assert!(verified.ok(), "{verified:?}");
    assert_eq!(verified.head.number, 6);
}
