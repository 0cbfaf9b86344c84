//! `gigagas export` and `gigagas peers` through the real binary: the export's files, an
//! Amsterdam chain (gen's default) exported with a note on geth, a peers run with gigagas as its own process peer (and on its MDBX store, warm and cold), a missing
//! peer shown as "not installed" (fatal only with --require-all), and a peer that fails: an
//! error row and a non-zero exit.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use std::{path::Path, process::Command};

fn gigagas(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gigagas"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    crate::outcome(&mut cmd)
}

fn gen(dir: &Path, name: &str, fork: &str) -> String {
    let out = dir.join(name);
    let out_s = out.to_str().unwrap().to_owned();
    let (ok, _, stderr) = gigagas(
        &[
            "gen",
            "transfers",
            "--fork",
            fork,
            "--blocks",
            "2",
            "--block-gas",
            "1M",
            "--out",
            &out_s,
        ],
        &[],
    );
    assert!(ok, "{stderr}");
    out_s
}

#[test]
fn export_writes_the_three_files_and_takes_gen_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let chain = gen(dir.path(), "prague", "Prague");
    let out = dir.path().join("export");
    let (ok, stdout, stderr) = gigagas(
        &["export", "--data", &chain, "--out", out.to_str().unwrap()],
        &[],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("network Prague"), "{stdout}");
    for file in ["blocktest.json", "chain.rlp", "genesis.json"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    // A second export onto the same directory is refused without --force.
    let (ok, _, stderr) = gigagas(
        &["export", "--data", &chain, "--out", out.to_str().unwrap()],
        &[],
    );
    assert!(!ok && stderr.contains("not empty"), "{stderr}");

    let amsterdam = gen(dir.path(), "amsterdam", "Amsterdam");
    let (ok, _, stderr) = gigagas(
        &[
            "export",
            "--data",
            &amsterdam,
            "--out",
            dir.path().join("x").to_str().unwrap(),
        ],
        &[],
    );
    // gen's default fork exports; the note says why geth cannot agree, naming the flag.
    assert!(ok, "an Amsterdam chain must export: {stderr}");
    assert!(
        stderr.contains("EIP-8282") && stderr.contains("--fork Osaka"),
        "{stderr}"
    );
    assert!(dir.path().join("x").join("blocktest.json").is_file());
    // `peers` runs it too: geth is left out as "not comparable", with the reason and the flag.
    let (ok, stdout, stderr) = gigagas(
        &[
            "peers",
            "--data",
            &amsterdam,
            "--repeats",
            "1",
            "--warmup",
            "0",
            "--peers",
            "gigagas-process,geth-blocktest",
        ],
        &[],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("not comparable"), "{stdout}");
    assert!(stdout.contains("--fork Osaka"), "{stdout}");
}

#[test]
fn peers_runs_gigagas_as_a_process_and_reports_missing_and_failing_peers() {
    let dir = tempfile::tempdir().unwrap();
    let chain = gen(dir.path(), "prague", "Prague");
    let json = dir.path().join("peers.json");
    let missing = dir.path().join("no-such-revme/bin/revme");
    let base = [
        "peers",
        "--data",
        chain.as_str(),
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--peers",
        "gigagas-process,revme",
    ];
    let mut args = base.to_vec();
    args.extend(["--json", json.to_str().unwrap()]);
    let (ok, stdout, stderr) = gigagas(&args, &[("GIGAGAS_REVME", missing.to_str().unwrap())]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("not installed"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["schema"], "gigagas.peers/1");
    let rows = report["rows"].as_array().unwrap();
    let process = rows
        .iter()
        .find(|r| r["engine"] == "gigagas conformance (process)")
        .expect("process row");
    assert_eq!(process["status"], "ok");
    assert!(process["median_ns"].as_u64().unwrap() > 0);
    assert!(rows.iter().any(|r| r["status"] == "not installed"));

    // `report` draws the peers page: one bar per engine that ran, every row in the table.
    let html = dir.path().join("peers.html");
    let (ok, _, stderr) = gigagas(
        &[
            "report",
            json.to_str().unwrap(),
            "--out",
            html.to_str().unwrap(),
        ],
        &[],
    );
    assert!(ok, "{stderr}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("gigagas peers: the same blocks"), "{page}");
    assert!(page.contains("<svg"), "a plot");
    for row in rows {
        let engine = row["engine"].as_str().unwrap();
        assert!(
            page.contains(&format!("<td>{engine}</td>")),
            "{engine} missing"
        );
    }
    assert!(page.contains("not installed"));

    // --require-all makes a missing peer fatal.
    let mut args = base.to_vec();
    args.push("--require-all");
    let (ok, _, stderr) = gigagas(&args, &[("GIGAGAS_REVME", missing.to_str().unwrap())]);
    assert!(!ok && stderr.contains("not installed"), "{stderr}");

    // A peer that rejects the blocks: an error row and a non-zero exit.
    let fake = dir.path().join("fake/bin/revme");
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --help ] && exit 0\necho 'Passed: 0'; echo 'Failed: 1'; exit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (ok, stdout, stderr) = gigagas(&base, &[("GIGAGAS_REVME", fake.to_str().unwrap())]);
    assert!(!ok, "a failing peer must fail the command: {stdout}");
    assert!(stdout.contains("failed"), "{stdout}");
    assert!(stderr.contains("revme blockchaintest"), "{stderr}");
}

/// gigagas's node pipeline on its own store is a peer row, warm and cold (geth import's
/// counterpart): each repeat writes a fresh store (`db init`, untimed), runs the chain on it
/// with every block's root checked, and reports the pipeline's own end to end beside the
/// process time; the store is gone afterwards.
#[test]
fn peers_runs_gigagas_on_its_store_warm_and_cold() {
    let dir = tempfile::tempdir().unwrap();
    let chain = gen(dir.path(), "osaka", "Osaka");
    let json = dir.path().join("peers.json");
    // Its own temporary directory: what the run leaves there is this run's.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let (ok, stdout, stderr) = gigagas(
        &[
            "peers",
            "--data",
            &chain,
            "--repeats",
            "2",
            "--warmup",
            "0",
            "--peers",
            "gigagas-disk,gigagas-disk-cold",
            "--json",
            json.to_str().unwrap(),
        ],
        &[("TMPDIR", tmp.to_str().unwrap())],
    );
    assert!(ok, "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    for engine in [
        "gigagas run on MDBX, warm (process)",
        "gigagas run on MDBX, cold (process)",
    ] {
        let row = rows
            .iter()
            .find(|r| r["engine"] == engine)
            .unwrap_or_else(|| panic!("no {engine} row: {report}"));
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["repeat_ns"].as_array().unwrap().len(), 2, "{row}");
        assert!(row["own_mgas_per_s"].as_f64().unwrap() > 0.0, "{row}");
        assert!(
            row["excludes"].as_str().unwrap().contains("db init"),
            "{row}"
        );
    }
    // Nothing left behind: no store, no export.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A fake peer binary: answers `answer_arg` (its idle or version query) with `answer`, and
/// otherwise writes a line to stderr and hangs.
fn hanging_tool(dir: &Path, name: &str, answer_arg: &str, answer: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n[ \"$1\" = {answer_arg} ] && {{ echo '{answer}'; exit 0; }}\necho 'started, never answers' >&2\nexec sleep 1000\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A peer that never answers is not waited for silently: while it runs, stderr says every
/// 10 s what is waited for, for how long and the deadline with its flag; at the deadline it
/// is killed, the error names the deadline, and the command fails.
#[test]
fn a_hung_peer_is_reported_while_waited_for_and_killed_at_its_named_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let chain = gen(dir.path(), "prague", "Prague");
    let revme = hanging_tool(dir.path(), "revme", "--help", "revme");
    let t0 = std::time::Instant::now();
    let (ok, stdout, stderr) = gigagas(
        &[
            "peers",
            "--data",
            &chain,
            "--repeats",
            "1",
            "--warmup",
            "0",
            "--peers",
            "revme",
            "--timeout",
            "12",
        ],
        &[("GIGAGAS_REVME", &revme)],
    );
    assert!(!ok, "a hung peer must fail the command: {stdout}");
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    let beats: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("waiting on revme blockchaintest on "))
        .collect();
    assert!(!beats.is_empty(), "no heartbeat: {stderr}");
    assert!(
        beats[0].contains("s so far; killed at 12 s (the limit, set by gigagas peers --timeout)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did not exit within 12 s (the limit, set by gigagas peers --timeout)"),
        "{stderr}"
    );
    assert!(stderr.contains("started, never answers"), "{stderr}");
}

/// The same class in `differential`: a hanging `evm t8n` is reported while waited for and
/// killed at its deadline, which names the variable that sets it.
#[test]
fn a_hanging_evm_in_differential_is_reported_and_killed_at_its_named_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let evm = hanging_tool(dir.path(), "evm", "--version", "evm version 1.17.10-stable");
    let (ok, stdout, stderr) = gigagas(
        &["differential", "--fork", "prague"],
        &[("GIGAGAS_GETH_EVM", &evm), ("GIGAGAS_T8N_TIMEOUT", "11")],
    );
    assert!(!ok, "a hanging evm must fail the command: {stdout}");
    assert!(
        stderr.lines().any(|l| l.starts_with("waiting on evm t8n on the differential block")
            && l.contains("killed at 11 s (the limit, set by the GIGAGAS_T8N_TIMEOUT environment variable (seconds))")),
        "{stderr}"
    );
    assert!(stderr.contains("did not exit within 11 s"), "{stderr}");
}
