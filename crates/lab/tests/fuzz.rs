//! Property-based fuzzing of the result reader: a real bench result with random byte-level
//! edits (`tools/fuzz-mutate.rs`) is read or refused with an error; whatever it reads renders
//! as tables and an HTML report without a panic or a hang (a 0-block result once looped).
//! `PROPTEST_CASES` raises the case count (`scripts/fuzz.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

#[path = "../../../tools/fuzz-mutate.rs"]
mod mutate;

use proptest::prelude::*;

fn real_report() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tiny-report.json"
    ))
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: mutate::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn mutated_results_read_and_render_or_fail_cleanly(
        edits in mutate::edits(8),
        structured in any::<bool>(),
        pick in any::<usize>(),
    ) {
        let bytes = if structured {
            mutate::apply_to_json_leaf(&real_report(), pick, &edits).unwrap()
        } else {
            mutate::apply(&real_report(), &edits)
        };
        if let Ok(reports) = gigagas_lab::read_reports(&bytes) {
            for r in &reports {
                let _ = gigagas_lab::table::runs_table(r).to_string();
                let _ = gigagas_lab::table::phases_table(r).to_string();
                let _ = gigagas_lab::html::render(r, &[]);
                let _ = gigagas_lab::report::noise_warnings(r);
            }
        }
    }
}
