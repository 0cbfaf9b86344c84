//! The node store: branch nodes keyed by (trie owner, nibble path) and the leaf tables the
//! incremental update reads when a deletion collapses a branch onto an untouched leaf.

use crate::node::BranchNode;
use alloy_primitives::{map::HashMap, B256, U256};
use alloy_trie::{Nibbles, TrieAccount};
use std::collections::BTreeMap;

/// Which trie: `None` for the account trie, `Some(keccak(address))` for that account's
/// storage trie.
pub type Owner = Option<B256>;

/// A failed store operation (the in-memory store never fails; a disk store may).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A child recorded in a stored branch node is not in the store: the store is corrupt or
    /// does not hold the pre-state the change set was computed against.
    #[error("trie {owner:?}: {what} at path {path:?} is missing from the store")]
    Missing {
        /// The trie.
        owner: Owner,
        /// The nibble path.
        path: Nibbles,
        /// "branch node" or "leaf".
        what: &'static str,
    },
    /// The backend failed.
    #[error("store backend: {0}")]
    Backend(#[from] Box<dyn std::error::Error + Send + Sync>),
}

/// Where branch nodes and leaves live. Reads take `&self` and may run on many threads at once;
/// an update reads the pre-state only and writes afterwards (see [`crate::write_updates`]).
///
/// Leaf values are the trie's raw values: accounts as [`TrieAccount`] (with their storage
/// root), storage slots as non-zero `U256`.
pub trait NodeStore: Sync {
    /// The branch node stored at `path` of trie `owner`.
    fn node(&self, owner: Owner, path: &Nibbles) -> Result<Option<BranchNode>, StoreError>;
    /// The first stored branch node (in path order) whose path starts with `prefix`; with an
    /// empty prefix, the trie's topmost branch node.
    fn seek_node(
        &self,
        owner: Owner,
        prefix: &Nibbles,
    ) -> Result<Option<(Nibbles, BranchNode)>, StoreError>;
    /// Stores `node` at `path`, replacing what was there.
    fn put_node(&mut self, owner: Owner, path: Nibbles, node: BranchNode)
        -> Result<(), StoreError>;
    /// Removes the node at `path` (no-op when absent).
    fn delete_node(&mut self, owner: Owner, path: &Nibbles) -> Result<(), StoreError>;
    /// Removes every node of a storage trie.
    fn wipe_storage_nodes(&mut self, owner: B256) -> Result<(), StoreError>;

    /// The account leaf of `hashed_address`.
    fn account(&self, hashed_address: &B256) -> Result<Option<TrieAccount>, StoreError>;
    /// The first account (in key order) whose hashed address starts with `prefix`.
    fn seek_account(&self, prefix: &Nibbles) -> Result<Option<(B256, TrieAccount)>, StoreError>;
    /// Sets an account leaf.
    fn put_account(&mut self, hashed_address: B256, account: TrieAccount)
        -> Result<(), StoreError>;
    /// Removes an account leaf.
    fn delete_account(&mut self, hashed_address: &B256) -> Result<(), StoreError>;

    /// The first slot (in key order) of storage trie `owner` whose hashed key starts with
    /// `prefix`.
    fn seek_slot(&self, owner: B256, prefix: &Nibbles) -> Result<Option<(B256, U256)>, StoreError>;
    /// Sets a slot (`value` non-zero).
    fn put_slot(&mut self, owner: B256, hashed_slot: B256, value: U256) -> Result<(), StoreError>;
    /// Removes a slot.
    fn delete_slot(&mut self, owner: B256, hashed_slot: &B256) -> Result<(), StoreError>;
    /// Removes every slot of an account.
    fn wipe_slots(&mut self, owner: B256) -> Result<(), StoreError>;
}

/// Smallest 32-byte key starting with `prefix` (the prefix padded with zero nibbles).
pub fn lower_bound(prefix: &Nibbles) -> B256 {
    let mut out = [0u8; 32];
    if !prefix.is_empty() {
        prefix.pack_to(&mut out);
    }
    B256::from(out)
}

fn starts_with(key: &B256, prefix: &Nibbles) -> bool {
    Nibbles::unpack(key).starts_with(prefix)
}

/// An in-memory [`NodeStore`] (ordered maps), also the reference layout a disk store mirrors:
/// account-trie nodes, storage-trie nodes per owner, hashed accounts, hashed storage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryStore {
    /// Account-trie branch nodes by path.
    pub account_nodes: BTreeMap<Nibbles, BranchNode>,
    /// Storage-trie branch nodes by owner, then path (no empty inner maps).
    pub storage_nodes: HashMap<B256, BTreeMap<Nibbles, BranchNode>>,
    /// Account leaves by hashed address.
    pub accounts: BTreeMap<B256, TrieAccount>,
    /// Non-zero slots by owner, then hashed slot (no empty inner maps).
    pub storage: HashMap<B256, BTreeMap<B256, U256>>,
}

impl MemoryStore {
    /// Number of stored branch nodes, all tries.
    pub fn node_count(&self) -> usize {
        self.account_nodes.len()
            + self
                .storage_nodes
                .values()
                .map(BTreeMap::len)
                .sum::<usize>()
    }

    fn nodes(&self, owner: Owner) -> Option<&BTreeMap<Nibbles, BranchNode>> {
        match owner {
            None => Some(&self.account_nodes),
            Some(o) => self.storage_nodes.get(&o),
        }
    }
}

impl NodeStore for MemoryStore {
    fn node(&self, owner: Owner, path: &Nibbles) -> Result<Option<BranchNode>, StoreError> {
        Ok(self.nodes(owner).and_then(|m| m.get(path)).cloned())
    }

    fn seek_node(
        &self,
        owner: Owner,
        prefix: &Nibbles,
    ) -> Result<Option<(Nibbles, BranchNode)>, StoreError> {
        Ok(self.nodes(owner).and_then(|m| {
            m.range(*prefix..)
                .next()
                .filter(|(p, _)| p.starts_with(prefix))
                .map(|(p, n)| (*p, n.clone()))
        }))
    }

    fn put_node(
        &mut self,
        owner: Owner,
        path: Nibbles,
        node: BranchNode,
    ) -> Result<(), StoreError> {
        match owner {
            None => self.account_nodes.insert(path, node),
            Some(o) => self.storage_nodes.entry(o).or_default().insert(path, node),
        };
        Ok(())
    }

    fn delete_node(&mut self, owner: Owner, path: &Nibbles) -> Result<(), StoreError> {
        match owner {
            None => {
                self.account_nodes.remove(path);
            }
            Some(o) => {
                if let Some(m) = self.storage_nodes.get_mut(&o) {
                    m.remove(path);
                    if m.is_empty() {
                        self.storage_nodes.remove(&o);
                    }
                }
            }
        }
        Ok(())
    }

    fn wipe_storage_nodes(&mut self, owner: B256) -> Result<(), StoreError> {
        self.storage_nodes.remove(&owner);
        Ok(())
    }

    fn account(&self, hashed_address: &B256) -> Result<Option<TrieAccount>, StoreError> {
        Ok(self.accounts.get(hashed_address).copied())
    }

    fn seek_account(&self, prefix: &Nibbles) -> Result<Option<(B256, TrieAccount)>, StoreError> {
        Ok(self
            .accounts
            .range(lower_bound(prefix)..)
            .next()
            .filter(|(k, _)| starts_with(k, prefix))
            .map(|(k, a)| (*k, *a)))
    }

    fn put_account(
        &mut self,
        hashed_address: B256,
        account: TrieAccount,
    ) -> Result<(), StoreError> {
        self.accounts.insert(hashed_address, account);
        Ok(())
    }

    fn delete_account(&mut self, hashed_address: &B256) -> Result<(), StoreError> {
        self.accounts.remove(hashed_address);
        Ok(())
    }

    fn seek_slot(&self, owner: B256, prefix: &Nibbles) -> Result<Option<(B256, U256)>, StoreError> {
        Ok(self.storage.get(&owner).and_then(|m| {
            m.range(lower_bound(prefix)..)
                .next()
                .filter(|(k, _)| starts_with(k, prefix))
                .map(|(k, v)| (*k, *v))
        }))
    }

    fn put_slot(&mut self, owner: B256, hashed_slot: B256, value: U256) -> Result<(), StoreError> {
        self.storage
            .entry(owner)
            .or_default()
            .insert(hashed_slot, value);
        Ok(())
    }

    fn delete_slot(&mut self, owner: B256, hashed_slot: &B256) -> Result<(), StoreError> {
        if let Some(m) = self.storage.get_mut(&owner) {
            m.remove(hashed_slot);
            if m.is_empty() {
                self.storage.remove(&owner);
            }
        }
        Ok(())
    }

    fn wipe_slots(&mut self, owner: B256) -> Result<(), StoreError> {
        self.storage.remove(&owner);
        Ok(())
    }
}
