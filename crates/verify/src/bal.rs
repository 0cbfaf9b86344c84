//! Checks of one transaction's state changes against the block access list.

use alloy_eip7928::{AccountChanges, BalDiff};
use alloy_primitives::{Address, U256};
use revm::state::{
    bal::{Bal, BalWrites, BlockAccessIndex},
    AccountInfo, EvmState,
};
use std::fmt;

/// The item of an account a BAL entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalItem {
    /// The account itself (it must be listed).
    Account,
    /// Balance.
    Balance,
    /// Nonce.
    Nonce,
    /// Code.
    Code,
    /// One storage slot.
    Storage(U256),
}

impl fmt::Display for BalItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Account => f.write_str("account"),
            Self::Balance => f.write_str("balance"),
            Self::Nonce => f.write_str("nonce"),
            Self::Code => f.write_str("code"),
            Self::Storage(slot) => write!(f, "storage slot {slot:#x}"),
        }
    }
}

/// How a BAL disagrees with what execution did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BalViolation {
    /// Execution accessed an account or slot the BAL does not list.
    #[error("BAL index {index}: {item} of {address} was accessed but the BAL does not list it")]
    MissingAccess {
        /// Block access index (0 = pre-execution, i+1 = tx i, n+1 = post-execution).
        index: u64,
        /// Account.
        address: Address,
        /// What is missing.
        item: BalItem,
    },
    /// Execution wrote a value the BAL does not state at this index (or a different one).
    #[error("BAL index {index}: {item} of {address}: BAL says {bal}, execution wrote {actual}")]
    WrongWrite {
        /// Block access index.
        index: u64,
        /// Account.
        address: Address,
        /// Field or slot.
        item: BalItem,
        /// The BAL's entry at this index ("no write" when absent).
        bal: String,
        /// What execution wrote ("no write" when it left the item unchanged).
        actual: String,
    },
    /// The BAL is not in canonical EIP-7928 form (ordering, duplicates, index range).
    #[error("BAL is malformed: {0}")]
    Malformed(String),
    /// The BAL rebuilt from the executed transactions differs from the given one.
    #[error("BAL rebuilt from execution differs from the given BAL: {0}")]
    RebuiltDiffers(String),
}

impl BalViolation {
    /// The block access index the violation is at, when it concerns one.
    pub fn index(&self) -> Option<u64> {
        match self {
            Self::MissingAccess { index, .. } | Self::WrongWrite { index, .. } => Some(*index),
            _ => None,
        }
    }
}

fn write_at<T: PartialEq + Clone>(writes: &BalWrites<T>, index: BlockAccessIndex) -> Option<&T> {
    writes
        .writes
        .binary_search_by_key(&index, |(i, _)| *i)
        .ok()
        .map(|pos| &writes.writes[pos].1)
}

/// Number of writes (balance, nonce, code and storage entries) the BAL lists at each index
/// `0..=max_index`. Used to prove that a transaction made every write the BAL claims for it.
pub fn count_writes_per_index(bal: &Bal, max_index: u64) -> Vec<u32> {
    let mut counts = vec![0u32; max_index as usize + 1];
    let mut add = |i: BlockAccessIndex| {
        if let Some(c) = counts.get_mut(i.0 as usize) {
            *c += 1;
        }
    };
    for (_, account) in &bal.accounts {
        account.nonce.writes.iter().for_each(|(i, _)| add(*i));
        account.balance.writes.iter().for_each(|(i, _)| add(*i));
        account.code.writes.iter().for_each(|(i, _)| add(*i));
        for writes in account.storage.storage.values() {
            writes.writes.iter().for_each(|(i, _)| add(*i));
        }
    }
    counts
}

/// Compares one item's write by the transaction (`actual`, `None` = unchanged) with the BAL's
/// entry at `index`.
fn compare<K: PartialEq + fmt::Debug>(
    index: BlockAccessIndex,
    address: &Address,
    item: BalItem,
    actual: Option<K>,
    bal: Option<K>,
    matched: &mut u32,
) -> Result<(), BalViolation> {
    if actual != bal {
        let show = |v: Option<K>| v.map_or_else(|| "no write".to_owned(), |v| format!("{v:?}"));
        return Err(BalViolation::WrongWrite {
            index: index.0,
            address: *address,
            item,
            bal: show(bal),
            actual: show(actual),
        });
    }
    *matched += u32::from(actual.is_some());
    Ok(())
}

/// Checks one transaction's state changes (`diff`, as returned by revm's `transact`) against
/// the BAL at `index`: every account and slot it accessed is listed, every value it wrote is
/// the BAL's post-value at `index`, and the BAL lists no write at `index` that it did not make
/// (`listed_writes` = the BAL's write count at `index`, see [`count_writes_per_index`]).
///
/// The rules are revm's BAL builder's (`AccountBal::update`): an item is written when its
/// post-value differs from its value before the transaction (a no-op write is a read), and a
/// self-destructed account's info and touched slots are written as empty/zero. The mutation
/// tests check that both sides agree.
pub fn check_tx_against_bal(
    bal: &Bal,
    index: BlockAccessIndex,
    diff: &EvmState,
    listed_writes: u32,
) -> Result<(), BalViolation> {
    let mut matched = 0u32;
    let empty = AccountInfo::default();
    for (address, account) in diff {
        let Some(listed) = bal.accounts.get(address) else {
            return Err(BalViolation::MissingAccess {
                index: index.0,
                address: *address,
                item: BalItem::Account,
            });
        };
        let destroyed = account.is_selfdestructed_locally();
        let original = account.original_info();
        let present = if destroyed { &empty } else { &account.info };
        let changed = |differs: bool| differs.then_some(());
        compare(
            index,
            address,
            BalItem::Balance,
            changed(original.balance != present.balance).map(|()| present.balance),
            write_at(&listed.balance, index).copied(),
            &mut matched,
        )?;
        compare(
            index,
            address,
            BalItem::Nonce,
            changed(original.nonce != present.nonce).map(|()| present.nonce),
            write_at(&listed.nonce, index).copied(),
            &mut matched,
        )?;
        compare(
            index,
            address,
            BalItem::Code,
            changed(original.code_hash != present.code_hash).map(|()| present.code_hash),
            write_at(&listed.code, index).map(|(hash, _)| *hash),
            &mut matched,
        )?;
        for (slot, value) in &account.storage {
            let Some(listed_slot) = listed.storage.storage.get(slot) else {
                return Err(BalViolation::MissingAccess {
                    index: index.0,
                    address: *address,
                    item: BalItem::Storage(*slot),
                });
            };
            let post = if destroyed {
                U256::ZERO
            } else {
                value.present_value
            };
            compare(
                index,
                address,
                BalItem::Storage(*slot),
                changed(value.original_value != post).map(|()| post),
                write_at(listed_slot, index).copied(),
                &mut matched,
            )?;
        }
    }
    if matched != listed_writes {
        return Err(extra_write(bal, index, diff));
    }
    Ok(())
}

/// Finds a write the BAL lists at `index` that the transaction did not make (slow path, only
/// taken when the counts disagree).
fn extra_write(bal: &Bal, index: BlockAccessIndex, diff: &EvmState) -> BalViolation {
    let touched = |address: &Address| diff.get(address);
    for (address, account) in &bal.accounts {
        let violation = |item: BalItem, bal: String| BalViolation::WrongWrite {
            index: index.0,
            address: *address,
            item,
            bal,
            actual: "no write".into(),
        };
        let exec = touched(address);
        let changed_info = exec.map(|a| (a.original_info(), a.info.clone()));
        if let Some(v) = write_at(&account.balance, index) {
            if changed_info
                .as_ref()
                .is_none_or(|(o, n)| o.balance == n.balance)
            {
                return violation(BalItem::Balance, v.to_string());
            }
        }
        if let Some(v) = write_at(&account.nonce, index) {
            if changed_info
                .as_ref()
                .is_none_or(|(o, n)| o.nonce == n.nonce)
            {
                return violation(BalItem::Nonce, v.to_string());
            }
        }
        if let Some(v) = write_at(&account.code, index) {
            if changed_info
                .as_ref()
                .is_none_or(|(o, n)| o.code_hash == n.code_hash)
            {
                return violation(BalItem::Code, v.0.to_string());
            }
        }
        for (slot, writes) in &account.storage.storage {
            if let Some(v) = write_at(writes, index) {
                let wrote = exec
                    .and_then(|a| a.storage.get(slot))
                    .is_some_and(|s| s.is_changed() || exec.is_some_and(|a| a.is_selfdestructed()));
                if !wrote {
                    return violation(BalItem::Storage(*slot), format!("{v:#x}"));
                }
            }
        }
    }
    BalViolation::WrongWrite {
        index: index.0,
        address: Address::ZERO,
        item: BalItem::Account,
        bal: "more writes than execution made".into(),
        actual: "fewer writes".into(),
    }
}

/// Describes the first difference between two BALs — account, field or slot, block access
/// index (and the transaction it belongs to), both values — followed by alloy's summary of all
/// differences; `None` when they are equal.
pub fn bal_divergence(expected: &[AccountChanges], actual: &[AccountChanges]) -> Option<String> {
    let diff = BalDiff::between(expected, actual);
    if diff.is_empty() && expected == actual {
        return None;
    }
    let first = first_difference(expected, actual)
        .map(|f| format!("first difference: {f}; "))
        .unwrap_or_default();
    Some(format!("{first}expected (left) vs rebuilt (right): {diff}"))
}

/// "index i (tx i-1)" — index 0 is pre-execution; the last index of a block is its
/// post-execution, which only the block's transaction count tells apart from a transaction.
fn at(index: u64) -> String {
    match index {
        0 => "index 0 (pre-execution)".into(),
        i => format!("index {i} (tx {} or post-execution)", i - 1),
    }
}

/// The first (account, item, index) at which two BALs differ, in canonical order.
fn first_difference(expected: &[AccountChanges], actual: &[AccountChanges]) -> Option<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let by_address = |l: &[AccountChanges]| -> BTreeMap<Address, AccountChanges> {
        l.iter().map(|a| (a.address, a.clone())).collect()
    };
    let (e, a) = (by_address(expected), by_address(actual));
    let addresses: BTreeSet<Address> = e.keys().chain(a.keys()).copied().collect();
    // First index at which two (index, value) lists differ, with both values.
    fn lists<T: PartialEq + std::fmt::Debug>(
        left: Vec<(u64, T)>,
        right: Vec<(u64, T)>,
    ) -> Option<(u64, String, String)> {
        let l: BTreeMap<u64, T> = left.into_iter().collect();
        let r: BTreeMap<u64, T> = right.into_iter().collect();
        let indices: BTreeSet<u64> = l.keys().chain(r.keys()).copied().collect();
        indices.into_iter().find_map(|i| {
            let (x, y) = (l.get(&i), r.get(&i));
            (x != y).then(|| {
                let show =
                    |v: Option<&T>| v.map_or_else(|| "no write".into(), |v| format!("{v:?}"));
                (i, show(x), show(y))
            })
        })
    }
    for address in addresses {
        let (x, y) = match (e.get(&address), a.get(&address)) {
            (Some(_), None) => return Some(format!("account {address} only in the expected BAL")),
            (None, Some(_)) => return Some(format!("account {address} only in the rebuilt BAL")),
            (Some(x), Some(y)) if x != y => (x, y),
            _ => continue,
        };
        let slots: BTreeSet<_> = x
            .storage_changes
            .iter()
            .chain(&y.storage_changes)
            .map(|s| s.slot)
            .collect();
        for slot in slots {
            let writes = |c: &AccountChanges| -> Vec<(u64, U256)> {
                c.storage_changes
                    .iter()
                    .filter(|s| s.slot == slot)
                    .flat_map(|s| {
                        s.changes
                            .iter()
                            .map(|w| (w.block_access_index.0, w.new_value))
                    })
                    .collect()
            };
            if let Some((i, l, r)) = lists(writes(x), writes(y)) {
                return Some(format!(
                    "account {address} storage slot {slot:#x} at {}: expected {l}, rebuilt {r}",
                    at(i)
                ));
            }
        }
        let balance = |c: &AccountChanges| -> Vec<(u64, U256)> {
            c.balance_changes
                .iter()
                .map(|b| (b.block_access_index.0, b.post_balance))
                .collect()
        };
        let nonce = |c: &AccountChanges| -> Vec<(u64, u64)> {
            c.nonce_changes
                .iter()
                .map(|n| (n.block_access_index.0, n.new_nonce))
                .collect()
        };
        let code = |c: &AccountChanges| -> Vec<(u64, alloy_primitives::B256)> {
            c.code_changes
                .iter()
                .map(|k| {
                    (
                        k.block_access_index.0,
                        alloy_primitives::keccak256(&k.new_code),
                    )
                })
                .collect()
        };
        if let Some((i, l, r)) = lists(balance(x), balance(y)) {
            return Some(format!(
                "account {address} balance at {}: expected {l}, rebuilt {r}",
                at(i)
            ));
        }
        if let Some((i, l, r)) = lists(nonce(x), nonce(y)) {
            return Some(format!(
                "account {address} nonce at {}: expected {l}, rebuilt {r}",
                at(i)
            ));
        }
        if let Some((i, l, r)) = lists(code(x), code(y)) {
            return Some(format!(
                "account {address} code (hash) at {}: expected {l}, rebuilt {r}",
                at(i)
            ));
        }
        let reads = |c: &AccountChanges| c.storage_reads.iter().copied().collect::<BTreeSet<_>>();
        let (rx, ry) = (reads(x), reads(y));
        if let Some(slot) = rx.symmetric_difference(&ry).next() {
            let side = if rx.contains(slot) {
                "expected"
            } else {
                "rebuilt"
            };
            return Some(format!(
                "account {address} storage slot {slot:#x}: a read listed only in the {side} BAL"
            ));
        }
        return Some(format!(
            "account {address}: entries differ in order or form"
        ));
    }
    None
}

#[cfg(test)]
mod divergence_tests {
    use super::*;
    use alloy_eip7928::{BalanceChange, BlockAccessIndex, SlotChanges, StorageChange};

    fn account(slot_value: u64, balance: u64) -> AccountChanges {
        AccountChanges {
            address: Address::repeat_byte(0x11),
            storage_changes: vec![SlotChanges {
                slot: U256::from(7),
                changes: vec![StorageChange {
                    block_access_index: BlockAccessIndex(3),
                    new_value: U256::from(slot_value),
                }],
            }],
            balance_changes: vec![BalanceChange {
                block_access_index: BlockAccessIndex(1),
                post_balance: U256::from(balance),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn names_account_slot_index_and_both_values() {
        assert_eq!(bal_divergence(&[account(1, 5)], &[account(1, 5)]), None);
        let what = bal_divergence(&[account(1, 5)], &[account(2, 5)]).unwrap();
        assert!(
            what.contains("0x1111111111111111111111111111111111111111")
                && what.contains("slot 0x7")
                && what.contains("index 3 (tx 2")
                && what.contains("expected 1")
                && what.contains("rebuilt 2"),
            "{what}"
        );
        let what = bal_divergence(&[account(1, 5)], &[account(1, 6)]).unwrap();
        assert!(what.contains("balance at index 1 (tx 0"), "{what}");
        let what = bal_divergence(&[account(1, 5)], &[]).unwrap();
        assert!(what.contains("only in the expected BAL"), "{what}");
    }
}
