//! `gigagas inject`: a generated workload sent to a live node (`gigagas_gen::live` signs it,
//! `gigagas_fetch::inject` sends it and measures inclusion).

use crate::common::{note, out};
use crate::limits::check_range;
use crate::output::Output;
use anyhow::{bail, Context, Result};
use clap::Args;
use gigagas_fetch::inject::{Fees, InjectOptions, Node, Outgoing, Phase};
use gigagas_gen::{live::LiveTx, Precompile, Workload};
use std::{path::PathBuf, time::Duration};

/// Most workload transactions per run (`--txs`).
pub const MAX_TXS: usize = 10_000;
/// Most sender keys (`--senders`): each adds storage slots the token deployments write.
pub const MAX_SENDERS: usize = 64;
/// Highest `--max-fee-gwei`.
pub const MAX_FEE_GWEI: u64 = 10_000;
/// Gas of the `long-tx` workload's long transaction.
const LONG_TX_GAS: u64 = 4_000_000;
/// EIP-7825's per-transaction gas cap (Osaka).
const TX_GAS_CAP: u64 = 1 << 24;
const GWEI: u128 = 1_000_000_000;

/// `gigagas inject` flags.
#[derive(Args)]
pub struct InjectArgs {
    /// JSON-RPC endpoint, http:// or https://. Only its host[:port] is printed.
    #[arg(long, value_name = "URL")]
    rpc: String,
    /// Workload: the same transaction stream as `gigagas gen` (sstore-bloated excepted: its
    /// 100,000-slot contract cannot be deployed by transaction).
    #[arg(long)]
    workload: Workload,
    /// Workload transactions to send, 1 to 10000 (the deployments of its contracts come on
    /// top).
    #[arg(long)]
    txs: usize,
    /// Seed of the stream and of the keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Sender keys, 2 to 64.
    #[arg(long, default_value_t = 16)]
    senders: usize,
    /// Fund the deployer and the senders first from the node's unlocked account
    /// (`eth_accounts[0]`, transfers it signs with `eth_signTransaction`: a dev node's); without
    /// it they must already hold enough.
    #[arg(long)]
    fund_from_node: bool,
    /// maxFeePerGas of every transaction in gwei, 1 to 10000.
    #[arg(long, default_value_t = 100)]
    max_fee_gwei: u64,
    /// maxPriorityFeePerGas in gwei, 0 to --max-fee-gwei.
    #[arg(long, default_value_t = 1)]
    tip_gwei: u64,
    /// Longest wait in seconds, 1 to 3600, for a phase's transactions (funding, deployments,
    /// workload) to be included after its last one is sent.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    wait: u64,
    /// Timeout of one request in seconds, 1 to 3600.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    timeout: u64,
    /// Tries after the first on transport errors and HTTP 429/5xx, 0 to 10.
    #[arg(long, default_value_t = 2)]
    retries: u32,
    /// For `precompile`: which precompiles to call, comma-separated (default all three).
    #[arg(long, value_delimiter = ',')]
    precompile: Vec<Precompile>,
    /// Also write the result as JSON to FILE (`-`: stdout): blocks, latencies, phases.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn outgoing(what: &str, i: usize, n: usize, tx: &LiveTx) -> Outgoing {
    Outgoing {
        label: format!(
            "{what} {} of {n} ({}, from {}, nonce {})",
            i + 1,
            tx.hash,
            tx.sender,
            tx.nonce
        ),
        raw: tx.raw.clone(),
        hash: tx.hash,
    }
}

fn phase_json(p: &Phase) -> serde_json::Value {
    let (p50, p90, max) = p.latency();
    serde_json::json!({
        "txs": p.included.len(),
        "failed": p.failed(),
        "gas_used": p.gas_used(),
        "send_seconds": p.send_seconds,
        "seconds": p.seconds,
        "latency_seconds": {"p50": p50, "p90": p90, "max": max},
        "first_block": p.blocks.first().map(|b| b.number),
        "last_block": p.blocks.last().map(|b| b.number),
        "blocks": p.blocks.iter().map(|b| serde_json::json!({
            "number": b.number, "txs": b.txs, "ours": b.ours,
            "gas_used": b.gas_used, "gas_limit": b.gas_limit,
        })).collect::<Vec<_>>(),
        "latencies_seconds": p.included.iter().map(|i| i.latency.as_secs_f64()).collect::<Vec<_>>(),
    })
}

fn range(p: &Phase) -> String {
    match (p.blocks.first(), p.blocks.last()) {
        (Some(a), Some(b)) if a.number == b.number => format!("block {}", a.number),
        (Some(a), Some(b)) => format!("blocks {}..={}", a.number, b.number),
        _ => "no block".into(),
    }
}

/// Runs `gigagas inject`.
pub fn exec(args: InjectArgs) -> Result<()> {
    check_range("--txs", args.txs, 1, MAX_TXS)?;
    check_range("--senders", args.senders, 2, MAX_SENDERS)?;
    check_range(
        "--max-fee-gwei",
        args.max_fee_gwei as usize,
        1,
        MAX_FEE_GWEI as usize,
    )?;
    if args.tip_gwei > args.max_fee_gwei {
        bail!(
            "--tip-gwei {}: above --max-fee-gwei {}",
            args.tip_gwei,
            args.max_fee_gwei
        );
    }
    if !args.precompile.is_empty() && args.workload != Workload::Precompile {
        bail!("--precompile applies to the precompile workload only");
    }
    if args.workload == Workload::SstoreBloated {
        bail!("--workload sstore-bloated: its contract starts with 100,000 storage slots, too many to deploy by transaction; not injectable");
    }
    let json = args
        .json
        .as_ref()
        .map(|p| Output::new("--json", p, &[]))
        .transpose()?;
    let say = |text: String| {
        if json.as_ref().is_some_and(Output::is_stdout) {
            note!("{text}");
        } else {
            out!("{text}");
        }
    };
    let node = Node::connect(&InjectOptions {
        rpc: args.rpc.clone(),
        timeout: Duration::from_secs(args.timeout),
        attempts: args.retries.saturating_add(1),
        wait: Duration::from_secs(args.wait),
    })?;
    let chain_id = node.chain_id()?;
    let deployer = gigagas_gen::live::deployer_address(args.seed);
    let senders = gigagas_gen::live::sender_addresses(args.seed, args.senders);
    let deployer_nonce = node.nonce(deployer)?;
    let nonces = senders
        .iter()
        .map(|a| node.nonce(*a))
        .collect::<Result<Vec<_>, _>>()?;
    let live = gigagas_gen::live_workload(
        &gigagas_gen::LiveOptions {
            workload: args.workload,
            txs: args.txs,
            seed: args.seed,
            chain_id,
            senders: args.senders,
            precompiles: args.precompile.clone(),
            max_fee_per_gas: args.max_fee_gwei as u128 * GWEI,
            max_priority_fee_per_gas: args.tip_gwei as u128 * GWEI,
            long_tx_gas: LONG_TX_GAS,
            tx_gas_cap: TX_GAS_CAP,
        },
        deployer_nonce,
        &nonces,
    )
    .with_context(|| format!("--workload {}", args.workload))?;
    say(format!(
        "inject: {} transactions of {} (seed {}, {} senders) and {} deployments into chain {chain_id} at {}",
        live.txs.len(),
        args.workload,
        args.seed,
        args.senders,
        live.deployments.len(),
        node.host
    ));

    let need: Vec<_> = live.funding().into_iter().collect();
    let funding = if args.fund_from_node {
        let from = *node.accounts()?.first().context(
            "--fund-from-node: the node offers no account (eth_accounts is empty); start it with an unlocked account (geth --dev) or fund the senders yourself",
        )?;
        let fees = Fees {
            max_fee_per_gas: args.max_fee_gwei as u128 * GWEI,
            max_priority_fee_per_gas: args.tip_gwei as u128 * GWEI,
        };
        let phase = node.fund(from, &need, fees)?;
        say(format!(
            "funded {} accounts from the node's {from} in {} ({:.2} s)",
            need.len(),
            range(&phase),
            phase.seconds
        ));
        Some(phase)
    } else {
        for (address, wei) in &need {
            let has = node.balance(*address)?;
            if has < *wei {
                bail!("account {address} holds {has} wei but its transactions may cost {wei}: fund it, or pass --fund-from-node on a dev node");
            }
        }
        None
    };

    let deployments = if live.deployments.is_empty() {
        None
    } else {
        let n = live.deployments.len();
        let txs: Vec<Outgoing> = live
            .deployments
            .iter()
            .enumerate()
            .map(|(i, d)| outgoing(&format!("deployment of {}:", d.name), i, n, &d.tx))
            .collect();
        let phase = node.send_raw("deployment", &txs)?;
        for (d, inc) in live.deployments.iter().zip(&phase.included) {
            if !inc.success || inc.contract_address != Some(d.address) {
                bail!(
                    "deployment of {} ({}): status {}, created {:?}, expected {}",
                    d.name,
                    d.tx.hash,
                    if inc.success { "success" } else { "failure" },
                    inc.contract_address,
                    d.address
                );
            }
            if node.code_hash(d.address)? != d.code_hash {
                bail!(
                    "deployment of {} at {}: eth_getCode returns other code than the contract's",
                    d.name,
                    d.address
                );
            }
        }
        let names: Vec<&str> = live.deployments.iter().map(|d| d.name.as_str()).collect();
        say(format!(
            "deployed {n} contracts ({}) in {} ({:.2} s)",
            names.join(", "),
            range(&phase),
            phase.seconds
        ));
        Some(phase)
    };

    let n = live.txs.len();
    let txs: Vec<Outgoing> = live
        .txs
        .iter()
        .enumerate()
        .map(|(i, tx)| outgoing("transaction", i, n, tx))
        .collect();
    let phase = node.send_raw("workload", &txs)?;
    let (p50, p90, max) = phase.latency();
    say(format!(
        "sent {n} transactions in {:.2} s; all included in {} within {:.2} s of the first send; {} failed (status 0), {} gas",
        phase.send_seconds,
        range(&phase),
        phase.seconds,
        phase.failed(),
        phase.gas_used()
    ));
    say(format!(
        "inclusion latency per transaction: p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        p50 * 1e3,
        p90 * 1e3,
        max * 1e3
    ));
    say(format!(
        "{:>8} {:>6} {:>6} {:>12} {:>12}",
        "block", "txs", "ours", "gas used", "gas limit"
    ));
    for b in &phase.blocks {
        say(format!(
            "{:>8} {:>6} {:>6} {:>12} {:>12}",
            b.number, b.txs, b.ours, b.gas_used, b.gas_limit
        ));
    }
    if let (Some(a), Some(b)) = (phase.blocks.first(), phase.blocks.last()) {
        say(format!(
            "fetch them: gigagas fetch --rpc URL --from {} --to {} --fork Osaka --out DIR (the fork geth --dev runs)",
            a.number, b.number
        ));
    }
    if let Some(json) = &json {
        let value = serde_json::json!({
            "format": "gigagas.inject/1",
            "chain_id": chain_id,
            "host": node.host,
            "workload": args.workload.name(),
            "seed": args.seed,
            "senders": args.senders,
            "funding": funding.as_ref().map(phase_json),
            "deployments": deployments.as_ref().map(phase_json),
            "workload_phase": phase_json(&phase),
        });
        json.write(&serde_json::to_vec_pretty(&value)?)?;
    }
    Ok(())
}
