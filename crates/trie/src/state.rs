//! The state trie: storage tries first (heaviest first, each forked further by key prefix when
//! hot), then the account trie with the new storage roots; then the writes.

use crate::{
    store::{MemoryStore, NodeStore, StoreError},
    update::{into_updates, Change, Leaf, Sub, TrieUpdates, TrieWalk},
};
use alloy_primitives::{keccak256, B256, U256};
use alloy_trie::{Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Account fields other than the storage root (which the update computes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccountInfo {
    /// Nonce.
    pub nonce: u64,
    /// Balance.
    pub balance: U256,
    /// Code hash (`KECCAK_EMPTY` for no code).
    pub code_hash: B256,
}

/// What one block did to one account (keyed by keccak(address) in [`ChangeSet`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountChange {
    /// The account's new fields; `None`: the account is deleted (its storage with it, and
    /// `storage` is ignored).
    pub info: Option<AccountInfo>,
    /// The storage was cleared before `storage` applies (self-destruct, re-creation).
    pub storage_wiped: bool,
    /// Changed slots by keccak(slot): new value, zero = deleted.
    pub storage: BTreeMap<B256, U256>,
}

/// A block's state changes, by keccak(address).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// Changed accounts.
    pub accounts: BTreeMap<B256, AccountChange>,
}

impl ChangeSet {
    /// Total changed slots.
    pub fn slot_changes(&self) -> usize {
        self.accounts.values().map(|a| a.storage.len()).sum()
    }
}

/// How to run an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallelism {
    /// One thread, no rayon.
    Serial,
    /// On the current rayon pool: storage tries in parallel (heaviest first), and any walk
    /// forks into its children's key prefixes at a node with at least `split_min_changes`
    /// changes below it (a hot storage trie splits 16 ways at its root, 256 at depth 1, ...).
    Parallel {
        /// Fork threshold (changed keys below a node).
        split_min_changes: usize,
    },
}

impl Parallelism {
    /// The threshold measured in `docs/results/incremental-root.md`.
    pub const DEFAULT: Parallelism = Parallelism::Parallel {
        split_min_changes: 64,
    };

    fn split(self) -> Option<usize> {
        match self {
            Parallelism::Serial => None,
            Parallelism::Parallel { split_min_changes } => Some(split_min_changes.max(2)),
        }
    }
}

/// Everything an update writes, computed from the pre-state without writing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateUpdates {
    /// The new state root.
    pub root: B256,
    /// Account-trie nodes.
    pub account_nodes: TrieUpdates,
    /// Storage-trie nodes per changed (or deleted) account.
    pub storage_nodes: BTreeMap<B256, TrieUpdates>,
    /// Account leaves: new value, or `None` deleted.
    pub accounts: BTreeMap<B256, Option<TrieAccount>>,
    /// Slot leaves per account: (wipe first, slot → value, zero deleted).
    pub storage: BTreeMap<B256, (bool, BTreeMap<B256, U256>)>,
}

/// Root of the state held in `store`.
pub fn stored_root<S: NodeStore + ?Sized>(store: &S) -> Result<B256, StoreError> {
    Ok(TrieWalk {
        store,
        owner: None,
        split: None,
    }
    .root_sub()?
    .root_hash())
}

/// Computes the new root and every write for `changes` against the pre-state in `store`
/// (read-only; see [`write_updates`]).
pub fn compute_updates<S: NodeStore + ?Sized>(
    store: &S,
    changes: &ChangeSet,
    parallelism: Parallelism,
) -> Result<StateUpdates, StoreError> {
    let split = parallelism.split();
    // Storage work units: accounts that stay and touch storage, heaviest first.
    let mut units: Vec<(&B256, &AccountChange)> = changes
        .accounts
        .iter()
        .filter(|(_, c)| c.info.is_some() && (c.storage_wiped || !c.storage.is_empty()))
        .collect();
    units.sort_by_key(|(_, c)| std::cmp::Reverse(c.storage.len()));
    let storage_unit = |(owner, change): &(&B256, &AccountChange)| {
        let walk = TrieWalk {
            store,
            owner: Some(**owner),
            split,
        };
        let slot_changes: Vec<Change> = change
            .storage
            .iter()
            .map(|(k, v)| {
                (
                    Nibbles::unpack(k),
                    (!v.is_zero()).then(|| alloy_rlp::encode(v)),
                )
            })
            .collect();
        let root = if change.storage_wiped {
            Sub::Empty
        } else {
            walk.root_sub()?
        };
        let (sub, writes) = walk.run(root, &slot_changes)?;
        Ok::<_, StoreError>((
            **owner,
            sub.root_hash(),
            into_updates(change.storage_wiped, writes, split.is_some()),
        ))
    };
    let storage_results: Vec<(B256, B256, TrieUpdates)> = match split {
        None => units.iter().map(storage_unit).collect::<Result<_, _>>()?,
        Some(_) => units
            .par_iter()
            .with_max_len(1)
            .map(storage_unit)
            .collect::<Result<_, _>>()?,
    };
    let mut storage_roots: BTreeMap<B256, B256> = BTreeMap::new();
    let mut storage_nodes = BTreeMap::new();
    for (owner, root, updates) in storage_results {
        storage_roots.insert(owner, root);
        storage_nodes.insert(owner, updates);
    }

    // Account leaves.
    let mut accounts = BTreeMap::new();
    let mut storage = BTreeMap::new();
    let mut account_changes: Vec<Change> = Vec::with_capacity(changes.accounts.len());
    for (hashed, change) in &changes.accounts {
        let leaf = match change.info {
            None => {
                storage_nodes.insert(
                    *hashed,
                    TrieUpdates {
                        wiped: true,
                        ..Default::default()
                    },
                );
                storage.insert(*hashed, (true, BTreeMap::new()));
                None
            }
            Some(info) => {
                let storage_root = match storage_roots.get(hashed) {
                    Some(root) => *root,
                    None => store
                        .account(hashed)?
                        .map_or(EMPTY_ROOT_HASH, |a| a.storage_root),
                };
                if change.storage_wiped || !change.storage.is_empty() {
                    storage.insert(*hashed, (change.storage_wiped, change.storage.clone()));
                }
                Some(TrieAccount {
                    nonce: info.nonce,
                    balance: info.balance,
                    storage_root,
                    code_hash: info.code_hash,
                })
            }
        };
        account_changes.push((Nibbles::unpack(hashed), leaf.map(alloy_rlp::encode)));
        accounts.insert(*hashed, leaf);
    }
    let walk = TrieWalk {
        store,
        owner: None,
        split,
    };
    let (sub, writes) = walk.run(walk.root_sub()?, &account_changes)?;
    Ok(StateUpdates {
        root: sub.root_hash(),
        account_nodes: into_updates(false, writes, split.is_some()),
        storage_nodes,
        accounts,
        storage,
    })
}

/// Writes what [`compute_updates`] computed.
pub fn write_updates<S: NodeStore + ?Sized>(
    store: &mut S,
    updates: StateUpdates,
) -> Result<(), StoreError> {
    for (owner, trie) in updates.storage_nodes {
        if trie.wiped {
            store.wipe_storage_nodes(owner)?;
        }
        write_nodes(store, Some(owner), trie)?;
    }
    write_nodes(store, None, updates.account_nodes)?;
    for (owner, (wiped, slots)) in updates.storage {
        if wiped {
            store.wipe_slots(owner)?;
        }
        for (slot, value) in slots {
            if value.is_zero() {
                store.delete_slot(owner, &slot)?;
            } else {
                store.put_slot(owner, slot, value)?;
            }
        }
    }
    for (hashed, account) in updates.accounts {
        match account {
            Some(a) => store.put_account(hashed, a)?,
            None => store.delete_account(&hashed)?,
        }
    }
    Ok(())
}

fn write_nodes<S: NodeStore + ?Sized>(
    store: &mut S,
    owner: Option<B256>,
    trie: TrieUpdates,
) -> Result<(), StoreError> {
    for (path, node) in trie.nodes {
        match node {
            Some(node) => store.put_node(owner, path, node)?,
            None => store.delete_node(owner, &path)?,
        }
    }
    Ok(())
}

/// Applies `changes` to `store` and returns the new state root.
pub fn apply<S: NodeStore + ?Sized>(
    store: &mut S,
    changes: &ChangeSet,
    parallelism: Parallelism,
) -> Result<B256, StoreError> {
    let updates = compute_updates(store, changes, parallelism)?;
    let root = updates.root;
    write_updates(store, updates)?;
    Ok(root)
}

/// Builds the whole state from scratch: `accounts` and `storages` keyed by keccak(address),
/// slots by keccak(slot) (zero values ignored). Returns the root and the filled store.
pub fn from_scratch(
    accounts: impl IntoIterator<Item = (B256, AccountInfo)>,
    storages: impl IntoIterator<Item = (B256, Vec<(B256, U256)>)>,
    parallelism: Parallelism,
) -> (B256, MemoryStore) {
    let split = parallelism.split();
    let empty = MemoryStore::default();
    let mut store = MemoryStore::default();
    let mut storages: Vec<(B256, Vec<(B256, U256)>)> = storages
        .into_iter()
        .map(|(o, mut slots)| {
            slots.retain(|(_, v)| !v.is_zero());
            slots.sort_unstable_by_key(|(k, _)| *k);
            slots.dedup_by_key(|(k, _)| *k);
            (o, slots)
        })
        .filter(|(_, s)| !s.is_empty())
        .collect();
    storages.sort_unstable_by_key(|(_, s)| std::cmp::Reverse(s.len()));
    let build_storage = |(owner, slots): &(B256, Vec<(B256, U256)>)| {
        let leaves: Vec<Leaf> = slots
            .iter()
            .map(|(k, v)| (Nibbles::unpack(k), alloy_rlp::encode(v)))
            .collect();
        let (sub, writes) = TrieWalk {
            store: &empty,
            owner: Some(*owner),
            split,
        }
        .build_root(&leaves);
        (*owner, sub.root_hash(), writes)
    };
    let built: Vec<_> = match split {
        None => storages.iter().map(build_storage).collect(),
        Some(_) => storages
            .par_iter()
            .with_max_len(1)
            .map(build_storage)
            .collect(),
    };
    let mut roots = BTreeMap::new();
    for (owner, root, writes) in built {
        roots.insert(owner, root);
        // A build from scratch only puts nodes; a delete (`None`) has nothing to remove.
        for (path, node) in writes {
            let nodes = store.storage_nodes.entry(owner).or_default();
            match node {
                Some(node) => nodes.insert(path, node),
                None => nodes.remove(&path),
            };
        }
    }
    for (owner, slots) in storages {
        store.storage.insert(owner, slots.into_iter().collect());
    }
    for (hashed, info) in accounts {
        store.accounts.insert(
            hashed,
            TrieAccount {
                nonce: info.nonce,
                balance: info.balance,
                storage_root: roots.get(&hashed).copied().unwrap_or(EMPTY_ROOT_HASH),
                code_hash: info.code_hash,
            },
        );
    }
    // Storage of accounts that do not exist is not state.
    store.storage.retain(|o, _| store.accounts.contains_key(o));
    store
        .storage_nodes
        .retain(|o, _| store.accounts.contains_key(o));
    let leaves: Vec<Leaf> = store
        .accounts
        .iter()
        .map(|(k, a)| (Nibbles::unpack(k), alloy_rlp::encode(a)))
        .collect();
    let (sub, writes) = TrieWalk {
        store: &empty,
        owner: None,
        split,
    }
    .build_root(&leaves);
    // A build from scratch only puts nodes; a delete (`None`) has nothing to remove.
    for (path, node) in writes {
        match node {
            Some(node) => store.account_nodes.insert(path, node),
            None => store.account_nodes.remove(&path),
        };
    }
    (sub.root_hash(), store)
}

/// [`from_scratch`] of a `gigagas_data::PreState` (addresses and slots hashed here).
pub fn from_prestate(
    state: &gigagas_data::PreState,
    parallelism: Parallelism,
) -> (B256, MemoryStore) {
    let mut accounts = Vec::new();
    let mut storages = Vec::new();
    for (address, account) in state.accounts() {
        let hashed = keccak256(address);
        accounts.push((
            hashed,
            AccountInfo {
                nonce: account.info.nonce,
                balance: account.info.balance,
                code_hash: account.info.code_hash,
            },
        ));
        // Every non-zero slot, a rule's (`PreAccount::fill`) listed one by one: the in-memory
        // node store holds them all.
        let mut slots = Vec::with_capacity(account.storage.len());
        let _ = account.for_each_hashed_slot::<std::convert::Infallible>(&mut |key, value| {
            slots.push((key, value));
            Ok(())
        });
        storages.push((hashed, slots));
    }
    from_scratch(accounts, storages, parallelism)
}
