//! Expected exceptions: a block that carries `expectException` passes only when it is rejected
//! *for that reason*.
//!
//! Fixtures name the reason in the execution-specs vocabulary (`TransactionException.X`,
//! `BlockException.Y`, several alternatives separated by `|`; the legacy ethereum/tests
//! fixtures use the same names). Each of this tool's rejection kinds ([`Rejection`]: header
//! and body rules, RLP decoding, revm's transaction validation, header values after
//! execution, the state root, the block access list) is mapped here to the exception names it
//! stands for ([`reason`]); a rejection matches when one of those names is among the
//! fixture's alternatives ([`judge`]).
//!
//! A rejection this table cannot classify, or an expected name the table does not know, is
//! *unmapped*: it is counted and listed in the summary (`exceptions.unmapped`) and fails the
//! test under `--strict-exceptions`; it never passes silently.

use crate::chain::Rejection;
use gigagas_exec::ExecError;
use gigagas_verify::VerifyError;

/// The exception names one of this tool's rejection kinds stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason {
    /// Short name of the rejection kind (`rule gas_limit`, `invalid tx: nonce too low`, ...).
    pub kind: &'static str,
    /// Execution-specs exception names; an entry ending in `*` matches every name with that
    /// prefix.
    pub names: &'static [&'static str],
}

impl Reason {
    /// Whether `name` (one alternative of an `expectException`) is one of this reason's names.
    pub fn accepts(&self, name: &str) -> bool {
        self.names.iter().any(|n| match n.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => *n == name,
        })
    }
}

/// The outcome of comparing a rejection with a block's `expectException`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Rejected for one of the expected reasons.
    Matched(Reason),
    /// Rejected, but for a reason none of the expected names describes.
    Mismatch(Reason),
    /// The mapping cannot tell: the rejection kind is not classified, or an expected name is
    /// not known to it. Says which.
    Unmapped(String),
}

const T: &str = "TransactionException.";
const B: &str = "BlockException.";

/// Every `TransactionException` name of execution-specs
/// (`packages/testing/src/execution_testing/exceptions/exceptions.py`, plus the later
/// `INVALID_CHAIN_ID` / `TYPE_UNKNOWN_TX_PRE_FORK` spellings).
pub const TRANSACTION_EXCEPTIONS: &[&str] = &[
    "TYPE_NOT_SUPPORTED",
    "SENDER_NOT_EOA",
    "ADDRESS_TOO_SHORT",
    "ADDRESS_TOO_LONG",
    "NONCE_MISMATCH_TOO_HIGH",
    "NONCE_MISMATCH_TOO_LOW",
    "NONCE_TOO_BIG",
    "NONCE_IS_MAX",
    "NONCE_OVERFLOW",
    "GASLIMIT_OVERFLOW",
    "VALUE_OVERFLOW",
    "GASPRICE_OVERFLOW",
    "GASLIMIT_PRICE_PRODUCT_OVERFLOW",
    "INVALID_SIGNATURE_VRS",
    "RLP_INVALID_SIGNATURE_R",
    "RLP_INVALID_SIGNATURE_S",
    "RLP_LEADING_ZEROS_GASLIMIT",
    "RLP_LEADING_ZEROS_GASPRICE",
    "RLP_LEADING_ZEROS_VALUE",
    "RLP_LEADING_ZEROS_NONCE",
    "RLP_LEADING_ZEROS_R",
    "RLP_LEADING_ZEROS_S",
    "RLP_LEADING_ZEROS_V",
    "RLP_LEADING_ZEROS_BASEFEE",
    "RLP_LEADING_ZEROS_PRIORITY_FEE",
    "RLP_LEADING_ZEROS_DATA_SIZE",
    "RLP_LEADING_ZEROS_NONCE_SIZE",
    "RLP_TOO_FEW_ELEMENTS",
    "RLP_TOO_MANY_ELEMENTS",
    "RLP_ERROR_EOF",
    "RLP_ERROR_SIZE",
    "RLP_ERROR_SIZE_LEADING_ZEROS",
    "INVALID_CHAINID",
    "INVALID_CHAIN_ID",
    "RLP_INVALID_DATA",
    "RLP_INVALID_GASLIMIT",
    "RLP_INVALID_NONCE",
    "RLP_INVALID_TO",
    "RLP_INVALID_ACCESS_LIST_ADDRESS_TOO_LONG",
    "RLP_INVALID_ACCESS_LIST_ADDRESS_TOO_SHORT",
    "RLP_INVALID_ACCESS_LIST_STORAGE_TOO_LONG",
    "RLP_INVALID_ACCESS_LIST_STORAGE_TOO_SHORT",
    "RLP_INVALID_HEADER",
    "RLP_INVALID_VALUE",
    "EC_RECOVERY_FAIL",
    "INSUFFICIENT_ACCOUNT_FUNDS",
    "INSUFFICIENT_MAX_FEE_PER_GAS",
    "PRIORITY_OVERFLOW",
    "PRIORITY_GREATER_THAN_MAX_FEE_PER_GAS",
    "PRIORITY_GREATER_THAN_MAX_FEE_PER_GAS_2",
    "INSUFFICIENT_MAX_FEE_PER_BLOB_GAS",
    "INTRINSIC_GAS_TOO_LOW",
    "INTRINSIC_GAS_BELOW_FLOOR_GAS_COST",
    "INITCODE_SIZE_EXCEEDED",
    "TYPE_1_TX_PRE_FORK",
    "TYPE_2_TX_PRE_FORK",
    "TYPE_3_TX_PRE_FORK",
    "TYPE_3_TX_ZERO_BLOBS_PRE_FORK",
    "TYPE_3_TX_INVALID_BLOB_VERSIONED_HASH",
    "TYPE_3_TX_WITH_FULL_BLOBS",
    "TYPE_3_TX_BLOB_COUNT_EXCEEDED",
    "TYPE_3_TX_CONTRACT_CREATION",
    "TYPE_3_TX_MAX_BLOB_GAS_ALLOWANCE_EXCEEDED",
    "GAS_ALLOWANCE_EXCEEDED",
    "GAS_LIMIT_EXCEEDS_MAXIMUM",
    "TYPE_3_TX_ZERO_BLOBS",
    "TYPE_4_EMPTY_AUTHORIZATION_LIST",
    "TYPE_4_INVALID_AUTHORITY_SIGNATURE",
    "TYPE_4_INVALID_AUTHORITY_SIGNATURE_S_TOO_HIGH",
    "TYPE_4_TX_CONTRACT_CREATION",
    "TYPE_4_INVALID_AUTHORIZATION_FORMAT",
    "TYPE_4_TX_PRE_FORK",
    "TYPE_UNKNOWN_TX_PRE_FORK",
];

/// Every `BlockException` name of execution-specs, the EIP-7928 ones included
/// (`INVALID_BLOCK_ACCESS_LIST`, `INVALID_BAL_HASH`, `INVALID_BAL_EXTRA_ACCOUNT`,
/// `INVALID_BAL_MISSING_ACCOUNT`, `BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED`).
pub const BLOCK_EXCEPTIONS: &[&str] = &[
    "TOO_MANY_UNCLES",
    "UNCLE_IN_CHAIN",
    "UNCLE_IS_ANCESTOR",
    "UNCLE_IS_BROTHER",
    "UNCLE_PARENT_INCORRECT",
    "EXTRA_DATA_TOO_BIG",
    "EXTRA_DATA_INVALID_DAO",
    "UNKNOWN_PARENT",
    "UNCLE_UNKNOWN_PARENT",
    "UNKNOWN_PARENT_ZERO",
    "GASLIMIT_TOO_BIG",
    "INVALID_BLOCK_NUMBER",
    "INVALID_BLOCK_TIMESTAMP_OLDER_THAN_PARENT",
    "INVALID_DIFFICULTY",
    "INVALID_LOG_BLOOM",
    "INVALID_STATE_ROOT",
    "INVALID_RECEIPTS_ROOT",
    "INVALID_TRANSACTIONS_ROOT",
    "INVALID_UNCLES_HASH",
    "GAS_USED_OVERFLOW",
    "INVALID_GASLIMIT",
    "INVALID_BASEFEE_PER_GAS",
    "INVALID_GAS_USED",
    "INVALID_GAS_USED_ABOVE_LIMIT",
    "INVALID_WITHDRAWALS_ROOT",
    "INCORRECT_BLOCK_FORMAT",
    "BLOB_GAS_USED_ABOVE_LIMIT",
    "INCORRECT_BLOB_GAS_USED",
    "INCORRECT_EXCESS_BLOB_GAS",
    "BLOCK_RLP_TOO_LARGE",
    "INVALID_VERSIONED_HASHES",
    "RLP_STRUCTURES_ENCODING",
    "RLP_WITHDRAWALS_NOT_READ",
    "RLP_INVALID_FIELD_OVERFLOW_64",
    "RLP_INVALID_ADDRESS",
    "RLP_BLOCK_LIMIT_EXCEEDED",
    "INVALID_REQUESTS",
    "IMPORT_IMPOSSIBLE_LEGACY",
    "IMPORT_IMPOSSIBLE_LEGACY_WRONG_PARENT",
    "IMPORT_IMPOSSIBLE_LONDON_WRONG_PARENT",
    "IMPORT_IMPOSSIBLE_PARIS_WRONG_POW",
    "IMPORT_IMPOSSIBLE_PARIS_WRONG_POS",
    "IMPORT_IMPOSSIBLE_LONDON_OVER_PARIS",
    "IMPORT_IMPOSSIBLE_PARIS_OVER_SHANGHAI",
    "IMPORT_IMPOSSIBLE_SHANGHAI",
    "IMPORT_IMPOSSIBLE_UNCLES_OVER_PARIS",
    "IMPORT_IMPOSSIBLE_DIFFICULTY_OVER_PARIS",
    "SYSTEM_CONTRACT_EMPTY",
    "SYSTEM_CONTRACT_CALL_FAILED",
    "INVALID_BLOCK_HASH",
    "INVALID_DEPOSIT_EVENT_LAYOUT",
    "INVALID_BLOCK_ACCESS_LIST",
    "INVALID_BAL_HASH",
    "INVALID_BAL_EXTRA_ACCOUNT",
    "INVALID_BAL_MISSING_ACCOUNT",
    "BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED",
];

/// Whether `name` (`TransactionException.X` / `BlockException.Y`) is an exception name this
/// mapping knows.
pub fn is_known(name: &str) -> bool {
    if let Some(member) = name.strip_prefix(T) {
        TRANSACTION_EXCEPTIONS.contains(&member)
    } else if let Some(member) = name.strip_prefix(B) {
        BLOCK_EXCEPTIONS.contains(&member)
    } else {
        false
    }
}

macro_rules! reason {
    ($kind:expr, [$($name:expr),* $(,)?]) => {
        Reason { kind: $kind, names: &[$($name),*] }
    };
}

/// The block does not decode: every RLP/structure exception, and the transaction defects a
/// typed decoder refuses before any rule runs (an unknown type byte, a blob or set-code
/// transaction without `to`, a field wider than its type, a network-form blob transaction).
const DECODE: Reason = reason!(
    "rlp decode",
    [
        "BlockException.RLP_*",
        "BlockException.INCORRECT_BLOCK_FORMAT",
        "BlockException.BLOCK_RLP_TOO_LARGE",
        "TransactionException.RLP_*",
        "TransactionException.TYPE_NOT_SUPPORTED",
        "TransactionException.TYPE_UNKNOWN_TX_PRE_FORK",
        "TransactionException.TYPE_3_TX_CONTRACT_CREATION",
        "TransactionException.TYPE_4_TX_CONTRACT_CREATION",
        "TransactionException.TYPE_3_TX_WITH_FULL_BLOBS",
        "TransactionException.TYPE_4_INVALID_AUTHORIZATION_FORMAT",
        "TransactionException.ADDRESS_TOO_SHORT",
        "TransactionException.ADDRESS_TOO_LONG",
        "TransactionException.NONCE_OVERFLOW",
        "TransactionException.NONCE_TOO_BIG",
        "TransactionException.GASLIMIT_OVERFLOW",
        "TransactionException.GASPRICE_OVERFLOW",
        "TransactionException.VALUE_OVERFLOW",
        "TransactionException.PRIORITY_OVERFLOW",
        "TransactionException.INVALID_CHAINID",
        "TransactionException.INVALID_CHAIN_ID",
    ]
);

/// Any rejection about the block access list (built BAL ≠ the header's hash, a BAL
/// violation found by the parallel path, a malformed BAL in the fixture). The execution-specs
/// names distinguish the kind of lie; clients' mappers (geth, besu, nethermind) map all of
/// them to their one "BAL mismatch" error, and so does this one.
const BAL: Reason = reason!(
    "block access list",
    [
        "BlockException.INVALID_BLOCK_ACCESS_LIST",
        "BlockException.INVALID_BAL_HASH",
        "BlockException.INVALID_BAL_EXTRA_ACCOUNT",
        "BlockException.INVALID_BAL_MISSING_ACCOUNT",
    ]
);

/// A rule of [`gigagas_verify::consensus`] by its name (and, for `blob_gas_used`, whether
/// the block's blobs exceed the maximum or the header misstates them).
fn rule_reason(rule: &str, detail: &str) -> Option<Reason> {
    Some(match rule {
        "blob_gas_used" if detail.contains("above the block maximum") => reason!(
            "rule blob_gas_used (above the block maximum)",
            [
                "BlockException.BLOB_GAS_USED_ABOVE_LIMIT",
                "TransactionException.TYPE_3_TX_MAX_BLOB_GAS_ALLOWANCE_EXCEEDED",
                "TransactionException.TYPE_3_TX_BLOB_COUNT_EXCEEDED",
            ]
        ),
        "number" => reason!("rule number", ["BlockException.INVALID_BLOCK_NUMBER"]),
        "timestamp" => reason!(
            "rule timestamp",
            ["BlockException.INVALID_BLOCK_TIMESTAMP_OLDER_THAN_PARENT"]
        ),
        "extra_data" => reason!("rule extra_data", ["BlockException.EXTRA_DATA_TOO_BIG"]),
        "gas_used" => reason!(
            "rule gas_used",
            [
                "BlockException.INVALID_GAS_USED_ABOVE_LIMIT",
                "BlockException.GAS_USED_OVERFLOW",
                "BlockException.INVALID_GAS_USED",
            ]
        ),
        "gas_limit" => reason!(
            "rule gas_limit",
            [
                "BlockException.INVALID_GASLIMIT",
                "BlockException.GASLIMIT_TOO_BIG"
            ]
        ),
        // A header in the format of another fork (a base fee before London, none after):
        // the legacy `IMPORT_IMPOSSIBLE_*` names describe exactly that.
        "base_fee" if detail.contains("parent has none") => reason!(
            "rule base_fee (London block on a pre-London parent)",
            [
                "BlockException.IMPORT_IMPOSSIBLE_LONDON_WRONG_PARENT",
                "BlockException.INVALID_BASEFEE_PER_GAS",
            ]
        ),
        "base_fee" if detail.contains("found None") => reason!(
            "rule base_fee (no base fee after London)",
            [
                "BlockException.IMPORT_IMPOSSIBLE_LEGACY_WRONG_PARENT",
                "BlockException.IMPORT_IMPOSSIBLE_LEGACY",
                "BlockException.INCORRECT_BLOCK_FORMAT",
                "BlockException.INVALID_BASEFEE_PER_GAS",
            ]
        ),
        "base_fee" => reason!("rule base_fee", ["BlockException.INVALID_BASEFEE_PER_GAS"]),
        "base_fee (pre-London)" => reason!(
            "rule base_fee (a base fee before London)",
            [
                "BlockException.IMPORT_IMPOSSIBLE_LONDON_WRONG_PARENT",
                "BlockException.INCORRECT_BLOCK_FORMAT",
                "BlockException.RLP_STRUCTURES_ENCODING",
            ]
        ),
        "transactions_root" => reason!(
            "rule transactions_root",
            ["BlockException.INVALID_TRANSACTIONS_ROOT"]
        ),
        // After Paris the ommers hash must be the empty list's: a block stating another one
        // is the legacy "uncles over Paris".
        "ommers_hash" => reason!(
            "rule ommers_hash",
            [
                "BlockException.INVALID_UNCLES_HASH",
                "BlockException.IMPORT_IMPOSSIBLE_UNCLES_OVER_PARIS",
            ]
        ),
        "difficulty (post-merge)" => reason!(
            "rule difficulty (post-merge)",
            [
                "BlockException.IMPORT_IMPOSSIBLE_DIFFICULTY_OVER_PARIS",
                "BlockException.IMPORT_IMPOSSIBLE_PARIS_WRONG_POW",
                "BlockException.INVALID_DIFFICULTY",
            ]
        ),
        "nonce (post-merge)" => reason!(
            "rule nonce (post-merge)",
            [
                "BlockException.IMPORT_IMPOSSIBLE_PARIS_WRONG_POW",
                "BlockException.INCORRECT_BLOCK_FORMAT",
            ]
        ),
        "ommers (post-merge)" => reason!(
            "rule ommers (post-merge)",
            ["BlockException.IMPORT_IMPOSSIBLE_UNCLES_OVER_PARIS"]
        ),
        "difficulty" => reason!(
            "rule difficulty",
            [
                "BlockException.INVALID_DIFFICULTY",
                "BlockException.IMPORT_IMPOSSIBLE_PARIS_WRONG_POS",
            ]
        ),
        "ommers" => reason!("rule ommers", ["BlockException.TOO_MANY_UNCLES"]),
        "withdrawals" => reason!(
            "rule withdrawals",
            [
                "BlockException.INCORRECT_BLOCK_FORMAT",
                "BlockException.RLP_WITHDRAWALS_NOT_READ",
                "BlockException.RLP_STRUCTURES_ENCODING",
                "BlockException.IMPORT_IMPOSSIBLE_SHANGHAI",
                "BlockException.IMPORT_IMPOSSIBLE_PARIS_OVER_SHANGHAI",
            ]
        ),
        "withdrawals_root" if detail.contains("found None") => reason!(
            "rule withdrawals_root (none in a Shanghai header)",
            [
                "BlockException.IMPORT_IMPOSSIBLE_PARIS_OVER_SHANGHAI",
                "BlockException.INCORRECT_BLOCK_FORMAT",
                "BlockException.RLP_WITHDRAWALS_NOT_READ",
            ]
        ),
        "withdrawals_root" => reason!(
            "rule withdrawals_root",
            ["BlockException.INVALID_WITHDRAWALS_ROOT"]
        ),
        "parent_beacon_block_root" | "blob fields" => reason!(
            "rule fork fields",
            [
                "BlockException.INCORRECT_BLOCK_FORMAT",
                "BlockException.RLP_STRUCTURES_ENCODING",
            ]
        ),
        "blob_gas_used" => reason!(
            "rule blob_gas_used",
            ["BlockException.INCORRECT_BLOB_GAS_USED"]
        ),
        "excess_blob_gas" => reason!(
            "rule excess_blob_gas",
            ["BlockException.INCORRECT_EXCESS_BLOB_GAS"]
        ),
        "transaction form" => reason!(
            "rule transaction form",
            [
                "TransactionException.TYPE_3_TX_WITH_FULL_BLOBS",
                "BlockException.RLP_STRUCTURES_ENCODING",
            ]
        ),
        _ => return None,
    })
}

/// revm's transaction validation errors (`InvalidTransaction`, `InvalidHeader`) arrive as
/// their `Display` text in [`ExecError::InvalidTx`]; each variant's text is recognised by its
/// fixed part (a test formats every variant and checks that each is classified).
fn invalid_tx_reason(what: &str) -> Option<Reason> {
    let has = |s: &str| what.contains(s);
    Some(if has("priority fee is greater than max fee") {
        reason!(
            "invalid tx: priority fee above max fee",
            [
                "TransactionException.PRIORITY_GREATER_THAN_MAX_FEE_PER_GAS",
                "TransactionException.PRIORITY_GREATER_THAN_MAX_FEE_PER_GAS_2",
            ]
        )
    } else if has("gas price is less than basefee") {
        reason!(
            "invalid tx: fee below base fee",
            ["TransactionException.INSUFFICIENT_MAX_FEE_PER_GAS"]
        )
    } else if has("caller gas limit exceeds the block gas limit")
        || (has("gas limit ") && has(" gas the block has left"))
    {
        reason!(
            "invalid tx: gas above what the block has left",
            ["TransactionException.GAS_ALLOWANCE_EXCEEDED"]
        )
    } else if has("transaction gas limit (") && has("is greater than the cap") {
        reason!(
            "invalid tx: gas limit above the cap",
            ["TransactionException.GAS_LIMIT_EXCEEDS_MAXIMUM"]
        )
    } else if has("call gas cost (") {
        reason!(
            "invalid tx: intrinsic gas",
            ["TransactionException.INTRINSIC_GAS_TOO_LOW"]
        )
    } else if has("gas floor (") {
        reason!(
            "invalid tx: floor gas",
            [
                "TransactionException.INTRINSIC_GAS_BELOW_FLOOR_GAS_COST",
                "TransactionException.INTRINSIC_GAS_TOO_LOW",
            ]
        )
    } else if has("reject transactions from senders with deployed code") {
        reason!(
            "invalid tx: sender has code",
            ["TransactionException.SENDER_NOT_EOA"]
        )
    } else if has("lack of funds (") {
        reason!(
            "invalid tx: insufficient funds",
            ["TransactionException.INSUFFICIENT_ACCOUNT_FUNDS"]
        )
    } else if has("overflow payment in transaction") {
        reason!(
            "invalid tx: payment overflow",
            [
                "TransactionException.GASLIMIT_PRICE_PRODUCT_OVERFLOW",
                "TransactionException.INSUFFICIENT_ACCOUNT_FUNDS",
                "TransactionException.VALUE_OVERFLOW",
                "TransactionException.GASPRICE_OVERFLOW",
            ]
        )
    } else if has("nonce overflow in transaction") {
        reason!(
            "invalid tx: nonce at its maximum",
            [
                "TransactionException.NONCE_IS_MAX",
                "TransactionException.NONCE_OVERFLOW",
                "TransactionException.NONCE_TOO_BIG",
            ]
        )
    } else if has("too high, expected") {
        reason!(
            "invalid tx: nonce too high",
            ["TransactionException.NONCE_MISMATCH_TOO_HIGH"]
        )
    } else if has("too low, expected") {
        reason!(
            "invalid tx: nonce too low",
            ["TransactionException.NONCE_MISMATCH_TOO_LOW"]
        )
    } else if has("create initcode size limit") {
        reason!(
            "invalid tx: initcode too large",
            ["TransactionException.INITCODE_SIZE_EXCEEDED"]
        )
    } else if has("invalid chain ID") || has("missing chain ID") {
        reason!(
            "invalid tx: chain id",
            [
                "TransactionException.INVALID_CHAINID",
                "TransactionException.INVALID_CHAIN_ID",
            ]
        )
    } else if has("access list not supported") && !has("authorization") || has("Eip2930") {
        reason!(
            "invalid tx: type 1 before Berlin",
            [
                "TransactionException.TYPE_1_TX_PRE_FORK",
                "TransactionException.TYPE_NOT_SUPPORTED",
            ]
        )
    } else if has("Eip1559") {
        reason!(
            "invalid tx: type 2 before London",
            [
                "TransactionException.TYPE_2_TX_PRE_FORK",
                "TransactionException.TYPE_NOT_SUPPORTED",
            ]
        )
    } else if has("Eip4844")
        || has("max fee per blob gas not supported")
        || has("blob versioned hashes not supported")
    {
        reason!(
            "invalid tx: type 3 before Cancun",
            [
                "TransactionException.TYPE_3_TX_PRE_FORK",
                "TransactionException.TYPE_3_TX_ZERO_BLOBS_PRE_FORK",
                "TransactionException.TYPE_NOT_SUPPORTED",
            ]
        )
    } else if has("Eip7702") || has("authorization list not supported") {
        reason!(
            "invalid tx: type 4 before Prague",
            [
                "TransactionException.TYPE_4_TX_PRE_FORK",
                "TransactionException.TYPE_NOT_SUPPORTED",
            ]
        )
    } else if has("Eip7873") {
        reason!(
            "invalid tx: unsupported type",
            [
                "TransactionException.TYPE_NOT_SUPPORTED",
                "TransactionException.TYPE_UNKNOWN_TX_PRE_FORK",
            ]
        )
    } else if has("is greater than max fee per blob gas") {
        reason!(
            "invalid tx: blob fee below blob base fee",
            ["TransactionException.INSUFFICIENT_MAX_FEE_PER_BLOB_GAS"]
        )
    } else if has("empty blobs") {
        reason!(
            "invalid tx: no blobs",
            ["TransactionException.TYPE_3_TX_ZERO_BLOBS"]
        )
    } else if has("blob create transaction") {
        reason!(
            "invalid tx: blob creation",
            ["TransactionException.TYPE_3_TX_CONTRACT_CREATION"]
        )
    } else if has("too many blobs") {
        reason!(
            "invalid tx: too many blobs",
            [
                "TransactionException.TYPE_3_TX_BLOB_COUNT_EXCEEDED",
                "TransactionException.TYPE_3_TX_MAX_BLOB_GAS_ALLOWANCE_EXCEEDED",
                "BlockException.BLOB_GAS_USED_ABOVE_LIMIT",
            ]
        )
    } else if has("blob version not supported") {
        reason!(
            "invalid tx: blob hash version",
            ["TransactionException.TYPE_3_TX_INVALID_BLOB_VERSIONED_HASH"]
        )
    } else if has("authorization list tx has invalid fields") {
        reason!(
            "invalid tx: authorization format",
            ["TransactionException.TYPE_4_INVALID_AUTHORIZATION_FORMAT"]
        )
    } else if has("empty authorization list") {
        reason!(
            "invalid tx: empty authorization list",
            ["TransactionException.TYPE_4_EMPTY_AUTHORIZATION_LIST"]
        )
    } else if has("`prevrandao` not set") || has("`excess_blob_gas` not set") {
        reason!(
            "invalid header for the fork",
            ["BlockException.INCORRECT_BLOCK_FORMAT"]
        )
    } else {
        return None;
    })
}

/// The exception names `rejection` stands for; `None` when this mapping cannot classify it
/// (then a block expecting an exception is *unmapped*, not passed).
pub fn reason(rejection: &Rejection) -> Option<Reason> {
    match rejection {
        Rejection::Decode(_) => Some(DECODE),
        Rejection::FieldRange { field, .. } => Some(match *field {
            "gas price" => reason!(
                "tx field range: gas price above 128 bits",
                [
                    "TransactionException.GASPRICE_OVERFLOW",
                    "TransactionException.GASLIMIT_PRICE_PRODUCT_OVERFLOW",
                    "TransactionException.PRIORITY_OVERFLOW",
                    "TransactionException.RLP_INVALID_VALUE",
                    "BlockException.RLP_STRUCTURES_ENCODING",
                ]
            ),
            "nonce" => reason!(
                "tx field range: nonce above 64 bits",
                [
                    "TransactionException.NONCE_OVERFLOW",
                    "TransactionException.NONCE_TOO_BIG",
                    "TransactionException.NONCE_IS_MAX",
                    "TransactionException.RLP_INVALID_NONCE",
                    "BlockException.RLP_STRUCTURES_ENCODING",
                ]
            ),
            _ => reason!(
                "tx field range: gas limit above 64 bits",
                [
                    "TransactionException.GASLIMIT_OVERFLOW",
                    "TransactionException.GASLIMIT_PRICE_PRODUCT_OVERFLOW",
                    "TransactionException.RLP_INVALID_GASLIMIT",
                    "BlockException.RLP_STRUCTURES_ENCODING",
                ]
            ),
        }),
        Rejection::UnknownParent(parent) => Some(if parent.is_zero() {
            reason!(
                "unknown parent",
                [
                    "BlockException.UNKNOWN_PARENT_ZERO",
                    "BlockException.UNKNOWN_PARENT"
                ]
            )
        } else {
            reason!("unknown parent", ["BlockException.UNKNOWN_PARENT"])
        }),
        Rejection::Rule(rule) => rule_reason(rule.rule, &rule.detail),
        Rejection::Signature { .. } => Some(reason!(
            "signature",
            [
                "TransactionException.INVALID_SIGNATURE_VRS",
                "TransactionException.EC_RECOVERY_FAIL",
                "TransactionException.RLP_INVALID_SIGNATURE_R",
                "TransactionException.RLP_INVALID_SIGNATURE_S",
                "TransactionException.TYPE_4_INVALID_AUTHORITY_SIGNATURE",
                "TransactionException.TYPE_4_INVALID_AUTHORITY_SIGNATURE_S_TOO_HIGH",
            ]
        )),
        Rejection::Execution { error, .. } => exec_reason(error),
        Rejection::StateRoot { .. } => {
            Some(reason!("state root", ["BlockException.INVALID_STATE_ROOT"]))
        }
        Rejection::BalHash { .. } | Rejection::FixtureBal(_) => Some(BAL),
        // A lying BAL the tool made itself: never a reason a fixture can expect.
        Rejection::MutantAccepted { .. } | Rejection::MutantMisreported { .. } => {
            Some(reason!("BAL mutant (the tool's own check)", []))
        }
    }
}

fn exec_reason(error: &ExecError) -> Option<Reason> {
    match error {
        ExecError::InvalidTx { what, .. } => invalid_tx_reason(what),
        ExecError::Sender { .. } => Some(reason!(
            "sender recovery",
            [
                "TransactionException.INVALID_SIGNATURE_VRS",
                "TransactionException.EC_RECOVERY_FAIL",
            ]
        )),
        ExecError::Verify(VerifyError::Header { field, .. }) => Some(match *field {
            "gas_used" => reason!(
                "header gas_used after execution",
                [
                    "BlockException.INVALID_GAS_USED",
                    "BlockException.GAS_USED_OVERFLOW"
                ]
            ),
            "logs_bloom" => reason!(
                "header logs_bloom after execution",
                ["BlockException.INVALID_LOG_BLOOM"]
            ),
            "receipts_root" => reason!(
                "header receipts_root after execution",
                ["BlockException.INVALID_RECEIPTS_ROOT"]
            ),
            "state_root" => reason!("state root", ["BlockException.INVALID_STATE_ROOT"]),
            _ => return None,
        }),
        ExecError::Verify(VerifyError::HeaderRule { rule, detail, .. }) => {
            rule_reason(rule, detail)
        }
        ExecError::Verify(VerifyError::Bal { .. }) | ExecError::Lifecycle { .. } => Some(BAL),
        // The two paths disagreeing is the tool's own failure, never an expected reason.
        ExecError::Verify(VerifyError::TxResult { .. }) => {
            Some(reason!("parallel != sequential (the tool's own check)", []))
        }
        ExecError::Evm { what, .. } if what.starts_with("system call to ") => Some(reason!(
            "system call failed",
            [
                "BlockException.SYSTEM_CONTRACT_CALL_FAILED",
                "BlockException.SYSTEM_CONTRACT_EMPTY",
            ]
        )),
        ExecError::Evm { .. } | ExecError::Unsupported { .. } | ExecError::State { .. } => None,
    }
}

/// Compares `rejection` with a block's `expectException` (`|`-separated alternatives).
pub fn judge(expected: &str, rejection: &Rejection) -> Judgement {
    let alternatives: Vec<&str> = expected
        .split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let unknown: Vec<&str> = alternatives
        .iter()
        .copied()
        .filter(|a| !is_known(a))
        .collect();
    let Some(reason) = reason(rejection) else {
        return Judgement::Unmapped(format!(
            "rejection kind not classified ({})",
            rejection.category()
        ));
    };
    if alternatives.iter().any(|a| reason.accepts(a)) {
        return Judgement::Matched(reason);
    }
    if !unknown.is_empty() {
        return Judgement::Unmapped(format!(
            "expected name(s) not known to the mapping: {}",
            unknown.join(", ")
        ));
    }
    Judgement::Mismatch(reason)
}

/// The names a [`Reason`] stands for, for messages (`none`: a check that no fixture can
/// expect).
pub fn describe(reason: &Reason) -> String {
    if reason.names.is_empty() {
        format!("{} (no exception name)", reason.kind)
    } else {
        format!("{} = {}", reason.kind, reason.names.join("|"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_verify::consensus::RuleError;
    use revm::context::result::{InvalidHeader, InvalidTransaction};

    fn invalid_tx(what: String) -> Rejection {
        Rejection::Execution {
            path: "sequential",
            error: Box::new(ExecError::InvalidTx {
                block: 1,
                tx: 0,
                what,
            }),
        }
    }

    /// Every revm validation error is classified, so a change of revm's wording shows here.
    #[test]
    fn every_revm_validation_error_is_classified() {
        use InvalidTransaction as I;
        let all = [
            I::PriorityFeeGreaterThanMaxFee,
            I::GasPriceLessThanBasefee,
            I::CallerGasLimitMoreThanBlock,
            I::CallGasCostMoreThanGasLimit {
                initial_gas: 1,
                gas_limit: 0,
            },
            I::GasFloorMoreThanGasLimit {
                gas_floor: 1,
                gas_limit: 0,
            },
            I::RejectCallerWithCode,
            I::LackOfFundForMaxFee {
                fee: Box::default(),
                balance: Box::default(),
            },
            I::OverflowPaymentInTransaction,
            I::NonceOverflowInTransaction,
            I::NonceTooHigh { tx: 2, state: 1 },
            I::NonceTooLow { tx: 1, state: 2 },
            I::CreateInitCodeSizeLimit,
            I::InvalidChainId,
            I::MissingChainId,
            I::TxGasLimitGreaterThanCap {
                gas_limit: 2,
                cap: 1,
            },
            I::AccessListNotSupported,
            I::MaxFeePerBlobGasNotSupported,
            I::BlobVersionedHashesNotSupported,
            I::BlobGasPriceGreaterThanMax {
                block_blob_gas_price: 2,
                tx_max_fee_per_blob_gas: 1,
            },
            I::EmptyBlobs,
            I::BlobCreateTransaction,
            I::TooManyBlobs { max: 6, have: 7 },
            I::BlobVersionNotSupported,
            I::AuthorizationListNotSupported,
            I::AuthorizationListInvalidFields,
            I::EmptyAuthorizationList,
            I::Eip2930NotSupported,
            I::Eip1559NotSupported,
            I::Eip4844NotSupported,
            I::Eip7702NotSupported,
            I::Eip7873NotSupported,
            I::Eip7873MissingTarget,
        ];
        for e in all {
            let text = e.to_string();
            let r = reason(&invalid_tx(text.clone()));
            assert!(r.is_some_and(|r| !r.names.is_empty()), "{e:?}: {text}");
            for name in r.map(|r| r.names).unwrap_or_default() {
                assert!(
                    name.ends_with('*') || is_known(name),
                    "{e:?} maps to unknown {name}"
                );
            }
        }
        for e in [
            InvalidHeader::PrevrandaoNotSet,
            InvalidHeader::ExcessBlobGasNotSet,
        ] {
            assert!(reason(&invalid_tx(e.to_string())).is_some(), "{e:?}");
        }
    }

    #[test]
    fn revm_errors_map_to_their_names() {
        let low = invalid_tx(InvalidTransaction::NonceTooLow { tx: 1, state: 2 }.to_string());
        assert!(matches!(
            judge("TransactionException.NONCE_MISMATCH_TOO_LOW", &low),
            Judgement::Matched(_)
        ));
        assert!(matches!(
            judge("TransactionException.NONCE_MISMATCH_TOO_HIGH", &low),
            Judgement::Mismatch(_)
        ));
        let funds = invalid_tx(
            InvalidTransaction::LackOfFundForMaxFee {
                fee: Box::default(),
                balance: Box::default(),
            }
            .to_string(),
        );
        assert!(matches!(
            judge(
                "TransactionException.INTRINSIC_GAS_TOO_LOW|TransactionException.INSUFFICIENT_ACCOUNT_FUNDS",
                &funds
            ),
            Judgement::Matched(_)
        ));
    }

    #[test]
    fn every_consensus_rule_is_classified() {
        for rule in [
            "number",
            "timestamp",
            "extra_data",
            "gas_used",
            "gas_limit",
            "base_fee",
            "base_fee (pre-London)",
            "transactions_root",
            "ommers_hash",
            "difficulty (post-merge)",
            "nonce (post-merge)",
            "ommers (post-merge)",
            "difficulty",
            "ommers",
            "withdrawals",
            "withdrawals_root",
            "parent_beacon_block_root",
            "blob fields",
            "blob_gas_used",
            "excess_blob_gas",
            "transaction form",
        ] {
            let r = rule_reason(rule, "").map(|r| r.names).unwrap_or_default();
            assert!(!r.is_empty(), "{rule}");
            for name in r {
                assert!(is_known(name), "{rule} maps to unknown {name}");
            }
        }
    }

    #[test]
    fn unknown_names_and_unclassified_rejections_are_unmapped() {
        let rule = Rejection::Rule(RuleError {
            rule: "gas_limit",
            detail: String::new(),
        });
        assert!(matches!(
            judge("BlockException.NO_SUCH_THING", &rule),
            Judgement::Unmapped(_)
        ));
        // A known alternative that matches still passes.
        assert!(matches!(
            judge(
                "BlockException.NO_SUCH_THING|BlockException.INVALID_GASLIMIT",
                &rule
            ),
            Judgement::Matched(_)
        ));
        let evm = Rejection::Execution {
            path: "sequential",
            error: Box::new(ExecError::Evm {
                block: 1,
                tx: gigagas_exec::TxLabel::Tx(0),
                what: "database error".into(),
            }),
        };
        assert!(matches!(
            judge("BlockException.INVALID_GASLIMIT", &evm),
            Judgement::Unmapped(_)
        ));
    }

    #[test]
    fn decode_errors_match_rlp_names_only() {
        let d = Rejection::Decode("x".into());
        assert!(matches!(
            judge(
                "BlockException.RLP_STRUCTURES_ENCODING|BlockException.RLP_INVALID_ADDRESS",
                &d
            ),
            Judgement::Matched(_)
        ));
        assert!(matches!(
            judge("TransactionException.INSUFFICIENT_ACCOUNT_FUNDS", &d),
            Judgement::Mismatch(_)
        ));
    }
}
