//! Test network names → fork schedule.

use alloy_primitives::U256;
use revm::primitives::hardfork::SpecId;

/// When a test chain switches forks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// One fork for every block.
    Fixed(SpecId),
    /// `before` until block `number`, then `after`.
    AtBlock {
        /// Fork of earlier blocks.
        before: SpecId,
        /// Fork from the transition on.
        after: SpecId,
        /// First block of `after`.
        number: u64,
    },
    /// `before` until `timestamp`, then `after`.
    AtTime {
        /// Fork of earlier blocks.
        before: SpecId,
        /// Fork from the transition on.
        after: SpecId,
        /// First timestamp of `after`.
        timestamp: u64,
    },
    /// The merge: `before` until the parent's total difficulty reaches `total_difficulty`.
    AtTotalDifficulty {
        /// Fork of earlier blocks.
        before: SpecId,
        /// Fork from the transition on (Paris).
        after: SpecId,
        /// Terminal total difficulty.
        total_difficulty: U256,
    },
}

/// Why a network cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkError {
    /// Not a fork name this runner knows: the test fails.
    Unknown(String),
    /// A known fork revm 43 cannot execute faithfully: the test is skipped with this reason.
    Unsupported(&'static str),
}

fn single(name: &str) -> Result<SpecId, NetworkError> {
    Ok(match name {
        "Frontier" => SpecId::FRONTIER,
        "Homestead" => SpecId::HOMESTEAD,
        "EIP150" | "TangerineWhistle" => SpecId::TANGERINE,
        "EIP158" | "SpuriousDragon" => SpecId::SPURIOUS_DRAGON,
        "Byzantium" => SpecId::BYZANTIUM,
        "Constantinople" => {
            return Err(NetworkError::Unsupported(
                "revm 43 has no Constantinople spec (EIP-1283 net gas metering, withdrawn by Petersburg)",
            ))
        }
        "ConstantinopleFix" | "Petersburg" => SpecId::PETERSBURG,
        "Istanbul" | "MuirGlacier" => SpecId::ISTANBUL,
        "Berlin" => SpecId::BERLIN,
        "London" | "ArrowGlacier" | "GrayGlacier" => SpecId::LONDON,
        "Paris" | "Merge" => SpecId::MERGE,
        "Shanghai" => SpecId::SHANGHAI,
        "Cancun" => SpecId::CANCUN,
        "Prague" => SpecId::PRAGUE,
        "Osaka" => SpecId::OSAKA,
        "Amsterdam" => SpecId::AMSTERDAM,
        "Dao" => {
            return Err(NetworkError::Unsupported(
                "the DAO fork's irregular state change is not implemented",
            ))
        }
        other => return Err(NetworkError::Unknown(other.to_owned())),
    })
}

/// Parses a network name: a fork (`Cancun`) or a transition (`FrontierToHomesteadAt5`,
/// `ShanghaiToCancunAtTime15k`, `ArrowGlacierToParisAtDiffC0000`).
pub fn parse_network(name: &str) -> Result<Schedule, NetworkError> {
    let Some((before, rest)) = name.split_once("To") else {
        return single(name).map(Schedule::Fixed);
    };
    let (after, at) = rest
        .split_once("At")
        .ok_or_else(|| NetworkError::Unknown(name.to_owned()))?;
    let (before, after) = (single(before)?, single(after)?);
    let unknown = || NetworkError::Unknown(name.to_owned());
    if let Some(t) = at.strip_prefix("Time") {
        let timestamp = match t.strip_suffix('k') {
            Some(k) => k.parse::<u64>().map_err(|_| unknown())? * 1000,
            None => t.parse().map_err(|_| unknown())?,
        };
        Ok(Schedule::AtTime {
            before,
            after,
            timestamp,
        })
    } else if let Some(d) = at.strip_prefix("Diff") {
        Ok(Schedule::AtTotalDifficulty {
            before,
            after,
            total_difficulty: U256::from_str_radix(d, 16).map_err(|_| unknown())?,
        })
    } else {
        Ok(Schedule::AtBlock {
            before,
            after,
            number: at.parse().map_err(|_| unknown())?,
        })
    }
}

impl Schedule {
    /// The fork of a block with this number and timestamp whose parent's total difficulty
    /// is `parent_td`.
    pub fn spec(&self, number: u64, timestamp: u64, parent_td: U256) -> SpecId {
        match *self {
            Self::Fixed(spec) => spec,
            Self::AtBlock {
                before,
                after,
                number: n,
            } => {
                if number >= n {
                    after
                } else {
                    before
                }
            }
            Self::AtTime {
                before,
                after,
                timestamp: t,
            } => {
                if timestamp >= t {
                    after
                } else {
                    before
                }
            }
            Self::AtTotalDifficulty {
                before,
                after,
                total_difficulty,
            } => {
                if parent_td >= total_difficulty {
                    after
                } else {
                    before
                }
            }
        }
    }

    /// The last fork of the schedule (used to label the test).
    pub fn final_spec(&self) -> SpecId {
        match *self {
            Self::Fixed(spec) => spec,
            Self::AtBlock { after, .. }
            | Self::AtTime { after, .. }
            | Self::AtTotalDifficulty { after, .. } => after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_shape() {
        assert_eq!(parse_network("Cancun"), Ok(Schedule::Fixed(SpecId::CANCUN)));
        assert_eq!(
            parse_network("FrontierToHomesteadAt5"),
            Ok(Schedule::AtBlock {
                before: SpecId::FRONTIER,
                after: SpecId::HOMESTEAD,
                number: 5
            })
        );
        let s = parse_network("ShanghaiToCancunAtTime15k").unwrap();
        assert_eq!(s.spec(1, 14_999, U256::ZERO), SpecId::SHANGHAI);
        assert_eq!(s.spec(2, 15_000, U256::ZERO), SpecId::CANCUN);
        let s = parse_network("ArrowGlacierToParisAtDiffC0000").unwrap();
        assert_eq!(s.spec(3, 0, U256::from(0xBFFFF)), SpecId::LONDON);
        assert_eq!(s.spec(3, 0, U256::from(0xC0000)), SpecId::MERGE);
        assert_eq!(
            parse_network("Byzantium2"),
            Err(NetworkError::Unknown("Byzantium2".into()))
        );
        assert!(matches!(
            parse_network("HomesteadToDaoAt5"),
            Err(NetworkError::Unsupported(_))
        ));
    }
}
