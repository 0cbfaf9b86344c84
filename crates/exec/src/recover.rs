//! Sender recovery from signatures, in parallel.

use crate::ExecError;
use alloy_consensus::transaction::SignerRecoverable;
use alloy_primitives::Address;
use gigagas_data::BlockInput;
use rayon::prelude::*;

/// Recovers every transaction's sender from its signature (rayon, all cores of the current
/// pool) and checks it against the sender the block file states.
pub fn recover_senders(block: &BlockInput) -> Result<Vec<Address>, ExecError> {
    block
        .transactions
        .par_iter()
        .enumerate()
        .map(|(tx, t)| {
            let sender = t.envelope.recover_signer().map_err(|e| ExecError::Sender {
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
