//! Pre-state + an executed block's final accounts → post-state.

use alloy_primitives::map::HashMap;
use gigagas_data::FinalAccounts;
use gigagas_data::{PreAccount, PreState};

/// Applies the final accounts of an executed block (`cache`: the revm `State` cache after
/// every transaction and the post-execution operations were committed) to `pre`.
///
/// Accounts that no longer exist (self-destructed, or touched while empty after EIP-161) are
/// removed; a self-destructed account's storage is wiped before its new slots are written,
/// others overlay theirs (`PreAccount::set_slot`: a value the account's rule or zero already
/// gives is not stored). Block hashes
/// are carried over unchanged.
pub fn apply_changes(pre: &PreState, cache: &(impl FinalAccounts + ?Sized)) -> PreState {
    let mut accounts: HashMap<_, _> = pre
        .accounts()
        .map(|(address, account)| (*address, account.clone()))
        .collect();
    for (address, cached) in cache.final_accounts() {
        if cached.status.is_not_modified() {
            continue;
        }
        let Some(plain) = &cached.account else {
            accounts.remove(address);
            continue;
        };
        let entry = accounts.entry(*address).or_insert_with(PreAccount::default);
        // Only a self-destruct wipes storage. (`is_storage_known` is also true for an
        // account revm first saw without nonce and code, which may still hold storage.)
        if cached.status.was_destroyed() {
            entry.clear_storage();
        }
        for (slot, value) in &plain.storage {
            entry.set_slot(*slot, *value);
        }
        let mut info = plain.info.clone();
        if info.code.is_none() {
            info.code = cache.created_code(&info.code_hash).cloned().or_else(|| {
                entry
                    .info
                    .code
                    .clone()
                    .filter(|_| entry.info.code_hash == info.code_hash)
            });
        }
        entry.info = info;
    }
    PreState::new(accounts, pre.block_hashes().clone())
}

/// The first difference between two states, named by account (and slot), or `None` when they
/// are the same state: the same accounts with the same nonce, balance and code hash, and every
/// slot the same value (read through `PreAccount::slot`, so a value held as a rule's or listed
/// compares alike; a rule-filled account must have the same rule in both). Equal states have
/// equal roots; this names where two that should be equal are not, without hashing either.
pub fn first_difference(a: &PreState, b: &PreState) -> Option<String> {
    let mut addresses: Vec<_> = a.accounts().map(|(x, _)| *x).collect();
    addresses.extend(b.accounts().map(|(x, _)| *x));
    addresses.sort_unstable();
    addresses.dedup();
    for address in addresses {
        let (x, y) = match (a.account(&address), b.account(&address)) {
            (Some(x), Some(y)) => (x, y),
            (x, _) => {
                let (has, lacks) = if x.is_some() {
                    ("first", "second")
                } else {
                    ("second", "first")
                };
                return Some(format!(
                    "account {address} exists in the {has} state, not in the {lacks}"
                ));
            }
        };
        let (i, j) = (&x.info, &y.info);
        if (i.nonce, i.balance, i.code_hash) != (j.nonce, j.balance, j.code_hash) {
            return Some(format!(
                "account {address}: nonce {} / {}, balance {} / {}, code hash {} / {}",
                i.nonce, j.nonce, i.balance, j.balance, i.code_hash, j.code_hash
            ));
        }
        if x.fill != y.fill {
            return Some(format!(
                "account {address}: storage rule {:?} / {:?}",
                x.fill, y.fill
            ));
        }
        let mut slots: Vec<_> = x.storage.keys().chain(y.storage.keys()).collect();
        slots.sort_unstable();
        slots.dedup();
        if let Some(slot) = slots.into_iter().find(|s| x.slot(s) != y.slot(s)) {
            return Some(format!(
                "account {address} slot {slot}: {} / {}",
                x.slot(slot),
                y.slot(slot)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{Address, U256};
    use gigagas_data::SlotFill;
    use proptest::prelude::*;
    use revm::state::AccountInfo;
    use std::sync::Arc;

    /// The rule's account and the same storage listed slot by slot, after the same writes.
    fn pair(fill: SlotFill, writes: &[(u64, u64)]) -> (PreAccount, PreAccount) {
        let info = AccountInfo {
            nonce: 1,
            ..Default::default()
        };
        let mut lazy = PreAccount {
            info: info.clone(),
            fill: Some(fill),
            ..Default::default()
        };
        let mut listed = PreAccount {
            info,
            storage: (0..fill.slots)
                .map(|i| (U256::from(i), fill.value(&U256::from(i))))
                .collect(),
            fill: None,
        };
        for &(slot, value) in writes {
            lazy.set_slot(U256::from(slot), U256::from(value));
            listed.set_slot(U256::from(slot), U256::from(value));
        }
        (lazy, listed)
    }

    fn state(account: PreAccount) -> PreState {
        let accounts = [(Address::repeat_byte(0xd0), account)]
            .into_iter()
            .collect();
        PreState::new(accounts, Arc::default())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A rule-filled storage reads, hashes and roots like the same storage listed slot by
        /// slot, after any writes (zeroing rule slots, new slots, values equal to the rule's),
        /// whatever the pass size of its sorted stream.
        #[test]
        fn a_rule_filled_storage_equals_its_listed_expansion(
            slots in 1u64..600,
            period in 1u64..6,
            writes in proptest::collection::vec((0u64..800, 0u64..4), 0..60),
            pass in 1usize..700,
        ) {
            let fill = SlotFill { slots, period };
            let (lazy, listed) = pair(fill, &writes);
            for s in 0..800u64 {
                prop_assert_eq!(lazy.slot(&U256::from(s)), listed.slot(&U256::from(s)));
            }
            prop_assert_eq!(lazy.has_storage(), listed.has_storage());
            prop_assert_eq!(lazy.storage_root(), crate::storage_root(&listed.storage));
            let (a, b) = (state(lazy.clone()), state(listed.clone()));
            prop_assert_eq!(crate::state_root(&a), crate::state_root(&b));
            // Any pass size gives the same hashed order and values.
            let mut one = Vec::new();
            fill.for_each_sorted::<()>(usize::MAX, &mut |k, v| { one.push((k, v)); Ok(()) }).unwrap();
            let mut many = Vec::new();
            fill.for_each_sorted::<()>(pass, &mut |k, v| { many.push((k, v)); Ok(()) }).unwrap();
            prop_assert_eq!(&one, &many);
            prop_assert!(one.windows(2).all(|w| w[0].0 < w[1].0));
            prop_assert_eq!(one.len() as u64, slots);
        }
    }

    #[test]
    fn first_difference_names_the_account_and_slot() {
        let fill = SlotFill {
            slots: 10,
            period: 3,
        };
        let (a, _) = pair(fill, &[(2, 9)]);
        let (b, _) = pair(fill, &[(2, 9)]);
        assert_eq!(first_difference(&state(a.clone()), &state(b)), None);
        let (c, _) = pair(fill, &[(2, 9), (4, 0)]);
        let what = first_difference(&state(a.clone()), &state(c)).unwrap();
        assert!(
            what.contains("slot 4") && what.contains(&Address::repeat_byte(0xd0).to_string()),
            "{what}"
        );
        // A value held as the rule's or written equal to it is the same state.
        let (d, _) = pair(fill, &[(2, 9), (5, 3)]);
        assert_eq!(first_difference(&state(a.clone()), &state(d)), None);
        let empty = PreState::new(Default::default(), Arc::default());
        assert!(first_difference(&state(a), &empty)
            .unwrap()
            .contains("not in the second"));
    }
}
