//! Order statistics over repeated measurements.

/// Median of `values` (mean of the two middle values for an even count); `None` when empty.
pub fn median(values: &[u64]) -> Option<u64> {
    percentile(values, 50.0)
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
}
