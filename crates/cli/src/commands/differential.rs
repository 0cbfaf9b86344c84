//! `gigagas differential`: the same blocks through gigagas and geth's `evm t8n`.

use crate::common::gas_label;
use crate::common::{available_cores, Console};
use crate::common::{note, out};
use crate::limits::parse_block_gas;
use crate::output::Output;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct DifferentialArgs {
    /// Forks to compare, comma-separated (prague, osaka, amsterdam; default all three, with
    /// --workload amsterdam).
    #[arg(long, value_delimiter = ',')]
    fork: Option<Vec<String>>,
    /// Instead of the per-fork block: the first generated block of each workload,
    /// comma-separated (as `gigagas gen`, or `eest-bal`), through gigagas and geth; exits
    /// non-zero on any difference (docs/workloads.md).
    #[arg(long, value_delimiter = ',', conflicts_with = "suite")]
    workload: Vec<gigagas_gen::WorkloadSet>,
    /// With --workload: block gas (default 30M; at most 10G).
    #[arg(long, value_parser = parse_block_gas, requires = "workload")]
    block_gas: Option<u64>,
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

fn cmd_differential_suite(args: &DifferentialArgs, suite: &str) -> Result<()> {
    use gigagas_differential::suite as s;
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
        let evm = evm_or_hint(args.install, true)?;
        note!("geth: {}", evm.display());
        Some(evm)
    };
    let bar = crate::common::spinner("running the EIP-7928 scenarios");
    let report = s::run(
        evm.as_deref(),
        available_cores().min(4),
        args.filter.as_deref(),
    );
    bar.finish_and_clear();
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

/// geth's `evm`, or an error naming every way on: this command's own `--install`, the install
/// script, and (for the suite, or instead of the per-fork check) `--suite eip7928 --no-geth`.
fn evm_or_hint(install: bool, suite: bool) -> Result<PathBuf> {
    gigagas_differential::geth::evm_binary(install).map_err(|e| {
        let without = if suite {
            "or run the suite without geth: add --no-geth"
        } else {
            "or check gigagas alone: `gigagas differential --suite eip7928 --no-geth`"
        };
        anyhow::anyhow!(
            "{e}; install it with `gigagas differential --install` (go install, needs Go) or \
             scripts/install-geth-evm.sh, {without}"
        )
    })
}

pub fn exec(args: DifferentialArgs) -> Result<()> {
    use gigagas_differential::{compare::differences, engine, geth, scenario};
    use revm::primitives::hardfork::SpecId;
    if let Some(suite) = &args.suite {
        return cmd_differential_suite(&args, suite);
    }
    let default_forks = if args.workload.is_empty() {
        vec![
            "prague".to_owned(),
            "osaka".to_owned(),
            "amsterdam".to_owned(),
        ]
    } else {
        vec!["amsterdam".to_owned()]
    };
    let mut specs = Vec::new();
    for name in args.fork.as_ref().unwrap_or(&default_forks) {
        specs.push(match name.to_ascii_lowercase().as_str() {
            "prague" => SpecId::PRAGUE,
            "osaka" => SpecId::OSAKA,
            "amsterdam" => SpecId::AMSTERDAM,
            other => bail!("--fork {other:?}: unknown fork (prague, osaka, amsterdam)"),
        });
    }
    let evm = evm_or_hint(args.install, false)?;
    note!("geth: {}", evm.display());
    if !args.workload.is_empty() {
        return differential_workloads(&args, &specs, &evm);
    }
    let mut disagreements = 0;
    for (name, spec) in args
        .fork
        .as_ref()
        .unwrap_or(&default_forks)
        .iter()
        .zip(specs)
    {
        let s = scenario::build(spec);
        let ours = engine::run(&s, available_cores()).context("gigagas")?;
        let theirs = geth::run_t8n(&evm, &s)?;
        let ignored = if spec == SpecId::AMSTERDAM {
            scenario::eip8282_contracts().to_vec()
        } else {
            Vec::new()
        };
        let diff = differences(&ours, &theirs, &s.labels, &ignored);
        out!(
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
            out!("  {line}");
        }
        if !ignored.is_empty() {
            out!(
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

/// `differential --workload`: the first generated block of each workload through both.
fn differential_workloads(
    args: &DifferentialArgs,
    specs: &[revm::primitives::hardfork::SpecId],
    evm: &std::path::Path,
) -> Result<()> {
    use gigagas_differential::workloads;
    let block_gas = args.block_gas.unwrap_or(30_000_000);
    let gigagas_gen::Expanded { pairs, skipped } = gigagas_gen::expand_sets(
        &args.workload,
        &[block_gas],
        Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
    )
    .map_err(anyhow::Error::msg)?;
    for reason in &skipped {
        note!("skipped: {reason}");
    }
    let mut disagreements = 0;
    for &spec in specs {
        for &(workload, gas) in &pairs {
            let row = workloads::run_workload(evm, workload, spec, gas, 1, available_cores())?;
            out!(
                "{} {:?} {}: {} txs, state root {}, gas {} (geth {}) — {}",
                row.workload,
                spec,
                gas_label(gas),
                row.txs,
                row.gigagas.state_root,
                row.gigagas.gas_used,
                row.geth.gas_used,
                if row.differences.is_empty() {
                    "identical".to_owned()
                } else {
                    format!("{} difference(s)", row.differences.len())
                }
            );
            for line in &row.differences {
                out!("  {line}");
            }
            if !row.differences.is_empty() {
                disagreements += 1;
            }
        }
    }
    if specs.contains(&revm::primitives::hardfork::SpecId::AMSTERDAM) {
        out!(
            "(Amsterdam: the BAL accounts of the EIP-8282 contracts are not compared and the BAL hash is geth's without them: geth 1.17.10 calls them after the transactions, revm 43 does not)"
        );
    }
    if disagreements > 0 {
        bail!("gigagas and geth disagree on {disagreements} workload block(s)");
    }
    Ok(())
}
