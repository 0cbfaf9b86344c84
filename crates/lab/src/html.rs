//! `gigagas report`: one self-contained HTML file with SVG plots (plotters) of a bench result.

use crate::{critical_path_bound, simulate::Prediction, BenchReport, BlockTrace};
use plotters::coord::combinators::BindKeyPoints;
use plotters::prelude::*;

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

/// Tick positions for an axis over `lo..=hi` at `values` (sorted, deduplicated, inside the
/// range). On a log axis a value closer than 12% of the axis's decades to the previous kept
/// one is left out, so that two labels never collide ("9.010.0").
fn ticks(values: impl IntoIterator<Item = f64>, lo: f64, hi: f64, log: bool) -> Vec<f64> {
    let mut v: Vec<f64> = values
        .into_iter()
        .filter(|x| x.is_finite() && *x >= lo && *x <= hi && (!log || *x > 0.0))
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    if !log || v.len() < 2 {
        return v;
    }
    let span = (hi / lo).log10().max(1e-9);
    let mut kept: Vec<f64> = Vec::with_capacity(v.len());
    for x in v {
        match kept.last() {
            Some(&last) if (x / last).log10() / span < 0.12 => {}
            _ => kept.push(x),
        }
    }
    kept
}

/// Integer thread, block or size counts for an axis from 1 to `max`: every count up to 12,
/// else the powers of two (and `max`), so that the labels are whole numbers and never crowd.
fn count_ticks(max: usize, log: bool) -> Vec<f64> {
    let values: Vec<f64> = if max <= 12 && !log {
        (1..=max).map(|t| t as f64).collect()
    } else {
        std::iter::successors(Some(1usize), |t| t.checked_mul(2))
            .take_while(|t| *t <= max)
            .chain([max])
            .map(|t| t as f64)
            .collect()
    };
    let mut kept = ticks(values, 1.0, max as f64, log);
    // The largest count measured is always labelled, in place of a power of two too close.
    let top = max as f64;
    if log && kept.last().is_some_and(|&t| t < top) {
        kept.pop();
        kept = ticks(kept.into_iter().chain([top]), 1.0, top, log);
        if kept.last() != Some(&top) {
            kept.pop();
            kept.push(top);
        }
    }
    kept
}

/// A tick label: a whole number without decimals, else at most three significant digits.
fn tick_label(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        let text = if x.abs() >= 10.0 {
            format!("{x:.0}")
        } else if x.abs() >= 1.0 {
            format!("{x:.1}")
        } else {
            format!("{x:.2}")
        };
        // 0.50 → 0.5 (the other labels of the axis have no trailing zeros either).
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    }
}

/// Where a legend hides the fewest of `points` (over the ranges `x` and `y`): the corner
/// (a third of each axis) holding the fewest, upper right on a tie.
fn emptiest_corner(points: &[(f64, f64)], x: (f64, f64), y: (f64, f64)) -> SeriesLabelPosition {
    let at = |v: f64, (lo, hi): (f64, f64)| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let corners = [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let count = |right: bool, upper: bool| {
        points
            .iter()
            .filter(|p| {
                let (px, py) = (at(p.0, x), at(p.1, y));
                (if right { px > 0.6 } else { px < 0.4 })
                    && (if upper { py > 0.6 } else { py < 0.4 })
            })
            .count()
    };
    corners
        .into_iter()
        .min_by_key(|(_, right, upper)| count(*right, *upper))
        .map_or(SeriesLabelPosition::UpperRight, |c| c.0)
}

/// A range that shows the data `values` (not from 0): their span with 8% room on both
/// sides, or ±10% around a single value.
fn data_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.08
    } else {
        (hi.abs() * 0.1).max(0.5)
    };
    ((lo - pad).max(0.0), hi + pad)
}

/// A plot's markup, made only in this module: an SVG drawn by plotters' SVG backend (which
/// escapes every text and attribute value it writes) or a fixed note.
#[derive(Debug, Clone)]
pub struct Plot(String);

impl Plot {
    /// A fixed note in place of a plot that has nothing to draw.
    fn note(text: &'static str) -> Self {
        Self(format!("<p>{text}</p>"))
    }
}

fn svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> PlotResult,
) -> Plot {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, H)).into_drawing_area();
        let result = root
            .fill(&WHITE)
            .map_err(Into::into)
            .and_then(|()| draw(&root));
        if let Err(e) = result.and_then(|()| root.present().map_err(Into::into)) {
            return Plot(format!("<p>plot failed: {}</p>", escape(&e.to_string())));
        }
    }
    Plot(out)
}

/// `s` as HTML text, safe in element content and in quoted attribute values: `&`, `<`, `>`,
/// `"` and `'` as character references, and every control or invisible formatting
/// character shown as a visible escape (`gigagas_guard::text::is_unsafe`). The one escaping
/// function of every report page ([`Page::text`] uses it).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if gigagas_guard::text::is_unsafe(c) => {
                out.push_str(&gigagas_guard::text::Shown(c.encode_utf8(&mut [0; 4])).to_string())
            }
            c => out.push(c),
        }
    }
    out
}

/// A text drawn by plotters (a legend entry, an axis label, a title) that came from a result
/// file: plotters escapes markup itself; control characters are shown as escapes here.
fn label(s: &str) -> String {
    gigagas_guard::text::printable(s).into_owned()
}

/// An HTML page under construction. Markup goes in only as `&'static str` literals
/// ([`Page::markup`]), text only escaped ([`Page::text`], [`Page::row`]), plots only as a
/// [`Plot`]: a string that came from an input cannot be inserted as markup.
#[derive(Debug, Clone, Default)]
pub struct Page(String);

impl Page {
    /// A page opened with the common head and `h1` as its heading.
    pub fn open(h1: &'static str) -> Self {
        let mut page = Self(String::new());
        page.markup(HEAD).markup("<h1>").markup(h1).markup("</h1>");
        page
    }

    /// Appends literal markup.
    pub fn markup(&mut self, markup: &'static str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Appends `text`, escaped with [`escape`].
    pub fn text(&mut self, text: impl std::fmt::Display) -> &mut Self {
        self.0.push_str(&escape(&text.to_string()));
        self
    }

    /// Appends a table row of header cells (literal names).
    pub fn header_row<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> &mut Self {
        self.markup("<tr>");
        for name in names {
            self.markup("<th>").text(name).markup("</th>");
        }
        self.markup("</tr>")
    }

    /// Appends a table row, each cell's text escaped.
    pub fn row<D: std::fmt::Display>(&mut self, cells: impl IntoIterator<Item = D>) -> &mut Self {
        self.markup("<tr>");
        for cell in cells {
            self.markup("<td>").text(cell).markup("</td>");
        }
        self.markup("</tr>")
    }

    /// Appends a figure: a literal caption and a plot.
    pub fn figure(&mut self, caption: &'static str, plot: &Plot) -> &mut Self {
        self.markup("<figure><figcaption><b>")
            .markup(caption)
            .markup("</b></figcaption>");
        self.0.push_str(&plot.0);
        self.markup("</figure>")
    }

    /// Appends another page's body (a section built on its own).
    fn section(&mut self, section: Page) -> &mut Self {
        self.0.push_str(&section.0);
        self
    }

    /// Closes the page and returns its HTML.
    pub fn close(mut self) -> String {
        self.markup("</body></html>\n");
        self.0
    }
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
fn throughput_vs_threads(report: &BenchReport) -> Plot {
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
        // Whole thread counts only: at most 10 labels, so the steps are 1, 2, 5, 10, ...
        // (never 1.1 … 1.9), and no light grid lines between them.
        chart
            .configure_mesh()
            .x_labels(max_t.min(10))
            .x_max_light_lines(0)
            .x_label_formatter(&tick_label)
            .y_label_formatter(&tick_label)
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
                .label(label(name))
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
fn throughput_vs_mega(report: &BenchReport) -> Option<Plot> {
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
        let x_ticks = ticks(sizes.iter().map(|&k| k as f64), 1.0, max_k as f64, true);
        let mut chart = frame(root, "Throughput vs mega-block size").build_cartesian_2d(
            (1f64..max_k as f64)
                .log_scale()
                .with_key_points(x_ticks.clone()),
            0f64..top,
        )?;
        chart
            .configure_mesh()
            .x_labels(x_ticks.len())
            .x_label_formatter(&tick_label)
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
                .label(label(&format!("{threads}t {name}")))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }))
}

/// Per-block throughput against block gas, sequential and fastest parallel configuration.
fn throughput_vs_gas(report: &BenchReport) -> Plot {
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
    // The ranges show the data: blocks of 20-30M gas spread over the plot, not squeezed
    // into its right third.
    let (min_x, max_x) = data_range(all.iter().map(|p| p.0));
    let (min_y, max_y) = data_range(all.iter().map(|p| p.1));
    svg(|root| {
        let mut chart = frame(root, "Per-block throughput vs block gas")
            .build_cartesian_2d(min_x..max_x, min_y..max_y)?;
        chart
            .configure_mesh()
            .x_label_formatter(&tick_label)
            .y_label_formatter(&tick_label)
            .x_desc("block gas (M)")
            .y_desc("Mgas/s")
            .draw()?;
        for (k, run) in seq.into_iter().chain(best).enumerate() {
            let color = PALETTE[k];
            let label = match &run.scheduler {
                Some(s) => label(&format!("parallel {}t {s}", run.threads)),
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
        legend(
            &mut chart,
            emptiest_corner(&all, (min_x, max_x), (min_y, max_y)),
        )?;
        Ok(())
    })
}

/// Stacked bars of the phases: sender recovery, execution, commit, verification.
fn phases(report: &BenchReport) -> Plot {
    let mut rows: Vec<(String, [f64; 4])> = Vec::new();
    let recover = report.phases.recover_ns as f64 / 1e6;
    for run in &report.runs {
        let mut name = match &run.scheduler {
            Some(s) => label(&format!("{}t {s}", run.threads)),
            None => "seq".into(),
        };
        if run.mega > 1 {
            name.push_str(&format!(" ×{}", run.mega));
        }
        if run.recover_senders == "inline" {
            name.push_str(" +rec");
        }
        // Inline runs already contain recovery in their execution time.
        let recover = if run.recover_senders == "inline" {
            0.0
        } else {
            recover
        };
        rows.push((
            name,
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
        // Up to 8 bars the labels fit side by side; beyond, they stand upright (drawn below
        // the axis, rotated), so that neighbours never overlap ("1t gas-used", "1t gas-limit").
        let upright = rows.len() > 8;
        let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(4) as u32;
        let mut chart = frame(root, "Phases per configuration (whole data set)")
            .x_label_area_size(if upright { 14 + 7 * longest } else { 50 })
            .build_cartesian_2d(0f64..rows.len() as f64, 0f64..max)?;
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(if upright { 0 } else { rows.len() * 2 + 1 })
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if (x - x.floor() - 0.5).abs() < 0.26 && i < labels.len() {
                    labels[i].clone()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&tick_label)
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
        if upright {
            use plotters::style::text_anchor::{HPos, Pos, VPos};
            let style = ("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate90)
                .into_text_style(root)
                .pos(Pos::new(HPos::Left, VPos::Center));
            for (i, name) in labels.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
                root.draw(&Text::new(name.clone(), (x, y + 6), style.clone()))?;
            }
        }
        Ok(())
    })
}

/// The whole block pipeline: each configuration's median repeat as one bar, stacked by the
/// busy time of each stage (summed over blocks), the wall time marked beside it.
fn pipeline_phases(report: &BenchReport) -> Option<Plot> {
    if report.pipeline.is_empty() {
        return None;
    }
    let rows: Vec<(String, Vec<f64>, f64)> = report
        .pipeline
        .iter()
        .map(|p| {
            (
                label(&p.label()),
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
fn pipeline_timeline(p: &crate::PipelineReport) -> Plot {
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
            &label(&format!(
                "Timeline, {} (first {} blocks)",
                p.label(),
                blocks.len()
            )),
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
fn pipeline_section(report: &BenchReport) -> Page {
    let mut html = Page::default();
    if report.pipeline.is_empty() {
        return html;
    }
    html.markup(
        "<p><b>The whole block pipeline</b> (recover → prefetch → execute → verify → write → \
         root; every block and, on complete states, every state root verified): end-to-end \
         Mgas/s = gas ÷ wall time of the whole pipeline; execution alone = gas ÷ the execute \
         stage's busy time; vs pure = wall ÷ the pure-execution median of the same mode above; \
         on vs off = wall with the stages back to back ÷ wall overlapped.</p><table>",
    );
    let stage_headers = PIPELINE_STAGES.map(|stage| format!("{stage} ms"));
    let disk = report.pipeline.iter().any(|p| p.state == "disk");
    let disk_headers: &[&str] = if disk {
        &["reads on demand", "MiB read"]
    } else {
        &[]
    };
    html.header_row(
        [
            "threads",
            "BAL",
            "root",
            "pipeline",
            "wall ms",
            "end-to-end Mgas/s",
            "execution alone Mgas/s",
            "vs pure",
        ]
        .into_iter()
        .chain(stage_headers.iter().map(String::as_str))
        .chain(["bound ms", "% of bound", "on vs off"])
        .chain(disk_headers.iter().copied()),
    );
    let ratio = |r: Option<f64>| r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"));
    for p in &report.pipeline {
        let mut cells = vec![
            p.threads.to_string(),
            p.bal.clone(),
            format!("{}{}", p.root, p.where_label()),
            p.pipeline_label(),
            format!("{:.1}", p.median_ns as f64 / 1e6),
            format!("{:.0}", p.e2e_mgas_per_s),
            format!("{:.0}", p.mgas_per_s),
            ratio(report.pipeline_vs_pure(p)),
        ];
        for stage in PIPELINE_STAGES {
            cells.push(format!(
                "{:.1}",
                p.phases_ns.get(stage).copied().unwrap_or(0) as f64 / 1e6
            ));
        }
        cells.push(format!("{:.1}", p.bound_ns as f64 / 1e6));
        cells.push(format!("{:.0}%", p.percent_of_bound));
        cells.push(ratio(report.pipeline_gain(p)));
        if disk {
            cells.push(p.demand_reads.to_string());
            cells.push(p.read_bytes.map_or_else(
                || "-".into(),
                |b| format!("{:.1}", b as f64 / (1u64 << 20) as f64),
            ));
        }
        html.row(cells);
    }
    html.markup("</table>");
    if let Some(plot) = pipeline_phases(report) {
        html.figure("Pipeline stages", &plot);
    }
    let threads = report.pipeline.iter().map(|p| p.threads).max();
    let root = report.pipeline.last().map(|p| p.root.clone());
    for p in report
        .pipeline
        .iter()
        .filter(|p| Some(p.threads) == threads && Some(&p.root) == root.as_ref())
    {
        html.figure("Pipeline timeline", &pipeline_timeline(p));
    }
    html
}

/// Distribution of 1-thread transaction times (log scale) with the longest transaction marked.
fn latency(report: &BenchReport) -> Plot {
    let times: Vec<f64> = report
        .blocks
        .iter()
        .flat_map(|b| b.tx.iter().map(|t| (t.ns.max(1) as f64).log10()))
        .collect();
    if times.is_empty() {
        // No range to plot: an axis from +∞ would never finish drawing its ticks.
        return Plot::note("No transactions: no latency distribution.");
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
fn cost_model(report: &BenchReport) -> Plot {
    let Some(m) = &report.cost_model else {
        return Plot::note("No cost model (fewer than 5 blocks).");
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
fn simulator(predictions: &[Prediction]) -> Plot {
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
        .build_cartesian_2d(
            (1f64..max_t as f64)
                .log_scale()
                .with_key_points(count_ticks(max_t, true)),
            0f64..max_y,
        )?;
        chart
            .configure_mesh()
            .x_labels(count_ticks(max_t, true).len())
            .x_label_formatter(&tick_label)
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
                .label(label(name))
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
</head><body>";

/// Renders the whole report. `predictions` come from [`crate::simulate::predict`].
pub fn render(report: &BenchReport, predictions: &[Prediction]) -> String {
    let mut html = Page::open("gigagas benchmark report");
    html.section(section(report, predictions));
    html.close()
}

/// Renders a sweep: a summary table and plot across the data sets, then every data set's
/// full section. Each report comes with its simulator predictions.
pub fn render_sweep(reports: &[(BenchReport, Vec<Prediction>)]) -> String {
    let mut html = Page::open("gigagas benchmark report");
    let only: Vec<BenchReport> = reports.iter().map(|(r, _)| r.clone()).collect();
    html.markup("<h2>Sweep summary</h2><table>")
        .header_row(crate::table::SWEEP_HEADER);
    for row in crate::table::sweep_rows(&only) {
        html.row(row);
    }
    html.markup("</table>").figure(
        "Throughput vs block gas, per workload",
        &sweep_throughput_vs_block_gas(&only),
    );
    for (report, predictions) in reports {
        html.markup("<hr><h2>")
            .text(&report.data)
            .markup("</h2>")
            .section(section(report, predictions));
    }
    html.close()
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
    let mut html = Page::open("gigagas peers: the same blocks through other engines");
    html.markup("<p>")
        .text(summary)
        .markup("</p><p><i>")
        .text(notes)
        .markup("</i></p>");
    let ran: Vec<&PeerBar> = bars.iter().filter(|b| b.median_ms.is_some()).collect();
    let plot = svg(|root| {
        let n = ran.len().max(1);
        let max = ran.iter().filter_map(|b| b.median_ms).fold(1e-3, f64::max) * 1.15;
        let labels: Vec<String> = ran.iter().map(|b| label(&b.engine)).collect();
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
    html.figure(
        "Peers (blue: in-process gigagas phases; orange: a whole process, start to exit)",
        &plot,
    )
    .markup("<table>")
    .header_row(["engine", "median ms"].into_iter().chain(PEER_COLUMNS));
    for bar in bars {
        let median = bar
            .median_ms
            .map_or_else(|| "-".to_owned(), |ms| format!("{ms:.1}"));
        html.row(
            [bar.engine.as_str(), median.as_str()]
                .into_iter()
                .chain(bar.cells.iter().map(String::as_str)),
        );
    }
    html.markup("</table>");
    html.close()
}

/// One series of a BAL-size page: a data set's variant (`mainnet keys`), one point per
/// block (gas used, Mgas; size, kB).
#[derive(Debug, Clone, PartialEq)]
pub struct SizeSeries {
    /// Data set and variant.
    pub name: String,
    /// (Mgas, kB) per block.
    pub points: Vec<(f64, f64)>,
}

/// Renders a `gigagas bal stats` result as one self-contained page: `summary` (plain text,
/// escaped here), a scatter plot of every block's BAL size against its gas (one colour per
/// series) and a table (`header`, `rows`; every cell escaped).
pub fn render_bal_sizes(
    summary: &str,
    series: &[SizeSeries],
    header: &[&str],
    rows: &[Vec<String>],
) -> String {
    let mut html = Page::open("gigagas bal stats: what a block access list weighs");
    html.markup("<p>").text(summary).markup("</p>");
    let points = || series.iter().flat_map(|s| s.points.iter());
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite() && p.0 >= 0.0 && p.1 >= 0.0;
    let (gas, kb) = points()
        .filter(finite)
        .fold((0f64, 0f64), |(g, k), p| (g.max(p.0), k.max(p.1)));
    let plot = if gas <= 0.0 || kb <= 0.0 {
        Plot::note("no block used gas: nothing to plot")
    } else {
        svg(|root| {
            let mut chart = frame(root, "BAL size vs gas per block")
                .build_cartesian_2d(0f64..gas * 1.05, 0f64..kb * 1.1)?;
            chart
                .configure_mesh()
                .x_desc("gas used, M")
                .y_desc("BAL RLP, kB")
                .draw()?;
            for (k, s) in series.iter().enumerate() {
                let color = Palette99::pick(k).to_rgba();
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .filter(finite)
                            .map(|&p| Circle::new(p, 3, color.filled())),
                    )?
                    .label(label(&s.name))
                    .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
            }
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
            Ok(())
        })
    };
    html.figure(
        "BAL size (RLP) against gas used, one point per block",
        &plot,
    )
    .markup("<table>")
    .header_row(header.iter().copied());
    for row in rows {
        html.row(row.iter());
    }
    html.markup("</table>");
    html.close()
}

/// Sequential and fastest-parallel Mgas/s of each data set against its mean block gas; data
/// sets whose names share the first word (a workload at several block sizes) form one line.
fn sweep_throughput_vs_block_gas(reports: &[BenchReport]) -> Plot {
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
    // A log axis holds positive gas only (a data set whose blocks used none has no place).
    lines.iter_mut().for_each(|(_, p)| p.retain(|q| q.0 > 0.0));
    lines.retain(|(_, p)| !p.is_empty());
    let all = lines.iter().flat_map(|(_, p)| p.iter());
    let (lo, hi, top) = all.fold((f64::MAX, 0f64, 0f64), |(lo, hi, top), p| {
        (lo.min(p.0), hi.max(p.0), top.max(p.1))
    });
    if lines.is_empty() || hi <= 0.0 {
        return Plot::note("no data");
    }
    let x_ticks = ticks(
        lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)),
        lo,
        hi,
        true,
    );
    let (lo, hi) = (lo * 0.8, hi * 1.25);
    svg(|root| {
        let mut chart = frame(root, "Throughput vs block gas").build_cartesian_2d(
            (lo..hi).log_scale().with_key_points(x_ticks.clone()),
            0f64..top * 1.15,
        )?;
        chart
            .configure_mesh()
            .x_labels(x_ticks.len())
            .x_label_formatter(&tick_label)
            .y_label_formatter(&tick_label)
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
                .label(label(name))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// The machine's load during the measurement (load averages, other processes' CPU time)
/// and every warning about the conditions (`crate::report::noise_warnings`): a figure from a
/// busy machine says so on the page, as in the terminal.
fn machine_load(html: &mut Page, report: &BenchReport) {
    let m = &report.machine;
    let avg = |l: Option<f64>| l.map_or_else(|| "not recorded".to_owned(), |l| format!("{l:.2}"));
    let others = m.cpu_during_run.as_ref().map_or_else(
        || "not recorded".to_owned(),
        |c| {
            format!(
                "{:.0}% of the machine's CPU time ({:.2} of {} cores){}",
                c.other_share * 100.0,
                c.other_share * m.cores as f64,
                m.cores,
                if c.busy { ": not idle" } else { ": idle" }
            )
        },
    );
    match &report.provenance {
        Some(p) => {
            html.markup("<p>Build: gigagas ")
                .text(p.build.summary())
                .markup("<br>Host: ")
                .text(p.host.summary())
                .markup("</p>");
        }
        None => {
            html.markup(
                "<p>Build and host: not recorded (a result from before provenance was recorded).</p>",
            );
        }
    }
    html.markup("<p>Machine load: load average ")
        .text(avg(m.load_avg_start))
        .markup(" at the start, ")
        .text(avg(m.load_avg_end))
        .markup(" at the end; other processes used ")
        .text(others)
        .markup(" during the timed runs.</p>");
    let warnings = crate::report::noise_warnings(report);
    if !warnings.is_empty() {
        html.markup("<ul class=\"warn\">");
        for w in warnings {
            html.markup("<li><b>warning:</b> ").text(w).markup("</li>");
        }
        html.markup("</ul>");
    }
}

/// One data set's results: summary, runs table and every plot.
fn section(report: &BenchReport, predictions: &[Prediction]) -> Page {
    let mut html = Page::default();
    html.markup("<p>Data: <b>")
        .text(&report.data)
        .markup("</b> — ")
        .text(format!(
            "{} blocks, {} transactions, {:.1} Mgas; {} repeats after {} warm-up pass(es) on {} \
             cores ({}/{}); gigagas {}.",
            report.blocks.len(),
            report.phases.txs,
            report.blocks.iter().map(|b| b.gas_used).sum::<u64>() as f64 / 1e6,
            report.settings.repeats,
            report.settings.warmup,
            report.machine.cores,
            report.machine.os,
            report.machine.arch,
            report.gigagas_version,
        ))
        .markup(" Every run was verified before it was timed.</p>");
    machine_load(&mut html, report);
    html.markup("<p><i>")
        .text(&report.throughput_definition)
        .markup("</i></p><table>")
        .header_row([
            "mode",
            "senders",
            "threads",
            "scheduler",
            "mega",
            "median ms",
            "p90 ms",
            "p99 ms",
            "Mgas/s",
            "vs seq",
            "CP bound",
            "% of bound",
        ]);
    for r in &report.runs {
        html.row([
            r.mode.clone(),
            r.recover_senders.clone(),
            r.threads.to_string(),
            r.scheduler.clone().unwrap_or_else(|| "-".into()),
            r.mega.to_string(),
            format!("{:.1}", r.median_ns as f64 / 1e6),
            format!("{:.1}", r.p90_ns as f64 / 1e6),
            format!("{:.1}", r.p99_ns as f64 / 1e6),
            format!("{:.0}", r.mgas_per_s),
            format!("{:.2}x", r.speedup_vs_sequential),
            format!("{:.2}x", r.critical_path_bound),
            r.bound_fraction
                .map_or_else(|| "-".into(), |f| format!("{:.0}%", f * 100.0)),
        ]);
    }
    html.markup("</table>");
    let floor = crate::table::floor_rows(report);
    if !floor.is_empty() {
        html.markup(
            "<p><b>Contention floor</b>: per-transaction slowdown at T threads of T independent \
             streams (own copy of every block, nothing shared: the machine's share) beside the \
             parallel path's (the engine's); the engine's own share is what is left.</p><table>",
        )
        .header_row([
            "threads",
            "floor",
            "floor p10–p90",
            "parallel path",
            "engine's own share",
            "per-tx medians: floor / parallel path",
            "engine's own share (medians)",
        ]);
        for row in floor {
            html.row(row.cells());
        }
        html.markup("</table>");
    }
    html.section(pipeline_section(report));
    let plots = [
        ("Throughput vs threads", Some(throughput_vs_threads(report))),
        ("Throughput vs mega-block size", throughput_vs_mega(report)),
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
        html.figure(title, &plot);
    }
    html
}

#[cfg(test)]
mod tests {

    /// The plots' axes: whole thread counts (no 1.1 … 1.9), log-axis labels that never
    /// collide, and a block-gas range that shows the data.
    #[test]
    fn axes_are_labelled_with_whole_counts_and_without_collisions() {
        let report: BenchReport =
            serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap();
        let Plot(svg) = throughput_vs_threads(&report);
        let label = |t: &str| format!(">\n{t}\n</text>");
        for bad in ["1.1", "1.5", "1.9", "1.0"] {
            assert!(!svg.contains(&label(bad)), "{bad} in the thread axis");
        }
        assert!(
            svg.contains(&label("1")) && svg.contains(&label("2")),
            "{svg}"
        );
        assert_eq!(
            ticks([9.0, 10.0, 30.0, 300.0], 7.2, 375.0, true),
            [9.0, 30.0, 300.0]
        );
        assert_eq!(ticks([3.0, 1.0, 3.0], 1.0, 10.0, false), [1.0, 3.0]);
        assert_eq!(
            count_ticks(64, true),
            [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(count_ticks(48, true).last(), Some(&48.0));
        assert_eq!(tick_label(&4.0), "4");
        assert_eq!(tick_label(&2.5), "2.5");
        assert_eq!(tick_label(&0.5), "0.5");
        assert_eq!(tick_label(&0.25), "0.25");
        let (lo, hi) = data_range([20.0, 30.0]);
        assert!(
            lo > 15.0 && lo < 20.0 && hi > 30.0 && hi < 35.0,
            "{lo} {hi}"
        );
        assert_eq!(data_range([]), (0.0, 1.0));
    }
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

    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// Text a hostile result file could hold: markup, attribute breakers, entities, escape
    /// sequences and any character.
    fn hostile() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("<script>alert(1)</script>".to_owned()),
                Just("\"><img src=x onerror=alert(1)>".to_owned()),
                Just("' onmouseover='x".to_owned()),
                Just("</td></tr></table><b>".to_owned()),
                Just("&amp;&lt;".to_owned()),
                Just("\u{1b}[2J\r\n".to_owned()),
                Just("]]><!--".to_owned()),
                "[a-z ]{1,4}",
                any::<char>().prop_map(String::from),
            ],
            1..5,
        )
        .prop_map(|parts| parts.concat())
    }

    /// Every string field of a report, in a fixed order.
    fn strings(r: &mut BenchReport) -> Vec<&mut String> {
        let mut out = vec![
            &mut r.data,
            &mut r.gigagas_version,
            &mut r.throughput_definition,
            &mut r.machine.os,
            &mut r.machine.arch,
        ];
        for run in &mut r.runs {
            out.push(&mut run.mode);
            out.push(&mut run.recover_senders);
            if let Some(s) = run.scheduler.as_mut() {
                out.push(s);
            }
        }
        for b in &mut r.blocks {
            out.push(&mut b.fork);
            out.push(&mut b.bal_hash);
        }
        for p in &mut r.pipeline {
            out.push(&mut p.mode);
            out.push(&mut p.scheduler);
            out.push(&mut p.root);
            out.push(&mut p.state);
        }
        out
    }

    fn with_pipeline() -> BenchReport {
        let mut report: BenchReport =
            serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap();
        let stages: BTreeMap<String, [u64; 2]> = PIPELINE_STAGES
            .iter()
            .enumerate()
            .map(|(i, s)| ((*s).to_owned(), [i as u64 * 1000, i as u64 * 1000 + 900]))
            .collect();
        report.pipeline.push(crate::PipelineReport {
            mode: "parallel/2t/ordered".into(),
            threads: 2,
            scheduler: "ordered".into(),
            root: "incremental".into(),
            state: "memory".into(),
            overlap: true,
            overlay: false,
            bal: "keys".into(),
            cache: "warm".into(),
            recovery: "cpu".into(),
            stage_threads: 0,
            sync: None,
            final_sync_ns: None,
            write_group: None,
            wal: None,
            demand_reads: 0,
            read_bytes: None,
            total_gas: 1_000_000,
            repeat_ns: vec![5_000, 6_000, 7_000],
            median_ns: 6_000,
            e2e_mgas_per_s: 166.0,
            mgas_per_s: 200.0,
            phases_ns: stages.keys().map(|k| (k.clone(), 500)).collect(),
            bound_ns: 4_000,
            percent_of_bound: 66.0,
            timeline: vec![crate::PipelineBlock {
                number: 1,
                gas: 1_000_000,
                txs: 3,
                stages,
                demand_reads: None,
                read_bytes: None,
            }],
        });
        report
    }

    /// Words whose value changes what a report shows; a placeholder keeps them.
    const MEANINGFUL: [&str; 6] = ["sequential", "parallel", "pre", "inline", "disk", "memory"];

    /// The report with each distinct string replaced by a plain placeholder (equal strings
    /// stay equal, meaningful words stay themselves): the same page structure, no markup.
    fn placeholders(report: &BenchReport) -> BenchReport {
        let mut plain = report.clone();
        let mut seen: Vec<String> = Vec::new();
        for s in strings(&mut plain) {
            if MEANINGFUL.contains(&s.as_str()) {
                continue;
            }
            let k = seen.iter().position(|x| x == s).unwrap_or_else(|| {
                seen.push(s.clone());
                seen.len() - 1
            });
            *s = format!("v{k}");
        }
        plain
    }

    fn assert_only_text(page: &str, plain_page: &str) {
        // Same number of tags as the page of plain placeholders: no field added markup.
        assert_eq!(
            page.matches('<').count(),
            plain_page.matches('<').count(),
            "a field's text became markup"
        );
        let lower = page.to_lowercase();
        for bad in ["<script", "<img", "<!--", "\u{1b}", "\r"] {
            assert!(!lower.contains(bad), "{bad:?} reached the page");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Any string field of a result (machine, runs, blocks, pipeline) reaches the page as
        /// text, never as markup, in the tables, the headings and every plot's labels.
        #[test]
        fn every_string_field_renders_as_text(
            values in prop::collection::vec(prop::option::of(hostile()), 40),
        ) {
            let mut report = with_pipeline();
            for (field, value) in strings(&mut report).into_iter().zip(values) {
                if let Some(value) = value {
                    *field = value;
                }
            }
            let plain = placeholders(&report);
            assert_only_text(&render(&report, &[]), &render(&plain, &[]));
            let sweep = [(report.clone(), vec![]), (report, vec![])];
            let plain_sweep = [(plain.clone(), vec![]), (plain, vec![])];
            assert_only_text(&render_sweep(&sweep), &render_sweep(&plain_sweep));
        }

        /// The peers page: engine names, cells, summary and notes are text.
        #[test]
        fn peers_pages_render_their_strings_as_text(
            summary in hostile(),
            notes in hostile(),
            engine in hostile(),
            cell in hostile(),
        ) {
            let bar = |engine: &str, cell: &str| PeerBar {
                engine: engine.to_owned(),
                median_ms: Some(12.5),
                process: true,
                cells: vec![cell.to_owned(); PEER_COLUMNS.len()],
            };
            let page = render_peers(&summary, &notes, &[bar(&engine, &cell), bar("gigagas", "ok")]);
            let plain = render_peers("s", "n", &[bar("e", "c"), bar("gigagas", "ok")]);
            assert_only_text(&page, &plain);
        }

        #[test]
        fn bal_size_pages_render_their_strings_as_text(
            summary in hostile(),
            name in hostile(),
            cell in hostile(),
        ) {
            let series = |name: &str| vec![SizeSeries { name: name.to_owned(), points: vec![(1.0, 2.0), (3.0, f64::NAN)] }];
            let header = ["data set", "kB"];
            let page = render_bal_sizes(&summary, &series(&name), &header, &[vec![cell.clone(), "1".into()]]);
            let plain = render_bal_sizes("s", &series("n"), &header, &[vec!["c".into(), "1".into()]]);
            assert_only_text(&page, &plain);
        }
    }

    /// The page says how loaded the machine was, and repeats the busy warning.
    #[test]
    fn the_page_shows_the_machine_load_and_its_warning() {
        let mut report: BenchReport =
            serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap();
        report.machine.cores = 2;
        report.machine.load_avg_start = Some(1.8);
        report.machine.cpu_during_run = Some(crate::machine_load::CpuLoad {
            other_share: 0.5,
            own_share: 0.5,
            total_ticks: 1000,
            busy: true,
            busy_threshold: 0.1,
        });
        let html = render(&report, &[]);
        assert!(
            html.contains("Machine load: load average 1.80 at the start"),
            "{html}"
        );
        assert!(
            html.contains("50% of the machine&#39;s CPU time (1.00 of 2 cores): not idle")
                || html.contains("50% of the machine"),
            "{html}"
        );
        assert!(
            html.contains("<b>warning:</b> the machine was not idle"),
            "{html}"
        );
    }

    #[test]
    fn escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("<a href='x'>\"&\u{1b}"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;\\u{1b}"
        );
        let report: BenchReport = {
            let mut r = with_pipeline();
            r.machine.os = "<script>alert(1)</script>".into();
            r.runs[0].mode = "<b>x</b>".into();
            r
        };
        let page = render(&report, &[]);
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("<td>&lt;b&gt;x&lt;/b&gt;</td>"));
    }

    /// The largest values the reader accepts render (and finish): an axis to 2^53 and a
    /// throughput plot over 1,024 threads.
    #[test]
    fn values_at_the_read_limits_render() {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap();
        v["runs"][2]["mgas_per_s"] = serde_json::json!(crate::report::MAX_NUMBER);
        v["runs"][2]["threads"] = serde_json::json!(crate::report::MAX_THREADS);
        // A consistent run (its repeats, median and percentiles agree) at 2^53 ns.
        for field in ["median_ns", "p90_ns", "p99_ns"] {
            v["runs"][1][field] = serde_json::json!(1u64 << 53);
        }
        v["runs"][1]["repeat_ns"] = serde_json::json!(vec![1u64 << 53; 3]);
        let reports = crate::read_reports(&serde_json::to_vec(&v).unwrap()).unwrap();
        let page = render(&reports[0], &[]);
        assert!(page.ends_with("</body></html>\n"));
        assert!(page.matches("<svg").count() >= 5);
    }
}
