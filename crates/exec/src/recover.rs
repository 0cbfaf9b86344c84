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
    let spec = block
        .spec
        .unwrap_or_else(|| crate::spec::mainnet_spec(&block.header));
    let homestead = spec.is_enabled_in(SpecId::HOMESTEAD);
    (0..block.transactions.len())
        .into_par_iter()
        .map(|tx| recover_sender(block, tx, homestead))
        .collect()
}

/// Recovers the sender of transaction `tx` of `block` and checks it against the file's `from`.
/// `homestead`: reject high-`s` signatures (EIP-2).
pub fn recover_sender(
    block: &BlockInput,
    tx: usize,
    homestead: bool,
) -> Result<Address, ExecError> {
    let t = &block.transactions[tx];
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
}
