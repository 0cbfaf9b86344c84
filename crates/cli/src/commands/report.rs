//! `gigagas report`: one self-contained HTML file with SVG plots of a result.

use crate::output::{Input, Output};
use anyhow::{Context, Result};
use clap::Args;
use gigagas_exec::Scheduler;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// A result file written by `gigagas bench --json` (a run or a sweep), `peers --json` or
    /// `bal stats --json`.
    file: PathBuf,
    /// Output HTML file (`-`: stdout; default: FILE with the extension `.html`, beside it).
    /// Checked before anything is read; never the input FILE, never replaces a device, FIFO or
    /// directory; a symlink is written through.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn exec(args: ReportArgs) -> Result<()> {
    let out_path = args
        .out
        .clone()
        .unwrap_or_else(|| args.file.with_extension("html"));
    let out = Output::new(
        "--out",
        &out_path,
        &Input::all("FILE", std::slice::from_ref(&args.file)),
    )?;
    let bytes = gigagas_lab::report::read_result_bytes(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    if let Some(page) = crate::pages::bal_stats_page(&bytes) {
        let page =
            page.with_context(|| format!("{}: unreadable bal stats result", args.file.display()))?;
        return out.write(page.as_bytes());
    }
    if let Some(page) = crate::pages::peers_page(&bytes) {
        let page =
            page.with_context(|| format!("{}: unreadable peers result", args.file.display()))?;
        return out.write(page.as_bytes());
    }
    let reports = gigagas_lab::read_reports(&bytes)
        .with_context(|| format!("{}: unreadable result", args.file.display()))?;
    let names: Vec<String> = Scheduler::ALL.iter().map(|s| s.name().to_owned()).collect();
    let threads = [1, 2, 4, 8, 16, 32, 64];
    let with_predictions: Vec<_> = reports
        .into_iter()
        .map(|report| {
            let predictions = gigagas_lab::simulate::predict(
                &report,
                &names,
                &threads,
                &[1],
                &crate::common::scheduler_order,
            );
            (report, predictions)
        })
        .collect();
    let html = match with_predictions.as_slice() {
        [(report, predictions)] => gigagas_lab::html::render(report, predictions),
        several => gigagas_lab::html::render_sweep(several),
    };
    out.write(html.as_bytes())
}
