//! The binary's integration tests, one test binary (each file of its own was linked again
//! with the whole dependency graph: one binary builds in a fraction of the time). Each module
//! drives the built `gigagas` (`CARGO_BIN_EXE_gigagas`) as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

mod cli;
mod db_cli;
mod dev_node;
mod fetch_cli;
mod hostile;
mod interrupt_cli;
mod peers_cli;

use std::{path::Path, process::Command};

/// Runs the built `gigagas` with `args`: (exit status success, stdout, stderr).
fn gigagas(args: &[&str]) -> (bool, String, String) {
    outcome(Command::new(env!("CARGO_BIN_EXE_gigagas")).args(args))
}

/// [`gigagas`] from the working directory `cwd`.
fn gigagas_in(cwd: &Path, args: &[&str]) -> (bool, String, String) {
    outcome(
        Command::new(env!("CARGO_BIN_EXE_gigagas"))
            .current_dir(cwd)
            .args(args),
    )
}

/// `gen sstore-bloated` at a test's size (5,000 slots, 2 blocks of 3M gas, Cancun, 4 senders)
/// into `out`, with `extra` flags (`--spread`).
fn gen_bloated(out: &Path, extra: &[&str]) -> (bool, String, String) {
    let out = out.to_str().expect("a UTF-8 path");
    let mut args = vec![
        "gen",
        "sstore-bloated",
        "--slots",
        "5000",
        "--blocks",
        "2",
        "--block-gas",
        "3M",
        "--fork",
        "cancun",
        "--senders",
        "4",
        "--out",
        out,
    ];
    args.extend(extra);
    gigagas(&args)
}

/// Runs `cmd` to its end: (exit status success, stdout, stderr).
fn outcome(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("run gigagas");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
