//! When the store's writes become durable: the run spec's sync policy.

/// When the pipeline makes the store's writes durable (`run --sync`). A block is written
/// (committed: visible to the next block's reads) right after it verified in every policy;
/// what differs is when the commits reach the disk: a crash loses the blocks since the last
/// sync, and the store stays whole at that block (MDBX keeps its last steady commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// Every commit is durable when it returns (MDBX's `Durable` mode).
    #[default]
    EveryBlock,
    /// Commits are flushed after every `n`-th block and at the end of the run.
    Every(u64),
    /// Commits are flushed once, at the end of the run (timed: inside its wall time).
    End,
}

impl SyncPolicy {
    /// Most blocks between syncs `every-N` takes.
    pub const MAX_EVERY: u64 = 1_000_000;

    /// What a node does: reth (v2.5, `crates/engine/primitives/src/config.rs`: persistence
    /// threshold 7, memory block buffer target 5) saves 3 blocks at a time in one durable MDBX
    /// commit once 8 are unpersisted; geth's path scheme flushes 64–256 MiB batches and no
    /// longer fsyncs its key-value writes. `run`'s default (`--cold` aside).
    pub const NODE: Self = Self::Every(3);

    /// Whether the store is opened with durable commits (only `every-block`).
    pub fn durable_commits(self) -> bool {
        self == Self::EveryBlock
    }
}

impl std::fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EveryBlock => f.write_str("every-block"),
            Self::Every(n) => write!(f, "every-{n}"),
            Self::End => f.write_str("end"),
        }
    }
}

impl std::str::FromStr for SyncPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown sync policy {s:?} (expected every-block, every-N with N from 2 to {}, or end)",
                Self::MAX_EVERY
            )
        };
        match s {
            "every-block" | "every-1" => Ok(Self::EveryBlock),
            "end" => Ok(Self::End),
            _ => {
                let n: u64 = s
                    .strip_prefix("every-")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(bad)?;
                if (2..=Self::MAX_EVERY).contains(&n) {
                    Ok(Self::Every(n))
                } else {
                    Err(bad())
                }
            }
        }
    }
}
