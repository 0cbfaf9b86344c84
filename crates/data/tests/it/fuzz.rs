//! Property-based fuzzing of every input parser of the data crate: real inputs with random
//! byte-level edits (`tools/fuzz-mutate.rs`) must load or fail with an error — never panic,
//! hang or allocate without bound. Block JSON, pre-state JSON, bytecodes, block hashes (a
//! mainnet-layout set from the bundled sample), and a generated chain's `chain.json` and
//! `blocks.rlp` (which holds the block RLP, the BAL RLP and the senders). `PROPTEST_CASES`
//! raises the case count (`scripts/fuzz.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

#[path = "../../../../tools/fuzz-mutate.rs"]
mod mutate;

use gigagas_data::DataSource;
use proptest::prelude::*;
use std::{collections::BTreeMap, path::PathBuf, sync::OnceLock};

/// Two small blocks of the sample (one pre-Byzantium with 1 tx, one Cancun with withdrawals).
fn mainnet_files() -> &'static BTreeMap<String, Vec<u8>> {
    static FILES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let DataSource::Archive { files, .. } = DataSource::embedded().unwrap() else {
            unreachable!()
        };
        let keep = ["blocks/46147/", "blocks/19910734/"];
        files
            .into_iter()
            .filter(|(k, _)| !k.starts_with("blocks/") || keep.iter().any(|p| k.starts_with(p)))
            .collect()
    })
}

fn chain_files() -> BTreeMap<String, Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chain");
    ["chain.json", "blocks.rlp"]
        .into_iter()
        .map(|f| (f.to_owned(), std::fs::read(dir.join(f)).unwrap()))
        .collect()
}

fn load(
    files: BTreeMap<String, Vec<u8>>,
) -> Result<gigagas_data::Dataset, gigagas_data::DataError> {
    gigagas_data::load(&DataSource::Archive {
        name: "fuzz".into(),
        files,
    })
}

#[test]
fn the_unmutated_inputs_load() {
    assert_eq!(load(mainnet_files().clone()).unwrap().blocks.len(), 2);
    assert_eq!(load(chain_files()).unwrap().blocks.len(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn mutated_mainnet_files_load_or_fail_cleanly(
        which in 0usize..64,
        edits in mutate::edits(8),
        structured in any::<bool>(),
        pick in any::<usize>(),
    ) {
        let mut files = mainnet_files().clone();
        let keys: Vec<String> = files.keys().cloned().collect();
        let key = &keys[which % keys.len()];
        let mutated = if structured {
            mutate::apply_to_json_leaf(&files[key], pick, &edits).unwrap()
        } else {
            mutate::apply(&files[key], &edits)
        };
        files.insert(key.clone(), mutated);
        let _ = load(files);
    }

    #[test]
    fn mutated_chains_load_or_fail_cleanly(
        rlp in any::<bool>(),
        edits in mutate::edits(8),
        pick in any::<usize>(),
    ) {
        let mut files = chain_files();
        let key = if rlp { "blocks.rlp" } else { "chain.json" };
        let mutated = if rlp {
            mutate::apply(&files[key], &edits)
        } else {
            mutate::apply_to_json_leaf(&files[key], pick, &edits).unwrap()
        };
        files.insert(key.to_owned(), mutated);
        let _ = load(files);
    }

    #[test]
    fn mutated_bal_rlp_decodes_or_fails_cleanly(edits in mutate::edits(8)) {
        use alloy_rlp::{Decodable, Encodable};
        let data = load(chain_files()).unwrap();
        let bal = data.blocks[0].access_list.clone().unwrap();
        let mut bytes = Vec::new();
        bal.encode(&mut bytes);
        let mutated = mutate::apply(&bytes, &edits);
        let _ = alloy_eip7928::BlockAccessList::decode(&mut &mutated[..]);
    }
}
