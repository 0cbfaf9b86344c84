//! `gigagas fetch`: blocks and their pre-state from a JSON-RPC node.

use crate::common::out;
use crate::common::progress;
use crate::output::{Input, OutputDir};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct FetchArgs {
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

pub fn exec(args: FetchArgs) -> Result<()> {
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
        OutputDir::new_without_force("--out", &args.out, &[])?;
    }
    let bar = progress(0, "fetching");
    let report = gigagas_fetch::fetch(&options, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let report = report?;
    out!(
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
    let out = OutputDir::new_without_force("--out", &args.out, &inputs)?;
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
    out!(
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
