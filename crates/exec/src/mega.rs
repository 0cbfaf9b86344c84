//! Mega-blocks: K consecutive blocks executed as one unit. Their BALs are merged into one
//! index space (block b's index j becomes `offset(b) + j`, after every index of the blocks
//! before it), every transaction of every block is dispatched from one shared order, each
//! runs in its own block's environment against "first pre-state + merged BAL writes of earlier
//! global indices", and the results are committed and verified per original block.

use crate::{
    commit::commit_block,
    parallel::{merge_receipts, run_unit, TxDone, Unit},
    BlockAccess, ExecError, Lifecycle, ParallelPlan, ParallelRun, PreparedBlock, Scheduler,
    StateProvider, WorkerPool,
};
use alloy_eip7928::{AccountChanges, BlockAccessIndex, BlockAccessList, SlotChanges};
use alloy_primitives::{Address, U256};
use gigagas_data::PreState;
use gigagas_verify::{count_writes_per_index, BalViolation};
use revm::state::bal::Bal;
use std::{collections::BTreeMap, sync::Arc, time::Instant};

/// The merged BAL of K consecutive blocks and each block's own plan.
#[derive(Debug)]
pub struct MegaPlan {
    bal: Arc<Bal>,
    lifecycle: Lifecycle,
    writes_per_index: Vec<u32>,
    /// Global index of each block's index 0.
    offsets: Vec<u64>,
    /// Each block's own validated plan (for its canonical commit and BAL check).
    blocks: Vec<ParallelPlan>,
    gas_weights: Vec<u64>,
}

fn shift(index: BlockAccessIndex, by: u64) -> BlockAccessIndex {
    BlockAccessIndex::new(index.get() + by)
}

/// Merges per-block BALs into one index space; `offsets[b]` is added to block b's indices.
pub fn merge_bals(bals: &[&BlockAccessList], offsets: &[u64]) -> BlockAccessList {
    let mut merged: BTreeMap<Address, AccountChanges> = BTreeMap::new();
    let mut slots: BTreeMap<Address, BTreeMap<U256, SlotChanges>> = BTreeMap::new();
    for (bal, &offset) in bals.iter().zip(offsets) {
        for account in bal.iter() {
            let m = merged
                .entry(account.address)
                .or_insert_with(|| AccountChanges {
                    address: account.address,
                    ..Default::default()
                });
            m.storage_reads
                .extend(account.storage_reads.iter().copied());
            m.balance_changes
                .extend(account.balance_changes.iter().map(|c| {
                    let mut c = c.clone();
                    c.block_access_index = shift(c.block_access_index, offset);
                    c
                }));
            m.nonce_changes
                .extend(account.nonce_changes.iter().map(|c| {
                    let mut c = c.clone();
                    c.block_access_index = shift(c.block_access_index, offset);
                    c
                }));
            m.code_changes.extend(account.code_changes.iter().map(|c| {
                let mut c = c.clone();
                c.block_access_index = shift(c.block_access_index, offset);
                c
            }));
            let account_slots = slots.entry(account.address).or_default();
            for slot in &account.storage_changes {
                let s = account_slots
                    .entry(slot.slot)
                    .or_insert_with(|| SlotChanges {
                        slot: slot.slot,
                        changes: Vec::new(),
                    });
                s.changes.extend(slot.changes.iter().map(|c| {
                    let mut c = c.clone();
                    c.block_access_index = shift(c.block_access_index, offset);
                    c
                }));
            }
        }
    }
    merged
        .into_values()
        .map(|mut account| {
            let written = slots.remove(&account.address).unwrap_or_default();
            account.storage_reads.sort_unstable();
            account.storage_reads.dedup();
            account.storage_reads.retain(|s| !written.contains_key(s));
            account.storage_changes = written.into_values().collect();
            account
        })
        .collect()
}

impl MegaPlan {
    /// Plans `blocks` (each the child of the one before; forks may change between them, every
    /// transaction runs under its own block's rules) from their accesses; `gas_weights` per
    /// block enable the gas-used scheduler. Lifecycle records (pre-Cancun self-destructs) are
    /// merged into the same index space as the BALs.
    pub fn new(
        blocks: &[&PreparedBlock<'_>],
        accesses: &[&BlockAccess],
        gas_weights: Vec<Vec<u64>>,
    ) -> Result<Self, ExecError> {
        let first = blocks.first().map_or(0, |b| b.number());
        for pair in blocks.windows(2) {
            if pair[1].input.header.parent_hash != pair[0].input.hash {
                return Err(ExecError::Unsupported {
                    block: pair[1].number(),
                    what: format!("mega-block: not the child of block {}", pair[0].number()),
                });
            }
        }
        let mut offsets = Vec::with_capacity(blocks.len());
        let mut next = 0u64;
        for b in blocks {
            offsets.push(next);
            next += b.txs.len() as u64 + 2;
        }
        let plans = blocks
            .iter()
            .zip(accesses)
            .zip(&gas_weights)
            .map(|((b, a), w)| ParallelPlan::new(b.number(), a, b.txs.len(), Some(w.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        let bals: Vec<&BlockAccessList> = accesses.iter().map(|a| &a.bal).collect();
        let merged = merge_bals(&bals, &offsets);
        let lifecycles: Vec<&Lifecycle> = accesses.iter().map(|a| &a.lifecycle).collect();
        let bal = crate::parallel::lookup_from_alloy(&merged)
            .map_err(|e| ExecError::bal(first, BalViolation::Malformed(format!("{e:?}"))))?;
        Ok(Self {
            writes_per_index: count_writes_per_index(&bal, next.saturating_sub(1)),
            bal: Arc::new(bal),
            lifecycle: Lifecycle::merged(&lifecycles, &offsets),
            offsets,
            blocks: plans,
            gas_weights: gas_weights.concat(),
        })
    }
}

/// Executes the mega-block on `pool` in `scheduler` order, then commits and verifies each
/// block. `pre_state` is the unit's (see `gigagas_data::PreState::for_consecutive`). Returns
/// one run per block; its `exec_nanos`, `head_nanos` and `serial_nanos` are the whole
/// mega-block's.
pub fn execute_mega<S: StateProvider>(
    blocks: &[&PreparedBlock<'_>],
    pre_state: &S,
    plan: &MegaPlan,
    pool: &WorkerPool,
    scheduler: Scheduler,
) -> Result<Vec<ParallelRun>, ExecError> {
    let first = blocks.first().map_or(0, |b| b.number());
    let gas_limits: Vec<u64> = blocks
        .iter()
        .flat_map(|b| b.txs.iter().map(|t| t.gas_limit))
        .collect();
    let order = scheduler.order(&gas_limits, Some(&plan.gas_weights), first)?;
    let unit = Unit {
        blocks,
        bal: &plan.bal,
        lifecycle: &plan.lifecycle,
        writes_per_index: &plan.writes_per_index,
        offsets: &plan.offsets,
        plans: &plan.blocks,
    };
    let start = Instant::now();
    let (done, times) = run_unit(&unit, pre_state, pool, &order, None)?;
    // Receipts per block, in block order (all of them before any commit: the worker phase).
    let mut per_block: Vec<Vec<TxDone>> = Vec::with_capacity(blocks.len());
    let mut rest = done.into_iter();
    for block in blocks {
        per_block.push(rest.by_ref().take(block.txs.len()).collect());
    }
    let receipts = blocks
        .iter()
        .zip(&mut per_block)
        .map(|(block, d)| merge_receipts(block, d))
        .collect::<Result<Vec<_>, _>>()?;
    let exec_nanos = start.elapsed().as_nanos() as u64;
    let (head_nanos, serial_nanos) = times.since(start);
    blocks
        .iter()
        .zip(per_block)
        .zip(receipts)
        .zip(&plan.blocks)
        .map(|(((block, d), r), p)| {
            let pre: &PreState = &block.input.pre_state;
            let mut run = commit_block(block, pre, p, None, d, r, exec_nanos)?;
            (run.head_nanos, run.serial_nanos) = (head_nanos, serial_nanos);
            Ok(run)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_eip7928::{BalanceChange, StorageChange};

    #[test]
    fn merging_shifts_indices_and_drops_reads_of_written_slots() {
        let a = Address::repeat_byte(1);
        let idx = BlockAccessIndex::new;
        let block1 = vec![AccountChanges {
            address: a,
            storage_reads: vec![U256::from(7)],
            balance_changes: vec![BalanceChange {
                block_access_index: idx(1),
                post_balance: U256::from(5),
            }],
            ..Default::default()
        }];
        let block2 = vec![AccountChanges {
            address: a,
            storage_changes: vec![SlotChanges {
                slot: U256::from(7),
                changes: vec![StorageChange {
                    block_access_index: idx(2),
                    new_value: U256::from(9),
                }],
            }],
            ..Default::default()
        }];
        let merged = merge_bals(&[&block1, &block2], &[0, 4]);
        assert_eq!(merged.len(), 1);
        assert!(merged[0].storage_reads.is_empty());
        assert_eq!(
            merged[0].storage_changes[0].changes[0]
                .block_access_index
                .get(),
            6
        );
        assert_eq!(merged[0].balance_changes[0].block_access_index.get(), 1);
    }
}
