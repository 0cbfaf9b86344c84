//! Header integrity: every block's header must commit to the block it came with, and
//! consecutive blocks must link. Checked at load time for every input format, so no command
//! can run a block whose header was edited.
//!
//! Checked here: the header hashes to the block's stated hash; `transactionsRoot` is the root
//! of its transactions; `withdrawalsRoot` of its withdrawals (present exactly from Shanghai
//! on, i.e. when the header has the field); `ommersHash` of its ommer headers where the input
//! carries them, else (hashes only, mainnet RPC data) the empty-list hash when there are no
//! ommers; at most two ommers; `parentHash` of every block equals the hash of the previous
//! block when both are in the set, and agrees with `block_hashes.json` where that names the
//! parent or the block itself. The state root, receipts root, logs bloom and gas used are
//! results of execution and are verified after it.

use crate::{BlockInput, DataError};
use alloy_consensus::{proofs, EMPTY_OMMER_ROOT_HASH};
use alloy_primitives::{map::HashMap, B256};

fn bad(block: &BlockInput, what: String) -> DataError {
    DataError::Invalid {
        path: block.source.clone(),
        what: format!("block {}: {what}", block.number()),
    }
}

/// Checks that `block`'s header commits to its hash, transactions, withdrawals and ommers.
pub fn check_block(block: &BlockInput) -> Result<(), DataError> {
    let header = &block.header;
    let computed = header.hash_slow();
    if computed != block.hash {
        return Err(bad(
            block,
            format!(
                "header fields hash to {computed} but the block's stated hash is {} (a header field was changed)",
                block.hash
            ),
        ));
    }
    let envelopes: Vec<_> = block
        .transactions
        .iter()
        .map(|t| t.envelope.clone())
        .collect();
    let tx_root = proofs::calculate_transaction_root(&envelopes);
    if tx_root != header.transactions_root {
        return Err(bad(
            block,
            format!(
                "transactionsRoot: header has {}, its {} transactions give {tx_root}",
                header.transactions_root,
                envelopes.len()
            ),
        ));
    }
    match header.withdrawals_root {
        Some(expected) => {
            let root = proofs::calculate_withdrawals_root(&block.withdrawals);
            if root != expected {
                return Err(bad(
                    block,
                    format!(
                        "withdrawalsRoot: header has {expected}, its {} withdrawals give {root}",
                        block.withdrawals.len()
                    ),
                ));
            }
        }
        None if !block.withdrawals.is_empty() => {
            return Err(bad(
                block,
                format!(
                    "{} withdrawals but the header has no withdrawalsRoot",
                    block.withdrawals.len()
                ),
            ))
        }
        None => {}
    }
    if block.ommers.len() > 2 {
        return Err(bad(
            block,
            format!("{} ommers, at most 2 are allowed", block.ommers.len()),
        ));
    }
    if !block.ommer_headers.is_empty() {
        let root = proofs::calculate_ommers_root(&block.ommer_headers);
        if root != header.ommers_hash {
            return Err(bad(
                block,
                format!(
                    "ommersHash: header has {}, its ommer headers give {root}",
                    header.ommers_hash
                ),
            ));
        }
    } else if block.ommers.is_empty() && header.ommers_hash != EMPTY_OMMER_ROOT_HASH {
        return Err(bad(
            block,
            format!(
                "ommersHash: header has {} but the block has no ommers (expected {EMPTY_OMMER_ROOT_HASH})",
                header.ommers_hash
            ),
        ));
    }
    Ok(())
}

/// Checks parent links between consecutive blocks of `blocks` (ascending) and agreement with
/// the data set's table of known block hashes (number → hash, e.g. `block_hashes.json`).
pub fn check_links(blocks: &[BlockInput], known: &HashMap<u64, B256>) -> Result<(), DataError> {
    for pair in blocks.windows(2) {
        let (parent, child) = (&pair[0], &pair[1]);
        if child.number() == parent.number() + 1 && child.header.parent_hash != parent.hash {
            return Err(bad(
                child,
                format!(
                    "parentHash {} is not the hash {} of block {} in the same set",
                    child.header.parent_hash,
                    parent.hash,
                    parent.number()
                ),
            ));
        }
    }
    for block in blocks {
        if let Some(&h) = known.get(&block.number()) {
            if h != block.hash {
                return Err(bad(
                    block,
                    format!("hash {} but the block-hash table says {h}", block.hash),
                ));
            }
        }
        if let Some(n) = block.number().checked_sub(1) {
            if let Some(&h) = known.get(&n) {
                if h != block.header.parent_hash {
                    return Err(bad(
                        block,
                        format!(
                            "parentHash {} but the block-hash table says block {n} is {h}",
                            block.header.parent_hash
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Both checks over a whole set.
pub fn check_all(blocks: &[BlockInput], known: &HashMap<u64, B256>) -> Result<(), DataError> {
    use rayon::prelude::*;
    blocks.par_iter().try_for_each(check_block)?;
    check_links(blocks, known)
}
