//! The block cost model: block time ≈ a·gas + b·slots_changed + c·txs + d, fitted by
//! non-negative least squares, with R² and bootstrap 95% intervals over blocks.

use rand::{rngs::StdRng, Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// One block's explanatory variables and measured time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockSample {
    /// Gas spent before refunds.
    pub gas: f64,
    /// Storage slots whose value changed.
    pub slots_changed: f64,
    /// Transactions.
    pub txs: f64,
    /// Measured time, ns.
    pub time_ns: f64,
}

impl BlockSample {
    fn features(&self) -> [f64; 4] {
        [self.gas, self.slots_changed, self.txs, 1.0]
    }
}

/// Fitted coefficients (all ≥ 0), goodness of fit and bootstrap intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// ns per unit of gas.
    pub ns_per_gas: f64,
    /// ns per changed slot.
    pub ns_per_slot: f64,
    /// ns per transaction.
    pub ns_per_tx: f64,
    /// ns per block (intercept).
    pub ns_per_block: f64,
    /// Coefficient of determination.
    pub r2: f64,
    /// Bootstrap 95% intervals of the four coefficients, in the order above.
    pub ci95: [(f64, f64); 4],
    /// Number of blocks fitted.
    pub blocks: usize,
}

impl CostModel {
    /// Whether the model explains too little to be used (R² < 0.5).
    pub fn is_poor(&self) -> bool {
        self.r2 < 0.5
    }

    /// Fits the model; `None` with fewer than 5 blocks. Bootstrap resamples blocks
    /// `iterations` times (deterministic for `seed`).
    pub fn fit(samples: &[BlockSample], iterations: usize, seed: u64) -> Option<Self> {
        if samples.len() < 5 {
            return None;
        }
        let coef = nnls4(samples);
        let mean = samples.iter().map(|s| s.time_ns).sum::<f64>() / samples.len() as f64;
        let (mut ss_res, mut ss_tot) = (0.0, 0.0);
        for s in samples {
            let predicted: f64 = s.features().iter().zip(&coef).map(|(x, c)| x * c).sum();
            ss_res += (s.time_ns - predicted).powi(2);
            ss_tot += (s.time_ns - mean).powi(2);
        }
        let r2 = if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            0.0
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut draws: [Vec<f64>; 4] = Default::default();
        for _ in 0..iterations {
            let resample: Vec<BlockSample> = (0..samples.len())
                .map(|_| samples[rng.random_range(0..samples.len())])
                .collect();
            for (k, c) in nnls4(&resample).into_iter().enumerate() {
                draws[k].push(c);
            }
        }
        let ci95 = draws.map(|mut d| {
            if d.is_empty() {
                return (f64::NAN, f64::NAN);
            }
            d.sort_by(f64::total_cmp);
            let at = |q: f64| d[((d.len() - 1) as f64 * q).round() as usize];
            (at(0.025), at(0.975))
        });
        Some(Self {
            ns_per_gas: coef[0],
            ns_per_slot: coef[1],
            ns_per_tx: coef[2],
            ns_per_block: coef[3],
            r2,
            ci95,
            blocks: samples.len(),
        })
    }
}

/// Non-negative least squares for the four features: with four variables every active set
/// can be tried, so the exact optimum is the best non-negative unconstrained solution over
/// the 15 non-empty subsets (columns scaled to unit maximum for conditioning).
fn nnls4(samples: &[BlockSample]) -> [f64; 4] {
    let scale: [f64; 4] = std::array::from_fn(|j| {
        samples
            .iter()
            .map(|s| s.features()[j].abs())
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE)
    });
    let rows: Vec<([f64; 4], f64)> = samples
        .iter()
        .map(|s| {
            let f = s.features();
            (std::array::from_fn(|j| f[j] / scale[j]), s.time_ns)
        })
        .collect();
    let mut best = ([0.0; 4], f64::INFINITY);
    for mask in 1u32..16 {
        let cols: Vec<usize> = (0..4).filter(|j| mask & (1 << j) != 0).collect();
        let Some(sol) = least_squares(&rows, &cols) else {
            continue;
        };
        if sol.iter().any(|&c| c < 0.0) {
            continue;
        }
        let mut coef = [0.0; 4];
        for (k, &j) in cols.iter().enumerate() {
            coef[j] = sol[k];
        }
        let residual: f64 = rows
            .iter()
            .map(|(x, y)| (y - x.iter().zip(&coef).map(|(a, b)| a * b).sum::<f64>()).powi(2))
            .sum();
        if residual < best.1 {
            best = (coef, residual);
        }
    }
    std::array::from_fn(|j| best.0[j] / scale[j])
}

/// Ordinary least squares on the chosen columns via the normal equations (Gaussian
/// elimination with partial pivoting); `None` when singular.
fn least_squares(rows: &[([f64; 4], f64)], cols: &[usize]) -> Option<Vec<f64>> {
    let n = cols.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for (x, y) in rows {
        for (i, &ci) in cols.iter().enumerate() {
            for (j, &cj) in cols.iter().enumerate() {
                a[i][j] += x[ci] * x[cj];
            }
            a[i][n] += x[ci] * y;
        }
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let factor = row[col] / pivot_row[col];
                for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= factor * p;
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(noise: f64) -> Vec<BlockSample> {
        // time = 30 ns/gas + 1500 ns/slot + 400 ns/tx + 20_000 ns, with deterministic noise.
        (0..60)
            .map(|i| {
                let gas = 1e6 + (i as f64 * 7919.0 % 29.0) * 1e6;
                let slots_changed = 10.0 + (i as f64 * 104_729.0 % 997.0);
                let txs = 1.0 + (i as f64 * 31.0 % 400.0);
                let wiggle = ((i * 2654435761u64 as usize) % 1000) as f64 / 1000.0 - 0.5;
                let time_ns = 30.0 * gas + 1500.0 * slots_changed + 400.0 * txs + 20_000.0;
                BlockSample {
                    gas,
                    slots_changed,
                    txs,
                    time_ns: time_ns * (1.0 + noise * wiggle),
                }
            })
            .collect()
    }

    #[test]
    fn recovers_known_coefficients() {
        let m = CostModel::fit(&synthetic(0.0), 200, 1).unwrap();
        assert!((m.ns_per_gas - 30.0).abs() < 1e-6, "{m:?}");
        assert!((m.ns_per_slot - 1500.0).abs() < 1e-3, "{m:?}");
        assert!((m.ns_per_tx - 400.0).abs() < 1e-3, "{m:?}");
        assert!((m.ns_per_block - 20_000.0).abs() < 1.0, "{m:?}");
        assert!(m.r2 > 0.999999);
    }

    #[test]
    fn noisy_fit_stays_close_and_intervals_cover_the_truth() {
        let m = CostModel::fit(&synthetic(0.05), 500, 2).unwrap();
        assert!((m.ns_per_gas - 30.0).abs() / 30.0 < 0.05, "{m:?}");
        assert!(m.ci95[0].0 <= 30.0 && 30.0 <= m.ci95[0].1, "{m:?}");
        assert!(m.r2 > 0.95 && !m.is_poor());
    }

    #[test]
    fn coefficients_are_never_negative() {
        // Time falls with tx count: OLS would give a negative tx coefficient.
        let samples: Vec<BlockSample> = (0..20)
            .map(|i| BlockSample {
                gas: 1e6 * (i + 1) as f64,
                slots_changed: 5.0,
                txs: (40 - i) as f64,
                time_ns: 10.0 * 1e6 * (i + 1) as f64 - 1000.0 * (40 - i) as f64,
            })
            .collect();
        let m = CostModel::fit(&samples, 50, 3).unwrap();
        assert!(
            m.ns_per_gas >= 0.0
                && m.ns_per_slot >= 0.0
                && m.ns_per_tx >= 0.0
                && m.ns_per_block >= 0.0
        );
        assert_eq!(m.ns_per_tx, 0.0);
    }

    #[test]
    fn poor_fits_are_flagged() {
        let samples: Vec<BlockSample> = (0..30)
            .map(|i| BlockSample {
                gas: 1e6,
                slots_changed: 1.0,
                txs: 1.0,
                time_ns: if i % 2 == 0 { 1e6 } else { 9e6 },
            })
            .collect();
        assert!(CostModel::fit(&samples, 50, 4).unwrap().is_poor());
        assert!(CostModel::fit(&samples[..3], 50, 4).is_none());
    }
}
