//! Ctrl-C (SIGINT) and SIGTERM end a command with 128 + the signal, after removing what it
//! had made on the way: a temporary chain, a partial output directory.

use std::{
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

/// The entries of `dir` (names).
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Starts `cmd` (stdin and stdout closed), waits (at most 120 s) until `dir` holds an entry
/// whose name contains `part`, then sends `signal` (named `name`) and requires: exit 128 +
/// the signal, the line naming it and a removal, and `dir` empty afterwards.
fn interrupted_once_made(cmd: &mut Command, dir: &Path, part: &str, signal: i32, name: &str) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !entries(dir).iter().any(|e| e.contains(part)) {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "no {part} in {} (exit {:?}): {}",
                dir.display(),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the child's pid; no memory is passed.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running 60 s after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + signal), "{stderr}");
    assert!(
        stderr.contains(&format!("interrupted by {name}; removed ")),
        "{stderr}"
    );
    assert_eq!(entries(dir), Vec::<String>::new(), "{stderr}");
}

#[test]
fn sigint_during_a_bench_removes_its_temporary_chain() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut bench = Command::new(env!("CARGO_BIN_EXE_gigagas"));
    bench
        .args([
            "bench",
            "--workload",
            "transfers",
            "--block-gas",
            "30M",
            "--blocks",
            "4",
        ])
        .args(["--threads", "1", "--repeats", "10000", "--warmup", "0"])
        .env("TMPDIR", &tmp);
    interrupted_once_made(&mut bench, &tmp, "gigagas-bench-", libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_during_an_export_removes_its_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    let chain = dir.path().join("chain");
    let (ok, _, err) = crate::gigagas(&[
        "gen",
        "sstore-bloated",
        "--existing-slots",
        "--fork",
        "Osaka",
        "--slots",
        "1000000",
        "--blocks",
        "1",
        "--block-gas",
        "3M",
        "--out",
        chain.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let outs = dir.path().join("outs");
    std::fs::create_dir(&outs).unwrap();
    // Writing a million slots' genesis twice (blocktest.json and genesis.json) takes long
    // enough to be signalled inside the partial directory.
    let mut export = Command::new(env!("CARGO_BIN_EXE_gigagas"));
    export
        .args(["export", "--data"])
        .arg(&chain)
        .arg("--out")
        .arg(outs.join("export"));
    interrupted_once_made(&mut export, &outs, ".partial", libc::SIGTERM, "SIGTERM");
}
