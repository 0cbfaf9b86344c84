//! `gigagas conformance`: Ethereum blockchain tests through both execution paths.

use crate::common::{progress, Console};
use crate::common::{say, stdout_is_open};
use crate::limits;
use crate::output::{Input, Output};
use crate::store;
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ConformanceMode {
    /// Sequential path only.
    Sequential,
    /// BAL-parallel path only (the BAL is still built by a sequential run).
    Parallel,
    /// Both paths, each checked.
    Both,
}

#[derive(Args)]
pub struct ConformanceArgs {
    /// Blockchain-test JSON files or directories (searched recursively).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write the summary (schema gigagas.conformance/1) to FILE (`-`: stdout, the tables
    /// then go to stderr). Checked before the run; never an input.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Execution paths to import every block through.
    #[arg(long, value_enum, default_value = "both")]
    mode: ConformanceMode,
    /// Worker threads of the parallel path, 1 to 1024.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Print every failure (default: the first 20).
    #[arg(long)]
    all_failures: bool,
    /// Also run up to N BAL mutants of each kind (wrong value, missing/extra write, write at
    /// the wrong index, missing read/account, unordered, duplicate) on every valid block; the
    /// parallel path must reject each, naming the defect.
    #[arg(long, value_name = "N", default_value_t = 0)]
    mutations: usize,
    /// Where state transitions are also checked: memory (the default: in-memory roots), or
    /// disk — every imported block's changes also go through a temporary on-disk store
    /// (MDBX) whose incremental root, split in parallel at every node with two or more
    /// changes, must equal the header's; at the end of each test the store's root and every
    /// stored branch node are compared with a from-scratch build.
    #[arg(long, value_enum, default_value = "memory")]
    state: store::StateArg,
    /// Fail a test whose invalid block was rejected where the exception mapping cannot tell
    /// whether the reason is the expected one (default: counted and listed as unmapped).
    #[arg(long)]
    strict_exceptions: bool,
}

pub fn exec(args: ConformanceArgs) -> Result<()> {
    use gigagas_conformance::{collect_files, run_files_with, Mode as CMode, RunOptions};
    let threads = limits::threads("--threads", args.threads)?;
    let json = args
        .json
        .as_deref()
        .map(|path| Output::new("--json", path, &Input::all("PATHS", &args.paths)))
        .transpose()?;
    if !stdout_is_open() && json.as_ref().is_none_or(Output::is_stdout) {
        bail!(
            "stdout is closed: the conformance report would be lost; open stdout or give --json FILE"
        );
    }
    let console = Console::for_output(json.as_ref());
    let files = collect_files(&args.paths)?;
    if files.is_empty() {
        bail!("no .json fixture files under the given paths");
    }
    let mode = match args.mode {
        ConformanceMode::Sequential => CMode::Sequential,
        ConformanceMode::Parallel => CMode::Parallel,
        ConformanceMode::Both => CMode::Both,
    };
    let bar = progress(files.len() as u64, "files");
    let summary = run_files_with(
        &files,
        RunOptions {
            mode,
            threads,
            mutations: args.mutations,
            disk: matches!(args.state, store::StateArg::Disk),
        },
        args.strict_exceptions,
        &|| bar.inc(1),
    );
    bar.finish_and_clear();

    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["directory", "passed", "failed", "skipped"]);
    for (dir, c) in &summary.by_dir {
        table.add_row([
            dir.clone(),
            c.passed.to_string(),
            c.failed.to_string(),
            c.skipped.to_string(),
        ]);
    }
    say!(console, "{table}");
    let mut forks = comfy_table::Table::new();
    forks.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    forks.set_header(["network", "passed", "failed", "skipped"]);
    for (fork, c) in &summary.by_fork {
        forks.add_row([
            fork.clone(),
            c.passed.to_string(),
            c.failed.to_string(),
            c.skipped.to_string(),
        ]);
    }
    say!(console, "{forks}");
    if !summary.mutants_rejected.is_empty() {
        let total: usize = summary.mutants_rejected.values().sum();
        let kinds: Vec<String> = summary
            .mutants_rejected
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        say!(
            console,
            "BAL mutants rejected (each naming its defect): {total} — {}",
            kinds.join(", ")
        );
    }
    for (reason, n) in &summary.skip_reasons {
        say!(console, "skipped {n:>5}: {reason}");
    }
    for (reason, n) in &summary.failure_reasons {
        say!(console, "failed  {n:>5}: {reason}");
    }
    for (cause, n) in &summary.failure_causes {
        say!(console, "cause   {n:>5}: {cause}");
    }
    let shown = if args.all_failures { usize::MAX } else { 20 };
    for f in summary.failures.iter().take(shown) {
        say!(
            console,
            "FAIL {} :: {} [{}] {}: {}",
            f.file,
            f.test,
            f.fork,
            f.reason,
            f.detail
        );
    }
    if summary.failures.len() > shown {
        say!(
            console,
            "... {} more failures (--all-failures or --json)",
            summary.failures.len() - shown
        );
    }
    say!(
        console,
        "{} tests ({}): {} passed, {} failed, {} skipped in {:.1} s",
        summary.total(),
        match summary.mode.as_str() {
            "both" => "sequential and parallel paths".to_owned(),
            one => format!("{one} path"),
        },
        summary.passed,
        summary.failed,
        summary.skipped,
        summary.wall_seconds
    );
    let e = &summary.exceptions;
    say!(
        console,
        "expected exceptions: {} tests with rejected invalid blocks; {} checked for their reason ({} blocks rejected for an expected reason, {} of them with a legacy header's transactions root waived), {} rejected for another reason, {} blocks unmapped{}",
        e.tests_with_expected,
        e.tests_checked,
        e.blocks_matched,
        e.blocks_matched_root_waived,
        e.tests_wrong_reason,
        e.blocks_unmapped,
        if e.strict {
            " (--strict-exceptions: failed)"
        } else if e.blocks_unmapped > 0 {
            " (not failed; --strict-exceptions fails them)"
        } else {
            ""
        }
    );
    for line in e.unmapped.iter().take(shown) {
        say!(console, "UNMAPPED {line}");
    }
    if matches!(args.state, store::StateArg::Disk) {
        say!(
            console,
            "on-disk store: {} imported blocks of the passed tests also through the store, every incremental root = its header's, every test's stored nodes = a from-scratch build",
            summary.store_blocks
        );
    }
    if let Some(json) = &json {
        json.write(&serde_json::to_vec_pretty(&summary)?)?;
    }
    if summary.failed > 0 {
        bail!(
            "{} of {} conformance tests failed",
            summary.failed,
            summary.total()
        );
    }
    Ok(())
}
