//! Conformance: the ethereum/tests (and execution-spec-tests) `BlockchainTests` format run
//! through both execution paths.
//!
//! Data flow: [`fixture`] (parse a file into tests) → [`fork`] (network name → fork
//! schedule) → [`chain`] (genesis state and root, then every block: header rules
//! ([`header`]), sequential execution building the BAL, BAL-parallel execution from it, state
//! root of each path's post-state, receipts, bloom, gas; expected rejections) →
//! [`summary`] (pass/fail/skip by directory, fork and reason).
//!
//! Architecture invariant: a test passes only if every selected path agreed with the
//! fixture; anything this crate does not check makes the test a *skip* with a stated reason,
//! never a pass.

pub mod chain;
pub mod disk;
pub mod exceptions;
pub mod fixture;
pub mod fork;
/// Header and body consensus rules (their home is `gigagas_verify::consensus`).
pub use gigagas_verify::consensus as header;
pub mod runner;
pub mod summary;

pub use chain::{run_test, Mode};
pub use runner::{collect_files, run_files, run_files_with, RunOptions};
pub use summary::{Outcome, Status, Summary};
