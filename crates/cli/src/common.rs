//! What several commands share: the data-set flag, the worker-pool flags, loading with a
//! one-line summary, progress bars, preparing every block, and human output that moves to
//! stderr when stdout carries a result.

use crate::limits::{self, parse_gas_threshold};
use crate::output::Output;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use gigagas_bench::BlockCase;
use gigagas_data::{DataSource, Dataset};
use gigagas_engine::prepare_with;
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::PathBuf, time::Instant};

#[derive(Args)]
pub(crate) struct DataArg {
    /// Data set: a directory in the mainnet layout (blocks/<n>/{block,pre_state}.json,
    /// bytecodes.json, block_hashes.json) or a .tar.zst of one. Default: the bundled sample.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    /// The baseline: one transaction after another, building the BAL.
    Sequential,
    /// All transactions at once from the BAL (built first by a sequential run).
    Parallel,
}

/// How the parallel path uses its worker pool (`run` and `bench`).
#[derive(Args)]
pub(crate) struct PoolArgs {
    /// Parallel mode: blocks whose header states less gas used than this run through the
    /// sequential executor on the calling thread (their rebuilt BAL must equal the shipped or
    /// baseline one) instead of waking the worker pool; 0 or `off` runs every block on the pool.
    /// Default: the threshold measured on the 2-core development VM
    /// (docs/results/small-block-threshold-2core.md). At most 10G.
    #[arg(long, value_name = "GAS", default_value_t = gigagas_exec::SMALL_BLOCK_GAS, value_parser = parse_gas_threshold)]
    pub small_block_gas: u64,
    /// Parallel mode: how long the worker threads stay awake after a block, spinning for the
    /// next one before they sleep (`us`, `ms` or `s`; `off` or 0 for none; at most 1s). A
    /// sleeping worker takes tens of µs to milliseconds to wake on a VM
    /// (docs/results/warm-workers-2core.md); while spinning it runs any other work queued on
    /// the pool. Not used by the pipeline (--root/--pipeline), whose stages keep the pool
    /// busy between blocks.
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = limits::parse_warm_spin)]
    pub warm_spin: std::time::Duration,
}

pub(crate) fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, got {s:?}")),
    }
}

/// `println!` through a [`Console`].
macro_rules! say_ {
    ($console:expr, $($arg:tt)*) => {
        $console.line(format_args!($($arg)*))
    };
}

/// Human-readable output: stdout, or stderr when stdout carries a result (`--json -`).
#[derive(Clone, Copy)]
pub(crate) struct Console {
    to_stderr: bool,
}

impl Console {
    pub(crate) fn for_output(output: Option<&Output>) -> Self {
        Self {
            to_stderr: output.is_some_and(Output::is_stdout),
        }
    }

    pub(crate) fn line(self, text: impl std::fmt::Display) {
        // Control characters from inputs (names, a node's or a child's words) escaped.
        let text = text.to_string();
        let text = gigagas_guard::text::printable_lines(&text);
        if self.to_stderr {
            note!("{text}");
        } else {
            out!("{text}");
        }
    }
}

pub(crate) fn load(data: &DataArg) -> Result<Dataset> {
    load_with(data, None)
}

/// [`load`], with the genesis root of a store built from the chain ([`gigagas_data::load_with`]).
pub(crate) fn load_with(
    data: &DataArg,
    known: Option<gigagas_data::chain::KnownGenesis>,
) -> Result<Dataset> {
    let source = match &data.data {
        Some(path) => DataSource::open(path)?,
        None => DataSource::embedded()?,
    };
    let t0 = Instant::now();
    let dataset = gigagas_data::load_with(&source, known).context("loading the data set")?;
    note!(
        "loaded {} blocks, {} txs, {:.1} Mgas from {} in {:.2} s",
        dataset.blocks.len(),
        dataset.total_txs(),
        dataset.total_gas() as f64 / 1e6,
        dataset.name,
        t0.elapsed().as_secs_f64()
    );
    Ok(dataset)
}

pub(crate) fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>12} [{bar:40}] {pos}/{len} {elapsed_precise} (eta {eta})",
        )
        // A constant template: the fallback (the default bar) is never taken.
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// A spinner with the elapsed time, for work of unknown length that can take more than two
/// seconds (drawn on stderr only when it is a terminal, like every bar).
pub(crate) fn spinner(what: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed_precise}")
            // A constant template: the fallback (the default spinner) is never taken.
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(what.to_owned());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// Every block prepared (senders, sequential baseline, BAL plan), parent links checked;
/// `small_block_gas` is the parallel path's small-block threshold (0: off); `root` says
/// whether the baseline's state root is recomputed from scratch or left to the run.
pub(crate) fn prepare_all(
    dataset: &Dataset,
    small_block_gas: u64,
    root: gigagas_engine::BaselineRoot,
) -> Result<Vec<BlockCase<'_>>> {
    let bar = progress(dataset.blocks.len() as u64, "preparing");
    let cases = dataset
        .blocks
        .iter()
        .map(|block| {
            let case = prepare_with(block, root).map(|mut case| {
                case.plan.set_small_block_gas(small_block_gas);
                case
            });
            bar.inc(1);
            case
        })
        .collect::<Result<Vec<_>, _>>()?;
    bar.finish_and_clear();
    for pair in cases.windows(2) {
        gigagas_engine::check_parent(&pair[1], &pair[0])?;
    }
    Ok(cases)
}

/// `--root incremental` in memory builds its node store from the first pre-state, listing
/// every slot of a rule-filled storage (`storage_fill`): refused, before anything is built,
/// when that would not fit in the memory available.
pub(crate) fn check_memory_node_store(dataset: &Dataset) -> Result<()> {
    let slots = dataset
        .blocks
        .first()
        .map_or(0, |b| b.pre_state.fill_slots());
    // Three slot-sized copies: the listed slots, the node store's own copy of them and its
    // branch nodes (about one node for every three slots).
    gigagas_data::chain::check_slots_available_memory(
        slots,
        3,
        "--root incremental --state memory (its in-memory node store; --state disk streams the slots instead)",
    )
    .map_err(anyhow::Error::msg)
}

pub(crate) fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub(crate) use say_ as say;

/// Keeps the first occurrence of each item, in order.
pub(crate) fn unique<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

// Human output that never panics lives in `term` (beside `output`, which uses it too); the
// commands reach it through here as before.
pub(crate) use crate::term::{note, out, out_raw, write_out};

/// The flag of each run-spec field (`gigagas_engine::RunSpec`), as `run` and `bench` name
/// them; `overrides` replace some (bench calls cold reads `--cache cold`).
pub(crate) fn spec_flag(field: &'static str, overrides: &[(&str, &str)]) -> String {
    if let Some((_, flag)) = overrides.iter().find(|(f, _)| *f == field) {
        return (*flag).to_owned();
    }
    match field {
        "execution" => "--mode",
        "threads" => "--threads",
        "scheduler" => "--scheduler",
        "mega" => "--mega",
        "root" => "--root",
        "bal" => "--bal",
        "pipeline" => "--pipeline",
        "state" => "--state",
        "state.dir" => "--db",
        "state.sync" => "--sync",
        "state.overlay" => "--overlay",
        "state.cold" => "--cold",
        "state.cold_index" => "--cold-index",
        "state.trie_buffer" => "--trie-buffer",
        "state.trie_journal" => "--trie-journal",
        "state.write_group" => "--write-group",
        "state.wal" => "--wal",
        "warm_spin" => "--warm-spin",
        "small_block_gas" => "--small-block-gas",
        "recovery" => "--recovery",
        "stage_threads" => "--stage-threads",
        other => return format!("`{other}`"),
    }
    .to_owned()
}

/// A run-spec error in the command's flags.
pub(crate) fn spec_error(
    e: &gigagas_engine::SpecError,
    overrides: &[(&str, &str)],
) -> anyhow::Error {
    anyhow::anyhow!(e.render(|field| spec_flag(field, overrides)))
}

/// Refuses a path given twice in `flag`'s list (also under two spellings of one file or
/// directory), naming it: it would be measured, counted or pooled twice.
pub(crate) fn refuse_repeated(flag: &str, paths: &[PathBuf]) -> Result<()> {
    let mut seen = std::collections::BTreeMap::new();
    for (i, path) in paths.iter().enumerate() {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if let Some(first) = seen.insert(key, i) {
            anyhow::bail!(
                "{flag}: {} is given twice (entries {} and {}); each is read once, a repeat \
                 would count it twice",
                gigagas_guard::text::printable(&path.display().to_string()),
                first + 1,
                i + 1
            );
        }
    }
    Ok(())
}

/// Reads a result file: one report, or every report of a sweep.
pub(crate) fn read_reports(path: &std::path::Path) -> Result<Vec<gigagas_lab::BenchReport>> {
    gigagas_lab::read_reports_file(path)
        .with_context(|| format!("{}: unreadable result", path.display()))
}

/// The executor's dispatch order for a scheduler, applied to recorded traces.
pub(crate) fn scheduler_order(name: &str, txs: &[gigagas_lab::TxTrace]) -> Vec<usize> {
    // The names come from `Scheduler::name` (simulate's flag, report's list), and every
    // scheduler orders once gas weights are given: the fallbacks (recorded order) are never
    // taken.
    let scheduler: gigagas_exec::Scheduler =
        name.parse().unwrap_or(gigagas_exec::Scheduler::Ordered);
    let limits: Vec<u64> = txs.iter().map(|t| t.gas_limit).collect();
    let gas: Vec<u64> = txs.iter().map(|t| t.gas).collect();
    scheduler
        .order(&limits, Some(&gas), 0)
        .unwrap_or_else(|_| (0..txs.len()).collect())
}

/// 30000000 → "30M", 1000000000 → "1G".
pub(crate) fn gas_label(gas: u64) -> String {
    match gas {
        g if g % 1_000_000_000 == 0 => format!("{}G", g / 1_000_000_000),
        g if g % 1_000_000 == 0 => format!("{}M", g / 1_000_000),
        g => g.to_string(),
    }
}

/// Whether the process was started with stdout open. Started with file descriptor 1 closed
/// (`>&-`), the Rust runtime puts `/dev/null` there, opened read-write, and the report would
/// vanish with status 0 (hostile trial 3, "lost output with exit 0"); a shell's `> /dev/null`
/// opens it write-only, and is the user's choice. Linux only; elsewhere assumed open.
pub(crate) fn stdout_is_open() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let Ok(target) = std::fs::read_link("/proc/self/fd/1") else {
        return false;
    };
    if target != std::path::Path::new("/dev/null") {
        return true;
    }
    let flags = std::fs::read_to_string("/proc/self/fdinfo/1")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("flags:"))?;
            u32::from_str_radix(line.split_whitespace().nth(1)?, 8).ok()
        });
    // O_ACCMODE 3, O_RDWR 2: the runtime's replacement for a closed descriptor.
    flags.is_none_or(|f| f & 3 != 2)
}

/// Refuses to start a command whose report goes to stdout when stdout was closed: the report
/// would be lost with status 0.
pub(crate) fn require_stdout(command: &str, json: Option<&Output>) -> Result<()> {
    if !stdout_is_open() && json.is_none_or(Output::is_stdout) {
        anyhow::bail!(
            "stdout is closed: the {command} report would be lost; open stdout or give --json FILE"
        );
    }
    Ok(())
}

/// [`require_stdout`] for a command whose only report is stdout (no `--json`).
pub(crate) fn require_stdout_only(command: &str) -> Result<()> {
    if !stdout_is_open() {
        anyhow::bail!("stdout is closed: the {command} report would be lost; open stdout");
    }
    Ok(())
}

#[cfg(test)]
mod repeated_tests {
    #![allow(clippy::unwrap_used)] // test code: a failure is the test failing
    use std::path::PathBuf;

    #[test]
    fn a_path_given_twice_is_refused_naming_it_also_under_another_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        std::fs::write(&a, b"{}").unwrap();
        let b = dir.path().join("b.json");
        let again = dir.path().join(".").join("a.json");
        let e = super::refuse_repeated("--data", &[a.clone(), b.clone(), again])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--data") && e.contains("a.json") && e.contains("entries 1 and 3"),
            "{e}"
        );
        assert!(super::refuse_repeated("--data", &[a, b, PathBuf::from("c")]).is_ok());
    }
}
