//! Generated chains: `gigagas gen WORKLOAD --blocks N --block-gas G --seed S --out DIR`.
//!
//! - [`contracts`]: the compiled workload contracts (`contracts/bytecode.json`, built from
//!   Solidity by solc-js) at fixed addresses.
//! - [`workload`]: the genesis allocation of each workload and its stream of transactions.
//! - [`eest`]: the EIP-7928 benchmark shapes of ethereum/execution-specs (`bal-*`), ported
//!   from the source at a pinned commit, and the named set `eest-bal`.
//! - [`live`]: the same streams signed for a live node's chain id and nonces, with the
//!   transactions that deploy the contracts (`gigagas inject`).
//! - [`builder`]: fills blocks by executing candidate transactions on revm (each transaction
//!   is first probed for its gas, then signed with a tight gas limit and executed for real),
//!   computes every header field (state root, receipts root, bloom, gas used, BAL hash), and
//!   verifies the block through gigagas's sequential and BAL-parallel paths with every
//!   scheduler before it is kept.
//!
//! Architecture invariant: deterministic for a seed; nothing is written unless every block
//! verified.

pub mod builder;
pub mod contracts;
pub mod eest;
pub mod live;
pub mod workload;

pub use builder::{generate, GenError, GenOptions, GeneratedChain};
pub use eest::{eest_bal_set, BalShape};
pub use live::{live_workload, LiveOptions, LiveWorkload};
pub use workload::{expand_sets, Expanded, Layout, Precompile, Workload, WorkloadSet};
