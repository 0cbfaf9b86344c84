//! A/B comparison of two bench results: per configuration, the change in throughput with a
//! bootstrap 95% confidence interval over whole repeats, and a verdict that counts only when
//! the interval clears a practical floor.

use crate::{stats::median, BenchReport, RunReport};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Fewest repeats (pooled) each side needs for a verdict.
pub const MIN_REPEATS: usize = 3;

/// Verdict for one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// B is faster: the whole interval is above +floor.
    Faster,
    /// B is slower: the whole interval is below −floor.
    Slower,
    /// No change that matters: the whole interval lies within ±floor.
    NoChange,
    /// The interval reaches across ±floor (it holds both a change that matters and none):
    /// the repeats do not settle it. `repeats`: about how many repeats per side would, if
    /// the spread stays as measured ([`repeats_to_settle`]); `None` when the change sits on
    /// the floor itself, which no number of repeats settles.
    Inconclusive {
        /// Repeats per side that would settle it (at most [`crate::report::MAX_REPEATS`]).
        repeats: Option<usize>,
    },
    /// A side has fewer than [`MIN_REPEATS`] repeats: no verdict.
    TooFewRepeats,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Faster => f.write_str("faster"),
            Self::Slower => f.write_str("slower"),
            Self::NoChange => f.write_str("no change"),
            Self::Inconclusive { repeats: Some(n) } => {
                write!(f, "inconclusive: ~{n} repeats per side would settle it")
            }
            Self::Inconclusive { repeats: None } => f.write_str(
                "inconclusive: the change is at the floor (more repeats will not settle it)",
            ),
            Self::TooFewRepeats => f.write_str("inconclusive: too few repeats"),
        }
    }
}

/// About how many repeats per side would shrink the interval `(lo, hi)` around the measured
/// change `change`, measured with `n` repeats per side, enough to settle the verdict against
/// `floor`: the interval narrows as 1/√n around the change, and must end up inside ±floor
/// (*no change*, when the change is within the floor) or wholly beyond it (*faster* /
/// *slower*). `None` when the change is within 0.1% of the floor itself, or more than
/// [`crate::report::MAX_REPEATS`] would be needed.
pub fn repeats_to_settle((lo, hi): (f64, f64), change: f64, floor: f64, n: usize) -> Option<usize> {
    let (below, above) = ((change - lo).max(0.0), (hi - change).max(0.0));
    if n == 0 || (change.abs() - floor).abs() < 0.001 {
        return None;
    }
    // The factor the interval must shrink by.
    let shrink = if change.abs() < floor {
        let up = if above > 0.0 {
            (floor - change) / above
        } else {
            f64::INFINITY
        };
        let down = if below > 0.0 {
            (floor + change) / below
        } else {
            f64::INFINITY
        };
        up.min(down)
    } else if change > 0.0 {
        if below > 0.0 {
            (change - floor) / below
        } else {
            f64::INFINITY
        }
    } else if above > 0.0 {
        (-floor - change) / above
    } else {
        f64::INFINITY
    };
    if shrink.is_nan() || shrink <= 0.0 {
        return None;
    }
    let needed = (n as f64 / (shrink * shrink)).ceil();
    (needed <= crate::report::MAX_REPEATS as f64).then(|| (needed as usize).max(n + 1))
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
    let mut pick: Vec<u64> = Vec::with_capacity(a.len().max(b.len()));
    let mut resample = |xs: &[u64], rng: &mut StdRng| -> f64 {
        pick.clear();
        pick.extend((0..xs.len()).map(|_| xs[rng.random_range(0..xs.len())]));
        median_in_place(&mut pick).unwrap_or(0) as f64
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

/// [`median`] by selection (linear time) instead of a sort; reorders `values`.
fn median_in_place(values: &mut [u64]) -> Option<u64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let (left, &mut upper, _) = values.select_nth_unstable(n / 2);
    if n % 2 == 1 {
        return Some(upper);
    }
    let lower = left.iter().copied().max().unwrap_or(upper);
    Some(((lower as f64 + upper as f64) / 2.0).round() as u64)
}

/// Verdict of an interval (around the measured `change`) against a floor (0.02 = 2%),
/// measured with `n` repeats per side (the fewer of the two): *faster* / *slower* when the whole interval is beyond the floor,
/// *no change* when it lies within ±floor, else *inconclusive* with the repeats that would
/// settle it.
pub fn verdict((lo, hi): (f64, f64), change: f64, floor: f64, n: usize) -> Verdict {
    if lo > floor {
        Verdict::Faster
    } else if hi < -floor {
        Verdict::Slower
    } else if lo >= -floor && hi <= floor {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive {
            repeats: repeats_to_settle((lo, hi), change, floor, n),
        }
    }
}

fn config(run: &RunReport) -> String {
    run.label()
}

/// Checks that `a` and `b` (called `names.0` and `names.1` in the error) measured the same
/// data: the same blocks (numbers, in order) with the same contents (gas used, transactions
/// and the hash of the BAL each built).
pub fn same_data(a: &BenchReport, b: &BenchReport, names: (&str, &str)) -> Result<(), String> {
    let (na, nb) = names;
    if a.blocks.len() != b.blocks.len() {
        return Err(format!(
            "{na} ({}) has {} blocks, {nb} ({}) has {}",
            a.data,
            a.blocks.len(),
            b.data,
            b.blocks.len()
        ));
    }
    for (x, y) in a.blocks.iter().zip(&b.blocks) {
        if x.number != y.number {
            return Err(format!(
                "{na} has block {} where {nb} has block {}",
                x.number, y.number
            ));
        }
        if x.gas_used != y.gas_used || x.txs != y.txs || x.bal_hash != y.bal_hash {
            return Err(format!(
                "block {} differs: {} txs, {} gas, BAL {} in {na} vs {} txs, {} gas, BAL {} in {nb}",
                x.number, x.txs, x.gas_used, x.bal_hash, y.txs, y.gas_used, y.bal_hash
            ));
        }
    }
    Ok(())
}

/// Refuses a run whose throughput cannot be compared: no gas, a zero repeat time, or a
/// non-finite or non-positive Mgas/s.
fn check_measurable(report: &BenchReport, run: &RunReport) -> Result<(), String> {
    let bad = run.total_gas == 0
        || run.median_ns == 0
        || run.repeat_ns.is_empty()
        || run.repeat_ns.contains(&0)
        || !run.mgas_per_s.is_finite()
        || run.mgas_per_s <= 0.0;
    if bad {
        return Err(format!(
            "{}: {} has no usable throughput (total gas {}, median {} ns, {} Mgas/s, {} repeats); a result with zero or non-finite throughput cannot be compared",
            report.data,
            config(run),
            run.total_gas,
            run.median_ns,
            run.mgas_per_s,
            run.repeat_ns.len()
        ));
    }
    Ok(())
}

/// Pools several results of the same data set (e.g. the two A runs of an A-B-B-A sequence)
/// into one: per configuration present in all of them, the repeats are concatenated and the
/// median and Mgas/s recomputed, so drift between the runs becomes part of the spread the
/// bootstrap sees instead of a bias of one side. The first result supplies everything else.
pub fn pool(reports: &[&BenchReport]) -> Result<BenchReport, String> {
    let (first, rest) = reports
        .split_first()
        .ok_or_else(|| "nothing to pool".to_owned())?;
    for other in rest {
        same_data(first, other, ("the first result", "another"))
            .map_err(|e| format!("cannot pool results of different data: {e}"))?;
    }
    let mut pooled = (*first).clone();
    let mut too_many = None;
    pooled.runs.retain_mut(|run| {
        let key = config(run);
        for other in rest {
            match other.runs.iter().find(|r| config(r) == key) {
                Some(r) => run.repeat_ns.extend_from_slice(&r.repeat_ns),
                None => return false,
            }
        }
        if run.repeat_ns.len() > crate::report::MAX_REPEATS && too_many.is_none() {
            too_many = Some(format!(
                "{key}: {} repeats pooled from {} results, above the limit of {} repeats per \
                 configuration (pool fewer files)",
                run.repeat_ns.len(),
                reports.len(),
                crate::report::MAX_REPEATS
            ));
        }
        run.median_ns = median(&run.repeat_ns).unwrap_or(run.median_ns);
        run.mgas_per_s = if run.median_ns > 0 {
            run.total_gas as f64 / run.median_ns as f64 * 1e3
        } else {
            0.0 // no usable time: `compare` refuses it
        };
        true
    });
    if let Some(e) = too_many {
        return Err(e);
    }
    pooled.settings.repeats = pooled.runs.first().map_or(0, |r| r.repeat_ns.len());
    Ok(pooled)
}

/// Compares every configuration present in both `a` and `b` (B relative to A). Refuses
/// results over different data ([`same_data`]) and configurations with zero or non-finite
/// throughput; a configuration with fewer than [`MIN_REPEATS`] repeats on either side gets
/// [`Verdict::TooFewRepeats`].
pub fn compare(a: &BenchReport, b: &BenchReport, floor: f64) -> Result<Vec<Comparison>, String> {
    for (name, report) in [("A", a), ("B", b)] {
        if report.blocks.is_empty() {
            return Err(format!(
                "{name} ({}) has no blocks: nothing was measured",
                report.data
            ));
        }
    }
    same_data(a, b, ("A", "B")).map_err(|e| format!("the results measured different data: {e}"))?;
    let mut rows = Vec::new();
    for ra in &a.runs {
        let Some(rb) = b.runs.iter().find(|rb| config(rb) == config(ra)) else {
            continue;
        };
        check_measurable(a, ra).map_err(|e| format!("A: {e}"))?;
        check_measurable(b, rb).map_err(|e| format!("B: {e}"))?;
        let change = ra.median_ns as f64 / rb.median_ns as f64 - 1.0;
        let ci = bootstrap_change(&ra.repeat_ns, &rb.repeat_ns, 2000, 0x6761_7367);
        let enough = ra.repeat_ns.len() >= MIN_REPEATS && rb.repeat_ns.len() >= MIN_REPEATS;
        rows.push(Comparison {
            config: config(ra),
            mgas_a: ra.mgas_per_s,
            mgas_b: rb.mgas_per_s,
            change,
            ci,
            verdict: if enough {
                verdict(
                    ci,
                    change,
                    floor,
                    ra.repeat_ns.len().min(rb.repeat_ns.len()),
                )
            } else {
                Verdict::TooFewRepeats
            },
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_needs_an_interval_that_supports_it() {
        assert_eq!(verdict((0.03, 0.08), 0.05, 0.02, 5), Verdict::Faster);
        assert_eq!(verdict((-0.08, -0.03), -0.05, 0.02, 5), Verdict::Slower);
        assert_eq!(verdict((-0.01, 0.015), 0.0, 0.02, 5), Verdict::NoChange);
        // The examples: −58%…+8% and −17%…+136% are not "no change".
        for (ci, change) in [
            ((-0.58, 0.08), -0.2),
            ((-0.17, 1.36), 0.3),
            ((-0.01, 0.03), 0.01),
        ] {
            assert!(
                matches!(verdict(ci, change, 0.02, 5), Verdict::Inconclusive { .. }),
                "{ci:?}"
            );
        }
        // Change 0, 4% either side: must shrink to 2%, so 4x the repeats.
        assert_eq!(repeats_to_settle((-0.04, 0.04), 0.0, 0.02, 5), Some(20));
        // Skewed: -18%…+22% around 0 (a ratio's interval): the wider side decides, (22/2)^2.
        assert_eq!(repeats_to_settle((-0.18, 0.22), 0.0, 0.02, 3), Some(363));
        // Change +5%, 6% below it: beyond the floor by 3%, so (6/3)^2 = 4x.
        assert_eq!(repeats_to_settle((-0.01, 0.11), 0.05, 0.02, 5), Some(20));
        // On the floor itself: nothing settles it.
        assert_eq!(repeats_to_settle((-0.02, 0.06), 0.02, 0.02, 5), None);
        let text = verdict((-0.04, 0.04), 0.0, 0.02, 5).to_string();
        assert!(
            text.contains("inconclusive") && text.contains("20 repeats"),
            "{text}"
        );
    }

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

    fn tiny() -> BenchReport {
        serde_json::from_str(include_str!("../tests/fixtures/tiny-report.json")).unwrap()
    }

    #[test]
    fn different_data_is_refused() {
        let a = tiny();
        let mut b = a.clone();
        b.blocks[0].bal_hash = "0x00".into();
        assert!(compare(&a, &b, 0.02)
            .unwrap_err()
            .contains("different data"));
        let mut c = a.clone();
        c.blocks.pop();
        assert!(compare(&a, &c, 0.02).is_err());
        c.blocks.clear();
        assert!(compare(&c, &c, 0.02).unwrap_err().contains("no blocks"));
        assert!(compare(&a, &a, 0.02).is_ok());
    }

    #[test]
    fn zero_throughput_is_refused() {
        let mut zero = tiny();
        for run in &mut zero.runs {
            run.repeat_ns = vec![0; 5];
            run.median_ns = 0;
            run.mgas_per_s = f64::NAN;
        }
        let err = compare(&zero, &zero, 0.02).unwrap_err();
        assert!(err.contains("zero or non-finite throughput"), "{err}");
    }

    #[test]
    fn too_few_repeats_get_no_verdict() {
        let mut a = tiny();
        for run in &mut a.runs {
            run.repeat_ns = vec![100, 100];
        }
        let mut b = a.clone();
        for run in &mut b.runs {
            run.repeat_ns = vec![50, 50];
            run.median_ns = 50;
        }
        let rows = compare(&a, &b, 0.02).unwrap();
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r.verdict == Verdict::TooFewRepeats));
        assert_eq!(
            Verdict::TooFewRepeats.to_string(),
            "inconclusive: too few repeats"
        );
    }

    #[test]
    fn identical_samples_are_no_change_only_when_the_interval_is_tight() {
        let tight = [1000, 1002, 998, 1001, 999, 1000, 1003];
        let ci = bootstrap_change(&tight, &tight, 2000, 1);
        assert!(ci.0 <= 0.0 && ci.1 >= 0.0, "{ci:?}");
        assert_eq!(verdict(ci, 0.0, 0.02, 7), Verdict::NoChange);
        // The same samples with a 5x wider spread: the interval reaches past ±2%.
        let noisy = [100, 110, 90, 105, 95, 100, 115];
        let ci = bootstrap_change(&noisy, &noisy, 2000, 1);
        match verdict(ci, 0.0, 0.02, 7) {
            Verdict::Inconclusive { repeats: Some(n) } => assert!(n > 7, "{n}"),
            other => panic!("{ci:?}: {other:?}"),
        }
    }

    #[test]
    fn clearly_faster_and_slower_are_detected() {
        let slow = [200, 204, 198, 202, 199, 201];
        let fast = [100, 101, 99, 102, 100, 98];
        let ci = bootstrap_change(&slow, &fast, 2000, 2);
        // Times halved: throughput doubled, the interval sits around +100%.
        assert!(ci.0 > 0.9 && ci.1 < 1.1, "{ci:?}");
        assert_eq!(verdict(ci, 1.0, 0.02, 6), Verdict::Faster);
        assert_eq!(
            verdict(bootstrap_change(&fast, &slow, 2000, 3), -0.5, 0.02, 6),
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
            verdict(ci, 0.01, 0.02, 6),
            Verdict::NoChange,
            "but below the 2% floor"
        );
        assert_eq!(verdict(ci, 0.01, 0.005, 5), Verdict::Faster);
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

    #[test]
    fn pooling_beyond_the_repeat_limit_is_refused() {
        let text = include_str!("../tests/fixtures/tiny-report.json");
        let mut a: BenchReport = serde_json::from_str(text).unwrap();
        for run in &mut a.runs {
            run.repeat_ns = vec![1_000; crate::report::MAX_REPEATS / 2 + 1];
        }
        let err = pool(&[&a, &a]).unwrap_err();
        assert!(err.contains("above the limit of 10000"), "{err}");
        assert!(pool(&[&a]).is_ok());
    }

    proptest::proptest! {
        /// The bootstrap's linear-time median is the median.
        #[test]
        fn selection_median_is_the_median(mut values in proptest::collection::vec(0u64..1_000_000, 0..50)) {
            let expected = median(&values);
            proptest::prop_assert_eq!(median_in_place(&mut values), expected);
        }
    }
}
