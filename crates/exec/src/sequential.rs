//! The sequential baseline: one transaction after another on one state, building the BAL.

use crate::{lifecycle::Lifecycle, receipt_of, system, ExecError, PreparedBlock, StateProvider};
use alloy_eip7928::{compute_block_access_list_hash, BlockAccessIndex, BlockAccessList};
use alloy_primitives::B256;
use gigagas_data::PostState;
use gigagas_receipt::TxReceipt;
use revm::{
    context::ContextTr,
    database::{CacheState, State},
    handler::MainBuilder,
    ExecuteCommitEvm, ExecuteEvm,
};
use std::time::Instant;

/// What a parallel run needs besides the block: the block access list (canonical EIP-7928
/// order) and the lifecycle records for pre-Cancun semantics the BAL cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockAccess {
    /// The block access list.
    pub bal: BlockAccessList,
    /// Self-destructs and pre-EIP-161 materialisations by index.
    pub lifecycle: Lifecycle,
}

impl BlockAccess {
    /// keccak256(RLP(BAL)), the value of the header's `blockAccessListHash`.
    pub fn hash(&self) -> B256 {
        compute_block_access_list_hash(&self.bal)
    }
}

/// Result of a sequential run.
#[derive(Debug, Clone)]
pub struct SequentialRun {
    /// One receipt per transaction.
    pub receipts: Vec<TxReceipt>,
    /// The BAL built while executing, with the lifecycle records.
    pub access: BlockAccess,
    /// Wall time of each transaction (execute + commit), nanoseconds.
    pub tx_nanos: Vec<u64>,
    /// Storage slots each transaction accessed: (read only, written).
    pub tx_slots: Vec<(u32, u32)>,
    /// Heap allocations the transactions made (execute, commit, receipt), summed (0 unless
    /// the counting allocator is installed: `gigagas_alloc`).
    pub tx_allocations: u64,
    /// Gas each transaction spent before refunds.
    pub tx_gas_spent: Vec<u64>,
    /// Wall time of the whole block: pre-execution, transactions, post-execution, BAL
    /// construction; nanoseconds.
    pub exec_nanos: u64,
    /// Every account the block touched, in its final state (the input of
    /// `gigagas_state::apply_changes`).
    pub post: PostState,
}

/// Result of a sequential run that built no BAL ([`execute_sequential_without_bal`]).
#[derive(Debug, Clone)]
pub struct PlainSequentialRun {
    /// One receipt per transaction.
    pub receipts: Vec<TxReceipt>,
    /// Wall time of each transaction (execute + commit), nanoseconds.
    pub tx_nanos: Vec<u64>,
    /// Heap allocations the transactions made, summed (0 without the counting allocator).
    pub tx_allocations: u64,
    /// Wall time of the whole block: pre-execution, transactions, post-execution;
    /// nanoseconds.
    pub exec_nanos: u64,
    /// Every account the block touched, in its final state.
    pub post: PostState,
}

/// Executes `block` sequentially on `pre_state` with revm's BAL builder.
pub fn execute_sequential<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
) -> Result<SequentialRun, ExecError> {
    let (run, access) = run_sequential(block, pre_state, true)?;
    Ok(SequentialRun {
        receipts: run.receipts,
        access,
        tx_nanos: run.tx_nanos,
        tx_slots: run.tx_slots,
        tx_allocations: run.tx_allocations,
        tx_gas_spent: run.tx_gas_spent,
        exec_nanos: run.exec_nanos,
        post: run.post.into(),
    })
}

/// Executes `block` sequentially on `pre_state` on a plain revm `State`: no BAL builder and no
/// lifecycle records — what a node without EIP-7928 does. Everything else (pre- and
/// post-execution, per-transaction timing, receipts) is what [`execute_sequential`] does, so
/// the difference between the two is the cost of building the BAL.
pub fn execute_sequential_without_bal<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
) -> Result<PlainSequentialRun, ExecError> {
    let (run, _) = run_sequential(block, pre_state, false)?;
    Ok(PlainSequentialRun {
        receipts: run.receipts,
        tx_nanos: run.tx_nanos,
        tx_allocations: run.tx_allocations,
        exec_nanos: run.exec_nanos,
        post: run.post.into(),
    })
}

/// What both sequential entry points measure.
struct Core {
    receipts: Vec<TxReceipt>,
    tx_nanos: Vec<u64>,
    tx_slots: Vec<(u32, u32)>,
    tx_allocations: u64,
    tx_gas_spent: Vec<u64>,
    exec_nanos: u64,
    post: CacheState,
}

/// The sequential run, with revm's BAL builder and the lifecycle records when `build_bal`
/// (returned as the [`BlockAccess`]), on a plain `State` otherwise (the access returned is
/// then empty).
fn run_sequential<S: StateProvider>(
    block: &PreparedBlock<'_>,
    pre_state: &S,
    build_bal: bool,
) -> Result<(Core, BlockAccess), ExecError> {
    let number = block.number();
    let hook = crate::provider::intermediate_roots(block, pre_state)?;
    let start = Instant::now();
    let mut state = State::builder()
        .with_database_ref(pre_state)
        .with_bal_builder_if(build_bal)
        .build();
    state.set_bal_index(BlockAccessIndex::PRE_EXECUTION);
    system::pre_execution(&mut state, block.input, &block.envs.cfg, &block.envs.block)?;

    let mut lifecycle = Lifecycle::default();
    let mut receipts = Vec::with_capacity(block.txs.len());
    let mut tx_nanos = Vec::with_capacity(block.txs.len());
    let mut tx_slots = Vec::with_capacity(block.txs.len());
    let mut tx_gas_spent = Vec::with_capacity(block.txs.len());
    let mut cumulative = 0u64;
    let mut tx_allocations = 0u64;
    {
        let mut evm =
            crate::eip7610::context(&mut state, block.envs.block.clone(), block.envs.cfg.clone())
                .build_mainnet();
        for (i, tx) in block.txs.iter().enumerate() {
            let t0 = Instant::now();
            let a0 = crate::thread_allocations();
            let index = BlockAccessIndex::from_tx_index(i as u64);
            evm.ctx.db_mut().set_bal_index(index);
            ExecError::check_gas_allowance(
                number,
                i,
                tx.gas_limit,
                block.envs.block.gas_limit,
                cumulative,
            )?;
            let out = evm
                .transact(block.tx_env(i)?)
                .map_err(|e| ExecError::from_evm(number, i, e))?;
            if build_bal {
                lifecycle.record(index, &out.state);
            }
            tx_slots.push(slot_counts(&out.state));
            evm.commit(out.state);
            cumulative += out.result.tx_gas_used();
            tx_gas_spent.push(out.result.gas().total_gas_spent());
            let mut receipt = receipt_of(tx, out.result, cumulative);
            if let Some((hook, pre)) = hook {
                receipt.post_state = Some(hook.root(pre, &evm.ctx.db_mut().cache));
            }
            receipts.push(receipt);
            tx_nanos.push(t0.elapsed().as_nanos() as u64);
            tx_allocations += crate::thread_allocations() - a0;
        }
    }
    state.set_bal_index(BlockAccessIndex::from_tx_index(block.txs.len() as u64));
    system::post_execution(&mut state, block.input, &block.envs.cfg, &block.envs.block)?;
    let access = BlockAccess {
        bal: state.take_built_alloy_bal().unwrap_or_default(),
        lifecycle,
    };
    let exec_nanos = start.elapsed().as_nanos() as u64;
    Ok((
        Core {
            receipts,
            tx_nanos,
            tx_allocations,
            tx_slots,
            tx_gas_spent,
            exec_nanos,
            post: std::mem::take(&mut state.cache),
        },
        access,
    ))
}

/// (slots only read, slots written) in one transaction's state changes.
fn slot_counts(diff: &revm::state::EvmState) -> (u32, u32) {
    diff.values()
        .flat_map(|account| account.storage.values())
        .fold((0, 0), |(read, written), slot| {
            if slot.is_changed() {
                (read, written + 1)
            } else {
                (read + 1, written)
            }
        })
}
