//! Differential check against go-ethereum: one deterministic, signed block (transfers, a
//! deployment, storage writes and reads, a revert, a call between contracts, a
//! self-destruct, EIP-7702 delegation) is executed by gigagas — sequentially and from its BAL
//! in parallel — and by geth's `evm t8n`; state root, receipts root, gas (per transaction)
//! and, on Amsterdam, the block access list (hash, and account by account) are compared.
//!
//! - [`scenario`]: the block (alloc, environment, signed transactions) for a fork.
//! - [`engine`]: gigagas's result for it.
//! - [`geth`]: finding or installing `evm` v1.17.10 and running `evm t8n`.
//! - [`compare`]: the differences, readable.
//! - [`eip7928`]: the EIP-7928 tests of ethereum/execution-specs ported as named cases (valid
//!   blocks with the BAL entries they state; invalid-BAL blocks with the lie and the defect).
//! - [`suite`]: runs those cases through both gigagas paths and geth (`gigagas differential
//!   --suite eip7928`).
//! - [`workloads`]: the first generated block of a `gen` workload through both (`gigagas
//!   differential --workload W`).
//!
//! Architecture invariant: the scenario is built once and handed to both engines unchanged;
//! nothing here decides a result by itself — it reports what differs.

pub mod compare;
pub mod eip7928;
pub mod engine;
pub mod geth;
pub mod scenario;
pub mod suite;
pub mod workloads;

use alloy_eip7928::BlockAccessList;
use alloy_primitives::B256;

/// What one engine produced for a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Post-state root.
    pub state_root: B256,
    /// Receipts root.
    pub receipts_root: B256,
    /// Gas used by the block.
    pub gas_used: u64,
    /// Gas used by each transaction.
    pub tx_gas: Vec<u64>,
    /// Status of each transaction.
    pub tx_success: Vec<bool>,
    /// The block access list (Amsterdam).
    pub bal: Option<BlockAccessList>,
    /// keccak(RLP(BAL)) (Amsterdam).
    pub bal_hash: Option<B256>,
}
