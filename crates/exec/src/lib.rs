//! Block execution on revm: the sequential baseline (which builds the block access list) and
//! the BAL-parallel executor with its schedulers.
//!
//! Data flow: [`PreparedBlock::new`] (environment, recovered senders) →
//! [`execute_sequential`] (receipts + [`BlockAccess`]) → [`ParallelPlan::new`] (validated BAL)
//! → [`execute_parallel`] (receipts, per-transaction timings; every transaction checked
//! against the BAL, and the BAL rebuilt and compared).
//!
//! Architecture invariant: no file I/O and no printing; timings are measured here, judged
//! elsewhere.

mod commit;
mod eip7610;
mod env;
mod error;
mod lifecycle;
mod mega;
mod parallel;
mod provider;
mod recover;
mod schedule;
mod sequential;
pub mod spec;
mod system;
mod worker_db;

pub use eip7610::{Eip7610Journal, StorageProbe};
pub use env::{tx_env, BlockEnvs};
pub use error::{ExecError, TxLabel};
pub use lifecycle::{events_of, Lifecycle, LifecycleEvent};
pub use mega::{execute_mega, merge_bals, MegaPlan};
pub use parallel::{execute_parallel, ParallelPlan, ParallelRun, SMALL_BLOCK_GAS};
pub use provider::StateProvider;
pub use recover::{recover_sender, recover_senders};
pub use schedule::{Scheduler, WorkerPool, MAX_WARM_SPIN, WARM_SPIN, WORKER_STACK_BYTES};
pub use sequential::{
    execute_sequential, execute_sequential_without_bal, BlockAccess, PlainSequentialRun,
    SequentialRun,
};
pub use system::{post_execution, pre_execution};
pub use worker_db::WorkerDb;

use alloy_primitives::Address;
use gigagas_data::BlockInput;
use revm::context::TxEnv;

/// A block ready to execute: its environment and one revm transaction environment per
/// transaction (senders already recovered).
#[derive(Debug, Clone)]
pub struct PreparedBlock<'a> {
    /// The block as loaded.
    pub input: &'a BlockInput,
    /// Fork, config and block environment.
    pub envs: BlockEnvs,
    /// Transaction environments in block order.
    pub txs: Vec<TxEnv>,
    /// Recover each sender inside execution (timed with it) instead of using the senders
    /// recovered in advance.
    pub inline_recovery: bool,
    /// Before Byzantium, receipts carry the state root after each transaction. Where the full
    /// state is known (blockchain tests), this computes it from the pre-state and the state
    /// after the transaction, in both paths; `None` (the default, and for touched-only
    /// mainnet pre-state) leaves those receipts roots unchecked.
    pub intermediate_roots: Option<IntermediateRoots>,
}

/// Computes the state root of `pre` overlaid with the accounts of `cache` (see
/// [`PreparedBlock::intermediate_roots`]).
#[derive(Clone)]
pub struct IntermediateRoots(pub std::sync::Arc<RootFn>);

/// The function inside [`IntermediateRoots`].
pub type RootFn = dyn Fn(&gigagas_data::PreState, &revm::database::CacheState) -> alloy_primitives::B256
    + Send
    + Sync;

impl IntermediateRoots {
    /// The root after the changes in `cache`.
    pub fn root(
        &self,
        pre: &gigagas_data::PreState,
        cache: &revm::database::CacheState,
    ) -> alloy_primitives::B256 {
        (self.0)(pre, cache)
    }
}

impl std::fmt::Debug for IntermediateRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IntermediateRoots")
    }
}

impl<'a> PreparedBlock<'a> {
    /// Prepares `input` for execution with the given recovered `senders`.
    pub fn new(input: &'a BlockInput, senders: &[Address]) -> Result<Self, ExecError> {
        Ok(Self::with_envs(input, senders, BlockEnvs::mainnet(input)?))
    }

    /// Prepares `input` for execution in the environment `envs` (e.g. a test chain's fork).
    pub fn with_envs(input: &'a BlockInput, senders: &[Address], envs: BlockEnvs) -> Self {
        let txs = input
            .transactions
            .iter()
            .zip(senders)
            .map(|(tx, sender)| tx_env(&tx.envelope, *sender))
            .collect();
        Self {
            input,
            envs,
            txs,
            inline_recovery: false,
            intermediate_roots: None,
        }
    }

    /// The environment of transaction `i`. With inline recovery its sender is recovered from
    /// the signature here, as part of execution.
    pub fn tx_env(&self, i: usize) -> Result<TxEnv, ExecError> {
        let mut tx = self.txs[i].clone();
        if self.inline_recovery {
            let homestead = self
                .envs
                .spec
                .is_enabled_in(revm::primitives::hardfork::SpecId::HOMESTEAD);
            tx.caller = recover::recover_sender(self.input, i, homestead)?;
        }
        Ok(tx)
    }

    /// Block number.
    pub fn number(&self) -> u64 {
        self.input.number()
    }

    /// The header rules of this block's fork.
    pub fn header_rules(&self) -> gigagas_receipt::HeaderRules {
        gigagas_receipt::HeaderRules {
            receipts_root: self.has_status_receipts() || self.intermediate_roots.is_some(),
            two_dimensional_gas: self
                .envs
                .spec
                .is_enabled_in(revm::primitives::hardfork::SpecId::AMSTERDAM),
        }
    }

    /// The intermediate-root hook, when this block's receipts need it (pre-Byzantium).
    pub(crate) fn intermediate_root_hook(&self) -> Option<&IntermediateRoots> {
        self.intermediate_roots
            .as_ref()
            .filter(|_| !self.has_status_receipts())
    }

    /// Whether receipts carry an EIP-658 status (Byzantium on) so that the receipts root can
    /// be rebuilt without intermediate state roots.
    pub fn has_status_receipts(&self) -> bool {
        self.envs
            .spec
            .is_enabled_in(revm::primitives::hardfork::SpecId::BYZANTIUM)
    }
}

pub(crate) fn receipt_of(
    tx: &TxEnv,
    result: revm::context::result::ExecutionResult,
    cumulative_gas_used: u64,
) -> gigagas_receipt::TxReceipt {
    gigagas_receipt::TxReceipt {
        tx_type: alloy_consensus::TxType::try_from(tx.tx_type)
            .unwrap_or(alloy_consensus::TxType::Legacy),
        success: result.is_success(),
        gas_used: result.tx_gas_used(),
        cumulative_gas_used,
        block_regular_gas: result.gas().block_regular_gas_used(),
        block_state_gas: result.gas().block_state_gas_used(),
        post_state: None,
        // Moved, not cloned: the result is not needed after its receipt.
        logs: result.into_logs(),
    }
}

/// The calling thread's heap allocations so far, in a `count-alloc` build (`gigagas_alloc`);
/// 0 otherwise, so that a normal build reads nothing on the per-transaction path.
#[inline(always)]
pub(crate) fn thread_allocations() -> u64 {
    #[cfg(feature = "count-alloc")]
    {
        gigagas_alloc::thread_allocations()
    }
    #[cfg(not(feature = "count-alloc"))]
    {
        0
    }
}
