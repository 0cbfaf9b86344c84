use crate::BalViolation;

/// A verification failure. Always a hard error: gigagas never reports a speed figure for a
/// run that produced one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A computed block value differs from the header.
    #[error("block {block}: {field} mismatch: header has {expected}, execution produced {actual}")]
    Header {
        /// Block number.
        block: u64,
        /// Header field (`gas_used`, `receipts_root`, `logs_bloom`).
        field: &'static str,
        /// Value in the header.
        expected: String,
        /// Value execution produced.
        actual: String,
    },
    /// A header breaks a consensus rule against its parent or its body.
    #[error("block {block}: header rule {rule}: {detail}")]
    HeaderRule {
        /// Block number.
        block: u64,
        /// Rule name (`base_fee`, `gas_limit`, `timestamp`, `difficulty`, ...).
        rule: &'static str,
        /// Expected vs found.
        detail: String,
    },
    /// Parallel and sequential execution disagree on one transaction.
    #[error(
        "block {block} tx {tx}: {field} differs: sequential {sequential}, parallel {parallel}"
    )]
    TxResult {
        /// Block number.
        block: u64,
        /// Transaction index (0-based).
        tx: usize,
        /// What differs (status, gas used, logs, ...).
        field: &'static str,
        /// Sequential value.
        sequential: String,
        /// Parallel value.
        parallel: String,
    },
    /// Execution and the block access list disagree.
    #[error("block {block}: {violation}")]
    Bal {
        /// Block number.
        block: u64,
        /// What the BAL got wrong.
        violation: Box<BalViolation>,
    },
}
