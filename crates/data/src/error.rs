use std::path::PathBuf;

/// Everything that can be wrong with an input data set. Each variant names the file and the
/// item so that a user can find the defect without a debugger.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// File that failed.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A file could not be written (an archive being packed, a member being unpacked).
    #[error("{path}: cannot write ({what}): {source}")]
    Write {
        /// File that failed.
        path: PathBuf,
        /// What was being written.
        what: String,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A file is not valid JSON or does not have the expected shape.
    #[error("{path}: {what}: {source}")]
    Json {
        /// File that failed.
        path: PathBuf,
        /// Item being parsed (e.g. "transaction 5").
        what: String,
        /// Underlying error.
        source: serde_json::Error,
    },
    /// A value inside a file is malformed or inconsistent.
    #[error("{path}: {what}")]
    Invalid {
        /// File that holds the bad value.
        path: PathBuf,
        /// What is wrong, naming the item.
        what: String,
    },
    /// A transaction has a type this build does not know.
    #[error("{path}: transaction {index} ({hash}): unknown transaction type {tx_type}")]
    UnknownTxType {
        /// Block file.
        path: PathBuf,
        /// Index of the transaction in the block.
        index: usize,
        /// Transaction hash as given in the file.
        hash: String,
        /// The type field as given.
        tx_type: String,
    },
    /// A pre-state account refers to code that the data set does not contain.
    #[error(
        "{path}: account {address} has code hash {code_hash} but bytecodes.json has no such code"
    )]
    MissingCode {
        /// Pre-state file.
        path: PathBuf,
        /// Account that refers to the code.
        address: alloy_primitives::Address,
        /// Missing hash.
        code_hash: alloy_primitives::B256,
    },
    /// The data set holds no blocks.
    #[error("{path}: no blocks found (expected blocks/<number>/block.json)")]
    NoBlocks {
        /// Data set root.
        path: PathBuf,
    },
    /// The embedded or given archive is corrupt.
    #[error("{path}: corrupt archive: {source}")]
    Archive {
        /// Archive path or name.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
}
