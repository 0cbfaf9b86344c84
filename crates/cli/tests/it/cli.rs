//! Whole-binary tests: the real `gigagas` on real blocks, good and bad.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use crate::{gigagas, gigagas_in};
use gigagas_data::DataSource;
use std::{path::Path, process::Command};

const SMALL_BLOCKS: [u64; 2] = [46_147, 1_150_000];

/// Writes a mainnet-layout directory with a few small real blocks from the bundled sample.
fn fixture(dir: &Path) {
    let DataSource::Archive { files, .. } = DataSource::embedded().unwrap() else {
        unreachable!("the embedded sample is an archive")
    };
    for (rel, bytes) in files {
        let keep = !rel.starts_with("blocks/")
            || SMALL_BLOCKS
                .iter()
                .any(|n| rel.starts_with(&format!("blocks/{n}/")));
        if keep {
            let path = dir.join(&rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
}

/// Writes the fixture into `dir/data` (so results can go beside it: an output inside an
/// input directory is refused) and returns that path.
fn fixture_in(dir: &Path) -> std::path::PathBuf {
    let data = dir.join("data");
    fixture(&data);
    data
}

/// Runs `gigagas bench` on the data set in `dir` with `extra` flags (no warm-up), writing
/// `<name>` beside `dir`; returns (stdout, path). Panics with stderr when it fails.
fn bench_fixture(dir: &Path, name: &str, extra: &[&str]) -> (String, std::path::PathBuf) {
    let json = dir.parent().unwrap().join(name);
    let mut args = vec!["bench", "--data", dir.to_str().unwrap(), "--warmup", "0"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let (ok, stdout, stderr) = gigagas(&args);
    assert!(ok, "{stderr}");
    (stdout, json)
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(text)).unwrap();
}

/// Sender recovery's backend (`--recovery`): on a machine without a GPU, `gpu` is refused
/// before anything loads, naming the missing GPU; `auto` runs on the CPU and says so; `bench
/// --recovery cpu` measures the pipeline rows with it. On a machine with a GPU, `gpu` runs.
#[test]
fn recovery_backends_are_chosen_refused_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let data = dir.path().to_str().unwrap();
    let gpu = gigagas_gpu::GpuRecoverer::open().is_ok();
    let (ok, _, stderr) = gigagas(&["run", "--data", data, "--recovery", "gpu"]);
    if gpu {
        assert!(ok, "{stderr}");
    } else {
        assert!(!ok, "{stderr}");
        assert!(
            stderr.contains("--recovery") && stderr.contains("no GPU"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            !stderr.contains("loaded "),
            "refused after loading: {stderr}"
        );
        let (ok, _, stderr) = gigagas(&["bench", "--data", data, "--recovery", "cpu,gpu"]);
        assert!(!ok && stderr.contains("--recovery"), "{stderr}");
        assert!(
            !stderr.contains("loaded "),
            "refused after loading: {stderr}"
        );
    }
    // Every run-spec refusal comes before the data loads: a store without its directory.
    let (ok, _, stderr) = gigagas(&["run", "--data", data, "--state", "disk"]);
    assert!(!ok && stderr.contains("--db"), "{stderr}");
    assert!(
        !stderr.contains("loaded "),
        "refused after loading: {stderr}"
    );
    let (ok, stdout, stderr) = gigagas(&["run", "--data", data, "--recovery", "auto"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("verified"), "{stdout}");
    let expected = if gpu {
        "senders recovered on the gpu"
    } else {
        "senders recovered on the cpu"
    };
    assert!(stderr.contains(expected), "{stderr}");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("recovery.json");
    let (ok, _, stderr) = gigagas(&[
        "bench",
        "--data",
        data,
        "--threads",
        "1",
        "--scheduler",
        "ordered",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--recovery",
        "cpu",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = value["pipeline"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["recovery"], "cpu");
    // `cpu,auto`: two backends where a GPU answers; where none does, auto is the CPU,
    // measured once (two rows of one configuration were written before) and said.
    let (ok, _, stderr) = gigagas(&[
        "bench",
        "--data",
        data,
        "--threads",
        "1",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--recovery",
        "cpu,auto",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let recoveries: Vec<&str> = value["pipeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["recovery"].as_str().unwrap())
        .collect();
    if gpu {
        assert_eq!(recoveries.len(), 2, "{recoveries:?}");
        assert!(
            recoveries.iter().any(|r| r.starts_with("gpu")),
            "{recoveries:?}"
        );
    } else {
        assert_eq!(recoveries, ["cpu"]);
        assert!(
            stderr.contains("auto is the CPU: measured once"),
            "{stderr}"
        );
    }
}

#[test]
fn run_verifies_each_block_and_prints_a_total() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let data = dir.path().to_str().unwrap();
    let parallel = ["--threads", "2", "--scheduler", "gas-used"];
    for (mode, extra) in [("sequential", &[][..]), ("parallel", &parallel[..])] {
        let mut args = vec!["run", "--data", data, "--mode", mode];
        args.extend_from_slice(extra);
        let (ok, stdout, stderr) = gigagas(&args);
        assert!(ok, "{stderr}");
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("block")).count(),
            2,
            "{stdout}"
        );
        assert!(stdout.contains("block     46147 Frontier"), "{stdout}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert!(
            lines[lines.len() - 2].starts_with("total: 2 blocks"),
            "{stdout}"
        );
        // Touched-only pre-states: what "verified" rests on is said where it is printed.
        assert!(
            lines[lines.len() - 1]
                .starts_with("note: 2 of 2 blocks verified against the data set's own pre-state"),
            "{stdout}"
        );
    }
}

#[test]
fn bench_writes_json_with_verified_blocks_and_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture_in(dir.path());
    let (stdout, json) = bench_fixture(&data, "out.json", &["--threads", "1,2", "--repeats", "2"]);
    assert!(stdout.contains("Mgas/s"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["schema"], "gigagas.bench/1");
    let blocks = report["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert!(blocks.iter().all(|b| b["verified"] == true));
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        1 + 2 * 3,
        "sequential + 2 thread counts x 3 schedulers"
    );
    assert!(runs.iter().all(|r| r["mgas_per_s"].as_f64().unwrap() > 0.0));
    assert!(runs
        .iter()
        .all(|r| r["repeat_ns"].as_array().unwrap().len() == 2));
}

fn expect_failure(dir: &Path, needles: &[&str]) {
    // The result goes outside the data directory (an output inside an input is refused).
    let results = tempfile::tempdir().unwrap();
    let json = results.path().join("out.json");
    let data = dir.to_str().unwrap();
    let (ok, _, stderr) = gigagas(&["run", "--data", data]);
    assert!(!ok, "bad input accepted");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    let (ok, _, _) = gigagas(&["bench", "--data", data, "--json", json.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        !json.exists(),
        "a failed bench must not leave a result file"
    );
}

#[test]
fn garbled_block_json_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    edit(&dir.path().join("blocks/46147/block.json"), |t| {
        t[..t.len() / 2].to_owned()
    });
    expect_failure(dir.path(), &["blocks/46147/block.json", "EOF"]);
}

#[test]
fn missing_pre_state_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    std::fs::remove_file(dir.path().join("blocks/1150000/pre_state.json")).unwrap();
    expect_failure(dir.path(), &["blocks/1150000/pre_state.json", "not found"]);
}

#[test]
fn code_hash_without_code_is_an_error_naming_the_account() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let path = dir.path().join("blocks/1150000/pre_state.json");
    let mut pre: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let (address, account) = pre.iter_mut().next().unwrap();
    let address = address.clone();
    account["code_hash"] = format!("0x{}", "ab".repeat(32)).into();
    std::fs::write(&path, serde_json::to_vec(&pre).unwrap()).unwrap();
    expect_failure(
        dir.path(),
        &["pre_state.json", "has code hash", &address[2..8]],
    );
}

#[test]
fn unknown_transaction_type_is_an_error_naming_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    edit(&dir.path().join("blocks/1150000/block.json"), |t| {
        t.replacen("\"type\":\"0x0\"", "\"type\":\"0x7f\"", 1)
            .replacen("\"type\": \"0x0\"", "\"type\": \"0x7f\"", 1)
    });
    expect_failure(
        dir.path(),
        &[
            "blocks/1150000/block.json",
            "transaction 0",
            "unknown transaction type 0x7f",
        ],
    );
}

#[test]
fn tampered_transaction_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let path = dir.path().join("blocks/1150000/block.json");
    let mut block: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    block["transactions"][1]["value"] = "0x1".into();
    std::fs::write(&path, serde_json::to_vec(&block).unwrap()).unwrap();
    expect_failure(dir.path(), &["transaction 1", "hash"]);
}

#[test]
fn wrong_header_gas_is_a_verification_failure() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let path = dir.path().join("blocks/1150000/block.json");
    let mut block: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    block["gasUsed"] = "0x1".into();
    std::fs::write(&path, serde_json::to_vec(&block).unwrap()).unwrap();
    // Caught by execution (gas used ≠ header) or, where the loader checks that the header
    // fields hash to the block's stated hash, already when loading.
    let (_, _, stderr) = gigagas(&["run", "--data", dir.path().to_str().unwrap()]);
    assert!(
        stderr.contains("gas_used mismatch") || stderr.contains("a header field was changed"),
        "{stderr}"
    );
    expect_failure(dir.path(), &["block 1150000"]);
}

#[test]
fn missing_data_directory_is_an_error() {
    let (ok, _, stderr) = gigagas(&["run", "--data", "/nonexistent/gigagas-data"]);
    assert!(!ok);
    assert!(stderr.contains("/nonexistent/gigagas-data"), "{stderr}");
}

#[test]
fn simulate_replays_a_bench_result_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture_in(dir.path());
    let (_, json) = bench_fixture(&data, "out.json", &["--threads", "1,2", "--repeats", "1"]);
    let (ok, stdout, stderr) =
        gigagas(&["simulate", json.to_str().unwrap(), "--threads", "1,2,16"]);
    assert!(ok, "{stderr}");
    // 3 schedulers x 3 thread counts, measured (with an error figure) at 1 and 2 threads.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("ordered") || l.contains("gas-"))
        .collect();
    assert_eq!(rows.len(), 9, "{stdout}");
    assert_eq!(
        rows.iter().filter(|r| r.contains('%')).count(),
        6,
        "{stdout}"
    );

    // Mega-blocks: with unlimited workers a block takes its longest transaction, so the two
    // blocks as one unit take the longer of the two longest, never more than both in a row.
    let (ok, stdout, stderr) = gigagas(&[
        "simulate",
        json.to_str().unwrap(),
        "--threads",
        "64",
        "--scheduler",
        "ordered",
        "--mega",
        "1,2",
    ]);
    assert!(ok, "{stderr}");
    let predicted: Vec<f64> = stdout
        .lines()
        .filter(|l| l.contains("ordered"))
        .map(|l| l.split('┆').nth(3).unwrap().trim().parse().unwrap())
        .collect();
    assert_eq!(predicted.len(), 2, "{stdout}");
    assert!(predicted[1] <= predicted[0], "{stdout}");
    let (ok, _, _) = gigagas(&["simulate", json.to_str().unwrap(), "--mega", "0"]);
    assert!(!ok);

    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{not json").unwrap();
    let (ok, _, stderr) = gigagas(&["simulate", garbage.to_str().unwrap()]);
    assert!(!ok && stderr.contains("not valid JSON"), "{stderr}");
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, r#"{"schema":"other/9"}"#).unwrap();
    let (ok, _, stderr) = gigagas(&["simulate", wrong.to_str().unwrap()]);
    assert!(!ok && stderr.contains("schema"), "{stderr}");
    let (ok, _, _) = gigagas(&["simulate", "/nonexistent.json"]);
    assert!(!ok);
}

/// A bench result of the fixture's pipeline on and off at 1 and 2 threads, one repeat each,
/// written under `dir`.
fn pipeline_both_ways(dir: &std::path::Path) -> std::path::PathBuf {
    let data = fixture_in(dir);
    let (_, json) = bench_fixture(
        &data,
        "pipe.json",
        &[
            "--threads",
            "1,2",
            "--repeats",
            "1",
            "--scheduler",
            "ordered",
            "--root",
            "parallel",
            "--pipeline",
            "on,off",
        ],
    );
    json
}

/// With the pipeline measured both ways, `simulate` also predicts the overlapped rows from
/// the back-to-back stages, with an error at every measured count (no calibration count).
#[test]
fn simulate_predicts_the_overlapped_pipeline_from_its_back_to_back_stages() {
    let dir = tempfile::tempdir().unwrap();
    let json = pipeline_both_ways(dir.path());
    let (ok, stdout, stderr) = gigagas(&["simulate", json.to_str().unwrap(), "--threads", "1,2,8"]);
    assert!(ok, "{stderr}");
    let table = stdout
        .split("predicted from its stages measured back to back")
        .nth(1)
        .unwrap_or_else(|| panic!("no back-to-back prediction: {stdout}"));
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| 1 ") || l.starts_with("| 2 ") || l.starts_with("| 8 "))
        .take(3)
        .collect();
    assert_eq!(rows.len(), 3, "{table}");
    // Measured at 1 and 2 threads: an error each; 8 is a prediction only.
    assert!(rows[0].contains('%') && rows[1].contains('%'), "{table}");
    assert!(!rows[2].contains('%'), "{table}");
}

/// Where the rows a pipeline fit calibrates on repeat far apart, `simulate` says that an
/// error below their spread cannot be told from noise; with one repeat it says nothing.
#[test]
fn simulate_says_when_its_calibration_repeats_are_far_apart() {
    let dir = tempfile::tempdir().unwrap();
    let json = pipeline_both_ways(dir.path());
    let (ok, stdout, stderr) = gigagas(&["simulate", json.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("pipeline "), "{stdout}");
    assert!(!stdout.contains("calibration repeats differ"), "{stdout}");
    // Every pipeline row's repeats: the measured one and one twice as long.
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for row in value["pipeline"].as_array_mut().unwrap() {
        let median = row["median_ns"].as_u64().unwrap();
        row["repeat_ns"] = serde_json::json!([median, 2 * median]);
    }
    let spread = dir.path().join("spread.json");
    std::fs::write(&spread, value.to_string()).unwrap();
    let (ok, stdout, stderr) = gigagas(&["simulate", spread.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("its calibration repeats differ by up to 100% (at "),
        "{stdout}"
    );
}

#[test]
fn compare_gives_a_verdict_per_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture_in(dir.path());
    let mut files = Vec::new();
    for name in ["a.json", "b.json"] {
        let (_, json) = bench_fixture(
            &data,
            name,
            &["--threads", "1", "--scheduler", "ordered", "--repeats", "3"],
        );
        files.push(json.to_str().unwrap().to_owned());
    }
    let (ok, stdout, stderr) = gigagas(&[
        "compare",
        &files[0],
        &files[1],
        "--markdown",
        "--floor",
        "2%",
    ]);
    assert!(ok, "{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| sequential") || l.starts_with("| parallel"))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(rows.iter().all(|r| r.contains("faster")
        || r.contains("slower")
        || r.contains("no change")
        || r.contains("inconclusive")));
    let (ok, _, stderr) = gigagas(&["compare", &files[0], &files[1], "--floor", "abc"]);
    assert!(!ok && stderr.contains("abc"), "{stderr}");
    let (ok, _, _) = gigagas(&["compare", &files[0], "/nonexistent.json"]);
    assert!(!ok);
    // Several files per side are pooled (A-B-B-A): their repeats are joined. (One file twice
    // on a side is refused: it would count its repeats twice.)
    let copy = format!("{}.copy.json", files[0]);
    std::fs::copy(&files[0], &copy).unwrap();
    let pooled_a = format!("{},{}", files[0], copy);
    let (ok, stdout, stderr) = gigagas(&["compare", &pooled_a, &files[1]]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("(3 repeats vs 6)"), "{stdout}");
}

#[test]
fn report_writes_one_self_contained_html_with_every_plot() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture_in(dir.path());
    let (_, json) = bench_fixture(&data, "out.json", &["--threads", "1,2", "--repeats", "2"]);
    let html = dir.path().join("report.html");
    let (ok, _, stderr) = gigagas(&[
        "report",
        json.to_str().unwrap(),
        "--out",
        html.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&html).unwrap();
    // Six figures; with only two blocks the cost model is declined (it needs five).
    assert_eq!(text.matches("<figure>").count(), 6);
    assert_eq!(text.matches("<svg").count(), 5);
    assert!(text.contains("No cost model (fewer than 5 blocks)"));
    assert!(!text.contains("plot failed"));
    // Self-contained: no scripts, no external resources (SVG namespaces are not fetched).
    assert!(!text.contains("<script"));
    assert!(
        !text.contains("src=") && !text.contains("href="),
        "no external resources"
    );
    let (ok, _, _) = gigagas(&[
        "report",
        "/nonexistent.json",
        "--out",
        html.to_str().unwrap(),
    ]);
    assert!(!ok);
}

#[test]
fn inline_sender_recovery_is_measured_as_its_own_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture_in(dir.path());
    let (_, json) = bench_fixture(
        &data,
        "out.json",
        &[
            "--threads",
            "2",
            "--scheduler",
            "ordered",
            "--repeats",
            "1",
            "--recover-senders",
            "pre,inline",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let runs = report["runs"].as_array().unwrap();
    let placements: Vec<&str> = runs
        .iter()
        .map(|r| r["recover_senders"].as_str().unwrap())
        .collect();
    assert_eq!(placements, ["pre", "pre", "inline", "inline"]);
    let (ok, _, stderr) = gigagas(&["bench", "--recover-senders", "later"]);
    assert!(!ok && stderr.contains("later"), "{stderr}");
}

fn conformance_fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tests/fixtures")
}

#[test]
fn conformance_passes_the_bundled_fixtures_and_writes_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("conformance.json");
    let fixtures = conformance_fixtures();
    let (ok, stdout, stderr) = gigagas(&[
        "conformance",
        fixtures.to_str().unwrap(),
        "--mutations",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("6 passed, 0 failed, 0 skipped"), "{stdout}");
    assert!(stdout.contains("BAL mutants rejected"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(summary["schema"], "gigagas.conformance/1");
    assert_eq!(summary["passed"], 6);
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["skipped"], 0);
    assert_eq!(summary["mode"], "both");
    assert!(summary["by_fork"]["Frontier"]["passed"].as_u64() == Some(1));
}

#[test]
fn conformance_counts_bad_files_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        conformance_fixtures().join("double_kill.json"),
        dir.path().join("double_kill.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("garbled.json"), "{\"x\": [").unwrap();
    let results = tempfile::tempdir().unwrap();
    let json = results.path().join("out.json");
    let (ok, stdout, stderr) = gigagas(&[
        "conformance",
        dir.path().to_str().unwrap(),
        "--mode",
        "parallel",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stdout.contains("garbled.json"), "{stdout}");
    assert!(
        stderr.contains("1 of 3 conformance tests failed"),
        "{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        (summary["passed"].as_u64(), summary["failed"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(summary["failures"][0]["reason"], "invalid JSON");

    let (ok, _, stderr) = gigagas(&["conformance", "/nonexistent/fixtures"]);
    assert!(!ok);
    assert!(stderr.contains("does not exist"), "{stderr}");
}

#[test]
fn gen_writes_a_chain_that_run_and_bench_load() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chain");
    let out_s = out.to_str().unwrap();
    let (ok, stdout, stderr) = gigagas(&[
        "gen",
        "erc20",
        "--blocks",
        "2",
        "--block-gas",
        "2M",
        "--seed",
        "3",
        "--senders",
        "8",
        "--out",
        out_s,
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("every block verified"), "{stdout}");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("chain.json")).unwrap()).unwrap();
    assert_eq!(meta["schema"], "gigagas.chain/1");
    assert_eq!(meta["fork"], "Amsterdam");
    assert_eq!(meta["blocks"], 2);

    let (ok, stdout, stderr) = gigagas(&[
        "run",
        "--data",
        out_s,
        "--mode",
        "parallel",
        "--threads",
        "2",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout.matches("verified").count(), 3, "{stdout}");
    let (stdout, json) = bench_fixture(
        &out,
        "gen.json",
        &["--repeats", "1", "--threads", "1,2", "--markdown"],
    );
    assert!(stdout.contains("| sequential |"), "{stdout}");
    assert!(json.exists());

    // Same seed, same chain; a tampered BAL is refused when loading.
    let again = dir.path().join("again");
    let (ok, _, _) = gigagas(&[
        "gen",
        "erc20",
        "--blocks",
        "2",
        "--block-gas",
        "2M",
        "--seed",
        "3",
        "--senders",
        "8",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(ok);
    assert_eq!(
        std::fs::read(out.join("blocks.rlp")).unwrap(),
        std::fs::read(again.join("blocks.rlp")).unwrap()
    );
    let mut blocks = std::fs::read(out.join("blocks.rlp")).unwrap();
    let last = blocks.len() - 30;
    blocks[last] ^= 0x01;
    std::fs::write(out.join("blocks.rlp"), blocks).unwrap();
    let (ok, _, stderr) = gigagas(&["run", "--data", out_s]);
    assert!(!ok);
    assert!(stderr.contains("error"), "{stderr}");

    let (ok, _, stderr) = gigagas(&["gen", "nonsense", "--out", out_s]);
    assert!(!ok);
    assert!(stderr.contains("unknown workload"), "{stderr}");
}

#[test]
fn mega_blocks_verify_every_block_and_never_join_non_consecutive_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chain");
    let out_s = out.to_str().unwrap();
    let (ok, _, stderr) = gigagas(&[
        "gen",
        "mainnet-mix",
        "--blocks",
        "4",
        "--block-gas",
        "2M",
        "--senders",
        "16",
        "--out",
        out_s,
    ]);
    assert!(ok, "{stderr}");
    for (k, units) in [("1", 4), ("2", 2), ("4", 1), ("10", 1)] {
        let (ok, stdout, stderr) = gigagas(&[
            "run",
            "--data",
            out_s,
            "--mega",
            k,
            "--threads",
            "2",
            "--scheduler",
            "gas-used",
        ]);
        assert!(ok, "--mega {k}: {stderr}");
        // One line per block, each verified on its own; a block after the first of its
        // mega-block names the unit it ran in.
        let blocks: Vec<&str> = stdout.lines().filter(|l| l.starts_with("block ")).collect();
        assert_eq!(blocks.len(), 4, "{stdout}");
        assert!(
            blocks
                .iter()
                .all(|l| l.contains("verified (gas, bloom, receipts root")),
            "{stdout}"
        );
        let followers = blocks
            .iter()
            .filter(|l| l.contains("execute (mega-block from"))
            .count();
        assert_eq!(4 - followers, units, "--mega {k}: {stdout}");
        assert!(stdout.contains("total: 4 blocks"), "{stdout}");
    }
    // The mainnet fixture (blocks 46147 and 1150000): no consecutive numbers, so each block
    // is its own unit; mega-blocks never join blocks that are not parent and child.
    let mainnet = tempfile::tempdir().unwrap();
    fixture(mainnet.path());
    let (ok, stdout, stderr) = gigagas(&[
        "run",
        "--data",
        mainnet.path().to_str().unwrap(),
        "--mega",
        "2",
    ]);
    assert!(ok, "{stderr}");
    // Two blocks, two units; before Byzantium no receipts root is claimed.
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("block ")).count(),
        2,
        "{stdout}"
    );
    assert!(!stdout.contains("mega-block from"), "{stdout}");
    assert_eq!(
        stdout.matches("no receipts root (pre-Byzantium)").count(),
        2,
        "{stdout}"
    );
}

/// `bench --workload A,B --mega 1,2` generates each workload, measures each data set on its
/// own (mega-block runs included) and writes a sweep that `report`, `simulate` and `compare`
/// read back.
#[test]
fn bench_sweeps_generated_workloads_and_mega_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    let (ok, stdout, stderr) = gigagas(&[
        "bench",
        "--workload",
        "erc20,serial-chain",
        "--block-gas",
        "2M",
        "--blocks",
        "2",
        "--threads",
        "1,2",
        "--scheduler",
        "ordered",
        "--mega",
        "1,2",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("sweep over 2 data sets"), "{stdout}");
    let sweep: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(sweep["schema"], "gigagas.sweep/1");
    let reports = sweep["reports"].as_array().unwrap();
    let names: Vec<&str> = reports
        .iter()
        .map(|r| r["data"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["erc20 2M×2 seed 1", "serial-chain 2M×2 seed 1"]);
    for report in reports {
        assert_eq!(report["schema"], "gigagas.bench/1");
        let runs = report["runs"].as_array().unwrap();
        // sequential + (mega 1, 2) × (1, 2 threads) × ordered
        assert_eq!(runs.len(), 1 + 2 * 2);
        let mega: Vec<u64> = runs.iter().map(|r| r["mega"].as_u64().unwrap()).collect();
        assert_eq!(mega, [1, 1, 1, 2, 2]);
        // Two consecutive blocks form one mega-block unit.
        assert_eq!(runs[3]["block_ns"].as_array().unwrap().len(), 1);
        assert_eq!(runs[1]["block_ns"].as_array().unwrap().len(), 2);
    }
    let html = dir.path().join("sweep.html");
    let (ok, _, stderr) = gigagas(&[
        "report",
        json.to_str().unwrap(),
        "--out",
        html.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Sweep summary") && page.contains("serial-chain 2M×2 seed 1"));
    assert!(
        page.matches("<svg").count() > 2 * 6,
        "plots per data set + summary"
    );
    let (ok, stdout, stderr) = gigagas(&[
        "simulate",
        json.to_str().unwrap(),
        "--threads",
        "2",
        "--mega",
        "1,2",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout.matches("1-thread traces calibrated").count(), 2);
    let (ok, stdout, stderr) =
        gigagas(&["compare", json.to_str().unwrap(), json.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("erc20 2M×2 seed 1: parallel/2t/ordered/mega2"),
        "{stdout}"
    );
}

/// `bench --root/--pipeline` measures the whole block pipeline beside execution: every
/// configuration in the table and the JSON with its stages, the end-to-end figure below
/// execution alone, and the report draws the stacked stages and the timelines.
#[test]
fn bench_measures_the_whole_pipeline_beside_execution() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("pipeline.json");
    let (ok, stdout, stderr) = gigagas(&[
        "bench",
        "--workload",
        "erc20",
        "--block-gas",
        "2M",
        "--blocks",
        "3",
        "--threads",
        "2",
        "--scheduler",
        "gas-used",
        "--root",
        "parallel,incremental",
        "--pipeline",
        "on,off",
        "--repeats",
        "2",
        "--warmup",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("the whole block pipeline"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let pipeline = report["pipeline"].as_array().unwrap();
    let configs: Vec<(String, bool)> = pipeline
        .iter()
        .map(|p| {
            (
                p["root"].as_str().unwrap().to_owned(),
                p["overlap"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        configs,
        [
            ("parallel".into(), true),
            ("parallel".into(), false),
            ("incremental".into(), true),
            ("incremental".into(), false)
        ]
    );
    for p in pipeline {
        assert_eq!(p["scheduler"], "gas-used");
        assert_eq!(p["repeat_ns"].as_array().unwrap().len(), 2);
        let phases = p["phases_ns"].as_object().unwrap();
        let keys: Vec<&str> = phases.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["execute", "prefetch", "recover", "root", "verify", "write"]
        );
        for stage in ["recover", "execute", "verify", "root"] {
            assert!(
                phases[stage].as_u64().unwrap() > 0,
                "{stage} took no time: {p}"
            );
        }
        // The end-to-end figure includes every stage: below execution alone.
        let (e2e, pure) = (
            p["e2e_mgas_per_s"].as_f64().unwrap(),
            p["mgas_per_s"].as_f64().unwrap(),
        );
        assert!(e2e > 0.0 && e2e < pure, "{e2e} vs {pure}");
        let timeline = p["timeline"].as_array().unwrap();
        assert_eq!(timeline.len(), 3);
        for block in timeline {
            for span in block["stages"].as_object().unwrap().values() {
                let span = span.as_array().unwrap();
                assert!(span[0].as_u64().unwrap() <= span[1].as_u64().unwrap());
            }
        }
        assert!(p["bound_ns"].as_u64().unwrap() > 0);
    }
    let html = dir.path().join("pipeline.html");
    let (ok, _, stderr) = gigagas(&[
        "report",
        json.to_str().unwrap(),
        "--out",
        html.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("The whole block pipeline") && page.contains("Pipeline stages"));
    // Timelines of the last root mode at the most threads: pipeline on and off.
    assert_eq!(page.matches("Timeline, 2t root incremental").count(), 2);

    // The incremental root on touched-only pre-states is refused before any work.
    let (ok, _, stderr) = gigagas(&["bench", "--root", "incremental", "--repeats", "1"]);
    assert!(!ok);
    assert!(
        stderr.contains("root incremental needs complete states"),
        "{stderr}"
    );
}

/// `bench --state disk --root incremental`: the pipeline's state in an on-disk store, a
/// fresh copy per pass; the store's prefetch stage now has work, every root still equals the
/// header's; `--sync` as `run` takes it (default every-3 warm), recorded per row; other roots,
/// a missing --root, `--sync` in memory or with a cold cache are refused before any work.
#[test]
fn bench_measures_the_pipeline_on_an_on_disk_store() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("disk.json");
    let base = [
        "bench",
        "--workload",
        "erc20",
        "--block-gas",
        "2M",
        "--blocks",
        "3",
        "--threads",
        "2",
        "--scheduler",
        "ordered",
        "--repeats",
        "2",
        "--warmup",
        "1",
    ];
    let mut args = base.to_vec();
    args.extend([
        "--root",
        "incremental",
        "--pipeline",
        "on,off",
        "--state",
        "disk",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (ok, stdout, stderr) = gigagas(&args);
    assert!(ok, "{stderr}");
    // run's default policy: every-3 warm.
    assert!(stdout.contains("incremental (disk, every-3)"), "{stdout}");
    assert!(stdout.contains("on (overlay)"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let pipeline = report["pipeline"].as_array().unwrap();
    assert_eq!(pipeline.len(), 2);
    for p in pipeline {
        assert_eq!(p["state"], "disk");
        assert_eq!(p["sync"], "every-3");
        // The store's overlay runs with the pipeline, never without it.
        assert_eq!(p["overlay"], p["overlap"], "{p}");
        // 3 blocks: the flush after block 3 is waited for at the end, inside the pass.
        assert!(p["final_sync_ns"].as_u64().unwrap() > 0, "{p}");
        assert!(p["phases_ns"]["prefetch"].as_u64().unwrap() > 0, "{p}");
        assert!(p["phases_ns"]["root"].as_u64().unwrap() > 0, "{p}");
        assert_eq!(p["timeline"].as_array().unwrap().len(), 3);
    }
    // --sync end: the last flush inside each pass; cold takes every-block only.
    let mut args = base.to_vec();
    args.extend([
        "--root",
        "incremental",
        "--pipeline",
        "off",
        "--state",
        "disk",
        "--sync",
        "end",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (ok, stdout, stderr) = gigagas(&args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("incremental (disk, end)"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["pipeline"][0]["sync"], "end");
    assert!(
        report["pipeline"][0]["final_sync_ns"].as_u64().unwrap() > 0,
        "{}",
        report["pipeline"][0]
    );
    // --overlay on,off: two pipeline-on rows, only one reading the last block's writes from
    // memory while they commit.
    let mut args = base.to_vec();
    args.extend([
        "--root",
        "incremental",
        "--state",
        "disk",
        "--overlay",
        "on,off",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (ok, stdout, stderr) = gigagas(&args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("on (overlay)"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let overlays: Vec<_> = report["pipeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["overlay"].as_bool().unwrap())
        .collect();
    assert_eq!(overlays, [true, false]);
    for (extra, needle) in [
        (
            vec!["--root", "incremental", "--overlay", "off"],
            "--overlay applies",
        ),
        (
            vec![
                "--root",
                "incremental",
                "--state",
                "disk",
                "--pipeline",
                "off",
                "--overlay",
                "on",
            ],
            "--overlay applies",
        ),
        (
            vec!["--state", "disk", "--root", "parallel"],
            "root incremental only",
        ),
        (vec!["--state", "disk"], "give --root incremental"),
        (
            vec!["--root", "incremental", "--sync", "end"],
            "--sync with --state",
        ),
        (
            vec![
                "--root",
                "incremental",
                "--pipeline",
                "off",
                "--state",
                "disk",
                "--cache",
                "cold",
                "--sync",
                "every-3",
            ],
            "--cache cold",
        ),
        (
            vec![
                "--root",
                "incremental",
                "--state",
                "disk",
                "--sync",
                "every-0",
            ],
            "every-N",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        let (ok, _, stderr) = gigagas(&args);
        assert!(!ok);
        assert!(stderr.contains(needle), "{stderr}");
    }
}

// ---------------------------------------------------------------------------------------
// Hostile inputs: outputs never lose data, numbers that cannot work are refused.
// ---------------------------------------------------------------------------------------

/// A small bench result (2 blocks, 3 repeats) copied into `dir/name`.
fn tiny_result(dir: &Path, name: &str) -> std::path::PathBuf {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/tests/fixtures/tiny-report.json");
    let path = dir.join(name);
    std::fs::copy(source, &path).unwrap();
    path
}

/// Rewrites the JSON at `path` with `f`.
/// A result edited to hold no blocks, consistently: no gas, no transactions, no per-block
/// times (a result that contradicts itself is refused as it is read).
fn without_blocks(v: &mut serde_json::Value) {
    v["blocks"] = serde_json::json!([]);
    if v["phases"].is_object() {
        v["phases"]["txs"] = serde_json::json!(0);
    }
    for run in v["runs"].as_array_mut().unwrap() {
        run["block_ns"] = serde_json::json!([]);
        run["total_gas"] = serde_json::json!(0);
    }
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut value);
    std::fs::write(path, serde_json::to_vec(&value).unwrap()).unwrap();
}

/// Names in `dir` that look like leftovers of a write (temporary files or directories).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial") || n.ends_with(".old") || n.contains("probe"))
        .collect()
}

/// Runs gigagas, killing it after `seconds`; `None` when it had to be killed.
fn gigagas_within(args: &[&str], seconds: u64) -> Option<(bool, String, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_symlink()
}

#[test]
fn outputs_go_to_stdout_and_devices_without_replacing_them() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let result = tiny_result(dir.path(), "result.json");
    let r = result.to_str().unwrap();
    for out in ["-", "/dev/stdout"] {
        let (ok, stdout, stderr) = gigagas(&["report", r, "--out", out]);
        assert!(ok, "--out {out}: {stderr}");
        assert!(stdout.starts_with("<!doctype html>"), "--out {out}");
    }
    assert!(is_symlink(Path::new("/dev/stdout")), "/dev/stdout kept");
    let (ok, _, stderr) = gigagas(&["report", r, "--out", "/dev/null"]);
    assert!(ok, "{stderr}");
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    if Path::new("/dev/full").exists() {
        let (ok, _, stderr) = gigagas(&["report", r, "--out", "/dev/full"]);
        assert!(!ok);
        assert!(stderr.contains("--out /dev/full"), "{stderr}");
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
    }
    // A FIFO is written, not replaced.
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let (ok, _, stderr) = gigagas(&["report", r, "--out", fifo.to_str().unwrap()]);
    if !ok {
        // Unblock the reader before failing.
        drop(std::fs::OpenOptions::new().write(true).open(&fifo));
    }
    assert!(ok, "{stderr}");
    let html = reader.join().unwrap();
    assert!(html.starts_with(b"<!doctype html>"));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A directory is refused, not replaced, and nothing is left behind.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (ok, _, stderr) = gigagas(&["report", r, "--out", sub.to_str().unwrap()]);
    assert!(!ok && stderr.contains("is a directory"), "{stderr}");
    assert!(sub.is_dir());
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn symlinked_outputs_are_written_through_and_keep_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let result = tiny_result(dir.path(), "result.json");
    let r = result.to_str().unwrap();
    let real = dir.path().join("real.html");
    std::fs::write(&real, "stale").unwrap();
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink("real.html", &link).unwrap();
    let (ok, _, stderr) = gigagas(&["report", r, "--out", link.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(is_symlink(&link), "the link stays a link");
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("<!doctype html>"));
    // A dangling link creates its target.
    let dangling = dir.path().join("dangling.html");
    std::os::unix::fs::symlink(dir.path().join("new.html"), &dangling).unwrap();
    let (ok, _, stderr) = gigagas(&["report", r, "--out", dangling.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(is_symlink(&dangling));
    assert!(dir.path().join("new.html").is_file());
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn an_output_that_is_an_input_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let result = tiny_result(dir.path(), "result.json");
    let r = result.to_str().unwrap();
    let before = std::fs::read(&result).unwrap();
    let alias = dir.path().join("alias.json");
    std::os::unix::fs::symlink(&result, &alias).unwrap();
    let hard = dir.path().join("hard.json");
    std::fs::hard_link(&result, &hard).unwrap();
    let dotted = format!("{}/./result.json", dir.path().display());
    for out in [r, alias.to_str().unwrap(), hard.to_str().unwrap(), &dotted] {
        let (ok, _, stderr) = gigagas(&["report", r, "--out", out]);
        assert!(!ok, "--out {out}");
        assert!(
            stderr.contains("refusing to overwrite an input") && stderr.contains(r),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read(&result).unwrap(),
        before,
        "the measurement survives"
    );
    // A FIFO that is the input is not written either (it would read its own output).
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let f = fifo.to_str().unwrap();
    let (ok, _, stderr) = gigagas_within(&["report", f, "--out", f], 30).expect("refused at once");
    assert!(!ok && stderr.contains("is the input FILE"), "{stderr}");

    // bench: the data set itself, or a file inside the data directory; refused before the
    // data set is even loaded.
    let archive = dir.path().join("x.tar.zst");
    std::fs::write(&archive, "not really an archive").unwrap();
    let a = archive.to_str().unwrap();
    let (ok, _, stderr) = gigagas(&["bench", "--data", a, "--json", a]);
    assert!(!ok && stderr.contains("is the input --data"), "{stderr}");
    assert_eq!(std::fs::read(&archive).unwrap(), b"not really an archive");
    let data = fixture_in(dir.path());
    let inside = data.join("out.json");
    let (ok, _, stderr) = gigagas(&[
        "bench",
        "--data",
        data.to_str().unwrap(),
        "--json",
        inside.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("lies inside the input --data"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("loaded"),
        "refused before loading: {stderr}"
    );
    assert!(!inside.exists());
    // pack: the archive inside the directory it packs.
    let archive = data.join("sample.tar.zst");
    let (ok, _, stderr) = gigagas(&[
        "pack",
        "--data",
        data.to_str().unwrap(),
        "--out",
        archive.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("lies inside the input --data"),
        "{stderr}"
    );
    assert!(!archive.exists());
}

#[test]
fn output_paths_are_checked_before_the_work_starts() {
    let dir = tempfile::tempdir().unwrap();
    let result = tiny_result(dir.path(), "result.json");
    for (args, needle) in [
        (
            vec!["bench", "--json", "/nonexistent-gigagas/x.json"],
            "--json /nonexistent-gigagas/x.json: its directory /nonexistent-gigagas does not exist",
        ),
        (
            vec!["bench", "--json", "/proc/gigagas-x.json"],
            "cannot create files in /proc",
        ),
        (
            vec![
                "report",
                result.to_str().unwrap(),
                "--out",
                "/nonexistent-gigagas/r.html",
            ],
            "does not exist",
        ),
        (
            vec![
                "conformance",
                "/nonexistent-fixtures",
                "--json",
                "/nonexistent-gigagas/c.json",
            ],
            "--json /nonexistent-gigagas/c.json",
        ),
    ] {
        let (ok, _, stderr) = gigagas_within(&args, 30).expect("refused at once");
        assert!(!ok, "{args:?}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("loaded"),
            "checked before loading: {stderr}"
        );
    }
}

#[test]
fn bench_json_to_stdout_keeps_the_tables_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture_in(dir.path());
    let (ok, stdout, stderr) = gigagas(&[
        "bench",
        "--data",
        data.to_str().unwrap(),
        "--threads",
        "1",
        "--scheduler",
        "ordered",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--json",
        "-",
    ]);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is the JSON");
    assert_eq!(report["schema"], "gigagas.bench/1");
    assert!(stderr.contains("every run verified"), "{stderr}");
}

/// `gen sstore-bloated --slots N [--spread] --fork cancun` writes a small chain.json (the
/// fill rule, not the slots) that `run` loads and verifies block by block.
#[test]
fn gen_sstore_bloated_slots_and_spread_chains_run() {
    let dir = tempfile::tempdir().unwrap();
    for spread in [false, true] {
        let out = dir.path().join(format!("bloated-{spread}"));
        let out_s = out.to_str().unwrap();
        let extra: &[&str] = if spread { &["--spread"] } else { &[] };
        let (ok, stdout, stderr) = crate::gen_bloated(&out, extra);
        assert!(ok, "{stderr}");
        assert!(stdout.contains("(0 failed"), "{stdout}");
        assert!(stdout.contains("fork Cancun"), "{stdout}");
        let json = std::fs::read(out.join("chain.json")).unwrap();
        assert!(json.len() < 16 * 1024, "chain.json {} bytes", json.len());
        let meta: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let fill = &meta["storage_fill"][0];
        assert_eq!(fill["slots"], 5000);
        assert_eq!(fill["accounts"], if spread { 71 } else { 1 });
        for mode in ["sequential", "parallel"] {
            let (ok, _, stderr) = gigagas(&["run", "--data", out_s, "--mode", mode]);
            assert!(ok, "{mode}, spread {spread}: {stderr}");
        }
    }
    let help = gigagas(&["gen", "--help"]).1;
    assert!(
        help.contains("--slots") && help.contains("100000000"),
        "{help}"
    );
    assert!(help.contains("--spread"), "{help}");
}

/// `gen bal-*`: the EIP-7928 shapes take their source's parameters as flags (and refuse
/// flags that do not apply, naming them); the chain records the parameters and `run` verifies
/// it; `bench --workload` takes the named set `eest-bal` beside workload names (its expansion
/// and skips are tested in gigagas-gen).
#[test]
fn gen_bal_shapes_take_their_parameters_and_bench_expands_eest_bal() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("state-root");
    let out_s = out.to_str().unwrap();
    let (ok, stdout, stderr) = gigagas(&[
        "gen",
        "bal-state-root",
        "--contracts",
        "per-tx",
        "--density",
        "max",
        "--blocks",
        "2",
        "--block-gas",
        "3M",
        "--out",
        out_s,
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("bal-state-root:per-tx:max"), "{stdout}");
    assert!(stdout.contains("(0 failed"), "{stdout}");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("chain.json")).unwrap()).unwrap();
    assert_eq!(meta["workload"], "bal-state-root:per-tx:max");
    for mode in ["sequential", "parallel"] {
        let (ok, _, stderr) = gigagas(&["run", "--data", out_s, "--mode", mode]);
        assert!(ok, "{mode}: {stderr}");
    }
    for (args, needle) in [
        (&["gen", "erc20", "--density", "max"][..], "--density"),
        (&["gen", "bal-serial-chain", "--group", "2"][..], "--group"),
        (
            &["gen", "bal-mixed-graph", "--group", "0"][..],
            "group size 0",
        ),
        (
            &["gen", "bal-state-root", "--density", "dense"][..],
            "dense",
        ),
        (
            &["gen", "bal-mixed-graph:group-5", "--block-gas", "30M"][..],
            "group-5",
        ),
    ] {
        let mut args = args.to_vec();
        let out = dir.path().join("refused");
        args.extend(["--out", out.to_str().unwrap()]);
        let (ok, _, stderr) = gigagas(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    // A bad name beside the set is refused before anything runs, naming both.
    let (ok, _, stderr) = gigagas(&[
        "bench",
        "--workload",
        "eest-bal,bal-nope",
        "--block-gas",
        "30M",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("bal-nope") && stderr.contains("eest-bal"),
        "{stderr}"
    );
}

fn gen_small(out: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec![
        "gen",
        "transfers",
        "--blocks",
        "1",
        "--block-gas",
        "1M",
        "--senders",
        "4",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    gigagas(&args)
}

#[test]
fn gen_never_replaces_a_directory_without_force_and_never_half_writes() {
    let dir = tempfile::tempdir().unwrap();
    // A mainnet data directory: refused, nothing added.
    let data = fixture_in(dir.path());
    let (ok, _, stderr) = gen_small(&data, &[]);
    assert!(
        !ok && stderr.contains("not empty") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(!data.join("chain.json").exists());
    assert!(!data.join("blocks.rlp").exists());

    // An old chain whose chain.json is a directory: refused without --force (blocks.rlp
    // untouched); replaced whole with --force.
    let chain = dir.path().join("chain");
    std::fs::create_dir_all(chain.join("chain.json")).unwrap();
    std::fs::write(chain.join("blocks.rlp"), "old").unwrap();
    let (ok, _, stderr) = gen_small(&chain, &[]);
    assert!(!ok && stderr.contains("not empty"), "{stderr}");
    assert_eq!(std::fs::read(chain.join("blocks.rlp")).unwrap(), b"old");
    let (ok, _, stderr) = gen_small(&chain, &["--force"]);
    assert!(ok, "{stderr}");
    assert!(chain.join("chain.json").is_file());
    assert_ne!(std::fs::read(chain.join("blocks.rlp")).unwrap(), b"old");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    assert!(leftovers(&chain).is_empty(), "{:?}", leftovers(&chain));

    // An empty directory is fine; a file or a missing parent is refused before generating.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (ok, _, stderr) = gen_small(&empty, &[]);
    assert!(ok, "{stderr}");
    assert!(empty.join("chain.json").is_file());
    let file = dir.path().join("file");
    std::fs::write(&file, "keep").unwrap();
    let (ok, _, stderr) = gen_small(&file, &["--force"]);
    assert!(!ok && stderr.contains("not a directory"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    let (ok, _, stderr) = gen_small(&dir.path().join("missing/chain"), &[]);
    assert!(!ok && stderr.contains("does not exist"), "{stderr}");

    // A symlinked output directory is written through: the link stays a link.
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("real", &link).unwrap();
    for extra in [&[][..], &["--force"][..]] {
        let (ok, _, stderr) = gen_small(&link, extra);
        assert!(ok, "{stderr}");
        assert!(is_symlink(&link));
        assert!(real.join("chain.json").is_file());
    }
    // --force never replaces the directory the command runs in.
    let (ok, _, stderr) = gigagas_in(
        &real,
        &[
            "gen",
            "transfers",
            "--blocks",
            "1",
            "--out",
            real.to_str().unwrap(),
            "--force",
        ],
    );
    assert!(
        !ok && stderr.contains("contains the current directory"),
        "{stderr}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn numbers_that_cannot_work_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let result = tiny_result(dir.path(), "result.json");
    let r = result.to_str().unwrap();
    let out = dir.path().join("chain");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--threads", "0"],
            "--threads 0: must be at least 1",
        ),
        (
            vec!["run", "--threads", "100000"],
            "--threads 100000: above the limit of 1024",
        ),
        (vec!["run", "--mega", "0"], "--mega 0: must be at least 1"),
        (
            vec!["run", "--stage-threads", "5000"],
            "--stage-threads 5000: above the limit of 1024",
        ),
        (
            vec!["run", "--pipeline", "off", "--stage-threads", "2"],
            "--stage-threads with --pipeline: a pool of the stages' own",
        ),
        (
            vec!["bench", "--stage-threads", "2"],
            "--stage-threads applies to the pipeline runs",
        ),
        (
            vec!["bench", "--pipeline", "off", "--stage-threads", "2"],
            "--stage-threads applies with the pipeline on",
        ),
        (
            vec![
                "run",
                "--mode",
                "sequential",
                "--threads",
                "7",
                "--scheduler",
                "gas-used",
            ],
            "--threads with --mode: applies to parallel execution only",
        ),
        (
            vec!["run", "--mode", "sequential", "--mega", "2"],
            "--mega with --mode: applies to parallel execution only",
        ),
        (vec!["bench", "--threads", "0"], "--threads 0"),
        (vec!["bench", "--threads", "2,0"], "--threads 0"),
        (
            vec!["bench", "--threads", "100000"],
            "above the limit of 1024",
        ),
        (
            vec!["bench", "--block-gas", "300M"],
            "--block-gas only applies to generated data sets",
        ),
        (
            vec!["bench", "--blocks", "5"],
            "--blocks only applies to generated data sets",
        ),
        (vec!["bench", "--repeats", "0"], "--repeats 0"),
        (vec!["bench", "--mega", "0"], "--mega 0"),
        (
            vec!["bench", "--workload", "erc20", "--blocks", "0"],
            "--blocks 0",
        ),
        (
            vec!["gen", "erc20", "--blocks", "0", "--out", o],
            "--blocks 0",
        ),
        (
            vec!["gen", "erc20", "--blocks", "100000", "--out", o],
            "above the limit of 10000",
        ),
        (
            vec![
                "gen",
                "erc20",
                "--block-gas",
                "99999999999999999999G",
                "--out",
                o,
            ],
            "--block-gas",
        ),
        (
            vec!["gen", "erc20", "--block-gas", "11G", "--out", o],
            "above the limit of 10G",
        ),
        (
            vec!["gen", "erc20", "--block-gas", "1.5", "--out", o],
            "not a whole amount of gas",
        ),
        (
            vec!["gen", "erc20", "--tx-gas-cap", "0", "--out", o],
            "--tx-gas-cap",
        ),
        (
            vec!["gen", "erc20", "--senders", "1", "--out", o],
            "--senders 1",
        ),
        (
            vec!["gen", "erc20", "--slots", "5000", "--out", o],
            "--slots applies to the sstore-bloated workload only",
        ),
        (
            vec!["gen", "transfers", "--spread", "--out", o],
            "--spread applies to the sstore-bloated workload only",
        ),
        (
            vec!["gen", "sstore-bloated", "--slots", "0", "--out", o],
            "--slots 0: must be at least 1",
        ),
        (
            vec!["gen", "sstore-bloated", "--slots", "100000001", "--out", o],
            "--slots 100000001: above the limit of 100000000",
        ),
        (
            vec!["gen", "sstore-bloated", "--slots=-3", "--out", o],
            "--slots",
        ),
        (
            vec!["simulate", r, "--threads", "4000000000"],
            "--threads 4000000000: above the limit of 1024",
        ),
        (vec!["simulate", r, "--threads", "0"], "--threads 0"),
        (
            vec!["conformance", "/nonexistent", "--threads", "0"],
            "--threads 0",
        ),
    ];
    for (args, needle) in cases {
        let (ok, _, stderr) = gigagas_within(&args, 30).expect("refused at once");
        assert!(!ok, "{args:?} accepted");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("loaded"),
            "{args:?} refused late: {stderr}"
        );
    }
    assert!(!out.exists(), "nothing generated");
}

#[test]
fn compare_refuses_different_data_zero_throughput_and_judges_only_enough_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let a = tiny_result(dir.path(), "a.json");
    let a_s = a.to_str().unwrap();
    // Same data, 3 repeats each, spread by ±30%: the interval reaches past ±2%, so no
    // verdict but the repeats that would settle it.
    let (ok, stdout, stderr) = gigagas(&["compare", a_s, a_s]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("inconclusive") && stdout.contains("repeats per side"),
        "{stdout}"
    );
    assert!(!stdout.contains("no change"), "{stdout}");
    // Tight repeats: the whole interval within ±2% is "no change".
    let tight = tiny_result(dir.path(), "tight.json");
    edit_json(&tight, |v| {
        for run in v["runs"].as_array_mut().unwrap() {
            let m = run["median_ns"].as_u64().unwrap();
            run["repeat_ns"] = serde_json::json!([m, m + m / 500, m - m / 500, m, m + m / 1000]);
            // Percentiles within the repeats (a result whose p90 lies outside them is refused).
            run["p10_ns"] = serde_json::json!(m - m / 500);
            run["p90_ns"] = serde_json::json!(m + m / 500);
            run["p99_ns"] = serde_json::json!(m + m / 500);
        }
    });
    let t = tight.to_str().unwrap();
    let (ok, stdout, stderr) = gigagas(&["compare", t, t]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("no change"), "{stdout}");

    // Different blocks (same numbers, different contents): refused.
    let other = tiny_result(dir.path(), "other.json");
    edit_json(&other, |v| {
        v["blocks"][0]["bal_hash"] = "0x1234".into();
    });
    let (ok, stdout, stderr) = gigagas(&["compare", a_s, other.to_str().unwrap()]);
    assert!(!ok && stderr.contains("different data"), "{stderr}");
    assert!(stdout.is_empty());

    // Zero throughput: refused, never "slower" at −100%.
    let zero = tiny_result(dir.path(), "zero.json");
    edit_json(&zero, |v| {
        for run in v["runs"].as_array_mut().unwrap() {
            run["repeat_ns"] = serde_json::json!([0, 0, 0]);
            run["median_ns"] = 0.into();
            run["mgas_per_s"] = 0.0.into();
        }
    });
    let z = zero.to_str().unwrap();
    // Refused as it is read: repeats of 0 ns over a data set with gas contradict each other.
    for (a, b) in [(z, z), (z, a_s)] {
        let (ok, stdout, stderr) = gigagas(&["compare", a, b]);
        assert!(
            !ok && stderr.contains("a repeat of 0 ns over a data set of"),
            "{stderr}"
        );
        assert!(!stdout.contains("slower"), "{stdout}");
    }

    // A result without blocks (and so no gas and no transactions): nothing to compare.
    let empty = tiny_result(dir.path(), "empty.json");
    edit_json(&empty, without_blocks);
    let e = empty.to_str().unwrap();
    let (ok, _, stderr) = gigagas(&["compare", e, e]);
    assert!(!ok && stderr.contains("has no blocks"), "{stderr}");

    // Two repeats a side: no verdict; pooled to four: a verdict.
    let two = tiny_result(dir.path(), "two.json");
    edit_json(&two, |v| {
        for run in v["runs"].as_array_mut().unwrap() {
            let first = run["repeat_ns"][0].clone();
            run["repeat_ns"] = serde_json::json!([first.clone(), first.clone()]);
            // Its statistics from those repeats (others are refused as contradictions).
            for stat in ["median_ns", "p90_ns", "p99_ns"] {
                run[stat] = first.clone();
            }
        }
        v["settings"]["repeats"] = 2.into();
    });
    let t = two.to_str().unwrap();
    let (ok, stdout, stderr) = gigagas(&["compare", t, t]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.matches("inconclusive: too few repeats").count(),
        3,
        "{stdout}"
    );
    // Pooled from two files (one file twice on a side is refused: it would count twice).
    let copy = dir.path().join("two-copy.json");
    std::fs::copy(&two, &copy).unwrap();
    let pooled = format!("{t},{}", copy.display());
    let (ok, stdout, stderr) = gigagas(&["compare", &pooled, &pooled]);
    assert!(ok, "{stderr}");
    assert!(!stdout.contains("inconclusive"), "{stdout}");
}

#[test]
fn report_on_a_result_without_blocks_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tiny_result(dir.path(), "empty.json");
    edit_json(&empty, without_blocks);
    let html = dir.path().join("empty.html");
    let (ok, _, stderr) = gigagas_within(
        &[
            "report",
            empty.to_str().unwrap(),
            "--out",
            html.to_str().unwrap(),
        ],
        60,
    )
    .expect("report on 0 blocks finishes");
    assert!(ok, "{stderr}");
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("No transactions"));
}

#[test]
fn a_broken_result_file_names_its_parse_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, r#"{"schema": "gigagas.bench/1", "data": "#).unwrap();
    let (ok, _, stderr) = gigagas(&["simulate", cut.to_str().unwrap()]);
    assert!(!ok);
    assert_eq!(stderr.matches("EOF while parsing").count(), 1, "{stderr}");
    // Errors that print their source inside their own message are not repeated by the
    // error chain either.
    let (ok, _, stderr) = gigagas(&["run", "--data", cut.to_str().unwrap()]);
    assert!(!ok);
    for line in stderr.lines().filter(|l| l.starts_with("error:")) {
        let parts: Vec<&str> = line.split(": ").collect();
        for window in parts.windows(2) {
            assert_ne!(window[0], window[1], "repeated: {line}");
        }
    }
    let (ok, _, stderr) = gigagas(&["run", "--data", "/nonexistent-gigagas-data"]);
    assert!(!ok);
    assert_eq!(stderr.matches("no such directory").count(), 1, "{stderr}");
}

/// `report FILE.json` without `--out` writes `FILE.html` beside its input, not `report.html`
/// into the working directory.
#[test]
fn report_writes_beside_its_input_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("result.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/tests/fixtures/tiny-report.json"),
        &input,
    )
    .unwrap();
    let (ok, _, stderr) = gigagas(&["report", input.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let html = std::fs::read_to_string(dir.path().join("result.html")).unwrap();
    assert!(
        html.contains("<svg") || html.contains("<html"),
        "not a report"
    );
}

/// The BAL variants through the binary: `run --bal` on the store counts the reads each block
/// sent to it (none for what the list carried), `bench --bal/--cache` measures every variant
/// warm and cold in one table, flags that contradict the variant are refused by name, and a
/// `bal stats` result becomes a report page with the size-vs-gas plot.
#[test]
fn bal_variants_run_bench_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let chain = dir.path().join("chain");
    let chain_s = chain.to_str().unwrap();
    let (ok, _, stderr) = gigagas(&[
        "gen",
        "mainnet-mix",
        "--blocks",
        "2",
        "--block-gas",
        "10M",
        "--seed",
        "3",
        "--out",
        chain_s,
    ]);
    assert!(ok, "{stderr}");
    let mut reads = Vec::new();
    for variant in ["keys", "writes", "none"] {
        let db = dir.path().join(format!("db-{variant}"));
        let (ok, stdout, stderr) = gigagas(&[
            "run",
            "--data",
            chain_s,
            "--state",
            "disk",
            "--db",
            db.to_str().unwrap(),
            "--bal",
            variant,
        ]);
        assert!(ok, "--bal {variant}: {stderr}");
        assert!(stdout.contains(&format!("bal {variant}")), "{stdout}");
        let n: u64 = stdout
            .lines()
            .filter(|l| l.contains(" reads on demand"))
            .filter_map(|l| {
                l.split(" reads on demand")
                    .next()?
                    .rsplit(' ')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum();
        reads.push(n);
    }
    assert!(reads[0] < reads[1] && reads[1] < reads[2], "{reads:?}");
    for (args, needle) in [
        (
            &["run", "--data", chain_s, "--bal", "none", "--threads", "2"][..],
            "--threads",
        ),
        (
            &["run", "--data", chain_s, "--bal", "some"][..],
            "full, keys, writes or none",
        ),
        (
            &["bench", "--data", chain_s, "--bal", "writes"][..],
            "--root",
        ),
        (
            &[
                "bench", "--data", chain_s, "--root", "parallel", "--cache", "cold",
            ][..],
            "--state disk",
        ),
        (
            &[
                "bench",
                "--data",
                chain_s,
                "--state",
                "disk",
                "--root",
                "incremental",
                "--cache",
                "cold",
            ][..],
            "--cache cold with --pipeline",
        ),
    ] {
        let (ok, _, stderr) = gigagas(args);
        assert!(!ok && stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let (stdout, json) = bench_fixture(
        &chain,
        "variants.json",
        &[
            "--repeats",
            "1",
            "--threads",
            "1",
            "--state",
            "disk",
            "--root",
            "incremental",
            "--pipeline",
            "off",
            "--cache",
            "warm,cold",
            "--bal",
            "full,keys,writes,none",
        ],
    );
    assert!(stdout.contains("reads on demand"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = report["pipeline"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "{rows:?}");
    for cache in ["warm", "cold"] {
        let reads = |bal: &str| {
            rows.iter()
                .find(|r| r["bal"] == bal && r["cache"] == cache)
                .unwrap_or_else(|| panic!("no {bal} {cache} row"))["demand_reads"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(reads("full"), reads("keys"), "{cache}");
        assert!(
            reads("keys") < reads("writes") && reads("writes") < reads("none"),
            "{cache}"
        );
    }
    let stats = dir.path().join("stats.json");
    let (ok, _, stderr) = gigagas(&[
        "bal",
        "stats",
        "--data",
        chain_s,
        "--json",
        stats.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let page = dir.path().join("stats.html");
    let (ok, _, stderr) = gigagas(&[
        "report",
        stats.to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("BAL size vs gas per block") && html.contains("<svg"),
        "{html}"
    );
    assert!(html.contains("full ÷ keys"), "{html}");
}

/// The README's command list is the help's: every command `gigagas --help` lists (and every
/// `db`/`bal` subcommand) has a line, and every `--flag` a line names is one that command's
/// `--help` documents. (A flag renamed or removed without the README following fails here.)
#[test]
fn readme_command_list_matches_the_help() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let lines: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("gigagas "))
        .map(|l| l.split("  #").next().unwrap_or(l))
        .collect();
    assert!(
        lines.len() >= 15,
        "the README's command list was not found: {lines:?}"
    );
    let commands = |help: &str| -> Vec<String> {
        help.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .filter(|c| c != "help")
            .collect()
    };
    let (ok, top, _) = gigagas(&["--help"]);
    assert!(ok);
    let mut expected: Vec<Vec<String>> = Vec::new();
    for command in commands(&top) {
        let (ok, help, _) = gigagas(&[&command, "--help"]);
        assert!(ok, "{command} --help");
        let subs = commands(&help);
        if subs.is_empty() {
            expected.push(vec![command]);
        } else {
            expected.extend(subs.into_iter().map(|s| vec![command.clone(), s]));
        }
    }
    for words in &expected {
        let prefix = format!("gigagas {} ", words.join(" "));
        let line = lines
            .iter()
            .find(|l| l.starts_with(&prefix) || l.trim_end() == prefix.trim_end())
            .unwrap_or_else(|| panic!("the README lists no `{}` line", prefix.trim_end()));
        let args: Vec<&str> = words.iter().map(String::as_str).chain(["--help"]).collect();
        let (ok, help, stderr) = gigagas(&args);
        assert!(ok, "{args:?}: {stderr}");
        let mut rest = *line;
        while let Some(at) = rest.find("--") {
            let flag: String = rest[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            rest = &rest[at + 2 + flag.len()..];
            if flag.is_empty() {
                continue;
            }
            let documented = help.match_indices(&format!("--{flag}")).any(|(i, m)| {
                !help[i + m.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            });
            assert!(
                documented,
                "the README names `--{flag}` for `{}`; its --help does not",
                words.join(" ")
            );
        }
    }
}

/// Class (a hostile pass on `simulate`, docs/results/hostile-pass-simulate-2core.md): what
/// once printed a report nobody could read, or numbers from nothing, is refused or said.
#[test]
fn simulate_refuses_what_it_cannot_simulate_and_says_what_it_did_not_calibrate() {
    let dir = tempfile::tempdir().unwrap();
    let file = tiny_result(dir.path(), "r.json");
    let f = file.to_str().unwrap();
    // Stdout closed: the report would be lost with status 0.
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" simulate \"$1\" >&-")
        .arg(env!("CARGO_BIN_EXE_gigagas"))
        .arg(f)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("stdout is closed"));
    // A sweep of every combination is bounded before anything is replayed.
    let threads: Vec<String> = (1..=1024).map(|t| t.to_string()).collect();
    let (ok, _, stderr) = gigagas(&[
        "simulate",
        f,
        "--threads",
        &threads.join(","),
        "--mega",
        "1,2",
    ]);
    assert!(
        !ok && stderr.contains("combinations, at most 4096"),
        "{stderr}"
    );
    // A limit variable that is not a number is an error, not the default in silence.
    let o = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args(["simulate", f])
        .env("GIGAGAS_MAX_RESULT_BYTES", "lots")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("GIGAGAS_MAX_RESULT_BYTES=lots"));
    // No 1-thread parallel run: the header says the traces are not calibrated.
    edit_json(&file, |v| {
        let runs = v["runs"].as_array_mut().unwrap();
        runs.retain(|r| !(r["mode"] == "parallel" && r["threads"] == 1));
    });
    let (ok, stdout, stderr) = gigagas(&["simulate", f, "--threads", "2"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("NOT calibrated"), "{stdout}");
    // No blocks: nothing to simulate.
    edit_json(&file, without_blocks);
    let (ok, _, stderr) = gigagas(&["simulate", f]);
    assert!(
        !ok && stderr.contains("no blocks: nothing to simulate"),
        "{stderr}"
    );
}
