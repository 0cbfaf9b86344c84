//! The versioned result schema written by `gigagas bench --json` (documented in
//! `docs/bench-json.md`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema identifier; bumped on any incompatible change.
pub const SCHEMA: &str = "gigagas.bench/1";

/// Schema identifier of a sweep over several data sets (one [`BenchReport`] each).
pub const SWEEP_SCHEMA: &str = "gigagas.sweep/1";

/// `gigagas bench` over several data sets (`--data A,B`, `--workload …`): one complete
/// report per data set, each measured on its own (warm-up and interleaved repeats within the
/// data set), in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// Always [`SWEEP_SCHEMA`].
    pub schema: String,
    /// One report per data set.
    pub reports: Vec<BenchReport>,
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or JSON that does not fit the schema. The message names only the kind:
    /// the serde error is the source (shown once by `{:#}`/error chains, not twice).
    #[error("not valid JSON (or not the result schema)")]
    Json(#[from] serde_json::Error),
    /// A schema this version does not read.
    #[error(
        "schema {found:?}, expected {SCHEMA:?} or {SWEEP_SCHEMA:?} (re-run gigagas bench --json)"
    )]
    Schema {
        /// The file's `schema` value.
        found: String,
    },
    /// A sweep with no report.
    #[error("a sweep without any data set")]
    Empty,
    /// A value beyond what `gigagas bench` ever writes: refused before anything is sized,
    /// looped over or plotted by it.
    #[error("{field} = {value}: above the limit of {limit} ({why})")]
    Limit {
        /// Where in the file (`reports[0].runs[3].threads`).
        field: String,
        /// The file's value.
        value: String,
        /// The limit.
        limit: String,
        /// Why the limit is what it is.
        why: &'static str,
    },
    /// A measured quantity below zero (a time, throughput, ratio, share or load average).
    #[error("{field} = {value}: negative, and a measured time, throughput, ratio, share or load average never is")]
    Negative {
        /// Where in the file.
        field: String,
        /// The file's value.
        value: f64,
    },
    /// Values of one file that contradict each other or what `gigagas bench` writes (a
    /// count of 0 threads, a median outside its repeats, a per-block list of the wrong
    /// length, an unknown mode): refused naming the field and both numbers.
    #[error("{field}: {what}")]
    Contradiction {
        /// Where in the file.
        field: String,
        /// What contradicts what, with the numbers.
        what: String,
    },
    /// [`MAX_RESULT_BYTES_ENV`] is set to something other than a whole number of bytes.
    #[error("{MAX_RESULT_BYTES_ENV}={value}: not a whole number of bytes (unset it for the default of {MAX_RESULT_BYTES})")]
    BadLimit {
        /// The variable's value, escaped.
        value: String,
    },
    /// The file is larger than a result may be.
    #[error(
        "{bytes} bytes or more: above the limit of {limit} bytes for a result file (set \
         {MAX_RESULT_BYTES_ENV} to raise it)"
    )]
    TooLarge {
        /// The file's size (at least).
        bytes: u64,
        /// The limit in force.
        limit: u64,
    },
    /// Not a regular file (a FIFO, device, socket or directory): refused unopened, as
    /// reading one could block or never end.
    #[error("{kind}, not a regular file; not read (a FIFO or device could block or never end)")]
    NotAFile {
        /// What it is, in words (`a FIFO`, `a character device`, …).
        kind: &'static str,
    },
    /// The file could not be read.
    #[error("cannot read the file")]
    Io(#[from] std::io::Error),
}

/// Largest result file read by default (`report`, `compare`, `simulate`): above a bench of
/// every mainnet block with per-transaction traces, low enough that reading it (and its JSON
/// tree: ~30 times its size for a file of nothing but small numbers, 1.9 GB for 63 MB)
/// cannot exhaust memory.
pub const MAX_RESULT_BYTES: u64 = 64 << 20;

/// The environment variable that sets another limit for a result file, in bytes.
pub const MAX_RESULT_BYTES_ENV: &str = "GIGAGAS_MAX_RESULT_BYTES";

/// The result-file limit in force: [`MAX_RESULT_BYTES_ENV`] when set (a whole number of
/// bytes, else an error rather than the default in silence), [`MAX_RESULT_BYTES`] when not.
pub fn max_result_bytes() -> Result<u64, ReadError> {
    match std::env::var_os(MAX_RESULT_BYTES_ENV) {
        None => Ok(MAX_RESULT_BYTES),
        Some(v) => v
            .to_str()
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| ReadError::BadLimit {
                value: gigagas_guard::text::printable(&v.to_string_lossy()).into_owned(),
            }),
    }
}

/// Largest magnitude of any number in a result: 2^53, the largest integer an `f64` holds
/// exactly (a time of 104 days in ns, 9·10^15 gas).
pub const MAX_NUMBER: f64 = 9_007_199_254_740_992.0;

/// Most worker threads of a run (`bench --threads` refuses more).
pub const MAX_THREADS: usize = 1024;

/// Most repeats of a configuration (`bench --repeats` refuses more), pooled ones included.
pub const MAX_REPEATS: usize = 10_000;

/// Most warm-up passes (`bench --warmup` refuses more).
pub const MAX_WARMUP: usize = 1_000;

/// Largest mega-block size (`bench --mega` refuses more).
pub const MAX_MEGA: usize = 100_000;

/// Reads a result file of at most [`max_result_bytes`] with [`read_reports`].
pub fn read_reports_file(path: &std::path::Path) -> Result<Vec<BenchReport>, ReadError> {
    read_reports(&read_result_bytes(path)?)
}

/// The bytes of a result file of at most [`max_result_bytes`]. Only a regular file is read
/// (a FIFO, device or directory is refused unopened, whatever the limit), and never more than
/// its size at opening + 1 bytes, nor more than the limit + 1: a file that grows while read
/// is refused, not followed.
pub fn read_result_bytes(path: &std::path::Path) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let limit = max_result_bytes()?;
    let (file, meta) = gigagas_guard::file::open_regular(path).map_err(|e| match e {
        gigagas_guard::file::OpenError::NotAFile { kind } => ReadError::NotAFile { kind },
        gigagas_guard::file::OpenError::Io(e) => ReadError::Io(e),
    })?;
    let size = meta.len();
    if size > limit {
        return Err(ReadError::TooLarge { bytes: size, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(size.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > size {
        return Err(ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("grew past its size of {size} bytes while read; not read"),
        )));
    }
    Ok(bytes)
}

fn limit(
    field: String,
    value: impl ToString,
    limit: impl ToString,
    why: &'static str,
) -> ReadError {
    ReadError::Limit {
        field,
        value: value.to_string(),
        limit: limit.to_string(),
        why,
    }
}

/// The measured floating-point fields of a result (times, throughputs, ratios, shares, load
/// averages): none is ever negative, and a file that says otherwise is refused. Fitted
/// coefficients (`cost_model`) and prediction errors may be negative and are not listed.
const NON_NEGATIVE: [&str; 15] = [
    "mgas_per_s",
    "e2e_mgas_per_s",
    "percent_of_bound",
    "tx_work_ratio",
    "speedup_vs_sequential",
    "longest_tx_share",
    "critical_path_bound",
    "recover_ns_per_tx",
    "other_share",
    "own_share",
    "busy_threshold",
    "load_avg_start",
    "load_avg_end",
    "predicted_ns",
    "predicted_speedup",
];

/// Every number of the file finite and within ±[`MAX_NUMBER`], and every measured field of
/// [`NON_NEGATIVE`] at least 0: nothing computed from them
/// overflows to infinity (an axis from 0 to +∞ never finishes its ticks).
fn check_numbers(value: &serde_json::Value, path: &mut String) -> Result<(), ReadError> {
    match value {
        serde_json::Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::INFINITY);
            if !x.is_finite() || x.abs() > MAX_NUMBER {
                return Err(limit(
                    path.trim_start_matches('.').to_owned(),
                    n,
                    "±2^53",
                    "no measurement or count comes near it; larger values overflow the figures",
                ));
            }
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                check_numbers(item, path)?;
                path.truncate(len);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                let len = path.len();
                path.push('.');
                path.push_str(&gigagas_guard::text::printable(key));
                check_numbers(item, path)?;
                if let Some(x) = item.as_f64().filter(|x| *x < 0.0) {
                    if NON_NEGATIVE.contains(&key.as_str()) {
                        return Err(ReadError::Negative {
                            field: path.trim_start_matches('.').to_owned(),
                            value: x,
                        });
                    }
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Checks a value used as a size or count against its budget.
fn at_most(
    field: impl FnOnce() -> String,
    value: usize,
    max: usize,
    why: &'static str,
) -> Result<(), ReadError> {
    if value > max {
        return Err(limit(field(), value, max, why));
    }
    Ok(())
}

/// Checks that a family of values sums within `u64` (so no total computed from it wraps).
fn total(
    field: impl FnOnce() -> String,
    values: impl Iterator<Item = u64>,
) -> Result<(), ReadError> {
    let sum: u128 = values.map(u128::from).sum();
    if sum > u128::from(u64::MAX) {
        return Err(limit(
            field(),
            sum,
            u64::MAX,
            "its total must fit in 64 bits",
        ));
    }
    Ok(())
}

/// The budgets of the fields a report's readers use as sizes, counts or totals.
fn check_budgets(r: &BenchReport, at: &str) -> Result<(), ReadError> {
    const THREADS: &str = "gigagas bench --threads refuses more; a plot or simulation sizes by it";
    const STAGE_THREADS: &str = "gigagas bench --stage-threads refuses more";
    const REPEATS: &str = "gigagas bench --repeats refuses more; comparisons resample every repeat";
    at_most(
        || format!("{at}settings.repeats"),
        r.settings.repeats,
        MAX_REPEATS,
        REPEATS,
    )?;
    at_most(
        || format!("{at}settings.warmup"),
        r.settings.warmup,
        MAX_WARMUP,
        "gigagas bench --warmup refuses more",
    )?;
    at_most(
        || format!("{at}data (characters)"),
        r.data.chars().count(),
        MAX_DATA_LABEL,
        "the data set's path or workload, as bench writes it; every warning quotes it",
    )?;
    at_most(
        || format!("{at}machine.cores"),
        r.machine.cores,
        1 << 20,
        "no machine has more",
    )?;
    for (i, run) in r.runs.iter().enumerate() {
        at_most(
            || format!("{at}runs[{i}].threads"),
            run.threads,
            MAX_THREADS,
            THREADS,
        )?;
        at_most(
            || format!("{at}runs[{i}].mega"),
            run.mega,
            MAX_MEGA,
            "gigagas bench --mega refuses more",
        )?;
        at_most(
            || format!("{at}runs[{i}].repeat_ns (count)"),
            run.repeat_ns.len(),
            MAX_REPEATS,
            REPEATS,
        )?;
        total(
            || format!("{at}runs[{i}].repeat_ns"),
            run.repeat_ns.iter().copied(),
        )?;
        total(
            || format!("{at}runs[{i}].block_ns"),
            run.block_ns.iter().copied(),
        )?;
        total(
            || format!("{at}runs[{i}].block_serial_ns"),
            run.block_serial_ns.iter().copied(),
        )?;
    }
    for (i, p) in r.pipeline.iter().enumerate() {
        at_most(
            || format!("{at}pipeline[{i}].threads"),
            p.threads,
            MAX_THREADS,
            THREADS,
        )?;
        at_most(
            || format!("{at}pipeline[{i}].stage_threads"),
            p.stage_threads,
            MAX_THREADS,
            STAGE_THREADS,
        )?;
        at_most(
            || format!("{at}pipeline[{i}].repeat_ns (count)"),
            p.repeat_ns.len(),
            MAX_REPEATS,
            REPEATS,
        )?;
        total(
            || format!("{at}pipeline[{i}].phases_ns"),
            p.phases_ns.values().copied(),
        )?;
    }
    for (i, f) in r.contention_floor.iter().enumerate() {
        at_most(
            || format!("{at}contention_floor[{i}].threads"),
            f.threads,
            MAX_THREADS,
            THREADS,
        )?;
        at_most(
            || format!("{at}contention_floor[{i}].rounds"),
            f.rounds,
            MAX_REPEATS,
            REPEATS,
        )?;
    }
    total(
        || format!("{at}blocks[].gas_used"),
        r.blocks.iter().map(|b| b.gas_used),
    )?;
    let txs = || r.blocks.iter().flat_map(|b| b.tx.iter());
    total(|| format!("{at}blocks[].tx[].ns"), txs().map(|t| t.ns))?;
    total(|| format!("{at}blocks[].tx[].gas"), txs().map(|t| t.gas))?;
    total(
        || format!("{at}blocks[].tx[].gas_spent"),
        txs().map(|t| t.gas_spent),
    )?;
    total(
        || format!("{at}blocks[].phases.sequential_ns"),
        r.blocks.iter().map(|b| b.phases.sequential_ns),
    )?;
    Ok(())
}

/// Reads a `gigagas bench --json` file: one report (`gigagas.bench/1`) or a sweep's reports
/// (`gigagas.sweep/1`).
///
/// Every number must be finite and within ±[`MAX_NUMBER`], and the fields used as sizes,
/// counts or totals within their budgets ([`MAX_THREADS`], [`MAX_REPEATS`], [`MAX_WARMUP`],
/// [`MAX_MEGA`], totals within 64 bits): a value beyond them is a [`ReadError::Limit`]
/// naming the field, never an allocation, a loop or a plot sized by it.
pub fn read_reports(bytes: &[u8]) -> Result<Vec<BenchReport>, ReadError> {
    let value: serde_json::Value = serde_json::from_slice(bytes)?;
    check_numbers(&value, &mut String::new())?;
    let reports = parse_reports(value)?;
    let sweep = reports.len() > 1;
    for (i, report) in reports.iter().enumerate() {
        let at = if sweep {
            format!("reports[{i}].")
        } else {
            String::new()
        };
        check_budgets(report, &at)?;
        check_consistency(report, &at)?;
    }
    if sweep {
        let mut seen = std::collections::BTreeMap::new();
        for (i, report) in reports.iter().enumerate() {
            if let Some(first) = seen.insert(report.data.as_str(), i) {
                return Err(contradiction(
                    format!("reports[{i}].data"),
                    format!(
                        "the data set {:?} again (also reports[{first}]): a sweep measures each \
                         data set once, and a second entry would be silently ignored",
                        gigagas_guard::text::printable(&report.data)
                    ),
                ));
            }
        }
    }
    Ok(reports)
}

fn contradiction(field: String, what: String) -> ReadError {
    ReadError::Contradiction { field, what }
}

/// Execution modes `gigagas bench` measures.
const MODES: [&str; 3] = ["sequential", "sequential-nobal", "parallel"];

/// Checks a run's or pipeline's repeat times against its median and percentiles: at least
/// one repeat, none of 0 ns for a data set with gas, the median and percentiles within the
/// repeats' range.
fn check_repeats(
    at: &str,
    total_gas: u64,
    repeat_ns: &[u64],
    stats: &[(&str, u64)],
) -> Result<(), ReadError> {
    let (Some(&min), Some(&max)) = (repeat_ns.iter().min(), repeat_ns.iter().max()) else {
        return Err(contradiction(
            format!("{at}repeat_ns"),
            "no repeat: every figure of the run is computed from them".into(),
        ));
    };
    if total_gas > 0 && min == 0 {
        return Err(contradiction(
            format!("{at}repeat_ns"),
            format!(
                "a repeat of 0 ns over a data set of {total_gas} gas: no execution takes no time"
            ),
        ));
    }
    for &(name, value) in stats {
        if value < min || value > max {
            return Err(contradiction(
                format!("{at}{name}"),
                format!(
                    "{value} ns, outside the range of its {} repeats ({min} to {max} ns)",
                    repeat_ns.len()
                ),
            ));
        }
    }
    Ok(())
}

/// One validation pass over a loaded report: values that contradict each other or what
/// `gigagas bench` writes are refused naming the field and both numbers (the sizes and
/// totals are [`check_budgets`]'s).
fn check_consistency(r: &BenchReport, at: &str) -> Result<(), ReadError> {
    if r.machine.cores == 0 {
        return Err(contradiction(
            format!("{at}machine.cores"),
            "0 cores, yet the runs ran on it".into(),
        ));
    }
    if r.settings.repeats == 0 {
        return Err(contradiction(
            format!("{at}settings.repeats"),
            "0 repeats, yet the runs report times".into(),
        ));
    }
    let numbers: Vec<u64> = r.blocks.iter().map(|b| b.number).collect();
    let block_txs: u64 = r.blocks.iter().map(|b| b.txs as u64).sum();
    if r.phases.txs as u64 != block_txs {
        return Err(contradiction(
            format!("{at}phases.txs"),
            format!(
                "{} transactions, but the {} blocks hold {block_txs}",
                r.phases.txs,
                r.blocks.len()
            ),
        ));
    }
    for (i, b) in r.blocks.iter().enumerate() {
        if !b.tx.is_empty() && b.tx.len() != b.txs {
            return Err(contradiction(
                format!("{at}blocks[{i}].tx"),
                format!(
                    "{} traces for the block's {} transactions",
                    b.tx.len(),
                    b.txs
                ),
            ));
        }
    }
    let block_gas: u128 = r.blocks.iter().map(|b| u128::from(b.gas_used)).sum();
    for (i, run) in r.runs.iter().enumerate() {
        let field = |name: &str| format!("{at}runs[{i}].{name}");
        if !MODES.contains(&run.mode.as_str()) {
            return Err(contradiction(
                field("mode"),
                format!(
                    "{:?} is not a mode gigagas bench measures ({})",
                    gigagas_guard::text::printable(&run.mode),
                    MODES.join(", ")
                ),
            ));
        }
        if !["pre", "inline"].contains(&run.recover_senders.as_str()) {
            return Err(contradiction(
                field("recover_senders"),
                format!(
                    "{:?}, expected pre or inline",
                    gigagas_guard::text::printable(&run.recover_senders)
                ),
            ));
        }
        if run.threads == 0 {
            return Err(contradiction(
                field("threads"),
                "0 threads, yet the run reports times".into(),
            ));
        }
        if run.mega == 0 {
            return Err(contradiction(
                field("mega"),
                "0 blocks per mega-block unit (1: each block on its own)".into(),
            ));
        }
        if u128::from(run.total_gas) != block_gas {
            return Err(contradiction(
                field("total_gas"),
                format!(
                    "{} gas, but the {} blocks used {block_gas}",
                    run.total_gas,
                    r.blocks.len()
                ),
            ));
        }
        let units = crate::mega_units(&numbers, run.mega).len();
        for (name, list) in [
            ("block_ns", &run.block_ns),
            ("block_serial_ns", &run.block_serial_ns),
            ("block_head_ns", &run.block_head_ns),
        ] {
            // The serial tail and head are absent in older files and for sequential runs.
            if list.len() != units && (name == "block_ns" || !list.is_empty()) {
                return Err(contradiction(
                    field(name),
                    format!(
                        "{} entries for {} blocks ({units} units of mega {})",
                        list.len(),
                        r.blocks.len(),
                        run.mega
                    ),
                ));
            }
        }
        if let Some(k) = run
            .block_serial_ns
            .iter()
            .zip(&run.block_ns)
            .position(|(serial, whole)| serial > whole)
        {
            return Err(contradiction(
                field("block_serial_ns"),
                format!(
                    "unit {k}'s serial tail of {} ns is longer than the unit's {} ns",
                    run.block_serial_ns[k], run.block_ns[k]
                ),
            ));
        }
        if run.total_gas > 0 && run.block_ns.iter().all(|&ns| ns == 0) {
            return Err(contradiction(
                field("block_ns"),
                format!(
                    "every unit took 0 ns over {} gas: no execution takes no time",
                    run.total_gas
                ),
            ));
        }
        let mut stats = vec![("median_ns", run.median_ns), ("p90_ns", run.p90_ns)];
        if run.p99_ns != 0 {
            stats.push(("p99_ns", run.p99_ns));
        }
        check_repeats(&field(""), run.total_gas, &run.repeat_ns, &stats)?;
    }
    let mut labels = std::collections::HashMap::new();
    for (i, run) in r.runs.iter().enumerate() {
        if let Some(j) = labels.insert(run.label(), i) {
            return Err(contradiction(
                format!("{at}runs[{i}]"),
                format!(
                    "the configuration of runs[{j}] again ({}): bench measures each once",
                    gigagas_guard::text::printable(&run.label())
                ),
            ));
        }
    }
    for (i, p) in r.pipeline.iter().enumerate() {
        check_pipeline(r, p, &format!("{at}pipeline[{i}]."))?;
    }
    for (i, f) in r.contention_floor.iter().enumerate() {
        if f.threads == 0 {
            return Err(contradiction(
                format!("{at}contention_floor[{i}].threads"),
                "0 threads, yet the floor reports a ratio".into(),
            ));
        }
    }
    Ok(())
}

/// The longest `data` label a report may carry, characters (a path's limit, `PATH_MAX`).
const MAX_DATA_LABEL: usize = 4096;

/// The stage names of a pipeline row's timeline and `phases_ns`, in pipeline order (what
/// `gigagas_engine::STAGES` writes).
pub const PIPELINE_STAGES: [&str; 6] =
    ["recover", "prefetch", "execute", "verify", "write", "root"];

/// One pipeline row (`at`: its field path, `pipeline[i].`) against the report and what bench
/// writes: its settings, its gas, its repeats and its timeline (one entry per block of the
/// data set, in order; known stages; each span inside the repeat it was measured in).
fn check_pipeline(r: &BenchReport, p: &PipelineReport, at: &str) -> Result<(), ReadError> {
    let one_of = |name: &str, value: &str, allowed: &[&str]| {
        if allowed.contains(&value) {
            return Ok(());
        }
        Err(contradiction(
            format!("{at}{name}"),
            format!(
                "{:?} is not one bench writes ({})",
                gigagas_guard::text::printable(value),
                allowed.join(", ")
            ),
        ))
    };
    if p.threads == 0 {
        return Err(contradiction(
            format!("{at}threads"),
            "0 threads, yet the pipeline reports times".into(),
        ));
    }
    one_of(
        "scheduler",
        &p.scheduler,
        &["ordered", "gas-used", "gas-limit"],
    )?;
    one_of(
        "root",
        &p.root,
        &["none", "serial", "parallel", "incremental"],
    )?;
    one_of("state", &p.state, &["memory", "disk"])?;
    one_of("cache", &p.cache, &["warm", "cold"])?;
    one_of("bal", &p.bal, &["full", "keys", "writes", "none"])?;
    let block_gas: u128 = r.blocks.iter().map(|b| u128::from(b.gas_used)).sum();
    if u128::from(p.total_gas) != block_gas {
        return Err(contradiction(
            format!("{at}total_gas"),
            format!(
                "{} gas, but the {} blocks used {block_gas}",
                p.total_gas,
                r.blocks.len()
            ),
        ));
    }
    check_repeats(at, p.total_gas, &p.repeat_ns, &[("median_ns", p.median_ns)])?;
    for name in p.phases_ns.keys() {
        one_of("phases_ns", name, &PIPELINE_STAGES)?;
    }
    if p.timeline.is_empty() {
        return Ok(()); // older files, and runs that keep no timeline
    }
    if p.timeline.len() != r.blocks.len() {
        return Err(contradiction(
            format!("{at}timeline"),
            format!(
                "{} entries for the data set's {} blocks",
                p.timeline.len(),
                r.blocks.len()
            ),
        ));
    }
    // The timeline is one repeat's: no span ends after the longest one. A cold row's spans
    // run on through the cache drops between blocks, which its wall leaves out: there only
    // the order of each span's ends is checked.
    let longest = match p.cache.as_str() {
        "cold" => u64::MAX,
        _ => p.repeat_ns.iter().copied().max().unwrap_or(0),
    };
    for (k, (t, b)) in p.timeline.iter().zip(&r.blocks).enumerate() {
        if (t.number, t.gas) != (b.number, b.gas_used) {
            return Err(contradiction(
                format!("{at}timeline[{k}]"),
                format!(
                    "block {} of {} gas, but blocks[{k}] is block {} of {} gas",
                    t.number, t.gas, b.number, b.gas_used
                ),
            ));
        }
        for (stage, [start, end]) in &t.stages {
            one_of(&format!("timeline[{k}].stages"), stage, &PIPELINE_STAGES)?;
            if start > end || *end > longest {
                return Err(contradiction(
                    format!("{at}timeline[{k}].stages.{stage}"),
                    format!(
                        "[{start}, {end}] ns: a span must end after it starts and inside its repeat ({} ns at the longest)",
                        p.repeat_ns.iter().max().unwrap_or(&0)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn parse_reports(value: serde_json::Value) -> Result<Vec<BenchReport>, ReadError> {
    let schema = value
        .get("schema")
        .and_then(|s| s.as_str())
        .unwrap_or("<none>")
        .to_owned();
    match schema.as_str() {
        SCHEMA => Ok(vec![serde_json::from_value(value)?]),
        SWEEP_SCHEMA => {
            let sweep: SweepReport = serde_json::from_value(value)?;
            if sweep.reports.is_empty() {
                return Err(ReadError::Empty);
            }
            if let Some(bad) = sweep.reports.iter().find(|r| r.schema != SCHEMA) {
                return Err(ReadError::Schema {
                    found: bad.schema.clone(),
                });
            }
            Ok(sweep.reports)
        }
        _ => Err(ReadError::Schema { found: schema }),
    }
}

/// A complete benchmark result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// gigagas version that produced the file.
    pub gigagas_version: String,
    /// Data set name.
    pub data: String,
    /// What the machine was.
    pub machine: Machine,
    /// Warm-up and repeat counts.
    pub settings: Settings,
    /// How Mgas/s is defined.
    pub throughput_definition: String,
    /// One entry per block.
    pub blocks: Vec<BlockReport>,
    /// One entry per configuration (mode × threads × scheduler).
    pub runs: Vec<RunReport>,
    /// Phases measured once per block, summed.
    pub phases: PhaseTotals,
    /// Block time ≈ a·gas + b·slots_changed + c·txs + d, fitted on the sequential block times.
    pub cost_model: Option<crate::cost_model::CostModel>,
    /// The machine's own contention floor per thread count (`bench --contention-floor`):
    /// how much slower each transaction runs when T independent streams share the machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contention_floor: Vec<ContentionFloor>,
    /// The whole block pipeline (`bench --root/--pipeline`): one entry per configuration
    /// (threads × root × pipeline on/off), each a node's end-to-end figure beside execution
    /// alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pipeline: Vec<PipelineReport>,
    /// The build (commit, dirty flag, profile, rustc) and host (CPU model, cores, memory,
    /// kernel) that produced the result; absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::Provenance>,
}

/// One pipeline configuration measured over the whole data set (`bench --root/--pipeline`):
/// recover → prefetch → execute → verify → root → write, every block verified.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PipelineReport {
    /// Execution mode name (`parallel/2t/ordered`).
    pub mode: String,
    /// Thread budget of the whole pipeline (every stage shares it).
    pub threads: usize,
    /// The execution stage's scheduler.
    pub scheduler: String,
    /// State root mode: `none`, `serial`, `parallel` or `incremental`.
    pub root: String,
    /// Where the state lives: `memory`, or `disk` (an on-disk store, a fresh copy per pass;
    /// absent in older files = `memory`).
    #[serde(default = "memory")]
    pub state: String,
    /// Whether stages overlapped across blocks (`--pipeline on`) or ran back to back.
    pub overlap: bool,
    /// Whether the next block read the last one's writes from memory while they committed
    /// (the disk store's overlay, pipeline on; absent in older files, which had none).
    #[serde(default)]
    pub overlay: bool,
    /// The BAL variant the blocks ran from (`full`, `keys`, `writes`, `none`;
    /// `gigagas_engine::BalVariant`; absent in older files = `keys`).
    #[serde(default = "keys")]
    pub bal: String,
    /// `warm`, or `cold` (the store's page cache dropped before every block, untimed;
    /// absent in older files = `warm`).
    #[serde(default = "warm")]
    pub cache: String,
    /// Where senders were recovered: `cpu`, or `gpu (device name)` (absent in older files =
    /// `cpu`).
    #[serde(default = "cpu")]
    pub recovery: String,
    /// Threads of the stages' own pool for verification, the roots and the commit (0: they
    /// shared the workers' budget; absent in older files = 0).
    #[serde(default)]
    pub stage_threads: usize,
    /// When the on-disk store's writes were made durable (`--sync`: `every-block`,
    /// `every-N`, `end`); `None` in memory, and in older files (which flushed every block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<String>,
    /// In the median repeat, the wait after the last commit for every write to be durable
    /// (`every-N`, `end`), ns, inside its wall time; `None` in memory and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_sync_ns: Option<u64>,
    /// Blocks written per write transaction on disk (`--write-group`; 1 without the
    /// overlay); `None` in memory and in older files (which wrote one block each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_group: Option<usize>,
    /// Whether a disk row's flat state went through the write-ahead log (`--wal`); `None` in
    /// memory and in older files (which wrote it into the store every block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal: Option<bool>,
    /// Reads execution sent to the store on demand in the median repeat (accounts, slots and
    /// code nothing had read ahead; 0 in memory).
    #[serde(default)]
    pub demand_reads: u64,
    /// Bytes read from the device in the median repeat (`/proc/self/io`, page-cache misses);
    /// `None` where unreadable or in older files.
    #[serde(default)]
    pub read_bytes: Option<u64>,
    /// Gas of all blocks.
    pub total_gas: u64,
    /// Wall time of each repeat (the whole pipeline over the data set), ns.
    pub repeat_ns: Vec<u64>,
    /// The median repeat's wall time, ns.
    pub median_ns: u64,
    /// End-to-end throughput: total gas / median wall time, Mgas/s.
    pub e2e_mgas_per_s: f64,
    /// Execution alone in the median repeat: total gas / its execute-stage busy time,
    /// Mgas/s (the pure figure, beside the end-to-end one).
    pub mgas_per_s: f64,
    /// Busy time of each stage in the median repeat, summed over blocks, ns (keys
    /// `recover`, `prefetch`, `execute`, `verify`, `root`, `write`).
    pub phases_ns: BTreeMap<String, u64>,
    /// The pipeline's lower bound on the median repeat's wall time, ns: max(process CPU /
    /// threads, busiest stage, longest block).
    pub bound_ns: u64,
    /// bound / wall of the median repeat, percent.
    pub percent_of_bound: f64,
    /// The median repeat's stage spans per block (the timeline of the report).
    pub timeline: Vec<PipelineBlock>,
}

/// One block of a pipeline run's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineBlock {
    /// Block number.
    pub number: u64,
    /// Gas used.
    pub gas: u64,
    /// Transactions.
    pub txs: usize,
    /// Each stage's [start, end] in ns since the run started (stages a run skips are absent).
    pub stages: BTreeMap<String, [u64; 2]>,
    /// Reads execution sent to the store on demand (`None` in memory or in older files).
    #[serde(default)]
    pub demand_reads: Option<u64>,
    /// Bytes read from the device since the previous block's commit (`None` where
    /// unreadable or in older files).
    #[serde(default)]
    pub read_bytes: Option<u64>,
}

fn memory() -> String {
    "memory".into()
}

fn keys() -> String {
    "keys".into()
}

fn warm() -> String {
    "warm".into()
}

fn cpu() -> String {
    "cpu".into()
}

impl RunReport {
    /// The configuration as one label, the same in `compare` and in the warnings:
    /// `parallel/2t/gas-used`, `parallel/2t/ordered/mega10`, `sequential+recovery`.
    pub fn label(&self) -> String {
        let recovery = if self.recover_senders == "inline" {
            "+recovery"
        } else {
            ""
        };
        let mega = if self.mega > 1 {
            format!("/mega{}", self.mega)
        } else {
            String::new()
        };
        match &self.scheduler {
            Some(s) => format!("{}/{}t/{s}{mega}{recovery}", self.mode, self.threads),
            None => format!("{}{recovery}", self.mode),
        }
    }
}

impl PipelineReport {
    /// The configuration as one label: `2t root parallel, pipeline on`, with the BAL
    /// variant when it is not `keys` and the state when it is on disk:
    /// `2t bal writes root incremental (disk, cold), pipeline off`; a disk store's overlay
    /// shows as `pipeline on (overlay)`.
    pub fn label(&self) -> String {
        format!(
            "{}t{} root {}{}, pipeline {}",
            self.threads,
            if self.bal == "keys" {
                String::new()
            } else {
                format!(" bal {}", self.bal)
            },
            self.root,
            self.where_label(),
            self.pipeline_label()
        )
    }

    /// The pipeline in a few words: `on`, `on (overlay)` (the disk store's overlay: a block
    /// started on the last one's writes in memory) or `off`, and `, 4 stage threads` where
    /// the stages had a pool of their own.
    pub fn pipeline_label(&self) -> String {
        let on = match (self.overlap, self.overlay) {
            (true, true) => "on (overlay)",
            (true, false) => "on",
            _ => "off",
        };
        match self.stage_threads {
            0 => on.to_owned(),
            n => format!("{on}, {n} stage threads"),
        }
    }

    /// Where senders were recovered, when not on the CPU: `, recovery gpu (…)`; else empty.
    pub fn recovery_label(&self) -> String {
        match self.recovery.as_str() {
            "cpu" => String::new(),
            other => format!(", recovery {other}"),
        }
    }

    /// Where the state was: empty in memory, ` (disk)`, ` (disk, cold)`, or with the sync
    /// policy of a warm store that did not flush every block: ` (disk, every-3)`, and the
    /// blocks per write transaction when more than one: ` (disk, every-3, 3 per write)`,
    /// and `, wal` when the flat state went through the write-ahead log.
    pub fn where_label(&self) -> String {
        let mut group = match self.write_group {
            Some(n) if n > 1 => format!(", {n} per write"),
            _ => String::new(),
        };
        if self.wal == Some(true) {
            group.push_str(", wal");
        }
        match (
            self.state.as_str(),
            self.cache.as_str(),
            self.sync.as_deref(),
        ) {
            ("disk", "cold", _) => " (disk, cold)".into(),
            ("disk", _, None | Some("every-block")) => format!(" (disk{group})"),
            ("disk", _, Some(sync)) => format!(" (disk, {sync}{group})"),
            _ => String::new(),
        }
    }

    /// Whether `other` is the same configuration but for the pipeline (on/off).
    pub fn same_but_overlap(&self, other: &Self) -> bool {
        self.recovery == other.recovery
            && self.threads == other.threads
            && self.root == other.root
            && self.state == other.state
            && self.bal == other.bal
            && self.cache == other.cache
            && self.write_group == other.write_group
            && self.wal == other.wal
            && self.sync == other.sync
    }
}

impl BenchReport {
    /// For a pipeline-on configuration: the median wall of the same configuration with the
    /// pipeline off ÷ its own (how much overlapping the stages gained, same run). `None` for
    /// pipeline-off rows or when the off configuration was not measured.
    pub fn pipeline_gain(&self, p: &PipelineReport) -> Option<f64> {
        if !p.overlap {
            return None;
        }
        self.pipeline
            .iter()
            .find(|o| !o.overlap && o.same_but_overlap(p))
            .map(|o| o.median_ns as f64 / p.median_ns.max(1) as f64)
    }

    /// A pipeline configuration's median wall ÷ the pure-execution median of the same
    /// execution mode (parallel, same threads and scheduler, senders recovered in advance,
    /// each block on its own) measured in the same bench: what a node pays on top of
    /// execution. `None` when that run was not measured.
    pub fn pipeline_vs_pure(&self, p: &PipelineReport) -> Option<f64> {
        // `--bal none` runs sequentially without a BAL: its pure row is `sequential-nobal`.
        let (mode, threads) = if p.bal == "none" {
            ("sequential-nobal", 1)
        } else {
            ("parallel", p.threads)
        };
        self.runs
            .iter()
            .find(|r| {
                r.mode == mode
                    && r.threads == threads
                    && (mode != "parallel" || r.scheduler.as_deref() == Some(p.scheduler.as_str()))
                    && r.recover_senders == "pre"
                    && r.mega == 1
            })
            .map(|r| p.median_ns as f64 / r.median_ns.max(1) as f64)
    }
}

/// What the streams of a contention-floor measurement share: one kind of sharing switched on
/// at a time, so that its cost is the difference to [`FloorSharing::Nothing`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloorSharing {
    /// Own deep copy of every block per stream; streams run different blocks at a time.
    #[default]
    Nothing,
    /// One prepared copy of the blocks read by every stream (pre-state, bytecode and BAL
    /// reference counts, the same hot accounts), all streams on the same block at a time:
    /// what the parallel path's workers share, without its dispatch and result hand-off.
    Inputs,
}

impl FloorSharing {
    /// The flag value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Nothing => "nothing",
            Self::Inputs => "inputs",
        }
    }
}

impl std::str::FromStr for FloorSharing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "nothing" => Ok(Self::Nothing),
            "inputs" => Ok(Self::Inputs),
            _ => Err(format!(
                "unknown sharing {s:?} (expected nothing or inputs)"
            )),
        }
    }
}

/// The contention floor at one thread count: T threads, each executing its *own* deep copy of
/// every block (own pre-state, bytecode, transactions, worker thread and allocator arena)
/// through the 1-worker parallel path, nothing shared but the machine and the process. Its
/// per-transaction work ratio is what the parallel path's "tx work vs 1t" would read if the
/// engine added no contention of its own; the difference is what the engine can still win.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContentionFloor {
    /// What the streams share (absent in older files: nothing).
    #[serde(default)]
    pub sharing: FloorSharing,
    /// Concurrent streams.
    pub threads: usize,
    /// Σ per-transaction time of the T streams ÷ (T × Σ of one stream alone, measured in the
    /// same round): median over the rounds. 1.0 = no slowdown.
    pub tx_work_ratio: f64,
    /// 10th percentile of the per-round ratios.
    pub p10: f64,
    /// 90th percentile of the per-round ratios.
    pub p90: f64,
    /// Σ over transactions of the median of its times in the T-stream passes (all rounds,
    /// all streams) ÷ the same over the 1-stream passes: the typical transaction's slowdown,
    /// comparable with the parallel path's `median_tx_ns` ratio. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_tx_ratio: Option<f64>,
    /// Timed rounds (each runs every thread count once, in rotating order).
    pub rounds: usize,
}

impl BenchReport {
    /// The sequential run with senders recovered in advance.
    pub fn sequential(&self) -> Option<&RunReport> {
        self.runs
            .iter()
            .find(|r| r.recover_senders == "pre" && r.mode == "sequential")
    }

    /// The fastest parallel run with senders recovered in advance.
    pub fn fastest_parallel(&self) -> Option<&RunReport> {
        self.runs
            .iter()
            .filter(|r| r.recover_senders == "pre" && r.mode == "parallel")
            .max_by(|a, b| a.mgas_per_s.total_cmp(&b.mgas_per_s))
    }
}

/// The machine a report was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Logical cores available to the process.
    pub cores: usize,
    /// Operating system.
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// 1-minute load average when the measurement started (`/proc/loadavg`; absent where
    /// unreadable or in results written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_avg_start: Option<f64>,
    /// 1-minute load average when the measurement ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_avg_end: Option<f64>,
    /// The CPU time other processes used during the timed runs, counted from `/proc/stat`
    /// (absent where unreadable or in results written before it was recorded): the verdict
    /// the warnings use, as the load average misses a competitor that holds fewer cores
    /// than the machine has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_during_run: Option<crate::machine_load::CpuLoad>,
}

/// The 1-minute load average (`/proc/loadavg`), where readable.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Coefficient of variation above which a configuration's repeats count as noisy.
pub const NOISY_CV: f64 = 0.05;

/// The warning that the machine was not idle during the timed runs (other processes' CPU
/// time at or above the threshold, [`crate::machine_load::CpuLoad::busy`]); `None` when it
/// was idle or the result does not record it. For commands that read a result (`report`,
/// `simulate`, `compare`) to repeat.
pub fn busy_warning(report: &crate::BenchReport) -> Option<String> {
    report
        .machine
        .cpu_during_run
        .as_ref()?
        .warning(report.machine.cores)
}

/// Warnings about the conditions of a measurement: the machine not idle during the timed runs
/// ([`busy_warning`]), configurations whose repeats vary by more than [`NOISY_CV`]
/// (coefficient of variation, with at least 3 repeats), and a load average above the core
/// count at the start or the end (other processes competed for the cores).
pub fn noise_warnings(report: &crate::BenchReport) -> Vec<String> {
    let mut warnings: Vec<String> = busy_warning(report).into_iter().collect();
    let cores = report.machine.cores as f64;
    for (when, load) in [
        ("start", report.machine.load_avg_start),
        ("end", report.machine.load_avg_end),
    ] {
        if let Some(load) = load.filter(|l| *l > cores) {
            warnings.push(format!(
                "load average {load:.2} at the {when} of the run is above the {cores} cores: other processes competed for the CPU; treat absolute times and small differences with care"
            ));
        }
    }
    for run in &report.runs {
        if let Some(cv) = coefficient_of_variation(&run.repeat_ns) {
            if cv > NOISY_CV {
                warnings.push(format!(
                    "{}: repeats vary by {:.1}% (coefficient of variation above {:.0}%)",
                    run.label(),
                    cv * 100.0,
                    NOISY_CV * 100.0
                ));
            }
        }
    }
    warnings
}

/// A warning when two results were measured under different load (the machine busy during
/// the timed runs on one side only, [`busy_warning`]; or the load average at the start or end
/// above the core count on one side only, or differing by more than 1): then a difference
/// between them may be the machine's, not the code's. Results without recorded load give no
/// warning.
pub fn load_mismatch(a: &crate::BenchReport, b: &crate::BenchReport) -> Option<String> {
    if let (Some(ca), Some(cb)) = (&a.machine.cpu_during_run, &b.machine.cpu_during_run) {
        if ca.busy != cb.busy {
            return Some(format!(
                "the two sides ran under different load (other processes used {:.0}% of the CPU time during A's timed runs, {:.0}% during B's; busy from {:.0}%): part of any difference may be the machine's",
                ca.other_share * 100.0,
                cb.other_share * 100.0,
                ca.busy_threshold * 100.0
            ));
        }
    }
    let worst = |r: &crate::BenchReport| {
        [r.machine.load_avg_start, r.machine.load_avg_end]
            .into_iter()
            .flatten()
            .reduce(f64::max)
    };
    let (la, lb) = (worst(a)?, worst(b)?);
    let busy = |l: f64, r: &crate::BenchReport| l > r.machine.cores as f64;
    (busy(la, a) != busy(lb, b) || (la - lb).abs() > 1.0).then(|| {
        format!(
            "the two sides ran under different load (highest load average {la:.2} for A, {lb:.2} for B, {} cores): part of any difference may be the machine's",
            a.machine.cores
        )
    })
}

/// Standard deviation / mean of `values` (at least 3 values, positive mean).
pub fn coefficient_of_variation(values: &[u64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = values
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    Some(var.sqrt() / mean)
}

/// Measurement settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Untimed passes over the data set per configuration.
    pub warmup: usize,
    /// Timed passes per configuration (interleaved across configurations).
    pub repeats: usize,
    /// The parallel path's small-block threshold, gas: blocks using less ran through the
    /// sequential executor (0: every block on the worker pool; absent in older files = 0).
    #[serde(default)]
    pub small_block_gas: u64,
    /// How long the parallel modes' workers stayed awake after each block or unit, µs
    /// (absent in older files = 0: they went to sleep at once).
    #[serde(default)]
    pub warm_spin_us: u64,
}

/// One block of the data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockReport {
    /// Block number.
    pub number: u64,
    /// Fork the block executed under.
    pub fork: String,
    /// Number of transactions.
    pub txs: usize,
    /// Gas used (verified against the header).
    pub gas_used: u64,
    /// Every run of this block verified: header gas, logs bloom, receipts root where
    /// checkable, parallel == sequential per transaction, BAL checks.
    pub verified: bool,
    /// Whether the receipts root was checked (pre-Byzantium receipts hold intermediate state
    /// roots that touched-only pre-state cannot rebuild).
    pub receipts_root_checked: bool,
    /// keccak256(RLP(BAL)) of the block access list built by the sequential run.
    pub bal_hash: String,
    /// Accounts in the BAL.
    pub bal_accounts: usize,
    /// Lifecycle events (pre-Cancun self-destructs, pre-EIP-161 materialisations).
    pub lifecycle_events: usize,
    /// Sum of 1-thread per-transaction execution times (median over repeats), ns.
    pub sum_tx_ns: u64,
    /// Longest 1-thread transaction time, ns.
    pub longest_tx_ns: u64,
    /// Per-phase times of this block, ns.
    pub phases: BlockPhases,
    /// One entry per transaction, in block order.
    pub tx: Vec<TxTrace>,
}

/// One transaction's trace: what the simulator and the cost model replay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TxTrace {
    /// 1-thread execution time (median over repeats), ns.
    pub ns: u64,
    /// Gas used (after refunds, as in the receipt).
    pub gas: u64,
    /// Declared gas limit.
    pub gas_limit: u64,
    /// Storage slots only read.
    pub slots_read: u32,
    /// Storage slots written (changed).
    pub slots_written: u32,
    /// Gas spent before refunds (the cost model's gas).
    pub gas_spent: u64,
}

/// Phases of one block that are not part of the throughput figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockPhases {
    /// Sender recovery (parallel, all cores).
    pub recover_ns: u64,
    /// Validating the BAL and building the parallel lookup structure.
    pub bal_prepare_ns: u64,
    /// Sequential execution, building the BAL (median over repeats).
    pub sequential_ns: u64,
    /// Sequential execution without the BAL builder (median over repeats; measured only with
    /// `bench --sequential-without-bal`). `sequential_ns` minus this is the builder's cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_nobal_ns: Option<u64>,
    /// Parallel worker phase on the most threads measured, best scheduler (median); a block
    /// run alone commits while it executes, and that part of the commit is in here.
    pub parallel_ns: u64,
    /// The canonical commit and BAL rebuild's part after that parallel run (median).
    pub commit_ns: u64,
    /// Verification against header and sequential results (median).
    pub verify_ns: u64,
}

/// One configuration's results over all repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// `sequential` (builds the BAL), `sequential-nobal` (plain revm `State`, no BAL built)
    /// or `parallel`.
    pub mode: String,
    /// Where senders were recovered: `pre` (in advance, not timed) or `inline` (inside the
    /// timed execution).
    pub recover_senders: String,
    /// Worker threads (1 for sequential).
    pub threads: usize,
    /// Scheduler (`null` for sequential).
    pub scheduler: Option<String>,
    /// Consecutive blocks executed as one mega-block (1: each block on its own; see
    /// [`crate::mega_units`] for how blocks are grouped).
    #[serde(default = "one")]
    pub mega: usize,
    /// Gas of all blocks.
    pub total_gas: u64,
    /// Execution time of each repeat (sum over blocks), ns.
    pub repeat_ns: Vec<u64>,
    /// Median of `repeat_ns`.
    pub median_ns: u64,
    /// 90th percentile of `repeat_ns`.
    pub p90_ns: u64,
    /// 99th percentile of the repeats' data-set times, nanoseconds (equals the maximum for
    /// fewer than 100 repeats).
    #[serde(default)]
    pub p99_ns: u64,
    /// total_gas / median time, in Mgas/s.
    pub mgas_per_s: f64,
    /// Sequential median time / this median time.
    pub speedup_vs_sequential: f64,
    /// Σ over blocks of the longest 1-thread transaction / this median time.
    pub longest_tx_share: f64,
    /// Critical-path bound on the speedup over 1 worker at this thread count.
    pub critical_path_bound: f64,
    /// Achieved speedup over the 1-thread parallel run / the bound (1.0 = at the bound).
    pub bound_fraction: Option<f64>,
    /// Amdahl-style parallelism score M = (T_seq − T) / (T_seq − Σ longest tx): 0 = no gain
    /// over sequential, 1 = every block finishes with its longest transaction.
    pub parallelism_score: Option<f64>,
    /// Median canonical-commit time after the workers per repeat (parallel only), ns.
    pub commit_ns: u64,
    /// Median verification time per repeat, ns.
    pub verify_ns: u64,
    /// Median execution time of each block (each mega-block unit when `mega` > 1), ns, in
    /// the order of `blocks`.
    pub block_ns: Vec<u64>,
    /// Median per block (unit) of the serial tail of its time after the last worker
    /// finished its last transaction: joining the workers, collecting results and merging
    /// receipts in block order (parallel only; the
    /// simulator keeps it serial), ns. Empty in older files.
    #[serde(default)]
    pub block_serial_ns: Vec<u64>,
    /// Per block (or unit), median over repeats: from the start of the worker phase until the
    /// last worker that ran a transaction took its first one (the pool's wake-up and each
    /// worker's EVM set-up; parallel only), ns. Empty in older files.
    #[serde(default)]
    pub block_head_ns: Vec<u64>,
    /// Median over repeats of the summed per-transaction execution times (the work done
    /// inside transactions; its growth with threads measures contention), ns.
    pub sum_tx_ns: u64,
    /// Σ over transactions of each one's median time over the repeats, ns. Unlike
    /// `sum_tx_ns` (the median of per-repeat sums) it leaves out the rare transaction that a
    /// preemption or an interrupt stretched, so its ratio between thread counts reads the
    /// typical transaction's slowdown. 0 in older files.
    #[serde(default)]
    pub median_tx_ns: u64,
    /// Heap allocations per transaction (the first repeat's count ÷ transactions), when the
    /// binary was built with the counting allocator (`--features gigagas-cli/count-alloc`);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs_per_tx: Option<f64>,
}

/// Once-per-block phases, summed over the data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTotals {
    /// Transactions in the data set.
    pub txs: usize,
    /// Total sender-recovery time, ns.
    pub recover_ns: u64,
    /// Sender recovery per transaction, ns (wall time on all cores / txs).
    pub recover_ns_per_tx: f64,
    /// Total BAL preparation time, ns.
    pub bal_prepare_ns: u64,
}

fn one() -> usize {
    1
}

#[cfg(test)]
mod noise_tests {
    use super::*;

    #[test]
    fn coefficient_of_variation_needs_three_repeats() {
        assert_eq!(coefficient_of_variation(&[10, 10]), None);
        assert_eq!(coefficient_of_variation(&[10, 10, 10]), Some(0.0));
        let cv = coefficient_of_variation(&[90, 100, 110]).unwrap();
        assert!((cv - 0.1).abs() < 1e-9, "{cv}");
        assert_eq!(coefficient_of_variation(&[0, 0, 0]), None);
    }

    #[test]
    fn different_load_is_named() {
        let mut a: crate::BenchReport =
            crate::read_reports(include_bytes!("../tests/fixtures/tiny-report.json"))
                .unwrap()
                .remove(0);
        let mut b = a.clone();
        assert_eq!(load_mismatch(&a, &b), None, "no load recorded: no warning");
        a.machine.load_avg_start = Some(0.3);
        b.machine.load_avg_start = Some(a.machine.cores as f64 + 2.0);
        assert!(load_mismatch(&a, &b).unwrap().contains("different load"));
        b.machine.load_avg_start = Some(0.5);
        assert_eq!(load_mismatch(&a, &b), None);
    }

    /// A load between synthetic samples: `other` and `own` ticks out of `total`.
    fn cpu(total: u64, other: u64, own: u64) -> crate::machine_load::CpuLoad {
        use crate::machine_load::{CpuLoad, CpuSample};
        let zero = CpuSample {
            total: 0,
            busy: 0,
            own: 0,
        };
        let end = CpuSample {
            total,
            busy: other + own,
            own,
        };
        CpuLoad::between(&zero, &end).unwrap()
    }

    #[test]
    fn a_busy_machine_is_warned_about_and_round_trips() {
        let mut a: crate::BenchReport =
            crate::read_reports(include_bytes!("../tests/fixtures/tiny-report.json"))
                .unwrap()
                .remove(0);
        // The fixture predates the field: it loads without it, and writes no key for it.
        assert_eq!(a.machine.cpu_during_run, None);
        assert_eq!(busy_warning(&a), None);
        let json = serde_json::to_string(&a).unwrap();
        assert!(!json.contains("cpu_during_run"));

        a.machine.cores = 2;
        a.machine.load_avg_start = Some(1.8);
        a.machine.load_avg_end = Some(1.8);
        // One other process holding one of the two cores: load 1.8 < 2 cores, yet busy.
        a.machine.cpu_during_run = Some(cpu(2000, 1000, 1000));
        let warnings = noise_warnings(&a);
        assert!(
            warnings[0].contains("not idle") && warnings[0].contains("50%"),
            "{warnings:?}"
        );
        assert!(!warnings.iter().any(|w| w.contains("load average")));
        let back: crate::BenchReport =
            crate::read_reports(serde_json::to_string(&a).unwrap().as_bytes())
                .unwrap()
                .remove(0);
        assert_eq!(back.machine.cpu_during_run, a.machine.cpu_during_run);

        // Idle: no warning; compared with the busy one: a mismatch named by its shares.
        let mut b = a.clone();
        b.machine.cpu_during_run = Some(cpu(2000, 20, 1900));
        assert_eq!(busy_warning(&b), None);
        let m = load_mismatch(&a, &b).unwrap();
        assert!(m.contains("50%") && m.contains("1%"), "{m}");
        assert_eq!(load_mismatch(&a, &a), None);
    }

    #[test]
    fn noisy_configurations_are_named_with_mega_and_recovery() {
        let mut r: crate::BenchReport =
            crate::read_reports(include_bytes!("../tests/fixtures/tiny-report.json"))
                .unwrap()
                .remove(0);
        let template = r.runs[0].clone();
        let noisy = |mega: usize, recovery: &str| {
            let mut run = template.clone();
            run.mode = "parallel".into();
            run.threads = 2;
            run.scheduler = Some("gas-used".into());
            run.mega = mega;
            run.recover_senders = recovery.into();
            run.repeat_ns = vec![100, 150, 200];
            run
        };
        r.runs = vec![noisy(1, "pre"), noisy(10, "pre"), noisy(1, "inline")];
        let warnings = noise_warnings(&r);
        let named: Vec<&str> = warnings
            .iter()
            .filter(|w| w.contains(": repeats vary"))
            .filter_map(|w| w.split(": repeats vary").next())
            .collect();
        assert_eq!(
            named,
            [
                "parallel/2t/gas-used",
                "parallel/2t/gas-used/mega10",
                "parallel/2t/gas-used+recovery"
            ],
            "{warnings:?}"
        );
    }

    #[test]
    fn load_average_is_read_here() {
        // Linux exposes /proc/loadavg; elsewhere the field stays absent.
        if cfg!(target_os = "linux") {
            assert!(load_average().is_some_and(|l| l >= 0.0));
        }
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use serde_json::{json, Value};

    fn fixture() -> Value {
        serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap()
    }

    fn read(value: &Value) -> Result<Vec<BenchReport>, ReadError> {
        read_reports(&serde_json::to_vec(value).unwrap())
    }

    fn refused(value: &Value, field: &str) -> String {
        match read(value) {
            Err(e @ ReadError::Limit { .. }) => {
                let message = e.to_string();
                assert!(message.starts_with(field), "{message}");
                message
            }
            other => panic!("expected a limit on {field}, got {other:?}"),
        }
    }

    #[test]
    fn the_fixture_is_within_every_budget() {
        assert_eq!(read(&fixture()).unwrap().len(), 1);
    }

    /// 2^32 − 1 threads once sized a 32 GiB vector of the throughput plot.
    #[test]
    fn thread_counts_beyond_the_bench_limit_are_refused() {
        let mut v = fixture();
        v["runs"][1]["threads"] = json!(4_294_967_295u64);
        let message = refused(&v, "runs[1].threads = 4294967295");
        assert!(
            message.contains("1024") && message.contains("--threads"),
            "{message}"
        );
    }

    /// 1e308 Mgas/s once made an axis end at +∞, whose ticks never finished.
    #[test]
    fn absurd_numbers_are_refused_wherever_they_are() {
        for (path, value) in [
            (&["runs", "0", "mgas_per_s"][..], json!(1e308)),
            (&["runs", "0", "median_ns"][..], json!(u64::MAX)),
            (&["phases", "recover_ns_per_tx"][..], json!(-1e300)),
            (&["machine", "load_avg_start"][..], json!(1e17)),
        ] {
            let mut v = fixture();
            let mut at = &mut v;
            for key in path {
                at = match key.parse::<usize>() {
                    Ok(i) => &mut at[i],
                    Err(_) => &mut at[*key],
                };
            }
            *at = value;
            let field = path.join(".").replace(".0.", "[0].");
            refused(&v, &field);
        }
    }

    /// A negative throughput was once drawn as if measured.
    #[test]
    fn negative_measurements_are_refused_and_negative_fits_are_not() {
        for key in ["mgas_per_s", "speedup_vs_sequential", "critical_path_bound"] {
            let mut v = fixture();
            v["runs"][0][key] = json!(-1.0);
            let message = read(&v).unwrap_err().to_string();
            assert!(
                message.starts_with(&format!("runs[0].{key} = -1")) && message.contains("negative"),
                "{message}"
            );
        }
        let mut v = fixture();
        v["machine"]["load_avg_end"] = json!(-0.5);
        assert!(read(&v)
            .unwrap_err()
            .to_string()
            .contains("machine.load_avg_end"));
    }

    #[test]
    fn repeats_and_warm_up_are_bounded() {
        let mut v = fixture();
        v["runs"][2]["repeat_ns"] = json!(vec![1000u64; MAX_REPEATS + 1]);
        refused(&v, "runs[2].repeat_ns (count) = 10001");
        let mut v = fixture();
        v["settings"]["warmup"] = json!(1u64 << 40);
        refused(&v, "settings.warmup");
        let mut v = fixture();
        v["runs"][0]["mega"] = json!(1u64 << 40);
        refused(&v, "runs[0].mega");
    }

    /// Values each within 2^53 whose total would wrap 64 bits are refused.
    #[test]
    fn totals_must_fit_in_64_bits() {
        let mut v = fixture();
        let tx = v["blocks"][0]["tx"][0].clone();
        let mut txs = vec![tx; 2100];
        for t in &mut txs {
            t["ns"] = json!(1u64 << 53);
        }
        v["blocks"][0]["tx"] = json!(txs);
        refused(&v, "blocks[].tx[].ns");
    }

    #[test]
    fn oversized_files_are_refused_before_they_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(max_result_bytes().unwrap() + 1).unwrap();
        assert!(matches!(
            read_reports_file(&path),
            Err(ReadError::TooLarge { .. })
        ));
        // A device that never ends is refused unread, whatever the limit.
        if cfg!(target_os = "linux") {
            let err = read_reports_file(std::path::Path::new("/dev/zero")).unwrap_err();
            assert!(
                err.to_string()
                    .contains("a character device, not a regular file"),
                "{err}"
            );
        }
    }

    /// A contradiction is refused naming the field and every number named in `want`.
    fn contradicts(value: &Value, field: &str, want: &[&str]) {
        match read(value) {
            Err(e @ ReadError::Contradiction { .. }) => {
                let message = e.to_string();
                assert!(message.starts_with(field), "{field}: {message}");
                for w in want {
                    assert!(message.contains(w), "{w}: {message}");
                }
            }
            other => panic!("expected a contradiction on {field}, got {other:?}"),
        }
    }

    /// The fixture with one back-to-back pipeline row as bench writes it.
    fn with_pipeline() -> Value {
        let mut v = fixture();
        let stage = |a: u64, b: u64| json!([a, b]);
        v["pipeline"] = json!([{
            "mode": "parallel/1t/ordered", "threads": 1, "scheduler": "ordered",
            "root": "incremental", "overlap": false, "total_gas": 126000,
            "repeat_ns": [1_000_000, 1_100_000], "median_ns": 1_050_000,
            "e2e_mgas_per_s": 120.0, "mgas_per_s": 300.0,
            "phases_ns": {"execute": 400_000, "root": 300_000},
            "bound_ns": 700_000, "percent_of_bound": 66.0,
            "timeline": [
                {"number": 1, "gas": 63000, "txs": 3,
                 "stages": {"execute": stage(0, 200_000), "root": stage(200_000, 350_000)}},
                {"number": 2, "gas": 63000, "txs": 3,
                 "stages": {"execute": stage(350_000, 550_000), "root": stage(550_000, 700_000)}},
            ],
        }]);
        v
    }

    /// Class (a hostile pass on `simulate`): a pipeline row whose gas, settings or timeline
    /// contradict the data set or what bench writes gave predictions of 0 or 10^12 Mgas/s;
    /// each is refused naming the field and the numbers. Also a run listed twice and a data
    /// label longer than a path.
    #[test]
    fn contradictory_pipeline_rows_are_refused_naming_field_and_numbers() {
        assert!(read(&with_pipeline()).is_ok(), "the row as bench writes it");
        let cases: Vec<(&str, Value, &str, Vec<&str>)> = vec![
            (
                "total_gas",
                json!(0),
                "pipeline[0].total_gas",
                vec!["0 gas", "126000"],
            ),
            (
                "scheduler",
                json!("fastest"),
                "pipeline[0].scheduler",
                vec!["fastest", "gas-used"],
            ),
            (
                "state",
                json!("nvme"),
                "pipeline[0].state",
                vec!["nvme", "disk"],
            ),
            (
                "phases_ns",
                json!({"bogus": 5}),
                "pipeline[0].phases_ns",
                vec!["bogus"],
            ),
        ];
        for (key, value, field, want) in cases {
            let mut v = with_pipeline();
            v["pipeline"][0][key] = value;
            contradicts(&v, field, &want);
        }
        let mut v = with_pipeline();
        v["pipeline"][0]["timeline"].as_array_mut().unwrap().pop();
        contradicts(&v, "pipeline[0].timeline", &["1 entries", "2 blocks"]);
        let mut v = with_pipeline();
        v["pipeline"][0]["timeline"][1]["number"] = json!(7);
        contradicts(&v, "pipeline[0].timeline[1]", &["block 7", "block 2"]);
        let mut v = with_pipeline();
        v["pipeline"][0]["timeline"][0]["stages"]["execute"] = json!([300, 200]);
        contradicts(
            &v,
            "pipeline[0].timeline[0].stages.execute",
            &["[300, 200]"],
        );
        let mut v = with_pipeline();
        v["pipeline"][0]["timeline"][0]["stages"]["execute"] = json!([0, 1_000_000_000u64]);
        contradicts(
            &v,
            "pipeline[0].timeline[0].stages.execute",
            &["1100000 ns"],
        );
        // Cold: the cache drops between blocks are in the spans and not in the wall.
        v["pipeline"][0]["cache"] = json!("cold");
        assert!(read(&v).is_ok());
        let mut v = with_pipeline();
        v["pipeline"][0]["timeline"][0]["stages"]["bogus"] = json!([0, 5]);
        contradicts(&v, "pipeline[0].timeline[0].stages", &["bogus"]);
        let mut v = fixture();
        let again = v["runs"][1].clone();
        v["runs"].as_array_mut().unwrap().push(again);
        contradicts(&v, "runs[3]", &["runs[1]"]);
        let mut v = fixture();
        v["data"] = json!("a".repeat(5000));
        refused(&v, "data (characters) = 5000");
    }

    /// Class: numbers of one result that contradict each other are refused naming the field
    /// and both numbers (each was accepted by report, simulate and compare).
    #[test]
    fn contradictory_results_are_refused_naming_field_and_numbers() {
        assert!(read(&fixture()).is_ok(), "the fixture itself is consistent");
        let cases: Vec<(&str, Value, &str, Vec<&str>)> = vec![
            (
                "runs[2].threads",
                json!(0),
                "runs[2].threads",
                vec!["0 threads"],
            ),
            ("runs[0].mega", json!(0), "runs[0].mega", vec!["0 blocks"]),
            ("machine.cores", json!(0), "machine.cores", vec!["0 cores"]),
            (
                "runs[1].block_ns",
                json!([5]),
                "runs[1].block_ns",
                vec!["1 entries", "2 blocks"],
            ),
            (
                "runs[1].block_ns",
                json!(vec![5u64; 10_000]),
                "runs[1].block_ns",
                vec!["10000 entries", "2 blocks"],
            ),
            (
                "runs[0].median_ns",
                json!(1),
                "runs[0].median_ns",
                vec!["1 ns", "62653", "104075"],
            ),
            (
                "runs[0].mode",
                json!("banana"),
                "runs[0].mode",
                vec!["\"banana\"", "parallel"],
            ),
            (
                "runs[0].repeat_ns",
                json!([0, 0, 0]),
                "runs[0].repeat_ns",
                vec!["0 ns", "126000 gas"],
            ),
            (
                "runs[0].total_gas",
                json!(7),
                "runs[0].total_gas",
                vec!["7 gas", "126000"],
            ),
            ("phases.txs", json!(60), "phases.txs", vec!["60", "hold 6"]),
        ];
        for (path, value, field, want) in cases {
            let mut v = fixture();
            let mut at = &mut v;
            for part in path.split('.') {
                at = match part.split_once('[') {
                    Some((key, index)) => {
                        let i: usize = index.trim_end_matches(']').parse().unwrap();
                        &mut at[key][i]
                    }
                    None => &mut at[part],
                };
            }
            *at = value;
            contradicts(&v, field, &want);
        }
        // Every measurement 0: refused (the repeats, before any figure is made of them).
        let mut v = fixture();
        for run in v["runs"].as_array_mut().unwrap() {
            for f in ["median_ns", "p90_ns", "p99_ns"] {
                run[f] = json!(0);
            }
            run["repeat_ns"] = json!([0, 0, 0]);
        }
        contradicts(&v, "runs[0].repeat_ns", &["0 ns"]);
    }

    /// A result `gigagas bench` wrote (the committed mainnet run) passes the validation.
    #[test]
    fn a_real_bench_result_is_consistent() {
        let bytes = include_bytes!("../../../docs/results/bench-mainnet-2core.json");
        assert!(!read_reports(bytes).unwrap().is_empty());
    }

    /// The same data set twice in a sweep: the second would be silently ignored.
    #[test]
    fn a_sweep_with_a_data_set_twice_is_refused_naming_it() {
        let one = fixture();
        let sweep = json!({"schema": SWEEP_SCHEMA, "reports": [one.clone(), one]});
        contradicts(&sweep, "reports[1].data", &["reports[0]", "again"]);
        let mut other = fixture();
        other["data"] = json!("another data set");
        let sweep = json!({"schema": SWEEP_SCHEMA, "reports": [fixture(), other]});
        assert_eq!(read(&sweep).unwrap().len(), 2);
    }

    /// A FIFO is refused unopened (opening it would wait for a writer), and so is a
    /// directory: neither is read, whatever the size limit.
    #[test]
    fn fifos_devices_and_directories_are_refused_unopened() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_result_bytes(dir.path()).unwrap_err();
        assert!(
            matches!(
                err,
                ReadError::NotAFile {
                    kind: "a directory"
                }
            ),
            "{err}"
        );
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let err = read_result_bytes(&fifo).unwrap_err();
            assert!(
                err.to_string().contains("a FIFO, not a regular file"),
                "{err}"
            );
        }
        // A regular file within the limit is read whole.
        let file = dir.path().join("r.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read_result_bytes(&file).unwrap(), b"{}");
    }
}

#[cfg(test)]
mod label_tests {
    use super::PipelineReport;

    /// A disk row names its blocks per write transaction when more than one, and a file
    /// without the field (older, or in memory) reads as before.
    #[test]
    fn a_write_group_shows_in_the_label_and_older_rows_read_without_it() {
        let row = |sync: Option<&str>, group: Option<usize>| PipelineReport {
            state: "disk".into(),
            cache: "warm".into(),
            sync: sync.map(Into::into),
            write_group: group,
            ..PipelineReport::default()
        };
        assert_eq!(
            row(Some("every-3"), Some(3)).where_label(),
            " (disk, every-3, 3 per write)"
        );
        assert_eq!(
            row(Some("every-3"), Some(1)).where_label(),
            " (disk, every-3)"
        );
        assert_eq!(row(Some("every-block"), None).where_label(), " (disk)");
        let logged = PipelineReport {
            wal: Some(true),
            ..row(Some("every-3"), Some(1))
        };
        assert_eq!(logged.where_label(), " (disk, every-3, wal)");
        assert!(!logged.same_but_overlap(&row(Some("every-3"), Some(1))));
        assert!(!row(Some("every-3"), Some(3)).same_but_overlap(&row(Some("every-3"), Some(1))));
        let json = serde_json::to_value(row(Some("every-3"), None)).unwrap();
        assert!(json.get("write_group").is_none(), "{json}");
        let back: PipelineReport = serde_json::from_value(json).unwrap();
        assert_eq!(back.write_group, None);
    }
}
