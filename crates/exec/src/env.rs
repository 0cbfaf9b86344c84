//! Execution environment of a block: revm's block, config and transaction environments.

use crate::{spec, ExecError};
use alloy_consensus::{Transaction as _, TxEnvelope};
use alloy_eips::eip7840::BlobParams;
use alloy_primitives::{Address, U256};
use gigagas_data::BlockInput;
use revm::{
    context::{BlockEnv, CfgEnv, TxEnv},
    context_interface::block::BlobExcessGasAndPrice,
    primitives::hardfork::SpecId,
};

/// Everything revm needs to run a block's transactions, derived once per block.
#[derive(Debug, Clone)]
pub struct BlockEnvs {
    /// Fork rules.
    pub spec: SpecId,
    /// Chain configuration with the fork's gas table.
    pub cfg: CfgEnv,
    /// Block-level environment (coinbase, base fee, randomness, blob gas price, ...).
    pub block: BlockEnv,
}

impl BlockEnvs {
    /// Derives the environment of a block: its data set's fork when it names one, else the
    /// mainnet schedule.
    pub fn mainnet(input: &BlockInput) -> Result<Self, ExecError> {
        let header = &input.header;
        if header.number == spec::DAO_FORK_BLOCK {
            return Err(ExecError::Unsupported {
                block: header.number,
                what: "the DAO fork's irregular state change".into(),
            });
        }
        Ok(Self::with_spec(
            input,
            input.spec.unwrap_or_else(|| spec::mainnet_spec(header)),
        ))
    }

    /// Derives the environment of `input` under the fork rules `spec` (chain id
    /// `input.chain_id`).
    pub fn with_spec(input: &BlockInput, spec: SpecId) -> Self {
        let header = &input.header;
        let mut cfg = CfgEnv::<SpecId>::default().with_spec_and_mainnet_gas_params(spec);
        cfg.chain_id = input.chain_id;
        let blob_excess_gas_and_price = header.excess_blob_gas.map(|excess| {
            let fraction = if spec.is_enabled_in(SpecId::PRAGUE) {
                BlobParams::prague().update_fraction
            } else {
                BlobParams::cancun().update_fraction
            };
            BlobExcessGasAndPrice::new(excess, fraction as u64)
        });
        let block = BlockEnv {
            number: U256::from(header.number),
            beneficiary: header.beneficiary,
            timestamp: U256::from(header.timestamp),
            gas_limit: header.gas_limit,
            basefee: header.base_fee_per_gas.unwrap_or_default(),
            difficulty: header.difficulty,
            prevrandao: spec.is_enabled_in(SpecId::MERGE).then_some(header.mix_hash),
            blob_excess_gas_and_price,
            ..Default::default()
        };
        Self { spec, cfg, block }
    }
}

/// revm's transaction environment for a signed transaction from `sender`.
pub fn tx_env(tx: &TxEnvelope, sender: Address) -> TxEnv {
    TxEnv {
        tx_type: tx.tx_type() as u8,
        caller: sender,
        gas_limit: tx.gas_limit(),
        gas_price: tx.max_fee_per_gas(),
        kind: tx.kind(),
        value: tx.value(),
        data: tx.input().clone(),
        nonce: tx.nonce(),
        chain_id: tx.chain_id(),
        access_list: tx.access_list().cloned().unwrap_or_default(),
        gas_priority_fee: tx.max_priority_fee_per_gas(),
        blob_hashes: tx
            .blob_versioned_hashes()
            .map(<[_]>::to_vec)
            .unwrap_or_default(),
        max_fee_per_blob_gas: tx.max_fee_per_blob_gas().unwrap_or_default(),
        authorization_list: tx
            .authorization_list()
            .map(|list| {
                list.iter()
                    .cloned()
                    .map(revm::context::either::Either::Left)
                    .collect()
            })
            .unwrap_or_default(),
    }
}
