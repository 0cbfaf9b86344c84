//! One peer run: a child process on an export, timed wall-clock from spawn to exit, whose
//! output must show that it accepted every block and reached the same head.

use crate::export::{ChainExport, BLOCKTEST_FILE, GENESIS_FILE, RLP_FILE};
use alloy_primitives::B256;
use gigagas_guard::child::{self, ChildError, Finished, Limits};
use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

/// How long one peer run (or `geth init`) may take before it is killed by default: far
/// above any exported chain's run (`gigagas peers --timeout`).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(600);

/// The flag that sets a peer run's deadline.
const TIMEOUT_FLAG: &str = "gigagas peers --timeout";

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
    /// gigagas's node pipeline on its MDBX store, geth import's counterpart: `gigagas db init`
    /// (untimed), then `gigagas run --state disk` with `run`'s defaults (the store warm: just
    /// written).
    GigagasDisk,
    /// [`Self::GigagasDisk`] cold: `--pipeline off --cold` (the store's page cache dropped
    /// before every block).
    GigagasDiskCold,
}

impl PeerKind {
    /// Every kind, in table order.
    pub const ALL: [PeerKind; 6] = [
        PeerKind::GigagasProcess,
        PeerKind::GigagasDisk,
        PeerKind::GigagasDiskCold,
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
            Self::GigagasDisk => "gigagas run on MDBX, warm (process)",
            Self::GigagasDiskCold => "gigagas run on MDBX, cold (process)",
        }
    }

    /// The export format this peer reads (`None`: the chain itself, in process or through
    /// `gigagas run`).
    pub fn reads(self) -> Option<crate::export::Format> {
        use crate::export::Format;
        match self {
            Self::GethBlocktest | Self::Revme | Self::GigagasProcess => Some(Format::BlockTest),
            Self::GethImport => Some(Format::Rlp),
            Self::GigagasDisk | Self::GigagasDiskCold => None,
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
            Self::GigagasDisk => {
                "process start; loading the chain; sender recovery; the sequential baseline \
                 building the BAL (untimed inside the process, timed here); the node pipeline \
                 on the store: prefetch, parallel execution, verification, incremental state \
                 root per block (= header), the flat state written per block and made durable \
                 every 3 blocks, the trie nodes buffered and journaled at the end (one \
                 unsynced file the next open takes or writes into the tries; run's defaults, \
                 all cores); its own figure: the pipeline's end to end"
            }
            Self::GigagasDiskCold => {
                "as the warm row, with the stages back to back and the store's page cache \
                 dropped before every block (every read from the device); durable every block"
            }
        }
    }

    /// What the measured time excludes.
    pub fn excludes(self) -> &'static str {
        match self {
            Self::GethBlocktest => "disk (memory database)",
            Self::GethImport => {
                "geth init (genesis written before timing; a genesis.json over 256 MiB by \
                 gigagas-geth-init: the same database through geth's own state code, in chunks)"
            }
            Self::Revme => {
                "RLP decode, sender recovery (senders taken from the JSON), state root, header \
                 rules, disk"
            }
            Self::GigagasProcess => "disk; the parallel path (--mode sequential)",
            Self::GigagasDisk | Self::GigagasDiskCold => {
                "gigagas db init (the genesis store written before timing)"
            }
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
    /// The process could not be started, or did not exit within its deadline (then it was
    /// killed; the error quotes the end of its stderr).
    #[error("{engine}: {source}")]
    Child {
        /// Engine.
        engine: &'static str,
        /// Cause.
        source: ChildError,
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

/// The last `n` lines of a peer's output, escaped and bounded, for an error message.
fn tail(text: &str, n: usize) -> String {
    gigagas_guard::text::tail(text, n, 800)
}

/// Runs `cmd` to its exit within `timeout`, timed from spawn to exit.
fn timed(
    engine: &'static str,
    what: String,
    timeout: Duration,
    cmd: &mut Command,
) -> Result<(u64, Finished), PeerError> {
    let done = child::run(cmd, &what, &Limits::new(timeout, TIMEOUT_FLAG))
        .map_err(|source| PeerError::Child { engine, source })?;
    Ok((done.wall.as_nanos() as u64, done))
}

/// How a peer process ended, in words: its exit status, and for a SIGKILL that gigagas did
/// not send (a deadline is reported as its own error, never through here) the usual sender,
/// the kernel's out-of-memory killer (`geth init` of a 10M-slot genesis took 22.9 GB here).
fn exit_words(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(9) => format!(
            "{status}: killed, not by gigagas (the kernel's out-of-memory killer is the usual \
             sender: see `dmesg`)"
        ),
        _ => status.to_string(),
    }
}

/// The JSON `what` a gigagas child wrote on stdout (`--json -`): it must have exited 0 and
/// written one whole value; otherwise `failed` with its exit and the end of its output.
fn json_stdout(
    out: &Finished,
    what: &str,
    failed: impl Fn(String) -> PeerError,
) -> Result<serde_json::Value, PeerError> {
    if !out.status.success() {
        return Err(failed(format!(
            "exit {}: {}",
            exit_words(&out.status),
            tail(&text(out), 6)
        )));
    }
    serde_json::from_slice(&out.stdout)
        .ok()
        .filter(|_| out.stdout_complete)
        .ok_or_else(|| failed(format!("no readable {what}: {}", tail(&text(out), 6))))
}

fn text(out: &Finished) -> String {
    out.text()
}

/// Median wall time of `BIN --version` (`revme --help`) over `repeats` runs, ns: the floor of
/// any process time of that binary (start, dynamic loading, runtime init, exit).
pub fn start_floor(bin: &Path, repeats: usize) -> Option<u64> {
    let mut samples = Vec::new();
    for _ in 0..repeats.max(1) {
        let done = child::run(
            Command::new(bin).args(crate::tools::idle_args(bin)),
            "the start floor (the binary's version)",
            &Limits::new(
                crate::tools::VERSION_TIMEOUT,
                "the built-in start-floor limit",
            ),
        )
        .ok()
        .filter(|done| done.status.success())?;
        samples.push(done.wall.as_nanos() as u64);
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
pub fn geth_blocktest(
    evm: &Path,
    dir: &Path,
    export: &ChainExport,
    timeout: Duration,
) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "geth evm blocktest";
    require(ENGINE, evm, "scripts/install-geth-evm.sh")?;
    let file = dir.join(BLOCKTEST_FILE);
    let (wall_ns, out) = timed(
        ENGINE,
        format!("{ENGINE} on {}", file.display()),
        timeout,
        Command::new(evm).arg("blocktest").arg(&file),
    )?;
    let failed = |what: String| PeerError::Failed {
        engine: ENGINE,
        file: file.clone(),
        what,
    };
    if !out.stdout_complete {
        return Err(failed(format!(
            "its report is larger than the limit of {} bytes (or was cut off)",
            Limits::new(timeout, TIMEOUT_FLAG).max_stdout
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let start = stdout.find('[').unwrap_or(0);
    let results: serde_json::Value = serde_json::from_str(stdout[start..].trim()).map_err(|e| {
        failed(format!(
            "exit {}; unreadable report ({e}): {}",
            exit_words(&out.status),
            tail(&text(&out), 5)
        ))
    })?;
    let results = results.as_array().cloned().unwrap_or_default();
    let [r] = results.as_slice() else {
        return Err(failed(format!(
            "{} results, expected 1: {}",
            results.len(),
            tail(&text(&out), 5)
        )));
    };
    let shown = |v: &serde_json::Value| gigagas_guard::text::printable(&v.to_string()).into_owned();
    if r["name"].as_str() != Some(export.name.as_str()) {
        return Err(failed(format!(
            "reported test {}, expected {}",
            shown(&r["name"]),
            export.name
        )));
    }
    if r["pass"].as_bool() != Some(true) || !out.status.success() {
        return Err(failed(format!(
            "did not pass (exit {}): {}",
            exit_words(&out.status),
            gigagas_guard::text::printable(r["error"].as_str().unwrap_or("no error given"))
        )));
    }
    // A pass is only believed with the head's state root and the export's fork.
    let (_, _, want) = head(export);
    let root = r["stateRoot"].as_str().and_then(|s| s.parse::<B256>().ok());
    if root != Some(want) {
        return Err(failed(format!(
            "claims a pass with state root {}, expected the head's {want}",
            shown(&r["stateRoot"])
        )));
    }
    if r["fork"].as_str() != Some(export.network) {
        return Err(failed(format!(
            "claims a pass on fork {}, expected {}",
            shown(&r["fork"]),
            export.network
        )));
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: geth_segments(&text(&out)).own,
    })
}

/// The export's head: (block number, block hash, state root) — the genesis for a chain
/// without blocks.
fn head(export: &ChainExport) -> (u64, B256, B256) {
    export.blocks.last().map_or_else(
        || (0, export.genesis.hash_slow(), export.genesis.state_root),
        |b| (b.block.header.number, b.hash, b.block.header.state_root),
    )
}

/// Whether geth's logged `hash` is `want`: in full (`0x…`), or as its terminal form (the
/// first and last three bytes, `fd5e18..d2dc73`).
fn logged_hash_is(logged: &str, want: B256) -> bool {
    if let Ok(full) = logged.parse::<B256>() {
        return full == want;
    }
    let hex = alloy_primitives::hex::encode(want);
    logged.split_once("..").is_some_and(|(head, end)| {
        head.len() == 6 && end.len() == 6 && hex.starts_with(head) && hex.ends_with(end)
    })
}

/// What geth's "Imported new chain segment" log lines say.
#[derive(Debug, Default, PartialEq)]
struct Segments {
    /// The last block number imported.
    head: Option<u64>,
    /// That block's hash as logged.
    hash: Option<String>,
    /// Σ `mgas` / Σ `elapsed` over the lines.
    own: Option<f64>,
}

/// From geth's "Imported new chain segment" log lines: the last block number imported, its
/// hash and geth's own throughput, Σ `mgas` / Σ `elapsed` over the lines.
fn geth_segments(log: &str) -> Segments {
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
    let hash = segments.last().and_then(|l| field(l, "hash"));
    let (mut mgas, mut seconds) = (0.0, 0.0);
    for line in &segments {
        let m = field(line, "mgas").and_then(|v| v.parse::<f64>().ok());
        let e = field(line, "elapsed").and_then(|v| parse_go_duration(&v));
        if let (Some(m), Some(e)) = (m, e) {
            mgas += m;
            seconds += e;
        }
    }
    Segments {
        head,
        hash,
        own: (seconds > 0.0).then(|| mgas / seconds),
    }
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
pub fn revme(revme: &Path, dir: &Path, timeout: Duration) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "revme blockchaintest";
    require(ENGINE, revme, "scripts/install-revme.sh")?;
    let file = dir.join(BLOCKTEST_FILE);
    let (wall_ns, out) = timed(
        ENGINE,
        format!("{ENGINE} on {}", file.display()),
        timeout,
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
                exit_words(&out.status),
                tail(&all, 6)
            ),
        });
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: None,
    })
}

/// The size of `genesis.json` above which [`geth_import`] writes the genesis with
/// `gigagas-geth-init` instead of `geth init`: `geth init` decodes the whole file first and
/// took ~30 bytes of memory per byte of it here (877 MB for a 30 MB file; a 1.5 GB file was
/// killed at 22.9 GB).
pub const GETH_INIT_MAX_BYTES: u64 = 256 << 20;

/// The genesis of `DIR/genesis.json` written into a fresh temporary data directory
/// (untimed): by `geth init`, or, for a `genesis.json` over [`GETH_INIT_MAX_BYTES`], by
/// `gigagas-geth-init` (the same chain database through geth's own state and trie code, the
/// allocation streamed and committed in chunks, the genesis hash required to be the
/// export's). Then `geth import DIR/chain.rlp` (timed). geth validates every block (state
/// root included) and exits non-zero on a bad one; its last "Imported new chain segment"
/// line must name the export's head block number; geth's own throughput is Σ `mgas` / Σ
/// `elapsed` over those lines (execution, validation and commit of the blocks, without
/// process start).
pub fn geth_import(
    geth: &Path,
    dir: &Path,
    export: &ChainExport,
    timeout: Duration,
) -> Result<PeerRun, PeerError> {
    geth_import_with(geth, dir, export, GETH_INIT_MAX_BYTES, timeout)
}

/// [`geth_import`] with the genesis size above which `gigagas-geth-init` writes the genesis
/// (`stream_above`: 0 streams every genesis).
pub fn geth_import_with(
    geth: &Path,
    dir: &Path,
    export: &ChainExport,
    stream_above: u64,
    timeout: Duration,
) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "geth import";
    require(ENGINE, geth, "scripts/install-geth.sh")?;
    let rlp = dir.join(RLP_FILE);
    let genesis = dir.join(GENESIS_FILE);
    let failed = |what: String| PeerError::Failed {
        engine: ENGINE,
        file: rlp.clone(),
        what,
    };
    let datadir = gigagas_guard::interrupt::TempDir::new("gigagas-geth-import-")
        .map_err(|e| failed(format!("temporary data directory: {e}")))?;
    let size = std::fs::metadata(&genesis).map_or(0, |m| m.len());
    let mut init = if size > stream_above {
        let tool = crate::tools::geth_init_path();
        require(ENGINE, &tool, "scripts/install-geth.sh")?;
        let mut cmd = Command::new(tool);
        cmd.arg("--datadir")
            .arg(datadir.path())
            .arg("--expect-hash")
            .arg(export.genesis.hash_slow().to_string())
            .arg(&genesis);
        cmd
    } else {
        let mut cmd = Command::new(geth);
        cmd.arg("--datadir")
            .arg(datadir.path())
            .arg("init")
            .arg(&genesis);
        cmd
    };
    let (_, init) = timed(
        ENGINE,
        format!("the genesis of {}", genesis.display()),
        timeout,
        &mut init,
    )?;
    if !init.status.success() {
        return Err(failed(format!(
            "writing the genesis {} ({} bytes) exited {}: {}",
            genesis.display(),
            size,
            exit_words(&init.status),
            tail(&text(&init), 5)
        )));
    }
    let (wall_ns, out) = timed(
        ENGINE,
        format!("{ENGINE} of {}", rlp.display()),
        timeout,
        Command::new(geth)
            .arg("--datadir")
            .arg(datadir.path())
            .args(["--nodiscover", "--maxpeers", "0", "import"])
            .arg(&rlp),
    )?;
    let all = text(&out);
    if !out.status.success() {
        return Err(failed(format!(
            "exit {}: {}",
            exit_words(&out.status),
            tail(&all, 6)
        )));
    }
    let segments = geth_segments(&all);
    let (number, hash, _) = head(export);
    if segments.head != Some(number) {
        return Err(failed(format!(
            "last imported block {:?}, expected {number}: {}",
            segments.head,
            tail(&all, 6)
        )));
    }
    // geth checked every header's state root against its own execution; the head's hash
    // (which covers that root) must be the export's.
    if !segments
        .hash
        .as_deref()
        .is_some_and(|h| logged_hash_is(h, hash))
    {
        return Err(failed(format!(
            "last imported block {number} has hash {}, expected {hash}: {}",
            gigagas_guard::text::printable(segments.hash.as_deref().unwrap_or("(none logged)")),
            tail(&all, 6)
        )));
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: segments.own,
    })
}

/// Runs gigagas itself as a process on the same blockchain test:
/// `GIGAGAS conformance DIR/blocktest.json --mode sequential --json -`; it must exit 0 and its
/// summary must count exactly one test, passed (none failed or skipped).
pub fn gigagas_process(
    gigagas: &Path,
    dir: &Path,
    timeout: Duration,
) -> Result<PeerRun, PeerError> {
    const ENGINE: &str = "gigagas conformance (process)";
    let file = dir.join(BLOCKTEST_FILE);
    let (wall_ns, out) = timed(
        ENGINE,
        format!("{ENGINE} on {}", file.display()),
        timeout,
        Command::new(gigagas).arg("conformance").arg(&file).args([
            "--mode",
            "sequential",
            "--json",
            "-",
        ]),
    )?;
    let failed = |what: String| PeerError::Failed {
        engine: ENGINE,
        file: file.clone(),
        what,
    };
    let summary = json_stdout(&out, "summary", failed)?;
    let count = |key: &str| summary[key].as_u64();
    if (count("passed"), count("failed"), count("skipped")) != (Some(1), Some(0), Some(0)) {
        return Err(failed(format!(
            "passed {:?}, failed {:?}, skipped {:?}; expected the one test passed",
            count("passed"),
            count("failed"),
            count("skipped")
        )));
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: None,
    })
}

/// `gigagas db init --data DATA` into a fresh temporary store (untimed: geth init's
/// counterpart), then `gigagas run --data DATA --state disk --root incremental --json -`
/// (timed; `cold`: `--pipeline off --cold`). It must exit 0 and its report must hold every
/// block of the export, each with its state root checked against the header, the last one
/// the export's head root; gigagas's own figure is the report's `e2e_mgas_per_s` (the
/// pipeline's wall: no process start, loading or preparation).
pub fn gigagas_disk(
    gigagas: &Path,
    data: &Path,
    export: &ChainExport,
    cold: bool,
    timeout: Duration,
) -> Result<PeerRun, PeerError> {
    let engine = if cold {
        PeerKind::GigagasDiskCold.name()
    } else {
        PeerKind::GigagasDisk.name()
    };
    let failed = |what: String| PeerError::Failed {
        engine,
        file: data.to_owned(),
        what,
    };
    let dir = gigagas_guard::interrupt::TempDir::new("gigagas-peers-store-")
        .map_err(|e| failed(format!("temporary store directory: {e}")))?;
    let store = dir.path().join("store");
    let (_, init) = timed(
        engine,
        format!("gigagas db init of {}", data.display()),
        timeout,
        Command::new(gigagas)
            .args(["db", "init", "--data"])
            .arg(data)
            .arg("--out")
            .arg(&store),
    )?;
    if !init.status.success() {
        return Err(failed(format!(
            "gigagas db init exited {}: {}",
            exit_words(&init.status),
            tail(&text(&init), 5)
        )));
    }
    let mut cmd = Command::new(gigagas);
    cmd.args(["run", "--data"])
        .arg(data)
        .args(["--state", "disk", "--db"])
        .arg(&store)
        .args(["--root", "incremental", "--json", "-"]);
    if cold {
        cmd.args(["--pipeline", "off", "--cold"]);
    }
    let (wall_ns, out) = timed(
        engine,
        format!("{engine} on {}", data.display()),
        timeout,
        &mut cmd,
    )?;
    let report = json_stdout(&out, "report", failed)?;
    let blocks = report["run"]["blocks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if blocks.len() != export.blocks.len() {
        return Err(failed(format!(
            "reported {} blocks, the export has {}",
            blocks.len(),
            export.blocks.len()
        )));
    }
    if let Some(b) = blocks
        .iter()
        .find(|b| b["root_checked"].as_bool() != Some(true))
    {
        return Err(failed(format!(
            "block {} reported without its state root checked against the header",
            b["number"]
        )));
    }
    let (_, _, want) = head(export);
    let root = blocks
        .last()
        .and_then(|b| b["state_root"].as_str())
        .and_then(|s| s.parse::<B256>().ok());
    if root != Some(want) {
        return Err(failed(format!(
            "reached state root {root:?}, expected the head's {want}"
        )));
    }
    Ok(PeerRun {
        wall_ns,
        own_mgas_per_s: report["e2e_mgas_per_s"].as_f64(),
    })
}

/// Runs one peer kind (`gigagas` is this binary, for the gigagas kinds; `data` the chain the
/// export was made from, which they read); each child is killed when it runs past `timeout`.
pub fn run_peer(
    kind: PeerKind,
    gigagas: &Path,
    data: &Path,
    dir: &Path,
    export: &ChainExport,
    timeout: Duration,
) -> Result<PeerRun, PeerError> {
    match kind {
        PeerKind::GigagasDisk => gigagas_disk(gigagas, data, export, false, timeout),
        PeerKind::GigagasDiskCold => gigagas_disk(gigagas, data, export, true, timeout),
        PeerKind::GethBlocktest => geth_blocktest(&crate::tools::evm_path(), dir, export, timeout),
        PeerKind::GethImport => geth_import(&crate::tools::geth_path(), dir, export, timeout),
        PeerKind::Revme => revme(&crate::tools::revme_path(), dir, timeout),
        PeerKind::GigagasProcess => gigagas_process(gigagas, dir, timeout),
    }
}

/// The binary a peer kind runs.
pub fn binary(kind: PeerKind, gigagas: &Path) -> PathBuf {
    match kind {
        PeerKind::GethBlocktest => crate::tools::evm_path(),
        PeerKind::GethImport => crate::tools::geth_path(),
        PeerKind::Revme => crate::tools::revme_path(),
        PeerKind::GigagasProcess | PeerKind::GigagasDisk | PeerKind::GigagasDiskCold => {
            gigagas.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sigkill_names_the_usual_sender() {
        use std::os::unix::process::ExitStatusExt;
        let killed = std::process::ExitStatus::from_raw(9);
        assert!(exit_words(&killed).contains("out-of-memory killer"));
        let failed = std::process::ExitStatus::from_raw(1 << 8);
        assert!(!exit_words(&failed).contains("out-of-memory"));
    }

    #[test]
    fn logged_hashes_match_in_full_or_terminal_form() {
        let want: B256 = "0xfd5e18aa00000000000000000000000000000000000000000000000000d2dc73"
            .parse()
            .unwrap();
        assert!(logged_hash_is("fd5e18..d2dc73", want));
        assert!(logged_hash_is(&want.to_string(), want));
        assert!(!logged_hash_is("fd5e18..d2dc74", want));
        assert!(!logged_hash_is("000000..000000", want));
        assert!(!logged_hash_is(&B256::ZERO.to_string(), want));
        assert!(!logged_hash_is("", want));
    }

    #[test]
    fn segment_lines_give_head_hash_and_throughput() {
        let log = "INFO [01-01|00:00:00.000] Imported new chain segment number=1 hash=aaaaaa..bbbbbb blocks=1 txs=2 mgas=3.000 elapsed=1.5s mgasps=2.0\n\
                   INFO [01-01|00:00:00.000] Imported new chain segment number=2 hash=cccccc..dddddd blocks=1 txs=2 mgas=3.000 elapsed=1.5s mgasps=2.0\n";
        let s = geth_segments(log);
        assert_eq!(s.head, Some(2));
        assert_eq!(s.hash.as_deref(), Some("cccccc..dddddd"));
        assert_eq!(s.own, Some(2.0));
        assert_eq!(geth_segments("nothing"), Segments::default());
    }
}
