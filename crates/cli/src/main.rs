//! `gigagas`: the command line. `main` only parses and dispatches: each subcommand lives in
//! its own file under `commands/`, which turns its flags into the library's options value,
//! calls the library and prints the result (cargo's and ripgrep's layout).

#![deny(clippy::print_stdout, clippy::print_stderr)]

use crate::common::note;
use anyhow::Result;
use clap::{Parser, Subcommand};
use commands::*;

mod commands;
mod common;
mod limits;
mod output;
mod pages;
mod store;
mod term;

/// Ethereum block execution engine and benchmark lab built on EIP-7928 block-level access
/// lists: execute blocks sequentially and in parallel from their BAL, verify both, measure.
///
/// Execute and measure: run, bench, simulate, compare, report. Verify against others:
/// conformance, differential, peers. BAL size and composition: bal. Data: gen, fetch, inject, pack, export, db. Shell:
/// completions.
#[derive(Parser)]
#[command(name = "gigagas", version = VERSION, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process and matched once: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Execute and verify every block of a data set in one mode; one line per block.
    Run(run::RunArgs),
    /// The main job: every configuration over a data set, verified, with warm-up and repeats.
    Bench(bench::BenchArgs),
    /// Predict time and speedup at any thread count by replaying a bench result's 1-thread
    /// transaction traces through each scheduler; compares with measured runs where present.
    Simulate(simulate::SimulateArgs),
    /// Write one self-contained HTML report with SVG plots of a result: bench (one data set
    /// or a sweep), peers or bal stats.
    Report(report::ReportArgs),
    /// Compare two bench results (B against A): throughput change per configuration with a
    /// bootstrap 95% interval and a verdict that counts only beyond --floor.
    Compare(compare::CompareArgs),
    /// Run Ethereum blockchain tests (files or directories) through the sequential and the
    /// BAL-parallel path: state root, receipts root, bloom, gas, expected rejections.
    Conformance(conformance::ConformanceArgs),
    /// Run one signed differential block (transfers, deployment, storage, revert, calls,
    /// self-destruct, EIP-7702) through gigagas (both paths) and geth's `evm t8n`, per fork,
    /// and print every difference.
    Differential(differential::DifferentialArgs),
    /// Generate a verified chain of signed blocks for a workload (gigagas.chain/1), loadable
    /// with `run --data DIR` and `bench --data DIR`.
    Gen(gen::GenArgs),
    /// Pull blocks and their pre-state from an Ethereum JSON-RPC node (eth_getBlockByNumber,
    /// debug_traceBlockByNumber with prestateTracer) into the mainnet layout, for
    /// `run --data DIR` and `bench --data DIR`. Resumable: a re-run skips complete blocks.
    Fetch(fetch::FetchArgs),
    /// Send a generated workload (the transactions of `gen`, plus the deployments of its
    /// contracts) to a node with eth_sendRawTransaction, optionally funding its senders from
    /// the node's unlocked account first; waits for inclusion and reports latency per
    /// transaction and per block.
    Inject(inject::InjectArgs),
    /// Pack blocks of a mainnet-layout directory into a compressed data set (.tar.zst with a
    /// SHA-256 manifest and a zstd checksum, both checked on load).
    Pack(pack::PackArgs),
    /// The on-disk state store: `db init --data DIR --out DBDIR`, `db verify DBDIR`.
    Db(db::DbArgs),
    /// Write a generated chain for other engines: an ethereum/tests blockchain test
    /// (blocktest.json, for `evm blocktest`, `revme blockchaintest`) and/or chain.rlp +
    /// genesis.json (for `geth init` + `geth import`).
    Export(peers::ExportArgs),
    /// The same blocks through other engines (geth evm blocktest, geth import, revme), timed
    /// in the same run as gigagas sequential and parallel; each must reach the same head.
    Peers(peers::PeersArgs),
    /// Block access lists: `bal stats` (size and composition per block, fork and data set).
    Bal(bal::BalArgs),
    /// Print a shell completion script for gigagas to stdout, e.g.
    /// `gigagas completions bash > ~/.local/share/bash-completion/completions/gigagas`.
    Completions(completions::CompletionsArgs),
    /// Sender recovery on an NVIDIA GPU: `gpu info`, `gpu check` (against libsecp256k1),
    /// `gpu bench` (recoveries per second, GPU against CPU).
    Gpu(gpu::GpuArgs),
}

/// `--version`: the package version, the commit it was built from (`+dirty` when the sources
/// had uncommitted changes), the build profile and the compiler.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("GIGAGAS_COMMIT"),
    "; uncommitted changes: ",
    env!("GIGAGAS_DIRTY"),
    "; ",
    env!("GIGAGAS_PROFILE"),
    " build; ",
    env!("GIGAGAS_RUSTC"),
    ")"
);

/// This binary's build, recorded in every result file (`provenance.build`).
fn build_info() -> gigagas_lab::Build {
    gigagas_lab::Build {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        commit: env!("GIGAGAS_COMMIT").to_owned(),
        dirty: match env!("GIGAGAS_DIRTY") {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        profile: env!("GIGAGAS_PROFILE").to_owned(),
        rustc: env!("GIGAGAS_RUSTC").to_owned(),
    }
}

/// The counting allocator of diagnostics builds (`--features count-alloc`): `bench` then
/// reports allocations per transaction.
#[cfg(feature = "count-alloc")]
#[global_allocator]
static ALLOCATOR: gigagas_alloc::CountingAlloc = gigagas_alloc::CountingAlloc;

/// The allocator of normal builds: mimalloc. The node's hot paths allocate on one thread and
/// free on another (each worker builds a transaction's state changes, the commit frees them);
/// glibc's arenas serialise those frees. Measured on a dense 300M block at 2 threads
/// (`docs/results/pipeline-spec-2core.md`, A-B-B-A): the canonical commit 46% and the BAL
/// preparation 48% faster than with the system allocator; the node pipeline's end to end,
/// which sender recovery dominates here, unchanged within the noise.
#[cfg(not(feature = "count-alloc"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    gigagas_lab::Build::register(build_info());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    // A mapped store file that cannot grow (a full disk) raises SIGBUS: say so and exit 74.
    if let Err(e) = gigagas_guard::fault::report_sigbus() {
        note!("warning: cannot install the SIGBUS handler: {e}");
    }
    // Ctrl-C, SIGTERM, SIGHUP: children killed, temporary files removed, then exit 128+n.
    if let Err(e) = gigagas_guard::interrupt::install() {
        note!("warning: cannot install the signal handler: {e}");
    }
    let result = real_main();
    gigagas_guard::interrupt::settle();
    if let Err(err) = result {
        // Control characters escaped: an error may quote a node, a file or a child process.
        note!(
            "error: {}",
            gigagas_guard::text::printable_lines(&error_chain(&err))
        );
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
    let cli = Cli::parse();
    limits::check_environment()?;
    match cli.command {
        Command::Run(args) => run::exec(args),
        Command::Bench(args) => bench::exec(args),
        Command::Simulate(args) => simulate::exec(args),
        Command::Compare(args) => compare::exec(args),
        Command::Report(args) => report::exec(args),
        Command::Conformance(args) => conformance::exec(args),
        Command::Differential(args) => differential::exec(args),
        Command::Gen(args) => gen::exec(args),
        Command::Fetch(args) => fetch::exec(args),
        Command::Inject(args) => inject::exec(args),
        Command::Pack(args) => pack::exec(args),
        Command::Db(args) => db::exec(args),
        Command::Export(args) => peers::exec_export(args),
        Command::Peers(args) => peers::exec(args),
        Command::Bal(args) => bal::exec(args),
        Command::Completions(args) => completions::exec::<Cli>(args),
        Command::Gpu(args) => gpu::exec(args),
    }
}
