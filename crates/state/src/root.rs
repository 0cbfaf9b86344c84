//! Merkle-Patricia roots with `alloy-trie`.

use alloy_primitives::{keccak256, map::HashMap, Address, B256, U256};
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use gigagas_data::PreState;
use rayon::prelude::*;

/// Two keys of a trie where one is a prefix of the other: a value would sit in a branch node,
/// which Ethereum's state and storage tries (fixed 32-byte keys) never need and `alloy-trie`'s
/// `HashBuilder` does not build.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trie key 0x{shorter} is a prefix of key 0x{longer}")]
pub struct PrefixKeyError {
    /// The shorter key, hex.
    pub shorter: String,
    /// The longer key, hex.
    pub longer: String,
}

/// Root of the trie holding `entries` (keys and values as raw bytes, keys distinct, in any
/// order). Keys must be prefix-free, as the keys of state and storage tries are.
pub fn trie_root(
    entries: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>,
) -> Result<B256, PrefixKeyError> {
    let mut sorted: Vec<(Vec<u8>, Vec<u8>)> = entries.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    if let Some(pair) = sorted.windows(2).find(|w| w[1].0.starts_with(&w[0].0)) {
        return Err(PrefixKeyError {
            shorter: alloy_primitives::hex::encode(&pair[0].0),
            longer: alloy_primitives::hex::encode(&pair[1].0),
        });
    }
    Ok(root_of_sorted(
        sorted.into_iter().map(|(k, v)| (Nibbles::unpack(&k), v)),
    ))
}

/// Root of entries already sorted by key, with prefix-free keys.
fn root_of_sorted(sorted: impl IntoIterator<Item = (Nibbles, Vec<u8>)>) -> B256 {
    let mut builder = HashBuilder::default();
    for (key, value) in sorted {
        builder.add_leaf(key, &value);
    }
    builder.root()
}

/// Root of a trie keyed by 32-byte hashes (fixed length, hence prefix-free).
fn hashed_root(mut leaves: Vec<(B256, Vec<u8>)>) -> B256 {
    leaves.sort_unstable_by_key(|a| a.0);
    root_of_sorted(leaves.into_iter().map(|(k, v)| (Nibbles::unpack(k), v)))
}

/// Storage root of one account: slots keyed by keccak(slot), values RLP-encoded; zero values
/// are absent from the trie.
pub fn storage_root(storage: &HashMap<U256, U256>) -> B256 {
    if storage.values().all(U256::is_zero) {
        return EMPTY_ROOT_HASH;
    }
    hashed_root(
        storage
            .iter()
            .filter(|(_, v)| !v.is_zero())
            .map(|(slot, value)| {
                let key = keccak256(slot.to_be_bytes::<32>());
                (key, alloy_rlp::encode(value))
            })
            .collect(),
    )
}

/// State root of `state`: accounts keyed by keccak(address); storage roots computed in
/// parallel (on the current rayon pool).
pub fn state_root(state: &PreState) -> B256 {
    let accounts: Vec<(&Address, &gigagas_data::PreAccount)> = state.accounts().collect();
    root_of_leaves(accounts.par_iter().map(account_leaf).collect())
}

/// [`state_root`] on the calling thread alone (the serial reference of the parallel root).
pub fn state_root_serial(state: &PreState) -> B256 {
    root_of_leaves(state.accounts().map(|a| account_leaf(&a)).collect())
}

/// One account's leaf of the account trie: keccak(address) and the RLP of the trie account
/// (its storage root computed here).
fn account_leaf(&(address, account): &(&Address, &gigagas_data::PreAccount)) -> (B256, Vec<u8>) {
    let trie_account = TrieAccount {
        nonce: account.info.nonce,
        balance: account.info.balance,
        storage_root: match account.fill {
            // A rule's slots are streamed in hashed order (bounded memory at any size).
            Some(_) => account.storage_root(),
            None => storage_root(&account.storage),
        },
        code_hash: account.info.code_hash,
    };
    (
        keccak256(address.as_slice()),
        alloy_rlp::encode(trie_account),
    )
}

fn root_of_leaves(leaves: Vec<(B256, Vec<u8>)>) -> B256 {
    if leaves.is_empty() {
        return EMPTY_ROOT_HASH;
    }
    hashed_root(leaves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_tries_have_the_empty_root() {
        assert_eq!(trie_root(Vec::new()), Ok(EMPTY_ROOT_HASH));
        assert_eq!(storage_root(&HashMap::default()), EMPTY_ROOT_HASH);
        let zeros: HashMap<U256, U256> = [(U256::from(1), U256::ZERO)].into_iter().collect();
        assert_eq!(storage_root(&zeros), EMPTY_ROOT_HASH);
    }

    #[test]
    fn prefix_keys_are_an_error_not_a_panic() {
        let err = trie_root(vec![
            (b"do".to_vec(), b"verb".to_vec()),
            (b"dog".to_vec(), b"puppy".to_vec()),
        ])
        .unwrap_err();
        assert_eq!(err.shorter, "646f");
    }

    #[test]
    fn storage_root_matches_alloy_trie_reference() {
        let storage: HashMap<U256, U256> = (1u64..50)
            .map(|i| (U256::from(i * 7919), U256::from(i * i)))
            .collect();
        let reference = alloy_trie::root::storage_root_unhashed(
            storage.iter().map(|(k, v)| (B256::from(*k), *v)),
        );
        assert_eq!(storage_root(&storage), reference);
    }
}
