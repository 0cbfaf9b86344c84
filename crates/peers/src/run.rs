//! One peer run: a child process on an export, timed wall-clock from spawn to exit, whose
//! output must show that it accepted every block and reached the same head.

use crate::export::{ChainExport, BLOCKTEST_FILE, GENESIS_FILE, RLP_FILE};
use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    time::Instant,
};

/// The engines `gigagas peers` runs as child processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeerKind {
    /// go-ethereum's `evm blocktest` on `blocktest.json`.
    GethBlocktest,
    /// `geth import` of `chain.rlp` into a fresh data directory made by `geth init`.
    GethImport,
    /// revm's `revme blockchaintest` on `blocktest.json`.
    Revme,
    /// gigagas itself as a process: `gigagas conformance blocktest.json --mode sequential`.
    GigagasProcess,
}

impl PeerKind {
    /// Every kind, in table order.
    pub const ALL: [PeerKind; 4] = [
        PeerKind::GigagasProcess,
        PeerKind::GethBlocktest,
        PeerKind::GethImport,
        PeerKind::Revme,
    ];

    /// Short name of the engine and command.
    pub fn name(self) -> &'static str {
        match self {
            Self::GethBlocktest => "geth evm blocktest",
            Self::GethImport => "geth import",
            Self::Revme => "revme blockchaintest",
            Self::GigagasProcess => "gigagas conformance (process)",
        }
    }

    /// What the measured time includes.
    pub fn includes(self) -> &'static str {
        match self {
            Self::GethBlocktest => {
                "process start; JSON parse; genesis state commit + genesis root; RLP decode; \
                 header rules; sender recovery; execution; receipts/bloom; state root per block \
                 (in-memory hash trie); post-state check"
            }
            Self::GethImport => {
                "process start; opening the fresh datadir; RLP decode; header rules; sender \
                 recovery; execution; state root per block; writing blocks, receipts and state \
                 to disk (pebble)"
            }
            Self::Revme => {
                "process start; JSON parse; execution from the JSON transactions; receipts root; \
                 BAL build; post-state check (account by account)"
            }
            Self::GigagasProcess => {
                "process start; JSON parse; genesis root; RLP decode; header rules; sender \
                 recovery; sequential execution building the BAL; receipts/bloom; full state \
                 root per block (rebuilt from scratch); post-state check"
            }
        }
    }

    /// What the measured time excludes.
    pub fn excludes(self) -> &'static str {
        match self {
            Self::GethBlocktest => "disk (memory database)",
            Self::GethImport => "geth init (genesis written before timing)",
            Self::Revme => {
                "RLP decode, sender recovery (senders taken from the JSON), state root, header \
                 rules, disk"
            }
            Self::GigagasProcess => "disk; the parallel path (--mode sequential)",
        }
    }
}

/// Why a peer produced no time.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The peer's binary is not there.
    #[error("{engine}: not installed ({path}; {hint})")]
    NotInstalled {
        /// Engine.
        engine: &'static str,
        /// Where it was looked for.
        path: PathBuf,
        /// How to install it.
        hint: &'static str,
    },
    /// The process could not be started.
    #[error("{engine}: cannot start {path}: {source}")]
    Spawn {
        /// Engine.
        engine: &'static str,
        /// Binary.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The peer rejected the blocks or disagreed with gigagas.
    #[error("{engine} on {file}: {what}")]
    Failed {
        /// Engine.
        engine: &'static str,
        /// The input it ran on.
        file: PathBuf,
        /// What it said (exit status, its error, the end of its output).
        what: String,
    },
}

/// One timed run.
#[derive(Debug, Clone)]
pub struct PeerRun {
    /// Wall time from spawn to exit, ns.
    pub wall_ns: u64,
    /// The peer's own throughput figure, when it logs one (geth: Σ `mgas` / Σ `elapsed` of
    /// its "Imported new chain segment" lines).
    pub own_mgas_per_s: Option<f64>,
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

fn timed(engine: &'static str, cmd: &mut Command) -> Result<(u64, Output), PeerError> {
    let path = PathBuf::from(cmd.get_program());
    let start = Instant::now();
    let out = cmd.output().map_err(|source| PeerError::Spawn {
        engine,
        path,
        source,
    })?;
    Ok((start.elapsed().as_nanos() as u64, out))
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Median wall time of `BIN --version` (`revme --help`) over `repeats` runs, ns: the floor of
/// any process time of that binary (start, dynamic loading, runtime init, exit).
pub fn start_floor(bin: &Path, repeats: usize) -> Option<u64> {
    let mut samples = Vec::new();
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        let ok = Command::new(bin)
            .args(crate::tools::idle_args(bin))
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            return None;
        }
        samples.push(start.elapsed().as_nanos() as u64);
    }
    samples.sort_unstable();
    Some(samples[samples.len() / 2])
}

fn require(engine: &'static str, path: &Path, hint: &'static str) -> Result<(), PeerError> {
    if path.is_file() {
        Ok(())
    } else {
        Err(PeerError::NotInstalled {
            engine,
            path: path.to_owned(),
            hint,
        })
    }
}

/// Runs `evm blocktest DIR/blocktest.json`; it must report exactly the export's test, passed
/// (geth checks every block's header against its own execution — state root included — the
/// last block hash and the post-state); its segment log lines give geth's own throughput.
pub fn geth_blocktest(evm: &Path, dir: &Path, export: &ChainExport) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "geth evm blocktest";
    require(ENGINE, evm, "scripts/install-geth-evm.sh")?;
    let file = dir.join(BLOCKTEST_FILE);
    let (wall_ns, out) = timed(ENGINE, Command::new(evm).arg("blocktest").arg(&file))?;
    let failed = |what: String| PeerError::Failed {
        engine: ENGINE,
        file: file.clone(),
        what,
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let start = stdout.find('[').unwrap_or(0);
    let results: serde_json::Value = serde_json::from_str(stdout[start..].trim()).map_err(|e| {
        failed(format!(
            "exit {}; unreadable report ({e}): {}",
            out.status,
            tail(&text(&out), 5)
        ))
    })?;
    let results = results.as_array().cloned().unwrap_or_default();
    if results.len() != 1 {
        return Err(failed(format!(
            "{} results, expected 1: {}",
            results.len(),
            tail(&text(&out), 5)
        )));
    }
    let r = &results[0];
    if r["name"].as_str() != Some(export.name.as_str()) {
        return Err(failed(format!(
            "reported test {}, expected {}",
            r["name"], export.name
        )));
    }
    if r["pass"].as_bool() != Some(true) || !out.status.success() {
        return Err(failed(format!(
            "did not pass (exit {}): {}",
            out.status,
            r["error"].as_str().unwrap_or("no error given")
        )));
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: geth_segments(&text(&out)).1,
    })
}

/// From geth's "Imported new chain segment" log lines: the last block number imported and
/// geth's own throughput, Σ `mgas` / Σ `elapsed` over the lines.
fn geth_segments(log: &str) -> (Option<u64>, Option<f64>) {
    let field = |line: &str, key: &str| -> Option<String> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .map(|v| v.trim_matches('"').replace(',', ""))
    };
    let segments: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("Imported new chain segment"))
        .collect();
    let head = segments
        .last()
        .and_then(|l| field(l, "number"))
        .and_then(|n| n.parse::<u64>().ok());
    let (mut mgas, mut seconds) = (0.0, 0.0);
    for line in &segments {
        let m = field(line, "mgas").and_then(|v| v.parse::<f64>().ok());
        let e = field(line, "elapsed").and_then(|v| parse_go_duration(&v));
        if let (Some(m), Some(e)) = (m, e) {
            mgas += m;
            seconds += e;
        }
    }
    (head, (seconds > 0.0).then(|| mgas / seconds))
}

/// Seconds of a Go duration as geth prints it (`950.1µs`, `15.440ms`, `1.2s`, `1m2.5s`).
fn parse_go_duration(text: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..split].parse().ok()?;
        rest = &rest[split..];
        let (unit, scale) = [
            ("ns", 1e-9),
            ("µs", 1e-6),
            ("us", 1e-6),
            ("ms", 1e-3),
            ("s", 1.0),
            ("m", 60.0),
            ("h", 3600.0),
        ]
        .into_iter()
        .find(|(u, _)| rest.starts_with(u))?;
        total += value * scale;
        rest = &rest[unit.len()..];
    }
    Some(total)
}

/// Runs `revme blockchaintest --omit-progress DIR/blocktest.json`; it must exit 0 with one
/// test passed and none failed or skipped (revme checks gas used and the receipts root of
/// every block and the post-state account by account; it computes no state root).
pub fn revme(revme: &Path, dir: &Path) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "revme blockchaintest";
    require(ENGINE, revme, "scripts/install-revme.sh")?;
    let file = dir.join(BLOCKTEST_FILE);
    let (wall_ns, out) = timed(
        ENGINE,
        Command::new(revme)
            .args(["blockchaintest", "--omit-progress"])
            .arg(&file),
    )?;
    let all = text(&out);
    let count = |label: &str| -> Option<u64> {
        all.lines()
            .filter_map(|l| l.trim().strip_prefix(label))
            .filter_map(|v| v.trim().parse().ok())
            .next_back()
    };
    let (passed, failed, skipped) = (count("Passed:"), count("Failed:"), count("Skipped:"));
    if !out.status.success() || passed != Some(1) || failed != Some(0) || skipped != Some(0) {
        return Err(PeerError::Failed {
            engine: ENGINE,
            file,
            what: format!(
                "exit {}, passed {passed:?}, failed {failed:?}, skipped {skipped:?}: {}",
                out.status,
                tail(&all, 6)
            ),
        });
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: None,
    })
}

/// `geth init` of `DIR/genesis.json` into a fresh temporary data directory (untimed), then
/// `geth import DIR/chain.rlp` (timed). geth validates every block (state root included) and
/// exits non-zero on a bad one; its last "Imported new chain segment" line must name the
/// export's head block number; geth's own throughput is Σ `mgas` / Σ `elapsed` over those
/// lines (execution, validation and commit of the blocks, without process start).
pub fn geth_import(geth: &Path, dir: &Path, export: &ChainExport) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "geth import";
    require(ENGINE, geth, "scripts/install-geth.sh")?;
    let rlp = dir.join(RLP_FILE);
    let failed = |what: String| PeerError::Failed {
        engine: ENGINE,
        file: rlp.clone(),
        what,
    };
    let datadir = tempfile::Builder::new()
        .prefix("gigagas-geth-import-")
        .tempdir()
        .map_err(|e| failed(format!("temporary data directory: {e}")))?;
    let (_, init) = timed(
        ENGINE,
        Command::new(geth)
            .arg("--datadir")
            .arg(datadir.path())
            .arg("init")
            .arg(dir.join(GENESIS_FILE)),
    )?;
    if !init.status.success() {
        return Err(failed(format!(
            "geth init {} exited {}: {}",
            dir.join(GENESIS_FILE).display(),
            init.status,
            tail(&text(&init), 5)
        )));
    }
    let (wall_ns, out) = timed(
        ENGINE,
        Command::new(geth)
            .arg("--datadir")
            .arg(datadir.path())
            .args(["--nodiscover", "--maxpeers", "0", "import"])
            .arg(&rlp),
    )?;
    let all = text(&out);
    if !out.status.success() {
        return Err(failed(format!("exit {}: {}", out.status, tail(&all, 6))));
    }
    let (head, own) = geth_segments(&all);
    let want = export.blocks.last().map_or(0, |b| b.block.header.number);
    if head != Some(want) {
        return Err(failed(format!(
            "last imported block {head:?}, expected {want}: {}",
            tail(&all, 6)
        )));
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: own,
    })
}

/// Runs gigagas itself as a process on the same blockchain test:
/// `GIGAGAS conformance DIR/blocktest.json --mode sequential`; it must exit 0.
pub fn gigagas_process(gigagas: &Path, dir: &Path) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "gigagas conformance (process)";
    let file = dir.join(BLOCKTEST_FILE);
    let (wall_ns, out) = timed(
        ENGINE,
        Command::new(gigagas)
            .arg("conformance")
            .arg(&file)
            .args(["--mode", "sequential"]),
    )?;
    if !out.status.success() {
        return Err(PeerError::Failed {
            engine: ENGINE,
            file,
            what: format!("exit {}: {}", out.status, tail(&text(&out), 6)),
        });
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: None,
    })
}

/// Runs one peer kind (`gigagas` is this binary, for [`PeerKind::GigagasProcess`]).
pub fn run_peer(
    kind: PeerKind,
    gigagas: &Path,
    dir: &Path,
    export: &ChainExport,
) -> Result<PeerRun, PeerError> {
    match kind {
        PeerKind::GethBlocktest => geth_blocktest(&crate::tools::evm_path(), dir, export),
        PeerKind::GethImport => geth_import(&crate::tools::geth_path(), dir, export),
        PeerKind::Revme => revme(&crate::tools::revme_path(), dir),
        PeerKind::GigagasProcess => gigagas_process(gigagas, dir),
    }
}

/// The binary a peer kind runs.
pub fn binary(kind: PeerKind, gigagas: &Path) -> PathBuf {
    match kind {
        PeerKind::GethBlocktest => crate::tools::evm_path(),
        PeerKind::GethImport => crate::tools::geth_path(),
        PeerKind::Revme => crate::tools::revme_path(),
        PeerKind::GigagasProcess => gigagas.to_owned(),
    }
}
