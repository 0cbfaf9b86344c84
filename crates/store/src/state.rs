//! The store as the state a block executes against: `gigagas_exec::StateProvider` over one
//! read snapshot.

use crate::{kv::KvRead, View};
use alloy_primitives::{keccak256, map::HashMap, Address, B256, U256};
use alloy_trie::EMPTY_ROOT_HASH;
use gigagas_data::PreStateError;
use gigagas_exec::{StateProvider, StorageProbe};
use revm::{
    bytecode::Bytecode, database_interface::DatabaseRef, primitives::KECCAK_EMPTY,
    state::AccountInfo,
};
use std::sync::{Arc, RwLock};

/// Analysed bytecode by code hash, kept across blocks (a node keeps its code cache too):
/// code read from disk is analysed (jump table) once, not once per transaction.
#[derive(Debug, Default)]
pub struct CodeCache(RwLock<HashMap<B256, Bytecode>>);

impl CodeCache {
    /// Codes held.
    pub fn len(&self) -> usize {
        self.0.read().map_or(0, |c| c.len())
    }

    /// Whether no code is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The state before a block as the store holds it: one read snapshot (taken before the block
/// is written, so later writes are invisible to it) shared by every worker, with the code
/// cache. Reads hash the address and slot (the store is keyed by hashes).
#[derive(Debug)]
pub struct DiskState<T> {
    view: View<T>,
    codes: Arc<CodeCache>,
}

impl<T: KvRead> DiskState<T> {
    /// The state in `view`, analysed code cached in `codes`.
    pub fn new(view: View<T>, codes: Arc<CodeCache>) -> Self {
        Self { view, codes }
    }

    /// The snapshot.
    pub fn view(&self) -> &View<T> {
        &self.view
    }
}

fn store_error(what: &str, e: impl std::fmt::Display) -> PreStateError {
    PreStateError::Store(format!("{what}: {e}"))
}

impl<T: KvRead> DatabaseRef for DiskState<T> {
    type Error = PreStateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, PreStateError> {
        let leaf = self
            .view
            .account_leaf(&keccak256(address))
            .map_err(|e| store_error(&format!("account {address}"), e))?;
        Ok(leaf.map(|a| AccountInfo {
            balance: a.balance,
            nonce: a.nonce,
            code_hash: a.code_hash,
            code: None,
            ..Default::default()
        }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, PreStateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        if let Some(code) = self
            .codes
            .0
            .read()
            .ok()
            .and_then(|c| c.get(&code_hash).cloned())
        {
            return Ok(code);
        }
        let bytes = self
            .view
            .code(&code_hash)
            .map_err(|e| store_error(&format!("code {code_hash}"), e))?
            .ok_or(PreStateError::MissingCode(code_hash))?;
        let code = Bytecode::new_raw(bytes.into());
        if let Ok(mut cache) = self.codes.0.write() {
            cache.insert(code_hash, code.clone());
        }
        Ok(code)
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, PreStateError> {
        self.view
            .slot(&keccak256(address), &keccak256(index.to_be_bytes::<32>()))
            .map_err(|e| store_error(&format!("slot {index} of {address}"), e))
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, PreStateError> {
        self.view
            .block_hash(number)
            .map_err(|e| store_error(&format!("block hash {number}"), e))?
            .ok_or(PreStateError::MissingBlockHash(number))
    }
}

impl<T: KvRead> StorageProbe for DiskState<T> {
    /// Non-empty storage ⇔ the account's storage root is not the empty trie's. A read that
    /// fails answers "has storage" (the creation then collides), so the transaction's result
    /// differs from the BAL's and verification names it: never a silent pass.
    fn has_storage(&self, address: Address) -> bool {
        match self.view.account_leaf(&keccak256(address)) {
            Ok(leaf) => leaf.is_some_and(|a| a.storage_root != EMPTY_ROOT_HASH),
            Err(_) => true,
        }
    }
}

impl<T: KvRead> StateProvider for DiskState<T> {}
