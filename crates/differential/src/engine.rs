//! gigagas's result for a scenario: sequential run (building the BAL), BAL-parallel run from
//! it, both verified against each other; roots of the parallel path's post-state.

use crate::{scenario::Scenario, Outcome};
use alloy_consensus::{proofs, Header, EMPTY_OMMER_ROOT_HASH};
use alloy_eip7928::BlockAccessList;
use alloy_primitives::{map::HashMap, Address, U256};
use gigagas_data::{BlockInput, PreAccount, PreState, Transaction};
use gigagas_exec::{
    execute_sequential, recover_senders, BlockAccess, BlockEnvs, ExecError, PreparedBlock,
    Scheduler, WorkerPool,
};
use revm::{bytecode::Bytecode, primitives::hardfork::SpecId, state::AccountInfo};
use std::sync::Arc;

/// The genesis state of a scenario.
pub fn pre_state(scenario: &Scenario) -> PreState {
    let accounts: HashMap<Address, PreAccount> = scenario
        .alloc
        .iter()
        .map(|(address, account)| {
            let code = Bytecode::new_raw(account.code.clone());
            let info = AccountInfo {
                balance: account.balance,
                nonce: account.nonce,
                code_hash: code.hash_slow(),
                code: Some(code),
                ..Default::default()
            };
            let storage = account.storage.iter().map(|(k, v)| (*k, *v)).collect();
            let fill = None;
            (
                *address,
                PreAccount {
                    info,
                    storage,
                    fill,
                },
            )
        })
        .collect();
    let hashes: HashMap<u64, _> = [(scenario.env.number - 1, scenario.env.parent_hash)]
        .into_iter()
        .collect();
    PreState::new(accounts, Arc::new(hashes))
}

/// The block of a scenario as gigagas loads blocks (header values it cannot know yet — roots,
/// gas used — are zero; they are outputs here).
pub fn block_input(scenario: &Scenario) -> BlockInput {
    let env = &scenario.env;
    let spec = scenario.spec;
    let header = Header {
        parent_hash: env.parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: env.coinbase,
        transactions_root: proofs::calculate_transaction_root(&scenario.transactions),
        number: env.number,
        gas_limit: env.gas_limit,
        timestamp: env.timestamp,
        mix_hash: env.prevrandao,
        base_fee_per_gas: Some(env.base_fee),
        withdrawals_root: Some(proofs::calculate_withdrawals_root(&scenario.withdrawals)),
        blob_gas_used: Some(0),
        excess_blob_gas: Some(0),
        parent_beacon_block_root: Some(env.parent_beacon_block_root),
        difficulty: U256::ZERO,
        ..Default::default()
    };
    let _ = spec;
    BlockInput {
        hash: header.hash_slow(),
        transactions: scenario
            .transactions
            .iter()
            .map(|envelope| Transaction {
                envelope: envelope.clone(),
                claimed_sender: alloy_consensus::transaction::SignerRecoverable::recover_signer(
                    envelope,
                )
                .unwrap_or_default(),
            })
            .collect(),
        withdrawals: scenario.withdrawals.clone(),
        ommers: Vec::new(),
        ommer_headers: Vec::new(),
        pre_state: Arc::new(pre_state(scenario)),
        source: "differential scenario".into(),
        spec: Some(scenario.spec),
        access_list: None,
        // The scenario's header carries no state root; the roots are compared with geth's.
        complete_state: false,
        chain_id: crate::scenario::CHAIN_ID,
        header,
    }
}

/// Runs `scenario` through both gigagas paths (parallel on `threads` workers), requires them
/// to agree per transaction, and returns the parallel path's outcome.
pub fn run(scenario: &Scenario, threads: usize) -> Result<Outcome, ExecError> {
    run_detailed(scenario, threads).map(|d| d.outcome)
}

/// Both paths' result for a scenario, with the BAL (and lifecycle records) the sequential
/// path built.
#[derive(Debug, Clone)]
pub struct Detailed {
    /// The parallel path's outcome (the sequential path agreed with it).
    pub outcome: Outcome,
    /// The BAL the sequential path built.
    pub access: BlockAccess,
}

/// Like [`run`], also returning the sequential path's BAL and lifecycle records.
pub fn run_detailed(scenario: &Scenario, threads: usize) -> Result<Detailed, ExecError> {
    let input = block_input(scenario);
    let senders = recover_senders(&input)?;
    let prepared = PreparedBlock::with_envs(
        &input,
        &senders,
        BlockEnvs::with_spec(&input, scenario.spec),
    );
    let pre = &input.pre_state;
    let gigagas_engine::BothPaths {
        sequential,
        parallel,
    } = gigagas_engine::execute_both(
        &prepared,
        pre,
        &WorkerPool::new(threads),
        &[Scheduler::GasUsed],
    )?;
    let Some((_, parallel)) = parallel.into_iter().next() else {
        return Err(ExecError::Unsupported {
            block: input.number(),
            what: "the parallel path returned no run for the one scheduler asked for".into(),
        });
    };
    let seq_root = gigagas_engine::post_state_root(pre, &sequential.post);
    let post = gigagas_state::apply_changes(pre, &parallel.post);
    let state_root = gigagas_state::state_root(&post);
    if seq_root != state_root {
        return Err(ExecError::Verify(gigagas_verify::VerifyError::Header {
            block: input.number(),
            field: "state_root (parallel vs sequential)",
            expected: seq_root.to_string(),
            actual: state_root.to_string(),
        }));
    }
    let amsterdam = scenario.spec.is_enabled_in(SpecId::AMSTERDAM);
    Ok(Detailed {
        outcome: Outcome {
            state_root,
            receipts_root: gigagas_receipt::receipts_root(&parallel.receipts),
            gas_used: gigagas_receipt::block_gas_used(&parallel.receipts, prepared.header_rules()),
            tx_gas: parallel.receipts.iter().map(|r| r.gas_used).collect(),
            tx_success: parallel.receipts.iter().map(|r| r.success).collect(),
            bal_hash: amsterdam.then(|| sequential.access.hash()),
            bal: amsterdam.then(|| sequential.access.bal.clone()),
        },
        access: sequential.access,
    })
}

/// What each gigagas path made of a block that comes with a lying BAL.
#[derive(Debug)]
pub struct LieVerdict {
    /// Sequential path: the BAL it built differs from the given one (`Some(what differs)`),
    /// or `None` when it built exactly the given BAL (the lie was accepted).
    pub sequential: Option<String>,
    /// Parallel path fed the given BAL: `Err` is its rejection, `Ok` an acceptance.
    pub parallel: Result<(), ExecError>,
}

/// Runs `scenario` with `given` as the block's BAL: the sequential path builds its own and
/// compares; the parallel path plans from `given` (with the sequential run's lifecycle
/// records) and executes in block order, so the lowest-index defect is the one reported.
pub fn run_with_bal(
    scenario: &Scenario,
    given: &BlockAccessList,
    threads: usize,
) -> Result<LieVerdict, ExecError> {
    let input = block_input(scenario);
    let senders = recover_senders(&input)?;
    let prepared = PreparedBlock::with_envs(
        &input,
        &senders,
        BlockEnvs::with_spec(&input, scenario.spec),
    );
    let pre = &*input.pre_state;
    let sequential = execute_sequential(&prepared, pre)?;
    let built = &sequential.access.bal;
    let seq = if built == given {
        None
    } else {
        let mut d = crate::compare::bal_differences(built, given, &[]);
        if d.is_empty() {
            // Same accounts, different list shape (order, duplicates).
            d.push(format!(
                "BAL hash built {} given {}",
                alloy_eip7928::compute_block_access_list_hash(built),
                alloy_eip7928::compute_block_access_list_hash(given)
            ));
        }
        Some(d.join("; "))
    };
    let lying = BlockAccess {
        bal: given.clone(),
        lifecycle: sequential.access.lifecycle.clone(),
    };
    let parallel =
        gigagas_engine::execute_from_bal(&prepared, pre, &lying, &WorkerPool::new(threads))
            .map(|_| ());
    Ok(LieVerdict {
        sequential: seq,
        parallel,
    })
}
