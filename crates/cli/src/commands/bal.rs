//! `gigagas bal stats`: what a block access list weighs (`gigagas-balstats`).

use crate::common::{note, out_raw};
use crate::output::{Input, Output};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use gigagas_data::DataSource;
use std::path::PathBuf;

/// `gigagas bal ...`.
#[derive(Args)]
pub struct BalArgs {
    #[command(subcommand)]
    command: BalCommand,
}

#[derive(Subcommand)]
enum BalCommand {
    /// Size and composition of every block's BAL: RLP bytes (EIP-7928, alloy-eip7928),
    /// snappy (raw, as devp2p) and zstd bytes, bytes per Mgas, share of the block's own RLP,
    /// accounts, storage writes and reads, balance/nonce/code changes, largest accounts; the
    /// `writes` (no read keys) and `full` (keys + pre-block values) variants; per block, per
    /// fork and in total. Every block is executed and verified against its header first;
    /// blocks without a BAL are measured with the one sequential execution builds.
    Stats(StatsArgs),
}

#[derive(Args)]
struct StatsArgs {
    /// Data sets, comma-separated or repeated: directories in the mainnet layout, generated
    /// chains (`gigagas gen`) or .tar.zst files of one; each measured on its own. Default: the
    /// bundled sample.
    #[arg(long, value_name = "DIR", value_delimiter = ',')]
    data: Vec<PathBuf>,
    /// Write the measurements to FILE (`-`: stdout; the tables then go to stderr): schema
    /// gigagas.balstats/1, see docs/balstats-json.md. Checked before anything is loaded.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Print the tables as markdown.
    #[arg(long)]
    markdown: bool,
}

/// Runs `gigagas bal ...`.
pub fn exec(args: BalArgs) -> Result<()> {
    match args.command {
        BalCommand::Stats(args) => stats(args),
    }
}

fn stats(args: StatsArgs) -> Result<()> {
    crate::common::refuse_repeated("--data", &args.data)?;
    let json = args
        .json
        .as_ref()
        .map(|path| Output::new("--json", path, &Input::all("--data", &args.data)))
        .transpose()?;
    crate::common::require_stdout("bal stats", json.as_ref())?;
    let sources: Vec<Option<&PathBuf>> = if args.data.is_empty() {
        vec![None]
    } else {
        args.data.iter().map(Some).collect()
    };
    let mut datasets = Vec::with_capacity(sources.len());
    for path in sources {
        let source = match path {
            Some(path) => DataSource::open(path)?,
            None => DataSource::embedded()?,
        };
        let dataset = gigagas_data::load(&source).context("loading the data set")?;
        note!(
            "measuring the BALs of {} blocks ({:.1} Mgas) of {}",
            dataset.blocks.len(),
            dataset.total_gas() as f64 / 1e6,
            dataset.name
        );
        // Each block is prepared (senders, sequential run, BAL) and its variants encoded and
        // compressed: about 12 s for the bundled sample on 2 cores, so a bar shows it moving.
        let bar = crate::common::progress(dataset.blocks.len() as u64, "bal stats");
        let stats = gigagas_balstats::dataset_stats(&dataset, &|| bar.inc(1));
        bar.finish_and_clear();
        datasets.push(stats?);
    }
    let mut report = gigagas_balstats::report(datasets);
    report.provenance = serde_json::to_value(gigagas_lab::Provenance::capture()).ok();
    let text = if args.markdown {
        gigagas_balstats::markdown(&report)
    } else {
        terminal(&report)
    };
    match &json {
        Some(out) if out.is_stdout() => {
            crate::common::write_out(true, false, format_args!("{text}"))
        }
        _ => out_raw!("{text}"),
    }
    if let Some(out) = &json {
        let bytes = serde_json::to_vec_pretty(&report).context("encoding the report")?;
        out.write(&bytes)?;
    }
    Ok(())
}

/// The report's tables for a terminal.
fn terminal(report: &gigagas_balstats::BalStatsReport) -> String {
    use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
    let mut out = String::new();
    for t in gigagas_balstats::tables(report) {
        let mut table = Table::new();
        table.load_preset(UTF8_FULL_CONDENSED).set_header(t.header);
        for row in t.rows {
            table.add_row(row);
        }
        out.push_str(&format!("{}\n{table}\n\n", t.title));
    }
    out.push_str(gigagas_balstats::FOOTNOTE);
    out.push('\n');
    out
}
