//! `gigagas run`: execute and verify every block of a data set in one configuration.

use crate::commands::db;
use crate::common::{available_cores, load, parse_on_off, prepare_all, DataArg, ModeArg, PoolArgs};
use crate::limits::{self, check_range};
use crate::output::{Input, Output};
use anyhow::{bail, Context, Result};
use clap::Args;
use gigagas_bench::{prepare, run_block, BlockCase, Mode};
use gigagas_data::Dataset;
use gigagas_exec::{Scheduler, WorkerPool};
use std::path::PathBuf;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    data: DataArg,
    /// Execution mode.
    #[arg(long, value_enum, default_value = "parallel")]
    mode: ModeArg,
    /// Worker threads for parallel mode, 1 to 1024 (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Dispatch order for parallel mode: ordered (default), gas-used or gas-limit.
    #[arg(long)]
    scheduler: Option<Scheduler>,
    /// Execute K consecutive blocks as one mega-block (parallel mode; BALs merged into one
    /// index space, every block verified on its own). Runs of consecutive block numbers are
    /// cut into chunks of K; blocks without a consecutive neighbour run alone.
    #[arg(long, value_name = "K")]
    mega: Option<usize>,
    /// Run the whole block pipeline (recover → execute → verify → write → root) with this
    /// state root after each block: none, serial or parallel. Prints each stage's time, the
    /// end-to-end Mgas/s and the pipeline's bound. On complete states (generated chains) the
    /// root must equal the header's; on touched-only pre-states (mainnet data) it is the root
    /// of that partial state and is not compared.
    #[arg(long, value_name = "MODE")]
    root: Option<gigagas_engine::RootMode>,
    /// With the pipeline: overlap stages across blocks (on, the default) or run each block's
    /// stages back to back (off, for the comparison).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pipeline: Option<bool>,
    /// With --root/--pipeline: write the run (gigagas.pipeline/1: every block's stage spans,
    /// `phases_ns`, `e2e_mgas_per_s`, `mgas_per_s` of execution alone, the bound) to FILE
    /// (`-` for stdout), after every block verified.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Where the state root's state lives: memory, or disk (the store in --db; needs
    /// --root incremental or parallel; created from the first block's pre-state when absent,
    /// resumed from its head otherwise; each block written in one transaction).
    #[arg(long, value_enum, default_value = "memory")]
    state: db::StateArg,
    /// The store directory for --state disk.
    #[arg(long, value_name = "DBDIR")]
    db: Option<PathBuf>,
    /// With --state disk and --pipeline off: read every block's state cold. Before the first
    /// block and after each commit the store is closed, the OS page cache of its files
    /// dropped (posix_fadvise, no privileges needed; Linux only) and the store reopened,
    /// outside the timed run. Each block line shows the bytes read from the device
    /// (`/proc/self/io`).
    #[arg(long)]
    cold: bool,
    #[command(flatten)]
    pool: PoolArgs,
}

/// What `run` does, from its flags: checked before anything is loaded.
struct RunOptions {
    mode: Mode,
    /// Mega-block size (parallel only).
    mega: Option<usize>,
}

impl RunOptions {
    fn from_args(args: &RunArgs) -> Result<Self> {
        match args.mode {
            ModeArg::Sequential => {
                let given: Vec<&str> = [
                    ("--threads", args.threads.is_some()),
                    ("--scheduler", args.scheduler.is_some()),
                    ("--mega", args.mega.is_some()),
                ]
                .into_iter()
                .filter_map(|(flag, given)| given.then_some(flag))
                .collect();
                if !given.is_empty() {
                    bail!(
                        "{} only appl{} to --mode parallel (sequential mode runs one transaction after another on one thread)",
                        given.join(" and "),
                        if given.len() == 1 { "ies" } else { "y" }
                    );
                }
                Ok(Self {
                    mode: Mode::Sequential,
                    mega: None,
                })
            }
            ModeArg::Parallel => Ok(Self {
                mode: Mode::Parallel {
                    threads: match args.threads {
                        Some(t) => limits::threads("--threads", t)?,
                        None => available_cores().min(limits::MAX_THREADS),
                    },
                    scheduler: args.scheduler.unwrap_or(Scheduler::Ordered),
                },
                mega: args
                    .mega
                    .map(|k| check_range("--mega", k, 1, limits::MAX_MEGA))
                    .transpose()?,
            }),
        }
    }
}

pub fn exec(args: RunArgs) -> Result<()> {
    let options = RunOptions::from_args(&args)?;
    let json = match &args.json {
        Some(_) if args.root.is_none() && args.pipeline.is_none() => {
            bail!("--json on run needs --root or --pipeline (per-block timings of the pipeline); bench --json measures execution")
        }
        Some(path) => Some(Output::new(
            "--json",
            path,
            &Input::all("--data", args.data.data.iter()),
        )?),
        None => None,
    };
    if (args.root.is_some() || args.pipeline.is_some()) && options.mega.is_some() {
        bail!("--mega and --root/--pipeline cannot be combined yet (the pipeline runs one block per unit)");
    }
    if args.cold && !matches!(args.state, db::StateArg::Disk) {
        bail!(
            "--cold needs --state disk --db DBDIR (it drops the page cache of the store's files)"
        );
    }
    if args.cold && args.pipeline != Some(false) {
        bail!("--cold needs --pipeline off: the page cache is dropped between blocks, which overlapped stages of other blocks would straddle");
    }
    let mut dataset = load(&args.data)?;
    let disk = match db::open_for_run(
        args.state,
        args.db.as_deref(),
        args.root,
        args.data.data.as_deref(),
        &mut dataset,
    )? {
        db::ForRun::Memory => None,
        db::ForRun::Done => return Ok(()),
        db::ForRun::Disk(d) if args.cold => Some(
            d.make_cold()
                .map_err(anyhow::Error::msg)
                .context("--cold")?,
        ),
        db::ForRun::Disk(d) => Some(d),
    };
    let mode = options.mode;
    if args.root == Some(gigagas_engine::RootMode::Incremental) || disk.is_some() {
        if let Some(b) = dataset
            .blocks
            .iter()
            .find(|b| !b.complete_state || b.access_list.is_none())
        {
            bail!(
                "--root incremental needs complete states that ship their block access lists (generated chains); block {} of {} has {}; use --root serial or parallel",
                b.number(),
                dataset.name,
                if b.complete_state { "no BAL" } else { "a touched-only pre-state" }
            );
        }
    }
    if args.root.is_some() || args.pipeline.is_some() {
        let pipeline = gigagas_engine::PipelineOptions {
            mode,
            root: match disk {
                Some(_) => gigagas_engine::RootMode::Incremental,
                None => args.root.unwrap_or(gigagas_engine::RootMode::None),
            },
            overlap: args.pipeline.unwrap_or(true),
            threads: mode.threads(),
        };
        return run_pipeline(
            &dataset,
            &pipeline,
            json.as_ref(),
            disk,
            args.pool.small_block_gas,
        );
    }
    if let (Some(k), Mode::Parallel { threads, scheduler }) = (options.mega, mode) {
        return run_mega_blocks(&dataset, k, threads, scheduler, args.pool.warm_spin);
    }
    let pool = match mode {
        Mode::Parallel { threads, .. } => {
            Some(WorkerPool::with_warm_spin(threads, args.pool.warm_spin))
        }
        Mode::Sequential => None,
    };
    let (mut gas, mut nanos, mut txs) = (0u64, 0u64, 0usize);
    let mut parent: Option<BlockCase<'_>> = None;
    for block in &dataset.blocks {
        let mut case = prepare(block)?;
        case.plan.set_small_block_gas(args.pool.small_block_gas);
        if let Some(parent) = &parent {
            gigagas_engine::check_parent(&case, parent)?;
        }
        let run = run_block(&case, mode, pool.as_ref())?;
        let checks = match (case.header_check.receipts_root, case.state_root_checked) {
            (true, true) => "gas, bloom, receipts root, state root",
            (true, false) => "gas, bloom, receipts root",
            (false, _) => "gas, bloom (pre-Byzantium: no receipts root)",
        };
        let bal = match mode {
            Mode::Sequential => "",
            Mode::Parallel { .. } => ", BAL, = sequential",
        };
        println!(
            "block {:>9} {:<10} {:>5} txs {:>7.2} Mgas  verified ({checks}{bal})  {:>8.3} ms {:>7.0} Mgas/s",
            case.number(),
            case.fork(),
            case.prepared.txs.len(),
            block.gas_used() as f64 / 1e6,
            run.exec_nanos as f64 / 1e6,
            block.gas_used() as f64 / run.exec_nanos.max(1) as f64 * 1e3,
        );
        gas += block.gas_used();
        nanos += run.exec_nanos;
        txs += case.prepared.txs.len();
        parent = Some(case);
    }
    println!(
        "total: {} blocks, {txs} txs, {:.1} Mgas verified ({mode}) in {:.1} ms: {:.0} Mgas/s",
        dataset.blocks.len(),
        gas as f64 / 1e6,
        nanos as f64 / 1e6,
        gas as f64 / nanos.max(1) as f64 * 1e3
    );
    Ok(())
}

/// `run --root/--pipeline`: every block through the engine's pipeline; a per-block timeline
/// and the per-stage totals.
fn run_pipeline(
    dataset: &Dataset,
    options: &gigagas_engine::PipelineOptions,
    json: Option<&Output>,
    disk: Option<gigagas_engine::DiskRoot>,
    small_block_gas: u64,
) -> Result<()> {
    // No warm spin in the pipeline: its stages keep the pool busy between blocks, and a
    // spinning worker measured 13-16% slower end to end (docs/results/warm-workers-2core.md).
    let pool = match options.mode {
        Mode::Parallel { threads, .. } => Some(WorkerPool::new(threads)),
        Mode::Sequential => None,
    };
    let cases = prepare_all(dataset, small_block_gas)?;
    let disk_run = disk.is_some();
    let disk = disk.map(|d| Box::new(d) as Box<dyn gigagas_engine::IncrementalState>);
    let run = gigagas_engine::run_pipeline_with(&cases, options, pool.as_ref(), disk)?;
    let ms = |ns: u64| ns as f64 / 1e6;
    for b in &run.blocks {
        let stage = |s: &str| b.stages.get(s).map_or(0.0, |span| ms(span.nanos()));
        let root = match (b.state_root, b.root_checked) {
            (Some(r), true) => format!("root {r} = header"),
            (Some(r), false) => format!("root {r} (partial pre-state: not compared)"),
            (None, _) => String::new(),
        };
        println!(
            "block {:>9} {:>5} txs {:>7.2} Mgas  recover {:>7.3}  prefetch {:>7.3}  execute {:>8.3}  verify {:>7.3}  write {:>7.3}  root {:>8.3} ms{read}  {root}",
            b.number,
            b.txs,
            b.gas as f64 / 1e6,
            stage("recover"),
            stage("prefetch"),
            stage("execute"),
            stage("verify"),
            stage("write"),
            stage("root"),
            read = match (disk_run, b.read_bytes) {
                (true, Some(bytes)) => format!("  read {:.1} MiB", bytes as f64 / (1 << 20) as f64),
                _ => String::new(),
            },
        );
    }
    let phases = run.phases_ns();
    let total: u64 = phases.values().sum();
    let shares: Vec<String> = gigagas_engine::STAGES
        .iter()
        .map(|s| {
            let ns = phases[s];
            format!(
                "{s} {:.1} ms ({:.0}%)",
                ms(ns),
                ns as f64 / total.max(1) as f64 * 100.0
            )
        })
        .collect();
    println!("stages (busy, summed over blocks): {}", shares.join(", "));
    if run.untimed_ns > 0 {
        println!(
            "left out of the wall time: {:.1} ms between blocks (dropping the store's page cache)",
            ms(run.untimed_ns)
        );
    }
    let exec_ns = phases["execute"];
    println!(
        "total: {} blocks, {:.1} Mgas verified ({}, root {}, pipeline {}) in {:.1} ms: end-to-end {:.0} Mgas/s (execution alone {:.0} Mgas/s); {:.0}% of the pipeline bound ({:.1} ms)",
        run.blocks.len(),
        run.gas() as f64 / 1e6,
        run.mode,
        run.root.name(),
        if run.overlap { "on" } else { "off" },
        ms(run.wall_ns),
        run.e2e_mgas_per_s(),
        run.gas() as f64 / exec_ns.max(1) as f64 * 1e3,
        run.percent_of_bound(),
        ms(run.bound_ns()),
    );
    if let Some(json) = json {
        let value = serde_json::json!({
            "schema": "gigagas.pipeline/1",
            "data": dataset.name,
            "run": run,
            "phases_ns": phases,
            "e2e_mgas_per_s": run.e2e_mgas_per_s(),
            "mgas_per_s": run.gas() as f64 / exec_ns.max(1) as f64 * 1e3,
            "bound_ns": run.bound_ns(),
            "percent_of_bound": run.percent_of_bound(),
        });
        json.write(&serde_json::to_vec_pretty(&value)?)?;
    }
    Ok(())
}

fn run_mega_blocks(
    dataset: &Dataset,
    k: usize,
    threads: usize,
    scheduler: Scheduler,
    warm_spin: std::time::Duration,
) -> Result<()> {
    let pool = WorkerPool::with_warm_spin(threads, warm_spin);
    // Mega-blocks run every unit on the pool (the threshold is per block).
    let cases = prepare_all(dataset, 0)?;
    let (mut gas, mut nanos) = (0u64, 0u64);
    for unit in gigagas_bench::mega_plan(&cases, k)? {
        let chunk = &cases[unit.blocks.clone()];
        let run = gigagas_bench::run_mega(&cases, &unit, &pool, scheduler)?;
        let chunk_gas: u64 = chunk.iter().map(|c| c.prepared.input.gas_used()).sum();
        let txs: usize = chunk.iter().map(|c| c.prepared.txs.len()).sum();
        println!(
            "mega-block {:>6}..{:<6} {} blocks {:>7} txs {:>9.2} Mgas  verified per block (gas, bloom, receipts root, BAL, = sequential)  {:>9.3} ms {:>7.0} Mgas/s",
            chunk[0].number(),
            chunk[chunk.len() - 1].number(),
            chunk.len(),
            txs,
            chunk_gas as f64 / 1e6,
            run.exec_nanos as f64 / 1e6,
            chunk_gas as f64 / run.exec_nanos.max(1) as f64 * 1e3,
        );
        gas += chunk_gas;
        nanos += run.exec_nanos;
    }
    println!(
        "total: {} blocks in mega-blocks of {k}, {:.1} Mgas verified (parallel/{threads}t/{}) in {:.1} ms: {:.0} Mgas/s",
        cases.len(),
        gas as f64 / 1e6,
        scheduler,
        nanos as f64 / 1e6,
        gas as f64 / nanos.max(1) as f64 * 1e3
    );
    Ok(())
}
