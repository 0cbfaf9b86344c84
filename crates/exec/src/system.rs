//! Pre-execution (BAL index 0) and post-execution (BAL index n+1) operations of a block.

use crate::{spec, ExecError, TxLabel};
use alloy_eips::{eip2935, eip4788, eip7002, eip7251};
use alloy_primitives::{Address, Bytes};
use gigagas_data::BlockInput;
use revm::{
    context::{BlockEnv, CfgEnv, ContextTr},
    database::State,
    database_interface::{Database, DatabaseCommitExt},
    handler::{system_call::SYSTEM_ADDRESS, MainBuilder, MainContext, SystemCallEvm},
    primitives::hardfork::SpecId,
    Context, ExecuteCommitEvm,
};

fn system_call<DB: Database>(
    state: &mut State<DB>,
    cfg: &CfgEnv,
    block_env: &BlockEnv,
    label: TxLabel,
    contract: Address,
    data: Bytes,
) -> Result<(), ExecError>
where
    DB::Error: Send + Sync + 'static,
{
    let block = block_env.number.saturating_to::<u64>();
    let mut evm = Context::mainnet()
        .with_db(state)
        .with_block(block_env.clone())
        .with_cfg(cfg.clone())
        .build_mainnet();
    let mut out = evm
        .system_call(contract, data)
        .map_err(|e| ExecError::Evm {
            block,
            tx: label,
            what: format!("system call to {contract}: {e}"),
        })?;
    // As in execution clients: the system caller and the coinbase are not touched by a
    // system call.
    out.state.remove(&SYSTEM_ADDRESS);
    out.state.remove(&evm.ctx.block().beneficiary);
    evm.commit(out.state);
    Ok(())
}

/// Runs the pre-execution system calls of `spec` (EIP-4788 beacon root from Cancun,
/// EIP-2935 history from Prague) on `state`, whose BAL index must be 0.
pub fn pre_execution<DB: Database>(
    state: &mut State<DB>,
    input: &BlockInput,
    cfg: &CfgEnv,
    block_env: &BlockEnv,
) -> Result<(), ExecError>
where
    DB::Error: Send + Sync + 'static,
{
    let header = &input.header;
    if cfg.spec.is_enabled_in(SpecId::CANCUN) {
        if let Some(root) = header.parent_beacon_block_root {
            system_call(
                state,
                cfg,
                block_env,
                TxLabel::PreExecution,
                eip4788::BEACON_ROOTS_ADDRESS,
                root.0.into(),
            )?;
        }
    }
    if cfg.spec.is_enabled_in(SpecId::PRAGUE) {
        system_call(
            state,
            cfg,
            block_env,
            TxLabel::PreExecution,
            eip2935::HISTORY_STORAGE_ADDRESS,
            header.parent_hash.0.into(),
        )?;
    }
    Ok(())
}

/// Runs post-execution operations on `state`, whose BAL index must be n+1: proof-of-work
/// block and ommer-inclusion rewards to the coinbase, withdrawals (Shanghai on) and the
/// EIP-7002/7251 request sweeps (Prague on).
///
/// Ommer miners are rewarded where the input carries the ommer headers (blockchain tests);
/// the mainnet data has only ommer hashes, so there only the inclusion bonus is credited (the
/// miners' own rewards change neither receipts nor gas, and no transaction can observe them).
pub fn post_execution<DB: Database>(
    state: &mut State<DB>,
    input: &BlockInput,
    cfg: &CfgEnv,
    block_env: &BlockEnv,
) -> Result<(), ExecError>
where
    DB::Error: Send + Sync + 'static,
{
    let block = input.number();
    let err = |e: revm::database_interface::bal::EvmDatabaseError<DB::Error>| ExecError::Evm {
        block,
        tx: TxLabel::PostExecution,
        what: e.to_string(),
    };
    let reward = spec::block_reward(cfg.spec);
    let mut credits: Vec<(Address, u128)> = Vec::new();
    if reward > 0 {
        let ommer_bonus = reward / 32 * input.ommers.len() as u128;
        credits.push((input.header.beneficiary, reward + ommer_bonus));
        // Ommer miners: (8 + ommer number - block number) / 8 of the block reward.
        credits.extend(input.ommer_headers.iter().map(|ommer| {
            let age = input.number().saturating_sub(ommer.number).min(8) as u128;
            (ommer.beneficiary, reward * (8 - age) / 8)
        }));
    }
    credits.extend(
        input
            .withdrawals
            .iter()
            .map(|w| (w.address, u128::from(w.amount) * 1_000_000_000)),
    );
    if !credits.is_empty() {
        // One credit per address: `increment_balances` reads every balance before it commits
        // any, so a repeated address (two withdrawals, a miner of block and ommer) would keep
        // only its last credit.
        let mut merged: Vec<(Address, u128)> = Vec::with_capacity(credits.len());
        for (address, amount) in credits {
            match merged.iter_mut().find(|(a, _)| *a == address) {
                Some((_, total)) => *total += amount,
                None => merged.push((address, amount)),
            }
        }
        state.increment_balances(merged).map_err(err)?;
    }
    if cfg.spec.is_enabled_in(SpecId::PRAGUE) {
        for contract in [
            eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS,
            eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS,
        ] {
            system_call(
                state,
                cfg,
                block_env,
                TxLabel::PostExecution,
                contract,
                Bytes::new(),
            )?;
        }
    }
    Ok(())
}
