//! Whole-binary tests: the real `gigagas` on real blocks, good and bad.

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

fn gigagas(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args(args)
        .output()
        .expect("run gigagas");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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

#[test]
fn run_verifies_each_block_and_prints_a_total() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let data = dir.path().to_str().unwrap();
    for mode in ["sequential", "parallel"] {
        let (ok, stdout, stderr) = gigagas(&[
            "run",
            "--data",
            data,
            "--mode",
            mode,
            "--threads",
            "2",
            "--scheduler",
            "gas-used",
        ]);
        assert!(ok, "{stderr}");
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("block")).count(),
            2,
            "{stdout}"
        );
        assert!(stdout.contains("block     46147 Frontier"), "{stdout}");
        assert!(
            stdout
                .lines()
                .last()
                .unwrap()
                .starts_with("total: 2 blocks"),
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
    let json = dir.join("out.json");
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
    expect_failure(dir.path(), &["block 1150000", "gas_used mismatch"]);
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
    assert!(rows
        .iter()
        .all(|r| r.contains("faster") || r.contains("slower") || r.contains("no change")));
    let (ok, _, stderr) = gigagas(&["compare", &files[0], &files[1], "--floor", "abc"]);
    assert!(!ok && stderr.contains("abc"), "{stderr}");
    let (ok, _, _) = gigagas(&["compare", &files[0], "/nonexistent.json"]);
    assert!(!ok);
    // Several files per side are pooled (A-B-B-A): their repeats are joined.
    let pooled_a = format!("{},{}", files[0], files[0]);
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
    let json = dir.path().join("out.json");
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
    for (k, lines) in [("1", 4), ("2", 2), ("4", 1), ("10", 1)] {
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
        assert_eq!(
            stdout.matches("verified per block").count(),
            lines,
            "{stdout}"
        );
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
    assert_eq!(stdout.matches(" 1 blocks ").count(), 2, "{stdout}");
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
