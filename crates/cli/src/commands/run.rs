//! `gigagas run`: every block of a data set through the engine's pipeline in one
//! configuration (a unit is one block or a mega-block of K), verified; one line per block.

use crate::commands::db;
use crate::common::{
    available_cores, check_memory_node_store, load_with, parse_on_off, prepare_all, say, Console,
    DataArg, ModeArg, PoolArgs,
};
use crate::limits::{self, check_range};
use crate::output::{Input, Output};
use anyhow::{bail, Context, Result};
use clap::Args;
use gigagas_bench::{BlockCase, Mode};
use gigagas_engine::{IncrementalState, PipelineOptions, PipelineRun, RootMode, STAGES};
use gigagas_exec::{Scheduler, WorkerPool};
use std::path::PathBuf;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    data: DataArg,
    /// Execution mode.
    #[arg(long, value_enum, default_value = "parallel")]
    mode: ModeArg,
    /// Worker threads for parallel mode, 1 to 1024 (default: all cores); also the thread
    /// budget of sender recovery, verification and the parallel root.
    #[arg(long)]
    threads: Option<usize>,
    /// Dispatch order for parallel mode: ordered (default), gas-used or gas-limit.
    #[arg(long)]
    scheduler: Option<Scheduler>,
    /// Execute K consecutive blocks as one mega-block (parallel mode; BALs merged into one
    /// index space, every block verified, written and rooted on its own), 1 to 100000.
    /// Runs of consecutive block numbers are cut into chunks of K; blocks without a
    /// consecutive neighbour run alone.
    #[arg(long, value_name = "K")]
    mega: Option<usize>,
    /// The state root computed after each block: none (default: the pure-execution
    /// condition), serial, parallel (storage tries hashed in parallel, then the account trie)
    /// or incremental (branch nodes kept between blocks, only the paths the block's BAL names
    /// re-hashed; complete states that ship their BALs, i.e. generated chains; the default
    /// with --state disk). On complete states the root must equal the header's; on
    /// touched-only pre-states (mainnet data) it is the root of that partial state and is
    /// not compared.
    #[arg(long, value_name = "MODE")]
    root: Option<gigagas_engine::RootMode>,
    /// Overlap the stages of neighbouring blocks (on, the default: the senders of block N+1
    /// are recovered and block N is written and hashed while the next executes) or run each
    /// block's stages back to back (off).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pipeline: Option<bool>,
    /// Write the run (gigagas.pipeline/1: every block's stage spans and checks, `phases_ns`,
    /// `e2e_mgas_per_s`, `mgas_per_s` of execution alone, the bound) to FILE (`-` for
    /// stdout, the block lines then go to stderr), after every block verified.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Where the state lives: memory, or disk (the MDBX store in --db, read by execution and
    /// written with the incremental root after each verified block; created from the first
    /// block's pre-state when absent, resumed from its head otherwise).
    #[arg(long, value_enum, default_value = "memory")]
    state: db::StateArg,
    /// The store directory for --state disk.
    #[arg(long, value_name = "DBDIR")]
    db: Option<PathBuf>,
    /// With --state disk: when the store's writes become durable. every-block: each block's
    /// commit is flushed to disk before the next block's write; every-N (N from 2 to
    /// 1000000): flushed after every N-th block and at the end; end: once, after the last
    /// block (inside the timed run). Every block is committed (read by the next) as soon as it
    /// verified in all three; a crash loses the blocks since the last flush and leaves the
    /// store whole at that block. Default: every-3, as a node batches (reth saves 3 blocks per
    /// durable commit); every-block with --cold, the only policy it takes.
    #[arg(long, value_name = "POLICY")]
    sync: Option<gigagas_engine::SyncPolicy>,
    /// With --state disk and the pipeline on: block N+1 reads block N's writes from memory
    /// while N's write transaction commits (on, the default, as a node keeps its newest
    /// blocks in memory), so its prefetch, execution and root overlap N's write; off: N+1
    /// starts only once N is in the store (to measure what the overlay gains).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    overlay: Option<bool>,
    /// With --state disk and --pipeline off: read every unit's state cold. Before the first
    /// block and after each commit the store is closed, the OS page cache of its files
    /// dropped (posix_fadvise, no privileges needed; Linux only) and the store reopened,
    /// outside the timed run. Each block line shows the bytes read from the device
    /// (`/proc/self/io`).
    #[arg(long)]
    cold: bool,
    /// What each block's access list carries: keys (default; EIP-7928 as specified: every key
    /// prefetched, then parallel), full (keys plus the pre-block value of everything read,
    /// supplied with the block: no account or slot read while executing), writes (post-values
    /// without read keys: what is only read goes to the store on demand) or none (no BAL:
    /// sequential execution building none, every read on demand, write and root from
    /// execution's changes). In memory the first three execute alike; with --state disk each
    /// block line counts the reads that went to the store while executing.
    #[arg(long, value_name = "VARIANT", default_value = "keys")]
    bal: gigagas_engine::BalVariant,
    #[command(flatten)]
    pool: PoolArgs,
}

/// `run`'s flags as the engine's options, checked before anything is loaded.
fn options(args: &RunArgs) -> Result<PipelineOptions> {
    let mode = match (args.bal, args.mode) {
        (gigagas_engine::BalVariant::None, _) => {
            if let Some(flag) = [
                ("--threads", args.threads.is_some()),
                ("--scheduler", args.scheduler.is_some()),
                ("--mega", args.mega.is_some()),
            ]
            .into_iter()
            .find_map(|(flag, given)| given.then_some(flag))
            {
                bail!("{flag} does not apply to --bal none: without a list the block runs sequentially");
            }
            Mode::SequentialNoBal
        }
        (_, ModeArg::Sequential) => {
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
            Mode::Sequential
        }
        (_, ModeArg::Parallel) => Mode::Parallel {
            threads: match args.threads {
                Some(t) => limits::threads("--threads", t)?,
                None => available_cores().min(limits::MAX_THREADS),
            },
            scheduler: args.scheduler.unwrap_or(Scheduler::Ordered),
        },
    };
    let disk = matches!(args.state, db::StateArg::Disk);
    if args.cold && !disk {
        bail!(
            "--cold needs --state disk --db DBDIR (it drops the page cache of the store's files)"
        );
    }
    if let Some(sync) = args.sync {
        if !disk {
            bail!("--sync {sync} needs --state disk --db DBDIR (it says when the store's writes are flushed)");
        }
        if args.cold && sync != gigagas_engine::SyncPolicy::EveryBlock {
            bail!("--sync {sync} with --cold: cold mode closes the store after every block, which flushes it outside the timed run; only every-block is measured honestly there");
        }
    }
    let overlap = args.pipeline.unwrap_or(true);
    if let Some(overlay) = args.overlay {
        let on = if overlay { "on" } else { "off" };
        if !disk {
            bail!("--overlay {on} needs --state disk --db DBDIR (it holds the store's last block in memory while it commits)");
        }
        if !overlap {
            bail!("--overlay {on} needs --pipeline on: with the stages back to back no block starts before the last one committed");
        }
    }
    if args.cold && overlap {
        bail!("--cold needs --pipeline off: the page cache is dropped between blocks, which overlapped stages of other blocks would straddle");
    }
    Ok(PipelineOptions {
        root: match (disk, args.root) {
            // The store's root is incremental, split in parallel at every node with two or
            // more changes: both names mean it there.
            (true, None | Some(RootMode::Incremental | RootMode::Parallel)) => {
                RootMode::Incremental
            }
            (true, Some(other)) => bail!(
                "--state disk keeps the state root in the store (incremental); --root {} cannot be combined with it",
                other.name()
            ),
            (false, root) => root.unwrap_or(RootMode::None),
        },
        overlap,
        mega: args
            .mega
            .map(|k| check_range("--mega", k, 1, limits::MAX_MEGA))
            .transpose()?
            .unwrap_or(1),
        bal: args.bal,
        ..PipelineOptions::new(mode)
    })
}

pub fn exec(args: RunArgs) -> Result<()> {
    let options = options(&args)?;
    let json = match &args.json {
        Some(path) => Some(Output::new(
            "--json",
            path,
            &Input::all("--data", args.data.data.iter()),
        )?),
        None => None,
    };
    // A store built from this chain's genesis allocation (`db init`) already hashed it.
    let known = match (args.state, args.db.as_deref(), args.data.data.as_deref()) {
        (db::StateArg::Disk, Some(db), Some(data)) => db::known_genesis(db, data),
        _ => None,
    };
    if let Some(k) = known {
        crate::note!(
            "genesis state root {}: recorded by the store at --db, built from this allocation (keccak {}); not hashed again",
            k.state_root,
            k.alloc_digest
        );
    }
    let mut dataset = load_with(&args.data, known)?;
    let sync = args.sync.unwrap_or(if args.cold {
        gigagas_engine::SyncPolicy::EveryBlock
    } else {
        gigagas_engine::SyncPolicy::NODE
    });
    let disk = match db::open_for_run(
        args.state,
        args.db.as_deref(),
        Some(options.root),
        args.data.data.as_deref(),
        &mut dataset,
        sync,
    )? {
        db::ForRun::Memory => None,
        db::ForRun::Done => return Ok(()),
        db::ForRun::Disk(d) if args.cold => Some(
            (*d).make_cold()
                .map_err(anyhow::Error::msg)
                .context("--cold")?,
        ),
        db::ForRun::Disk(d) => Some((*d).with_overlay(args.overlay.unwrap_or(true))),
    };
    // The pipeline's stages keep the pool busy between blocks: a spinning worker measured
    // 13-16% slower end to end (docs/results/warm-workers-2core.md), so the spin is used only
    // with the stages back to back.
    let pool = match options.mode {
        Mode::Parallel { threads, .. } if options.overlap => Some(WorkerPool::new(threads)),
        Mode::Parallel { threads, .. } => {
            Some(WorkerPool::with_warm_spin(threads, args.pool.warm_spin))
        }
        Mode::Sequential | Mode::SequentialNoBal => None,
    };
    // Mega-blocks run every unit on the pool (the small-block threshold is per block).
    let small_block_gas = if options.mega > 1 {
        0
    } else {
        args.pool.small_block_gas
    };
    if disk.is_none() && options.root == RootMode::Incremental {
        check_memory_node_store(&dataset)?;
    }
    let cases = prepare_all(&dataset, small_block_gas)?;
    let disk = disk.map(|d| Box::new(d) as Box<dyn IncrementalState>);
    let run = gigagas_engine::run_pipeline_with(&cases, &options, pool.as_ref(), disk)?;
    let console = Console::for_output(json.as_ref());
    print_run(
        console,
        &cases,
        &run,
        (args.state == db::StateArg::Disk).then_some(sync),
    );
    if let Some(json) = json {
        let phases = run.phases_ns();
        let value = serde_json::json!({
            "schema": "gigagas.pipeline/1",
            "data": dataset.name,
            "mega": options.mega,
            "sync": (args.state == db::StateArg::Disk).then(|| sync.to_string()),
            "run": run,
            "phases_ns": phases,
            "e2e_mgas_per_s": run.e2e_mgas_per_s(),
            "mgas_per_s": run.gas() as f64 / phases["execute"].max(1) as f64 * 1e3,
            "bound_ns": run.bound_ns(),
            "percent_of_bound": run.percent_of_bound(),
        });
        json.write(&serde_json::to_vec_pretty(&value)?)?;
    }
    Ok(())
}

/// One line per block (its stages, what it verified), then the per-stage totals and the
/// end-to-end figure.
/// The run's block lines and summary; `sync` is the store's policy (`None`: in memory).
fn print_run(
    console: Console,
    cases: &[BlockCase<'_>],
    run: &PipelineRun,
    sync: Option<gigagas_engine::SyncPolicy>,
) {
    let disk = sync.is_some();
    let ms = |ns: u64| ns as f64 / 1e6;
    let shown: Vec<&str> = STAGES
        .iter()
        .copied()
        .filter(|s| match *s {
            "prefetch" => disk,
            "write" | "root" => run.root != RootMode::None,
            _ => true,
        })
        .collect();
    for (b, case) in run.blocks.iter().zip(cases) {
        let stage = |s: &str| b.stages.get(s).map_or(0.0, |span| ms(span.nanos()));
        let stages: Vec<String> = shown
            .iter()
            .map(|s| match *s {
                "execute" if b.unit != b.number => format!("execute (mega-block from {})", b.unit),
                s => format!("{s} {:.3}", stage(s)),
            })
            .collect();
        let root = match (b.state_root, b.root_checked) {
            (Some(r), true) => format!("  root {r} = header"),
            (Some(r), false) => format!("  root {r} (partial pre-state: not compared)"),
            (None, _) => String::new(),
        };
        let read = match (disk, b.read_bytes) {
            (true, Some(bytes)) => format!("  read {:.1} MiB", bytes as f64 / (1 << 20) as f64),
            _ => String::new(),
        };
        let read = match b.demand_reads {
            Some(n) => format!("{read}  {n} reads on demand"),
            None => read,
        };
        say!(
            console,
            "block {:>9} {:<10} {:>5} txs {:>7.2} Mgas  {} ms{read}{root}  verified ({})",
            b.number,
            case.fork(),
            b.txs,
            b.gas as f64 / 1e6,
            stages.join("  "),
            b.checks,
        );
    }
    let phases = run.phases_ns();
    let total: u64 = phases.values().sum();
    let shares: Vec<String> = shown
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
    say!(
        console,
        "stages (busy, summed over blocks): {}",
        shares.join(", ")
    );
    if run.untimed_ns > 0 {
        say!(
            console,
            "left out of the wall time: {:.1} ms between blocks (dropping the store's page cache)",
            ms(run.untimed_ns)
        );
    }
    if let Some(sync) = sync {
        say!(
            console,
            "writes made durable: --sync {sync}{}",
            if run.final_sync_ns > 0 {
                format!(
                    " (waiting for the last flush, {:.1} ms, is in the wall time)",
                    ms(run.final_sync_ns)
                )
            } else {
                String::new()
            }
        );
    }
    let exec_ns = phases["execute"];
    say!(
        console,
        "total: {} blocks, {} txs, {:.1} Mgas verified ({}, bal {}, root {}, pipeline {}{}) in {:.1} ms: end-to-end {:.0} Mgas/s (execute stage alone {:.0} Mgas/s); {:.0}% of the pipeline bound ({:.1} ms)",
        run.blocks.len(),
        run.blocks.iter().map(|b| b.txs).sum::<usize>(),
        run.gas() as f64 / 1e6,
        run.mode,
        run.bal,
        run.root.name(),
        if run.overlap { "on" } else { "off" },
        if run.overlay { ", overlay on" } else { "" },
        ms(run.wall_ns),
        run.e2e_mgas_per_s(),
        run.gas() as f64 / exec_ns.max(1) as f64 * 1e3,
        run.percent_of_bound(),
        ms(run.bound_ns()),
    );
}
