//! The genesis allocation's types, shared by the chain format (`chain`, which reads and
//! writes them in `chain.json`) and the genesis root (`genesis_root`, which hashes them without
//! expanding the fills): accounts, `storage_fill` entries and their bounds. `chain` re-exports
//! them, so `gigagas_data::chain::AllocAccount` and the rest keep their paths.

use alloy_primitives::{Address, Bytes, U256};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An account of the genesis allocation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocAccount {
    /// Balance in wei.
    pub balance: U256,
    /// Nonce.
    pub nonce: u64,
    /// Code (empty for accounts without code).
    #[serde(default, skip_serializing_if = "no_code")]
    pub code: Bytes,
    /// Storage.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub storage: BTreeMap<U256, U256>,
}

fn no_code(code: &Bytes) -> bool {
    code.is_empty()
}

/// Most slots all `storage_fill` entries of a chain may create together.
pub const MAX_FILL_SLOTS: u64 = 100_000_000;
/// Most accounts all `storage_fill` entries of a chain may create together.
pub const MAX_FILL_ACCOUNTS: u64 = 1_000_000;

/// A `storage_fill` entry: `accounts` accounts at the consecutive addresses `address`,
/// `address + 1`, ... (as 160-bit integers), each with nonce `nonce`, code `code`, balance 0,
/// and `slots` storage slots split between them as evenly as possible (account `k` gets
/// `slots / accounts`, plus one if `k < slots % accounts`). Account `k`'s slots are
/// `0, 1, ..., n_k - 1`, slot `i` holding `(i mod period) + 1` (never zero).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageFill {
    /// First account.
    pub address: Address,
    /// Number of accounts (at least 1, at most `slots`).
    pub accounts: u64,
    /// Slots over all accounts of the entry.
    pub slots: u64,
    /// Slot `i` holds `(i mod period) + 1`.
    pub period: u64,
    /// Nonce of every account.
    pub nonce: u64,
    /// Code of every account.
    #[serde(default, skip_serializing_if = "no_code")]
    pub code: Bytes,
}

impl StorageFill {
    /// The `k`-th account's address (`k < accounts`; the sum must not pass 2^160, which
    /// `chain::ChainMeta::genesis_state` checks).
    pub fn account(&self, k: u64) -> Address {
        let base = U256::from_be_slice(self.address.as_slice());
        Address::from_word((base + U256::from(k)).into())
    }

    /// Slots of the `k`-th account.
    pub fn slots_of(&self, k: u64) -> u64 {
        self.slots / self.accounts + u64::from(k < self.slots % self.accounts)
    }

    /// Value of slot `i` (never zero).
    pub fn value(&self, i: u64) -> U256 {
        U256::from(i % self.period + 1)
    }

    /// The storage rule of the `k`-th account.
    pub fn rule(&self, k: u64) -> crate::SlotFill {
        crate::SlotFill {
            slots: self.slots_of(k),
            period: self.period,
        }
    }
}

/// Checks the `storage_fill` entries: bounds (at most [`MAX_FILL_SLOTS`] slots and
/// [`MAX_FILL_ACCOUNTS`] accounts in all, every account at least one slot, period at
/// least 1), address ranges inside 2^160, no account in two entries or also in `alloc`.
/// Allocates nothing proportional to the counts.
pub fn check_storage_fill(
    alloc: &BTreeMap<Address, AllocAccount>,
    fills: &[StorageFill],
) -> Result<(), String> {
    let (mut slots, mut accounts) = (0u64, 0u64);
    let limit = U256::from(1u8) << 160;
    let mut ranges: Vec<(U256, U256)> = Vec::with_capacity(fills.len());
    for (e, f) in fills.iter().enumerate() {
        let what = format!("storage_fill[{e}] ({})", f.address);
        if f.accounts == 0 || f.slots == 0 || f.period == 0 {
            return Err(format!(
                "{what}: accounts {}, slots {}, period {}: each must be at least 1",
                f.accounts, f.slots, f.period
            ));
        }
        if f.accounts > f.slots {
            return Err(format!(
                "{what}: {} accounts for {} slots (every account needs at least one)",
                f.accounts, f.slots
            ));
        }
        slots = slots.saturating_add(f.slots);
        accounts = accounts.saturating_add(f.accounts);
        if slots > MAX_FILL_SLOTS {
            return Err(format!(
                "{what}: {slots} slots in all, more than the {MAX_FILL_SLOTS} a chain may fill"
            ));
        }
        if accounts > MAX_FILL_ACCOUNTS {
            return Err(format!(
                    "{what}: {accounts} accounts in all, more than the {MAX_FILL_ACCOUNTS} a chain may fill"
                ));
        }
        let first = U256::from_be_slice(f.address.as_slice());
        let last = first + U256::from(f.accounts - 1);
        if last >= limit {
            return Err(format!(
                "{what}: {} accounts from this address pass the last address",
                f.accounts
            ));
        }
        if let Some((address, _)) = alloc
            .range(f.address..=Address::from_word(last.into()))
            .next()
        {
            return Err(format!(
                    "{what}: account {address} is also in alloc (a filled account is created by its entry)"
                ));
        }
        ranges.push((first, last));
    }
    ranges.sort_unstable();
    if let Some(w) = ranges.windows(2).find(|w| w[1].0 <= w[0].1) {
        return Err(format!(
            "storage_fill: the entries from {} and from {} overlap",
            Address::from_word(w[0].0.into()),
            Address::from_word(w[1].0.into())
        ));
    }
    Ok(())
}
