//! BAL size and composition: hand-built lists with hand-computed counts and sizes, real
//! mainnet blocks (the bundled sample) against their own `size` field and hand-derived counts,
//! and the variants' order (writes ≤ keys ≤ full) as a property.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_eip7928::{
    compute_block_access_list_hash, AccountChanges, BalanceChange, BlockAccessIndex,
    BlockAccessList, CodeChange, NonceChange, SlotChanges, StorageChange,
};
use alloy_primitives::{keccak256, map::HashMap, Address, Bytes, U256};
use gigagas_balstats::{
    account_sizes, bal_rlp, block_rlp_len, block_stats, dataset_stats, full_rlp, full_variant,
    writes_variant, BalSource, Counts, Size,
};
use gigagas_data::{DataSource, PreAccount, PreState};
use proptest::prelude::*;
use std::sync::Arc;

fn idx(i: u64) -> BlockAccessIndex {
    BlockAccessIndex(i)
}

fn addr(b: u8) -> Address {
    Address::repeat_byte(b)
}

/// A: two slots written (one by two transactions), three read, a balance and a nonce change;
/// B: one slot read; C: touched only; D: new code of two bytes.
fn small_bal() -> BlockAccessList {
    vec![
        AccountChanges {
            address: addr(0xa),
            storage_changes: vec![
                SlotChanges::new(
                    U256::from(1),
                    vec![
                        StorageChange::new(idx(1), U256::from(5)),
                        StorageChange::new(idx(2), U256::from(6)),
                    ],
                ),
                SlotChanges::new(U256::from(2), vec![StorageChange::new(idx(1), U256::ZERO)]),
            ],
            storage_reads: vec![U256::from(3), U256::from(4), U256::from(5)],
            balance_changes: vec![BalanceChange::new(idx(1), U256::from(100))],
            nonce_changes: vec![NonceChange::new(idx(1), 1)],
            code_changes: vec![],
        },
        AccountChanges {
            storage_reads: vec![U256::from(7)],
            ..AccountChanges::new(addr(0xb))
        },
        AccountChanges::new(addr(0xc)),
        AccountChanges {
            code_changes: vec![CodeChange::new(idx(2), Bytes::from_static(&[0x60, 0x00]))],
            ..AccountChanges::new(addr(0xd))
        },
    ]
}

#[test]
fn counts_of_a_small_list_are_the_hand_counted_ones() {
    let counts = Counts::of(&small_bal());
    assert_eq!(
        counts,
        Counts {
            accounts: 4,
            accounts_changed: 2,
            accounts_read_only: 2,
            storage_slots_written: 2,
            storage_writes: 3,
            storage_reads: 4,
            balance_changes: 1,
            nonce_changes: 1,
            code_changes: 1,
            code_change_bytes: 2,
        }
    );
}

#[test]
fn sizes_of_a_small_list_are_the_hand_computed_ones() {
    let bal = small_bal();
    let rlp = bal_rlp(&bal);
    assert_eq!(rlp, alloy_rlp::encode(&bal));
    assert_eq!(keccak256(&rlp), compute_block_access_list_hash(&bal));
    // C, touched only: [address (0x94 + 20 bytes), five empty lists] = 26 bytes of payload,
    // one byte of list header.
    let sizes = account_sizes(&bal);
    let c = sizes.iter().find(|s| s.address == addr(0xc)).unwrap();
    assert_eq!(c.rlp_bytes, 27);
    // B: the same plus one read key (0x07, one byte) inside its list (one byte of header).
    let b = sizes.iter().find(|s| s.address == addr(0xb)).unwrap();
    assert_eq!(b.rlp_bytes, 28);
    // Largest first: A, the only account with storage writes.
    assert_eq!(sizes[0].address, addr(0xa));
    assert_eq!((sizes[0].storage_writes, sizes[0].storage_reads), (3, 3));
    assert_eq!(
        sizes.iter().map(|s| s.rlp_bytes).sum::<u64>() + 2,
        rlp.len() as u64,
        "the accounts' entries plus the outer list header (2 bytes: payload > 55) are the list"
    );

    // writes: A and D only, without read keys.
    let writes = writes_variant(&bal);
    assert_eq!(
        writes.iter().map(|a| a.address).collect::<Vec<_>>(),
        [addr(0xa), addr(0xd)]
    );
    assert!(writes.iter().all(|a| a.storage_reads.is_empty()));
    // A loses three one-byte read keys and their list's content: 3 bytes.
    let a_keys = sizes[0].rlp_bytes;
    assert_eq!(account_sizes(&writes)[0].rlp_bytes, a_keys - 3);

    // full against a pre-state where A exists (balance 1000, nonce 7, slot 3 = 9, slot 1 = 0x42)
    // and nothing else does.
    let mut storage = HashMap::default();
    storage.insert(U256::from(3), U256::from(9));
    storage.insert(U256::from(1), U256::from(0x42));
    let mut accounts = HashMap::default();
    accounts.insert(
        addr(0xa),
        PreAccount {
            info: revm::state::AccountInfo {
                balance: U256::from(1000),
                nonce: 7,
                ..Default::default()
            },
            storage,
            fill: None,
        },
    );
    let pre = PreState::new(accounts, Arc::new(HashMap::default()));
    let full = full_variant(&bal, &pre);
    let a = &full[0];
    assert_eq!(
        a.storage_reads
            .iter()
            .map(|s| (s.slot, s.value))
            .collect::<Vec<_>>(),
        [
            (U256::from(3), U256::from(9)),
            (U256::from(4), U256::ZERO),
            (U256::from(5), U256::ZERO)
        ]
    );
    assert_eq!(
        a.storage_write_pre
            .iter()
            .map(|s| (s.slot, s.value))
            .collect::<Vec<_>>(),
        [
            (U256::from(1), U256::from(0x42)),
            (U256::from(2), U256::ZERO)
        ]
    );
    assert_eq!((a.pre_balance, a.pre_nonce), (U256::from(1000), 7));
    assert!(a.pre_code_hash.is_empty(), "no code: empty code hash");
    // C in full: its 26 bytes of payload, an empty list of written slots' values, and three
    // one-byte zero fields (balance, nonce, code hash): 30 bytes of payload, 31 in all.
    assert_eq!(alloy_rlp::encode(&full[2]).len(), 31);
    let keys = rlp.len();
    assert!(bal_rlp(&writes).len() < keys);
    assert!(full_rlp(&full).len() > keys);
}

#[test]
fn sizes_compress_and_count_what_they_are_given() {
    let rlp = bal_rlp(&small_bal());
    let size = Size::of(&rlp, 1, "keys").unwrap();
    assert_eq!(size.rlp_bytes, rlp.len() as u64);
    assert_eq!(
        snap::raw::Decoder::new()
            .decompress_vec(&snap::raw::Encoder::new().compress_vec(&rlp).unwrap())
            .unwrap(),
        rlp
    );
    assert!(size.snappy_bytes > 0 && size.zstd_bytes > 0);
    // 4 KiB of zeros compress to a small fraction with both codecs.
    let zeros = Size::of(&[0u8; 4096], 1, "keys").unwrap();
    assert!(
        zeros.snappy_bytes < 400 && zeros.zstd_bytes < 100,
        "{zeros:?}"
    );
}

fn embedded() -> (DataSource, gigagas_data::Dataset) {
    let source = DataSource::embedded().unwrap();
    let dataset = gigagas_data::load(&source).unwrap();
    (source, dataset)
}

/// The block RLP each block's JSON states (`size`, from the node) is the length of our
/// encoding for every block whose ommer headers we have (all but three of the sample).
#[test]
fn block_rlp_length_equals_the_nodes_size_field() {
    let (source, dataset) = embedded();
    let mut checked = 0;
    for block in &dataset.blocks {
        let json: serde_json::Value = serde_json::from_slice(
            &source
                .read(&format!("blocks/{}/block.json", block.number()))
                .unwrap(),
        )
        .unwrap();
        let size = json["size"].as_str().unwrap().trim_start_matches("0x");
        let size = u64::from_str_radix(size, 16).unwrap();
        let (len, missing) = block_rlp_len(block);
        if block.ommers.is_empty() {
            assert_eq!(missing, 0);
            assert_eq!(len, size, "block {}", block.number());
            checked += 1;
        } else {
            assert_eq!(missing, block.ommers.len());
            assert!(len < size, "block {}: ommers left out", block.number());
        }
    }
    assert_eq!(checked, 47, "47 of the 50 blocks have no ommers");
}

/// Block 46147 (Frontier, the first transaction on mainnet): one plain transfer to an account
/// that did not exist. Its BAL: the sender (balance and nonce at index 1), the new recipient
/// (balance at 1), the miner (fee at 1, block reward at 2) — counted by hand.
#[test]
fn first_mainnet_transfer_has_the_hand_counted_bal() {
    let (_, dataset) = embedded();
    let block = dataset.blocks.iter().find(|b| b.number() == 46147).unwrap();
    let case = gigagas_engine::prepare(block).unwrap();
    let bal = &case.baseline.access.bal;
    let stats = block_stats(block, bal, BalSource::Built, case.fork()).unwrap();
    assert_eq!(stats.fork, "Frontier");
    assert_eq!(
        stats.counts,
        Counts {
            accounts: 3,
            accounts_changed: 3,
            accounts_read_only: 0,
            storage_slots_written: 0,
            storage_writes: 0,
            storage_reads: 0,
            balance_changes: 4,
            nonce_changes: 1,
            code_changes: 0,
            code_change_bytes: 0,
        }
    );
    assert_eq!(stats.keys.rlp_bytes, alloy_rlp::encode(bal).len() as u64);
    // Nothing was only read: the writes variant is the BAL.
    assert_eq!(stats.writes.rlp_bytes, stats.keys.rlp_bytes);
    // full adds to each account's payload an empty list (the written slots' values: none) and
    // three fields. The sender's and the miner's pre-block balances (0x6c6b935b8bbd400000 and
    // 0xf3426785a8ab466000 in the pre-state JSON) are 9 bytes, 10 encoded; nonce 0 and the
    // empty code hash one byte each. The recipient did not exist: three one-byte zeros.
    let full = full_variant(bal, &block.pre_state);
    let payload = |bytes: Vec<u8>| {
        alloy_rlp::Header::decode(&mut bytes.as_slice())
            .unwrap()
            .payload_length
    };
    let added: usize = full
        .iter()
        .zip(bal)
        .map(|(f, k)| payload(alloy_rlp::encode(f)) - payload(alloy_rlp::encode(k)))
        .sum();
    assert_eq!(added, (1 + 10 + 1 + 1) * 2 + (1 + 1 + 1 + 1));
    assert_eq!(stats.full.rlp_bytes, full_rlp(&full).len() as u64);
    assert_eq!(stats.block_rlp_bytes, 0x27a);
}

#[test]
fn bundled_sample_sizes_add_up_and_keep_their_order() {
    let (_, dataset) = embedded();
    let stats = dataset_stats(&dataset, &|| {}).unwrap();
    assert_eq!(stats.blocks.len(), 50);
    for b in &stats.blocks {
        assert_eq!(b.bal_source, BalSource::Built, "mainnet data ships no BAL");
        assert!(b.writes.rlp_bytes <= b.keys.rlp_bytes, "block {}", b.number);
        assert!(b.keys.rlp_bytes < b.full.rlp_bytes, "block {}", b.number);
        assert!(b.keys.rlp_bytes > 0 && b.block_rlp_bytes > 0);
        assert_eq!(
            b.counts.accounts_changed + b.counts.accounts_read_only,
            b.counts.accounts
        );
    }
    let sum = |f: fn(&gigagas_balstats::BlockStats) -> u64| stats.blocks.iter().map(f).sum::<u64>();
    assert_eq!(stats.total.keys.rlp_bytes, sum(|b| b.keys.rlp_bytes));
    assert_eq!(stats.total.full.zstd_bytes, sum(|b| b.full.zstd_bytes));
    assert_eq!(
        stats.total.counts.storage_reads,
        sum(|b| b.counts.storage_reads)
    );
    assert_eq!(
        stats.by_fork.iter().map(|f| f.blocks).sum::<usize>(),
        50,
        "every block in exactly one fork"
    );
    assert_eq!(stats.by_fork.first().unwrap().label, "Frontier");
    assert_eq!(stats.by_fork.last().unwrap().label, "Cancun");
    assert_eq!(
        stats.by_fork.iter().map(|f| f.keys.rlp_bytes).sum::<u64>(),
        stats.total.keys.rlp_bytes
    );
    assert!(stats.top_accounts.len() == 10);
    assert!(stats
        .top_accounts
        .windows(2)
        .all(|w| w[0].rlp_bytes >= w[1].rlp_bytes));
}

fn u256() -> impl Strategy<Value = U256> {
    prop_oneof![
        (0u64..4).prop_map(U256::from),
        any::<[u8; 32]>().prop_map(U256::from_be_bytes)
    ]
}

fn account() -> impl Strategy<Value = AccountChanges> {
    (
        any::<[u8; 20]>(),
        prop::collection::vec(
            (u256(), prop::collection::vec((0u64..300, u256()), 0..3)),
            0..4,
        ),
        prop::collection::vec(u256(), 0..5),
        prop::collection::vec((0u64..300, u256()), 0..3),
        prop::collection::vec((0u64..300, any::<u64>()), 0..2),
        prop::collection::vec((0u64..300, prop::collection::vec(any::<u8>(), 0..40)), 0..2),
    )
        .prop_map(
            |(a, writes, reads, balances, nonces, codes)| AccountChanges {
                address: Address::from(a),
                storage_changes: writes
                    .into_iter()
                    .map(|(slot, ch)| {
                        SlotChanges::new(
                            slot,
                            ch.into_iter()
                                .map(|(i, v)| StorageChange::new(idx(i), v))
                                .collect(),
                        )
                    })
                    .collect(),
                storage_reads: reads,
                balance_changes: balances
                    .into_iter()
                    .map(|(i, v)| BalanceChange::new(idx(i), v))
                    .collect(),
                nonce_changes: nonces
                    .into_iter()
                    .map(|(i, v)| NonceChange::new(idx(i), v))
                    .collect(),
                code_changes: codes
                    .into_iter()
                    .map(|(i, c)| CodeChange::new(idx(i), Bytes::from(c)))
                    .collect(),
            },
        )
}

proptest! {
    /// For any list and any pre-state: the RLP is alloy's, writes ≤ keys ≤ full, every
    /// account is changed or read-only, and the accounts' sizes add up to the list.
    #[test]
    fn variants_keep_their_order(
        bal in prop::collection::vec(account(), 0..12),
        balances in prop::collection::vec(u256(), 12),
    ) {
        let rlp = bal_rlp(&bal);
        prop_assert_eq!(&rlp, &alloy_rlp::encode(&bal));
        let mut accounts = HashMap::default();
        for (a, balance) in bal.iter().zip(&balances).step_by(2) {
            let storage = a.storage_reads.iter().map(|s| (*s, *balance)).collect();
            accounts.insert(a.address, PreAccount {
                info: revm::state::AccountInfo { balance: *balance, ..Default::default() },
                storage,
                fill: None,
            });
        }
        let pre = PreState::new(accounts, Arc::new(HashMap::default()));
        let writes = bal_rlp(&writes_variant(&bal)).len();
        let full = full_rlp(&full_variant(&bal, &pre)).len();
        prop_assert!(writes <= rlp.len());
        prop_assert!(rlp.len() <= full);
        let c = Counts::of(&bal);
        prop_assert_eq!(c.accounts_changed + c.accounts_read_only, bal.len() as u64);
        prop_assert_eq!(c.accounts, bal.len() as u64);
        let payload: u64 = account_sizes(&bal).iter().map(|s| s.rlp_bytes).sum();
        prop_assert_eq!(payload as usize, alloy_rlp::list_length(&bal) - header_bytes(payload as usize));
    }
}

/// Bytes of the list header for a payload of `payload` bytes.
fn header_bytes(payload: usize) -> usize {
    if payload < 56 {
        1
    } else {
        1 + (usize::BITS as usize / 8 - payload.leading_zeros() as usize / 8)
    }
}

/// The speculative estimate on hand-made dependency graphs: a serial chain (every transaction
/// rewrites slot 0) re-executes all but the first at any T ≥ 2; two interleaved chains
/// (slot A at 1, 3, 5; slot B at 2, 4, 6) conflict only once the window reaches their distance
/// of 2; system writes (indices 0 and n + 1) conflict with none.
#[test]
fn speculative_estimate_follows_the_dependency_distance() {
    use alloy_eip7928::{BlockAccessIndex, SlotChanges, StorageChange};
    let slot = |key: u64, at: &[u64]| SlotChanges {
        slot: U256::from(key),
        changes: at
            .iter()
            .map(|&i| StorageChange {
                block_access_index: BlockAccessIndex(i),
                new_value: U256::from(i),
            })
            .collect(),
    };
    let account = |slots: Vec<SlotChanges>| alloy_eip7928::AccountChanges {
        address: Address::repeat_byte(7),
        storage_changes: slots,
        ..Default::default()
    };
    let gas = [10u64, 20, 30, 40, 50, 60];
    let serial = vec![account(vec![slot(0, &[0, 1, 2, 3, 4, 5, 6, 7])])];
    for (t, txs, g) in [(1, 0, 0), (2, 5, 200), (16, 5, 200)] {
        let s = gigagas_balstats::speculative_estimate(&serial, &gas, t);
        assert_eq!(
            (s.threads, s.reexecuted_txs, s.reexecuted_gas),
            (t, txs, g),
            "T={t}"
        );
    }
    let interleaved = vec![account(vec![slot(1, &[1, 3, 5]), slot(2, &[2, 4, 6])])];
    for (t, txs, g) in [(2, 0, 0), (3, 4, 180), (8, 4, 180)] {
        let s = gigagas_balstats::speculative_estimate(&interleaved, &gas, t);
        assert_eq!((s.reexecuted_txs, s.reexecuted_gas), (txs, g), "T={t}");
    }
}
