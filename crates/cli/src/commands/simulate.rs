//! `gigagas simulate`: predict any thread count or mega-block size from a bench result's
//! 1-thread traces.

use crate::common::unique;
use crate::common::{note, out};
use crate::common::{read_reports, scheduler_order};
use crate::limits::{self, check_range};
use anyhow::Result;
use clap::Args;
use gigagas_exec::Scheduler;
use std::path::PathBuf;

#[derive(Args)]
pub struct SimulateArgs {
    /// A result file written by `gigagas bench --json`.
    file: PathBuf,
    /// Thread counts to predict, comma-separated, each 1 to 1024.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    threads: Vec<usize>,
    /// Schedulers to replay, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ordered,gas-used,gas-limit"
    )]
    scheduler: Vec<Scheduler>,
    /// Mega-block sizes to replay (K consecutive blocks of the result scheduled as one unit),
    /// comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    mega: Vec<usize>,
}

pub fn exec(args: SimulateArgs) -> Result<()> {
    for &t in &args.threads {
        limits::threads("--threads", t)?;
    }
    for &k in &args.mega {
        check_range("--mega", k, 1, limits::MAX_MEGA)?;
    }
    let threads = unique(&args.threads);
    let megas = unique(&args.mega);
    let names: Vec<String> = unique(&args.scheduler)
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    let reports = read_reports(&args.file)?;
    for report in &reports {
        let predictions =
            gigagas_lab::simulate::predict(report, &names, &threads, &megas, &scheduler_order);
        out!(
            "{}: {}: {} blocks, {} txs; 1-thread traces calibrated on the measured 1-thread runs",
            gigagas_guard::text::printable(&args.file.display().to_string()),
            gigagas_guard::text::printable(&report.data),
            report.blocks.len(),
            report.phases.txs
        );
        out!(
            "{}",
            gigagas_lab::table::simulation_table(report, &predictions)
        );
        // The traces were measured under these conditions: the prediction inherits them.
        for warning in gigagas_lab::report::noise_warnings(report) {
            // The warning quotes the result's own strings (mode, scheduler): escaped.
            note!(
                "warning: {}: {}",
                gigagas_guard::text::printable(&report.data),
                gigagas_guard::text::printable(&warning)
            );
        }
    }
    Ok(())
}
