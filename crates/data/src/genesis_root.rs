//! The genesis of a generated chain, recomputed from `chain.json`'s allocation: its state root
//! and (for a chain whose genesis header is rebuilt from the fields) its header, so that the
//! loader can check the stated `genesis_hash` against the allocation instead of trusting it.
//!
//! The state root is computed from the allocation and the `storage_fill` rules directly, not
//! from an expanded state: every account a fill entry creates with the same slot count has the
//! same storage, so each distinct (slots, period) storage trie is hashed once, its slots
//! streamed in hashed-key order in bounded passes ([`crate::SlotFill::for_each_sorted`]): the
//! memory does not grow with the slots.

use crate::genesis::{check_storage_fill, AllocAccount, StorageFill};
use crate::progress::Heartbeat;
use alloy_consensus::{proofs, Header, EMPTY_OMMER_ROOT_HASH};
use alloy_primitives::{keccak256, map::HashMap, Address, B256, U256};
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};
use rayon::prelude::*;
use revm::{bytecode::Bytecode, primitives::hardfork::SpecId};
use std::collections::BTreeMap;

/// Beneficiary of every header of a generated chain (the genesis included).
pub const GENERATED_COINBASE: Address =
    alloy_primitives::address!("0x00000000000000000000000000000000000c0b0e");

/// Base fee of the genesis block of a generated chain.
pub const GENESIS_BASE_FEE: u64 = 1_000_000_000;

/// The genesis header of a generated chain with fork `spec`, gas limit `block_gas`, seed
/// `seed` and genesis state root `state_root`. It follows the rules other clients apply to a
/// genesis (go-ethereum's `Genesis.ToBlock`): no parent beacon block root (zero hash), empty
/// withdrawals, no blob gas, empty requests from Prague, so that the chain can be exported as
/// a blockchain test or a genesis file and reach the same genesis hash elsewhere.
pub fn generated_genesis_header(
    spec: SpecId,
    block_gas: u64,
    seed: u64,
    state_root: B256,
) -> Header {
    Header {
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: GENERATED_COINBASE,
        number: 0,
        gas_limit: block_gas,
        timestamp: 0,
        mix_hash: keccak256([seed.to_be_bytes(), 0u64.to_be_bytes()].concat()),
        base_fee_per_gas: Some(GENESIS_BASE_FEE),
        withdrawals_root: Some(proofs::calculate_withdrawals_root(&[])),
        blob_gas_used: Some(0),
        excess_blob_gas: Some(0),
        parent_beacon_block_root: Some(B256::ZERO),
        requests_hash: spec
            .is_enabled_in(SpecId::PRAGUE)
            .then_some(alloy_eips::eip7685::EMPTY_REQUESTS_HASH),
        state_root,
        ..Default::default()
    }
}

/// Root of a trie keyed by 32-byte hashes, leaves given unsorted with their values' RLP.
fn hashed_root(mut leaves: Vec<(B256, Vec<u8>)>) -> B256 {
    if leaves.is_empty() {
        return EMPTY_ROOT_HASH;
    }
    leaves.par_sort_unstable_by_key(|a| a.0);
    let mut builder = HashBuilder::default();
    for (key, value) in leaves {
        builder.add_leaf(Nibbles::unpack(key), &value);
    }
    builder.root()
}

/// Storage root of listed slots (zero values are absent from the trie).
fn listed_storage_root(storage: &BTreeMap<U256, U256>) -> B256 {
    hashed_root(
        storage
            .iter()
            .filter(|(_, v)| !v.is_zero())
            .map(|(slot, value)| {
                (
                    keccak256(slot.to_be_bytes::<32>()),
                    alloy_rlp::encode(value),
                )
            })
            .collect(),
    )
}

/// Storage root of `n` slots `0..n`, slot `i` holding `(i mod period) + 1` (a `storage_fill`
/// account's storage), streamed in hashed-key order ([`crate::SlotFill::for_each_sorted`]):
/// memory of one pass, whatever `n` is.
fn filled_storage_root(n: u64, period: u64, progress: &Heartbeat) -> B256 {
    let mut builder = HashBuilder::default();
    let mut since = 0u64;
    let _ = crate::SlotFill { slots: n, period }.for_each_sorted::<std::convert::Infallible>(
        crate::FILL_PASS_SLOTS,
        &mut |key, value| {
            builder.add_leaf(Nibbles::unpack(key), &alloy_rlp::encode(value));
            since += 1;
            if since == 1 << 16 {
                progress.add(since);
                since = 0;
            }
            Ok(())
        },
    );
    progress.add(since);
    if n == 0 {
        EMPTY_ROOT_HASH
    } else {
        builder.root()
    }
}

fn account_leaf(address: &Address, account: TrieAccount) -> (B256, Vec<u8>) {
    (keccak256(address.as_slice()), alloy_rlp::encode(account))
}

/// The state root of the genesis state `alloc` plus `storage_fill` entries describe (the root
/// of `chain::genesis_state`, computed without expanding the fills). The entries are
/// checked first ([`check_storage_fill`]).
pub fn genesis_state_root(
    alloc: &BTreeMap<Address, AllocAccount>,
    fills: &[StorageFill],
) -> Result<B256, String> {
    check_storage_fill(alloc, fills)?;
    let total: u64 = fills.iter().map(|f| f.slots).fold(0, u64::saturating_add);
    let progress = Heartbeat::start(
        "hashing the genesis storage_fill for the state root".into(),
        total,
        "slots",
    );
    let mut leaves: Vec<(B256, Vec<u8>)> = alloc
        .par_iter()
        .map(|(address, a)| {
            let account = TrieAccount {
                nonce: a.nonce,
                balance: a.balance,
                storage_root: listed_storage_root(&a.storage),
                code_hash: Bytecode::new_raw(a.code.clone()).hash_slow(),
            };
            account_leaf(address, account)
        })
        .collect();
    // Each distinct storage of the fill accounts, hashed once.
    let mut distinct: Vec<(u64, u64)> = fills
        .iter()
        .flat_map(|f| {
            let (q, r) = (f.slots / f.accounts, f.slots % f.accounts);
            [(q, f.period), (q + u64::from(r > 0), f.period)]
        })
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    let roots: HashMap<(u64, u64), B256> = distinct
        .into_iter()
        .map(|(n, period)| ((n, period), filled_storage_root(n, period, &progress)))
        .collect();
    for f in fills {
        let code_hash = Bytecode::new_raw(f.code.clone()).hash_slow();
        let filled: Vec<(B256, Vec<u8>)> = (0..f.accounts)
            .into_par_iter()
            .map(|k| {
                let storage_root = roots
                    .get(&(f.slots_of(k), f.period))
                    .copied()
                    .unwrap_or_else(|| filled_storage_root(f.slots_of(k), f.period, &progress));
                let account = TrieAccount {
                    nonce: f.nonce,
                    balance: U256::ZERO,
                    storage_root,
                    code_hash,
                };
                account_leaf(&f.account(k), account)
            })
            .collect();
        leaves.extend(filled);
    }
    Ok(hashed_root(leaves))
}
