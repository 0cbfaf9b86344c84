//! Receipts, receipts root and logs bloom, and their comparison with the header and between
//! execution paths.

use crate::VerifyError;
use alloy_consensus::{
    proofs::calculate_receipt_root, Eip658Value, Header, Receipt, ReceiptEnvelope,
    ReceiptWithBloom, TxType,
};
use alloy_primitives::{Bloom, Log, B256};

/// The result of one transaction, as a receipt needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxReceipt {
    /// Transaction type (selects the receipt encoding).
    pub tx_type: TxType,
    /// Whether the transaction succeeded (EIP-658 status).
    pub success: bool,
    /// Gas charged to this transaction (after refunds).
    pub gas_used: u64,
    /// Gas charged to this and every earlier transaction of the block.
    pub cumulative_gas_used: u64,
    /// Logs emitted.
    pub logs: Vec<Log>,
    /// This transaction's regular-gas contribution to the block (EIP-8037/EIP-7778: before
    /// refunds, state gas excluded, at least the EIP-7623 floor).
    pub block_regular_gas: u64,
    /// This transaction's state-gas contribution to the block (EIP-8037).
    pub block_state_gas: u64,
    /// State root after this transaction, which pre-Byzantium receipts carry instead of a
    /// status; `None` where it was not computed.
    pub post_state: Option<B256>,
}

/// Which header rules apply to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderRules {
    /// The receipts root can be rebuilt: receipts carry an EIP-658 status (Byzantium on) or
    /// the intermediate state roots were computed.
    pub receipts_root: bool,
    /// The header's gas used is EIP-8037's two-dimensional block gas (Amsterdam on):
    /// max(Σ regular gas, Σ state gas); before, the last receipt's cumulative gas.
    pub two_dimensional_gas: bool,
}

/// The block gas used the header must state, under `rules`.
pub fn block_gas_used(receipts: &[TxReceipt], rules: HeaderRules) -> u64 {
    if rules.two_dimensional_gas {
        let regular: u64 = receipts.iter().map(|r| r.block_regular_gas).sum();
        let state: u64 = receipts.iter().map(|r| r.block_state_gas).sum();
        regular.max(state)
    } else {
        receipts.last().map_or(0, |r| r.cumulative_gas_used)
    }
}

impl TxReceipt {
    fn envelope(&self) -> ReceiptEnvelope {
        let status = match self.post_state {
            Some(root) => Eip658Value::PostState(root),
            None => Eip658Value::Eip658(self.success),
        };
        let receipt = Receipt {
            status,
            cumulative_gas_used: self.cumulative_gas_used,
            logs: self.logs.clone(),
        };
        let with_bloom = ReceiptWithBloom::from(receipt);
        match self.tx_type {
            TxType::Legacy => ReceiptEnvelope::Legacy(with_bloom),
            TxType::Eip2930 => ReceiptEnvelope::Eip2930(with_bloom),
            TxType::Eip1559 => ReceiptEnvelope::Eip1559(with_bloom),
            TxType::Eip4844 => ReceiptEnvelope::Eip4844(with_bloom),
            TxType::Eip7702 => ReceiptEnvelope::Eip7702(with_bloom),
        }
    }
}

/// Receipts root (EIP-658 receipts; meaningful from Byzantium on).
pub fn receipts_root(receipts: &[TxReceipt]) -> B256 {
    let envelopes: Vec<ReceiptEnvelope> = receipts.iter().map(TxReceipt::envelope).collect();
    calculate_receipt_root(&envelopes)
}

/// The block's logs bloom: the union of every log's bloom.
pub fn logs_bloom(receipts: &[TxReceipt]) -> Bloom {
    let mut bloom = Bloom::default();
    for receipt in receipts {
        for log in &receipt.logs {
            bloom.accrue_log(log);
        }
    }
    bloom
}

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
    let bloom = logs_bloom(receipts);
    if bloom != header.logs_bloom {
        return Err(VerifyError::Header {
            block,
            field: "logs_bloom",
            expected: header.logs_bloom.to_string(),
            actual: bloom.to_string(),
        });
    }
    if check_receipts_root {
        let root = receipts_root(receipts);
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
