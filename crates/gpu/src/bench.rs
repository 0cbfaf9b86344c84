//! Recoveries per second: the GPU (transfers included, and the kernel alone) against
//! libsecp256k1 on 1 and all CPU threads, at several batch sizes, on real signatures (random
//! keys signing random hashes). Every GPU answer is checked against the CPU's.

use crate::{cpu, GpuError, GpuRecoverer, GpuTiming, SigInput};
use alloy_primitives::{B256, U256};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use secp256k1::{Message, SecretKey, SECP256K1};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Signatures per batch, one row each (the 100, 1k, 10k, 45k, 100k).
    pub batch_sizes: Vec<usize>,
    /// CPU thread counts (rayon pools), one column each.
    pub cpu_threads: Vec<usize>,
    /// Timed GPU runs per batch (after one untimed warm-up); the median is reported.
    pub gpu_repeats: usize,
    /// Timed CPU runs per batch and thread count; the median is reported.
    pub cpu_repeats: usize,
    /// Seed of the signatures.
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        let all = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut cpu_threads = vec![1];
        if all > 1 {
            cpu_threads.push(all);
        }
        BenchOptions {
            batch_sizes: vec![100, 1_000, 10_000, 45_000, 100_000],
            cpu_threads,
            gpu_repeats: 10,
            cpu_repeats: 3,
            seed: 1,
        }
    }
}

/// The GPU's figures for one batch (medians over the repeats).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GpuRow {
    /// Everything: packing, copy in, kernel, copy out, unpacking (µs).
    pub total_us: f64,
    /// The kernel alone (µs).
    pub kernel_us: f64,
    /// Copy to the GPU (µs).
    pub transfer_in_us: f64,
    /// Copy back (µs).
    pub transfer_out_us: f64,
    /// Host packing and unpacking (µs).
    pub host_us: f64,
    /// Recoveries per second, everything included.
    pub per_s_total: f64,
    /// Recoveries per second of the kernel alone.
    pub per_s_kernel: f64,
    /// Every answer equal to libsecp256k1's (false: the row's rate means nothing).
    pub verified: bool,
}

/// libsecp256k1 on one thread count for one batch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuRow {
    /// rayon threads.
    pub threads: usize,
    /// Median wall time for the batch (µs).
    pub batch_us: f64,
    /// Wall time per recovery (µs).
    pub us_per_recovery: f64,
    /// Recoveries per second.
    pub per_s: f64,
}

/// One batch size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BatchRow {
    /// Signatures in the batch.
    pub batch: usize,
    /// The GPU's figures (absent when no GPU was measured).
    pub gpu: Option<GpuRow>,
    /// The CPU's, per thread count.
    pub cpu: Vec<CpuRow>,
}

/// The whole measurement (`gigagas.gpu-bench/1`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BenchReport {
    /// `gigagas.gpu-bench/1`.
    pub schema: String,
    /// The GPU measured, or why none was.
    pub device: String,
    /// CPU threads the machine offers.
    pub available_threads: usize,
    /// One row per batch size.
    pub rows: Vec<BatchRow>,
}

/// `n` real signatures: random keys signing random hashes (deterministic for `seed`).
pub fn signatures(n: usize, seed: u64) -> Vec<SigInput> {
    const BLOCK: usize = 1024;
    let parts: Vec<Vec<SigInput>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut rng = StdRng::seed_from_u64(
                seed.wrapping_add(b as u64)
                    .wrapping_mul(0x2545_F491_4F6C_DD1D),
            );
            let end = ((b + 1) * BLOCK).min(n);
            (b * BLOCK..end)
                .filter_map(|_| {
                    let sk = SecretKey::from_byte_array(&rng.random::<[u8; 32]>()).ok()?;
                    let hash = rng.random::<[u8; 32]>();
                    let sig = SECP256K1.sign_ecdsa_recoverable(&Message::from_digest(hash), &sk);
                    let (recid, c) = sig.serialize_compact();
                    Some(SigInput {
                        hash: B256::from(hash),
                        r: U256::from_be_slice(&c[..32]),
                        s: U256::from_be_slice(&c[32..]),
                        y_parity: i32::from(recid) & 1 == 1,
                    })
                })
                .collect()
        })
        .collect();
    parts.into_iter().flatten().collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn per_s(n: usize, us: f64) -> f64 {
    if us > 0.0 {
        n as f64 / (us / 1e6)
    } else {
        0.0
    }
}

/// Measures every batch size: the CPU rows always, the GPU rows when `gpu` is given.
/// `progress` gets each row as soon as it is measured. Errors when the GPU fails or a CPU
/// thread pool cannot be built.
pub fn run(
    opts: &BenchOptions,
    gpu: Option<&GpuRecoverer>,
    progress: &mut dyn FnMut(&BatchRow),
) -> Result<BenchReport, GpuError> {
    let max = opts.batch_sizes.iter().copied().max().unwrap_or(0);
    let sigs = signatures(max, opts.seed);
    let mut report = BenchReport {
        schema: "gigagas.gpu-bench/1".into(),
        device: gpu.map_or_else(
            || "none (CPU rows only)".into(),
            |g| g.device_name().to_owned(),
        ),
        available_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        rows: Vec::new(),
    };
    let pools = opts
        .cpu_threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t.max(1))
                .build()
                .map(|p| (t.max(1), p))
                .map_err(|e| GpuError::Library(format!("a pool of {t} threads: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for &batch in &opts.batch_sizes {
        let batch_sigs = &sigs[..batch.min(sigs.len())];
        let n = batch_sigs.len();
        let mut row = BatchRow {
            batch: n,
            ..Default::default()
        };
        let mut reference = None;
        for (threads, pool) in &pools {
            let mut times = Vec::new();
            for _ in 0..opts.cpu_repeats.max(1) {
                let t = Instant::now();
                let out = pool.install(|| cpu::recover(batch_sigs));
                times.push(t.elapsed().as_secs_f64() * 1e6);
                reference.get_or_insert(out);
            }
            let us = median(times);
            row.cpu.push(CpuRow {
                threads: *threads,
                batch_us: us,
                us_per_recovery: if n > 0 { us / n as f64 } else { 0.0 },
                per_s: per_s(n, us),
            });
        }
        if let Some(gpu) = gpu {
            let (first, _) = gpu.recover_timed(batch_sigs)?; // warm-up
            let want = match reference {
                Some(r) => r,
                None => cpu::recover(batch_sigs),
            };
            let mut verified = first == want;
            let mut timings: Vec<GpuTiming> = Vec::new();
            for _ in 0..opts.gpu_repeats.max(1) {
                let (out, t) = gpu.recover_timed(batch_sigs)?;
                verified &= out == want;
                timings.push(t);
            }
            let us = |f: fn(&GpuTiming) -> u64| {
                median(timings.iter().map(|t| f(t) as f64 / 1e3).collect())
            };
            let total_us = us(GpuTiming::total_ns);
            let kernel_us = us(|t| t.kernel_ns);
            row.gpu = Some(GpuRow {
                total_us,
                kernel_us,
                transfer_in_us: us(|t| t.transfer_in_ns),
                transfer_out_us: us(|t| t.transfer_out_ns),
                host_us: us(|t| t.host_ns),
                per_s_total: per_s(n, total_us),
                per_s_kernel: per_s(n, kernel_us),
                verified,
            });
        }
        progress(&row);
        report.rows.push(row);
    }
    Ok(report)
}

/// The report as a Markdown table: one row per batch size.
pub fn markdown(report: &BenchReport) -> String {
    let mut head = String::from("| batch |");
    let mut rule = String::from("| ---: |");
    let has_gpu = report.rows.iter().any(|r| r.gpu.is_some());
    if has_gpu {
        head.push_str(
            " GPU total µs | GPU rec/s | kernel µs | kernel rec/s | in µs | out µs | verified |",
        );
        rule.push_str(" ---: | ---: | ---: | ---: | ---: | ---: | :---: |");
    }
    let threads: Vec<usize> = report
        .rows
        .first()
        .map(|r| r.cpu.iter().map(|c| c.threads).collect())
        .unwrap_or_default();
    for t in &threads {
        head.push_str(&format!(" CPU {t}t µs/rec | CPU {t}t rec/s |"));
        rule.push_str(" ---: | ---: |");
    }
    if has_gpu {
        if let Some(t) = threads.last() {
            head.push_str(&format!(" GPU total vs {t}t |"));
            rule.push_str(" ---: |");
        }
    }
    let mut out = format!("{head}\n{rule}\n");
    for r in &report.rows {
        let mut line = format!("| {} |", r.batch);
        if let Some(g) = &r.gpu {
            line.push_str(&format!(
                " {:.1} | {:.0} | {:.1} | {:.0} | {:.1} | {:.1} | {} |",
                g.total_us,
                g.per_s_total,
                g.kernel_us,
                g.per_s_kernel,
                g.transfer_in_us,
                g.transfer_out_us,
                if g.verified { "yes" } else { "**NO**" }
            ));
        } else if has_gpu {
            line.push_str(" – | – | – | – | – | – | – |");
        }
        for c in &r.cpu {
            line.push_str(&format!(" {:.2} | {:.0} |", c.us_per_recovery, c.per_s));
        }
        if let (Some(g), Some(c)) = (&r.gpu, r.cpu.last()) {
            if c.per_s > 0.0 {
                line.push_str(&format!(" {:.1}× |", g.per_s_total / c.per_s));
            } else {
                line.push_str(" – |");
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
