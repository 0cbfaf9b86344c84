//! `gigagas bench`: the main job, every configuration over one or more data sets, verified,
//! with warm-up and interleaved repeats.

use crate::common::{
    available_cores, check_memory_node_store, load, parse_on_off, prepare_all, progress, Console,
    DataArg, PoolArgs,
};
use crate::common::{gas_label, unique};
use crate::common::{note, say, spec_error};
use crate::limits::{self, check_range, parse_block_gas};
use crate::output::{Input, Output};
use crate::store;
use anyhow::{bail, Context, Result};
use clap::Args;
use gigagas_bench::{bench, BenchOptions, Recovery};
use gigagas_data::Dataset;
use gigagas_exec::Scheduler;
use std::path::PathBuf;

#[derive(Args)]
pub struct BenchArgs {
    /// Data sets, comma-separated or repeated: directories in the mainnet layout or generated
    /// chains (`gigagas gen`), or .tar.zst files of one. Default (and no --workload): the
    /// bundled sample. With several data sets (or workloads) each is measured on its own and
    /// the JSON is a sweep (gigagas.sweep/1).
    #[arg(long, value_name = "DIR", value_delimiter = ',')]
    data: Vec<PathBuf>,
    /// Workloads to generate and measure, comma-separated (as `gigagas gen`; each at every
    /// --block-gas, with --blocks and --seed), or `eest-bal`: the five EIP-7928 shapes of
    /// execution-specs with every parameter set of their source (those that do not fit a
    /// block size are skipped, as the source skips them).
    #[arg(long, value_delimiter = ',')]
    workload: Vec<gigagas_gen::WorkloadSet>,
    /// Block gas sizes for --workload, comma-separated (30M, 300M, 1G, …; at most 10G;
    /// default 30M). Only with --workload.
    #[arg(long, value_delimiter = ',', value_parser = parse_block_gas)]
    block_gas: Option<Vec<u64>>,
    /// Blocks per generated workload chain, 1 to 10000 (default 3). Only with --workload.
    #[arg(long)]
    blocks: Option<usize>,
    /// Seed of the generated workload chains (default 1). Only with --workload.
    #[arg(long)]
    seed: Option<u64>,
    /// Write the full results to FILE (`-`: stdout, the tables then go to stderr): schema
    /// gigagas.bench/1 for one data set, or gigagas.sweep/1 (one gigagas.bench/1 report per
    /// data set) for several; see docs/bench-json.md. Checked before the run starts; never
    /// an input, never replaces a device, FIFO or directory; a symlink is written through.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Thread counts for the parallel runs, comma-separated, each 1 to 1024 (default: 1, 2,
    /// 4, … up to all cores, and all cores).
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,
    /// Schedulers for the parallel runs, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ordered,gas-used,gas-limit"
    )]
    scheduler: Vec<Scheduler>,
    /// Timed passes over the data set per configuration (interleaved), 1 to 10000.
    #[arg(long, default_value_t = gigagas_bench::DEFAULT_REPEATS)]
    repeats: usize,
    /// Untimed, verified passes per configuration before timing, 0 to 1000.
    #[arg(long, default_value_t = gigagas_bench::DEFAULT_WARMUP)]
    warmup: usize,
    /// Where senders are recovered, comma-separated: `pre` (in advance, not timed — the
    /// throughput definition) and/or `inline` (by the executing thread, inside the timed run).
    #[arg(long, value_delimiter = ',', default_value = "pre")]
    recover_senders: Vec<Recovery>,
    /// Mega-block sizes for the parallel runs, comma-separated: K consecutive blocks executed
    /// as one unit (1 = each block on its own; at most 100000). Runs of consecutive block
    /// numbers are cut into chunks of K.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    mega: Vec<usize>,
    /// Print the tables as markdown (for PR comments and docs).
    #[arg(long)]
    markdown: bool,
    /// Also measure the machine's contention floor: at every thread count T, T threads each
    /// run their own deep copy of every block (nothing shared) through the 1-worker path; the
    /// table's `floor` column is their per-transaction slowdown, beside `tx work vs 1t`.
    /// Holds one copy of the data set per thread in memory. `--contention-floor=inputs` is the
    /// experiment that shares one thing: every stream reads one prepared copy of the blocks
    /// and runs the same block at a time (the inputs the parallel path's workers share).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "nothing",
          value_name = "SHARING", value_parser = clap::value_parser!(gigagas_lab::FloorSharing))]
    contention_floor: Option<gigagas_lab::FloorSharing>,
    /// Also measure the whole block pipeline (recover → execute → verify → write → root) with
    /// these state roots after each block, comma-separated: none, serial, parallel,
    /// incremental (default with --pipeline: none). At every --threads count, parallel
    /// execution with the first --scheduler; same warm-up and interleaved repeats. Adds the
    /// end-to-end Mgas/s, each stage's time and the pipeline's bound (JSON `pipeline`).
    #[arg(long, value_delimiter = ',', value_name = "MODE")]
    root: Vec<gigagas_engine::RootMode>,
    /// With the pipeline: overlap stages across blocks (on) and/or run them back to back
    /// (off), comma-separated (default with --root: on).
    #[arg(long, value_delimiter = ',', value_name = "on|off", value_parser = parse_on_off)]
    pipeline: Vec<bool>,
    /// Where the pipeline's state lives: memory, or disk — an MDBX store built in a temporary
    /// directory from the first block's pre-state before anything is timed, a fresh copy of
    /// it for every pass (needs --root incremental and a generated chain).
    #[arg(long, value_enum, default_value = "memory")]
    state: store::StateArg,
    /// Also measure the sequential baseline on a plain revm State that builds no BAL (row
    /// `sequential-nobal`, verified against the header like the baseline): the BAL builder's
    /// cost is its difference from the `sequential` row (JSON `phases.sequential_nobal_ns`
    /// per block).
    #[arg(long)]
    sequential_without_bal: bool,
    /// With the pipeline: the BAL variants blocks run from, comma-separated (default keys):
    /// full (keys plus the pre-block value of everything read, supplied with the block: no
    /// account or slot read while executing), keys (EIP-7928: every key prefetched, then
    /// parallel), writes (post-values without read keys: what is only read goes to the store
    /// on demand) and/or none (no BAL: sequential, building none, every read on demand;
    /// --threads is then the other stages' budget). In memory the first three execute alike;
    /// they differ with --state disk. Each row counts the reads that went to the store.
    #[arg(long, value_delimiter = ',', value_name = "VARIANT")]
    bal: Vec<gigagas_engine::BalVariant>,
    /// With --state disk: the store's page cache warm and/or cold (closed, dropped and
    /// reopened before every block, untimed; needs --pipeline off), comma-separated (default
    /// warm).
    #[arg(long, value_delimiter = ',', value_name = "warm|cold", value_parser = parse_cache)]
    cache: Vec<bool>,
    /// With --state disk: when the store's writes are flushed, as `run --sync` says
    /// (every-block, every-N with N from 2 to 1000000, or end; the last flush inside the timed
    /// pass). Default: run's, every-3 warm and every-block cold (the only policy cold takes).
    #[arg(long, value_name = "POLICY")]
    sync: Option<gigagas_engine::SyncPolicy>,
    /// With --state disk and --pipeline on: the store's overlay on (the next block reads the
    /// last one's writes from memory while they commit, as `run` does by default) and/or off
    /// (it waits for that commit), comma-separated (default on). Rows with the overlay say
    /// `on (overlay)` in the pipeline column.
    #[arg(long, value_delimiter = ',', value_name = "on|off", value_parser = parse_on_off)]
    overlay: Vec<bool>,
    /// With --state disk: the store's trie buffer (as `run --trie-buffer`: bytes, or with
    /// K/M/G; 0 or off for none; default 256M, none on cold rows unless given).
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes)]
    trie_buffer: Option<u64>,
    /// With --state disk and a trie buffer: at the end of each pass the buffer is journaled
    /// (on, the default, as `run --trie-journal`) or flushed into the trie tables (off).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    trie_journal: Option<bool>,
    /// With --state disk: blocks written per write transaction on overlay rows (as `run
    /// --write-group`; default 1).
    #[arg(long, value_name = "BLOCKS")]
    write_group: Option<usize>,
    /// With --state disk: the write-ahead log of the flat state on every row with a trie
    /// buffer (on|off, as `run --wal`; cold rows have one only with --trie-buffer; default
    /// on with the overlapped pipeline and the overlay).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    wal: Option<bool>,
    /// Where the pipeline runs recover senders, comma-separated: cpu (libsecp256k1 on the
    /// thread budget), gpu (refused, naming what is missing, where no GPU answers) and/or
    /// auto (the GPU when one answers, else the CPU); each a row of its own. Asks for the
    /// pipeline runs as --pipeline does (root none unless --root is given).
    #[arg(long, value_delimiter = ',', value_name = "BACKEND")]
    recovery: Vec<gigagas_engine::RecoveryBackend>,
    /// With the pipeline on: threads of a pool of their own for verification, the roots and
    /// the commit, beside the --threads workers, comma-separated (0: they share the
    /// workers' threads, the default); each a row of its own. Back to back nothing runs
    /// beside a stage: those rows keep 0.
    #[arg(long, value_delimiter = ',', value_name = "N")]
    stage_threads: Vec<usize>,
    #[command(flatten)]
    pool: PoolArgs,
}

/// The run-spec fields `bench` names with flags of its own.
const BENCH_FLAGS: &[(&str, &str)] = &[
    ("state.cold", "--cache cold"),
    ("state.dir", "--state disk"),
    ("execution", "--bal"),
];

/// `warm` or `cold` as `--cache` takes it: whether the page cache is dropped.
fn parse_cache(s: &str) -> Result<bool, String> {
    match s {
        "warm" => Ok(false),
        "cold" => Ok(true),
        _ => Err(format!("{s:?}: warm or cold")),
    }
}

/// A data set `bench` measures: a path, or a workload to generate first.
enum BenchData {
    Bundled,
    Path(PathBuf),
    Generated {
        workload: gigagas_gen::Workload,
        block_gas: u64,
        blocks: usize,
        seed: u64,
    },
}

/// Loads (generating first where asked) one data set of a bench sweep. A generated chain is
/// written to a temporary directory that lives as long as the returned guard.
fn load_bench_data(
    data: &BenchData,
) -> Result<(Dataset, Option<gigagas_guard::interrupt::TempDir>)> {
    match data {
        BenchData::Bundled => Ok((load(&DataArg { data: None })?, None)),
        BenchData::Path(path) => Ok((
            load(&DataArg {
                data: Some(path.clone()),
            })?,
            None,
        )),
        &BenchData::Generated {
            workload,
            block_gas,
            blocks,
            seed,
        } => {
            let dir = gigagas_guard::interrupt::TempDir::new("gigagas-bench-")
                .context("creating a temporary directory")?;
            let options = gigagas_gen::GenOptions {
                workload,
                blocks,
                block_gas,
                seed,
                spec: revm::primitives::hardfork::SpecId::AMSTERDAM,
                tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
                senders: 1024,
                verify_threads: available_cores(),
                precompiles: Vec::new(),
                slots: None,
                spread: false,
                existing_slots: false,
            };
            let bar = progress(blocks as u64, "generating");
            let chain = gigagas_gen::generate(&options, &|k| bar.set_position(k as u64))?;
            bar.finish_and_clear();
            chain
                .write(dir.path())
                .with_context(|| format!("writing the chain to {}", dir.path().display()))?;
            let mut dataset = load(&DataArg {
                data: Some(dir.path().to_owned()),
            })?;
            dataset.name = format!("{workload} {}×{blocks} seed {seed}", gas_label(block_gas),);
            Ok((dataset, Some(dir)))
        }
    }
}

/// What `bench` does, from its flags: every flag checked before anything is loaded or run.
struct BenchPlan {
    options: BenchOptions,
    data: Vec<BenchData>,
    json: Option<Output>,
}

impl BenchPlan {
    fn from_args(args: &BenchArgs) -> Result<Self> {
        crate::common::refuse_repeated("--data", &args.data)?;
        check_range("--repeats", args.repeats, 1, limits::MAX_REPEATS)?;
        check_range("--warmup", args.warmup, 0, limits::MAX_WARMUP)?;
        if args.workload.is_empty() {
            for (flag, given) in [
                ("--block-gas", args.block_gas.is_some()),
                ("--blocks", args.blocks.is_some()),
                ("--seed", args.seed.is_some()),
            ] {
                if given {
                    bail!("{flag} only applies to generated data sets: give --workload too");
                }
            }
        }
        let block_gas = args.block_gas.clone().unwrap_or_else(|| vec![30_000_000]);
        if block_gas.is_empty() {
            bail!("--block-gas needs at least one size");
        }
        let blocks = check_range("--blocks", args.blocks.unwrap_or(3), 1, limits::MAX_BLOCKS)?;
        let seed = args.seed.unwrap_or(1);
        let mut threads = match &args.threads {
            Some(threads) => threads
                .iter()
                .map(|&t| limits::threads("--threads", t))
                .collect::<Result<Vec<_>>>()?,
            None => BenchOptions::default_threads(available_cores().min(limits::MAX_THREADS)),
        };
        if threads.is_empty() {
            bail!("--threads needs at least one thread count");
        }
        threads.sort_unstable();
        threads.dedup();
        let mut mega = args
            .mega
            .iter()
            .map(|&k| check_range("--mega", k, 1, limits::MAX_MEGA))
            .collect::<Result<Vec<_>>>()?;
        mega.sort_unstable();
        mega.dedup();
        let pipeline_asked = !args.pipeline.is_empty() || !args.recovery.is_empty();
        let mut options = BenchOptions {
            mega,
            threads,
            schedulers: unique(&args.scheduler),
            warmup: args.warmup,
            repeats: args.repeats,
            recovery: unique(&args.recover_senders),
            contention_floor: args.contention_floor,
            // `--recovery` measures the pipeline's first stage: it asks for the pipeline
            // runs as `--pipeline` does.
            roots: match (args.root.is_empty(), pipeline_asked) {
                (true, false) => Vec::new(),
                (true, true) => vec![gigagas_engine::RootMode::None],
                (false, _) => unique(&args.root),
            },
            overlap: match (
                args.root.is_empty() && !pipeline_asked,
                args.pipeline.is_empty(),
            ) {
                (true, _) => Vec::new(),
                (false, true) => vec![true],
                (false, false) => unique(&args.pipeline),
            },
            disk: matches!(args.state, store::StateArg::Disk),
            warm_spin: args.pool.warm_spin,
            sequential_without_bal: args.sequential_without_bal,
            bals: unique(&args.bal),
            cold: unique(&args.cache),
            overlay: unique(&args.overlay),
            sync: args.sync,
            recovery_backends: unique(&args.recovery),
            stage_threads: args
                .stage_threads
                .iter()
                .map(|&n| check_range("--stage-threads", n, 0, limits::MAX_THREADS))
                .collect::<Result<Vec<_>>>()
                .map(|n| unique(&n))?,
            trie_buffer: args.trie_buffer,
            trie_journal: args.trie_journal,
            write_group: args.write_group,
            wal: args.wal,
        };
        if options.disk && options.roots.is_empty() {
            bail!("--state disk measures the pipeline: give --root incremental");
        }
        for (flag, given) in [
            ("--bal", !args.bal.is_empty()),
            ("--cache", !args.cache.is_empty()),
            ("--stage-threads", !args.stage_threads.is_empty()),
        ] {
            if given && options.roots.is_empty() {
                bail!("{flag} applies to the pipeline runs: give --root (or --pipeline)");
            }
        }
        if !args.cache.is_empty() && !options.disk {
            bail!("--cache applies to the on-disk store: give --state disk");
        }
        if !args.stage_threads.is_empty() && !options.overlap.contains(&true) {
            bail!("--stage-threads applies with the pipeline on (back to back nothing runs beside a stage): give --pipeline on");
        }
        // The overlay is an axis of the on-disk rows with the stages overlapped only.
        if !args.overlay.is_empty() && (!options.disk || !options.overlap.contains(&true)) {
            bail!("--overlay applies to the on-disk store with the pipeline on: give --state disk (and --pipeline on)");
        }
        // A GPU asked for must answer before anything is loaded (each pass opens its
        // backends again; `auto` never refuses).
        if args
            .recovery
            .contains(&gigagas_engine::RecoveryBackend::Gpu)
        {
            gigagas_engine::Recoverer::open(gigagas_engine::RecoveryBackend::Gpu)
                .map_err(anyhow::Error::msg)
                .context("--recovery")?;
        }
        // `auto` beside `cpu` where no GPU answers is the CPU twice: measured once (two rows
        // of one configuration were written, and read back as one).
        {
            use gigagas_engine::RecoveryBackend::{Auto, Cpu};
            let backends = &mut options.recovery_backends;
            if backends.contains(&Auto)
                && backends.contains(&Cpu)
                && gigagas_engine::Recoverer::open(Auto).is_ok_and(|r| r.name() == "cpu")
            {
                backends.retain(|&b| b != Auto);
                note!("--recovery auto: no GPU answers here, so auto is the CPU: measured once, as cpu");
            }
        }
        // Every pipeline configuration is a run spec, refused here by its fields, before
        // any data is loaded.
        gigagas_bench::pipeline::validate(&options).map_err(|e| spec_error(&e, BENCH_FLAGS))?;
        if args.contention_floor.is_some() {
            if let Some(&t) = options
                .threads
                .iter()
                .find(|&&t| t > limits::MAX_FLOOR_STREAMS)
            {
                bail!(
                    "--contention-floor with --threads {t}: the floor runs one full copy of the \
                     data set per thread, at most {} threads",
                    limits::MAX_FLOOR_STREAMS
                );
            }
        }
        let mut data: Vec<BenchData> = args.data.iter().cloned().map(BenchData::Path).collect();
        let gigagas_gen::Expanded {
            pairs: generated,
            skipped,
        } = gigagas_gen::expand_sets(
            &args.workload,
            &block_gas,
            Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        )
        .map_err(anyhow::Error::msg)?;
        for reason in &skipped {
            note!("skipped: {reason}");
        }
        for (workload, block_gas) in generated {
            data.push(BenchData::Generated {
                workload,
                block_gas,
                blocks,
                seed,
            });
        }
        if data.is_empty() {
            data.push(BenchData::Bundled);
        }
        let json = args
            .json
            .as_deref()
            .map(|path| Output::new("--json", path, &Input::all("--data", &args.data)))
            .transpose()?;
        Ok(Self {
            options,
            data,
            json,
        })
    }
}

pub fn exec(args: BenchArgs) -> Result<()> {
    let BenchPlan {
        options,
        data,
        json,
    } = BenchPlan::from_args(&args)?;
    let console = Console::for_output(json.as_ref());
    let style = |mut table: comfy_table::Table| {
        if args.markdown {
            table.load_preset(comfy_table::presets::ASCII_MARKDOWN);
        }
        table
    };
    let mut reports = Vec::with_capacity(data.len());
    for item in &data {
        let (dataset, _dir) = load_bench_data(item)?;
        gigagas_bench::pipeline::check(&dataset.blocks, &options)
            .map_err(|e| spec_error(&e, BENCH_FLAGS))?;
        if !options.disk
            && options
                .roots
                .contains(&gigagas_engine::RootMode::Incremental)
        {
            check_memory_node_store(&dataset)?;
        }
        let cases = prepare_all(
            &dataset,
            args.pool.small_block_gas,
            // Bench's execution rows compute no root: the baseline checks it.
            gigagas_engine::BaselineRoot::FromScratch,
        )?;
        let numbers: Vec<u64> = cases.iter().map(|c| c.number()).collect();
        let bar = progress(options.steps(&numbers), "benchmarking");
        let report = bench(&dataset, &cases, &options, &|| bar.inc(1))?;
        bar.finish_and_clear();
        say!(
            console,
            "{}: {} blocks, {} txs, {:.1} Mgas — every run verified (header gas/bloom/receipts root, parallel = sequential per tx, BAL)",
            report.data,
            report.blocks.len(),
            report.phases.txs,
            dataset.total_gas() as f64 / 1e6
        );
        say!(
            console,
            "median of {} repeats after {} warm-up pass(es), {} cores",
            report.settings.repeats,
            report.settings.warmup,
            report.machine.cores
        );
        if let Some(p) = &report.provenance {
            say!(console, "{}", p.summary());
        }
        // What qualifies the tables comes before them, where the eye is.
        for warning in gigagas_lab::report::noise_warnings(&report) {
            say!(console, "warning: {warning}");
        }
        say!(
            console,
            "{}\n",
            style(gigagas_lab::table::runs_table(&report))
        );
        say!(
            console,
            "{}\n",
            style(gigagas_lab::table::phases_table(&report))
        );
        if let Some(table) = gigagas_lab::table::contention_floor_table(&report) {
            say!(
                console,
                "contention floor ({} rounds, streams sharing {}): the machine's share of the slowdown is the floor, the engine's own share is what is left\n{}\n",
                report.contention_floor.first().map_or(0, |f| f.rounds),
                report.contention_floor.first().map_or("nothing", |f| f.sharing.name()),
                style(table)
            );
        }
        if let Some(table) = gigagas_lab::table::pipeline_table(&report) {
            say!(
                console,
                "the whole block pipeline (parallel/{}; BAL none: sequential without one; every block and state root verified; stages = share of busy time; vs pure = wall ÷ execution-alone median above; reads on demand = accounts, slots and code execution read from the store):\n{}\n",
                report.pipeline[0].scheduler,
                style(table)
            );
        }
        match gigagas_lab::table::cost_model_table(&report) {
            Some(table) => say!(console, "{}\n", style(table)),
            None => say!(
                console,
                "cost model: not fitted ({} blocks; it needs at least 5 to fit 4 coefficients)\n",
                report.blocks.len()
            ),
        }
        if report
            .runs
            .iter()
            .any(|r| r.bound_fraction.is_some_and(|f| f > 1.0))
        {
            say!(
                console,
                "note: a '% of bound' above 100% means that configuration beat the critical-path bound computed from the 1-thread per-transaction times — the transactions ran faster than in the 1-thread run (warmer caches, or the 1-thread run was disturbed), not that the bound is wrong in principle\n"
            );
        }
        reports.push(report);
    }
    if reports.len() > 1 {
        say!(console, "sweep over {} data sets:", reports.len());
        say!(
            console,
            "{}\n",
            style(gigagas_lab::table::sweep_table(&reports))
        );
    }
    if let Some(json) = &json {
        let bytes = match reports.len() {
            1 => serde_json::to_vec_pretty(&reports[0])?,
            _ => serde_json::to_vec_pretty(&gigagas_lab::SweepReport {
                schema: gigagas_lab::SWEEP_SCHEMA.into(),
                reports,
            })?,
        };
        json.write(&bytes)?;
    }
    Ok(())
}
