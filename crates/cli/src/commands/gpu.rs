//! `gigagas gpu`: sender recovery on an NVIDIA GPU (`gigagas-gpu`). `gpu info` opens the
//! device; `gpu check` compares the GPU (or, with `--host`, the kernel compiled for the CPU)
//! with libsecp256k1 on random and adversarial signatures; `gpu bench` measures recoveries per
//! second on the GPU and the CPU. Without a GPU, `info`, `check` and `bench` fail naming what is
//! missing; `check --host` and `bench --cpu-only` still run.

use crate::common::{note, out};
use crate::output::Output;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use gigagas_gpu::{bench, suite, GpuRecoverer};
use std::path::PathBuf;
use std::time::Instant;

/// Most signatures one `gpu check` generates (about 150 bytes each, with the reference).
const MAX_SIGNATURES: usize = 20_000_000;
/// Largest batch of `gpu bench`.
const MAX_BATCH: usize = 10_000_000;

/// `gigagas gpu ...`.
#[derive(Args)]
pub struct GpuArgs {
    #[command(subcommand)]
    command: GpuCommand,
}

#[derive(Subcommand)]
enum GpuCommand {
    /// Open the GPU (load the CUDA driver and NVRTC, compile the kernel, upload the table of G)
    /// and print its name; fails naming what is missing.
    Info,
    /// Recover random and adversarial signatures on the GPU and compare every address with
    /// libsecp256k1's; fails on any difference.
    Check(CheckArgs),
    /// Recoveries per second on the GPU (transfers included, and the kernel alone) against
    /// libsecp256k1 on 1 and all CPU threads, per batch size.
    Bench(BenchArgs),
}

#[derive(Args)]
struct CheckArgs {
    /// Random signatures (the adversarial ones are added), at most 20,000,000.
    #[arg(long, default_value_t = 1_000_000, value_parser = parse_count)]
    signatures: usize,
    /// Seed of the random signatures.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Run the kernel compiled for this CPU instead of the GPU (no GPU needed; slow: about
    /// 0.1–0.3 ms per signature and core).
    #[arg(long)]
    host: bool,
    /// Also write the report as JSON to this file (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct BenchArgs {
    /// Batch sizes, comma-separated (each at most 10,000,000).
    #[arg(long, value_delimiter = ',', default_value = "100,1000,10000,45000,100000", value_parser = parse_batch)]
    batch_sizes: Vec<usize>,
    /// CPU thread counts, comma-separated (default: 1 and all).
    #[arg(long, value_delimiter = ',', value_parser = parse_threads)]
    threads: Option<Vec<usize>>,
    /// Timed GPU runs per batch (median reported), after one warm-up.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeats: u32,
    /// Timed CPU runs per batch and thread count (median reported).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    cpu_repeats: u32,
    /// Measure the CPU rows only (no GPU needed).
    #[arg(long)]
    cpu_only: bool,
    /// Seed of the signatures.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the report as JSON (`gigagas.gpu-bench/1`) to this file (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn parse_count(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n > MAX_SIGNATURES {
        return Err(format!("at most {MAX_SIGNATURES}"));
    }
    Ok(n)
}

fn parse_batch(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n == 0 || n > MAX_BATCH {
        return Err(format!("a batch is 1 to {MAX_BATCH} signatures"));
    }
    Ok(n)
}

fn parse_threads(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n == 0 || n > 1024 {
        return Err("1 to 1024 threads".into());
    }
    Ok(n)
}

/// Runs `gigagas gpu ...`.
pub fn exec(args: GpuArgs) -> Result<()> {
    match args.command {
        GpuCommand::Info => info(),
        GpuCommand::Check(a) => check(a),
        GpuCommand::Bench(a) => bench_cmd(a),
    }
}

fn open() -> Result<GpuRecoverer> {
    let t = Instant::now();
    let gpu = GpuRecoverer::open().context("gpu")?;
    note!(
        "GPU: {} (compute capability {}.{}), kernel compiled and table uploaded in {:.2} s",
        gpu.device_name(),
        gpu.compute_capability().0,
        gpu.compute_capability().1,
        t.elapsed().as_secs_f64()
    );
    Ok(gpu)
}

fn info() -> Result<()> {
    let gpu = open()?;
    out!("{}", gpu.device_name());
    Ok(())
}

fn check(args: CheckArgs) -> Result<()> {
    let output = args
        .json
        .as_ref()
        .map(|p| Output::new("--json", p, &[]))
        .transpose()?;
    let gpu = if args.host { None } else { Some(open()?) };
    let t = Instant::now();
    let cases = suite::suite(args.signatures, args.seed);
    note!(
        "{} signatures ({} random, {} adversarial) generated in {:.1} s",
        cases.len(),
        args.signatures,
        cases.len() - args.signatures,
        t.elapsed().as_secs_f64()
    );
    let inputs = suite::inputs(&cases);
    let t = Instant::now();
    let (backend, got) = match &gpu {
        Some(g) => (g.device_name().to_owned(), g.recover(&inputs)?),
        None => (
            "host build of the kernel".to_owned(),
            gigagas_gpu::host::recover(&inputs).map_err(anyhow::Error::msg)?,
        ),
    };
    let report = suite::compare(&backend, &cases, &got, t.elapsed().as_secs_f64());
    out!(
        "{}: {} signatures, {} recovered and {} rejected by libsecp256k1, {} differences ({:.2} s; libsecp256k1 {:.2} s on {} threads)",
        report.backend,
        report.total,
        report.recovered,
        report.rejected,
        report.differences,
        report.backend_s,
        report.reference_s,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for c in &report.classes {
        out!(
            "  {:<28} {:>9} signatures {:>9} recovered {:>6} differences",
            c.class,
            c.total,
            c.recovered,
            c.differences
        );
    }
    for e in &report.examples {
        out!("  difference: {e}");
    }
    if let Some(o) = output {
        o.write(&serde_json::to_vec_pretty(&report)?)?;
    }
    if report.differences > 0 {
        bail!(
            "{} of {} signatures differ from libsecp256k1",
            report.differences,
            report.total
        );
    }
    Ok(())
}

fn bench_cmd(args: BenchArgs) -> Result<()> {
    let output = args
        .json
        .as_ref()
        .map(|p| Output::new("--json", p, &[]))
        .transpose()?;
    let gpu = if args.cpu_only { None } else { Some(open()?) };
    let mut opts = bench::BenchOptions {
        batch_sizes: args.batch_sizes,
        gpu_repeats: args.repeats as usize,
        cpu_repeats: args.cpu_repeats as usize,
        seed: args.seed,
        ..Default::default()
    };
    if let Some(t) = args.threads {
        opts.cpu_threads = t;
    }
    note!(
        "generating {} signed signatures...",
        opts.batch_sizes.iter().max().copied().unwrap_or(0)
    );
    let report = bench::run(&opts, gpu.as_ref(), &mut |row| {
        let mut line = format!("batch {:>8}:", row.batch);
        if let Some(g) = &row.gpu {
            line.push_str(&format!(
                " GPU {:.1} µs total ({:.0} rec/s), kernel {:.1} µs ({:.0} rec/s), in {:.1} µs, out {:.1} µs, verified {};",
                g.total_us, g.per_s_total, g.kernel_us, g.per_s_kernel, g.transfer_in_us, g.transfer_out_us, g.verified
            ));
        }
        for c in &row.cpu {
            line.push_str(&format!(
                " CPU {}t {:.2} µs/rec ({:.0} rec/s);",
                c.threads, c.us_per_recovery, c.per_s
            ));
        }
        out!("{line}");
    })?;
    out!("\ndevice: {}\n", report.device);
    out!("{}", bench::markdown(&report));
    if let Some(o) = output {
        o.write(&serde_json::to_vec_pretty(&report)?)?;
    }
    if report
        .rows
        .iter()
        .any(|r| r.gpu.as_ref().is_some_and(|g| !g.verified))
    {
        bail!("the GPU's addresses differ from libsecp256k1's in some batch (see `verified`)");
    }
    Ok(())
}
