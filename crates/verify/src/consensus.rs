//! Consensus rules of a header against its parent and its own body, as an execution client
//! checks them before (and after) executing the block. Proof-of-work seals are not checked.
//! Used by the conformance runner for every imported block and by the engine for consecutive
//! blocks of any data set.

use alloy_consensus::{proofs, Header, TxEnvelope, EMPTY_OMMER_ROOT_HASH};
use alloy_eips::{
    calc_next_block_base_fee, eip1559::BaseFeeParams, eip4895::Withdrawal, eip7840::BlobParams,
};
use alloy_primitives::U256;
use revm::primitives::hardfork::SpecId;

/// A broken header or body rule: which one and the values involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {detail}")]
pub struct RuleError {
    /// Short rule name (`base_fee`, `gas_limit`, `excess_blob_gas`, ...).
    pub rule: &'static str,
    /// Expected vs found.
    pub detail: String,
}

fn fail(rule: &'static str, detail: String) -> Result<(), RuleError> {
    Err(RuleError { rule, detail })
}

fn expect<T: PartialEq + std::fmt::Debug>(
    rule: &'static str,
    expected: T,
    found: T,
) -> Result<(), RuleError> {
    if expected == found {
        Ok(())
    } else {
        fail(rule, format!("expected {expected:?}, found {found:?}"))
    }
}

/// A block's ommers as the input carries them.
#[derive(Debug, Clone, Copy)]
pub enum Ommers<'a> {
    /// Full ommer headers.
    Headers(&'a [Header]),
    /// Only the ommers' hashes.
    Hashes(&'a [alloy_primitives::B256]),
}

impl Ommers<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Headers(h) => h.len(),
            Self::Hashes(h) => h.len(),
        }
    }
}

/// The parts of a block the body rules need.
pub struct Body<'a> {
    /// Transactions.
    pub transactions: &'a [TxEnvelope],
    /// Ommers: full headers (blockchain tests, generated chains), or only their hashes
    /// (RPC block JSON), in which case the ommers hash cannot be rebuilt and only their
    /// number is checked here (`gigagas_data::integrity` checks an empty list's hash).
    pub ommers: Ommers<'a>,
    /// The difficulty bomb's delay in blocks, where the caller knows it better than the fork
    /// does: mainnet's "glacier" forks (Muir, Arrow, Gray) moved the bomb without changing
    /// execution, so a schedule that folds them into their predecessor passes the delay by
    /// block number ([`mainnet_bomb_delay`]). `None`: derived from the fork.
    pub bomb_delay: Option<u64>,
    /// Withdrawals, if the block has the field.
    pub withdrawals: Option<&'a [Withdrawal]>,
}

/// Checks `header` (fork `spec`) against `parent` (fork `parent_spec`) and its body.
pub fn check(
    header: &Header,
    body: &Body<'_>,
    spec: SpecId,
    parent: &Header,
    parent_spec: SpecId,
) -> Result<(), RuleError> {
    expect("number", parent.number + 1, header.number)?;
    if header.timestamp <= parent.timestamp {
        fail(
            "timestamp",
            format!(
                "{} is not after the parent's {}",
                header.timestamp, parent.timestamp
            ),
        )?;
    }
    if header.extra_data.len() > 32 {
        fail(
            "extra_data",
            format!("{} bytes, at most 32", header.extra_data.len()),
        )?;
    }
    // The gas limit's own bounds first: a bogus limit (0) also puts the gas used above it,
    // and the limit is the defect.
    check_gas_limit(header, spec, parent, parent_spec)?;
    if header.gas_used > header.gas_limit {
        fail(
            "gas_used",
            format!(
                "{} above the gas limit {}",
                header.gas_used, header.gas_limit
            ),
        )?;
    }
    check_base_fee(header, spec, parent, parent_spec)?;

    expect(
        "transactions_root",
        proofs::calculate_transaction_root(body.transactions),
        header.transactions_root,
    )?;
    if let Ommers::Headers(ommers) = body.ommers {
        expect(
            "ommers_hash",
            proofs::calculate_ommers_root(ommers),
            header.ommers_hash,
        )?;
    }

    if spec.is_enabled_in(SpecId::MERGE) {
        expect("difficulty (post-merge)", U256::ZERO, header.difficulty)?;
        expect(
            "nonce (post-merge)",
            0u64,
            u64::from_be_bytes(header.nonce.0),
        )?;
        expect("ommers (post-merge)", 0, body.ommers.len())?;
    } else {
        let expected = match body.bomb_delay {
            Some(delay) => difficulty_with_delay(header, spec, parent, delay),
            None => difficulty(header, spec, parent),
        };
        expect("difficulty", expected, header.difficulty)?;
        if body.ommers.len() > 2 {
            fail("ommers", format!("{} ommers, at most 2", body.ommers.len()))?;
        }
    }

    if spec.is_enabled_in(SpecId::SHANGHAI) {
        let Some(withdrawals) = body.withdrawals else {
            return fail("withdrawals", "missing from a Shanghai block".into());
        };
        expect(
            "withdrawals_root",
            Some(proofs::calculate_withdrawals_root(withdrawals)),
            header.withdrawals_root,
        )?;
    } else if body.withdrawals.is_some() || header.withdrawals_root.is_some() {
        fail("withdrawals", "present before Shanghai".into())?;
    }

    if spec.is_enabled_in(SpecId::CANCUN) {
        check_blobs(header, body, spec, parent, parent_spec)?;
        if header.parent_beacon_block_root.is_none() {
            fail(
                "parent_beacon_block_root",
                "missing from a Cancun block".into(),
            )?;
        }
    } else if header.blob_gas_used.is_some()
        || header.excess_blob_gas.is_some()
        || header.parent_beacon_block_root.is_some()
    {
        fail("blob fields", "present before Cancun".into())?;
    }
    Ok(())
}

fn check_gas_limit(
    header: &Header,
    spec: SpecId,
    parent: &Header,
    parent_spec: SpecId,
) -> Result<(), RuleError> {
    const MIN_GAS_LIMIT: u64 = 5000;
    const MAX_GAS_LIMIT: u64 = 0x7fff_ffff_ffff_ffff;
    if header.gas_limit > MAX_GAS_LIMIT {
        return fail("gas_limit", format!("{} above 2^63-1", header.gas_limit));
    }
    // At the London fork block the parent's limit is scaled by the elasticity multiplier.
    let parent_limit =
        if spec.is_enabled_in(SpecId::LONDON) && !parent_spec.is_enabled_in(SpecId::LONDON) {
            parent.gas_limit.saturating_mul(2)
        } else {
            parent.gas_limit
        };
    let bound = parent_limit / 1024;
    if header.gas_limit.abs_diff(parent_limit) >= bound || header.gas_limit < MIN_GAS_LIMIT {
        return fail(
            "gas_limit",
            format!(
                "{} not within {parent_limit} ± {bound} (and ≥ {MIN_GAS_LIMIT})",
                header.gas_limit
            ),
        );
    }
    Ok(())
}

fn check_base_fee(
    header: &Header,
    spec: SpecId,
    parent: &Header,
    parent_spec: SpecId,
) -> Result<(), RuleError> {
    const INITIAL_BASE_FEE: u64 = 1_000_000_000;
    if !spec.is_enabled_in(SpecId::LONDON) {
        return expect("base_fee (pre-London)", None, header.base_fee_per_gas);
    }
    let expected = if parent_spec.is_enabled_in(SpecId::LONDON) {
        let Some(parent_fee) = parent.base_fee_per_gas else {
            return fail("base_fee", "parent has none".into());
        };
        calc_next_block_base_fee(
            parent.gas_used,
            parent.gas_limit,
            parent_fee,
            BaseFeeParams::ethereum(),
        )
    } else {
        INITIAL_BASE_FEE
    };
    expect("base_fee", Some(expected), header.base_fee_per_gas)
}

fn blob_params(spec: SpecId) -> BlobParams {
    if spec.is_enabled_in(SpecId::OSAKA) {
        BlobParams::osaka()
    } else if spec.is_enabled_in(SpecId::PRAGUE) {
        BlobParams::prague()
    } else {
        BlobParams::cancun()
    }
}

fn check_blobs(
    header: &Header,
    body: &Body<'_>,
    spec: SpecId,
    parent: &Header,
    parent_spec: SpecId,
) -> Result<(), RuleError> {
    use alloy_consensus::Transaction as _;
    let params = blob_params(spec);
    let blobs: u64 = body
        .transactions
        .iter()
        .map(|tx| tx.blob_versioned_hashes().map_or(0, |h| h.len() as u64))
        .sum();
    let used = blobs * alloy_eips::eip4844::DATA_GAS_PER_BLOB;
    expect("blob_gas_used", Some(used), header.blob_gas_used)?;
    let max = params.max_blob_gas_per_block();
    if used > max {
        fail(
            "blob_gas_used",
            format!("{used} above the block maximum {max}"),
        )?;
    }
    let (parent_excess, parent_used) = (
        parent.excess_blob_gas.unwrap_or_default(),
        parent.blob_gas_used.unwrap_or_default(),
    );
    let expected_excess = if !parent_spec.is_enabled_in(SpecId::CANCUN) {
        0
    } else if spec.is_enabled_in(SpecId::OSAKA) {
        params.next_block_excess_blob_gas_osaka(
            parent_excess,
            parent_used,
            parent.base_fee_per_gas.unwrap_or_default(),
        )
    } else {
        (parent_excess + parent_used).saturating_sub(params.target_blob_gas_per_block())
    };
    expect(
        "excess_blob_gas",
        Some(expected_excess),
        header.excess_blob_gas,
    )
}

/// The difficulty bomb's delay on mainnet at block `number` (EIP-649 Byzantium, EIP-1234
/// Constantinople, EIP-2384 Muir Glacier, EIP-3554 London, EIP-4345 Arrow Glacier, EIP-5133
/// Gray Glacier).
pub fn mainnet_bomb_delay(number: u64) -> u64 {
    match number {
        15_050_000.. => 11_400_000,
        13_773_000.. => 10_700_000,
        12_965_000.. => 9_700_000,
        9_200_000.. => 9_000_000,
        7_280_000.. => 5_000_000,
        4_370_000.. => 3_000_000,
        _ => 0,
    }
}

/// Proof-of-work difficulty of `header` (Frontier, Homestead and Byzantium formulas, with
/// the difficulty-bomb delays of the forks revm knows).
pub fn difficulty(header: &Header, spec: SpecId, parent: &Header) -> U256 {
    // revm 43 has no Arrow/Gray Glacier spec, and its Istanbul stands for Muir Glacier here.
    let delay = if spec.is_enabled_in(SpecId::LONDON) {
        9_700_000
    } else if spec.is_enabled_in(SpecId::ISTANBUL) {
        9_000_000
    } else if spec.is_enabled_in(SpecId::PETERSBURG) {
        5_000_000
    } else if spec.is_enabled_in(SpecId::BYZANTIUM) {
        3_000_000
    } else {
        0
    };
    difficulty_with_delay(header, spec, parent, delay)
}

/// [`difficulty`] with an explicit bomb delay.
pub fn difficulty_with_delay(header: &Header, spec: SpecId, parent: &Header, delay: u64) -> U256 {
    const MIN: u64 = 131_072;
    let parent_diff = parent.difficulty;
    let step = parent_diff / U256::from(2048);
    let elapsed = header.timestamp.saturating_sub(parent.timestamp);
    let factor: i64 = if spec.is_enabled_in(SpecId::BYZANTIUM) {
        let uncles = if parent.ommers_hash == EMPTY_OMMER_ROOT_HASH {
            1
        } else {
            2
        };
        (uncles - (elapsed / 9) as i64).max(-99)
    } else if spec.is_enabled_in(SpecId::HOMESTEAD) {
        (1 - (elapsed / 10) as i64).max(-99)
    } else if elapsed < 13 {
        1
    } else {
        -1
    };
    let mut diff = if factor >= 0 {
        parent_diff + step * U256::from(factor as u64)
    } else {
        parent_diff.saturating_sub(step * U256::from(factor.unsigned_abs()))
    };
    diff = diff.max(U256::from(MIN));
    let period = header.number.saturating_sub(delay) / 100_000;
    if period >= 2 {
        diff += U256::from(1) << (period - 2) as usize;
    }
    diff
}

/// Transactions in a block body must be in their canonical form: a blob transaction with
/// its blobs attached (the network form) is invalid inside a block.
pub fn check_transactions_form(transactions: &[TxEnvelope]) -> Result<(), RuleError> {
    for (i, tx) in transactions.iter().enumerate() {
        if let TxEnvelope::Eip4844(signed) = tx {
            if matches!(
                signed.tx(),
                alloy_consensus::TxEip4844Variant::TxEip4844WithSidecar(_)
            ) {
                return fail(
                    "transaction form",
                    format!("tx {i}: blob transaction carries its blobs"),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mainnet_bomb_delays_follow_the_glacier_forks() {
        for (number, delay) in [
            (4_369_999, 0),
            (4_370_000, 3_000_000),
            (7_280_000, 5_000_000),
            (9_069_000, 5_000_000), // Istanbul did not move the bomb
            (9_200_000, 9_000_000), // Muir Glacier
            (12_965_000, 9_700_000),
            (13_773_000, 10_700_000), // Arrow Glacier
            (15_050_000, 11_400_000), // Gray Glacier
        ] {
            assert_eq!(mainnet_bomb_delay(number), delay, "block {number}");
        }
    }
}
