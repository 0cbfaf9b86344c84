//! The database a parallel worker executes against.

use crate::{Lifecycle, LifecycleEvent};
use alloy_primitives::{Address, B256, U256};
use revm::{
    bytecode::Bytecode,
    database::DBErrorMarker,
    database_interface::{bal::EvmDatabaseError, Database, DatabaseRef},
    state::{
        bal::{AccountBal, Bal, BalError, BlockAccessIndex},
        AccountId, AccountInfo,
    },
};
use std::sync::Arc;

/// The database one worker executes transactions against: the shared pre-state overlaid
/// with the BAL's writes of earlier indices, positioned at one block access index, with the
/// block's lifecycle records applied on top. Reads the BAL does not cover are errors (no
/// fallback): the BAL is lying.
///
/// This is revm's `State::with_bal` read path (`BalState::basic_by_account_id`,
/// `StorageBal::get`, same `Bal` structure, same `BalError`s) without `State`'s account and
/// storage caches: revm's journal already caches every account and slot within a transaction,
/// and a worker must forget everything between transactions, so the extra cache layer only
/// cost time (measured: see `docs/results/`).
#[derive(Debug)]
pub struct WorkerDb<'a, DB: DatabaseRef> {
    pre_state: &'a DB,
    bal: Arc<Bal>,
    index: BlockAccessIndex,
    lifecycle: Option<&'a Lifecycle>,
}

impl<'a, DB: DatabaseRef> WorkerDb<'a, DB> {
    /// A worker database over `pre_state` reading earlier writes from `bal`.
    pub fn new(pre_state: &'a DB, bal: Arc<Bal>, lifecycle: &'a Lifecycle) -> Self {
        Self {
            pre_state,
            bal,
            index: BlockAccessIndex::PRE_EXECUTION,
            lifecycle: (!lifecycle.is_empty()).then_some(lifecycle),
        }
    }

    /// Positions the view at `index` (transaction `index - 1`).
    pub fn position(&mut self, index: BlockAccessIndex) {
        self.index = index;
    }

    fn index(&self) -> u64 {
        self.index.get()
    }

    fn has_info_write_between(&self, address: &Address, after: u64, before: u64) -> bool {
        let Some(account) = self.bal.accounts.get(address) else {
            return false;
        };
        let within = |i: u64| i > after && i < before;
        account.nonce.writes.iter().any(|(i, _)| within(i.get()))
            || account.balance.writes.iter().any(|(i, _)| within(i.get()))
            || account.code.writes.iter().any(|(i, _)| within(i.get()))
    }

    fn slot_written_since(&self, address: &Address, slot: U256, since: u64, before: u64) -> bool {
        self.bal
            .accounts
            .get(address)
            .and_then(|a| a.storage.storage.get(&slot))
            .is_some_and(|w| {
                w.writes
                    .iter()
                    .any(|(i, _)| i.get() >= since && i.get() < before)
            })
    }

    fn storage_of(
        &self,
        address: Address,
        account: &AccountBal,
        slot: U256,
    ) -> Result<U256, EvmDatabaseError<DB::Error>> {
        let value = match account
            .storage
            .get(&address, slot, self.index)
            .map_err(EvmDatabaseError::Bal)?
        {
            Some(value) => value,
            None => self
                .pre_state
                .storage_ref(address, slot)
                .map_err(EvmDatabaseError::Database)?,
        };
        Ok(self.adjust_storage(address, slot, value))
    }

    fn adjust_basic(&self, address: Address, basic: Option<AccountInfo>) -> Option<AccountInfo> {
        let Some(lifecycle) = self.lifecycle else {
            return basic;
        };
        let index = self.index();
        match lifecycle.last_before(&address, index) {
            Some((at, LifecycleEvent::Destroyed))
                if !self.has_info_write_between(&address, at, index) =>
            {
                None
            }
            Some((_, LifecycleEvent::Materialized)) if basic.is_none() => {
                Some(AccountInfo::default())
            }
            _ => basic,
        }
    }

    fn adjust_storage(&self, address: Address, slot: U256, value: U256) -> U256 {
        let Some(lifecycle) = self.lifecycle else {
            return value;
        };
        let index = self.index();
        match lifecycle.last_destroyed_before(&address, index) {
            Some(at) if !self.slot_written_since(&address, slot, at, index) => U256::ZERO,
            _ => value,
        }
    }
}

impl<DB: DatabaseRef> Database for WorkerDb<'_, DB>
where
    DB::Error: DBErrorMarker,
{
    type Error = EvmDatabaseError<DB::Error>;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        let (id, _, _) = self
            .bal
            .accounts
            .get_full(&address)
            .ok_or(EvmDatabaseError::Bal(BalError::AccountNotFound { address }))?;
        let pre = self
            .pre_state
            .basic_ref(address)
            .map_err(EvmDatabaseError::Database)?;
        let existed = pre.is_some();
        let mut info = pre.unwrap_or_default();
        let account_id = AccountId::new(id)
            .ok_or(EvmDatabaseError::Bal(BalError::AccountNotFound { address }))?;
        let changed = self
            .bal
            .populate_account_info(account_id, self.index, &mut info)
            .map_err(EvmDatabaseError::Bal)?;
        // As revm's BalState: an account absent before and unchanged by the BAL stays absent.
        let basic = (existed || changed).then_some(info);
        Ok(self.adjust_basic(address, basic))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        self.pre_state
            .code_by_hash_ref(code_hash)
            .map_err(EvmDatabaseError::Database)
    }

    fn storage(&mut self, address: Address, index: U256) -> Result<U256, Self::Error> {
        let account = self
            .bal
            .accounts
            .get(&address)
            .ok_or(EvmDatabaseError::Bal(BalError::AccountNotFound { address }))?;
        self.storage_of(address, account, index)
    }

    fn storage_by_account_id(
        &mut self,
        address: Address,
        account_id: AccountId,
        key: U256,
    ) -> Result<U256, Self::Error> {
        let (_, account) =
            self.bal
                .accounts
                .get_index(account_id.get())
                .ok_or(EvmDatabaseError::Bal(BalError::InvalidAccountId {
                    account_id,
                }))?;
        self.storage_of(address, account, key)
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, Self::Error> {
        self.pre_state
            .block_hash_ref(number)
            .map_err(EvmDatabaseError::Database)
    }
}

impl<DB: DatabaseRef + crate::StorageProbe> crate::StorageProbe for WorkerDb<'_, DB> {
    fn has_storage(&self, address: Address) -> bool {
        // An account destroyed earlier in the block (EIP-161 clearing, SELFDESTRUCT) lost its
        // storage; without code nothing can have written it since.
        if let Some(lifecycle) = self.lifecycle {
            if lifecycle
                .last_destroyed_before(&address, self.index())
                .is_some()
            {
                return false;
            }
        }
        self.pre_state.has_storage(address)
    }
}
