//! The immutable, shareable pre-state of one block.

use alloy_primitives::{map::HashMap, Address, B256, U256};
use revm::{
    bytecode::Bytecode,
    database_interface::{DBErrorMarker, DatabaseRef},
    state::AccountInfo,
};
use std::sync::Arc;

/// One account of the pre-state.
#[derive(Debug, Clone, Default)]
pub struct PreAccount {
    /// Balance, nonce, code hash and code.
    pub info: AccountInfo,
    /// Storage slots known to the data set (the touched ones for mainnet data).
    pub storage: HashMap<U256, U256>,
}

/// State before a block: accounts, storage, code and the block hashes `BLOCKHASH` may ask for.
///
/// Read-only after construction and `Sync`, so every worker thread reads the same instance
/// through [`DatabaseRef`]. Accounts absent from the map do not exist.
#[derive(Debug, Clone, Default)]
pub struct PreState {
    accounts: HashMap<Address, PreAccount>,
    codes: HashMap<B256, Bytecode>,
    block_hashes: Arc<HashMap<u64, B256>>,
}

/// A read the pre-state cannot answer: the data set is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreStateError {
    /// `BLOCKHASH` asked for a block the data set has no hash for.
    #[error("block hash of block {0} is not in the data set (block_hashes.json)")]
    MissingBlockHash(u64),
    /// Code was requested by a hash the data set has no code for.
    #[error("code with hash {0} is not in the data set (bytecodes.json)")]
    MissingCode(B256),
}

impl DBErrorMarker for PreStateError {}

impl PreState {
    /// Builds a pre-state; `accounts` must already carry their code in `info.code`.
    pub fn new(
        accounts: HashMap<Address, PreAccount>,
        block_hashes: Arc<HashMap<u64, B256>>,
    ) -> Self {
        let codes = accounts
            .values()
            .filter_map(|a| a.info.code.clone().map(|c| (a.info.code_hash, c)))
            .collect();
        Self {
            accounts,
            codes,
            block_hashes,
        }
    }

    /// The account at `address`, if it exists.
    pub fn account(&self, address: &Address) -> Option<&PreAccount> {
        self.accounts.get(address)
    }

    /// All accounts.
    pub fn accounts(&self) -> impl Iterator<Item = (&Address, &PreAccount)> {
        self.accounts.iter()
    }

    /// The block hashes `BLOCKHASH` may ask for.
    pub fn block_hashes(&self) -> &Arc<HashMap<u64, B256>> {
        &self.block_hashes
    }

    /// The same state with other block hashes (the ancestors of the next block).
    pub fn with_block_hashes(mut self, block_hashes: Arc<HashMap<u64, B256>>) -> Self {
        self.block_hashes = block_hashes;
        self
    }

    /// Number of accounts.
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// Whether the pre-state holds no accounts.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }
}

impl DatabaseRef for PreState {
    type Error = PreStateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        Ok(self.accounts.get(&address).map(|a| a.info.clone()))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        if code_hash == revm::primitives::KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.codes
            .get(&code_hash)
            .cloned()
            .ok_or(PreStateError::MissingCode(code_hash))
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        Ok(self
            .accounts
            .get(&address)
            .and_then(|a| a.storage.get(&index).copied())
            .unwrap_or_default())
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Self::Error> {
        self.block_hashes
            .get(&number)
            .copied()
            .ok_or(PreStateError::MissingBlockHash(number))
    }
}
