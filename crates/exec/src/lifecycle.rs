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
//! [`crate::WorkerDb`] and re-derives them from every transaction, so the records are verified, not
//! trusted. For Amsterdam-style blocks (Cancun and later) the records are empty in practice.

use alloy_primitives::{map::HashMap, Address};
use revm::state::{bal::BlockAccessIndex, EvmState};

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

    /// The records of consecutive blocks in one index space (a mega-block): block b's index j
    /// becomes `offsets[b] + j`.
    pub fn merged(parts: &[&Lifecycle], offsets: &[u64]) -> Self {
        let mut merged = Self::default();
        for (part, &offset) in parts.iter().zip(offsets) {
            for (address, events) in &part.by_account {
                merged
                    .by_account
                    .entry(*address)
                    .or_default()
                    .extend(events.iter().map(|&(i, e)| (i + offset, e)));
            }
        }
        merged
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

    pub(crate) fn last_before(
        &self,
        address: &Address,
        index: u64,
    ) -> Option<(u64, LifecycleEvent)> {
        self.by_account
            .get(address)?
            .iter()
            .rev()
            .find(|(i, _)| *i < index)
            .copied()
    }

    pub(crate) fn last_destroyed_before(&self, address: &Address, index: u64) -> Option<u64> {
        self.by_account
            .get(address)?
            .iter()
            .rev()
            .find(|(i, e)| *i < index && *e == LifecycleEvent::Destroyed)
            .map(|(i, _)| *i)
    }
}
