//! Account lifecycle records: the facts about a block that an EIP-7928 BAL cannot express
//! for pre-Cancun forks, and the database view that applies them.
//!
//! A BAL records post-values of balance, nonce, code and the storage slots a transaction
//! touched. Before Cancun (EIP-6780) `SELFDESTRUCT` wiped an account's *whole* storage, and
//! before Spurious Dragon (EIP-161) "exists but empty" and "does not exist" were different
//! states (a value-less call could materialise an account; a destroyed account stopped
//! existing). Neither is visible in the BAL, so a later transaction reading the account from
//! "pre-state + BAL" would see stale storage or the wrong existence. The sequential run
//! records these events per block access index; the parallel run applies them through
//! [`WorkerDb`] and re-derives them from every transaction, so the records are verified, not
//! trusted. For Amsterdam-style blocks (Cancun and later) the records are empty in practice.

use alloy_primitives::{map::HashMap, Address, B256, U256};
use revm::{
    bytecode::Bytecode,
    database::{states::State, DBErrorMarker},
    database_interface::{bal::EvmDatabaseError, Database, DatabaseRef, WrapDatabaseRef},
    state::{bal::BlockAccessIndex, AccountId, AccountInfo, EvmState},
};

/// What happened to an account at one block access index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LifecycleEvent {
    /// The account self-destructed: it stopped existing and its whole storage was cleared.
    Destroyed,
    /// An empty account that did not exist came into existence (pre-EIP-161 only).
    Materialized,
}

impl std::fmt::Display for LifecycleEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Destroyed => "destroyed",
            Self::Materialized => "materialised",
        })
    }
}

/// Lifecycle events of one block, per account, in index order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifecycle {
    by_account: HashMap<Address, Vec<(u64, LifecycleEvent)>>,
}

/// The lifecycle events one transaction's state changes imply, sorted by address.
pub fn events_of(diff: &EvmState) -> Vec<(Address, LifecycleEvent)> {
    let mut events: Vec<_> = diff
        .iter()
        .filter_map(|(address, account)| {
            if account.is_selfdestructed() {
                Some((*address, LifecycleEvent::Destroyed))
            } else if account.is_created()
                && account.is_loaded_as_not_existing()
                && account.info.is_empty()
            {
                Some((*address, LifecycleEvent::Materialized))
            } else {
                None
            }
        })
        .collect();
    events.sort_unstable();
    events
}

impl Lifecycle {
    /// Records the events of the transaction (or system operation) at `index`.
    pub fn record(&mut self, index: BlockAccessIndex, diff: &EvmState) {
        for (address, event) in events_of(diff) {
            self.by_account
                .entry(address)
                .or_default()
                .push((index.get(), event));
        }
    }

    /// Whether the block has no lifecycle events (the BAL alone describes it).
    pub fn is_empty(&self) -> bool {
        self.by_account.is_empty()
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.by_account.values().map(Vec::len).sum()
    }

    /// All events at `index`, sorted by address (compare with [`events_of`]).
    pub fn at(&self, index: BlockAccessIndex) -> Vec<(Address, LifecycleEvent)> {
        let mut events: Vec<_> = self
            .by_account
            .iter()
            .flat_map(|(a, evs)| {
                evs.iter()
                    .filter(move |(i, _)| *i == index.get())
                    .map(move |(_, e)| (*a, *e))
            })
            .collect();
        events.sort_unstable();
        events
    }

    /// Events grouped by index, for all indices `0..=max_index`.
    pub fn by_index(&self, max_index: u64) -> Vec<Vec<(Address, LifecycleEvent)>> {
        let mut out = vec![Vec::new(); max_index as usize + 1];
        for (address, events) in &self.by_account {
            for (index, event) in events {
                if let Some(slot) = out.get_mut(*index as usize) {
                    slot.push((*address, *event));
                }
            }
        }
        out.iter_mut().for_each(|v| v.sort_unstable());
        out
    }

    fn last_before(&self, address: &Address, index: u64) -> Option<(u64, LifecycleEvent)> {
        self.by_account
            .get(address)?
            .iter()
            .rev()
            .find(|(i, _)| *i < index)
            .copied()
    }

    fn last_destroyed_before(&self, address: &Address, index: u64) -> Option<u64> {
        self.by_account
            .get(address)?
            .iter()
            .rev()
            .find(|(i, e)| *i < index && *e == LifecycleEvent::Destroyed)
            .map(|(i, _)| *i)
    }
}

/// The database one worker executes transactions against: revm's BAL-reading [`State`] over
/// the shared pre-state, positioned at one block access index, with the block's lifecycle
/// records applied on top. One instance serves many transactions of a block; code stays
/// cached between them (it is immutable per hash), accounts and storage do not.
#[derive(Debug)]
pub struct WorkerDb<'a, DB: DatabaseRef> {
    state: State<WrapDatabaseRef<&'a DB>>,
    lifecycle: Option<&'a Lifecycle>,
}

impl<'a, DB: DatabaseRef> WorkerDb<'a, DB> {
    /// A worker database over `pre_state` reading earlier writes from `bal`.
    pub fn new(
        pre_state: &'a DB,
        bal: std::sync::Arc<revm::state::bal::Bal>,
        lifecycle: &'a Lifecycle,
    ) -> Self {
        let state = State::builder()
            .with_database_ref(pre_state)
            .with_bal(bal)
            .build();
        Self {
            state,
            lifecycle: (!lifecycle.is_empty()).then_some(lifecycle),
        }
    }

    /// Positions the view at `index` (transaction `index - 1`) and forgets cached state.
    pub fn position(&mut self, index: BlockAccessIndex) {
        self.state.cache.accounts.clear();
        self.state.set_bal_index(index);
    }

    fn index(&self) -> u64 {
        self.state.bal_state.bal_index.get()
    }

    fn has_info_write_between(&self, address: &Address, after: u64, before: u64) -> bool {
        let Some(bal) = self.state.bal_state.bal.as_ref() else {
            return false;
        };
        let Some(account) = bal.accounts.get(address) else {
            return false;
        };
        let within = |i: u64| i > after && i < before;
        account.nonce.writes.iter().any(|(i, _)| within(i.get()))
            || account.balance.writes.iter().any(|(i, _)| within(i.get()))
            || account.code.writes.iter().any(|(i, _)| within(i.get()))
    }

    fn slot_written_since(&self, address: &Address, slot: U256, since: u64, before: u64) -> bool {
        let Some(bal) = self.state.bal_state.bal.as_ref() else {
            return false;
        };
        bal.accounts
            .get(address)
            .and_then(|a| a.storage.storage.get(&slot))
            .is_some_and(|w| {
                w.writes
                    .iter()
                    .any(|(i, _)| i.get() >= since && i.get() < before)
            })
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
        let basic = self.state.basic(address)?;
        Ok(self.adjust_basic(address, basic))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        self.state.code_by_hash(code_hash)
    }

    fn storage(&mut self, address: Address, index: U256) -> Result<U256, Self::Error> {
        let value = self.state.storage(address, index)?;
        Ok(self.adjust_storage(address, index, value))
    }

    fn storage_by_account_id(
        &mut self,
        address: Address,
        account_id: AccountId,
        key: U256,
    ) -> Result<U256, Self::Error> {
        let value = self.state.storage_by_account_id(address, account_id, key)?;
        Ok(self.adjust_storage(address, key, value))
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, Self::Error> {
        self.state.block_hash(number)
    }
}
