//! BAL variants (`--bal full|keys|writes|none`): what a block's access list carries decides
//! what a node can read before execution and what its workers must read on demand. The
//! pipeline runs a block from any of them; every variant's result is verified the same way
//! (receipts equal to the sequential baseline's, the header's values, every root).
//!
//! On an in-memory state the first three execute identically (no read waits on a device);
//! they differ on the store (`--state disk`), warm and above all cold. Sizes of each variant
//! are measured by `gigagas-balstats` (`gigagas bal stats`); this module is how each one
//! *runs*.

use alloy_eip7928::BlockAccessList;
use alloy_primitives::{Address, U256};
use gigagas_data::PreState;
use revm::state::AccountInfo;

/// What a block's access list carries, and so how the state is read for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BalVariant {
    /// `keys` plus the pre-block value of every account and slot the block reads: the values
    /// come with the block (supplied before the clock starts, as a received block's bytes
    /// are), so no account or slot is read from the state while executing; the prefetch
    /// stage only reads the trie nodes the root will walk. Code is not part of it (read on
    /// demand through the code cache, counted).
    Full,
    /// EIP-7928 as specified (post-values per index plus read keys): every account and slot
    /// it names is prefetched (with the trie nodes on their paths), then the block runs in
    /// parallel.
    #[default]
    Keys,
    /// Post-values per index without read keys: the accounts and slots the writes name are
    /// prefetched; everything only read goes to the store on demand, on the workers'
    /// critical path (counted).
    Writes,
    /// No BAL (today's node): sequential execution that builds none, every read on demand;
    /// the write and the root start from execution's changes, not from a list.
    None,
}

impl BalVariant {
    /// Every variant, from the most the list carries to the least.
    pub const ALL: [Self; 4] = [Self::Full, Self::Keys, Self::Writes, Self::None];

    /// The name used by `--bal`, the JSON and the tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Keys => "keys",
            Self::Writes => "writes",
            Self::None => "none",
        }
    }

    /// Whether the block is run from a list at all (`false` only for [`Self::None`]).
    pub fn has_bal(self) -> bool {
        self != Self::None
    }

    /// The list the prefetch stage reads account and slot values for: the whole BAL
    /// (`keys`), its writes (`writes`), nothing (`full`: the values came with the block;
    /// `none`: there is no list).
    pub fn prefetch_values(
        self,
        bal: &BlockAccessList,
    ) -> Option<std::borrow::Cow<'_, BlockAccessList>> {
        match self {
            Self::Keys => Some(std::borrow::Cow::Borrowed(bal)),
            Self::Writes => Some(std::borrow::Cow::Owned(writes_only(bal))),
            Self::Full | Self::None => None,
        }
    }

    /// Whether the prefetch stage reads the trie nodes on the paths of the block's changes
    /// (every variant that names its writes before execution).
    pub fn prefetch_paths(self) -> bool {
        self.has_bal()
    }
}

impl std::fmt::Display for BalVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for BalVariant {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| format!("unknown BAL variant {s:?}: full, keys, writes or none"))
    }
}

/// The `writes` variant of `bal`: the accounts with at least one change, each with its
/// changes and without storage read keys (the list a node would receive under that variant).
pub fn writes_only(bal: &[alloy_eip7928::AccountChanges]) -> BlockAccessList {
    bal.iter()
        .filter(|a| gigagas_data::chain::writes_anything(a))
        .map(|a| alloy_eip7928::AccountChanges {
            storage_reads: Vec::new(),
            ..a.clone()
        })
        .collect()
}

/// The pre-block values a `full` list carries: every account and slot a block's BAL names,
/// as the state before the block holds them (an absent account did not exist, an absent slot
/// is 0). Code is left out (`code: None`, read through the code cache).
#[derive(Debug, Default, Clone)]
pub struct FullValues {
    /// Accounts by address (`None`: did not exist).
    pub accounts: Vec<(Address, Option<AccountInfo>)>,
    /// Slots by (address, slot).
    pub slots: Vec<((Address, U256), U256)>,
}

impl FullValues {
    /// Adds the values of everything `bal` names, from `pre` (the block's own pre-state);
    /// an account or slot already held keeps its value (inside a mega-block the unit's first
    /// block that names it saw the unit's pre-state).
    pub fn add(&mut self, bal: &BlockAccessList, pre: &PreState) {
        let known_accounts: std::collections::HashSet<Address> =
            self.accounts.iter().map(|(a, _)| *a).collect();
        let known_slots: std::collections::HashSet<(Address, U256)> =
            self.slots.iter().map(|(k, _)| *k).collect();
        for account in bal {
            let address = account.address;
            let held = pre.account(&address);
            if !known_accounts.contains(&address) {
                let info = held.map(|a| AccountInfo {
                    code: None,
                    ..a.info.clone()
                });
                self.accounts.push((address, info));
            }
            let slots = account
                .storage_changes
                .iter()
                .map(|c| c.slot)
                .chain(account.storage_reads.iter().copied());
            for slot in slots {
                if known_slots.contains(&(address, slot)) {
                    continue;
                }
                let value = held.map_or(U256::ZERO, |a| a.slot(&slot));
                self.slots.push(((address, slot), value));
            }
        }
    }

    /// Accounts plus slots held.
    pub fn len(&self) -> usize {
        self.accounts.len() + self.slots.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_is_refused() {
        for v in BalVariant::ALL {
            assert_eq!(v.name().parse::<BalVariant>(), Ok(v));
        }
        let err = "partial".parse::<BalVariant>().unwrap_err();
        assert!(err.contains("full, keys, writes or none"), "{err}");
        assert_eq!(BalVariant::default(), BalVariant::Keys);
    }

    #[test]
    fn writes_only_drops_reads_and_read_only_accounts() {
        use alloy_eip7928::{AccountChanges, BalanceChange};
        let reader = AccountChanges {
            address: Address::repeat_byte(1),
            storage_reads: vec![U256::from(7)],
            ..Default::default()
        };
        let writer = AccountChanges {
            address: Address::repeat_byte(2),
            storage_reads: vec![U256::from(8)],
            balance_changes: vec![BalanceChange {
                block_access_index: alloy_eip7928::BlockAccessIndex(1),
                post_balance: U256::from(5),
            }],
            ..Default::default()
        };
        let writes = writes_only(&[reader, writer]);
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].address, Address::repeat_byte(2));
        assert!(writes[0].storage_reads.is_empty());
        assert_eq!(writes[0].balance_changes.len(), 1);
    }
}
