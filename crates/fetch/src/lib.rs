//! `gigagas fetch`: pull blocks from an Ethereum JSON-RPC node into the mainnet data layout
//! that `gigagas_data::load` reads (`blocks/<n>/block.json`, `blocks/<n>/pre_state.json`,
//! `bytecodes.json`, `block_hashes.json`), plus a marker `fetch.json`.
//!
//! - `block.json` is the result of `eth_getBlockByNumber(n, true)`, byte for byte as the node
//!   sent it, after checking that it is block `n`, that its header hashes to its stated hash
//!   and that it carries full transactions.
//! - `pre_state.json` merges the per-transaction results of
//!   `debug_traceBlockByNumber(n, {"tracer": "prestateTracer"})`: for every account and slot
//!   the value from the first transaction that touched it, i.e. the state before the block.
//!   Codes go to `bytecodes.json` keyed by keccak256.
//! - `block_hashes.json`: the hashes of blocks `max(0, from − 256) ..= to` (BLOCKHASH reaches
//!   256 blocks back): fetched blocks give their own and their parent's hash, the older ones
//!   come from `eth_getBlockByNumber(k, false)`, and consecutive hashes must link by
//!   `parentHash`.
//!
//! Every block directory is written into a hidden temporary directory and renamed into place
//! once complete; a re-run skips blocks whose directory is complete and verified.
//! `bytecodes.json` and `block_hashes.json` are merged with the previous run's and replaced
//! atomically at the end (the codes also when the run fails, so that finished blocks count as
//! complete next time). See `docs/fetch.md`.

mod block;
pub mod chain;
pub mod inject;
mod rpc;
mod store;

use alloy_primitives::{Bytes, B256};
use std::{
    collections::{BTreeMap, HashSet},
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};

pub use rpc::{Notice, MAX_BACKOFF, PROBE_DEADLINE, PROBE_TIMEOUT};
pub use store::{Marker, MARKER, MARKER_FORMAT};

/// Most concurrent requests (`--jobs`).
pub const MAX_JOBS: usize = 64;
/// Most blocks in one run (`--from ..= --to`).
pub const MAX_BLOCKS_PER_RUN: u64 = 100_000;
/// Largest answer accepted from the node.
pub const MAX_RESPONSE_BYTES: u64 = 256 << 20;
/// How far back BLOCKHASH reaches, so how many ancestors' hashes are fetched.
pub const ANCESTOR_HASHES: u64 = 256;
/// Most tries of one request (`--retries` + 1).
pub const MAX_ATTEMPTS: u32 = 11;
/// Longest request timeout accepted (`--timeout`, seconds).
pub const MAX_TIMEOUT_SECS: u64 = 3600;
/// Default most time one request takes over all its tries ([`FetchOptions::deadline`]).
pub const DEFAULT_REQUEST_DEADLINE: Duration = Duration::from_secs(180);

/// What to fetch, from where, to where, and how.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// `http://` or `https://` URL of the JSON-RPC endpoint.
    pub rpc: String,
    /// First block.
    pub from: u64,
    /// Last block (inclusive).
    pub to: u64,
    /// Output directory: new, empty, or written by an earlier fetch.
    pub out: PathBuf,
    /// Concurrent requests, 1 to [`MAX_JOBS`].
    pub jobs: usize,
    /// Timeout of one request (connect, send, answer).
    pub timeout: Duration,
    /// Tries per request, 1 to [`MAX_ATTEMPTS`].
    pub attempts: u32,
    /// Pause before the second try; doubled for each further one, at most [`MAX_BACKOFF`].
    pub backoff: Duration,
    /// Largest answer accepted, in bytes.
    pub max_response_bytes: u64,
    /// Ancestors whose hashes are fetched (BLOCKHASH reach).
    pub ancestors: u64,
    /// The fork the blocks run under (`--fork`; recorded in `fetch.json`); `None`: the
    /// mainnet schedule, which only chain 1 may use.
    pub fork: Option<String>,
    /// Most time one request takes over all its tries and pauses (each try's timeout is cut
    /// to what is left); the first call of a run has at most [`PROBE_DEADLINE`].
    pub deadline: Duration,
    /// Most time the whole run takes (`None`: no limit): no request runs past it.
    pub run_deadline: Option<Duration>,
    /// Where each retry is reported as it happens (default: a line on stderr); `None`: only
    /// the counts in the report and the error.
    pub notice: Option<Notice>,
}

impl FetchOptions {
    /// The defaults: 4 jobs, 120 s timeout, 6 tries from 500 ms back-off, at most
    /// [`DEFAULT_REQUEST_DEADLINE`] per request, no run deadline, retries reported on stderr,
    /// 256 MiB answers, 256 ancestors.
    pub fn new(rpc: impl Into<String>, from: u64, to: u64, out: impl Into<PathBuf>) -> Self {
        Self {
            rpc: rpc.into(),
            from,
            to,
            out: out.into(),
            jobs: 4,
            timeout: Duration::from_secs(120),
            attempts: 6,
            backoff: Duration::from_millis(500),
            max_response_bytes: MAX_RESPONSE_BYTES,
            ancestors: ANCESTOR_HASHES,
            fork: None,
            deadline: DEFAULT_REQUEST_DEADLINE,
            run_deadline: None,
            notice: Some(Notice::stderr()),
        }
    }
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The node answered with a JSON-RPC error object.
    #[error("the node refused the call: JSON-RPC error {code}: {message}")]
    Refused { code: i64, message: String },
    /// The node answered `null`: it does not have the block.
    #[error("the node has no such block (result null)")]
    NoSuchBlock,
    /// Transport errors or HTTP 429/5xx on every try, or the deadline passed.
    #[error("no usable answer after {attempts} tries {why}")]
    GaveUp {
        attempts: u32,
        /// How long, why it stopped, and the last try's failure.
        why: String,
    },
    /// An HTTP status that is not worth another try (4xx other than 429).
    #[error("HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// A transport error that is not worth another try (bad URL, ...).
    #[error("{0}")]
    Transport(String),
    /// The answer was larger than the limit.
    #[error("the answer is larger than {limit} bytes; refused")]
    TooLarge { limit: u64 },
    /// The answer is not what was asked for.
    #[error("nonsensical answer: {0}")]
    Nonsense(String),
}

/// Everything that stops a fetch.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A flag out of bounds.
    #[error("{flag}: {what}")]
    Flag { flag: &'static str, what: String },
    /// The output directory cannot be used.
    #[error("--out {}: {what}", path.display())]
    Out { path: PathBuf, what: String },
    /// A request failed; names the block (when the call is for one), the method and the
    /// node's host.
    #[error("{}{method} (node {host}): {what}", block.map(|b| format!("block {b}: ")).unwrap_or_default())]
    Rpc {
        block: Option<u64>,
        method: String,
        host: String,
        what: Failure,
    },
    /// The hashes do not form one chain (the node reorganised during the fetch, or an earlier
    /// run fetched another chain).
    #[error("block hashes disagree: {0}")]
    Chain(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What a fetch did.
#[derive(Debug, Clone, Default)]
pub struct FetchReport {
    /// Blocks fetched in this run, ascending.
    pub fetched: Vec<u64>,
    /// Blocks found complete from an earlier run, ascending.
    pub skipped: Vec<u64>,
    /// Ancestor hashes fetched in this run.
    pub hashes_fetched: usize,
    /// Entries of `block_hashes.json` now.
    pub hashes_total: usize,
    /// Codes new in `bytecodes.json`.
    pub codes_new: usize,
    /// Entries of `bytecodes.json` now.
    pub codes_total: usize,
    /// HTTP requests made (tries included).
    pub requests: u64,
    /// Tries after the first.
    pub retries: u64,
    /// The node's chain id.
    pub chain_id: u64,
    /// `host[:port]` of the node.
    pub host: String,
    pub seconds: f64,
}

/// Checks the options' bounds; errors name the flag.
pub fn check_options(o: &FetchOptions) -> Result<(), FetchError> {
    let flag = |flag, what: String| Err(FetchError::Flag { flag, what });
    if o.to < o.from {
        return flag("--to", format!("{} is below --from {}", o.to, o.from));
    }
    let count = o.to - o.from + 1;
    if count > MAX_BLOCKS_PER_RUN {
        return flag(
            "--to",
            format!(
                "--from {} --to {} is {count} blocks; at most {MAX_BLOCKS_PER_RUN} per run (fetch in parts into the same --out)",
                o.from, o.to
            ),
        );
    }
    if !(1..=MAX_JOBS).contains(&o.jobs) {
        return flag(
            "--jobs",
            format!("{} is out of range 1 to {MAX_JOBS}", o.jobs),
        );
    }
    if !(1..=MAX_ATTEMPTS).contains(&o.attempts) {
        return flag(
            "--retries",
            format!(
                "{} is out of range 0 to {}",
                o.attempts.saturating_sub(1),
                MAX_ATTEMPTS - 1
            ),
        );
    }
    if o.timeout.is_zero() || o.timeout > Duration::from_secs(MAX_TIMEOUT_SECS) {
        return flag(
            "--timeout",
            format!(
                "{} s is out of range 1 to {MAX_TIMEOUT_SECS}",
                o.timeout.as_secs()
            ),
        );
    }
    if o.deadline.is_zero() {
        // Options, not flags of `gigagas fetch` (which keeps their defaults): named as such.
        return flag(
            "FetchOptions::deadline",
            "0 s: a request needs some time".into(),
        );
    }
    if o.run_deadline.is_some_and(|d| d.is_zero()) {
        return flag(
            "FetchOptions::run_deadline",
            "0 s: a run needs some time".into(),
        );
    }
    rpc_host(&o.rpc)?;
    Ok(())
}

/// The JSON-RPC client of a run that started at `start`.
pub(crate) fn client(
    options: &FetchOptions,
    host: String,
    start: Instant,
) -> Result<rpc::Client, FetchError> {
    Ok(rpc::Client::new(
        &options.rpc,
        host,
        options.timeout,
        options.attempts,
        options.backoff,
        options.max_response_bytes,
    )
    .with_deadline(options.deadline)
    .with_run_end(options.run_deadline.map(|d| start + d))
    .with_notice(options.notice.clone()))
}

/// `host[:port]` of an `http(s)://` URL (no user info, path or query).
pub fn rpc_host(url: &str) -> Result<String, FetchError> {
    let bad = |what: &str| FetchError::Flag {
        flag: "--rpc",
        what: format!("{what}; give an http:// or https:// URL of a JSON-RPC endpoint"),
    };
    let uri: ureq::http::Uri = url.parse().map_err(|_| bad("not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(bad("not an http:// or https:// URL")),
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    let host = authority
        .as_str()
        .rsplit_once('@')
        .map_or(authority.as_str(), |(_, h)| h);
    if host.is_empty() {
        return Err(bad("no host"));
    }
    Ok(host.to_owned())
}

enum Job {
    Block(u64),
    Hash(u64),
}

enum Done {
    Fetched(block::BlockFacts),
    Skipped(block::BlockFacts),
    /// Ancestor `number`: its hash and its parent's.
    Hash(u64, B256, B256),
}

/// Fetches `options.from ..= options.to` into `options.out`; `progress(done, total)` is
/// called after each block or ancestor hash. The first error (lowest block) is returned
/// once the running requests end; blocks finished before it stay (complete) for a re-run.
pub fn fetch(
    options: &FetchOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<FetchReport, FetchError> {
    let t0 = Instant::now();
    check_options(options)?;
    let host = rpc_host(&options.rpc)?;
    let out = &options.out;
    let previous = store::open_out(out)?;
    let client = client(options, host.clone(), t0)?;
    let chain_id = store::chain_id(&client)?;
    let marker = store::Marker::next(
        previous.as_ref(),
        out,
        chain_id,
        options.fork.as_deref(),
        &host,
        options.from,
        options.to,
    )?;
    let blocks_dir = out.join("blocks");
    std::fs::create_dir_all(&blocks_dir).map_err(|source| FetchError::Io {
        path: blocks_dir.clone(),
        source,
    })?;
    store::write_json(&out.join(MARKER), &marker)?;
    store::remove_stale_partials(&blocks_dir);

    let old_codes = store::read_codes(out)?;
    let old_hashes = store::read_hashes(out)?;
    let known_codes: HashSet<B256> = old_codes.keys().copied().collect();

    let lo = options.from.saturating_sub(options.ancestors);
    let mut jobs: Vec<Job> = (options.from..=options.to).map(Job::Block).collect();
    jobs.extend(
        (lo..options.from)
            .filter(|k| !old_hashes.contains_key(k))
            .map(Job::Hash),
    );
    let total = jobs.len() as u64;
    progress(0, total);

    let next = AtomicUsize::new(0);
    let finished = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<(u64, FetchError)>> = Mutex::new(Vec::new());
    let threads = options.jobs.min(jobs.len()).max(1);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let (number, result) = match *job {
                    Job::Block(n) => (
                        n,
                        match block::complete(&blocks_dir, n, &known_codes) {
                            Some(facts) => Ok(Done::Skipped(facts)),
                            None => block::fetch_block(&client, &blocks_dir, n).map(Done::Fetched),
                        },
                    ),
                    Job::Hash(k) => (
                        k,
                        block::fetch_hash(&client, k).map(|(h, p)| Done::Hash(k, h, p)),
                    ),
                };
                match result {
                    Ok(d) => done
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(d),
                    Err(e) => {
                        errors
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push((number, e));
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                progress(finished.fetch_add(1, Ordering::Relaxed) + 1, total);
            });
        }
    });
    let done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut errors = errors
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);

    // Codes: always saved, so that finished blocks are complete for a re-run.
    let mut codes = old_codes;
    let before = codes.len();
    for d in &done {
        if let Done::Fetched(facts) = d {
            for (hash, code) in &facts.codes {
                codes.entry(*hash).or_insert_with(|| code.clone());
            }
        }
    }
    let codes_new = codes.len() - before;
    if codes_new > 0 || !out.join(store::BYTECODES).exists() {
        store::write_json(&out.join(store::BYTECODES), &codes)?;
    }
    if !errors.is_empty() {
        errors.sort_by_key(|(n, _)| *n);
        return Err(errors.swap_remove(0).1);
    }

    let hashes = merge_hashes(old_hashes, &done)?;
    store::write_json(&out.join(store::BLOCK_HASHES), &hashes)?;

    let mut report = FetchReport {
        chain_id,
        host,
        codes_new,
        codes_total: codes.len(),
        hashes_total: hashes.len(),
        requests: client.requests.load(Ordering::Relaxed),
        retries: client.retries.load(Ordering::Relaxed),
        ..FetchReport::default()
    };
    for d in &done {
        match d {
            Done::Fetched(f) => report.fetched.push(f.number),
            Done::Skipped(f) => report.skipped.push(f.number),
            Done::Hash(..) => report.hashes_fetched += 1,
        }
    }
    report.fetched.sort_unstable();
    report.skipped.sort_unstable();
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// The previous table plus every hash learnt in this run; any two statements about one
/// block, and every `parentHash` against the hash of the block before, must agree.
fn merge_hashes(
    old: BTreeMap<u64, B256>,
    done: &[Done],
) -> Result<BTreeMap<u64, B256>, FetchError> {
    // (number, hash, what says so), then (number, parent hash, what says so).
    let mut said: Vec<(u64, B256, String)> = Vec::new();
    for d in done {
        match d {
            Done::Fetched(f) | Done::Skipped(f) => {
                said.push((f.number, f.hash, format!("block {}", f.number)));
                if let Some(p) = f.number.checked_sub(1) {
                    said.push((
                        p,
                        f.parent_hash,
                        format!("the parentHash of block {}", f.number),
                    ));
                }
            }
            Done::Hash(k, h, p) => {
                said.push((*k, *h, format!("the header of block {k}")));
                if let Some(pk) = k.checked_sub(1) {
                    said.push((pk, *p, format!("the parentHash of block {k}")));
                }
            }
        }
    }
    let mut table: BTreeMap<u64, (B256, String)> = old
        .into_iter()
        .map(|(k, h)| (k, (h, format!("{} of an earlier run", store::BLOCK_HASHES))))
        .collect();
    // Fresh statements first so that a disagreement with an earlier run names both.
    said.sort_by_key(|(k, _, _)| *k);
    for (k, h, who) in said {
        match table.get(&k) {
            Some((known, by)) if *known != h => {
                return Err(FetchError::Chain(format!(
                    "block {k} is {known} by {by} but {h} by {who} (the chain reorganised during or since the fetch? fetch into a new --out)"
                )))
            }
            Some(_) => {}
            None => {
                table.insert(k, (h, who));
            }
        }
    }
    Ok(table.into_iter().map(|(k, (h, _))| (k, h)).collect())
}

/// Codes read back (for tests and tools): `bytecodes.json` of a fetched directory.
pub fn read_bytecodes(out: &std::path::Path) -> Result<BTreeMap<B256, Bytes>, FetchError> {
    store::read_codes(out)
}
