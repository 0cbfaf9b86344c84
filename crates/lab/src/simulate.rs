//! The scheduling simulator: replays measured 1-thread transaction times through a list
//! scheduler for any number of workers, so a small machine can say what a large one would do.
//!
//! With a BAL every transaction of a block is independent, so the executor is exactly list
//! scheduling: each free worker takes the next transaction of one shared order. The simulator
//! replays that with a min-heap of worker free times, calibrated on the measured 1-thread run:
//! the serial tail of each block (collecting results and merging receipts after the last
//! worker, measured as `block_serial_ns`) is added to the makespan as is; the rest of the
//! block's time beyond its transactions (dispatch, per-worker setup) is spread over its
//! transactions by scaling them, so the 1-worker replay reproduces the measured block time.

use crate::{report::TxTrace, BenchReport};
use std::{cmp::Reverse, collections::BinaryHeap};

/// Makespan of list-scheduling `times` in `order` on `threads` workers.
pub fn list_schedule(times: &[f64], order: &[usize], threads: usize) -> f64 {
    let mut free: BinaryHeap<Reverse<OrdF64>> =
        (0..threads.max(1)).map(|_| Reverse(OrdF64(0.0))).collect();
    let mut makespan = 0.0f64;
    for &i in order {
        // The heap holds `threads.max(1)` workers and every pop is followed by a push.
        let Some(Reverse(OrdF64(start))) = free.pop() else {
            break;
        };
        let end = start + times[i];
        makespan = makespan.max(end);
        free.push(Reverse(OrdF64(end)));
    }
    makespan
}

#[derive(PartialEq)]
struct OrdF64(f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A predicted (and, where measured, observed) time for one scheduler at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// Scheduler name.
    pub scheduler: String,
    /// Worker threads.
    pub threads: usize,
    /// Blocks per mega-block (1: each block on its own).
    pub mega: usize,
    /// Predicted time of the data set (blocks one after another), ns.
    pub predicted_ns: f64,
    /// Predicted speedup over the measured 1-thread time of this scheduler.
    pub predicted_speedup: f64,
    /// Measured median at this configuration, if the report has it, ns.
    pub measured_ns: Option<u64>,
}

impl Prediction {
    /// Relative error of the prediction against the measurement: (predicted − measured) /
    /// measured.
    pub fn error(&self) -> Option<f64> {
        self.measured_ns
            .map(|m| (self.predicted_ns - m as f64) / m.max(1) as f64)
    }
}

/// Predicts every `(scheduler, threads, mega)` triple. `order` gives a scheduler's dispatch
/// order for a list of transactions (the executor's own ordering function, so the two cannot
/// drift). The 1-thread calibration uses the report's 1-thread run of that scheduler (or,
/// failing that, of any scheduler). With `mega` K > 1, K consecutive blocks of the report are
/// replayed as one unit — all their transactions scheduled together, as `run --mega K` does.
pub fn predict(
    report: &BenchReport,
    schedulers: &[String],
    threads: &[usize],
    megas: &[usize],
    order: &dyn Fn(&str, &[TxTrace]) -> Vec<usize>,
) -> Vec<Prediction> {
    let measured = |scheduler: &str, t: usize, k: usize| {
        report.runs.iter().find(|r| {
            r.mode == "parallel"
                && r.recover_senders == "pre"
                && r.threads == t
                && r.mega == k
                && r.scheduler.as_deref() == Some(scheduler)
        })
    };
    let numbers: Vec<u64> = report.blocks.iter().map(|b| b.number).collect();
    let mut out = Vec::new();
    for scheduler in schedulers {
        let calibration = measured(scheduler, 1, 1).or_else(|| {
            report.runs.iter().find(|r| {
                r.mode == "parallel" && r.recover_senders == "pre" && r.threads == 1 && r.mega == 1
            })
        });
        // Per block: the measured serial tail, and the transaction times scaled so that they
        // and the tail add up to the measured 1-thread block time.
        let serial: Vec<f64> = (0..report.blocks.len())
            .map(|b| {
                calibration
                    .and_then(|run| run.block_serial_ns.get(b))
                    .map_or(0.0, |&ns| ns as f64)
            })
            .collect();
        let times: Vec<Vec<f64>> = report
            .blocks
            .iter()
            .enumerate()
            .map(|(b, block)| {
                let sum: u64 = block.tx.iter().map(|t| t.ns).sum();
                let scale = match calibration.and_then(|run| run.block_ns.get(b)) {
                    Some(&ns) if sum > 0 => (ns as f64 - serial[b]).max(0.0) / sum as f64,
                    _ => 1.0,
                };
                block.tx.iter().map(|t| t.ns as f64 * scale).collect()
            })
            .collect();
        let one: f64 = times.iter().flatten().sum::<f64>() + serial.iter().sum::<f64>();
        for &mega in megas {
            let k = mega.max(1);
            // Each unit: its serial time and the concatenated times and traces of its blocks.
            let units: Vec<(f64, Vec<f64>, Vec<usize>)> = crate::mega_units(&numbers, k)
                .into_iter()
                .map(|unit| {
                    let traces: Vec<TxTrace> = report.blocks[unit.clone()]
                        .iter()
                        .flat_map(|b| b.tx.iter().cloned())
                        .collect();
                    (
                        serial[unit.clone()].iter().sum(),
                        times[unit].concat(),
                        order(scheduler, &traces),
                    )
                })
                .collect();
            for &t in threads {
                let predicted_ns: f64 = units
                    .iter()
                    .map(|(serial, times, ord)| serial + list_schedule(times, ord, t))
                    .sum();
                out.push(Prediction {
                    scheduler: scheduler.clone(),
                    threads: t,
                    mega: k,
                    predicted_ns,
                    predicted_speedup: one / predicted_ns.max(1.0),
                    measured_ns: measured(scheduler, t, k).map(|r| r.median_ns),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_scheduling_matches_hand_computed_schedules() {
        // One long job first: LPT on 2 workers is optimal here (10 | 4+3+3).
        let times = [10.0, 4.0, 3.0, 3.0];
        assert_eq!(list_schedule(&times, &[0, 1, 2, 3], 2), 10.0);
        // Long job last: 4 | 3+3, then the long job starts at 4 on the first free worker: 14.
        assert_eq!(list_schedule(&times, &[1, 2, 3, 0], 2), 14.0);
        // One worker: the sum. Many workers: the longest job.
        assert_eq!(list_schedule(&times, &[0, 1, 2, 3], 1), 20.0);
        assert_eq!(list_schedule(&times, &[3, 2, 1, 0], 64), 10.0);
        // Classic LPT worst case for 2 machines: 3,3,2,2,2 → LPT 7, optimum 6.
        let lpt = [3.0, 3.0, 2.0, 2.0, 2.0];
        assert_eq!(list_schedule(&lpt, &[0, 1, 2, 3, 4], 2), 7.0);
        assert_eq!(list_schedule(&lpt, &[0, 2, 1, 3, 4], 2), 7.0);
        assert_eq!(list_schedule(&lpt, &[2, 3, 4, 0, 1], 2), 7.0);
    }

    #[test]
    fn serial_block_time_is_kept_and_one_worker_reproduces_the_measurement() {
        let mut report: BenchReport =
            serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap();
        // A serial tail of a tenth of each block's measured 1-thread time.
        for run in &mut report.runs {
            run.block_serial_ns = run.block_ns.iter().map(|ns| ns / 10).collect();
        }
        let ordered = |_: &str, txs: &[TxTrace]| (0..txs.len()).collect::<Vec<_>>();
        let predictions = predict(&report, &["ordered".into()], &[1, 64], &[1], &ordered);
        let run = report
            .runs
            .iter()
            .find(|r| r.threads == 1 && r.scheduler.as_deref() == Some("ordered"))
            .unwrap();
        let measured: u64 = run.block_ns.iter().sum();
        assert!((predictions[0].predicted_ns - measured as f64).abs() < 1.0);
        // With unlimited workers each block takes its serial tail plus its longest (scaled)
        // transaction.
        let floor: f64 = report
            .blocks
            .iter()
            .zip(&run.block_ns)
            .zip(&run.block_serial_ns)
            .map(|((b, &ns), &serial)| {
                let sum: u64 = b.tx.iter().map(|t| t.ns).sum();
                let longest = b.tx.iter().map(|t| t.ns).max().unwrap_or(0);
                let scale = (ns - serial) as f64 / sum as f64;
                serial as f64 + longest as f64 * scale
            })
            .sum();
        assert!((predictions[1].predicted_ns - floor).abs() < 1.0);
    }

    #[test]
    fn empty_block_takes_no_time() {
        assert_eq!(list_schedule(&[], &[], 4), 0.0);
    }
}
