//! Order statistics over repeated measurements.

/// Median of `values` (mean of the two middle values for an even count); `None` when empty.
pub fn median(values: &[u64]) -> Option<u64> {
    percentile(values, 50.0)
}

/// Σ over positions of the median of that position's values across `passes` (each pass one
/// value per transaction, in the same order): the typical total, robust to a value that one
/// pass stretched. Positions beyond the shortest pass are ignored; 0 without passes.
pub fn sum_of_medians(passes: &[Vec<u64>]) -> u64 {
    let len = passes.iter().map(Vec::len).min().unwrap_or(0);
    let mut column = Vec::with_capacity(passes.len());
    (0..len)
        .map(|i| {
            column.clear();
            column.extend(passes.iter().map(|p| p[i]));
            median(&column).unwrap_or(0)
        })
        .sum()
}

/// Linear-interpolated percentile `p` (0–100) of `values`; `None` when empty.
pub fn percentile(values: &[u64], p: f64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = (p / 100.0).clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    let frac = rank - lo as f64;
    Some((sorted[lo] as f64 + (sorted[hi] as f64 - sorted[lo] as f64) * frac).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7]), Some(7));
        assert_eq!(median(&[3, 1, 2]), Some(2));
        assert_eq!(median(&[4, 1, 3, 2]), Some(3)); // 2.5 rounds to 3
        assert_eq!(percentile(&[10, 20, 30, 40, 50], 90.0), Some(46));
        assert_eq!(percentile(&[10, 20, 30, 40, 50], 0.0), Some(10));
        assert_eq!(percentile(&[10, 20, 30, 40, 50], 100.0), Some(50));
    }

    #[test]
    fn sum_of_medians_ignores_one_stretched_value() {
        // Transaction 1 was preempted once: the sum of its medians is the typical total.
        let passes = vec![vec![10, 20, 30], vec![11, 900, 30], vec![9, 21, 31]];
        assert_eq!(sum_of_medians(&passes), 10 + 21 + 30);
        // A pass that is shorter limits the positions compared.
        assert_eq!(sum_of_medians(&[vec![5, 6], vec![7]]), 6);
        assert_eq!(sum_of_medians(&[]), 0);
    }
}
