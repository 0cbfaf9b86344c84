//! The pipeline simulator: from the per-stage timelines of one pipeline configuration measured
//! at two thread counts, predict its end-to-end wall time at any other count.
//!
//! Model, per block and stage: the measured busy time at the two counts `a < b` fits
//! Amdahl's law, `d(t) = serial + parallel / t` (both clamped at zero). With the stages back
//! to back every block's stages run one after another. Overlapped, the stages of all blocks
//! are jobs on one pool of threads with the engine's dependencies ([`pool`]): a job keeps the
//! threads it took until it ends, as a rayon worker loop or join does, so a stage queued
//! behind a block's execution waits for it (the 16-thread timelines: a root stretched from
//! 5 to 45 ms beside an execution), and on a GPU a launch's blocks get their senders
//! together. Contention (each transaction slower with more threads) is not seen: read
//! predictions above the measured counts as a ceiling.
//!
//! Two fits: [`predict`] fits the overlapped rows themselves and scales to the larger
//! calibration count's wall (that count reads 0% by construction); [`predict_from_stages`]
//! fits the same configuration measured back to back (`--pipeline off`: each stage alone on
//! the budget, so its span is its work) and predicts the overlapped rows with no scale, every
//! measured count a test.

mod pool;

pub use pool::VERIFY_QUEUE;

use crate::{PipelineBlock, PipelineReport};
use std::collections::BTreeMap;

/// One block's stage times fitted at two thread counts: ns of serial and parallel work.
#[derive(Debug, Clone, Default)]
struct Fit(BTreeMap<String, (f64, f64)>);

impl Fit {
    fn at(&self, stage: &str, threads: f64) -> f64 {
        self.0
            .get(stage)
            .map_or(0.0, |(serial, parallel)| serial + parallel / threads)
    }

    /// Work on one thread of the budget, ns (`gpu_recovery`: the recover stage's is not).
    fn work(&self, gpu_recovery: bool) -> f64 {
        self.0
            .iter()
            .filter(|(stage, _)| !(gpu_recovery && stage.as_str() == "recover"))
            .map(|(_, (s, p))| s + p)
            .sum()
    }
}

/// A prediction at one thread count, with the measurement where one exists.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PipelinePrediction {
    /// Thread budget.
    pub threads: usize,
    /// Predicted wall time, ns.
    pub predicted_ns: u64,
    /// Predicted end to end, Mgas/s.
    pub predicted_mgas_per_s: f64,
    /// Measured wall time (the median repeat), ns, where the input holds this count.
    pub measured_ns: Option<u64>,
    /// (predicted − measured) / measured, percent.
    pub error_percent: Option<f64>,
}

fn durations(block: &PipelineBlock) -> BTreeMap<&str, f64> {
    block
        .stages
        .iter()
        .map(|(k, [s, e])| (k.as_str(), e.saturating_sub(*s) as f64))
        .collect()
}

/// Fits every block's stages from the rows at thread counts `a < b` (same blocks, in order).
fn fit(a: &PipelineReport, b: &PipelineReport) -> Result<Vec<Fit>, String> {
    if a.timeline.len() != b.timeline.len()
        || a.timeline
            .iter()
            .zip(&b.timeline)
            .any(|(x, y)| x.number != y.number)
    {
        return Err("the two rows ran different blocks".into());
    }
    let (ta, tb) = (a.threads as f64, b.threads as f64);
    Ok(a.timeline
        .iter()
        .zip(&b.timeline)
        .map(|(x, y)| {
            let (dx, dy) = (durations(x), durations(y));
            let stages = dx.keys().chain(dy.keys()).copied().collect::<Vec<_>>();
            Fit(stages
                .into_iter()
                .map(|stage| {
                    let (da, db) = (
                        dx.get(stage).copied().unwrap_or(0.0),
                        dy.get(stage).copied().unwrap_or(0.0),
                    );
                    // d(t) = s + p/t through both points.
                    let parallel = ((da - db) / (1.0 / ta - 1.0 / tb)).max(0.0);
                    let serial = (da - parallel / ta).max(0.0);
                    (stage.to_owned(), (serial, parallel))
                })
                .collect())
        })
        .collect())
}

/// The wall at `threads`, ns: back to back every block's stages in turn; overlapped the
/// pool simulation under `policy`.
fn makespan(fits: &[Fit], threads: usize, overlap: bool, policy: &pool::Policy) -> f64 {
    if !overlap {
        let tf = threads.max(1) as f64;
        return fits
            .iter()
            .map(|f| f.0.keys().map(|s| f.at(s, tf)).sum::<f64>())
            .sum();
    }
    pool::makespan(fits, threads, policy)
}

/// The stages of one configuration fitted from its two smallest thread counts in `rows`
/// (`missing` says what is needed when there are fewer), with the total work on the budget.
struct Model {
    fits: Vec<Fit>,
    gas: f64,
    work: f64,
    policy: pool::Policy,
}

impl Model {
    /// The model and the rows sorted by thread count (one per count).
    fn fit_smallest<'r>(
        rows: &[&'r PipelineReport],
        missing: &str,
    ) -> Result<(Self, Vec<&'r PipelineReport>), String> {
        let mut sorted: Vec<&PipelineReport> = rows.to_vec();
        sorted.sort_by_key(|r| r.threads);
        sorted.dedup_by_key(|r| r.threads);
        let [a, b, ..] = sorted[..] else {
            return Err(missing.into());
        };
        let fits = fit(a, b)?;
        let gpu_recovery = a.recovery.starts_with("gpu");
        let work: f64 = fits.iter().map(|f| f.work(gpu_recovery)).sum();
        if work.is_nan() || work <= 0.0 {
            return Err(format!(
                "the rows at {} and {} threads hold no stage time (no timeline, or spans of 0 ns): nothing to fit",
                a.threads, b.threads
            ));
        }
        let model = Self {
            fits,
            gas: a.total_gas as f64,
            work,
            policy: pool::Policy {
                gpu: gpu_recovery,
                ..pool::Policy::default()
            },
        };
        Ok((model, sorted))
    }

    /// What the overlapped engine did beyond the stage times, as `row` (overlapped) shows
    /// it: the GPU's launches, and whether roots waited for the last block's commit (an
    /// incremental root on a state that did not overlay).
    fn overlapped_like(mut self, row: &PipelineReport) -> Self {
        self.policy.launches = pool::launches_of(row);
        self.policy.waits_for_commit = row.root == "incremental" && !row.overlay;
        self.policy.executes_on_snapshot = row.state == "disk";
        self
    }

    /// The wall at `threads`, ns (`overlap`: the stages of all blocks on one pool), at
    /// least the work over the budget.
    fn wall(&self, threads: usize, overlap: bool) -> f64 {
        let tf = threads.max(1) as f64;
        makespan(&self.fits, threads, overlap, &self.policy)
            .max(self.work / tf)
            .max(1.0)
    }

    /// One prediction per count of `threads` (`wall` gives it), each beside the measurement
    /// `measured` holds for its count.
    fn predictions(
        &self,
        threads: &[usize],
        measured: &[&PipelineReport],
        wall: impl Fn(usize) -> f64,
    ) -> Vec<PipelinePrediction> {
        threads
            .iter()
            .map(|&t| {
                let wall = wall(t).max(1.0);
                let measured = measured
                    .iter()
                    .find(|r| r.threads == t)
                    .map(|r| r.median_ns);
                PipelinePrediction {
                    threads: t,
                    predicted_ns: wall as u64,
                    predicted_mgas_per_s: self.gas / wall * 1e3,
                    measured_ns: measured,
                    error_percent: measured.map(|m| (wall - m as f64) / (m.max(1) as f64) * 100.0),
                }
            })
            .collect()
    }
}

/// Predictions for `rows` (one configuration at several thread counts; the two smallest
/// counts calibrate: their stage times fit the model, the larger one's wall sets its scale)
/// at every count of `threads`, each beside its measurement where `rows` holds it.
pub fn predict(
    rows: &[&PipelineReport],
    threads: &[usize],
) -> Result<Vec<PipelinePrediction>, String> {
    let (model, sorted) = Model::fit_smallest(
        rows,
        "the simulator needs the same configuration at two thread counts (e.g. --threads 1,2)",
    )?;
    let overlap = sorted[0].overlap;
    let model = if overlap {
        model.overlapped_like(sorted[1])
    } else {
        model
    };
    // Calibrated on the larger calibration count, as the transaction simulator is on its
    // 1-thread run: stage spans that overlap on the machine's cores even under a small budget
    // (the stage threads' own work) make the model's wall too long by a constant factor.
    // The smaller count is then a real check of the model's shape.
    let b = sorted[1];
    let scale = match b.median_ns {
        0 => 1.0,
        measured => measured as f64 / model.wall(b.threads, overlap),
    };
    Ok(model.predictions(threads, &sorted, |t| model.wall(t, overlap) * scale))
}

/// Predictions for the overlapped pipeline `overlapped` (one configuration at one or more
/// thread counts) from its stages measured back to back: `back_to_back` is the same
/// configuration with `--pipeline off` at two thread counts or more. There each stage ran
/// alone on the thread budget, so its span is its work; in an overlapped run a stage's
/// parallel parts share the pool with the other stages' jobs and its span also counts their
/// waits, which made the work fitted from overlapped runs too large and its budget bound too
/// steep (`docs/results/pipeline-16core-h200.md`). The two smallest back-to-back counts fit
/// the stages; the overlapped pool of jobs is then predicted with no
/// calibration on any overlapped run, so every measured overlapped count is a test.
pub fn predict_from_stages(
    back_to_back: &[&PipelineReport],
    overlapped: &[&PipelineReport],
    threads: &[usize],
) -> Result<Vec<PipelinePrediction>, String> {
    if back_to_back.iter().any(|r| r.overlap) || overlapped.iter().any(|r| !r.overlap) {
        return Err(
            "the stages come from back-to-back rows, the predictions are for overlapped ones"
                .into(),
        );
    }
    let (model, _) = Model::fit_smallest(
        back_to_back,
        "the stages need the configuration back to back (--pipeline off) at two thread counts",
    )?;
    let model = match overlapped.iter().max_by_key(|r| r.threads) {
        Some(row) => model.overlapped_like(row),
        None => model,
    };
    Ok(model.predictions(threads, overlapped, |t| model.wall(t, true)))
}

/// How far apart the repeats of the rows a fit calibrates on (the two smallest thread counts
/// of `rows`) lie: the largest (max − min) / median of one row's `repeat_ns`, percent, with
/// that row's thread count; `None` where neither row has two repeats. A prediction cannot be
/// told apart from its measurement more finely than its inputs repeat: on the lent 16-core
/// machine the 1- and 2-thread rows' two repeats differed by 10–42%
/// (`docs/results/node-16core-h200-lease3.md`).
pub fn calibration_spread(rows: &[&PipelineReport]) -> Option<(usize, f64)> {
    let mut sorted: Vec<&PipelineReport> = rows.to_vec();
    sorted.sort_by_key(|r| r.threads);
    sorted.dedup_by_key(|r| r.threads);
    sorted
        .iter()
        .take(2)
        .filter(|r| r.repeat_ns.len() >= 2 && r.median_ns > 0)
        .map(|r| {
            let (lo, hi) = r
                .repeat_ns
                .iter()
                .fold((u64::MAX, 0), |(lo, hi), &ns| (lo.min(ns), hi.max(ns)));
            (r.threads, (hi - lo) as f64 / r.median_ns as f64 * 100.0)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(threads: usize, overlap: bool, stage_ns: &[(&str, u64)], blocks: u64) -> PipelineReport {
        let timeline = (0..blocks)
            .map(|n| PipelineBlock {
                number: n,
                gas: 1_000_000,
                txs: 10,
                stages: stage_ns
                    .iter()
                    .map(|(s, d)| ((*s).to_owned(), [0, *d]))
                    .collect(),
                demand_reads: None,
                read_bytes: None,
            })
            .collect();
        PipelineReport {
            threads,
            overlap,
            total_gas: blocks * 1_000_000,
            timeline,
            ..PipelineReport::default()
        }
    }

    /// The spread is read from the two smallest counts' repeats only, the widest of them.
    #[test]
    fn the_calibration_spread_is_the_widest_of_the_two_smallest_counts() {
        let with = |threads: usize, repeats: &[u64]| {
            let mut r = row(threads, false, &[("execute", 1_000)], 1);
            r.repeat_ns = repeats.to_vec();
            let mut sorted = repeats.to_vec();
            sorted.sort_unstable();
            r.median_ns = sorted[sorted.len() / 2];
            r
        };
        let (one, two, four) = (
            with(1, &[900, 1_000, 1_100]),
            with(2, &[500, 700]),
            with(4, &[100, 900]),
        );
        let (threads, spread) = calibration_spread(&[&four, &two, &one]).unwrap();
        assert_eq!(threads, 2, "the 4-thread row is no calibration row");
        assert!((spread - 200.0 / 700.0 * 100.0).abs() < 1e-9, "{spread}");
        let single = with(1, &[1_000]);
        assert_eq!(calibration_spread(&[&single]), None);
        assert_eq!(calibration_spread(&[]), None);
    }

    /// Rows with no stage time (no timeline, or spans of 0 ns) once fitted a model of no
    /// work and predicted 4.7·10^10 Mgas/s; now nothing is predicted from them.
    #[test]
    fn rows_with_no_stage_time_are_not_fitted() {
        let a = row(1, false, &[], 3);
        let b = row(2, false, &[("execute", 0)], 3);
        let on = row(2, true, &[("execute", 5_000)], 3);
        let e = predict(&[&a, &b], &[1, 2, 4]).unwrap_err();
        assert!(e.contains("no stage time"), "{e}");
        let e = predict_from_stages(&[&a, &b], &[&on], &[2]).unwrap_err();
        assert!(e.contains("no stage time"), "{e}");
    }

    #[test]
    fn a_fully_parallel_stage_halves_and_the_fit_reproduces_its_inputs() {
        let one = row(1, false, &[("execute", 1000), ("write", 100)], 3);
        let two = row(2, false, &[("execute", 500), ("write", 100)], 3);
        let p = predict(&[&one, &two], &[1, 2, 4]).unwrap();
        // Back to back: 3 × (execute + write).
        assert_eq!(p[0].predicted_ns, 3 * 1100);
        assert_eq!(p[1].predicted_ns, 3 * 600);
        assert_eq!(p[2].predicted_ns, 3 * 350);
    }

    #[test]
    fn overlapped_stages_are_bound_by_the_busiest_lane_and_the_budget() {
        let one = row(
            1,
            true,
            &[("recover", 400), ("execute", 1000), ("write", 300)],
            10,
        );
        let two = row(
            2,
            true,
            &[("recover", 200), ("execute", 500), ("write", 300)],
            10,
        );
        let p = predict(&[&one, &two], &[16]).unwrap();
        // At 16 threads the serial write (300 per block) is the busiest lane.
        let wall = p[0].predicted_ns as f64;
        assert!((3000.0..3200.0).contains(&wall), "{wall}");
        // One count is not enough to fit.
        assert!(predict(&[&one], &[2]).is_err());
    }

    #[test]
    fn verification_has_a_lane_and_gpu_recovery_leaves_the_budget() {
        // Execute scales, verify is serial: on their own lanes a block costs the larger of
        // the two at 16 threads (verify, 600), not their sum.
        let stages = |t: u64| [("execute", 8000 / t), ("verify", 600), ("write", 10)];
        let (one, two) = (row(1, true, &stages(1), 10), row(2, true, &stages(2), 10));
        let wall = predict(&[&one, &two], &[16]).unwrap()[0].predicted_ns as f64;
        assert!((6000.0..6700.0).contains(&wall), "{wall}");
        // Recovery on a GPU: its time is no CPU work, so at 1 thread the budget bound is the
        // other stages' work alone (recover 5000 and execute 1000 per block overlap).
        let stages = |t: u64| [("recover", 5000), ("execute", 1000 / t)];
        let mut gpu = [row(1, true, &stages(1), 4), row(2, true, &stages(2), 4)];
        for r in &mut gpu {
            r.recovery = "gpu (test)".into();
        }
        let cpu = [row(1, true, &stages(1), 4), row(2, true, &stages(2), 4)];
        let on_gpu = predict(&[&gpu[0], &gpu[1]], &[1]).unwrap()[0].predicted_ns;
        let on_cpu = predict(&[&cpu[0], &cpu[1]], &[1]).unwrap()[0].predicted_ns;
        assert!(on_gpu < on_cpu, "gpu {on_gpu} vs cpu {on_cpu}");
    }

    #[test]
    fn the_overlapped_wall_is_predicted_from_the_back_to_back_stages_without_calibration() {
        // Back to back: recover and execute scale, write is serial.
        let stages = |t: u64| [("recover", 4000 / t), ("execute", 2000 / t), ("write", 500)];
        let (one, two) = (row(1, false, &stages(1), 10), row(2, false, &stages(2), 10));
        // Overlapped at 2 threads: measured 3,500 per 10 blocks (not used for the fit).
        let measured = row(2, true, &stages(2), 10);
        let measured = PipelineReport {
            median_ns: 35_000,
            ..measured
        };
        let p = predict_from_stages(&[&one, &two], &[&measured], &[2, 8]).unwrap();
        // At 2 threads the budget binds, (4000 + 2000 + 500) × 10 / 2 = 32,500, but for the
        // last block's write, which nothing else can run beside: + 500 / 2.
        assert_eq!(p[0].predicted_ns, 32_750);
        let error = p[0].error_percent.unwrap();
        assert!((error - (32_750.0 - 35_000.0) / 35_000.0 * 100.0).abs() < 1e-9);
        // At 8 threads the budget still binds (65,000 / 8 = 8,125) over the lanes (~5,750).
        assert!(p[1].measured_ns.is_none());
        assert!(
            (8_000..=9_000).contains(&p[1].predicted_ns),
            "{}",
            p[1].predicted_ns
        );
        // Overlapped rows as the stages' source are refused.
        assert!(predict_from_stages(&[&measured, &two], &[&measured], &[2]).is_err());
        assert!(predict_from_stages(&[&one], &[&measured], &[2]).is_err());
    }

    /// A root that reads the last block's commit (an incremental root on a state that does
    /// not overlay: a store on disk) waits for it: each block then costs at least its root
    /// and the write before it, where an overlaying state's roots run back to back.
    #[test]
    fn roots_that_read_the_last_commit_wait_for_it() {
        let stages = |t: u64| {
            [
                ("execute", 4000 / t),
                ("root", 800),
                ("verify", 100),
                ("write", 300),
            ]
        };
        let b2b = [row(1, false, &stages(1), 6), row(2, false, &stages(2), 6)];
        let wall = |overlay: bool| {
            let on = PipelineReport {
                root: "incremental".into(),
                state: "disk".into(),
                overlay,
                ..row(4, true, &stages(4), 6)
            };
            predict_from_stages(&[&b2b[0], &b2b[1]], &[&on], &[4]).unwrap()[0].predicted_ns
        };
        let (waits, overlays) = (wall(false), wall(true));
        // Waiting: root then write, block after block (6 × 1,100 at least).
        assert!(waits >= 6 * 1_100, "{waits}");
        assert!(
            waits >= overlays + 5 * 300,
            "waits {waits}, overlays {overlays}"
        );
    }

    /// Execution runs at most [`VERIFY_QUEUE`] blocks ahead of verification, as the engine
    /// does: behind a first block whose verification takes 10,000, the seventh block executes
    /// only once it is done (then four executions of 100 follow), where an unbounded lead
    /// would have executed all ten beside it.
    #[test]
    fn execution_waits_for_a_slow_verification_past_its_queue() {
        let stages = [("execute", 100), ("verify", 10), ("write", 1)];
        let slow_first = |mut r: PipelineReport| {
            r.timeline[0].stages.insert("verify".into(), [0, 10_000]);
            r
        };
        let b2b = [
            slow_first(row(1, false, &stages, 10)),
            slow_first(row(2, false, &stages, 10)),
        ];
        let on = slow_first(row(2, true, &stages, 10));
        let wall = predict_from_stages(&[&b2b[0], &b2b[1]], &[&on], &[2]).unwrap()[0].predicted_ns;
        // Block 0 executes (100) and verifies (10,000); blocks 1..=5 execute beside it; block
        // 6 waits for it, then blocks 6..=9 execute (400) and verify.
        assert!(wall >= 10_100 + 400, "{wall}");
        assert!(wall < 10_100 + 400 + 200, "{wall}");
    }

    /// On a GPU the blocks of one launch get their senders when it ends (their recover
    /// spans abut in the overlapped row): the first block executes only after the whole
    /// launch, where separate launches let it start after its own.
    #[test]
    fn a_gpu_launch_delivers_its_blocks_together() {
        let stages = |t: u64| [("recover", 1000), ("execute", 2000 / t)];
        let mut b2b = [row(1, false, &stages(1), 4), row(2, false, &stages(2), 4)];
        for r in &mut b2b {
            r.recovery = "gpu (test)".into();
        }
        let overlapped = |abut: bool| {
            let mut r = row(8, true, &stages(8), 4);
            r.recovery = "gpu (test)".into();
            for (i, b) in r.timeline.iter_mut().enumerate() {
                let i = i as u64;
                let start = if abut { i * 1000 } else { i * 1100 };
                b.stages.insert("recover".into(), [start, start + 1000]);
            }
            r
        };
        let wall = |abut: bool| {
            let on = overlapped(abut);
            predict_from_stages(&[&b2b[0], &b2b[1]], &[&on], &[8]).unwrap()[0].predicted_ns
        };
        // One launch: 4 × 1,000 of recovery, then 4 executions of 250.
        assert_eq!(wall(true), 5_000);
        // A launch per block: the last execution starts at 4,000.
        assert_eq!(wall(false), 4_250);
    }

    /// Spans of 10^18 ns (a hostile or broken file) and a thousand blocks: the simulation
    /// ends, each job's phase ending exactly at its own step.
    #[test]
    fn huge_spans_and_many_blocks_end() {
        let big = 1_000_000_000_000_000_000u64;
        let stages = |t: u64| [("recover", big / t), ("execute", big / t), ("write", 7)];
        let b2b = [
            row(1, false, &stages(1), 1000),
            row(2, false, &stages(2), 1000),
        ];
        let on = row(16, true, &stages(16), 1000);
        let p = predict_from_stages(&[&b2b[0], &b2b[1]], &[&on], &[16, 64]).unwrap();
        assert!(p.iter().all(|p| p.predicted_ns > 0), "{p:?}");
    }
}
