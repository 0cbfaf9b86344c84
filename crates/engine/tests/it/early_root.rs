//! The incremental root's inputs from a BAL (`touched_post_state`, `change_set`), built on
//! the pool, against the same built one entry after another (the code they replaced): equal
//! for any pre-state and any list, in address order or not, an account listed twice, a hot
//! account writing thousands of slots, accounts the block empties (EIP-161).

use alloy_eip7928::{
    AccountChanges, BalanceChange, BlockAccessIndex, CodeChange, NonceChange, SlotChanges,
    StorageChange,
};
use alloy_primitives::{keccak256, map::HashMap, Address, Bytes, U256};
use gigagas_data::{PreAccount, PreState, SlotFill};
use proptest::prelude::*;
use revm::state::AccountInfo;

/// The post-state as the pipeline built it before it ran on the pool.
fn touched_in_order(pre: &PreState, bal: &[AccountChanges]) -> PreState {
    let mut accounts: HashMap<_, _> = Default::default();
    for changes in bal {
        if !gigagas_data::chain::writes_anything(changes) {
            continue;
        }
        let before = pre.account(&changes.address);
        let mut info = before.map(|a| a.info.clone()).unwrap_or_default();
        if let Some(c) = changes.balance_changes.last() {
            info.balance = c.post_balance;
        }
        if let Some(c) = changes.nonce_changes.last() {
            info.nonce = c.new_nonce;
        }
        if let Some(c) = changes.code_changes.last() {
            info.code_hash = keccak256(&c.new_code);
        }
        let (storage, fill) = match before {
            Some(a) if info.is_empty() => (a.storage.clone(), a.fill),
            _ => Default::default(),
        };
        let account = PreAccount {
            info: before.map(|a| a.info.clone()).unwrap_or_default(),
            storage,
            fill,
        };
        accounts.insert(changes.address, account);
    }
    gigagas_data::chain::apply_bal(&mut accounts, &bal.to_vec());
    PreState::new(accounts, pre.block_hashes().clone())
}

/// The change set as the pipeline built it before it ran on the pool.
fn change_set_in_order(bal: &[AccountChanges], post: &PreState) -> gigagas_trie::ChangeSet {
    let mut changes = gigagas_trie::ChangeSet::default();
    for account in bal {
        if !gigagas_data::chain::writes_anything(account) {
            continue;
        }
        let info = post
            .account(&account.address)
            .map(|a| gigagas_trie::AccountInfo {
                nonce: a.info.nonce,
                balance: a.info.balance,
                code_hash: a.info.code_hash,
            });
        let storage = account
            .storage_changes
            .iter()
            .filter_map(|slot| {
                let last = slot.changes.last()?;
                Some((keccak256(slot.slot.to_be_bytes::<32>()), last.new_value))
            })
            .collect();
        changes.accounts.insert(
            keccak256(account.address),
            gigagas_trie::AccountChange {
                info,
                storage_wiped: false,
                storage,
            },
        );
    }
    changes
}

fn same_state(a: &PreState, b: &PreState) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.accounts().count(), b.accounts().count());
    for (address, x) in a.accounts() {
        let y = b.account(address);
        prop_assert!(y.is_some(), "{address} missing");
        let y = y.unwrap();
        prop_assert_eq!(&x.info, &y.info, "{}", address);
        prop_assert_eq!(&x.storage, &y.storage, "{}", address);
        prop_assert_eq!(x.fill, y.fill, "{}", address);
    }
    Ok(())
}

/// Addresses from a small set, so that lists name accounts of the pre-state (and, unsorted,
/// the same account twice).
fn address() -> impl Strategy<Value = Address> {
    (0u8..24).prop_map(Address::repeat_byte)
}

fn value() -> impl Strategy<Value = U256> {
    prop_oneof![
        Just(U256::ZERO),
        (1u64..4).prop_map(U256::from),
        any::<u64>().prop_map(U256::from)
    ]
}

fn pre_account() -> impl Strategy<Value = PreAccount> {
    (
        prop_oneof![Just(U256::ZERO), value()],
        prop_oneof![Just(0u64), 1u64..3],
        prop::collection::vec((0u64..40, value()), 0..6),
        prop::option::weighted(0.2, (1u64..30, 1u64..5)),
    )
        .prop_map(|(balance, nonce, slots, fill)| PreAccount {
            info: AccountInfo {
                balance,
                nonce,
                ..AccountInfo::default()
            },
            storage: slots.into_iter().map(|(s, v)| (U256::from(s), v)).collect(),
            fill: fill.map(|(slots, period)| SlotFill { slots, period }),
        })
}

fn entry() -> impl Strategy<Value = AccountChanges> {
    let idx = |i: u64| BlockAccessIndex::new(i);
    (
        address(),
        prop::collection::vec((0u64..40, prop::collection::vec(value(), 1..3)), 0..5),
        prop::collection::vec(value(), 0..2),
        prop::collection::vec(0u64..3, 0..2),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), 0..2),
    )
        .prop_map(
            move |(address, slots, balances, nonces, codes)| AccountChanges {
                address,
                storage_changes: slots
                    .into_iter()
                    .map(|(s, vs)| {
                        let changes = vs
                            .into_iter()
                            .enumerate()
                            .map(|(i, v)| StorageChange::new(idx(i as u64 + 1), v))
                            .collect();
                        SlotChanges::new(U256::from(s), changes)
                    })
                    .collect(),
                storage_reads: Vec::new(),
                balance_changes: balances
                    .into_iter()
                    .map(|v| BalanceChange::new(idx(1), v))
                    .collect(),
                nonce_changes: nonces
                    .into_iter()
                    .map(|n| NonceChange::new(idx(1), n))
                    .collect(),
                code_changes: codes
                    .into_iter()
                    .map(|c| CodeChange::new(idx(1), Bytes::from(c)))
                    .collect(),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Built on the pool or one entry after another: the same post-state and change set.
    #[test]
    fn early_root_inputs_equal_those_built_in_order(
        pre in prop::collection::vec((address(), pre_account()), 0..16),
        mut bal in prop::collection::vec(entry(), 0..40),
        sorted in any::<bool>(),
        hot in prop::option::weighted(0.2, 1000usize..2600),
    ) {
        if sorted {
            bal.sort_by_key(|a| a.address);
            bal.dedup_by_key(|a| a.address);
        }
        if let (Some(slots), Some(first)) = (hot, bal.first_mut()) {
            // A hot account: enough slots for its hashes to go to the pool.
            first.storage_changes = (0..slots as u64)
                .map(|s| {
                    SlotChanges::new(
                        U256::from(s * 7),
                        vec![StorageChange::new(BlockAccessIndex::new(1), U256::from(s))],
                    )
                })
                .collect();
        }
        let pre = PreState::new(pre.into_iter().collect(), Default::default());
        let ours = gigagas_engine::touched_post_state(&pre, &bal);
        let theirs = touched_in_order(&pre, &bal);
        same_state(&ours, &theirs)?;
        prop_assert_eq!(
            gigagas_engine::change_set(&bal, &ours),
            change_set_in_order(&bal, &theirs)
        );
    }
}
