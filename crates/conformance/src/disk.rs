//! `conformance --state disk`: every imported block's state transition also goes through the
//! on-disk store (`gigagas-store`, MDBX). The store's incremental root — its walks forked in
//! parallel at every node with two or more changes below it, so that even a fixture's small
//! tries are split and stitched — must equal the header's state root; at the end of a test
//! the store recomputes its root from scratch and compares every stored branch node with a
//! from-scratch build ([`gigagas_store::Store::verify`]).
//!
//! The store follows one chain. A block whose parent is not the store's head (a fixture's
//! side chain or re-org) starts a fresh store from its parent's state, so every imported
//! block is checked; such restarts are counted.

use alloy_consensus::Header;
use alloy_primitives::{keccak256, Bytes, B256, U256};
use gigagas_data::PreState;
use gigagas_store::{BlockRef, Store};
use gigagas_trie::{AccountChange, AccountInfo, ChangeSet, Parallelism};

/// Fork threshold of the store's walks here: every node with two or more changes below it
/// splits (the smallest the trie accepts), so the parallel paths run on tiny tries too.
const SPLIT_EVERYWHERE: Parallelism = Parallelism::Parallel {
    split_min_changes: 2,
};

/// One test's on-disk replay: a temporary directory holding its store(s).
pub struct DiskReplay {
    dir: tempfile::TempDir,
    store: Option<Store>,
    stores: usize,
    /// Blocks whose root the store computed and checked.
    pub blocks: usize,
}

impl DiskReplay {
    /// A replay in a fresh temporary directory.
    pub fn new() -> Result<Self, String> {
        Ok(Self {
            dir: tempfile::Builder::new()
                .prefix("gigagas-conformance-store")
                .tempdir()
                .map_err(|e| format!("temporary store directory: {e}"))?,
            store: None,
            stores: 0,
            blocks: 0,
        })
    }

    /// Applies block `header` (hash `hash`) that took `parent` (the state after the block
    /// `parent_header`, hash `header.parent_hash`) to `post`: the store's root must equal
    /// the header's state root.
    pub fn apply(
        &mut self,
        parent_header: &Header,
        parent: &PreState,
        header: &Header,
        hash: B256,
        post: &PreState,
    ) -> Result<(), String> {
        let at_head = match &self.store {
            Some(store) => store
                .head()
                .map_err(|e| e.to_string())?
                .is_some_and(|h| h.hash == header.parent_hash),
            None => false,
        };
        if !at_head {
            let path = self.dir.path().join(format!("store-{}", self.stores));
            let store: Store = Store::create(&path).map_err(|e| e.to_string())?;
            store
                .load(parent, parent_header.number, header.parent_hash)
                .map_err(|e| format!("loading block {}'s state: {e}", parent_header.number))?;
            self.stores += 1;
            self.store = Some(store);
        }
        let Some(store) = self.store.as_ref() else {
            return Err(format!("block {}: no on-disk store open", header.number));
        };
        let (changes, codes) = change_set_between(parent, post);
        let block = BlockRef {
            number: header.number,
            hash,
            parent_hash: header.parent_hash,
            expected_root: Some(header.state_root),
        };
        store
            .apply_block(block, &changes, &codes, SPLIT_EVERYWHERE)
            .map_err(|e| format!("block {}: on-disk store: {e}", header.number))?;
        self.blocks += 1;
        Ok(())
    }

    /// Recomputes the current store's root from scratch and compares it and every stored
    /// branch node with a from-scratch build.
    pub fn finish(&self) -> Result<(), String> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let verified = store.verify().map_err(|e| e.to_string())?;
        if verified.ok() {
            return Ok(());
        }
        Err(format!(
            "on-disk store at block {}: stored root {}, from scratch {}{}",
            verified.head.number,
            verified.head.state_root,
            verified.computed_root,
            verified
                .node_difference
                .map(|d| format!("; first differing branch node: {d}"))
                .unwrap_or_default()
        ))
    }
}

/// The exact change set from one complete state to the next, as the trie takes it (hashed
/// keys; a slot that is zero or gone afterwards is deleted; an account gone afterwards is
/// deleted with its storage), and the codes that appear.
pub fn change_set_between(pre: &PreState, post: &PreState) -> (ChangeSet, Vec<Bytes>) {
    let mut changes = ChangeSet::default();
    let mut codes = Vec::new();
    for (address, _) in pre.accounts() {
        if post.account(address).is_none() {
            changes.accounts.insert(
                keccak256(address),
                AccountChange {
                    info: None,
                    storage_wiped: false,
                    storage: Default::default(),
                },
            );
        }
    }
    for (address, after) in post.accounts() {
        let before = pre.account(address);
        let same_info = before.is_some_and(|b| {
            b.info.nonce == after.info.nonce
                && b.info.balance == after.info.balance
                && b.info.code_hash == after.info.code_hash
        });
        let mut storage = std::collections::BTreeMap::new();
        for (slot, value) in &after.storage {
            let old = before
                .and_then(|b| b.storage.get(slot).copied())
                .unwrap_or(U256::ZERO);
            if old != *value {
                storage.insert(keccak256(slot.to_be_bytes::<32>()), *value);
            }
        }
        if let Some(before) = before {
            for (slot, value) in &before.storage {
                if !value.is_zero() && !after.storage.contains_key(slot) {
                    storage.insert(keccak256(slot.to_be_bytes::<32>()), U256::ZERO);
                }
            }
        }
        if same_info && storage.is_empty() {
            continue;
        }
        if before.is_none_or(|b| b.info.code_hash != after.info.code_hash) {
            if let Some(code) = after.info.code.as_ref().filter(|c| !c.is_empty()) {
                codes.push(code.original_bytes());
            }
        }
        changes.accounts.insert(
            keccak256(address),
            AccountChange {
                info: Some(AccountInfo {
                    nonce: after.info.nonce,
                    balance: after.info.balance,
                    code_hash: after.info.code_hash,
                }),
                storage_wiped: false,
                storage,
            },
        );
    }
    (changes, codes)
}
