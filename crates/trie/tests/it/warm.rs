//! `warm_paths` reads ahead what an update will need: every branch node on the changed keys'
//! paths that the update's walk reads is among the nodes `warm_paths` read, each node is read
//! once, and nothing off the keys' paths is read — over random tries and random change sets
//! (inserts, updates, deletions; a hot storage trie and the account trie).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{keccak256, B256, U256};
use alloy_trie::{Nibbles, TrieAccount};
use gigagas_trie::{
    compute_updates, from_scratch, warm_paths, AccountChange, AccountInfo, BranchNode, ChangeSet,
    MemoryStore, NodeStore, Owner, Parallelism, StoreError,
};
use proptest::prelude::*;
use std::{collections::BTreeMap, sync::Mutex};

/// A store that records every branch-node read (by `node` or `seek_node`, the path returned).
struct Recording<'a> {
    inner: &'a MemoryStore,
    reads: Mutex<Vec<(Owner, Nibbles)>>,
}

impl Recording<'_> {
    fn take(&self) -> Vec<(Owner, Nibbles)> {
        std::mem::take(&mut *self.reads.lock().unwrap())
    }
}

fn read_only() -> StoreError {
    StoreError::Backend("read-only".into())
}

impl NodeStore for Recording<'_> {
    fn node(&self, owner: Owner, path: &Nibbles) -> Result<Option<BranchNode>, StoreError> {
        let node = self.inner.node(owner, path)?;
        if node.is_some() {
            self.reads.lock().unwrap().push((owner, *path));
        }
        Ok(node)
    }
    fn seek_node(
        &self,
        owner: Owner,
        prefix: &Nibbles,
    ) -> Result<Option<(Nibbles, BranchNode)>, StoreError> {
        let found = self.inner.seek_node(owner, prefix)?;
        if let Some((path, _)) = &found {
            self.reads.lock().unwrap().push((owner, *path));
        }
        Ok(found)
    }
    fn put_node(&mut self, _: Owner, _: Nibbles, _: BranchNode) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn delete_node(&mut self, _: Owner, _: &Nibbles) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn wipe_storage_nodes(&mut self, _: B256) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn account(&self, hashed: &B256) -> Result<Option<TrieAccount>, StoreError> {
        self.inner.account(hashed)
    }
    fn seek_account(&self, prefix: &Nibbles) -> Result<Option<(B256, TrieAccount)>, StoreError> {
        self.inner.seek_account(prefix)
    }
    fn put_account(&mut self, _: B256, _: TrieAccount) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn delete_account(&mut self, _: &B256) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn seek_slot(&self, owner: B256, prefix: &Nibbles) -> Result<Option<(B256, U256)>, StoreError> {
        self.inner.seek_slot(owner, prefix)
    }
    fn put_slot(&mut self, _: B256, _: B256, _: U256) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn delete_slot(&mut self, _: B256, _: &B256) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn wipe_slots(&mut self, _: B256) -> Result<(), StoreError> {
        Err(read_only())
    }
}

fn key(i: u64) -> B256 {
    keccak256(i.to_be_bytes())
}

fn info(n: u64) -> AccountInfo {
    AccountInfo {
        nonce: n,
        balance: U256::from(n),
        code_hash: alloy_trie::KECCAK_EMPTY,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn warming_covers_every_node_the_update_reads(
        accounts in 1u64..300,
        slots in 0u64..3000,
        changed_accounts in proptest::collection::btree_set(0u64..400, 1..40),
        changed_slots in proptest::collection::btree_map(0u64..4000, 0u64..3, 0..300),
    ) {
        let hot = key(1_000_000);
        let (_, memory) = from_scratch(
            (0..accounts).map(|i| (key(i), info(i + 1))).chain([(hot, info(7))]),
            [(hot, (0..slots).map(|i| (key(i), U256::from(i + 1))).collect())],
            Parallelism::Serial,
        );
        let store = Recording { inner: &memory, reads: Mutex::new(Vec::new()) };
        // Changes: accounts updated, created or deleted (odd numbers above the existing ones
        // are deleted when they exist); the hot account's slots set or cleared (value 0).
        let mut changes = ChangeSet::default();
        for &a in &changed_accounts {
            let change = AccountChange {
                info: (a % 7 != 3).then(|| info(a + 100)),
                storage_wiped: false,
                storage: BTreeMap::new(),
            };
            changes.accounts.insert(key(a), change);
        }
        let storage: BTreeMap<B256, U256> =
            changed_slots.iter().map(|(&s, &v)| (key(s), U256::from(v))).collect();
        changes.accounts.insert(hot, AccountChange {
            info: Some(info(8)),
            storage_wiped: false,
            storage: storage.clone(),
        });

        let account_keys: Vec<B256> = changes.accounts.keys().copied().collect();
        let slot_keys: Vec<B256> = storage.keys().copied().collect();
        warm_paths(&store, None, &account_keys).unwrap();
        warm_paths(&store, Some(hot), &slot_keys).unwrap();
        let warmed = store.take();
        // Each node once, and only nodes on the keys' paths.
        let mut distinct = warmed.clone();
        distinct.sort();
        distinct.dedup();
        prop_assert_eq!(distinct.len(), warmed.len(), "a node was read twice");
        let top = |owner: Owner| memory.seek_node(owner, &Nibbles::new()).unwrap().map(|(p, _)| p);
        let on_paths = |owner: &Owner, path: &Nibbles| {
            let keys = if owner.is_some() { &slot_keys } else { &account_keys };
            keys.iter().any(|k| Nibbles::unpack(k).starts_with(path))
        };
        for (owner, path) in &warmed {
            // The topmost branch is read whatever the keys (they may all leave its extension).
            prop_assert!(
                on_paths(owner, path) || top(*owner).as_ref() == Some(path),
                "{owner:?} {path:?} is on no key's path"
            );
        }

        compute_updates(&store, &changes, Parallelism::Serial).unwrap();
        let walked = store.take();
        // Every node on the keys' paths the update read was warmed (a deletion that collapses
        // a branch also reads the remaining sibling, which is off those paths).
        for (owner, path) in &walked {
            if on_paths(owner, path) || top(*owner).as_ref() == Some(path) {
                prop_assert!(
                    distinct.binary_search(&(*owner, *path)).is_ok(),
                    "the update read {owner:?} {path:?}, which was not warmed"
                );
            }
        }
    }
}
