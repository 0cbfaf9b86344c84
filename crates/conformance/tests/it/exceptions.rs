//! Expected exceptions are checked for their reason: for every block that carries
//! `expectException` in the bundled fixtures (and in a slice of the shared set, when present),
//! the unmodified test passes with its rejection judged, the test with that block's
//! `expectException` removed fails, and the test with it changed to an unrelated exception
//! fails as "rejected for another reason".

use gigagas_conformance::{
    chain::TestResult, collect_files, fixture, run_test, summary::WRONG_REASON, Mode,
};
use gigagas_exec::WorkerPool;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn run(value: Value) -> TestResult {
    let test = fixture::parse_test(value).expect("test parses");
    run_test(
        &test,
        Mode::Sequential,
        0,
        false,
        &WorkerPool::new(2),
        Path::new("exceptions.json"),
    )
}

/// An exception name that describes none of the rejections `expected` stands for.
fn unrelated(expected: &str) -> &'static str {
    if expected.contains("EXTRA_DATA") {
        "TransactionException.NONCE_MISMATCH_TOO_LOW"
    } else {
        "BlockException.EXTRA_DATA_TOO_BIG"
    }
}

/// Runs the three variants of every test in `files` with an `expectException` block;
/// returns how many tests were checked.
fn check_files(files: &[PathBuf], limit: usize) -> usize {
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (name, value) in fixture::parse_file(&text).unwrap() {
            if checked == limit {
                return checked;
            }
            let Some(blocks) = value["blocks"].as_array() else {
                continue;
            };
            let Some(k) = blocks
                .iter()
                .position(|b| b.get("expectException").is_some())
            else {
                continue;
            };
            let expected = blocks[k]["expectException"].as_str().unwrap().to_owned();
            let label = format!("{} :: {name} block #{k} ({expected})", file.display());
            match run(value.clone()) {
                TestResult::Passed {
                    exceptions_matched,
                    exceptions_unmapped,
                    ..
                } => {
                    // Only tests whose every rejection is judged take part.
                    if !exceptions_unmapped.is_empty() || exceptions_matched == 0 {
                        continue;
                    }
                }
                TestResult::Skipped(_) => continue,
                other => panic!("{label}: unmodified test did not pass: {other:?}"),
            }
            let mut removed = value.clone();
            removed["blocks"][k]
                .as_object_mut()
                .unwrap()
                .remove("expectException");
            assert!(
                matches!(run(removed), TestResult::Failed { .. }),
                "{label}: passed with expectException removed"
            );
            let mut changed = value.clone();
            changed["blocks"][k]["expectException"] = Value::from(unrelated(&expected));
            match run(changed) {
                TestResult::Failed { category, detail } => {
                    assert_eq!(category, WRONG_REASON, "{label}: {detail}");
                    assert!(
                        detail.contains(unrelated(&expected)),
                        "{label}: the failure does not name the expected exception: {detail}"
                    );
                }
                other => panic!("{label}: passed with an unrelated expectException: {other:?}"),
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn bundled_invalid_blocks_pass_only_for_their_reason() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let dirs: Vec<PathBuf> = [dir.join("fixtures"), dir.join("amsterdam")]
        .into_iter()
        .filter(|d| d.exists())
        .collect();
    let files = collect_files(&dirs).unwrap();
    let checked = check_files(&files, usize::MAX);
    assert!(checked >= 2, "only {checked} bundled tests checked");
}

#[test]
#[cfg_attr(
    not(gigagas_shared_blockchain_tests),
    ignore = "needs ../shared/data/ethereum-tests/BlockchainTests (GIGAGAS_SHARED_DATA)"
)]
fn shared_invalid_blocks_pass_only_for_their_reason() {
    let root = gigagas_data::shared_data_dir("ethereum-tests/BlockchainTests");
    let dirs: Vec<PathBuf> = [
        "InvalidBlocks/bcEIP1559",
        "InvalidBlocks/bcInvalidHeaderTest",
        "GeneralStateTests/Pyspecs/cancun/eip4844_blobs",
        "GeneralStateTests/Pyspecs/shanghai",
    ]
    .iter()
    .map(|d| root.join(d))
    .filter(|d| d.exists())
    .collect();
    let files = collect_files(&dirs).unwrap();
    let checked = check_files(&files, 60);
    assert!(checked >= 20, "only {checked} shared tests checked");
}
