//! `gigagas gen`: a generated, verified chain for a workload.

use crate::common::out;
use crate::common::{available_cores, progress};
use crate::limits::{self, check_range, parse_block_gas, parse_tx_gas_cap, TxGasCap};
use crate::output::OutputDir;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct GenArgs {
    /// transfers, erc20, uniswap, nft-mint, mainnet-mix, serial-chain, long-tx,
    /// sstore-bloated, keccak, precompile, 7702, or an EIP-7928 benchmark shape of
    /// execution-specs: bal-serial-chain, bal-state-root, bal-prefetch-cold,
    /// bal-deploy-interact, bal-mixed-graph (docs/workloads.md; parameters also as
    /// `bal-state-root:per-tx:max`).
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
    /// For `sstore-bloated`: the execution-specs seed's block — every SSTORE a cold write of
    /// a new value to an existing genesis slot, spread evenly over the whole key range, no
    /// slot written twice in a block. With `--fork Osaka --block-gas 30M --slots N` it is
    /// `test_sstore_bloated[…-fork_Osaka-…-existing_slots_True-write_new_value_True-30M]`
    /// (docs/workloads.md).
    #[arg(long)]
    existing_slots: bool,
    /// For bal-state-root, bal-deploy-interact, bal-mixed-graph: transactions per block
    /// (greedy: at the transaction gas cap; half; max: each at the least viable gas).
    #[arg(long)]
    density: Option<gigagas_gen::eest::Density>,
    /// For bal-mixed-graph: transactions per serial group, 1 to 1024 (the source: 1, 2, 5).
    #[arg(long)]
    group: Option<u16>,
    /// For bal-state-root (one contract or one per transaction) and bal-deploy-interact
    /// (one deployment then serial calls, or independent deploy + call pairs): single or
    /// per-tx.
    #[arg(long)]
    contracts: Option<gigagas_gen::eest::Contracts>,
}

pub fn exec(args: GenArgs) -> Result<()> {
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
    if args.existing_slots && !bloated {
        bail!("--existing-slots applies to the sstore-bloated workload only");
    }
    let workload =
        gigagas_gen::eest::with_flags(args.workload, args.contracts, args.density, args.group)
            .map_err(anyhow::Error::msg)?;
    let out = OutputDir::new("--out", &args.out, args.force, &[])?;
    let options = gigagas_gen::GenOptions {
        workload,
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
        existing_slots: args.existing_slots,
    };
    let bar = progress(args.blocks as u64, "blocks");
    let chain = gigagas_gen::generate(&options, &|k| bar.set_position(k as u64))?;
    bar.finish_and_clear();
    out.write_with(|dir| chain.write(dir).map_err(Into::into))?;
    let failed: usize = chain.failed_txs.iter().sum();
    out!(
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
