//! `gigagas differential --workload W[,W..]`: the first generated block of each workload
//! through gigagas (the generator's own check, then both paths again on the scenario) and
//! geth's `evm t8n`, compared.
//!
//! Compared: state root, receipts root, block gas used, each transaction's gas used and
//! status, and the block access list account by account and by hash. On Amsterdam geth
//! 1.17.10 also calls the EIP-8282 builder contracts after the transactions (revm 43 does
//! not), so their BAL accounts are left out and the BAL hash is compared as geth's BAL
//! without them against gigagas's (as `scenario`'s fork run and the generated-chain test do).
//! gigagas's outcome is also compared with the header the generator wrote.

use crate::{compare, engine, geth, scenario, Outcome};
use gigagas_gen::{GenOptions, Workload};
use revm::primitives::hardfork::SpecId;
use std::path::Path;

/// Why a workload could not be compared (a difference is not an error: it is reported).
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// Generation (which verifies both gigagas paths) failed.
    #[error("{workload}: generating the block: {error}")]
    Generate {
        /// The workload.
        workload: String,
        /// The error.
        error: Box<gigagas_gen::GenError>,
    },
    /// gigagas's paths on the scenario failed or disagreed.
    #[error("{workload}: gigagas: {error}")]
    Gigagas {
        /// The workload.
        workload: String,
        /// The error.
        error: Box<gigagas_exec::ExecError>,
    },
    /// geth gave no result.
    #[error("{workload}: geth: {error}")]
    Geth {
        /// The workload.
        workload: String,
        /// The error.
        error: Box<geth::GethError>,
    },
    /// The generated chain's genesis could not be expanded.
    #[error("{workload}: genesis: {error}")]
    Genesis {
        /// The workload.
        workload: String,
        /// The error.
        error: String,
    },
}

/// One workload's comparison.
#[derive(Debug, Clone)]
pub struct WorkloadRow {
    /// The workload with its parameters.
    pub workload: String,
    /// Fork.
    pub spec: SpecId,
    /// Transactions in the block.
    pub txs: usize,
    /// gigagas's outcome (parallel path; the sequential one agreed).
    pub gigagas: Outcome,
    /// geth's outcome.
    pub geth: Outcome,
    /// Every difference, one line each (empty: identical on everything compared).
    pub differences: Vec<String>,
    /// BAL accounts left out of the comparison (EIP-8282 on Amsterdam).
    pub ignored: Vec<alloy_primitives::Address>,
}

/// Generates one block of `workload` at `block_gas` gas under `spec` (EIP-7825's
/// transaction cap, seed `seed`), runs it through gigagas on `threads` workers and through
/// geth `evm` at `evm`, and compares.
pub fn run_workload(
    evm: &Path,
    workload: Workload,
    spec: SpecId,
    block_gas: u64,
    seed: u64,
    threads: usize,
) -> Result<WorkloadRow, WorkloadError> {
    let name = workload.to_string();
    let options = GenOptions {
        workload,
        blocks: 1,
        block_gas,
        seed,
        spec,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 16,
        verify_threads: threads,
        precompiles: Vec::new(),
        slots: (workload == Workload::SstoreBloated).then_some(5_000),
        spread: false,
        existing_slots: false,
    };
    let chain =
        gigagas_gen::generate(&options, &|_| {}).map_err(|error| WorkloadError::Generate {
            workload: name.clone(),
            error: Box::new(error),
        })?;
    let Some(first) = chain.blocks.first() else {
        return Err(WorkloadError::Genesis {
            workload: name,
            error: "the generator returned no block".into(),
        });
    };
    let alloc = chain
        .meta
        .full_alloc()
        .map_err(|error| WorkloadError::Genesis {
            workload: name.clone(),
            error,
        })?;
    let s = scenario::from_generated_block(spec, alloc, first);
    let ours = engine::run(&s, threads).map_err(|error| WorkloadError::Gigagas {
        workload: name.clone(),
        error: Box::new(error),
    })?;
    let theirs = geth::run_t8n(evm, &s).map_err(|error| WorkloadError::Geth {
        workload: name.clone(),
        error: Box::new(error),
    })?;
    let amsterdam = spec.is_enabled_in(SpecId::AMSTERDAM);
    let ignored = if amsterdam {
        scenario::eip8282_contracts().to_vec()
    } else {
        Vec::new()
    };
    let mut differences = compare::differences(&ours, &theirs, &s.labels, &ignored);
    if amsterdam {
        // The BAL hash: geth's BAL without the EIP-8282 accounts against gigagas's.
        differences.retain(|d| !d.starts_with("BAL hash"));
        let geth_bal: Option<Vec<_>> = theirs.bal.as_ref().map(|bal| {
            bal.iter()
                .filter(|a| !ignored.contains(&a.address))
                .cloned()
                .collect()
        });
        let geth_hash = geth_bal
            .as_ref()
            .map(|b| alloy_eip7928::compute_block_access_list_hash(b));
        if geth_hash != ours.bal_hash {
            differences.push(format!(
                "BAL hash without the EIP-8282 accounts: gigagas {:?}, geth {geth_hash:?}",
                ours.bal_hash
            ));
        }
    }
    // gigagas on the scenario against the header the generator wrote.
    let h = &first.block.header;
    for (what, header, got) in [
        ("state root", h.state_root, ours.state_root),
        ("receipts root", h.receipts_root, ours.receipts_root),
    ] {
        if header != got {
            differences.push(format!(
                "{what}: generated header {header}, gigagas on the scenario {got}"
            ));
        }
    }
    if h.gas_used != ours.gas_used {
        differences.push(format!(
            "gas used: generated header {}, gigagas on the scenario {}",
            h.gas_used, ours.gas_used
        ));
    }
    if amsterdam && h.block_access_list_hash != ours.bal_hash {
        differences.push(format!(
            "BAL hash: generated header {:?}, gigagas on the scenario {:?}",
            h.block_access_list_hash, ours.bal_hash
        ));
    }
    Ok(WorkloadRow {
        workload: name,
        spec,
        txs: s.transactions.len(),
        gigagas: ours,
        geth: theirs,
        differences,
        ignored,
    })
}
