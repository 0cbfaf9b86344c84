//! `genesis_hash` is checked against the allocation at load: a chain.json whose allocation
//! (one balance, one storage_fill rule) or header fields no longer make the stated genesis is
//! refused with an error naming the file, the stated and the computed values.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use gigagas_data::DataSource;
use gigagas_gen::{generate, GenOptions, Workload};
use revm::primitives::hardfork::SpecId;
use std::path::Path;

fn options(workload: Workload, slots: Option<u64>, spread: bool) -> GenOptions {
    GenOptions {
        workload,
        blocks: 1,
        block_gas: 3_000_000,
        seed: 11,
        spec: SpecId::CANCUN,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 4,
        verify_threads: 2,
        precompiles: Vec::new(),
        slots,
        spread,
        existing_slots: false,
    }
}

fn load_err(dir: &Path) -> String {
    match DataSource::open(dir).and_then(|s| gigagas_data::load(&s)) {
        Ok(_) => panic!("the altered chain loaded"),
        Err(e) => e.to_string(),
    }
}

fn meta(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("chain.json")).unwrap()).unwrap()
}

fn write_meta(dir: &Path, json: &serde_json::Value) {
    std::fs::write(dir.join("chain.json"), serde_json::to_vec(json).unwrap()).unwrap();
}

/// One balance of the allocation, one wei more: the stated genesis_hash no longer matches.
#[test]
fn an_edited_balance_is_refused_at_load() {
    let chain = generate(&options(Workload::Transfers, None, false), &|_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    chain.write(dir.path()).unwrap();
    let source = DataSource::open(dir.path()).unwrap();
    gigagas_data::load(&source).expect("the generated chain loads");

    let stated = chain.meta.genesis_hash.to_string();
    let mut json = meta(dir.path());
    let alloc = json["alloc"].as_object_mut().unwrap();
    let (address, account) = alloc
        .iter_mut()
        .find(|(_, a)| a.get("code").is_none())
        .unwrap();
    let address = address.clone();
    let old: alloy_primitives::U256 = serde_json::from_value(account["balance"].clone()).unwrap();
    account["balance"] = serde_json::to_value(old + alloy_primitives::U256::from(1)).unwrap();
    write_meta(dir.path(), &json);

    let err = load_err(dir.path());
    assert!(err.contains("chain.json"), "names the file: {err}");
    assert!(err.contains(&stated), "names the stated hash: {err}");
    assert!(
        err.contains("hashes to 0x"),
        "names the computed hash: {err}"
    );
    assert!(
        err.contains("state root 0x"),
        "names the computed root: {err}"
    );
    assert!(err.contains("altered"), "says what happened: {err}");

    // A header field of the rebuilt genesis (the seed feeds its mix hash) is checked too.
    let mut json = meta(dir.path());
    json["alloc"][&address]["balance"] = serde_json::to_value(old).unwrap();
    write_meta(dir.path(), &json);
    gigagas_data::load(&DataSource::open(dir.path()).unwrap()).expect("restored");
    json["seed"] = serde_json::json!(12);
    write_meta(dir.path(), &json);
    assert!(load_err(dir.path()).contains(&stated));
}

/// A storage_fill rule edited (its period) changes every filled slot: refused; the root the
/// loader computes without expanding the fill equals the root of the expanded state.
#[test]
fn an_edited_storage_fill_is_refused_and_the_root_matches_the_expanded_state() {
    for spread in [false, true] {
        let chain = generate(
            &options(Workload::SstoreBloated, Some(3_001), spread),
            &|_| {},
        )
        .unwrap();
        let m = &chain.meta;
        let computed =
            gigagas_data::genesis_root::genesis_state_root(&m.alloc, &m.storage_fill).unwrap();
        let expanded = gigagas_state::state_root(&gigagas_data::PreState::new(
            m.genesis_state().unwrap(),
            Default::default(),
        ));
        assert_eq!(computed, expanded, "spread {spread}");

        let dir = tempfile::tempdir().unwrap();
        chain.write(dir.path()).unwrap();
        let mut json = meta(dir.path());
        let period = json["storage_fill"][0]["period"].as_u64().unwrap();
        json["storage_fill"][0]["period"] = serde_json::json!(period + 1);
        write_meta(dir.path(), &json);
        let err = load_err(dir.path());
        assert!(err.contains("chain.json"), "{err}");
        assert!(err.contains(&m.genesis_hash.to_string()), "{err}");
    }
}
