//! Verification of execution results. Every speed figure gigagas prints is preceded by these
//! checks: header values (gas used, receipts root, logs bloom), parallel against sequential
//! transaction by transaction, and each transaction's writes against the block access list.
//!
//! Architecture invariant: this crate compares; it never executes. Every failure is a
//! [`VerifyError`] naming the block, the transaction index, and the account and slot or field.

mod bal;
pub mod consensus;
mod error;
pub mod mutation;
mod receipts;

pub use bal::{
    bal_divergence, check_tx_against_bal, count_writes_per_index, BalItem, BalViolation,
};
pub use error::VerifyError;
pub use receipts::{check_against_header, compare_receipts, HeaderCheck};
