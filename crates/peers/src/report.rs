//! The `gigagas.peers/1` JSON result of `gigagas peers` (see `docs/peers.md`).

use serde::{Deserialize, Serialize};

/// Schema identifier of a peers result.
pub const PEERS_SCHEMA: &str = "gigagas.peers/1";

/// How the ratio columns are defined, and which one to read (printed under the table, kept in
/// the JSON as `ratio_definition`). The two answer different questions and can point opposite
/// ways (a peer at `ratio` 0.25x and `net_ratio` 3.13x finishes the whole command 4x sooner
/// than gigagas as a process, yet executes 3x slower than gigagas), so the text says which is
/// which first.
pub const RATIO_DEFINITION: &str = "to compare execution read net ratio; ratio compares whole \
commands, process start included. Both: above 1 = slower than gigagas. ratio = time of this row \
/ time of the gigagas row named in `compared_with`. Process rows (a peer binary run on the exported \
file) are compared with gigagas run as a process on the same file (`gigagas conformance FILE \
--mode sequential`: start, JSON parse, RLP decode, sender recovery, sequential execution, a full \
state root per block). gigagas's in-process rows are compared with gigagas sequential execution. \
`net_ratio` compares the peer's time minus its measured process-start floor with gigagas's \
in-process sequential execution plus the phases the peer also does: sender recovery and the \
state root (geth), or neither (revme, which takes senders from the JSON and computes no root).";

/// A `gigagas peers` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeersReport {
    /// Always [`PEERS_SCHEMA`].
    pub schema: String,
    /// gigagas version.
    pub gigagas_version: String,
    /// The data set (`--data`).
    pub data: String,
    /// Name of the exported blockchain test.
    pub test: String,
    /// Network (fork) name of the export.
    pub network: String,
    /// Blocks.
    pub blocks: usize,
    /// Transactions.
    pub txs: usize,
    /// Gas used by all blocks.
    pub gas: u64,
    /// Head block hash every engine must reach.
    pub head_hash: String,
    /// Head state root.
    pub head_state_root: String,
    /// Logical cores of the machine.
    pub cores: usize,
    /// Timed repeats per row (the median is reported).
    pub repeats: usize,
    /// Untimed warm-up runs per row.
    pub warmup: usize,
    /// How `ratio` and `net_ratio` are defined.
    pub ratio_definition: String,
    /// One row per engine and configuration.
    pub rows: Vec<PeerRow>,
    /// The build and host that measured (the bench result's `provenance` object:
    /// `gigagas_lab::Provenance`); absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

/// One engine (or gigagas configuration) on the same blocks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerRow {
    /// Engine and configuration (`gigagas sequential`, `geth evm blocktest`, ...).
    pub engine: String,
    /// Its version (`--version`), or gigagas's.
    pub version: String,
    /// `ok`, `not installed` or `failed`.
    pub status: String,
    /// Why it is not `ok`.
    pub error: Option<String>,
    /// Whether this is a child process timed from spawn to exit (else in-process).
    pub process: bool,
    /// What the time includes.
    pub includes: String,
    /// What the time excludes.
    pub excludes: String,
    /// Every timed repeat, ns.
    pub repeat_ns: Vec<u64>,
    /// Median of `repeat_ns`.
    pub median_ns: Option<u64>,
    /// Median wall time of `BIN --version` (the process-start floor), ns; process rows only.
    pub start_floor_ns: Option<u64>,
    /// gas / median time.
    pub mgas_per_s: Option<f64>,
    /// gas / (median time − start floor); process rows only.
    pub mgas_per_s_net_of_start: Option<f64>,
    /// The engine's own throughput figure where it logs one (geth: Σ `mgas` / Σ `elapsed`
    /// of its "Imported new chain segment" lines), median over repeats.
    pub own_mgas_per_s: Option<f64>,
    /// The gigagas row this row is compared with.
    pub compared_with: Option<String>,
    /// median time / the compared row's median time.
    pub ratio: Option<f64>,
    /// See [`RATIO_DEFINITION`]: (median − start floor) / gigagas in-process time with the
    /// same phases.
    pub net_ratio: Option<f64>,
    /// What `net_ratio` compares with.
    pub net_compared_with: Option<String>,
}

impl PeersReport {
    /// Whether every row that ran succeeded (rows `not installed` do not count).
    pub fn all_ok(&self) -> bool {
        self.rows.iter().all(|r| r.status != "failed")
    }
}

/// Median of `samples` (the lower middle for an even count); `None` when empty.
pub fn median(samples: &[u64]) -> Option<u64> {
    let mut s = samples.to_vec();
    s.sort_unstable();
    s.get(s.len().saturating_sub(1) / 2).copied()
}
