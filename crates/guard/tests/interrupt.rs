//! A terminating signal kills the registered child process groups and removes the registered
//! temporary directories before the process exits with 128 + the signal. The test runs this
//! test binary again in a role that installs the handler, makes a temporary directory and runs
//! a child (`sleep`) through `child::run`, then signals it.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use gigagas_guard::{child, interrupt};
use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

/// Set in the re-executed role: the directory where it writes its child's pid.
const ROLE: &str = "GIGAGAS_INTERRUPT_TEST_DIR";
/// Set in the re-executed spawning role: the file each child appends its pid to.
const SPAWNER: &str = "GIGAGAS_INTERRUPT_TEST_PIDS";

/// The role (does nothing in a plain test run).
#[test]
fn signalled_role() {
    let Some(dir) = std::env::var_os(ROLE).map(PathBuf::from) else {
        return;
    };
    interrupt::install().unwrap();
    let tmp = interrupt::TempDir::new("gigagas-interrupt-test-").unwrap();
    std::fs::create_dir_all(tmp.path().join("inner")).unwrap();
    std::fs::write(tmp.path().join("inner/file"), b"partial").unwrap();
    let pid_file = dir.join("pid");
    std::thread::spawn(move || {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo $$ > \"$1\"; exec sleep 300", "sh"])
            .arg(&pid_file);
        let _ = child::run(
            &mut cmd,
            "sleep",
            &child::Limits::new(Duration::from_secs(300), "-"),
        );
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.join("pid").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("ready {}", tmp.path().display());
    std::thread::sleep(Duration::from_secs(120));
    panic!("not signalled within 120 s");
}

fn alive(pid: i32) -> bool {
    // A zombie (exited, not yet reaped by init) counts as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|t| !t.trim_start().starts_with('Z'))
    })
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to `role` and waits (at most 30 s) for its exit: its exit code and stderr.
fn signal_and_wait(role: &mut std::process::Child, signal: i32) -> (Option<i32>, String) {
    // SAFETY: kill(2) on the role's own pid; no memory is passed.
    assert_eq!(unsafe { libc::kill(role.id() as i32, signal) }, 0);
    let mut status = None;
    wait_until("the role's exit", Duration::from_secs(30), || {
        status = role.try_wait().unwrap();
        status.is_some()
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut role.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.unwrap().code(), stderr)
}

#[test]
fn sigterm_kills_the_children_and_removes_the_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut role = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "signalled_role",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(ROLE, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = role.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // The harness writes "test signalled_role ... " before it on the same line.
            if let Some((_, path)) = line.split_once("ready ") {
                let _ = tx.send(PathBuf::from(path));
            }
        }
    });
    let tmp = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(tmp) => tmp,
        Err(e) => {
            let _ = role.kill();
            panic!("the role never said ready: {e}");
        }
    };
    assert!(tmp.join("inner/file").exists());
    let pid: i32 = std::fs::read_to_string(dir.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid), "the child {pid} is not running");
    let (code, stderr) = signal_and_wait(&mut role, libc::SIGTERM);
    assert_eq!(code, Some(143), "stderr: {stderr}");
    assert!(!Path::new(&tmp).exists(), "{} left behind", tmp.display());
    wait_until("the child's death", Duration::from_secs(10), || !alive(pid));
    assert!(
        stderr.contains("interrupted by SIGTERM; killed 1 child process group(s); removed "),
        "stderr: {stderr}"
    );
}

/// A role that starts children one after another (each killed at a 30 ms deadline) and makes
/// a temporary directory for each, until it is signalled.
#[test]
fn spawning_role() {
    let Some(pids) = std::env::var_os(SPAWNER).map(PathBuf::from) else {
        return;
    };
    interrupt::install().unwrap();
    println!("ready");
    for _ in 0..100_000 {
        let _tmp = interrupt::TempDir::new("gigagas-interrupt-spawn-").unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo $$ >> \"$1\"; exec sleep 300", "sh"])
            .arg(&pids);
        let limits = child::Limits::new(Duration::from_millis(30), "-");
        let _ = child::run(&mut cmd, "sleep", &limits);
    }
    panic!("not signalled");
}

/// Nothing is started after the signal's cleanup began: every child the spawning role ever
/// started is dead once it has exited, and no temporary directory of it is left.
#[test]
fn nothing_is_spawned_after_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let pids = dir.path().join("pids");
    for round in 0..5 {
        let mut role = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "spawning_role",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(SPAWNER, &pids)
            .env("TMPDIR", &tmp)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Let it start a few children, at a different moment each round.
        let started =
            |n: usize| std::fs::read_to_string(&pids).map_or(0, |s| s.lines().count()) >= n;
        let before = std::fs::read_to_string(&pids).map_or(0, |s| s.lines().count());
        wait_until("children started", Duration::from_secs(60), || {
            started(before + 3 + round)
        });
        let (code, stderr) = signal_and_wait(&mut role, libc::SIGINT);
        assert_eq!(code, Some(130), "round {round}: {stderr}");
        for pid in std::fs::read_to_string(&pids).unwrap().lines() {
            let pid: i32 = pid.parse().unwrap();
            wait_until(
                &format!("round {round}: child {pid}'s death"),
                Duration::from_secs(10),
                || !alive(pid),
            );
        }
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "round {round}: a temporary directory left: {stderr}"
        );
    }
}
