//! The store seen as a `gigagas_trie::NodeStore` (a read view: a block's writes are
//! recorded as a [`crate::KvDiff`]) and as a plain state reader for execution (revm's
//! `DatabaseRef`).

use crate::{
    codec,
    kv::{KvRead, Table},
    Error,
};
use alloy_primitives::{keccak256, Address, B256, U256};
use alloy_trie::{Nibbles, TrieAccount};
use gigagas_trie::{lower_bound, BranchNode, NodeStore, Owner, StoreError};
use revm::{
    bytecode::Bytecode, database_interface::DBErrorMarker, primitives::KECCAK_EMPTY,
    state::AccountInfo,
};

fn backend(e: Error) -> StoreError {
    StoreError::Backend(Box::new(e))
}

fn starts_with(key: &B256, prefix: &Nibbles) -> bool {
    Nibbles::unpack(key).starts_with(prefix)
}

/// The least 32-byte key above every key whose nibbles start with `prefix` (`None`: there is
/// none, `prefix` is all `f`): the bound of a seek inside the prefix.
fn nibbles_end(prefix: &Nibbles) -> Option<B256> {
    let mut nibbles = prefix.to_vec();
    while let Some(last) = nibbles.pop() {
        if last < 15 {
            nibbles.push(last + 1);
            return Some(lower_bound(&Nibbles::from_nibbles_unchecked(&nibbles)));
        }
    }
    None
}

/// The store's tables read as the trie's [`NodeStore`] (its write methods fail: a block's
/// writes are recorded as a [`crate::KvDiff`] and written in one transaction).
#[derive(Debug)]
pub struct View<T> {
    pub(crate) kv: T,
}

impl<T: KvRead> View<T> {
    /// The underlying snapshot or transaction.
    pub fn kv(&self) -> &T {
        &self.kv
    }

    fn get_node(&self, owner: Owner, path: &Nibbles) -> Result<Option<BranchNode>, Error> {
        let (table, key) = codec::node_key(owner, path);
        self.kv
            .get(table, &key)?
            .map(|v| codec::decode_node(table, &key, &v))
            .transpose()
    }

    fn first_node(
        &self,
        owner: Owner,
        prefix: &Nibbles,
    ) -> Result<Option<(Nibbles, BranchNode)>, Error> {
        let (table, seek) = codec::node_key(owner, prefix);
        let end = crate::overlay::prefix_end(&seek);
        let Some((key, value)) = self.kv.seek_below(table, &seek, end.as_deref())? else {
            return Ok(None);
        };
        if !key.starts_with(&seek) {
            return Ok(None);
        }
        let owner_len = if owner.is_some() { 32 } else { 0 };
        let path = codec::decode_path(table, &key, &key[owner_len..])?;
        Ok(Some((path, codec::decode_node(table, &key, &value)?)))
    }

    /// The account leaf of `hashed_address`.
    pub fn account_leaf(&self, hashed_address: &B256) -> Result<Option<TrieAccount>, Error> {
        self.kv
            .get(Table::Accounts, hashed_address.as_slice())?
            .map(|v| codec::decode_account(hashed_address.as_slice(), &v))
            .transpose()
    }

    fn first_account(&self, prefix: &Nibbles) -> Result<Option<(B256, TrieAccount)>, Error> {
        let seek = lower_bound(prefix);
        let end = nibbles_end(prefix);
        let Some((key, value)) = self.kv.seek_below(
            Table::Accounts,
            seek.as_slice(),
            end.as_ref().map(|e| &e[..]),
        )?
        else {
            return Ok(None);
        };
        let hashed = codec::b256(Table::Accounts, &key, &key)?;
        if !starts_with(&hashed, prefix) {
            return Ok(None);
        }
        Ok(Some((hashed, codec::decode_account(&key, &value)?)))
    }

    /// The value of slot `hashed_slot` of the account `owner` (zero when absent).
    pub fn slot(&self, owner: &B256, hashed_slot: &B256) -> Result<U256, Error> {
        let key = codec::slot_key(owner, hashed_slot);
        self.kv
            .get(Table::Storage, &key)?
            .map_or(Ok(U256::ZERO), |v| codec::decode_value(&key, &v))
    }

    fn first_slot(&self, owner: B256, prefix: &Nibbles) -> Result<Option<(B256, U256)>, Error> {
        let seek = codec::slot_key(&owner, &lower_bound(prefix));
        let end = match nibbles_end(prefix) {
            Some(end) => Some(codec::slot_key(&owner, &end).to_vec()),
            None => crate::overlay::prefix_end(owner.as_slice()),
        };
        let Some((key, value)) = self.kv.seek_below(Table::Storage, &seek, end.as_deref())? else {
            return Ok(None);
        };
        if key.len() != 64 {
            return Err(Error::Corrupt {
                table: Table::Storage.name(),
                key: codec::hex(&key),
                what: "storage key is not 64 bytes".into(),
            });
        }
        if key[..32] != owner[..] {
            return Ok(None);
        }
        let hashed = B256::from_slice(&key[32..]);
        if !starts_with(&hashed, prefix) {
            return Ok(None);
        }
        Ok(Some((hashed, codec::decode_value(&key, &value)?)))
    }

    /// The hash of block `number`, if the store holds it.
    pub fn block_hash(&self, number: u64) -> Result<Option<B256>, Error> {
        let key = number.to_be_bytes();
        self.kv
            .get(Table::BlockHashes, &key)?
            .map(|v| codec::b256(Table::BlockHashes, &key, &v))
            .transpose()
    }

    /// The code stored under `code_hash`, checked against it: a stored code that does not
    /// hash to its key is a corrupt store, named as such (never handed to the EVM, where a
    /// flipped byte would surface as a wrong BAL or root).
    pub fn code(&self, code_hash: &B256) -> Result<Option<Vec<u8>>, Error> {
        let Some(code) = self.kv.get(Table::Code, code_hash.as_slice())? else {
            return Ok(None);
        };
        if keccak256(&code) != *code_hash {
            return Err(Error::Corrupt {
                table: Table::Code.name(),
                key: codec::hex(code_hash.as_slice()),
                what: format!(
                    "the stored code ({} bytes) hashes to {}, not to its key",
                    code.len(),
                    keccak256(&code)
                ),
            });
        }
        Ok(Some(code))
    }
}

fn read_only() -> StoreError {
    backend(Error::Backend(
        "a read view cannot be written; a block's writes are recorded as a diff and committed"
            .into(),
    ))
}

/// Reads shared by both kinds of view.
macro_rules! node_reads {
    ($v:ident) => {
        fn node(&self, owner: Owner, path: &Nibbles) -> Result<Option<BranchNode>, StoreError> {
            self.$v().get_node(owner, path).map_err(backend)
        }

        fn seek_node(
            &self,
            owner: Owner,
            prefix: &Nibbles,
        ) -> Result<Option<(Nibbles, BranchNode)>, StoreError> {
            self.$v().first_node(owner, prefix).map_err(backend)
        }

        fn account(&self, hashed_address: &B256) -> Result<Option<TrieAccount>, StoreError> {
            self.$v().account_leaf(hashed_address).map_err(backend)
        }

        fn seek_account(
            &self,
            prefix: &Nibbles,
        ) -> Result<Option<(B256, TrieAccount)>, StoreError> {
            self.$v().first_account(prefix).map_err(backend)
        }

        fn seek_slot(
            &self,
            owner: B256,
            prefix: &Nibbles,
        ) -> Result<Option<(B256, U256)>, StoreError> {
            self.$v().first_slot(owner, prefix).map_err(backend)
        }
    };
}

/// A read snapshot as a [`NodeStore`]: every write method fails (writes are recorded as a
/// [`crate::KvDiff`]).
impl<T: KvRead> NodeStore for View<T> {
    node_reads!(view);

    fn put_node(&mut self, _: Owner, _: Nibbles, _: BranchNode) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn delete_node(&mut self, _: Owner, _: &Nibbles) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn wipe_storage_nodes(&mut self, _: B256) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn put_account(&mut self, _: B256, _: TrieAccount) -> Result<(), StoreError> {
        Err(read_only())
    }
    fn delete_account(&mut self, _: &B256) -> Result<(), StoreError> {
        Err(read_only())
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

impl<T> View<T> {
    fn view(&self) -> &Self {
        self
    }
}

/// A read the store could not answer.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ReadError(#[from] pub Error);

impl DBErrorMarker for ReadError {}

/// The store as execution's pre-state: account by address, slot by (address, slot), code
/// by hash, block hash by number (keys are hashed here; the store is keyed by hashes).
impl<T: KvRead> revm::DatabaseRef for View<T> {
    type Error = ReadError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, ReadError> {
        Ok(self
            .account_leaf(&keccak256(address))?
            .map(|a| AccountInfo {
                balance: a.balance,
                nonce: a.nonce,
                code_hash: a.code_hash,
                code: None,
                ..Default::default()
            }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, ReadError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        match self.code(&code_hash)? {
            Some(code) => Ok(Bytecode::new_raw(code.into())),
            None => Err(ReadError(Error::Corrupt {
                table: Table::Code.name(),
                key: codec::hex(code_hash.as_slice()),
                what: "code named by an account is missing".into(),
            })),
        }
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, ReadError> {
        Ok(self.slot(&keccak256(address), &keccak256(index.to_be_bytes::<32>()))?)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, ReadError> {
        match self.block_hash(number)? {
            Some(hash) => Ok(hash),
            None => Err(ReadError(Error::Backend(format!(
                "block hash of block {number} is not in the store (table block_hashes)"
            )))),
        }
    }
}
