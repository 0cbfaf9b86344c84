//! `gigagas`: the command line. Flags become a plain configuration; everything else lives in
//! the library crates.

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use gigagas_bench::{bench, prepare, run_block, BenchOptions, BlockCase, Mode, Recovery};
use gigagas_data::{DataSource, Dataset};
use gigagas_exec::{Scheduler, WorkerPool};
use indicatif::{ProgressBar, ProgressStyle};
use limits::{check_range, parse_block_gas, parse_gas_threshold, parse_tx_gas_cap, TxGasCap};
use output::{Input, Output, OutputDir};
use std::{path::PathBuf, time::Instant};

mod db;
mod inject;
mod limits;
mod output;
mod peers;

/// Ethereum block execution engine and benchmark lab built on EIP-7928 block-level access
/// lists.
#[derive(Parser)]
#[command(name = "gigagas", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Execute and verify every block of a data set in one mode; one line per block.
    Run(RunArgs),
    /// The main job: every configuration over a data set, verified, with warm-up and repeats.
    Bench(BenchArgs),
    /// Predict time and speedup at any thread count by replaying a bench result's 1-thread
    /// transaction traces through each scheduler; compares with measured runs where present.
    Simulate(SimulateArgs),
    /// Write one self-contained HTML report with SVG plots of a bench result.
    Report(ReportArgs),
    /// Compare two bench results (B against A): throughput change per configuration with a
    /// bootstrap 95% interval and a verdict that counts only beyond --floor.
    Compare(CompareArgs),
    /// Run Ethereum blockchain tests (files or directories) through the sequential and the
    /// BAL-parallel path: state root, receipts root, bloom, gas, expected rejections.
    Conformance(ConformanceArgs),
    /// Run one signed differential block (transfers, deployment, storage, revert, calls,
    /// self-destruct, EIP-7702) through gigagas (both paths) and geth's `evm t8n`, per fork,
    /// and print every difference.
    Differential(DifferentialArgs),
    /// Generate a verified chain of signed blocks for a workload (gigagas.chain/1), loadable
    /// with `run --data DIR` and `bench --data DIR`.
    Gen(GenArgs),
    /// Pull blocks and their pre-state from an Ethereum JSON-RPC node (eth_getBlockByNumber,
    /// debug_traceBlockByNumber with prestateTracer) into the mainnet layout, for
    /// `run --data DIR` and `bench --data DIR`. Resumable: a re-run skips complete blocks.
    Fetch(FetchArgs),
    /// Send a generated workload (the transactions of `gen`, plus the deployments of its
    /// contracts) to a node with eth_sendRawTransaction, optionally funding its senders from
    /// the node's unlocked account first; waits for inclusion and reports latency per
    /// transaction and per block.
    Inject(inject::InjectArgs),
    /// Pack blocks of a mainnet-layout directory into a compressed data set (.tar.zst with a
    /// SHA-256 manifest and a zstd checksum, both checked on load).
    Pack(PackArgs),
    /// The on-disk state store: `db init --data DIR --out DBDIR`, `db verify DBDIR`.
    Db(db::DbArgs),
    /// Write a generated chain for other engines: an ethereum/tests blockchain test
    /// (blocktest.json, for `evm blocktest`, `revme blockchaintest`) and/or chain.rlp +
    /// genesis.json (for `geth init` + `geth import`).
    Export(peers::ExportArgs),
    /// The same blocks through other engines (geth evm blocktest, geth import, revme), timed
    /// in the same run as gigagas sequential and parallel; each must reach the same head.
    Peers(peers::PeersArgs),
}

#[derive(Args)]
struct DataArg {
    /// Data set: a directory in the mainnet layout (blocks/<n>/{block,pre_state}.json,
    /// bytecodes.json, block_hashes.json) or a .tar.zst of one. Default: the bundled sample.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    /// The baseline: one transaction after another, building the BAL.
    Sequential,
    /// All transactions at once from the BAL (built first by a sequential run).
    Parallel,
}

#[derive(Args)]
struct RunArgs {
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

/// How the parallel path uses its worker pool (`run` and `bench`).
#[derive(Args)]
struct PoolArgs {
    /// Parallel mode: blocks whose header states less gas used than this run through the
    /// sequential executor on the calling thread (their rebuilt BAL must equal the shipped or
    /// baseline one) instead of waking the worker pool; 0 or `off` runs every block on the pool.
    /// Default: the threshold measured on the 2-core development VM
    /// (docs/results/small-block-threshold-2core.md). At most 10G.
    #[arg(long, value_name = "GAS", default_value_t = gigagas_exec::SMALL_BLOCK_GAS, value_parser = parse_gas_threshold)]
    small_block_gas: u64,
    /// Parallel mode: how long the worker threads stay awake after a block, spinning for the
    /// next one before they sleep (`us`, `ms` or `s`; `off` or 0 for none; at most 1s). A
    /// sleeping worker takes tens of µs to milliseconds to wake on a VM
    /// (docs/results/warm-workers-2core.md); while spinning it runs any other work queued on
    /// the pool. Not used by the pipeline (--root/--pipeline), whose stages keep the pool
    /// busy between blocks.
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = limits::parse_warm_spin)]
    warm_spin: std::time::Duration,
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, got {s:?}")),
    }
}

#[derive(Args)]
struct BenchArgs {
    /// Data sets, comma-separated or repeated: directories in the mainnet layout or generated
    /// chains (`gigagas gen`), or .tar.zst files of one. Default (and no --workload): the
    /// bundled sample. With several data sets (or workloads) each is measured on its own and
    /// the JSON is a sweep (gigagas.sweep/1).
    #[arg(long, value_name = "DIR", value_delimiter = ',')]
    data: Vec<PathBuf>,
    /// Workloads to generate and measure, comma-separated (as `gigagas gen`; each at every
    /// --block-gas, with --blocks and --seed).
    #[arg(long, value_delimiter = ',')]
    workload: Vec<gigagas_gen::Workload>,
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
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Untimed, verified passes per configuration before timing, 0 to 1000.
    #[arg(long, default_value_t = 1)]
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
    state: db::StateArg,
    #[command(flatten)]
    pool: PoolArgs,
}

#[derive(Args)]
struct SimulateArgs {
    /// A result file written by `gigagas bench --json`.
    file: PathBuf,
    /// Thread counts to predict, comma-separated, each 1 to 1024.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    threads: Vec<usize>,
    /// Schedulers to replay, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ordered,gas-used,gas-limit"
    )]
    scheduler: Vec<Scheduler>,
    /// Mega-block sizes to replay (K consecutive blocks of the result scheduled as one unit),
    /// comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    mega: Vec<usize>,
}

#[derive(Args)]
struct ReportArgs {
    /// A result file written by `gigagas bench --json`.
    file: PathBuf,
    /// Output HTML file (`-`: stdout; default: FILE with the extension `.html`, beside it).
    /// Checked before anything is read; never the input FILE, never replaces a device, FIFO or
    /// directory; a symlink is written through.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct CompareArgs {
    /// Baseline result (`gigagas bench --json`); several, comma-separated, are pooled (their
    /// repeats joined per configuration) — e.g. the A runs of an A-B-B-A sequence
    /// (scripts/abba.sh), so drift between runs hits both sides alike.
    #[arg(value_delimiter = ',', required = true)]
    a: Vec<PathBuf>,
    /// Candidate result(s), as for A.
    #[arg(value_delimiter = ',', required = true)]
    b: Vec<PathBuf>,
    /// Smallest change that counts, e.g. `2%` or `0.02`.
    #[arg(long, default_value = "2%", value_parser = parse_floor)]
    floor: f64,
    /// Print a markdown table (for PR comments) instead of the terminal table.
    #[arg(long)]
    markdown: bool,
}

fn parse_floor(s: &str) -> Result<f64, String> {
    let (number, scale) = match s.strip_suffix('%') {
        Some(p) => (p, 100.0),
        None => (s, 1.0),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a number: {s:?}"))?;
    let value = value / scale;
    if !(0.0..1.0).contains(&value) {
        return Err(format!("floor {s:?} out of range (0%..100%)"));
    }
    Ok(value)
}

#[derive(Clone, Copy, ValueEnum)]
enum ConformanceMode {
    /// Sequential path only.
    Sequential,
    /// BAL-parallel path only (the BAL is still built by a sequential run).
    Parallel,
    /// Both paths, each checked.
    Both,
}

#[derive(Args)]
struct ConformanceArgs {
    /// Blockchain-test JSON files or directories (searched recursively).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write the summary (schema gigagas.conformance/1) to FILE (`-`: stdout, the tables
    /// then go to stderr). Checked before the run; never an input.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Execution paths to import every block through.
    #[arg(long, value_enum, default_value = "both")]
    mode: ConformanceMode,
    /// Worker threads of the parallel path, 1 to 1024.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Print every failure (default: the first 20).
    #[arg(long)]
    all_failures: bool,
    /// Also run up to N BAL mutants of each kind (wrong value, missing/extra write, write at
    /// the wrong index, missing read/account, unordered, duplicate) on every valid block; the
    /// parallel path must reject each, naming the defect.
    #[arg(long, value_name = "N", default_value_t = 0)]
    mutations: usize,
    /// Where state transitions are also checked: memory (the default: in-memory roots), or
    /// disk — every imported block's changes also go through a temporary on-disk store
    /// (MDBX) whose incremental root, split in parallel at every node with two or more
    /// changes, must equal the header's; at the end of each test the store's root and every
    /// stored branch node are compared with a from-scratch build.
    #[arg(long, value_enum, default_value = "memory")]
    state: db::StateArg,
}

#[derive(Args)]
struct DifferentialArgs {
    /// Forks to compare, comma-separated (prague, osaka, amsterdam).
    #[arg(long, value_delimiter = ',', default_value = "prague,osaka,amsterdam")]
    fork: Vec<String>,
    /// Install geth's evm v1.17.10 into the tool cache with `go install` if it is absent.
    #[arg(long)]
    install: bool,
    /// Run a scenario suite instead of the per-fork block: `eip7928` (the EIP-7928 tests of
    /// ethereum/execution-specs, valid and invalid BALs; docs/results/eip7928-scenarios.md).
    /// Exits non-zero if any scenario failed.
    #[arg(long, value_name = "SUITE")]
    suite: Option<String>,
    /// With --suite: write the report (schema gigagas.eip7928-suite/1: per-scenario rows and
    /// the totals passed, failed, skipped) to FILE (`-`: stdout, the table then goes to stderr).
    #[arg(long, value_name = "FILE", requires = "suite")]
    json: Option<PathBuf>,
    /// With --suite: only the scenarios whose name contains TEXT.
    #[arg(long, value_name = "TEXT", requires = "suite")]
    filter: Option<String>,
    /// With --suite: gigagas only (both paths, stated BAL entries, invalid BALs), no geth.
    #[arg(long, requires = "suite")]
    no_geth: bool,
}

#[derive(Args)]
struct GenArgs {
    /// transfers, erc20, uniswap, nft-mint, mainnet-mix, serial-chain, long-tx,
    /// sstore-bloated, keccak, precompile or 7702.
    workload: gigagas_gen::Workload,
    /// Blocks to generate, 1 to 10000.
    #[arg(long, default_value_t = 10)]
    blocks: usize,
    /// Block gas limit: a number or with a suffix (30M, 300M, 1G, 2G); at most 10G.
    #[arg(long, default_value = "30M", value_parser = parse_block_gas)]
    block_gas: u64,
    /// Seed (keys and every random choice).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory: new or empty (an existing non-empty one only with --force). Its
    /// parent must exist. The chain is written into a fresh temporary directory beside it
    /// and renamed into place once complete.
    #[arg(long)]
    out: PathBuf,
    /// Replace a non-empty --out directory (only after the new chain is complete).
    #[arg(long)]
    force: bool,
    /// Fork rules: Amsterdam (default, revm 43 = glamsterdam-devnet-8), Osaka, Prague or Cancun.
    #[arg(long, default_value = "Amsterdam")]
    fork: String,
    /// Per-transaction gas cap: a number (default EIP-7825's 2^24) or `off` for giant
    /// single transactions.
    #[arg(long, default_value = "16777216", value_parser = parse_tx_gas_cap)]
    tx_gas_cap: TxGasCap,
    /// Funded sender keys, 2 to 100000.
    #[arg(long, default_value_t = 1024)]
    senders: usize,
    /// For `precompile`: which precompiles the transactions call, comma-separated, cycled
    /// through (ecrecover, modexp, point-evaluation; default all three).
    #[arg(long, value_delimiter = ',')]
    precompile: Vec<gigagas_gen::Precompile>,
    /// For `sstore-bloated`: storage slots of the bloated account(s) in the genesis, 1 to
    /// 100000000 (default 1000000). chain.json records the rule, not the slots.
    #[arg(long, value_name = "N")]
    slots: Option<u64>,
    /// For `sstore-bloated`: the same slots and the same writes spread over ⌈√N⌉ accounts
    /// (1,000 accounts of 1,000 slots at the default) instead of one.
    #[arg(long)]
    spread: bool,
}

#[derive(Args)]
struct FetchArgs {
    /// JSON-RPC endpoint, http:// or https:// (needs the debug namespace for the
    /// prestateTracer). Only its host[:port] is ever printed or recorded.
    #[arg(long, value_name = "URL")]
    rpc: String,
    /// First block.
    #[arg(long, value_name = "N")]
    from: u64,
    /// Last block (inclusive); at most 100000 blocks per run.
    #[arg(long, value_name = "M")]
    to: u64,
    /// Output directory: new (its parent must exist), empty, or one an earlier fetch wrote
    /// (it has fetch.json), which is then extended and resumed.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Concurrent requests, 1 to 64.
    #[arg(long, default_value_t = 4)]
    jobs: usize,
    /// Timeout of one request in seconds, 1 to 3600 (a trace of a full block can be slow).
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    timeout: u64,
    /// Tries after the first on transport errors, HTTP 429/5xx and rate-limit errors, 0 to
    /// 10, with exponential back-off from 500 ms (at most 30 s).
    #[arg(long, default_value_t = 5)]
    retries: u32,
    /// The fork the blocks run under (a revm fork name: Prague, Osaka, ...), recorded in
    /// fetch.json and used by `run`/`bench --data` instead of the mainnet schedule. Required
    /// for a chain other than mainnet (a geth --dev node: Osaka).
    #[arg(long, value_name = "NAME")]
    fork: Option<String>,
    /// The geth genesis JSON the node was initialised with (scripts/geth-dev.sh writes
    /// DATADIR/genesis-osaka.json): write the chain format (gigagas.chain/1, complete genesis
    /// state; `run` checks state roots, `export`/`peers` accept it) instead of the mainnet
    /// layout. Needs --from 1 and a new or empty --out; the fork comes from the file.
    #[arg(long, value_name = "FILE")]
    genesis: Option<PathBuf>,
}

#[derive(Args)]
struct PackArgs {
    /// Source directory in the mainnet layout.
    #[arg(long)]
    data: PathBuf,
    /// Output archive (.tar.zst); never inside --data.
    #[arg(long)]
    out: PathBuf,
    /// Blocks to include, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    blocks: Option<Vec<u64>>,
    /// zstd level, 1 to 22.
    #[arg(long, default_value_t = 19, value_parser = clap::value_parser!(i32).range(1..=22))]
    level: i32,
}

/// The counting allocator of diagnostics builds (`--features count-alloc`): `bench` then
/// reports allocations per transaction.
#[cfg(feature = "count-alloc")]
#[global_allocator]
static ALLOCATOR: gigagas_alloc::CountingAlloc = gigagas_alloc::CountingAlloc;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    if let Err(err) = real_main() {
        eprintln!("error: {}", error_chain(&err));
        std::process::exit(1);
    }
}

/// `err` and its causes joined by `: `, each cause left out when the text so far already
/// says it (errors that print their source inside their own message would otherwise show
/// it twice: "EOF while parsing …: EOF while parsing …").
fn error_chain(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if part.is_empty() || text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn real_main() -> Result<()> {
    match Cli::parse().command {
        Command::Run(args) => cmd_run(args),
        Command::Bench(args) => cmd_bench(args),
        Command::Simulate(args) => cmd_simulate(args),
        Command::Compare(args) => cmd_compare(args),
        Command::Report(args) => cmd_report(args),
        Command::Conformance(args) => cmd_conformance(args),
        Command::Differential(args) => cmd_differential(args),
        Command::Gen(args) => cmd_gen(args),
        Command::Fetch(args) => cmd_fetch(args),
        Command::Inject(args) => inject::cmd_inject(args),
        Command::Pack(args) => cmd_pack(args),
        Command::Db(args) => db::cmd_db(args),
        Command::Export(args) => peers::cmd_export(args),
        Command::Peers(args) => peers::cmd_peers(args),
    }
}

/// `println!` through a [`Console`].
macro_rules! say {
    ($console:expr, $($arg:tt)*) => {
        $console.line(format_args!($($arg)*))
    };
}

/// Human-readable output: stdout, or stderr when stdout carries a result (`--json -`).
#[derive(Clone, Copy)]
struct Console {
    to_stderr: bool,
}

impl Console {
    fn for_output(output: Option<&Output>) -> Self {
        Self {
            to_stderr: output.is_some_and(Output::is_stdout),
        }
    }

    fn line(self, text: impl std::fmt::Display) {
        if self.to_stderr {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    }
}

fn cmd_fetch(args: FetchArgs) -> Result<()> {
    let mut options = gigagas_fetch::FetchOptions::new(&args.rpc, args.from, args.to, &args.out);
    options.jobs = args.jobs;
    options.timeout = std::time::Duration::from_secs(args.timeout);
    options.attempts = args.retries.saturating_add(1);
    if let Some(name) = &args.fork {
        let spec = gigagas_data::chain::parse_fork(name)
            .with_context(|| format!("--fork {name:?}: unknown fork"))?;
        // The canonical spelling, as the loader parses it back.
        options.fork = Some(gigagas_exec::spec::spec_name(spec).to_owned());
    }
    gigagas_fetch::check_options(&options)?;
    if let Some(genesis) = &args.genesis {
        return cmd_fetch_chain(&args, &options, genesis);
    }
    // A new or empty --out follows the output rules of `gen` (parent exists and is
    // writable, not an input); a directory an earlier fetch wrote is resumed.
    if !args.out.join(gigagas_fetch::MARKER).exists() {
        OutputDir::new("--out", &args.out, false, &[])?;
    }
    let bar = progress(0, "fetching");
    let report = gigagas_fetch::fetch(&options, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let report = report?;
    println!(
        "fetched {} blocks ({} already complete), {} ancestor hashes, {} new codes ({} in all), {} block hashes, chain {} from {} — {} requests, {} retries, {:.1} s → {}",
        report.fetched.len(),
        report.skipped.len(),
        report.hashes_fetched,
        report.codes_new,
        report.codes_total,
        report.hashes_total,
        report.chain_id,
        report.host,
        report.requests,
        report.retries,
        report.seconds,
        args.out.display()
    );
    Ok(())
}

/// `gigagas fetch --genesis FILE`: the chain format, from block 1, with the complete genesis.
fn cmd_fetch_chain(
    args: &FetchArgs,
    options: &gigagas_fetch::FetchOptions,
    genesis: &PathBuf,
) -> Result<()> {
    let t0 = std::time::Instant::now();
    let inputs = Input::all("--genesis", [genesis]);
    let out = OutputDir::new("--out", &args.out, false, &inputs)?;
    let parsed = gigagas_data::geth_genesis::read_geth_genesis(genesis).context("--genesis")?;
    let name = format!("--genesis {}", genesis.display());
    let bar = progress(0, "fetching");
    let chain = gigagas_fetch::chain::fetch_chain(options, &parsed, &name, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let chain = chain?;
    let t_write = std::time::Instant::now();
    out.write_with(|dir| chain.write(dir).map_err(Into::into))?;
    let write_seconds = t_write.elapsed().as_secs_f64();
    println!(
        "fetched {} blocks ({} txs, {:.1} Mgas) of chain {} from {} into the chain format, fork {}, genesis {} from {} (its state root checked against the node's block 0; every block executed, its state root checked) — genesis {:.2} s, fetch {:.2} s ({} requests, {} retries), load {:.2} s, execute + derive + check every state root {:.2} s, temporary directory removed {:.2} s, write {:.2} s, {:.2} s in all → {}",
        chain.blocks.len(),
        chain.txs,
        chain.gas as f64 / 1e6,
        chain.meta.chain_id,
        chain.fetch.host,
        chain.meta.fork,
        chain.meta.genesis_hash,
        genesis.display(),
        chain.genesis_seconds,
        chain.fetch.seconds,
        chain.fetch.requests,
        chain.fetch.retries,
        chain.load_seconds,
        chain.derive_seconds,
        chain.cleanup_seconds,
        write_seconds,
        t0.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

fn cmd_gen(args: GenArgs) -> Result<()> {
    let spec = gigagas_data::chain::parse_fork(&args.fork)
        .with_context(|| format!("--fork {:?}: unknown fork", args.fork))?;
    check_range("--blocks", args.blocks, 1, limits::MAX_BLOCKS)?;
    check_range(
        "--senders",
        args.senders,
        limits::MIN_SENDERS,
        limits::MAX_SENDERS,
    )?;
    if !args.precompile.is_empty() && args.workload != gigagas_gen::Workload::Precompile {
        bail!("--precompile applies to the precompile workload only");
    }
    let bloated = args.workload == gigagas_gen::Workload::SstoreBloated;
    if let Some(slots) = args.slots {
        if !bloated {
            bail!("--slots applies to the sstore-bloated workload only");
        }
        check_range(
            "--slots",
            slots as usize,
            1,
            gigagas_gen::workload::MAX_BLOATED_SLOTS as usize,
        )?;
    }
    if args.spread && !bloated {
        bail!("--spread applies to the sstore-bloated workload only");
    }
    let out = OutputDir::new("--out", &args.out, args.force, &[])?;
    let options = gigagas_gen::GenOptions {
        workload: args.workload,
        blocks: args.blocks,
        block_gas: args.block_gas,
        seed: args.seed,
        spec,
        tx_gas_cap: args.tx_gas_cap.0,
        senders: args.senders,
        verify_threads: available_cores(),
        precompiles: args.precompile.clone(),
        slots: args.slots,
        spread: args.spread,
    };
    let bar = progress(args.blocks as u64, "blocks");
    let chain = gigagas_gen::generate(&options, &|k| bar.set_position(k as u64))?;
    bar.finish_and_clear();
    out.write_with(|dir| chain.write(dir).map_err(Into::into))?;
    let failed: usize = chain.failed_txs.iter().sum();
    println!(
        "{}: {} blocks, {} txs ({failed} failed by design or revert), {:.1} Mgas, fork {}, seed {} — every block verified (sequential, parallel × 3 schedulers, state root) — generated in {:.1} s → {}",
        chain.meta.workload,
        chain.blocks.len(),
        chain.txs(),
        chain.gas_used() as f64 / 1e6,
        chain.meta.fork,
        args.seed,
        chain.seconds,
        args.out.display()
    );
    Ok(())
}

fn cmd_differential_suite(args: &DifferentialArgs, suite: &str) -> Result<()> {
    use gigagas_differential::{geth, suite as s};
    if !suite.eq_ignore_ascii_case("eip7928") {
        bail!("--suite {suite:?}: unknown suite (eip7928)");
    }
    let json = args
        .json
        .as_deref()
        .map(|path| Output::new("--json", path, &[]))
        .transpose()?;
    let console = Console::for_output(json.as_ref());
    let evm = if args.no_geth {
        None
    } else {
        let evm = geth::evm_binary(args.install)?;
        eprintln!("geth: {}", evm.display());
        Some(evm)
    };
    let report = s::run(
        evm.as_deref(),
        available_cores().min(4),
        args.filter.as_deref(),
    );
    console.line(s::table(&report).trim_end());
    if let Some(json) = &json {
        json.write(&serde_json::to_vec_pretty(&report)?)?;
    }
    if report.failed > 0 {
        bail!(
            "{} of {} EIP-7928 scenarios failed",
            report.failed,
            report.ported_cases
        );
    }
    Ok(())
}

fn cmd_differential(args: DifferentialArgs) -> Result<()> {
    use gigagas_differential::{compare::differences, engine, geth, scenario};
    use revm::primitives::hardfork::SpecId;
    if let Some(suite) = &args.suite {
        return cmd_differential_suite(&args, suite);
    }
    let evm = geth::evm_binary(args.install)?;
    eprintln!("geth: {}", evm.display());
    let mut disagreements = 0;
    for name in &args.fork {
        let spec = match name.to_ascii_lowercase().as_str() {
            "prague" => SpecId::PRAGUE,
            "osaka" => SpecId::OSAKA,
            "amsterdam" => SpecId::AMSTERDAM,
            other => bail!("unknown fork {other:?} (prague, osaka, amsterdam)"),
        };
        let s = scenario::build(spec);
        let ours = engine::run(&s, available_cores()).context("gigagas")?;
        let theirs = geth::run_t8n(&evm, &s)?;
        let ignored = if spec == SpecId::AMSTERDAM {
            scenario::eip8282_contracts().to_vec()
        } else {
            Vec::new()
        };
        let diff = differences(&ours, &theirs, &s.labels, &ignored);
        println!(
            "{name}: {} txs, state root {}, gas {} (geth {}) — {}",
            s.transactions.len(),
            ours.state_root,
            ours.gas_used,
            theirs.gas_used,
            if diff.is_empty() {
                "identical".to_owned()
            } else {
                format!("{} difference(s)", diff.len())
            }
        );
        for line in &diff {
            println!("  {line}");
        }
        if !ignored.is_empty() {
            println!(
                "  (BAL accounts of EIP-8282 contracts {} not compared: geth 1.17.10 calls them after the transactions, revm 43 does not)",
                ignored.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            );
        }
        let expected_only_bal_hash =
            spec == SpecId::AMSTERDAM && diff.len() == 1 && diff[0].starts_with("BAL hash");
        if !diff.is_empty() && !expected_only_bal_hash {
            disagreements += 1;
        }
    }
    if disagreements > 0 {
        bail!("gigagas and geth disagree on {disagreements} fork(s)");
    }
    Ok(())
}

fn cmd_conformance(args: ConformanceArgs) -> Result<()> {
    use gigagas_conformance::{collect_files, run_files, Mode as CMode, RunOptions};
    let threads = limits::threads("--threads", args.threads)?;
    let json = args
        .json
        .as_deref()
        .map(|path| Output::new("--json", path, &Input::all("PATHS", &args.paths)))
        .transpose()?;
    let console = Console::for_output(json.as_ref());
    let files = collect_files(&args.paths)?;
    if files.is_empty() {
        bail!("no .json fixture files under the given paths");
    }
    let mode = match args.mode {
        ConformanceMode::Sequential => CMode::Sequential,
        ConformanceMode::Parallel => CMode::Parallel,
        ConformanceMode::Both => CMode::Both,
    };
    let bar = progress(files.len() as u64, "files");
    let summary = run_files(
        &files,
        RunOptions {
            mode,
            threads,
            mutations: args.mutations,
            disk: matches!(args.state, db::StateArg::Disk),
        },
        &|| bar.inc(1),
    );
    bar.finish_and_clear();

    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["directory", "passed", "failed", "skipped"]);
    for (dir, c) in &summary.by_dir {
        table.add_row([
            dir.clone(),
            c.passed.to_string(),
            c.failed.to_string(),
            c.skipped.to_string(),
        ]);
    }
    say!(console, "{table}");
    let mut forks = comfy_table::Table::new();
    forks.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    forks.set_header(["network", "passed", "failed", "skipped"]);
    for (fork, c) in &summary.by_fork {
        forks.add_row([
            fork.clone(),
            c.passed.to_string(),
            c.failed.to_string(),
            c.skipped.to_string(),
        ]);
    }
    say!(console, "{forks}");
    if !summary.mutants_rejected.is_empty() {
        let total: usize = summary.mutants_rejected.values().sum();
        let kinds: Vec<String> = summary
            .mutants_rejected
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        say!(
            console,
            "BAL mutants rejected (each naming its defect): {total} — {}",
            kinds.join(", ")
        );
    }
    for (reason, n) in &summary.skip_reasons {
        say!(console, "skipped {n:>5}: {reason}");
    }
    for (reason, n) in &summary.failure_reasons {
        say!(console, "failed  {n:>5}: {reason}");
    }
    let shown = if args.all_failures { usize::MAX } else { 20 };
    for f in summary.failures.iter().take(shown) {
        say!(
            console,
            "FAIL {} :: {} [{}] {}: {}",
            f.file,
            f.test,
            f.fork,
            f.reason,
            f.detail
        );
    }
    if summary.failures.len() > shown {
        say!(
            console,
            "... {} more failures (--all-failures or --json)",
            summary.failures.len() - shown
        );
    }
    say!(
        console,
        "{} tests ({}): {} passed, {} failed, {} skipped in {:.1} s",
        summary.total(),
        match summary.mode.as_str() {
            "both" => "sequential and parallel paths".to_owned(),
            one => format!("{one} path"),
        },
        summary.passed,
        summary.failed,
        summary.skipped,
        summary.wall_seconds
    );
    if matches!(args.state, db::StateArg::Disk) {
        say!(
            console,
            "on-disk store: {} imported blocks of the passed tests also through the store, every incremental root = its header's, every test's stored nodes = a from-scratch build",
            summary.store_blocks
        );
    }
    if let Some(json) = &json {
        json.write(&serde_json::to_vec_pretty(&summary)?)?;
    }
    if summary.failed > 0 {
        bail!(
            "{} of {} conformance tests failed",
            summary.failed,
            summary.total()
        );
    }
    Ok(())
}

fn load(data: &DataArg) -> Result<Dataset> {
    let source = match &data.data {
        Some(path) => DataSource::open(path)?,
        None => DataSource::embedded()?,
    };
    let t0 = Instant::now();
    let dataset = gigagas_data::load(&source).context("loading the data set")?;
    eprintln!(
        "loaded {} blocks, {} txs, {:.1} Mgas from {} in {:.2} s",
        dataset.blocks.len(),
        dataset.total_txs(),
        dataset.total_gas() as f64 / 1e6,
        dataset.name,
        t0.elapsed().as_secs_f64()
    );
    Ok(dataset)
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>12} [{bar:40}] {pos}/{len} {elapsed_precise} (eta {eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// Every block prepared (senders, sequential baseline, BAL plan), parent links checked;
/// `small_block_gas` is the parallel path's small-block threshold (0: off).
fn prepare_all(dataset: &Dataset, small_block_gas: u64) -> Result<Vec<BlockCase<'_>>> {
    let bar = progress(dataset.blocks.len() as u64, "preparing");
    let cases = dataset
        .blocks
        .iter()
        .map(|block| {
            let case = prepare(block).map(|mut case| {
                case.plan.set_small_block_gas(small_block_gas);
                case
            });
            bar.inc(1);
            case
        })
        .collect::<Result<Vec<_>, _>>()?;
    bar.finish_and_clear();
    for pair in cases.windows(2) {
        gigagas_engine::check_parent(&pair[1], &pair[0])?;
    }
    Ok(cases)
}

fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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

fn cmd_run(args: RunArgs) -> Result<()> {
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

fn default_threads() -> Vec<usize> {
    let cores = available_cores().min(limits::MAX_THREADS);
    let mut threads: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t <= cores)
        .collect();
    if threads.last() != Some(&cores) {
        threads.push(cores);
    }
    threads
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
fn load_bench_data(data: &BenchData) -> Result<(Dataset, Option<tempfile::TempDir>)> {
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
            let dir = tempfile::tempdir().context("creating a temporary directory")?;
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

/// 30000000 → "30M", 1000000000 → "1G".
fn gas_label(gas: u64) -> String {
    match gas {
        g if g % 1_000_000_000 == 0 => format!("{}G", g / 1_000_000_000),
        g if g % 1_000_000 == 0 => format!("{}M", g / 1_000_000),
        g => g.to_string(),
    }
}

/// Keeps the first occurrence of each item, in order.
fn unique<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

/// What `bench` does, from its flags: every flag checked before anything is loaded or run.
struct BenchPlan {
    options: BenchOptions,
    data: Vec<BenchData>,
    json: Option<Output>,
}

impl BenchPlan {
    fn from_args(args: &BenchArgs) -> Result<Self> {
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
            None => default_threads(),
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
        let options = BenchOptions {
            mega,
            threads,
            schedulers: unique(&args.scheduler),
            warmup: args.warmup,
            repeats: args.repeats,
            recovery: unique(&args.recover_senders),
            contention_floor: args.contention_floor,
            roots: match (args.root.is_empty(), args.pipeline.is_empty()) {
                (true, true) => Vec::new(),
                (true, false) => vec![gigagas_engine::RootMode::None],
                (false, _) => unique(&args.root),
            },
            overlap: match (args.root.is_empty(), args.pipeline.is_empty()) {
                (true, true) => Vec::new(),
                (false, true) => vec![true],
                (_, false) => unique(&args.pipeline),
            },
            disk: matches!(args.state, db::StateArg::Disk),
            warm_spin: args.pool.warm_spin,
        };
        if options.disk && options.roots.is_empty() {
            bail!("--state disk measures the pipeline: give --root incremental");
        }
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
        for &workload in &args.workload {
            for &block_gas in &block_gas {
                data.push(BenchData::Generated {
                    workload,
                    block_gas,
                    blocks,
                    seed,
                });
            }
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

fn cmd_bench(args: BenchArgs) -> Result<()> {
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
        gigagas_bench::pipeline::check(&dataset.blocks, &options)?;
        let cases = prepare_all(&dataset, args.pool.small_block_gas)?;
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
                "the whole block pipeline (parallel/{}, every block and state root verified; stages = share of busy time; vs pure = wall ÷ execution-alone median above):\n{}\n",
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
        for warning in gigagas_lab::report::noise_warnings(&report) {
            say!(console, "warning: {warning}");
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

/// Reads a result file: one report, or every report of a sweep.
fn read_reports(path: &std::path::Path) -> Result<Vec<gigagas_lab::BenchReport>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    gigagas_lab::read_reports(&bytes)
        .with_context(|| format!("{}: unreadable result", path.display()))
}

/// The executor's dispatch order for a scheduler, applied to recorded traces.
fn scheduler_order(name: &str, txs: &[gigagas_lab::TxTrace]) -> Vec<usize> {
    let scheduler: Scheduler = name.parse().expect("scheduler names come from Scheduler");
    let limits: Vec<u64> = txs.iter().map(|t| t.gas_limit).collect();
    let gas: Vec<u64> = txs.iter().map(|t| t.gas).collect();
    scheduler
        .order(&limits, Some(&gas), 0)
        .expect("gas weights are present")
}

fn cmd_report(args: ReportArgs) -> Result<()> {
    let out_path = args
        .out
        .clone()
        .unwrap_or_else(|| args.file.with_extension("html"));
    let out = Output::new(
        "--out",
        &out_path,
        &Input::all("FILE", std::slice::from_ref(&args.file)),
    )?;
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    if let Some(page) = peers::report_html(&bytes) {
        let page =
            page.with_context(|| format!("{}: unreadable peers result", args.file.display()))?;
        return out.write(page.as_bytes());
    }
    let reports = gigagas_lab::read_reports(&bytes)
        .with_context(|| format!("{}: unreadable result", args.file.display()))?;
    let names: Vec<String> = Scheduler::ALL.iter().map(|s| s.name().to_owned()).collect();
    let threads = [1, 2, 4, 8, 16, 32, 64];
    let with_predictions: Vec<_> = reports
        .into_iter()
        .map(|report| {
            let predictions =
                gigagas_lab::simulate::predict(&report, &names, &threads, &[1], &scheduler_order);
            (report, predictions)
        })
        .collect();
    let html = match with_predictions.as_slice() {
        [(report, predictions)] => gigagas_lab::html::render(report, predictions),
        several => gigagas_lab::html::render_sweep(several),
    };
    out.write(html.as_bytes())
}

fn cmd_simulate(args: SimulateArgs) -> Result<()> {
    for &t in &args.threads {
        limits::threads("--threads", t)?;
    }
    for &k in &args.mega {
        check_range("--mega", k, 1, limits::MAX_MEGA)?;
    }
    let threads = unique(&args.threads);
    let megas = unique(&args.mega);
    let names: Vec<String> = unique(&args.scheduler)
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    let reports = read_reports(&args.file)?;
    for report in &reports {
        let predictions =
            gigagas_lab::simulate::predict(report, &names, &threads, &megas, &scheduler_order);
        println!(
            "{}: {}: {} blocks, {} txs; 1-thread traces calibrated on the measured 1-thread runs",
            args.file.display(),
            report.data,
            report.blocks.len(),
            report.phases.txs
        );
        println!(
            "{}",
            gigagas_lab::table::simulation_table(report, &predictions)
        );
    }
    Ok(())
}

/// The results of one side of a comparison, several files pooled per data set.
fn read_side(files: &[PathBuf]) -> Result<Vec<gigagas_lab::BenchReport>> {
    let sets = files
        .iter()
        .map(|f| read_reports(f))
        .collect::<Result<Vec<_>>>()?;
    let pool = |reports: Vec<&gigagas_lab::BenchReport>| {
        gigagas_lab::compare::pool(&reports).map_err(anyhow::Error::msg)
    };
    if sets.iter().all(|s| s.len() == 1) {
        return Ok(vec![pool(sets.iter().map(|s| &s[0]).collect())?]);
    }
    sets[0]
        .iter()
        .map(|first| {
            let same: Vec<&gigagas_lab::BenchReport> = sets
                .iter()
                .map(|s| s.iter().find(|r| r.data == first.data))
                .collect::<Option<_>>()
                .with_context(|| format!("{} is not in every file of its side", first.data))?;
            pool(same)
        })
        .collect()
}

fn show(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn cmd_compare(args: CompareArgs) -> Result<()> {
    let a = read_side(&args.a)?;
    let b = read_side(&args.b)?;
    // One report each: compared directly. Sweeps: data sets paired by name.
    let pairs: Vec<(&gigagas_lab::BenchReport, &gigagas_lab::BenchReport)> =
        if a.len() == 1 && b.len() == 1 {
            vec![(&a[0], &b[0])]
        } else {
            a.iter()
                .filter_map(|ra| b.iter().find(|rb| rb.data == ra.data).map(|rb| (ra, rb)))
                .collect()
        };
    if pairs.is_empty() {
        bail!("{} and {} share no data set", show(&args.a), show(&args.b));
    }
    let mut comparisons = Vec::new();
    for (ra, rb) in &pairs {
        let mut rows = gigagas_lab::compare::compare(ra, rb, args.floor).map_err(|e| {
            anyhow::anyhow!(
                "no verdict for B = {} vs A = {}: {e}",
                show(&args.b),
                show(&args.a)
            )
        })?;
        if pairs.len() > 1 {
            for row in &mut rows {
                row.config = format!("{}: {}", ra.data, row.config);
            }
        }
        comparisons.extend(rows);
    }
    if comparisons.is_empty() {
        bail!("the two results share no configuration");
    }
    if args.markdown {
        print!(
            "{}",
            gigagas_lab::table::comparison_markdown(&comparisons, args.floor)
        );
    } else {
        println!(
            "B = {} vs A = {} ({} repeats vs {}); floor {:.1}%",
            show(&args.b),
            show(&args.a),
            pairs[0].1.settings.repeats,
            pairs[0].0.settings.repeats,
            args.floor * 100.0
        );
        println!("{}", gigagas_lab::table::comparison_table(&comparisons));
    }
    for (ra, rb) in &pairs {
        if let Some(warning) = gigagas_lab::report::load_mismatch(ra, rb) {
            eprintln!("warning: {}: {warning}", ra.data);
        }
    }
    Ok(())
}

fn cmd_pack(args: PackArgs) -> Result<()> {
    let out = Output::new(
        "--out",
        &args.out,
        &Input::all("--data", std::slice::from_ref(&args.data)),
    )?;
    let blocks = match args.blocks {
        Some(b) => b,
        None => DataSource::open(&args.data)?.block_numbers()?,
    };
    let mut size = 0;
    out.write_via_path(|path| {
        size = gigagas_data::pack_sample(&args.data, &blocks, path, args.level)?;
        Ok(())
    })?;
    eprintln!(
        "packed {} blocks into {} ({:.2} MB)",
        blocks.len(),
        args.out.display(),
        size as f64 / 1e6
    );
    Ok(())
}
