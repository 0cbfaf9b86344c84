//! Receipts compared with the header (gas used, logs bloom, receipts root) and between
//! execution paths. The receipt model itself is `gigagas-receipt`'s.

use crate::VerifyError;
use alloy_consensus::Header;
use gigagas_receipt::{block_gas_used, bloom_and_root, HeaderRules, TxReceipt};

/// Which header values were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderCheck {
    /// Gas used matched.
    pub gas_used: bool,
    /// Logs bloom matched.
    pub logs_bloom: bool,
    /// Receipts root matched; `false` when it could not be checked (pre-Byzantium receipts
    /// carry an intermediate state root that touched-only pre-state cannot rebuild).
    pub receipts_root: bool,
}

/// Compares gas used, logs bloom and (when `check_receipts_root`) the receipts root with the
/// header.
pub fn check_against_header(
    header: &Header,
    receipts: &[TxReceipt],
    rules: HeaderRules,
) -> Result<HeaderCheck, VerifyError> {
    let block = header.number;
    let check_receipts_root = rules.receipts_root;
    let gas = block_gas_used(receipts, rules);
    if gas != header.gas_used {
        return Err(VerifyError::Header {
            block,
            field: "gas_used",
            expected: header.gas_used.to_string(),
            actual: gas.to_string(),
        });
    }
    let (bloom, root) = bloom_and_root(receipts, check_receipts_root);
    if bloom != header.logs_bloom {
        return Err(VerifyError::Header {
            block,
            field: "logs_bloom",
            expected: header.logs_bloom.to_string(),
            actual: bloom.to_string(),
        });
    }
    if let Some(root) = root {
        if root != header.receipts_root {
            return Err(VerifyError::Header {
                block,
                field: "receipts_root",
                expected: header.receipts_root.to_string(),
                actual: root.to_string(),
            });
        }
    }
    Ok(HeaderCheck {
        gas_used: true,
        logs_bloom: true,
        receipts_root: check_receipts_root,
    })
}

/// Compares two executions of the same block transaction by transaction.
pub fn compare_receipts(
    block: u64,
    sequential: &[TxReceipt],
    parallel: &[TxReceipt],
) -> Result<(), VerifyError> {
    let mismatch = |tx, field, s: String, p: String| VerifyError::TxResult {
        block,
        tx,
        field,
        sequential: s,
        parallel: p,
    };
    if sequential.len() != parallel.len() {
        return Err(mismatch(
            sequential.len().min(parallel.len()),
            "transaction count",
            sequential.len().to_string(),
            parallel.len().to_string(),
        ));
    }
    for (tx, (s, p)) in sequential.iter().zip(parallel).enumerate() {
        if s.success != p.success {
            return Err(mismatch(
                tx,
                "status",
                s.success.to_string(),
                p.success.to_string(),
            ));
        }
        if s.gas_used != p.gas_used {
            return Err(mismatch(
                tx,
                "gas used",
                s.gas_used.to_string(),
                p.gas_used.to_string(),
            ));
        }
        if s.cumulative_gas_used != p.cumulative_gas_used {
            return Err(mismatch(
                tx,
                "cumulative gas used",
                s.cumulative_gas_used.to_string(),
                p.cumulative_gas_used.to_string(),
            ));
        }
        if s.logs != p.logs {
            let at = s.logs.iter().zip(&p.logs).position(|(a, b)| a != b);
            return Err(mismatch(
                tx,
                "logs",
                format!("{} logs (first difference at log {at:?})", s.logs.len()),
                format!("{} logs", p.logs.len()),
            ));
        }
    }
    Ok(())
}
