//! `gigagas report`: one self-contained HTML file with SVG plots (plotters) of a bench result.

use crate::{critical_path_bound, simulate::Prediction, BenchReport, BlockTrace};
use plotters::prelude::*;
use std::fmt::Write as _;

const W: u32 = 760;
const H: u32 = 420;
const PALETTE: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

type PlotResult = Result<(), Box<dyn std::error::Error>>;
type Area<'s> = DrawingArea<SVGBackend<'s>, plotters::coord::Shift>;

/// The common frame of every plot: title, margin and axis label areas.
fn frame<'a, 'b, 's>(root: &'a Area<'s>, title: &str) -> ChartBuilder<'a, 'b, SVGBackend<'s>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60);
    builder
}

/// Draws the series legend in the common style.
fn legend<'a, 's: 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'s>, CT>,
    position: SeriesLabelPosition,
) -> PlotResult {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(position)
        .draw()?;
    Ok(())
}

fn svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> PlotResult,
) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, H)).into_drawing_area();
        let result = root
            .fill(&WHITE)
            .map_err(Into::into)
            .and_then(|()| draw(&root));
        if let Err(e) = result.and_then(|()| root.present().map_err(Into::into)) {
            return format!("<p>plot failed: {}</p>", escape(&e.to_string()));
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn traces(report: &BenchReport) -> Vec<BlockTrace> {
    report
        .blocks
        .iter()
        .map(|b| BlockTrace {
            tx_nanos: b.tx.iter().map(|t| t.ns).collect(),
        })
        .collect()
}

fn schedulers(report: &BenchReport) -> Vec<String> {
    let mut names: Vec<String> = report
        .runs
        .iter()
        .filter_map(|r| r.scheduler.clone())
        .collect();
    names.dedup();
    names.sort();
    names.dedup();
    names
}

/// Throughput against threads: measured per scheduler, sequential, ideal scaling and the
/// critical-path bound.
fn throughput_vs_threads(report: &BenchReport) -> String {
    let max_t = report
        .runs
        .iter()
        .map(|r| r.threads)
        .max()
        .unwrap_or(1)
        .max(2);
    let seq = report
        .runs
        .iter()
        .find(|r| r.mode == "sequential")
        .map(|r| r.mgas_per_s);
    let one = report
        .runs
        .iter()
        .filter(|r| r.mode == "parallel" && r.threads == 1 && r.mega == 1)
        .map(|r| r.mgas_per_s)
        .fold(0.0, f64::max);
    let tr = traces(report);
    let top = report
        .runs
        .iter()
        .map(|r| r.mgas_per_s)
        .fold(one * max_t as f64, f64::max)
        * 1.1;
    svg(|root| {
        let mut chart = frame(root, "Throughput vs threads")
            .build_cartesian_2d(1f64..max_t as f64, 0f64..top.max(1.0))?;
        chart
            .configure_mesh()
            .x_desc("worker threads")
            .y_desc("Mgas/s")
            .draw()?;
        let ts: Vec<f64> = (1..=max_t).map(|t| t as f64).collect();
        chart
            .draw_series(LineSeries::new(
                ts.iter().map(|&t| (t, one * t)),
                BLACK.mix(0.3),
            ))?
            .label("ideal (1-thread × T)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.3)));
        chart
            .draw_series(LineSeries::new(
                ts.iter()
                    .map(|&t| (t, one * critical_path_bound(&tr, t as usize))),
                RGBColor(148, 103, 189).stroke_width(2),
            ))?
            .label("critical-path bound")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RGBColor(148, 103, 189)));
        if let Some(seq) = seq {
            chart
                .draw_series(LineSeries::new(
                    ts.iter().map(|&t| (t, seq)),
                    BLACK.stroke_width(1),
                ))?
                .label("sequential")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
        }
        for (k, name) in schedulers(report).iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let mut pts: Vec<(f64, f64)> = report
                .runs
                .iter()
                .filter(|r| {
                    r.scheduler.as_deref() == Some(name)
                        && r.recover_senders == "pre"
                        && r.mega == 1
                })
                .map(|r| (r.threads as f64, r.mgas_per_s))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

/// A line of the mega-block plot: scheduler and thread count.
type Series = (String, usize);

/// Throughput against mega-block size, one line per (scheduler, threads) measured at more
/// than one size; `None` when the report has no mega-block runs.
fn throughput_vs_mega(report: &BenchReport) -> Option<String> {
    let parallel = |r: &&crate::RunReport| r.mode == "parallel" && r.recover_senders == "pre";
    let sizes: Vec<usize> = report
        .runs
        .iter()
        .filter(parallel)
        .map(|r| r.mega)
        .collect();
    let max_k = sizes.iter().copied().max()?;
    if max_k <= 1 {
        return None;
    }
    let seq = report
        .runs
        .iter()
        .find(|r| r.mode == "sequential" && r.recover_senders == "pre")
        .map(|r| r.mgas_per_s);
    // (scheduler, threads) → points (K, Mgas/s).
    let mut lines: Vec<(Series, Vec<(f64, f64)>)> = Vec::new();
    for r in report.runs.iter().filter(parallel) {
        let key = (r.scheduler.clone().unwrap_or_default(), r.threads);
        let point = (r.mega as f64, r.mgas_per_s);
        match lines.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pts)) => pts.push(point),
            None => lines.push((key, vec![point])),
        }
    }
    lines.retain(|(_, pts)| pts.len() > 1);
    lines
        .iter_mut()
        .for_each(|(_, p)| p.sort_by(|a, b| a.0.total_cmp(&b.0)));
    let top = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .chain(seq)
        .fold(1.0, f64::max)
        * 1.15;
    Some(svg(|root| {
        let mut chart = frame(root, "Throughput vs mega-block size")
            .build_cartesian_2d((1f64..max_k as f64).log_scale(), 0f64..top)?;
        chart
            .configure_mesh()
            .x_desc("blocks per mega-block (log)")
            .y_desc("Mgas/s")
            .draw()?;
        if let Some(seq) = seq {
            chart
                .draw_series(LineSeries::new(
                    [(1.0, seq), (max_k as f64, seq)],
                    BLACK.stroke_width(1),
                ))?
                .label("sequential")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
        }
        for (k, ((name, threads), pts)) in lines.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(format!("{threads}t {name}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }))
}

/// Per-block throughput against block gas, sequential and fastest parallel configuration.
fn throughput_vs_gas(report: &BenchReport) -> String {
    let best = report
        .runs
        .iter()
        .filter(|r| r.mode == "parallel" && r.recover_senders == "pre" && r.mega == 1)
        .max_by(|a, b| a.mgas_per_s.total_cmp(&b.mgas_per_s));
    let seq = report
        .runs
        .iter()
        .find(|r| r.mode == "sequential" && r.recover_senders == "pre");
    let points = |run: &crate::RunReport| -> Vec<(f64, f64)> {
        report
            .blocks
            .iter()
            .zip(&run.block_ns)
            .filter(|(b, ns)| b.gas_used > 0 && **ns > 0)
            .map(|(b, ns)| {
                (
                    b.gas_used as f64 / 1e6,
                    b.gas_used as f64 / *ns as f64 * 1e3,
                )
            })
            .collect()
    };
    let all: Vec<(f64, f64)> = seq.into_iter().chain(best).flat_map(points).collect();
    let max_x = all.iter().map(|p| p.0).fold(1.0, f64::max) * 1.05;
    let max_y = all.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    svg(|root| {
        let mut chart = frame(root, "Per-block throughput vs block gas")
            .build_cartesian_2d(0f64..max_x, 0f64..max_y)?;
        chart
            .configure_mesh()
            .x_desc("block gas (M)")
            .y_desc("Mgas/s")
            .draw()?;
        for (k, run) in seq.into_iter().chain(best).enumerate() {
            let color = PALETTE[k];
            let label = match &run.scheduler {
                Some(s) => format!("parallel {}t {s}", run.threads),
                None => "sequential".into(),
            };
            chart
                .draw_series(
                    points(run)
                        .into_iter()
                        .map(|p| Circle::new(p, 3, color.filled())),
                )?
                .label(label)
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        Ok(())
    })
}

/// Stacked bars of the phases: sender recovery, execution, commit, verification.
fn phases(report: &BenchReport) -> String {
    let mut rows: Vec<(String, [f64; 4])> = Vec::new();
    let recover = report.phases.recover_ns as f64 / 1e6;
    for run in &report.runs {
        let mut label = match &run.scheduler {
            Some(s) => format!("{}t {s}", run.threads),
            None => "seq".into(),
        };
        if run.recover_senders == "inline" {
            label.push_str(" +rec");
        }
        // Inline runs already contain recovery in their execution time.
        let recover = if run.recover_senders == "inline" {
            0.0
        } else {
            recover
        };
        rows.push((
            label,
            [
                recover,
                run.median_ns as f64 / 1e6,
                run.commit_ns as f64 / 1e6,
                run.verify_ns as f64 / 1e6,
            ],
        ));
    }
    let max = rows
        .iter()
        .map(|(_, v)| v.iter().sum::<f64>())
        .fold(1.0, f64::max)
        * 1.1;
    let names = [
        "sender recovery",
        "execution",
        "commit + BAL rebuild",
        "verification",
    ];
    svg(|root| {
        let mut chart = frame(root, "Phases per configuration (whole data set)")
            .x_label_area_size(50)
            .build_cartesian_2d(0f64..rows.len() as f64, 0f64..max)?;
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(rows.len() * 2 + 1)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if (x - x.floor() - 0.5).abs() < 0.26 && i < labels.len() {
                    labels[i].clone()
                } else {
                    String::new()
                }
            })
            .y_desc("ms")
            .draw()?;
        for (k, name) in names.iter().enumerate() {
            let color = PALETTE[k];
            chart
                .draw_series(rows.iter().enumerate().map(|(i, (_, v))| {
                    let base: f64 = v[..k].iter().sum();
                    Rectangle::new(
                        [(i as f64 + 0.15, base), (i as f64 + 0.85, base + v[k])],
                        color.filled(),
                    )
                }))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled())
                });
        }
        legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        Ok(())
    })
}

/// The whole block pipeline: each configuration's median repeat as one bar, stacked by the
/// busy time of each stage (summed over blocks), the wall time marked beside it.
fn pipeline_phases(report: &BenchReport) -> Option<String> {
    if report.pipeline.is_empty() {
        return None;
    }
    let rows: Vec<(String, Vec<f64>, f64)> = report
        .pipeline
        .iter()
        .map(|p| {
            (
                p.label(),
                PIPELINE_STAGES
                    .iter()
                    .map(|s| p.phases_ns.get(*s).copied().unwrap_or(0) as f64 / 1e6)
                    .collect(),
                p.median_ns as f64 / 1e6,
            )
        })
        .collect();
    let max = rows
        .iter()
        .map(|(_, v, wall)| v.iter().sum::<f64>().max(*wall))
        .fold(1.0, f64::max)
        * 1.1;
    Some(svg(|root| {
        let mut chart = frame(
            root,
            "Pipeline: stage busy time per configuration (median repeat)",
        )
        .y_label_area_size(210)
        .build_cartesian_2d(0f64..max, 0f64..rows.len() as f64)?;
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len() * 2 + 1)
            .y_label_formatter(&|y| {
                let i = y.floor() as usize;
                if (y - y.floor() - 0.5).abs() < 0.26 && i < labels.len() {
                    labels[i].clone()
                } else {
                    String::new()
                }
            })
            .x_desc("ms (bars: busy time of each stage; black mark: wall time)")
            .draw()?;
        for (k, name) in PIPELINE_STAGES.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(rows.iter().enumerate().map(|(i, (_, v, _))| {
                    let base: f64 = v[..k].iter().sum();
                    Rectangle::new(
                        [(base, i as f64 + 0.2), (base + v[k], i as f64 + 0.8)],
                        color.filled(),
                    )
                }))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled())
                });
        }
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, _, wall))| {
                Rectangle::new(
                    [
                        (*wall, i as f64 + 0.1),
                        (*wall + max / 300.0, i as f64 + 0.9),
                    ],
                    BLACK.filled(),
                )
            }))?
            .label("wall")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 3, y + 5)], BLACK.filled()));
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }))
}

/// Stages in pipeline order (the keys of `phases_ns`).
const PIPELINE_STAGES: [&str; 6] = ["recover", "prefetch", "execute", "verify", "write", "root"];

/// Blocks a timeline shows (the first ones of the run).
const TIMELINE_BLOCKS: usize = 6;

/// One configuration's timeline: a lane per stage, each block's span in it on the time axis
/// (first [`TIMELINE_BLOCKS`] blocks of the median repeat), one colour per block.
fn pipeline_timeline(p: &crate::PipelineReport) -> String {
    let blocks = &p.timeline[..p.timeline.len().min(TIMELINE_BLOCKS)];
    let end = blocks
        .iter()
        .flat_map(|b| b.stages.values().map(|s| s[1]))
        .max()
        .unwrap_or(0) as f64
        / 1e6;
    svg(|root| {
        let mut chart = frame(
            root,
            &format!("Timeline, {} (first {} blocks)", p.label(), blocks.len()),
        )
        .y_label_area_size(80)
        .build_cartesian_2d(
            0f64..(end * 1.05).max(1e-3),
            0f64..PIPELINE_STAGES.len() as f64,
        )?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(PIPELINE_STAGES.len() * 2 + 1)
            .y_label_formatter(&|y| {
                let i = y.floor() as usize;
                if (y - y.floor() - 0.5).abs() < 0.26 && i < PIPELINE_STAGES.len() {
                    PIPELINE_STAGES[PIPELINE_STAGES.len() - 1 - i].to_owned()
                } else {
                    String::new()
                }
            })
            .x_desc("ms since the run started")
            .draw()?;
        for (k, block) in blocks.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(block.stages.iter().filter_map(|(stage, span)| {
                    let lane = PIPELINE_STAGES.iter().position(|s| s == stage)?;
                    let y = (PIPELINE_STAGES.len() - 1 - lane) as f64;
                    Some(Rectangle::new(
                        [
                            (span[0] as f64 / 1e6, y + 0.15),
                            (span[1] as f64 / 1e6, y + 0.85),
                        ],
                        color.filled(),
                    ))
                }))?
                .label(format!("block {}", block.number))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled())
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// The pipeline section: a table, the stacked stage plot and the timelines of the
/// configurations with the most threads and the last root mode measured (pipeline on and
/// off side by side). Empty when the pipeline was not measured.
fn pipeline_section(report: &BenchReport) -> String {
    let mut html = String::new();
    if report.pipeline.is_empty() {
        return html;
    }
    html.push_str(
        "<p><b>The whole block pipeline</b> (recover → prefetch → execute → verify → write → \
         root; every block and, on complete states, every state root verified): end-to-end \
         Mgas/s = gas ÷ wall time of the whole pipeline; execution alone = gas ÷ the execute \
         stage's busy time; vs pure = wall ÷ the pure-execution median of the same mode above; \
         on vs off = wall with the stages back to back ÷ wall overlapped.</p>\
         <table><tr><th>threads</th><th>root</th><th>pipeline</th><th>wall ms</th>\
         <th>end-to-end Mgas/s</th><th>execution alone Mgas/s</th><th>vs pure</th>",
    );
    for stage in PIPELINE_STAGES {
        let _ = write!(html, "<th>{stage} ms</th>");
    }
    html.push_str("<th>bound ms</th><th>% of bound</th><th>on vs off</th></tr>");
    let ratio = |r: Option<f64>| r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"));
    for p in &report.pipeline {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td>",
            p.threads,
            escape(&if p.state == "disk" { format!("{} (disk)", p.root) } else { p.root.clone() }),
            if p.overlap { "on" } else { "off" },
            p.median_ns as f64 / 1e6,
            p.e2e_mgas_per_s,
            p.mgas_per_s,
            ratio(report.pipeline_vs_pure(p)),
        );
        for stage in PIPELINE_STAGES {
            let _ = write!(
                html,
                "<td>{:.1}</td>",
                p.phases_ns.get(stage).copied().unwrap_or(0) as f64 / 1e6
            );
        }
        let _ = write!(
            html,
            "<td>{:.1}</td><td>{:.0}%</td><td>{}</td></tr>",
            p.bound_ns as f64 / 1e6,
            p.percent_of_bound,
            ratio(report.pipeline_gain(p)),
        );
    }
    html.push_str("</table>");
    if let Some(plot) = pipeline_phases(report) {
        let _ = write!(
            html,
            "<figure><figcaption><b>Pipeline stages</b></figcaption>{plot}</figure>"
        );
    }
    let threads = report.pipeline.iter().map(|p| p.threads).max();
    let root = report.pipeline.last().map(|p| p.root.clone());
    for p in report
        .pipeline
        .iter()
        .filter(|p| Some(p.threads) == threads && Some(&p.root) == root.as_ref())
    {
        let _ = write!(
            html,
            "<figure><figcaption><b>Pipeline timeline</b></figcaption>{}</figure>",
            pipeline_timeline(p)
        );
    }
    html
}

/// Distribution of 1-thread transaction times (log scale) with the longest transaction marked.
fn latency(report: &BenchReport) -> String {
    let times: Vec<f64> = report
        .blocks
        .iter()
        .flat_map(|b| b.tx.iter().map(|t| (t.ns.max(1) as f64).log10()))
        .collect();
    if times.is_empty() {
        // No range to plot: an axis from +∞ would never finish drawing its ticks.
        return "<p>No transactions: no latency distribution.</p>".into();
    }
    let (lo, hi) = (
        times.iter().copied().fold(f64::INFINITY, f64::min).floor(),
        times.iter().copied().fold(0.0, f64::max).ceil().max(1.0),
    );
    let bins = 40usize;
    let width = ((hi - lo) / bins as f64).max(1e-9);
    let mut counts = vec![0u32; bins];
    for t in &times {
        counts[(((t - lo) / width) as usize).min(bins - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1) as f64 * 1.1;
    let longest = times.iter().copied().fold(0.0, f64::max);
    svg(|root| {
        let mut chart = frame(root, "Per-transaction execution time (1 thread)")
            .build_cartesian_2d(lo..hi, 0f64..top.max(1.0))?;
        chart
            .configure_mesh()
            .x_desc("time (log10 ns: 3 = 1 µs, 6 = 1 ms)")
            .y_desc("transactions")
            .draw()?;
        chart.draw_series(counts.iter().enumerate().map(|(i, &c)| {
            let x0 = lo + i as f64 * width;
            Rectangle::new(
                [(x0, 0.0), (x0 + width * 0.9, c as f64)],
                PALETTE[0].filled(),
            )
        }))?;
        chart
            .draw_series(LineSeries::new(
                vec![(longest, 0.0), (longest, top)],
                PALETTE[3].stroke_width(2),
            ))?
            .label(format!("longest tx: {:.2} ms", 10f64.powf(longest) / 1e6))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[3]));
        legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        Ok(())
    })
}

/// Cost model: predicted against measured sequential block time.
fn cost_model(report: &BenchReport) -> String {
    let Some(m) = &report.cost_model else {
        return "<p>No cost model (fewer than 5 blocks).</p>".into();
    };
    let pts: Vec<(f64, f64)> = report
        .blocks
        .iter()
        .map(|b| {
            let gas: u64 = b.tx.iter().map(|t| t.gas_spent).sum();
            let slots: u64 = b.tx.iter().map(|t| t.slots_written as u64).sum();
            let predicted = m.ns_per_gas * gas as f64
                + m.ns_per_slot * slots as f64
                + m.ns_per_tx * b.txs as f64
                + m.ns_per_block;
            (b.phases.sequential_ns as f64 / 1e6, predicted / 1e6)
        })
        .collect();
    let max = pts.iter().flat_map(|p| [p.0, p.1]).fold(0.1, f64::max) * 1.1;
    svg(|root| {
        let mut chart = frame(
            root,
            &format!("Cost model: predicted vs measured (R² = {:.2})", m.r2),
        )
        .build_cartesian_2d(0f64..max, 0f64..max)?;
        chart
            .configure_mesh()
            .x_desc("measured block time (ms)")
            .y_desc("predicted (ms)")
            .draw()?;
        chart.draw_series(LineSeries::new(
            vec![(0.0, 0.0), (max, max)],
            BLACK.mix(0.3),
        ))?;
        chart.draw_series(
            pts.into_iter()
                .map(|p| Circle::new(p, 4, PALETTE[0].filled())),
        )?;
        Ok(())
    })
}

/// Simulator: predicted speedup against threads per scheduler, measured points overlaid.
fn simulator(predictions: &[Prediction]) -> String {
    let max_t = predictions
        .iter()
        .map(|p| p.threads)
        .max()
        .unwrap_or(1)
        .max(2);
    let max_y = predictions
        .iter()
        .map(|p| p.predicted_speedup)
        .fold(1.0, f64::max)
        * 1.15;
    let mut names: Vec<&str> = predictions.iter().map(|p| p.scheduler.as_str()).collect();
    names.dedup();
    svg(|root| {
        let mut chart = frame(
            root,
            "Simulator: predicted speedup (lines) vs measured (crosses)",
        )
        .build_cartesian_2d((1f64..max_t as f64).log_scale(), 0f64..max_y)?;
        chart
            .configure_mesh()
            .x_desc("worker threads (log)")
            .y_desc("speedup over 1 thread")
            .draw()?;
        for (k, name) in names.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let mine: Vec<&Prediction> = predictions
                .iter()
                .filter(|p| p.scheduler == *name)
                .collect();
            let one = mine
                .iter()
                .find(|p| p.threads == 1)
                .and_then(|p| p.measured_ns);
            chart
                .draw_series(LineSeries::new(
                    mine.iter().map(|p| (p.threads as f64, p.predicted_speedup)),
                    color.stroke_width(2),
                ))?
                .label(name.to_string())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            if let Some(one) = one {
                chart.draw_series(mine.iter().filter_map(|p| {
                    p.measured_ns.map(|m| {
                        Cross::new(
                            (p.threads as f64, one as f64 / m as f64),
                            6,
                            color.stroke_width(2),
                        )
                    })
                }))?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

const HEAD: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>gigagas report</title>\
<style>body{font-family:sans-serif;max-width:980px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}figure{margin:1.5em 0}</style>\
</head><body><h1>gigagas benchmark report</h1>";

/// Renders the whole report. `predictions` come from [`crate::simulate::predict`].
pub fn render(report: &BenchReport, predictions: &[Prediction]) -> String {
    let mut html = HEAD.to_owned();
    html.push_str(&section(report, predictions));
    html.push_str("</body></html>\n");
    html
}

/// Renders a sweep: a summary table and plot across the data sets, then every data set's
/// full section. Each report comes with its simulator predictions.
pub fn render_sweep(reports: &[(BenchReport, Vec<Prediction>)]) -> String {
    let mut html = HEAD.to_owned();
    let only: Vec<BenchReport> = reports.iter().map(|(r, _)| r.clone()).collect();
    html.push_str("<h2>Sweep summary</h2><table><tr>");
    for name in crate::table::SWEEP_HEADER {
        let _ = write!(html, "<th>{name}</th>");
    }
    html.push_str("</tr>");
    for row in crate::table::sweep_rows(&only) {
        html.push_str("<tr>");
        for cell in row {
            let _ = write!(html, "<td>{}</td>", escape(&cell));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>");
    let _ = write!(
        html,
        "<figure><figcaption><b>Throughput vs block gas, per workload</b></figcaption>{}</figure>",
        sweep_throughput_vs_block_gas(&only)
    );
    for (report, predictions) in reports {
        let _ = write!(html, "<hr><h2>{}</h2>", escape(&report.data));
        html.push_str(&section(report, predictions));
    }
    html.push_str("</body></html>\n");
    html
}

/// One engine's row of a peers page (`gigagas report` of a `gigagas peers --json` result):
/// a bar of its median time, and the cells of its table row.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerBar {
    /// Engine and configuration.
    pub engine: String,
    /// Median time, ms; `None` for a row that did not run (not installed, failed).
    pub median_ms: Option<f64>,
    /// Whether the time is a whole process (start to exit) rather than in-process.
    pub process: bool,
    /// Table cells after the engine: version, status, Mgas/s, ratio, net ratio, includes.
    pub cells: Vec<String>,
}

/// The header of the peers table (after "engine"), matching [`PeerBar::cells`].
pub const PEER_COLUMNS: [&str; 6] = [
    "version",
    "status",
    "Mgas/s",
    "ratio",
    "net ratio",
    "time includes",
];

/// Renders a `gigagas peers` result as one self-contained page: `summary` and `notes` (plain
/// text, escaped here), a horizontal bar plot of every engine's median time (in-process rows
/// and whole-process rows in two colours; rows that did not run have no bar) and the table.
pub fn render_peers(summary: &str, notes: &str, bars: &[PeerBar]) -> String {
    let mut html = HEAD.replace(
        "<h1>gigagas benchmark report</h1>",
        "<h1>gigagas peers: the same blocks through other engines</h1>",
    );
    let _ = write!(
        html,
        "<p>{}</p><p><i>{}</i></p>",
        escape(summary),
        escape(notes)
    );
    let ran: Vec<&PeerBar> = bars.iter().filter(|b| b.median_ms.is_some()).collect();
    let plot = svg(|root| {
        let n = ran.len().max(1);
        let max = ran.iter().filter_map(|b| b.median_ms).fold(1e-3, f64::max) * 1.15;
        let labels: Vec<String> = ran.iter().map(|b| b.engine.clone()).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Median time per engine (ms, lower is faster)",
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(300)
            .build_cartesian_2d(0.0..max, -0.5..(n as f64 - 0.5))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|y| {
                let i = y.round();
                if (y - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("ms")
            .draw()?;
        for (i, bar) in ran.iter().enumerate() {
            let (ms, y) = (bar.median_ms.unwrap_or(0.0), i as f64);
            let colour = if bar.process { PALETTE[1] } else { PALETTE[0] };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - 0.35), (ms, y + 0.35)],
                colour.filled(),
            )))?;
        }
        Ok(())
    });
    let _ = write!(
        html,
        "<figure><figcaption><b>Peers</b> (blue: in-process gigagas phases; orange: a whole \
         process, start to exit)</figcaption>{plot}</figure><table><tr><th>engine</th><th>median ms</th>"
    );
    for name in PEER_COLUMNS {
        let _ = write!(html, "<th>{name}</th>");
    }
    html.push_str("</tr>");
    for bar in bars {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td>",
            escape(&bar.engine),
            bar.median_ms
                .map_or_else(|| "-".to_owned(), |ms| format!("{ms:.1}"))
        );
        for cell in &bar.cells {
            let _ = write!(html, "<td>{}</td>", escape(cell));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></body></html>\n");
    html
}

/// Sequential and fastest-parallel Mgas/s of each data set against its mean block gas; data
/// sets whose names share the first word (a workload at several block sizes) form one line.
fn sweep_throughput_vs_block_gas(reports: &[BenchReport]) -> String {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for report in reports {
        let blocks = report.blocks.len().max(1) as f64;
        let gas = report.blocks.iter().map(|b| b.gas_used).sum::<u64>() as f64 / blocks / 1e6;
        let group = report
            .data
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_owned();
        let seq = report.sequential();
        let best = report.fastest_parallel().map(|r| r.mgas_per_s);
        for (suffix, value) in [
            (" sequential", seq.map(|r| r.mgas_per_s)),
            (" parallel", best),
        ] {
            let Some(value) = value else { continue };
            let key = format!("{group}{suffix}");
            match lines.iter_mut().find(|(k, _)| *k == key) {
                Some((_, pts)) => pts.push((gas, value)),
                None => lines.push((key, vec![(gas, value)])),
            }
        }
    }
    lines
        .iter_mut()
        .for_each(|(_, p)| p.sort_by(|a, b| a.0.total_cmp(&b.0)));
    let all = lines.iter().flat_map(|(_, p)| p.iter());
    let (lo, hi, top) = all.fold((f64::MAX, 0f64, 0f64), |(lo, hi, top), p| {
        (lo.min(p.0), hi.max(p.0), top.max(p.1))
    });
    if lines.is_empty() || hi <= 0.0 {
        return "<p>no data</p>".into();
    }
    let (lo, hi) = (lo * 0.8, hi * 1.25);
    svg(|root| {
        let mut chart = frame(root, "Throughput vs block gas")
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..top * 1.15)?;
        chart
            .configure_mesh()
            .x_desc("gas per block, M (log)")
            .y_desc("Mgas/s")
            .draw()?;
        for (k, (name, pts)) in lines.iter().enumerate() {
            let color = Palette99::pick(k / 2).to_rgba();
            let style = if name.ends_with("sequential") {
                color.stroke_width(1)
            } else {
                color.stroke_width(3)
            };
            chart
                .draw_series(LineSeries::new(pts.clone(), style))?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// One data set's results: summary, runs table and every plot.
fn section(report: &BenchReport, predictions: &[Prediction]) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<p>Data: <b>{}</b> — {} blocks, {} transactions, {:.1} Mgas; {} repeats after {} warm-up pass(es) on {} cores ({}/{}); gigagas {}. \
         Every run was verified before it was timed.</p><p><i>{}</i></p>",
        escape(&report.data),
        report.blocks.len(),
        report.phases.txs,
        report.blocks.iter().map(|b| b.gas_used).sum::<u64>() as f64 / 1e6,
        report.settings.repeats,
        report.settings.warmup,
        report.machine.cores,
        report.machine.os,
        report.machine.arch,
        escape(&report.gigagas_version),
        escape(&report.throughput_definition),
    );
    html.push_str("<table><tr><th>mode</th><th>senders</th><th>threads</th><th>scheduler</th><th>mega</th><th>median ms</th><th>p90 ms</th><th>p99 ms</th><th>Mgas/s</th><th>vs seq</th><th>CP bound</th><th>% of bound</th></tr>");
    for r in &report.runs {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.0}</td><td>{:.2}x</td><td>{:.2}x</td><td>{}</td></tr>",
            r.mode,
            r.recover_senders,
            r.threads,
            r.scheduler.as_deref().unwrap_or("-"),
            r.mega,
            r.median_ns as f64 / 1e6,
            r.p90_ns as f64 / 1e6,
            r.p99_ns as f64 / 1e6,
            r.mgas_per_s,
            r.speedup_vs_sequential,
            r.critical_path_bound,
            r.bound_fraction.map_or_else(|| "-".into(), |f| format!("{:.0}%", f * 100.0)),
        );
    }
    html.push_str("</table>");
    let floor = crate::table::floor_rows(report);
    if !floor.is_empty() {
        html.push_str(
            "<p><b>Contention floor</b>: per-transaction slowdown at T threads of T independent \
             streams (own copy of every block, nothing shared: the machine's share) beside the \
             parallel path's (the engine's); the engine's own share is what is left.</p>\
             <table><tr><th>threads</th><th>floor</th><th>floor p10–p90</th>\
             <th>parallel path</th><th>engine's own share</th>\
             <th>per-tx medians: floor / parallel path</th><th>engine's own share (medians)</th></tr>",
        );
        for row in floor {
            html.push_str("<tr>");
            for cell in row.cells() {
                let _ = write!(html, "<td>{cell}</td>");
            }
            html.push_str("</tr>");
        }
        html.push_str("</table>");
    }
    html.push_str(&pipeline_section(report));
    let mega = throughput_vs_mega(report);
    let plots = [
        ("Throughput vs threads", Some(throughput_vs_threads(report))),
        ("Throughput vs mega-block size", mega),
        ("Throughput vs block gas", Some(throughput_vs_gas(report))),
        ("Phases", Some(phases(report))),
        ("Transaction latency", Some(latency(report))),
        ("Cost model", Some(cost_model(report))),
        ("Scheduling simulator", Some(simulator(predictions))),
    ];
    for (title, plot) in plots
        .into_iter()
        .filter_map(|(title, plot)| Some((title, plot?)))
    {
        let _ = write!(
            html,
            "<figure><figcaption><b>{title}</b></figcaption>{plot}</figure>"
        );
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result without blocks (or without transactions) renders instead of looping forever
    /// on an axis that starts at +∞.
    #[test]
    fn a_result_without_blocks_renders() {
        let mut report: BenchReport =
            serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap();
        report.blocks.clear();
        for run in &mut report.runs {
            run.block_ns.clear();
            run.block_serial_ns.clear();
        }
        let html = render(&report, &[]);
        assert!(html.contains("No transactions"));
        assert!(html.ends_with("</body></html>\n"));
    }
}
