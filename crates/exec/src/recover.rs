//! Sender recovery from signatures, in parallel.

use crate::ExecError;
use alloy_consensus::transaction::SignerRecoverable;
use alloy_primitives::Address;
use gigagas_data::BlockInput;
use rayon::prelude::*;
use revm::primitives::hardfork::SpecId;

/// Recovers every transaction's sender from its signature (rayon, all cores of the current
/// pool) and checks it against the sender the block file states. Signatures with a high `s`
/// value are accepted only before Homestead (EIP-2).
pub fn recover_senders(block: &BlockInput) -> Result<Vec<Address>, ExecError> {
    let homestead = crate::spec::mainnet_spec(&block.header).is_enabled_in(SpecId::HOMESTEAD);
    block
        .transactions
        .par_iter()
        .enumerate()
        .map(|(tx, t)| {
            let recovered = if homestead {
                t.envelope.recover_signer()
            } else {
                t.envelope.recover_signer_unchecked()
            };
            let sender = recovered.map_err(|e| ExecError::Sender {
                block: block.number(),
                tx,
                what: e.to_string(),
            })?;
            if sender != t.claimed_sender {
                return Err(ExecError::Sender {
                    block: block.number(),
                    tx,
                    what: format!(
                        "signature recovers to {sender}, the block file says {}",
                        t.claimed_sender
                    ),
                });
            }
            Ok(sender)
        })
        .collect()
}
