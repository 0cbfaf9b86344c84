//! `gigagas compare`: B against A, per configuration, with a bootstrap 95% interval.

use crate::common::read_reports;
use crate::common::{note, out, out_raw};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct CompareArgs {
    /// Baseline result (`gigagas bench --json`); several, comma-separated, are pooled (their
    /// repeats joined per configuration) — e.g. the A runs of an A-B-B-A sequence
    /// (scripts/abba.sh), so drift between runs hits both sides alike.
    /// Exactly one argument: a third file is an error, never pooled into one side.
    #[arg(value_name = "A[,A2..]", value_parser = parse_side)]
    a: Side,
    /// Candidate result(s), as for A.
    #[arg(value_name = "B[,B2..]", value_parser = parse_side)]
    b: Side,
    /// Smallest change that counts, e.g. `2%` or `0.02`.
    #[arg(long, default_value = "2%", value_parser = parse_floor)]
    floor: f64,
    /// Print a markdown table (for PR comments) instead of the terminal table.
    #[arg(long)]
    markdown: bool,
}

fn parse_floor(s: &str) -> Result<f64, String> {
    let (number, scale) = match s.strip_suffix('%') {
        Some(p) => (p, 100.0),
        None => (s, 1.0),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a number: {s:?}"))?;
    let value = value / scale;
    if !(0.0..1.0).contains(&value) {
        return Err(format!("floor {s:?} out of range (0%..100%)"));
    }
    Ok(value)
}

/// The results of one side of a comparison, several files pooled per data set.
fn read_side(files: &[PathBuf]) -> Result<Vec<gigagas_lab::BenchReport>> {
    // One side pools its files: the same file twice would count its repeats twice.
    crate::common::refuse_repeated("a side of compare", files)?;
    let sets = files
        .iter()
        .map(|f| read_reports(f))
        .collect::<Result<Vec<_>>>()?;
    // A busy machine during a run is said before its repeats are pooled away.
    for (file, reports) in files.iter().zip(&sets) {
        for report in reports {
            if let Some(warning) = gigagas_lab::report::busy_warning(report) {
                note!(
                    "warning: {}: {}: {warning}",
                    gigagas_guard::text::printable(&file.display().to_string()),
                    gigagas_guard::text::printable(&report.data)
                );
            }
        }
    }
    let pool = |reports: Vec<&gigagas_lab::BenchReport>| {
        gigagas_lab::compare::pool(&reports).map_err(anyhow::Error::msg)
    };
    if sets.iter().all(|s| s.len() == 1) {
        return Ok(vec![pool(sets.iter().map(|s| &s[0]).collect())?]);
    }
    sets[0]
        .iter()
        .map(|first| {
            let same: Vec<&gigagas_lab::BenchReport> = sets
                .iter()
                .map(|s| s.iter().find(|r| r.data == first.data))
                .collect::<Option<_>>()
                .with_context(|| format!("{} is not in every file of its side", first.data))?;
            pool(same)
        })
        .collect()
}

fn show(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    gigagas_guard::text::printable(&names.join(",")).into_owned()
}

pub fn exec(args: CompareArgs) -> Result<()> {
    crate::common::require_stdout_only("compare")?;
    let a = read_side(&args.a)?;
    let b = read_side(&args.b)?;
    // One report each: compared directly. Sweeps: data sets paired by name.
    let pairs: Vec<(&gigagas_lab::BenchReport, &gigagas_lab::BenchReport)> =
        if a.len() == 1 && b.len() == 1 {
            vec![(&a[0], &b[0])]
        } else {
            a.iter()
                .filter_map(|ra| b.iter().find(|rb| rb.data == ra.data).map(|rb| (ra, rb)))
                .collect()
        };
    if pairs.is_empty() {
        bail!("{} and {} share no data set", show(&args.a), show(&args.b));
    }
    let mut comparisons = Vec::new();
    for (ra, rb) in &pairs {
        let mut rows = gigagas_lab::compare::compare(ra, rb, args.floor).map_err(|e| {
            anyhow::anyhow!(
                "no verdict for B = {} vs A = {}: {e}",
                show(&args.b),
                show(&args.a)
            )
        })?;
        if pairs.len() > 1 {
            for row in &mut rows {
                row.config = format!("{}: {}", ra.data, row.config);
            }
        }
        comparisons.extend(rows);
    }
    if comparisons.is_empty() {
        bail!("the two results share no configuration");
    }
    // What qualifies the verdicts is said before them: different builds or machines, and
    // different load.
    for (ra, rb) in &pairs {
        let data = gigagas_guard::text::printable(&ra.data).into_owned();
        if let Some(warning) =
            gigagas_lab::provenance::mismatch(ra.provenance.as_ref(), rb.provenance.as_ref())
        {
            note!(
                "warning: {data}: {}",
                gigagas_guard::text::printable(&warning)
            );
        }
        if let Some(warning) = gigagas_lab::report::load_mismatch(ra, rb) {
            note!("warning: {data}: {warning}");
        }
    }
    if args.markdown {
        out_raw!(
            "{}",
            gigagas_lab::table::comparison_markdown(&comparisons, args.floor)
        );
    } else {
        out!(
            "B = {} vs A = {} ({} repeats vs {}); floor {:.1}%",
            show(&args.b),
            show(&args.a),
            pairs[0].1.settings.repeats,
            pairs[0].0.settings.repeats,
            args.floor * 100.0
        );
        out!("{}", gigagas_lab::table::comparison_table(&comparisons));
    }
    Ok(())
}

/// One side of a comparison: the files of one comma-separated argument.
#[derive(Clone, Debug)]
struct Side(Vec<PathBuf>);

impl std::ops::Deref for Side {
    type Target = [PathBuf];
    fn deref(&self) -> &[PathBuf] {
        &self.0
    }
}

fn parse_side(s: &str) -> Result<Side, String> {
    let files: Vec<PathBuf> = s.split(',').map(PathBuf::from).collect();
    if files.iter().any(|f| f.as_os_str().is_empty()) {
        return Err(format!(
            "{s:?}: an empty file name in the comma-separated list"
        ));
    }
    Ok(Side(files))
}
