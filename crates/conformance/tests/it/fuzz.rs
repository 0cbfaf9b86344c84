//! Property-based fuzzing of the blockchain-test parser and runner: a bundled fixture with
//! random byte-level edits (`tools/fuzz-mutate.rs`) must give a result — passed, failed or
//! skipped — never a panic (the runner contains panics as a `panic` failure: none may occur)
//! or a hang. `PROPTEST_CASES` raises the case count (`scripts/fuzz.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

#[path = "../../../../tools/fuzz-mutate.rs"]
mod mutate;

use gigagas_conformance::{chain::TestResult, fixture, run_test, Mode};
use gigagas_exec::WorkerPool;
use proptest::prelude::*;
use std::path::Path;

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_never_panic(
        file in prop::sample::select(vec!["balance_within_block.json", "double_kill.json", "baseFee.json"]),
        edits in mutate::edits(6),
        structured in any::<bool>(),
        pick in any::<usize>(),
    ) {
        // Raw edits mostly break the JSON; leaf edits keep it and reach the RLP, the header
        // rules and execution.
        let original = fixture_bytes(file);
        let bytes = if structured {
            mutate::apply_to_json_leaf(&original, pick, &edits).unwrap()
        } else {
            mutate::apply(&original, &edits)
        };
        let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
        let Ok(tests) = fixture::parse_file(&text) else { return Ok(()) };
        let pool = WorkerPool::new(2);
        for (_, value) in tests {
            let Ok(test) = fixture::parse_test(value) else { continue };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_test(&test, Mode::Both, 0, false, &pool, Path::new("fuzz.json"))
            }));
            prop_assert!(result.is_ok(), "the runner panicked on a mutated {}", file);
            if let Ok(TestResult::Failed { category, .. }) = &result {
                prop_assert_ne!(category.as_str(), "panic");
            }
        }
    }
}
