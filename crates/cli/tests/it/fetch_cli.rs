//! `gigagas fetch` as a whole binary against a JSON-RPC node inside the test (no network):
//! flag errors, a fetch that `gigagas run --data` then verifies, and a refused method.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

#[path = "../../../fetch/tests/common/mod.rs"]
mod common;

use crate::gigagas;
use common::{Chain, Node, Reply};

#[test]
fn fetch_flag_errors_name_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("d");
    let out = out.to_str().unwrap();
    let url = "http://127.0.0.1:9/";
    for (args, needle) in [
        (
            vec!["--from", "5", "--to", "4"],
            "--to: 4 is below --from 5",
        ),
        (
            vec!["--from", "0", "--to", "100000"],
            "at most 100000 per run",
        ),
        (
            vec!["--from", "1", "--to", "1", "--jobs", "0"],
            "--jobs: 0 is out of range 1 to 64",
        ),
        (
            vec!["--from", "1", "--to", "1", "--jobs", "65"],
            "--jobs: 65 is out of range 1 to 64",
        ),
        (
            vec!["--from", "1", "--to", "1", "--retries", "11"],
            "--retries",
        ),
        (
            vec!["--from", "1", "--to", "1", "--timeout", "0"],
            "--timeout",
        ),
    ] {
        let mut all = vec!["fetch", "--rpc", url, "--out", out];
        all.extend(args);
        let (ok, _, err) = gigagas(&all);
        assert!(!ok, "{all:?}");
        assert!(err.contains(needle), "{all:?}: {err}");
    }
    let (ok, _, err) = gigagas(&[
        "fetch", "--rpc", "ftp://x", "--from", "1", "--to", "1", "--out", out,
    ]);
    assert!(!ok && err.contains("--rpc"), "{err}");
    // A non-empty directory that no fetch wrote.
    std::fs::write(tmp.path().join("f"), "x").unwrap();
    let dir = tmp.path().to_str().unwrap();
    let (ok, _, err) = gigagas(&[
        "fetch", "--rpc", url, "--from", "1", "--to", "1", "--out", dir,
    ]);
    assert!(
        !ok && err.contains("--out") && err.contains("not empty"),
        "{err}"
    );
    // fetch has no --force: the refusal must not advise it.
    assert!(
        !err.contains("--force") && err.contains("name a new or empty directory"),
        "{err}"
    );
    assert!(!std::path::Path::new(out).exists());
}

/// Every `--flag` that fetch's messages advise (the fetch crate but `inject`, the command,
/// the output-directory rules it uses) is a flag of `gigagas fetch`, but for geth's own
/// flags that a message names as such (`geth --dev`).
#[test]
fn every_flag_fetch_advises_exists() {
    let (ok, help, err) = gigagas(&["fetch", "--help"]);
    assert!(ok, "{err}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sources = [
        "fetch/src/lib.rs",
        "fetch/src/block.rs",
        "fetch/src/chain.rs",
        "fetch/src/rpc.rs",
        "fetch/src/store.rs",
        "cli/src/commands/fetch.rs",
    ];
    let mut checked = 0;
    for file in sources {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for line in text.lines() {
            // String literals only (comments may name other commands' flags).
            let code = line.trim_start();
            if code.starts_with("//") || !code.contains('"') {
                continue;
            }
            for (at, _) in line.match_indices("--") {
                let flag: String = line[at + 2..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                    .collect();
                if flag.is_empty() || line[..at].ends_with("geth ") {
                    continue;
                }
                checked += 1;
                assert!(
                    help.contains(&format!("--{flag}")),
                    "{file}: a message advises --{flag}, which `gigagas fetch` lacks: {line}"
                );
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} flags found: the scan is broken"
    );
    // The output-directory refusal of a command without --force does not advise it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let (ok, _, err) = gigagas(&[
        "fetch",
        "--rpc",
        "http://127.0.0.1:9/",
        "--genesis",
        dir.path().join("f").to_str().unwrap(),
        "--from",
        "1",
        "--to",
        "1",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("not empty") && !err.contains("--force"),
        "{err}"
    );
}

#[test]
fn fetched_blocks_run_and_verify_and_a_refusal_exits_non_zero() {
    const N: u64 = 46_147;
    let node = Node::start(Chain::sample(&[N]), None);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let out_s = out.to_str().unwrap();
    let (ok, stdout, err) = gigagas(&[
        "fetch", "--rpc", &node.url, "--from", "46147", "--to", "46147", "--out", out_s,
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("fetched 1 blocks"), "{stdout}");
    let (ok, stdout, err) = gigagas(&["run", "--data", out_s]);
    assert!(ok, "{stdout}\n{err}");
    // Again: nothing new.
    let (ok, stdout, err) = gigagas(&[
        "fetch", "--rpc", &node.url, "--from", "46147", "--to", "46147", "--out", out_s,
    ]);
    assert!(ok, "{err}");
    assert!(
        stdout.contains("fetched 0 blocks (1 already complete)"),
        "{stdout}"
    );

    let refusing = Node::start(
        Chain::sample(&[N]),
        Some(Box::new(|c| {
            (c.method == "debug_traceBlockByNumber").then_some(Reply::Error(
                -32601,
                "the method debug_traceBlockByNumber does not exist/is not available",
            ))
        })),
    );
    let fresh = tmp.path().join("fresh");
    let (ok, _, err) = gigagas(&[
        "fetch",
        "--rpc",
        &refusing.url,
        "--from",
        "46147",
        "--to",
        "46147",
        "--out",
        fresh.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("block 46147: debug_traceBlockByNumber") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!fresh.join("blocks/46147").exists());
}
