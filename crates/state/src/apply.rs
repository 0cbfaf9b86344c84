//! Pre-state + an executed block's final accounts → post-state.

use alloy_primitives::map::HashMap;
use gigagas_data::{PreAccount, PreState};
use revm::database::CacheState;

/// Applies the final accounts of an executed block (`cache`: the revm `State` cache after
/// every transaction and the post-execution operations were committed) to `pre`.
///
/// Accounts that no longer exist (self-destructed, or touched while empty after EIP-161) are
/// removed; a self-destructed account's storage is wiped before its new slots are written,
/// others overlay theirs; zero-valued slots are dropped. Block hashes
/// are carried over unchanged.
pub fn apply_changes(pre: &PreState, cache: &CacheState) -> PreState {
    let mut accounts: HashMap<_, _> = pre
        .accounts()
        .map(|(address, account)| (*address, account.clone()))
        .collect();
    for (address, cached) in &cache.accounts {
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
            entry.storage.clear();
        }
        for (slot, value) in &plain.storage {
            if value.is_zero() {
                entry.storage.remove(slot);
            } else {
                entry.storage.insert(*slot, *value);
            }
        }
        let mut info = plain.info.clone();
        if info.code.is_none() {
            info.code = cache.contracts.get(&info.code_hash).cloned().or_else(|| {
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
