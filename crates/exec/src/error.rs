use alloy_primitives::Address;
use gigagas_verify::{BalViolation, VerifyError};

/// Why a block could not be executed or did not verify. Every variant names the block and,
/// where there is one, the transaction.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The block needs a rule this engine does not implement.
    #[error("block {block}: unsupported: {what}")]
    Unsupported {
        /// Block number.
        block: u64,
        /// The missing rule.
        what: String,
    },
    /// A signature does not recover, or recovers to a different sender than the file states.
    #[error("block {block} tx {tx}: sender recovery: {what}")]
    Sender {
        /// Block number.
        block: u64,
        /// Transaction index.
        tx: usize,
        /// What went wrong.
        what: String,
    },
    /// The transaction is invalid in this block (nonce, balance, intrinsic gas, fee caps,
    /// blob rules, gas above what the block has left, ...): the block must be rejected.
    #[error("block {block} tx {tx}: invalid transaction: {what}")]
    InvalidTx {
        /// Block number.
        block: u64,
        /// Transaction index.
        tx: usize,
        /// The rule it breaks.
        what: String,
    },
    /// revm failed on a transaction or a state read failed (including reads the BAL does not
    /// cover, which mean the BAL is lying).
    #[error("block {block} tx {tx}: {what}")]
    Evm {
        /// Block number.
        block: u64,
        /// Transaction index (`None` for pre/post-execution system operations).
        tx: TxLabel,
        /// revm's error.
        what: String,
    },
    /// Account lifecycle records (self-destruct / materialisation) disagree with execution.
    #[error("block {block} tx {tx}: account {address}: lifecycle record says {expected}, execution did {actual}")]
    Lifecycle {
        /// Block number.
        block: u64,
        /// Transaction index.
        tx: usize,
        /// Account.
        address: Address,
        /// Recorded event.
        expected: String,
        /// Event execution produced.
        actual: String,
    },
    /// Results did not verify.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The state store failed while the block was read, written or made durable (a full
    /// disk, an I/O error, a lock): the store's own message, with where it stopped.
    #[error("block {block}: state store: {what}")]
    State {
        /// Block number.
        block: u64,
        /// What failed.
        what: String,
    },
}

/// Which part of a block an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxLabel {
    /// Pre-execution system calls (BAL index 0).
    PreExecution,
    /// Transaction `i` (0-based; BAL index i+1).
    Tx(usize),
    /// Post-execution: rewards and withdrawals (BAL index n+1).
    PostExecution,
}

impl std::fmt::Display for TxLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PreExecution => f.write_str("pre-execution"),
            Self::Tx(i) => write!(f, "{i}"),
            Self::PostExecution => f.write_str("post-execution"),
        }
    }
}

impl ExecError {
    /// Maps a revm error for transaction `tx`: validation failures become
    /// [`ExecError::InvalidTx`], everything else [`ExecError::Evm`].
    pub(crate) fn from_evm<E: std::fmt::Display>(
        block: u64,
        tx: usize,
        err: revm::context::result::EVMError<E>,
    ) -> Self {
        use revm::context::result::EVMError;
        match err {
            EVMError::Transaction(e) => Self::InvalidTx {
                block,
                tx,
                what: e.to_string(),
            },
            EVMError::Header(e) => Self::InvalidTx {
                block,
                tx,
                what: e.to_string(),
            },
            other => Self::Evm {
                block,
                tx: TxLabel::Tx(tx),
                what: other.to_string(),
            },
        }
    }

    /// The EIP-1559/yellow-paper block gas check: a transaction may not ask for more gas
    /// than the block has left after the transactions before it.
    pub(crate) fn check_gas_allowance(
        block: u64,
        tx: usize,
        tx_gas_limit: u64,
        block_gas_limit: u64,
        cumulative_before: u64,
    ) -> Result<(), Self> {
        let left = block_gas_limit.saturating_sub(cumulative_before);
        if tx_gas_limit > left {
            return Err(Self::InvalidTx {
                block,
                tx,
                what: format!("gas limit {tx_gas_limit} exceeds the {left} gas the block has left"),
            });
        }
        Ok(())
    }

    pub(crate) fn bal(block: u64, violation: BalViolation) -> Self {
        Self::Verify(VerifyError::Bal {
            block,
            violation: Box::new(violation),
        })
    }
}
