//! A/B comparison of two bench results: per configuration, the change in throughput with a
//! bootstrap 95% confidence interval over whole repeats, and a verdict that counts only when
//! the interval clears a practical floor.

use crate::{stats::median, BenchReport, RunReport};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Verdict for one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// B is faster: the whole interval is above +floor.
    Faster,
    /// B is slower: the whole interval is below −floor.
    Slower,
    /// The interval reaches inside ±floor.
    NoChange,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Faster => "faster",
            Self::Slower => "slower",
            Self::NoChange => "no change",
        })
    }
}

/// Comparison of one configuration present in both results.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// `sequential` or `parallel/<threads>t/<scheduler>`.
    pub config: String,
    /// Mgas/s in A and in B (medians).
    pub mgas_a: f64,
    /// See `mgas_a`.
    pub mgas_b: f64,
    /// Relative throughput change B vs A (0.05 = B 5% faster), from the medians.
    pub change: f64,
    /// Bootstrap 95% interval of `change`.
    pub ci: (f64, f64),
    /// Verdict against the floor.
    pub verdict: Verdict,
}

/// Bootstrap 95% interval of the relative throughput change between two sets of repeat
/// times (same work): resample each set with replacement, take medians, and use
/// median(a)/median(b) − 1. Deterministic for a given `seed`.
pub fn bootstrap_change(a: &[u64], b: &[u64], iterations: usize, seed: u64) -> (f64, f64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let resample = |xs: &[u64], rng: &mut StdRng| -> f64 {
        let pick: Vec<u64> = (0..xs.len())
            .map(|_| xs[rng.random_range(0..xs.len())])
            .collect();
        median(&pick).unwrap_or(0) as f64
    };
    let mut changes: Vec<f64> = (0..iterations.max(1))
        .map(|_| {
            let (ma, mb) = (resample(a, &mut rng), resample(b, &mut rng));
            ma / mb.max(1.0) - 1.0
        })
        .collect();
    changes.sort_by(f64::total_cmp);
    let at = |q: f64| changes[((changes.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

/// Verdict of an interval against a floor (0.02 = 2%).
pub fn verdict((lo, hi): (f64, f64), floor: f64) -> Verdict {
    if lo > floor {
        Verdict::Faster
    } else if hi < -floor {
        Verdict::Slower
    } else {
        Verdict::NoChange
    }
}

fn config(run: &RunReport) -> String {
    let recovery = if run.recover_senders == "inline" {
        "+recovery"
    } else {
        ""
    };
    let mega = if run.mega > 1 {
        format!("/mega{}", run.mega)
    } else {
        String::new()
    };
    match &run.scheduler {
        Some(s) => format!("{}/{}t/{s}{mega}{recovery}", run.mode, run.threads),
        None => format!("{}{recovery}", run.mode),
    }
}

/// Pools several results of the same data set (e.g. the two A runs of an A-B-B-A sequence)
/// into one: per configuration present in all of them, the repeats are concatenated and the
/// median and Mgas/s recomputed, so drift between the runs becomes part of the spread the
/// bootstrap sees instead of a bias of one side. The first result supplies everything else.
pub fn pool(reports: &[&BenchReport]) -> Result<BenchReport, String> {
    let (first, rest) = reports
        .split_first()
        .ok_or_else(|| "nothing to pool".to_owned())?;
    let numbers = |r: &BenchReport| r.blocks.iter().map(|b| b.number).collect::<Vec<_>>();
    if let Some(other) = rest.iter().find(|r| numbers(r) != numbers(first)) {
        return Err(format!(
            "cannot pool results of different blocks ({} vs {})",
            first.data, other.data
        ));
    }
    let mut pooled = (*first).clone();
    pooled.runs.retain_mut(|run| {
        let key = config(run);
        for other in rest {
            match other.runs.iter().find(|r| config(r) == key) {
                Some(r) => run.repeat_ns.extend_from_slice(&r.repeat_ns),
                None => return false,
            }
        }
        run.median_ns = median(&run.repeat_ns).unwrap_or(run.median_ns).max(1);
        run.mgas_per_s = run.total_gas as f64 / run.median_ns as f64 * 1e3;
        true
    });
    pooled.settings.repeats = pooled.runs.first().map_or(0, |r| r.repeat_ns.len());
    Ok(pooled)
}

/// Compares every configuration present in both `a` and `b` (B relative to A).
pub fn compare(a: &BenchReport, b: &BenchReport, floor: f64) -> Vec<Comparison> {
    a.runs
        .iter()
        .filter_map(|ra| {
            let rb = b.runs.iter().find(|rb| config(rb) == config(ra))?;
            let change = ra.median_ns as f64 / rb.median_ns.max(1) as f64 - 1.0;
            let ci = bootstrap_change(&ra.repeat_ns, &rb.repeat_ns, 2000, 0x6761_7367);
            Some(Comparison {
                config: config(ra),
                mgas_a: ra.mgas_per_s,
                mgas_b: rb.mgas_per_s,
                change,
                ci,
                verdict: verdict(ci, floor),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_concatenates_repeats_of_shared_configurations() {
        let text = include_str!("../tests/fixtures/tiny-report.json");
        let a: BenchReport = serde_json::from_str(text).unwrap();
        let mut b = a.clone();
        for run in &mut b.runs {
            run.repeat_ns = run.repeat_ns.iter().map(|t| t * 3).collect();
        }
        b.runs.pop();
        let pooled = pool(&[&a, &b]).unwrap();
        assert_eq!(
            pooled.runs.len(),
            a.runs.len() - 1,
            "only shared configurations"
        );
        let run = &pooled.runs[0];
        assert_eq!(run.repeat_ns.len(), 2 * a.runs[0].repeat_ns.len());
        assert_eq!(run.median_ns, median(&run.repeat_ns).unwrap());
        assert!((run.mgas_per_s - run.total_gas as f64 / run.median_ns as f64 * 1e3).abs() < 1e-9);
        let mut other = a.clone();
        other.blocks[0].number += 1;
        assert!(pool(&[&a, &other]).is_err());
        assert!(pool(&[]).is_err());
    }

    #[test]
    fn identical_samples_are_no_change() {
        let a = [100, 102, 98, 101, 99, 100, 103];
        let ci = bootstrap_change(&a, &a, 2000, 1);
        assert!(ci.0 <= 0.0 && ci.1 >= 0.0, "{ci:?}");
        assert_eq!(verdict(ci, 0.02), Verdict::NoChange);
    }

    #[test]
    fn clearly_faster_and_slower_are_detected() {
        let slow = [200, 204, 198, 202, 199, 201];
        let fast = [100, 101, 99, 102, 100, 98];
        let ci = bootstrap_change(&slow, &fast, 2000, 2);
        // Times halved: throughput doubled, the interval sits around +100%.
        assert!(ci.0 > 0.9 && ci.1 < 1.1, "{ci:?}");
        assert_eq!(verdict(ci, 0.02), Verdict::Faster);
        assert_eq!(
            verdict(bootstrap_change(&fast, &slow, 2000, 3), 0.02),
            Verdict::Slower
        );
    }

    #[test]
    fn small_change_below_floor_is_no_change() {
        let a = [1000, 1001, 999, 1000, 1002];
        let b = [990, 991, 989, 990, 992]; // ~1% faster, tight
        let ci = bootstrap_change(&a, &b, 2000, 4);
        assert!(ci.0 > 0.0, "a tight 1% change is real: {ci:?}");
        assert_eq!(
            verdict(ci, 0.02),
            Verdict::NoChange,
            "but below the 2% floor"
        );
        assert_eq!(verdict(ci, 0.005), Verdict::Faster);
    }

    #[test]
    fn bootstrap_is_deterministic() {
        let a = [5, 9, 7, 6, 8];
        let b = [4, 8, 6, 5, 9];
        assert_eq!(
            bootstrap_change(&a, &b, 500, 7),
            bootstrap_change(&a, &b, 500, 7)
        );
    }
}
