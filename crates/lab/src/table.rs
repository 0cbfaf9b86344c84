//! Terminal tables.

use crate::BenchReport;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};

/// A table cell whose text is shown with control characters escaped: a cell's text may come
/// from a result file (mode, scheduler, data set, fork names), and none of it reaches the
/// terminal as an escape sequence or a line break. Every cell of these tables is made here.
fn cell(content: impl std::fmt::Display) -> Cell {
    Cell::new(gigagas_guard::text::printable(&content.to_string()))
}

fn ms(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

/// The main results table: one row per configuration.
pub fn runs_table(report: &BenchReport) -> Table {
    let mut table = Table::new();
    let floor = |threads: usize| {
        report
            .contention_floor
            .iter()
            .find(|f| f.threads == threads)
    };
    let mut header = vec![
        "mode",
        "threads",
        "scheduler",
        "mega",
        "gas (M)",
        "time ms (median)",
        "p10–p90 ms",
        "Mgas/s",
        "speedup vs seq",
        "longest-tx share",
        "CP bound",
        "% of bound",
        "tx work vs 1t",
    ];
    if !report.contention_floor.is_empty() {
        header.push("floor");
    }
    let counted = report.runs.iter().any(|r| r.allocs_per_tx.is_some());
    if counted {
        header.push("allocs/tx");
    }
    table.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    let one_thread_work = report
        .runs
        .iter()
        .find(|r| {
            r.mode == "parallel" && r.threads == 1 && r.recover_senders == "pre" && r.mega == 1
        })
        .map(|r| r.sum_tx_ns.max(1));
    for run in &report.runs {
        let row = vec![
            cell(if run.recover_senders == "inline" {
                format!("{} +recovery", run.mode)
            } else {
                run.mode.clone()
            }),
            cell(run.threads).set_alignment(CellAlignment::Right),
            cell(run.scheduler.as_deref().unwrap_or("-")),
            cell(run.mega).set_alignment(CellAlignment::Right),
            cell(format!("{:.1}", run.total_gas as f64 / 1e6)).set_alignment(CellAlignment::Right),
            cell(ms(run.median_ns)).set_alignment(CellAlignment::Right),
            cell(
                match (
                    crate::stats::percentile(&run.repeat_ns, 10.0),
                    crate::stats::percentile(&run.repeat_ns, 90.0),
                ) {
                    (Some(lo), Some(hi)) if run.repeat_ns.len() > 1 => {
                        format!("{}–{}", ms(lo), ms(hi))
                    }
                    _ => "-".to_owned(),
                },
            )
            .set_alignment(CellAlignment::Right),
            cell(format!("{:.0}", run.mgas_per_s)).set_alignment(CellAlignment::Right),
            cell(format!("{:.2}x", run.speedup_vs_sequential)).set_alignment(CellAlignment::Right),
            cell(format!("{:.0}%", run.longest_tx_share * 100.0))
                .set_alignment(CellAlignment::Right),
            cell(format!("{:.2}x", run.critical_path_bound)).set_alignment(CellAlignment::Right),
            cell(
                run.bound_fraction
                    .map_or_else(|| "-".to_owned(), |f| format!("{:.0}%", f * 100.0)),
            )
            .set_alignment(CellAlignment::Right),
            cell(match (run.mode.as_str(), one_thread_work) {
                ("parallel", Some(one)) => format!("{:.2}x", run.sum_tx_ns as f64 / one as f64),
                _ => "-".to_owned(),
            })
            .set_alignment(CellAlignment::Right),
        ];
        let mut row = row;
        if !report.contention_floor.is_empty() {
            row.push(
                cell(match (run.mode.as_str(), floor(run.threads)) {
                    ("parallel", Some(f)) => format!("{:.2}x", f.tx_work_ratio),
                    _ => "-".to_owned(),
                })
                .set_alignment(CellAlignment::Right),
            );
        }
        if counted {
            row.push(
                cell(
                    run.allocs_per_tx
                        .map_or_else(|| "-".to_owned(), |a| format!("{a:.1}")),
                )
                .set_alignment(CellAlignment::Right),
            );
        }
        table.add_row(row);
    }
    table
}

/// Phases outside the throughput figure.
pub fn phases_table(report: &BenchReport) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "phase (whole data set)",
        "time ms",
        "note",
    ]);
    let p = &report.phases;
    table.add_row(vec![
        cell("sender recovery"),
        cell(ms(p.recover_ns)).set_alignment(CellAlignment::Right),
        cell(format!(
            "{:.1} µs/tx wall on {} cores, {} txs",
            p.recover_ns_per_tx / 1e3,
            report.machine.cores,
            p.txs
        )),
    ]);
    table.add_row(vec![
        cell("BAL validate + index"),
        cell(ms(p.bal_prepare_ns)).set_alignment(CellAlignment::Right),
        cell("once per block, before parallel execution"),
    ]);
    let sequential = |mode: &str| {
        report
            .runs
            .iter()
            .find(|r| r.mode == mode && r.recover_senders == "pre")
    };
    if let (Some(bal), Some(plain)) = (sequential("sequential"), sequential("sequential-nobal")) {
        table.add_row(vec![
            Cell::new("BAL builder (sequential)"),
            Cell::new(format!(
                "{:.3}",
                (bal.median_ns as f64 - plain.median_ns as f64) / 1e6
            ))
            .set_alignment(CellAlignment::Right),
            Cell::new(format!(
                "sequential − sequential-nobal medians: {:+.1}% of the plain run",
                (bal.median_ns as f64 / plain.median_ns.max(1) as f64 - 1.0) * 100.0
            )),
        ]);
    }
    if let Some(best) = report
        .runs
        .iter()
        .filter(|r| r.mode == "parallel" && r.recover_senders == "pre" && r.mega == 1)
        .max_by(|a, b| a.mgas_per_s.total_cmp(&b.mgas_per_s))
    {
        table.add_row(vec![
            cell("canonical commit + BAL rebuild"),
            cell(ms(best.commit_ns)).set_alignment(CellAlignment::Right),
            cell(format!(
                "after the fastest parallel run ({} threads, {})",
                best.threads,
                best.scheduler.as_deref().unwrap_or("-")
            )),
        ]);
        table.add_row(vec![
            cell("verification"),
            cell(ms(best.verify_ns)).set_alignment(CellAlignment::Right),
            cell("header + per-tx comparison with sequential"),
        ]);
    }
    table
}

/// Simulator predictions, with the measurement and the prediction error where measured.
pub fn simulation_table(
    report: &BenchReport,
    predictions: &[crate::simulate::Prediction],
) -> Table {
    let traces: Vec<crate::BlockTrace> = report
        .blocks
        .iter()
        .map(|b| crate::BlockTrace {
            tx_nanos: b.tx.iter().map(|t| t.ns).collect(),
        })
        .collect();
    let numbers: Vec<u64> = report.blocks.iter().map(|b| b.number).collect();
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "scheduler",
        "threads",
        "mega",
        "predicted ms",
        "predicted speedup",
        "CP bound",
        "measured ms",
        "error",
    ]);
    for p in predictions {
        table.add_row(vec![
            cell(&p.scheduler),
            cell(p.threads).set_alignment(CellAlignment::Right),
            cell(p.mega).set_alignment(CellAlignment::Right),
            cell(format!("{:.1}", p.predicted_ns / 1e6)).set_alignment(CellAlignment::Right),
            cell(format!("{:.2}x", p.predicted_speedup)).set_alignment(CellAlignment::Right),
            cell(format!(
                "{:.2}x",
                crate::critical_path_bound(
                    &crate::unit_traces(&traces, &crate::mega_units(&numbers, p.mega)),
                    p.threads
                )
            ))
            .set_alignment(CellAlignment::Right),
            cell(p.measured_ns.map_or_else(|| "-".into(), ms)).set_alignment(CellAlignment::Right),
            cell(
                p.error()
                    .map_or_else(|| "-".into(), |e| format!("{:+.1}%", e * 100.0)),
            )
            .set_alignment(CellAlignment::Right),
        ]);
    }
    table
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// A/B comparison, terminal table.
pub fn comparison_table(rows: &[crate::compare::Comparison]) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "configuration",
        "A Mgas/s",
        "B Mgas/s",
        "change",
        "95% CI",
        "verdict",
    ]);
    for r in rows {
        table.add_row(vec![
            cell(&r.config),
            cell(format!("{:.0}", r.mgas_a)).set_alignment(CellAlignment::Right),
            cell(format!("{:.0}", r.mgas_b)).set_alignment(CellAlignment::Right),
            cell(pct(r.change)).set_alignment(CellAlignment::Right),
            cell(format!("[{}, {}]", pct(r.ci.0), pct(r.ci.1))),
            cell(r.verdict),
        ]);
    }
    table
}

/// A/B comparison as a markdown table (for pull-request comments).
pub fn comparison_markdown(rows: &[crate::compare::Comparison], floor: f64) -> String {
    let mut out = format!(
        "| configuration | A Mgas/s | B Mgas/s | change | 95% CI | verdict (floor {:.1}%) |\n|---|---:|---:|---:|---|---|\n",
        floor * 100.0
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {:.0} | {:.0} | {} | [{}, {}] | {} |\n",
            gigagas_guard::text::markdown_cell(&r.config),
            r.mgas_a,
            r.mgas_b,
            pct(r.change),
            pct(r.ci.0),
            pct(r.ci.1),
            gigagas_guard::text::markdown_cell(&r.verdict.to_string())
        ));
    }
    out
}

/// The cost model and, per fork, the mean nanoseconds per gas of the sequential run. Two
/// different "ns per gas", labelled apart (docs/glossary.md): the model's marginal cost of one
/// more gas spent ("model: ns per gas spent") and a fork's blocks' sequential time ÷ their gas
/// spent ("mean ns per gas spent, FORK blocks"), which also carries the per-transaction and
/// per-block costs. Gas spent = before refunds.
pub fn cost_model_table(report: &BenchReport) -> Option<Table> {
    let m = report.cost_model.as_ref()?;
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "cost model (sequential block time)",
        "value",
        "95% CI (bootstrap over blocks)",
    ]);
    let rows = [
        ("model: ns per gas spent", m.ns_per_gas, m.ci95[0], 1.0),
        ("µs per changed slot", m.ns_per_slot, m.ci95[1], 1e3),
        ("µs per transaction", m.ns_per_tx, m.ci95[2], 1e3),
        ("µs per block", m.ns_per_block, m.ci95[3], 1e3),
    ];
    for (name, value, (lo, hi), unit) in rows {
        table.add_row(vec![
            cell(name),
            cell(format!("{:.3}", value / unit)).set_alignment(CellAlignment::Right),
            cell(format!("[{:.3}, {:.3}]", lo / unit, hi / unit)),
        ]);
    }
    table.add_row(vec![
        cell("R²"),
        cell(format!("{:.3}", m.r2)).set_alignment(CellAlignment::Right),
        cell(if m.is_poor() {
            format!("POOR FIT (R² < 0.5) over {} blocks", m.blocks)
        } else {
            format!("{} blocks", m.blocks)
        }),
    ]);
    let mut forks: Vec<(String, f64, f64)> = Vec::new();
    for b in &report.blocks {
        let gas: u64 = b.tx.iter().map(|t| t.gas_spent).sum();
        match forks.iter_mut().find(|(f, _, _)| *f == b.fork) {
            Some(entry) => {
                entry.1 += b.phases.sequential_ns as f64;
                entry.2 += gas as f64;
            }
            None => forks.push((b.fork.clone(), b.phases.sequential_ns as f64, gas as f64)),
        }
    }
    for (fork, ns, gas) in forks.into_iter().filter(|(_, _, gas)| *gas > 0.0) {
        table.add_row(vec![
            cell(format!("mean ns per gas spent, {fork} blocks")),
            cell(format!("{:.3}", ns / gas)).set_alignment(CellAlignment::Right),
            cell(""),
        ]);
    }
    Some(table)
}

/// Column names of [`sweep_rows`].
pub const SWEEP_HEADER: [&str; 11] = [
    "data",
    "blocks",
    "txs",
    "gas (M)",
    "seq Mgas/s",
    "seq ns/gas",
    "fastest parallel",
    "Mgas/s",
    "speedup vs seq",
    "% of CP bound",
    "longest-tx share",
];

/// One row per data set of a sweep: its size, sequential throughput and cost per gas, and its
/// fastest verified parallel configuration (senders recovered in advance).
pub fn sweep_rows(reports: &[BenchReport]) -> Vec<[String; 11]> {
    let dash = || "-".to_owned();
    reports
        .iter()
        .map(|report| {
            let (seq, best) = (report.sequential(), report.fastest_parallel());
            let gas: u64 = report.blocks.iter().map(|b| b.gas_used).sum();
            let config = |r: &crate::RunReport| {
                let mega = if r.mega > 1 {
                    format!(" mega {}", r.mega)
                } else {
                    String::new()
                };
                format!(
                    "{}t {}{mega}",
                    r.threads,
                    r.scheduler.as_deref().unwrap_or("-")
                )
            };
            [
                report.data.clone(),
                report.blocks.len().to_string(),
                report.phases.txs.to_string(),
                format!("{:.1}", gas as f64 / 1e6),
                seq.map_or_else(dash, |r| format!("{:.0}", r.mgas_per_s)),
                seq.map_or_else(dash, |r| format!("{:.2}", 1e3 / r.mgas_per_s)),
                best.map_or_else(dash, config),
                best.map_or_else(dash, |r| format!("{:.0}", r.mgas_per_s)),
                best.map_or_else(dash, |r| format!("{:.2}x", r.speedup_vs_sequential)),
                best.and_then(|r| r.bound_fraction)
                    .map_or_else(dash, |f| format!("{:.0}%", f * 100.0)),
                best.map_or_else(dash, |r| format!("{:.0}%", r.longest_tx_share * 100.0)),
            ]
        })
        .collect()
}

/// [`sweep_rows`] as a terminal table.
pub fn sweep_table(reports: &[BenchReport]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(SWEEP_HEADER.to_vec());
    for row in sweep_rows(reports) {
        table.add_row(row.into_iter().enumerate().map(|(k, text)| {
            let cell = cell(text);
            if k == 0 || k == 6 {
                cell
            } else {
                cell.set_alignment(CellAlignment::Right)
            }
        }));
    }
    table
}

/// One thread count of the contention floor beside the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloorRow {
    /// Thread count.
    pub threads: usize,
    /// The floor: per-transaction slowdown of independent streams (the machine's share).
    pub floor: crate::ContentionFloor,
    /// The parallel path's "tx work vs 1t" at this thread count (per block, senders
    /// recovered in advance; the lowest over schedulers), where measured.
    pub engine: Option<f64>,
    /// The same from per-transaction medians (`median_tx_ns`; the lowest over schedulers),
    /// where measured.
    pub engine_median: Option<f64>,
}

impl FloorRow {
    /// The engine's own share: engine ÷ floor − 1 (0.05 = 5% slower than the machine alone
    /// explains).
    pub fn engine_share(&self) -> Option<f64> {
        self.engine.map(|e| e / self.floor.tx_work_ratio - 1.0)
    }

    /// The engine's own share from per-transaction medians (engine ÷ floor − 1), where both
    /// were measured.
    pub fn engine_share_median(&self) -> Option<f64> {
        Some(self.engine_median? / self.floor.median_tx_ratio? - 1.0)
    }

    /// The row as shown (table and HTML report alike): threads, floor, floor p10–p90,
    /// parallel path, engine's share, per-tx medians (floor / parallel path), engine's share
    /// from the medians; `-` where not measured.
    pub fn cells(&self) -> [String; 7] {
        let ratio = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.3}x"));
        let share =
            |s: Option<f64>| s.map_or_else(|| "-".to_owned(), |s| format!("{:+.1}%", s * 100.0));
        let f = &self.floor;
        [
            self.threads.to_string(),
            format!("{:.3}x", f.tx_work_ratio),
            format!("{:.3}–{:.3}", f.p10, f.p90),
            ratio(self.engine),
            share(self.engine_share()),
            format!(
                "{} / {}",
                ratio(f.median_tx_ratio),
                ratio(self.engine_median)
            ),
            share(self.engine_share_median()),
        ]
    }
}

/// The contention floor rows of `report` (empty when it was not measured).
pub fn floor_rows(report: &BenchReport) -> Vec<FloorRow> {
    let per_block =
        |r: &&crate::RunReport| r.mode == "parallel" && r.recover_senders == "pre" && r.mega == 1;
    let one = report
        .runs
        .iter()
        .filter(per_block)
        .find(|r| r.threads == 1);
    // The lowest ratio over schedulers at `threads` of `work` to the 1-thread run's.
    let lowest = |threads: usize, work: fn(&crate::RunReport) -> u64| {
        let one = work(one?);
        (one > 0).then_some(())?;
        report
            .runs
            .iter()
            .filter(per_block)
            .filter(|r| r.threads == threads && work(r) > 0)
            .map(|r| work(r) as f64 / one as f64)
            .min_by(f64::total_cmp)
    };
    report
        .contention_floor
        .iter()
        .map(|f| FloorRow {
            threads: f.threads,
            floor: *f,
            engine: lowest(f.threads, |r| r.sum_tx_ns),
            engine_median: lowest(f.threads, |r| r.median_tx_ns),
        })
        .collect()
}

/// The contention floor beside the engine (`bench --contention-floor`), one row per thread
/// count ([`floor_rows`]). `None` when the floor was not measured.
pub fn contention_floor_table(report: &BenchReport) -> Option<Table> {
    let rows = floor_rows(report);
    if rows.is_empty() {
        return None;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "threads",
        "floor: tx work vs 1t (machine)",
        "floor p10–p90",
        "parallel path: tx work vs 1t",
        "engine's own share",
        "per-tx medians: floor / parallel path",
        "engine's own share (medians)",
    ]);
    for row in rows {
        table.add_row(
            row.cells()
                .map(|c| cell(c).set_alignment(CellAlignment::Right)),
        );
    }
    Some(table)
}

/// The whole block pipeline (`bench --root/--pipeline`), one row per configuration: the
/// end-to-end figure beside the execute stage's own (gas ÷ its busy time, which with the
/// pipeline on includes waiting for a busy thread: not the pure-execution Mgas/s of the runs
/// table), each stage's share of the busy time, the pipeline's bound, and what overlap
/// gained. `None` when the pipeline was not measured.
pub fn pipeline_table(report: &BenchReport) -> Option<Table> {
    if report.pipeline.is_empty() {
        return None;
    }
    let mut table = Table::new();
    let stages = ["recover", "prefetch", "execute", "verify", "write", "root"];
    let disk = report.pipeline.iter().any(|p| p.state == "disk");
    let mut header = vec![
        "threads",
        "BAL",
        "root",
        "pipeline",
        "wall ms (median)",
        "end-to-end Mgas/s",
        "execute-stage Mgas/s",
        "vs pure time",
    ];
    header.extend(stages);
    header.extend(["% of pipeline bound", "on vs off"]);
    if disk {
        header.extend(["reads on demand", "MiB read"]);
    }
    table.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    let right = |text: String| cell(text).set_alignment(CellAlignment::Right);
    for p in &report.pipeline {
        let busy: u64 = p.phases_ns.values().sum();
        let mut row = vec![
            right(p.threads.to_string()),
            cell(&p.bal),
            cell(format!("{}{}", p.root, p.where_label())),
            cell(format!("{}{}", p.pipeline_label(), p.recovery_label())),
            right(ms(p.median_ns)),
            right(format!("{:.0}", p.e2e_mgas_per_s)),
            right(format!("{:.0}", p.mgas_per_s)),
            right(
                report
                    .pipeline_vs_pure(p)
                    .map_or_else(|| "-".into(), |r| format!("{r:.2}x")),
            ),
        ];
        for stage in stages {
            let ns = p.phases_ns.get(stage).copied().unwrap_or(0);
            row.push(right(format!(
                "{:.0}%",
                ns as f64 / busy.max(1) as f64 * 100.0
            )));
        }
        row.push(right(format!("{:.0}%", p.percent_of_bound)));
        row.push(right(
            report
                .pipeline_gain(p)
                .map_or_else(|| "-".into(), |g| format!("{g:.2}x")),
        ));
        if disk {
            row.push(right(p.demand_reads.to_string()));
            row.push(right(p.read_bytes.map_or_else(
                || "-".into(),
                |b| format!("{:.1}", b as f64 / (1u64 << 20) as f64),
            )));
        }
        table.add_row(row);
    }
    Some(table)
}
