//! `sstore-bloated` with `--slots` and `--spread`: the genesis storage travels as a
//! `storage_fill` rule in `chain.json`, the loader expands it, and every block verifies;
//! a hostile `storage_fill` is a load error.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{Address, U256};
use gigagas_data::{chain::StorageFill, DataSource, Dataset};
use gigagas_engine::{prepare_chain, run_block, Mode};
use gigagas_exec::{Scheduler, WorkerPool};
use gigagas_gen::{
    builder::genesis_header,
    generate,
    workload::{spread_accounts, BLOAT_PERIOD},
    GenOptions, GeneratedChain, Workload,
};
use revm::primitives::hardfork::SpecId;
use std::path::Path;

const SLOTS: u64 = 5_000;

fn options(spread: bool) -> GenOptions {
    GenOptions {
        workload: Workload::SstoreBloated,
        blocks: 2,
        block_gas: 3_000_000,
        seed: 5,
        spec: SpecId::CANCUN,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 8,
        verify_threads: 2,
        precompiles: Vec::new(),
        slots: Some(SLOTS),
        spread,
        existing_slots: false,
    }
}

fn load(dir: &Path) -> Result<Dataset, gigagas_data::DataError> {
    gigagas_data::load(&DataSource::open(dir)?)
}

/// Generates, writes, loads and verifies a chain; returns it with its directory.
fn generated(spread: bool) -> (tempfile::TempDir, GeneratedChain, Dataset) {
    let chain = generate(&options(spread), &|_| {}).expect("generate");
    let dir = tempfile::tempdir().unwrap();
    chain.write(dir.path()).expect("write");
    let dataset = load(dir.path()).expect("load");
    (dir, chain, dataset)
}

/// The accounts of the chain's fill with their genesis slot counts.
fn filled(fill: &StorageFill) -> Vec<(Address, u64)> {
    (0..fill.accounts)
        .map(|k| (fill.account(k), fill.slots_of(k)))
        .collect()
}

fn check_chain(spread: bool) {
    let (dir, chain, dataset) = generated(spread);

    // chain.json is small: the rule, not 5,000 slots (≥ 16 bytes each as JSON).
    let json = std::fs::metadata(dir.path().join("chain.json"))
        .unwrap()
        .len();
    assert!(json < 32 * 1024, "chain.json is {json} bytes");
    let meta: gigagas_data::chain::ChainMeta =
        serde_json::from_slice(&std::fs::read(dir.path().join("chain.json")).unwrap()).unwrap();
    assert_eq!(meta.storage_fill.len(), 1);
    let fill = &meta.storage_fill[0];
    let expected_accounts = if spread { spread_accounts(SLOTS) } else { 1 };
    assert_eq!((fill.slots, fill.accounts), (SLOTS, expected_accounts));
    if spread {
        assert_eq!(expected_accounts, 71, "⌈√5000⌉");
    } else {
        assert_eq!(fill.address, gigagas_gen::contracts::SPAM);
    }

    // The loaded genesis (block 1's pre-state) holds exactly the filled slots, as their rule:
    // no slot listed.
    assert_eq!(dataset.blocks.len(), 2);
    let genesis = &dataset.blocks[0].pre_state;
    let accounts = filled(fill);
    let mut total = 0;
    for (address, n) in &accounts {
        let account = genesis.account(address).expect("filled account exists");
        assert_eq!(
            account.fill,
            Some(gigagas_data::SlotFill {
                slots: *n,
                period: BLOAT_PERIOD
            }),
            "{address}"
        );
        assert!(account.storage.is_empty(), "{address}");
        assert!(account.info.code.as_ref().is_some_and(|c| !c.is_empty()));
        for i in [0, n / 2, n - 1] {
            let want = U256::from(i % BLOAT_PERIOD + 1);
            assert_eq!(account.slot(&U256::from(i)), want);
        }
        assert_eq!(account.slot(&U256::from(*n)), U256::ZERO);
        total += n;
    }
    assert_eq!(total, SLOTS);
    // Block 2's pre-state lists only what block 1 changed.
    let listed: usize = accounts
        .iter()
        .filter_map(|(a, _)| dataset.blocks[1].pre_state.account(a))
        .map(|a| a.storage.len())
        .sum();
    let written: usize = chain.blocks[0]
        .bal
        .iter()
        .map(|a| a.storage_changes.len())
        .sum();
    assert!(
        listed > 0 && listed <= written,
        "{listed} listed, {written} written"
    );

    // The expanded genesis hashes to the recorded genesis hash.
    let state = meta.genesis_state().unwrap();
    let root = gigagas_state::state_root(&gigagas_data::PreState::new(state, Default::default()));
    let header = genesis_header(SpecId::CANCUN, meta.block_gas, meta.seed, root);
    assert_eq!(header.hash_slow(), meta.genesis_hash);
    assert_eq!(dataset.blocks[0].header.parent_hash, meta.genesis_hash);

    // Every block verifies: sequential baseline against the header, its post-state root (the
    // rule's slots streamed) equal to the header's, then the parallel path from the shipped
    // BAL.
    let cases = prepare_chain(&dataset.blocks).expect("prepare");
    let pool = WorkerPool::new(2);
    for case in &cases {
        let input = case.prepared.input;
        assert!(
            case.state_root_checked,
            "a rule within one streaming pass is hashed by the baseline"
        );
        assert_eq!(
            gigagas_engine::post_state_root(&input.pre_state, &case.baseline.post),
            input.header.state_root,
            "block {}",
            input.number()
        );
        for scheduler in Scheduler::ALL {
            let mode = Mode::Parallel {
                threads: 2,
                scheduler,
            };
            run_block(case, mode, Some(&pool)).expect("parallel run verifies");
        }
        run_block(case, Mode::Sequential, None).expect("sequential run verifies");
    }
    assert_eq!(chain.failed_txs.iter().sum::<usize>(), 0);

    // All four kinds of cold SSTOREs happened: new slots, existing slots to a new value,
    // existing slots to zero (BAL storage changes), existing slots rewritten with their
    // own value (a no-op write is a read in the BAL).
    let slots: std::collections::HashMap<Address, u64> = accounts.into_iter().collect();
    let (mut new, mut changed, mut cleared, mut same) = (0, 0, 0, 0);
    for block in &chain.blocks {
        for account in &block.bal {
            let Some(&n) = slots.get(&account.address) else {
                continue;
            };
            for slot in &account.storage_changes {
                let last = slot.changes.last().unwrap().new_value;
                if slot.slot >= U256::from(n) {
                    new += 1;
                } else if last.is_zero() {
                    cleared += 1;
                } else if last > U256::from(BLOAT_PERIOD) {
                    changed += 1;
                }
            }
            same += account
                .storage_reads
                .iter()
                .filter(|s| **s < U256::from(n))
                .count();
        }
    }
    assert!(
        new > 0 && changed > 0 && cleared > 0 && same > 0,
        "new {new}, new value {changed}, cleared {cleared}, same value {same}"
    );
    if !spread {
        // A 3M block: about 10 transactions, 55 new or 100 existing slots each.
        assert!(new >= 55 && changed >= 100 && cleared >= 100 && same >= 100);
    }
}

#[test]
fn hot_account_chain_generates_loads_and_verifies() {
    check_chain(false);
}

#[test]
fn spread_chain_generates_loads_and_verifies() {
    check_chain(true);
}

#[test]
fn spread_has_the_same_slots_over_root_n_accounts() {
    for (slots, k) in [
        (1, 1),
        (2, 2),
        (4, 2),
        (5, 3),
        (1_000_000, 1_000),
        (10_000_000, 3_163),
    ] {
        assert_eq!(spread_accounts(slots), k, "{slots}");
    }
}

#[test]
fn slots_and_spread_are_refused_for_other_workloads_and_out_of_bounds() {
    let mut opts = options(false);
    opts.workload = Workload::Erc20;
    let err = generate(&opts, &|_| {}).unwrap_err().to_string();
    assert!(err.contains("sstore-bloated"), "{err}");
    opts.slots = None;
    opts.spread = true;
    assert!(generate(&opts, &|_| {}).is_err());
    for slots in [0, 100_000_001] {
        let mut opts = options(false);
        opts.slots = Some(slots);
        let err = generate(&opts, &|_| {}).unwrap_err().to_string();
        assert!(err.contains("1 to 100000000"), "{slots}: {err}");
    }
}

/// A `storage_fill` that is out of bounds, malformed or overlapping is a load error naming
/// it — checked before anything proportional to its counts is allocated.
#[test]
fn hostile_storage_fill_is_a_load_error() {
    let (dir, chain, _) = generated(false);
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("chain.json")).unwrap()).unwrap();
    let sender = *chain
        .meta
        .alloc
        .keys()
        .find(|a| chain.meta.alloc[*a].code.is_empty())
        .unwrap();
    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        ("slots", serde_json::json!(100_000_001u64), "100000000"),
        ("slots", serde_json::json!(u64::MAX), "100000000"),
        ("slots", serde_json::json!(0), "at least 1"),
        ("accounts", serde_json::json!(0), "at least 1"),
        ("accounts", serde_json::json!(5_001), "every account needs"),
        ("period", serde_json::json!(0), "at least 1"),
        (
            "address",
            serde_json::json!("0xnot-an-address"),
            "chain metadata",
        ),
        ("address", serde_json::json!("0x1234"), "chain metadata"),
        (
            "address",
            serde_json::json!(sender.to_string()),
            "also in alloc",
        ),
        (
            "address",
            serde_json::json!("0xffffffffffffffffffffffffffffffffffffffff"),
            "",
        ),
        ("slots", serde_json::json!(-1), "chain metadata"),
    ];
    for (field, value, want) in cases {
        let mut json = original.clone();
        json["storage_fill"][0][field] = value.clone();
        if field == "address" && want.is_empty() {
            // The last address with two accounts runs past 2^160.
            json["storage_fill"][0]["accounts"] = serde_json::json!(2);
        }
        std::fs::write(
            dir.path().join("chain.json"),
            serde_json::to_vec(&json).unwrap(),
        )
        .unwrap();
        let err = load(dir.path()).map(|_| ()).unwrap_err().to_string();
        let want = if want.is_empty() {
            "pass the last address"
        } else {
            want
        };
        assert!(err.contains(want), "{field} = {value}: {err}");
        assert!(err.contains("chain.json"), "{field} = {value}: {err}");
    }

    // Two entries over the same accounts.
    let mut json = original.clone();
    let entry = json["storage_fill"][0].clone();
    json["storage_fill"] = serde_json::json!([entry.clone(), entry]);
    std::fs::write(
        dir.path().join("chain.json"),
        serde_json::to_vec(&json).unwrap(),
    )
    .unwrap();
    let err = load(dir.path()).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("overlap"), "{err}");

    // The untouched chain loads.
    std::fs::write(
        dir.path().join("chain.json"),
        serde_json::to_vec(&original).unwrap(),
    )
    .unwrap();
    load(dir.path()).expect("the untouched chain loads");
    let mut json = original;
    json.as_object_mut().unwrap().remove("storage_fill");
    std::fs::write(
        dir.path().join("chain.json"),
        serde_json::to_vec(&json).unwrap(),
    )
    .unwrap();
    // Without its fill the genesis lacks the StorageSpam account: the allocation no longer
    // makes the stated genesis_hash, refused at load (before execution could notice).
    let err = load(dir.path()).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("genesis_hash says"), "{err}");
}

/// `--existing-slots` (the execution-specs seed's block): every storage write of every block
/// is to an existing genesis slot, with a value no genesis slot holds, each slot written once
/// per block and never read alone (so every write is a cold write of a new value), the writes
/// spanning the key range; the chain loads and verifies, and `chain.json` names the variant.
#[test]
fn existing_slots_writes_new_values_to_existing_slots_only() {
    let opts = GenOptions {
        existing_slots: true,
        spec: SpecId::OSAKA,
        ..options(false)
    };
    let chain = generate(&opts, &|_| {}).expect("generate");
    let dir = tempfile::tempdir().unwrap();
    chain.write(dir.path()).expect("write");
    let dataset = load(dir.path()).expect("load");
    assert_eq!(chain.meta.workload, "sstore-bloated:existing-slots");
    let cases = prepare_chain(&dataset.blocks).expect("every block verifies");
    let account = gigagas_gen::contracts::SPAM;
    for case in &cases {
        let bal = &case.baseline.access.bal;
        let spam = bal
            .iter()
            .find(|a| a.address == account)
            .expect("the bloated account is in every block's BAL");
        assert!(spam.storage_reads.is_empty(), "block {}", case.number());
        assert!(spam.storage_changes.len() >= 100, "block {}", case.number());
        let (mut lowest, mut highest) = (U256::MAX, U256::ZERO);
        for slot in &spam.storage_changes {
            assert!(slot.slot < U256::from(SLOTS), "slot {} is new", slot.slot);
            assert_eq!(slot.changes.len(), 1, "slot {} written twice", slot.slot);
            let value = slot.changes[0].new_value;
            assert!(
                value > U256::from(BLOAT_PERIOD),
                "slot {}: {value}",
                slot.slot
            );
            lowest = lowest.min(slot.slot);
            highest = highest.max(slot.slot);
        }
        // The writes span the key range (stride = slots / 100).
        assert!(
            highest - lowest >= U256::from(SLOTS * 9 / 10),
            "{lowest}..{highest}"
        );
    }
    let err = generate(
        &GenOptions {
            existing_slots: true,
            slots: None,
            ..options_for(Workload::Erc20)
        },
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("sstore-bloated"), "{err}");
}

fn options_for(workload: Workload) -> GenOptions {
    GenOptions {
        workload,
        slots: None,
        ..options(false)
    }
}
