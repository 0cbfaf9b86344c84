//! Incremental root (serial and parallel) == from-scratch root == an independent HashBuilder
//! root, and the stored nodes after an update == those of a from-scratch build, over random
//! pre-states and several successive random blocks of changes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing
#![allow(clippy::manual_is_multiple_of)] // MSRV 1.85

use alloy_primitives::{keccak256, map::HashMap, Address, B256, U256};
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH, KECCAK_EMPTY};
use gigagas_trie::{
    apply, compute_updates, from_prestate, from_scratch, stored_root, AccountChange, AccountInfo,
    ChangeSet, MemoryStore, Parallelism,
};
use proptest::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::{collections::BTreeMap, sync::Arc};

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

    /// Independent reference: alloy-trie's HashBuilder over the sorted leaves.
    fn reference_root(&self) -> B256 {
        let mut hb = HashBuilder::default();
        let mut any = false;
        for (hashed, info) in &self.accounts {
            let storage_root = self.storage.get(hashed).map_or(EMPTY_ROOT_HASH, |slots| {
                let mut shb = HashBuilder::default();
                for (k, v) in slots {
                    shb.add_leaf(Nibbles::unpack(k), &alloy_rlp::encode(v));
                }
                shb.root()
            });
            let account = TrieAccount {
                nonce: info.nonce,
                balance: info.balance,
                storage_root,
                code_hash: info.code_hash,
            };
            hb.add_leaf(Nibbles::unpack(hashed), &alloy_rlp::encode(account));
            any = true;
        }
        if any {
            hb.root()
        } else {
            EMPTY_ROOT_HASH
        }
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

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
}

/// One block applied three ways; everything must agree with the model rebuilt from scratch.
fn check_block(
    serial: &mut MemoryStore,
    parallel: &mut MemoryStore,
    model: &mut Model,
    changes: &ChangeSet,
    split: usize,
) {
    let p = Parallelism::Parallel {
        split_min_changes: split,
    };
    let pool = pool(2);
    let serial_updates = compute_updates(serial, changes, Parallelism::Serial).unwrap();
    let parallel_updates = pool
        .install(|| compute_updates(parallel, changes, p))
        .unwrap();
    assert_eq!(
        serial_updates, parallel_updates,
        "serial and parallel writes differ"
    );
    let serial_root = apply(serial, changes, Parallelism::Serial).unwrap();
    let parallel_root = pool.install(|| apply(parallel, changes, p)).unwrap();
    model.apply(changes);
    let (scratch_root, scratch) = model.build(Parallelism::Serial);
    let (scratch_root_par, scratch_par) = pool.install(|| model.build(p));
    let reference = model.reference_root();
    assert_eq!(scratch_root, reference, "from-scratch root vs HashBuilder");
    assert_eq!(scratch_root_par, reference);
    assert_eq!(serial_root, reference, "serial incremental root");
    assert_eq!(parallel_root, reference, "parallel incremental root");
    assert_eq!(stored_root(serial).unwrap(), reference);
    assert!(
        *serial == scratch,
        "serial store differs from a from-scratch build"
    );
    assert!(
        *parallel == scratch,
        "parallel store differs from a from-scratch build"
    );
    assert!(scratch_par == scratch);
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn incremental_equals_from_scratch(
        pre in pre_strategy(),
        blocks in prop::collection::vec(block_strategy(), 1..5),
        split in 2usize..6,
    ) {
        let mut model = model_of(&pre);
        let (root, store) = model.build(Parallelism::Serial);
        prop_assert_eq!(root, model.reference_root());
        let mut serial = store.clone();
        let mut parallel = store;
        for (i, block) in blocks.iter().enumerate() {
            check_block(&mut serial, &mut parallel, &mut model, &changes_of(block, i as u64 * 10), split);
        }
    }
}

/// A hot account: thousands of random slots, then blocks of thousands of changes
/// (updates, deletions, insertions), with a few small accounts around it.
fn hot_blocks(seed: u64, pre_slots: usize, changes: usize, blocks: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let hot = keccak256(b"hot");
    let mut model = Model::default();
    model.accounts.insert(hot, info(1));
    let mut slots = BTreeMap::new();
    for _ in 0..pre_slots {
        slots.insert(
            B256::from(rng.random::<[u8; 32]>()),
            U256::from(rng.random_range(1u64..1 << 40)),
        );
    }
    model.storage.insert(hot, slots);
    for i in 0..20u8 {
        let h = key(1, i);
        model.accounts.insert(h, info(u64::from(i)));
        model.storage.insert(
            h,
            (0..5u8)
                .map(|k| (key(2, k + i), U256::from(7u64)))
                .collect(),
        );
    }
    let (_, store) = model.build(Parallelism::Serial);
    let mut serial = store.clone();
    let mut parallel = store;
    for b in 0..blocks {
        let existing: Vec<B256> = model.storage[&hot].keys().copied().collect();
        let mut storage = BTreeMap::new();
        for _ in 0..changes {
            let k = if rng.random_bool(0.6) && !existing.is_empty() {
                existing[rng.random_range(0..existing.len())]
            } else {
                B256::from(rng.random::<[u8; 32]>())
            };
            let v = if rng.random_bool(0.3) {
                U256::ZERO
            } else {
                U256::from(rng.random::<u64>())
            };
            storage.insert(k, v);
        }
        let mut cs = ChangeSet::default();
        cs.accounts.insert(
            hot,
            AccountChange {
                info: Some(info(b as u64 + 2)),
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
        check_block(&mut serial, &mut parallel, &mut model, &cs, 16);
    }
    // Delete every slot of the hot account: its storage trie empties node by node.
    let storage = model.storage[&hot]
        .keys()
        .map(|k| (*k, U256::ZERO))
        .collect();
    let mut cs = ChangeSet::default();
    cs.accounts.insert(
        hot,
        AccountChange {
            info: Some(info(99)),
            storage_wiped: false,
            storage,
        },
    );
    check_block(&mut serial, &mut parallel, &mut model, &cs, 16);
    assert!(!serial.storage_nodes.contains_key(&hot));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn hot_account_incremental_equals_from_scratch(seed in any::<u64>()) {
        hot_blocks(seed, 5_000, 3_000, 3);
    }
}

#[test]
fn deleting_every_account_empties_the_store() {
    let model = model_of(
        &(0..24u8)
            .map(|a| (a, 1, vec![(a, 5), (a + 1, 6)]))
            .collect(),
    );
    let (_, mut store) = model.build(Parallelism::Serial);
    let mut cs = ChangeSet::default();
    for a in 0..24u8 {
        cs.accounts.insert(key(1, a), AccountChange::default());
    }
    assert_eq!(
        apply(&mut store, &cs, Parallelism::DEFAULT).unwrap(),
        EMPTY_ROOT_HASH
    );
    assert_eq!(store, MemoryStore::default());
    assert_eq!(stored_root(&store).unwrap(), EMPTY_ROOT_HASH);
}

#[test]
fn empty_change_set_keeps_the_root() {
    let model = model_of(&vec![(1, 1, vec![(1, 1), (2, 2)]), (2, 2, vec![])]);
    let (root, mut store) = model.build(Parallelism::Serial);
    let before = store.clone();
    assert_eq!(
        apply(&mut store, &ChangeSet::default(), Parallelism::Serial).unwrap(),
        root
    );
    assert_eq!(store, before);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The from-scratch build agrees with gigagas-state's reference on a `PreState`.
    #[test]
    fn from_prestate_matches_gigagas_state(
        accounts in prop::collection::vec(
            (any::<[u8; 20]>(), 0u64..5, any::<u64>(), prop::collection::vec((0u64..64, 0u64..3), 0..20)),
            0..20,
        )
    ) {
        let mut map: HashMap<Address, gigagas_data::PreAccount> = HashMap::default();
        for (address, nonce, balance, slots) in accounts {
            let mut account = gigagas_data::PreAccount::default();
            account.info.nonce = nonce;
            account.info.balance = U256::from(balance);
            account.info.code_hash = KECCAK_EMPTY;
            account.storage = slots.into_iter().map(|(k, v)| (U256::from(k), U256::from(v))).collect();
            map.insert(Address::from(address), account);
        }
        let state = gigagas_data::PreState::new(map, Arc::new(HashMap::default()));
        let expected = gigagas_state::state_root(&state);
        prop_assert_eq!(from_prestate(&state, Parallelism::Serial).0, expected);
        prop_assert_eq!(pool(2).install(|| from_prestate(&state, Parallelism::DEFAULT)).0, expected);
    }
}
