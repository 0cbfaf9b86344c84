//! `gigagas run`: every block of a data set through the engine's pipeline in one
//! configuration (a unit is one block or a mega-block of K), verified; one line per block.
//! The flags become one [`RunSpec`], validated before anything is loaded.

use crate::common::{
    available_cores, check_memory_node_store, load_with, note, out, parse_on_off, prepare_all, say,
    spec_error, Console, DataArg, ModeArg, PoolArgs,
};
use crate::limits;
use crate::output::{Input, Output};
use crate::store;
use anyhow::{Context, Result};
use clap::Args;
use gigagas_bench::BlockCase;
use gigagas_engine::{
    Execution, IncrementalState, PipelineRun, Recoverer, Resume, RootMode, RunSpec, StateKind,
    StateSpec, ValidState, STAGES,
};
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
    state: store::StateArg,
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
    /// With --state disk: the trie buffer's bound (bytes, or with K/M/G; 0 or off for
    /// none). Each block's accounts, slots, codes and head are written with the block under
    /// --sync; its trie-node writes are gathered across blocks in memory (later writes to a
    /// node replace earlier ones) and flushed as one sorted batch when the buffer reaches
    /// this bound and at the end. After a crash the store opens at its last whole block and
    /// rebuilds the unflushed tries from the flat state. Default 256M (with --cold: none,
    /// every block's nodes written with it, unless given); at least 1M, at most half this
    /// machine's memory.
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes)]
    trie_buffer: Option<u64>,
    /// With --state disk and a trie buffer: at the end of the run the buffer is journaled
    /// (on, the default): written as one sequential file beside the store (trie.journal,
    /// not synced: a cache the flat state rebuilds after a system crash), that the next run
    /// on the store takes as its trie buffer — geth's journal at shutdown; any other command
    /// that opens the store writes it into the trie tables first. Off: flushed into the trie
    /// tables as one batch (a random B-tree write of nearly every page its nodes live on).
    /// Both end with every block durable and the store whole.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    trie_journal: Option<bool>,
    /// With --state disk and the overlay: blocks written per write transaction (1 to 16;
    /// default 1, each block written at its commit). The blocks of a group are read from
    /// memory until the last one commits, then written at once: a page several of them
    /// change is copied and written once, as reth saves the blocks behind its persistence
    /// threshold in one transaction. With --sync every-N it must divide N. A crash loses
    /// the blocks held, as it loses those not yet synced.
    #[arg(long, value_name = "BLOCKS")]
    write_group: Option<usize>,
    /// With --state disk and a trie buffer: a write-ahead log of the flat state (on|off;
    /// default on with the overlapped pipeline and the overlay, one block per write; given,
    /// also with --pipeline off, --overlay off and --cold --trie-buffer SIZE). Each block's accounts, slots, codes, block hash and head are
    /// appended to the store's log (blocks.wal: one sequential record of what the block
    /// changed, durable under --sync) and held with its trie nodes in the trie buffer; the
    /// store's B-tree is written when the buffer fills (--trie-buffer), many blocks at once,
    /// as geth keeps its flat-state diffs in memory. Any command that opens the store to
    /// write it (a run, db verify, export) replays the log first.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    wal: Option<bool>,
    /// With --state disk and --pipeline off: read every unit's state cold. Before the first
    /// block and after each commit the store is closed, the OS page cache of its files
    /// dropped (posix_fadvise, no privileges needed; Linux only) and the store reopened,
    /// outside the timed run. Each block line shows the bytes read from the device
    /// (`/proc/self/io`).
    #[arg(long)]
    cold: bool,
    /// With --cold, what stays cached of the store's data file between blocks: dropped
    /// (nothing: every page a block reads comes from the device, the B-tree's branch pages
    /// included; a node's first block after a restart) or cached (the B-tree's branch pages,
    /// 1-2% of the file, read once before the first block: a node whose state is larger
    /// than its memory, whose cache never evicts the pages every lookup passes through).
    #[arg(long, value_name = "dropped|cached", value_parser = parse_cold_index)]
    cold_index: Option<gigagas_engine::disk::ColdIndex>,
    /// What each block's access list carries: keys (default; EIP-7928 as specified: every key
    /// prefetched, then parallel), full (keys plus the pre-block value of everything read,
    /// supplied with the block: no account or slot read while executing), writes (post-values
    /// without read keys: what is only read goes to the store on demand) or none (no BAL:
    /// sequential execution building none, every read on demand, write and root from
    /// execution's changes). In memory the first three execute alike; with --state disk each
    /// block line counts the reads that went to the store while executing.
    #[arg(long, value_name = "VARIANT", default_value = "keys")]
    bal: gigagas_engine::BalVariant,
    /// Where senders are recovered: cpu (libsecp256k1 on the thread budget, the default),
    /// gpu (an NVIDIA GPU through the CUDA driver; refused, naming what is missing, where
    /// none answers) or auto (the GPU when one answers, else the CPU; the run says which).
    #[arg(long, value_name = "BACKEND", default_value = "cpu")]
    recovery: gigagas_engine::RecoveryBackend,
    /// Threads of a pool of their own for verification, the roots and the commit, beside the
    /// --threads workers (0, the default: they share the workers' threads; with the pipeline
    /// on only).
    #[arg(long, value_name = "N")]
    stage_threads: Option<usize>,
    #[command(flatten)]
    pool: PoolArgs,
}

/// `run`'s flags as the engine's run spec (numeric flags within their bounds first, named as
/// every command names them).
fn spec(args: &RunArgs) -> Result<RunSpec> {
    if let Some(t) = args.threads {
        limits::threads("--threads", t)?;
    }
    if let Some(k) = args.mega {
        limits::check_range("--mega", k, 1, limits::MAX_MEGA)?;
    }
    if let Some(n) = args.stage_threads {
        limits::check_range("--stage-threads", n, 0, limits::MAX_THREADS)?;
    }
    Ok(RunSpec {
        execution: match args.mode {
            ModeArg::Sequential => Execution::Sequential,
            ModeArg::Parallel => Execution::Parallel,
        },
        threads: args.threads,
        scheduler: args.scheduler,
        mega: args.mega,
        root: args.root,
        bal: args.bal,
        pipeline: args.pipeline,
        state: StateSpec {
            kind: match args.state {
                store::StateArg::Memory => StateKind::Memory,
                store::StateArg::Disk => StateKind::Disk,
            },
            dir: args.db.clone(),
            sync: args.sync,
            overlay: args.overlay,
            cold: args.cold,
            cold_index: args.cold_index,
            trie_buffer: args.trie_buffer,
            trie_journal: args.trie_journal,
            write_group: args.write_group,
            wal: args.wal,
        },
        warm_spin: Some(args.pool.warm_spin),
        small_block_gas: Some(args.pool.small_block_gas),
        recovery: args.recovery,
        stage_threads: args.stage_threads,
    })
}

pub fn exec(args: RunArgs) -> Result<()> {
    // Every setting checked once, before anything is loaded or opened.
    let valid = spec(&args)?
        .validate(available_cores())
        .map_err(|e| spec_error(&e, &[]))?;
    let options = valid.options;
    let json = match &args.json {
        Some(path) => Some(Output::new(
            "--json",
            path,
            &Input::all("--data", args.data.data.iter()),
        )?),
        None => None,
    };
    crate::common::require_stdout("run", json.as_ref())?;
    let recovery = Recoverer::open(valid.recovery)
        .map_err(anyhow::Error::msg)
        .context("--recovery")?;
    if valid.recovery != gigagas_engine::RecoveryBackend::Cpu {
        note!(
            "senders recovered on the {} (--recovery {})",
            recovery.describe(),
            valid.recovery
        );
    }
    let disk_dir = match &valid.state {
        ValidState::Disk { dir, .. } => Some(dir.clone()),
        ValidState::Memory => None,
    };
    // A store built from this chain's genesis allocation (`db init`) already hashed it.
    let known = match (disk_dir.as_deref(), args.data.data.as_deref()) {
        (Some(db), Some(data)) => store::known_genesis(db, data),
        _ => None,
    };
    if let Some(k) = known {
        note!(
            "genesis state root {}: recorded by the store at --db, built from this allocation (keccak {}); not hashed again",
            k.state_root,
            k.alloc_digest
        );
    }
    let mut dataset = load_with(&args.data, known)?;
    let disk = match &disk_dir {
        Some(db) => {
            store::create_for_run(db, args.data.data.as_deref(), &dataset)?;
            let resumed = gigagas_engine::resume_store(&valid.state, &mut dataset)
                .map_err(anyhow::Error::msg)
                .context("--db")?;
            match resumed {
                Resume::Done { head } => {
                    out!(
                        "{}: the store already holds block {} (state root {}): nothing to run",
                        db.display(),
                        head.number,
                        head.state_root
                    );
                    return Ok(());
                }
                Resume::Run {
                    state,
                    skipped,
                    head,
                } => {
                    if skipped > 0 {
                        note!(
                            "{}: resuming after block {} (state root {}); {skipped} blocks already in the store",
                            db.display(),
                            head.number,
                            head.state_root
                        );
                    }
                    if let Some(j) = state.resumed() {
                        note!(
                            "{}: the trie buffer goes on from the last run's journal: {} nodes of blocks {}..={} ({:.1} MB, read in {:.1} ms before the timed run)",
                            db.display(),
                            j.entries,
                            j.base + 1,
                            j.through,
                            j.file_bytes as f64 / 1e6,
                            j.ns as f64 / 1e6
                        );
                    }
                    Some(state)
                }
            }
        }
        None => None,
    };
    let pool = match options.mode {
        gigagas_engine::Mode::Parallel { threads, .. } => {
            Some(WorkerPool::with_warm_spin(threads, valid.warm_spin))
        }
        gigagas_engine::Mode::Sequential | gigagas_engine::Mode::SequentialNoBal => None,
    };
    if disk.is_none() && options.root == RootMode::Incremental {
        check_memory_node_store(&dataset)?;
    }
    // A run that computes every block's root compares it with the header itself.
    let baseline_root = if options.root == RootMode::None {
        gigagas_engine::BaselineRoot::FromScratch
    } else {
        gigagas_engine::BaselineRoot::ByTheRun
    };
    let cases = prepare_all(&dataset, valid.small_block_gas, baseline_root)?;
    options.check(&cases).map_err(|e| spec_error(&e, &[]))?;
    let disk = disk.map(|d| d as Box<dyn IncrementalState>);
    let (meter, load_start) = (
        gigagas_lab::machine_load::LoadMeter::start(),
        gigagas_lab::report::load_average(),
    );
    let run = gigagas_engine::run_pipeline_on(&cases, &options, pool.as_ref(), disk, &recovery)?;
    let machine = serde_json::json!({
        "load_avg_start": load_start,
        "load_avg_end": gigagas_lab::report::load_average(),
        "cpu_during_run": meter.finish(),
    });
    let sync = match &valid.state {
        ValidState::Disk { sync, .. } => Some(*sync),
        ValidState::Memory => None,
    };
    let console = Console::for_output(json.as_ref());
    print_run(console, &cases, &run, sync);
    if let Some(note) = trust_note(&dataset) {
        say!(console, "{note}");
    }
    if let Some(json) = json {
        let phases = run.phases_ns();
        let value = serde_json::json!({
            "schema": "gigagas.pipeline/1",
            "data": dataset.name,
            "mega": options.mega,
            "sync": sync.map(|s| s.to_string()),
            "recovery": recovery.describe(),
            "provenance": gigagas_lab::Provenance::capture(),
            "machine": machine,
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

/// What "verified" rests on when some blocks' pre-state is not the whole world state (the
/// mainnet layout: the accounts and slots each block touches, as a node's prestate tracer gave
/// them): their results are checked against the headers, but the pre-state itself is trusted,
/// so a source that forged pre-state and blocks consistently would pass. `None` when every
/// block starts from a complete state (generated chains, blockchain tests: the state root is
/// checked).
fn trust_note(dataset: &gigagas_data::Dataset) -> Option<String> {
    let partial = dataset.blocks.iter().filter(|b| !b.complete_state).count();
    (partial > 0).then(|| {
        format!(
            "note: {partial} of {} blocks verified against the data set's own pre-state (the accounts and slots each block touches, as its source gave them): gas, bloom and (from Byzantium) receipts root are checked against the header, the state root cannot be; a source that forged pre-state and blocks consistently would pass",
            dataset.blocks.len()
        )
    })
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
        // Pages from the device per item read ahead: 1.0 is every item in a page of its own
        // read once; below 1, items share pages.
        let read = match (disk, b.read_bytes, b.read_ahead) {
            (true, Some(bytes), Some(items)) if bytes > 0 && items > 0 => {
                let pages = bytes.div_ceil(4096);
                format!(
                    "{read} ({pages} pages for {items} items read ahead: {:.2} per item)",
                    pages as f64 / items as f64
                )
            }
            (true, _, Some(items)) => format!("{read}  {items} items read ahead"),
            _ => read,
        };
        let read = match b.demand_reads {
            Some(n) => format!("{read}  {n} reads on demand"),
            None => read,
        };
        // A disk store's commit: what the next block waited for, and the trie-buffer flush.
        let read = match &b.write {
            Some(w) => {
                let flush = w.flush.map_or(String::new(), |f| {
                    format!(
                        ", trie flush {} nodes of {} blocks{} in {:.1} ms",
                        f.entries,
                        f.blocks,
                        f.pages.map_or(String::new(), |p| format!(" ({p} pages)")),
                        ms(f.ns)
                    )
                });
                let logged = if w.wal_bytes > 0 {
                    format!(", logged {:.0} kB", w.wal_bytes as f64 / 1e3)
                } else {
                    String::new()
                };
                format!(
                    "{read}  persist wait {:.1} ms{logged}{flush}",
                    ms(w.persist_wait_ns)
                )
            }
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
    if let Some(f) = run.final_flush {
        say!(
            console,
            "trie buffer flushed at the end: {} nodes of {} blocks{} in {:.1} ms (inside the wall time)",
            f.entries,
            f.blocks,
            f.pages.map_or(String::new(), |p| format!(" ({p} pages)")),
            ms(f.ns)
        );
    }
    if let Some(j) = run.final_journal {
        say!(
            console,
            "trie buffer journaled at the end: {} nodes of {} blocks ({:.1} MB, written, not synced: a cache the flat state rebuilds) in {:.1} ms (inside the wall time); the next run on this store goes on from it, any other command that opens the store writes it into the trie tables first",
            j.entries,
            j.blocks,
            j.file_bytes as f64 / 1e6,
            ms(j.ns)
        );
    }
    let logged: u64 = run
        .blocks
        .iter()
        .filter_map(|b| b.write.map(|w| w.wal_bytes))
        .sum();
    if logged > 0 {
        let flushes = run
            .blocks
            .iter()
            .filter(|b| b.write.is_some_and(|w| w.flush.is_some()))
            .count();
        say!(
            console,
            "flat state through the write-ahead log: {:.2} MB appended to blocks.wal; the store's B-tree written at {flushes} buffer flush(es); the next command that opens the store to write it replays the blocks the log holds",
            logged as f64 / 1e6
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
        "total: {} blocks, {} txs, {:.1} Mgas verified ({}, bal {}, root {}, pipeline {}{}{}) in {:.1} ms: end-to-end {:.0} Mgas/s (execute stage alone {:.0} Mgas/s); {:.0}% of the pipeline bound ({:.1} ms)",
        run.blocks.len(),
        run.blocks.iter().map(|b| b.txs).sum::<usize>(),
        run.gas() as f64 / 1e6,
        run.mode,
        run.bal,
        run.root.name(),
        if run.overlap { "on" } else { "off" },
        if run.overlay { ", overlay on" } else { "" },
        match run.stage_threads {
            0 => String::new(),
            n => format!(", {n} stage threads"),
        },
        ms(run.wall_ns),
        run.e2e_mgas_per_s(),
        run.gas() as f64 / exec_ns.max(1) as f64 * 1e3,
        run.percent_of_bound(),
        ms(run.bound_ns()),
    );
}

fn parse_cold_index(s: &str) -> Result<gigagas_engine::disk::ColdIndex, String> {
    use gigagas_engine::disk::ColdIndex;
    match s {
        "dropped" => Ok(ColdIndex::Dropped),
        "cached" => Ok(ColdIndex::Cached),
        other => Err(format!(
            "{}: expected dropped or cached",
            gigagas_guard::text::printable(other)
        )),
    }
}
