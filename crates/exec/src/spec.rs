//! Ethereum mainnet fork schedule and consensus constants that revm does not carry.

use alloy_consensus::Header;
use revm::primitives::hardfork::SpecId;

/// Mainnet fork activations by block number (pre-merge forks) or timestamp (Shanghai on).
/// Gas-repricing-only "glacier" forks change nothing revm executes and are folded into their
/// predecessor; Constantinople and Petersburg activated in the same block.
const BY_BLOCK: [(u64, SpecId); 10] = [
    (15_537_394, SpecId::MERGE),
    (12_965_000, SpecId::LONDON),
    (12_244_000, SpecId::BERLIN),
    (9_069_000, SpecId::ISTANBUL),
    (7_280_000, SpecId::PETERSBURG),
    (4_370_000, SpecId::BYZANTIUM),
    (2_675_000, SpecId::SPURIOUS_DRAGON),
    (2_463_000, SpecId::TANGERINE),
    (1_150_000, SpecId::HOMESTEAD),
    (0, SpecId::FRONTIER),
];

const BY_TIMESTAMP: [(u64, SpecId); 4] = [
    (1_764_798_551, SpecId::OSAKA),
    (1_746_612_311, SpecId::PRAGUE),
    (1_710_338_135, SpecId::CANCUN),
    (1_681_338_455, SpecId::SHANGHAI),
];

/// The DAO fork block: its irregular balance transfer is not implemented.
pub const DAO_FORK_BLOCK: u64 = 1_920_000;

/// The revm spec a mainnet block executes under.
pub fn mainnet_spec(header: &Header) -> SpecId {
    if let Some(&(_, spec)) = BY_TIMESTAMP
        .iter()
        .find(|(ts, _)| header.number >= 15_537_394 && header.timestamp >= *ts)
    {
        return spec;
    }
    BY_BLOCK
        .iter()
        .find(|(n, _)| header.number >= *n)
        .map_or(SpecId::FRONTIER, |&(_, spec)| spec)
}

/// Human-readable fork name.
pub fn spec_name(spec: SpecId) -> &'static str {
    spec.into()
}

/// Proof-of-work block reward in wei (zero from the merge on).
pub fn block_reward(spec: SpecId) -> u128 {
    const ETH: u128 = 1_000_000_000_000_000_000;
    if spec.is_enabled_in(SpecId::MERGE) {
        0
    } else if spec.is_enabled_in(SpecId::PETERSBURG) {
        2 * ETH
    } else if spec.is_enabled_in(SpecId::BYZANTIUM) {
        3 * ETH
    } else {
        5 * ETH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(number: u64, timestamp: u64) -> Header {
        Header {
            number,
            timestamp,
            ..Default::default()
        }
    }

    #[test]
    fn fork_boundaries() {
        assert_eq!(mainnet_spec(&header(46_147, 0)), SpecId::FRONTIER);
        assert_eq!(mainnet_spec(&header(2_674_999, 0)), SpecId::TANGERINE);
        assert_eq!(mainnet_spec(&header(2_675_000, 0)), SpecId::SPURIOUS_DRAGON);
        assert_eq!(mainnet_spec(&header(4_369_999, 0)), SpecId::SPURIOUS_DRAGON);
        assert_eq!(mainnet_spec(&header(4_370_000, 0)), SpecId::BYZANTIUM);
        assert_eq!(
            mainnet_spec(&header(15_537_393, 1_663_224_162)),
            SpecId::LONDON
        );
        assert_eq!(
            mainnet_spec(&header(15_537_394, 1_663_224_179)),
            SpecId::MERGE
        );
        assert_eq!(
            mainnet_spec(&header(17_034_869, 1_681_338_455)),
            SpecId::SHANGHAI
        );
        assert_eq!(
            mainnet_spec(&header(19_426_587, 1_710_338_135)),
            SpecId::CANCUN
        );
    }

    #[test]
    fn rewards() {
        assert_eq!(block_reward(SpecId::FRONTIER), 5_000_000_000_000_000_000);
        assert_eq!(block_reward(SpecId::BYZANTIUM), 3_000_000_000_000_000_000);
        assert_eq!(block_reward(SpecId::ISTANBUL), 2_000_000_000_000_000_000);
        assert_eq!(block_reward(SpecId::CANCUN), 0);
    }
}
