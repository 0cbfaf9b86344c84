//! go-ethereum's `evm` (v1.17.10): located or installed through the Go module proxy, and run
//! as `evm t8n` on a scenario.

use crate::{scenario::Scenario, Outcome};
use alloy_eip7928::BlockAccessList;
use alloy_primitives::{Bytes, B256, U256};
use alloy_rlp::Decodable;
use gigagas_guard::child::{self, Limits};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};
use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

/// The environment variable that sets how long one `evm t8n` run may take, in seconds.
pub const T8N_TIMEOUT_ENV: &str = "GIGAGAS_T8N_TIMEOUT";

/// How long one `evm t8n` run may take by default (one block: seconds at most).
pub const T8N_TIMEOUT: Duration = Duration::from_secs(120);

/// How long `go install` of `evm` may take (about 4–5 minutes cold).
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long `evm --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Largest `result.json` read from `evm t8n`.
const MAX_RESULT_BYTES: u64 = 64 << 20;

/// The deadline of one `evm t8n` run: [`T8N_TIMEOUT_ENV`] seconds when set to a positive
/// whole number, else [`T8N_TIMEOUT`].
pub fn t8n_limits() -> Limits {
    let timeout = std::env::var(T8N_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(T8N_TIMEOUT, Duration::from_secs);
    Limits::new(
        timeout,
        "the GIGAGAS_T8N_TIMEOUT environment variable (seconds)",
    )
}

/// The geth release the differential check pins.
pub const GETH_VERSION: &str = "v1.17.10";

/// Why geth could not give a result.
#[derive(Debug, thiserror::Error)]
pub enum GethError {
    /// `evm` is not installed and could not be.
    #[error("geth evm {GETH_VERSION} unavailable: {0}")]
    Unavailable(String),
    /// `evm t8n` failed.
    #[error("evm t8n failed: {0}")]
    T8n(String),
    /// A child process (`evm t8n`, `go install`) did not start or did not exit in time.
    #[error(transparent)]
    Child(#[from] child::ChildError),
    /// Its output was not what `t8n` writes.
    #[error("evm t8n output: {0}")]
    Output(String),
    /// File I/O in the work directory.
    #[error("t8n work directory: {0}")]
    Io(#[from] std::io::Error),
}

/// Where the pinned `evm` is cached: `$GIGAGAS_TOOLS` or `~/.cache/gigagas`, then
/// `geth-<version>/evm`.
pub fn cache_path() -> PathBuf {
    let root = std::env::var_os("GIGAGAS_TOOLS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gigagas")))
        .unwrap_or_else(|| PathBuf::from(".cache/gigagas"));
    root.join(format!("geth-{GETH_VERSION}")).join("evm")
}

fn version_ok(evm: &Path) -> bool {
    child::run(
        Command::new(evm).arg("--version"),
        "the version of geth evm",
        &Limits::new(VERSION_TIMEOUT, "the built-in version-query limit"),
    )
    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&GETH_VERSION[1..]))
}

/// The pinned `evm`: `$GIGAGAS_GETH_EVM` if set, else the cache; with `install`, builds it
/// into the cache with `go install` (about 4–5 minutes cold) when absent.
pub fn evm_binary(install: bool) -> Result<PathBuf, GethError> {
    if let Some(path) = std::env::var_os("GIGAGAS_GETH_EVM").map(PathBuf::from) {
        return if version_ok(&path) {
            Ok(path)
        } else {
            Err(GethError::Unavailable(format!(
                "{} is not evm {GETH_VERSION}",
                path.display()
            )))
        };
    }
    let cached = cache_path();
    if version_ok(&cached) {
        return Ok(cached);
    }
    if !install {
        return Err(GethError::Unavailable(format!(
            "not at {} (run scripts/install-geth-evm.sh)",
            cached.display()
        )));
    }
    let bin_dir = cached
        .parent()
        .ok_or_else(|| GethError::Unavailable(format!("no directory for {}", cached.display())))?;
    std::fs::create_dir_all(bin_dir)?;
    let done = child::run(
        Command::new("go")
            .args([
                "install",
                &format!("github.com/ethereum/go-ethereum/cmd/evm@{GETH_VERSION}"),
            ])
            .env("GOBIN", bin_dir)
            .env("GOFLAGS", "-mod=mod"),
        "go install of geth evm",
        &Limits::new(
            INSTALL_TIMEOUT,
            "the built-in install limit (run scripts/install-geth-evm.sh instead)",
        ),
    )
    .map_err(|e| GethError::Unavailable(e.to_string()))?;
    if !done.status.success() || !version_ok(&cached) {
        return Err(GethError::Unavailable(format!(
            "go install exited with {}: {}",
            done.status,
            done.stderr_tail()
        )));
    }
    Ok(cached)
}

/// geth's name of a fork.
pub fn fork_name(spec: SpecId) -> &'static str {
    match spec {
        SpecId::CANCUN => "Cancun",
        SpecId::PRAGUE => "Prague",
        SpecId::OSAKA => "Osaka",
        SpecId::AMSTERDAM => "Amsterdam",
        _ => "unsupported",
    }
}

fn q(n: impl std::fmt::LowerHex) -> String {
    format!("0x{n:x}")
}

fn e_withdrawals(scenario: &Scenario) -> Value {
    Value::Array(
        scenario
            .withdrawals
            .iter()
            .map(|w| {
                json!({"index": q(w.index), "validatorIndex": q(w.validator_index),
                       "address": w.address.to_string(), "amount": q(w.amount)})
            })
            .collect(),
    )
}

/// The largest RLP transaction list `evm t8n` reads: geth decodes `txs.rlp` through an
/// `rlp.Stream` limited to 1 MiB and drops the error of a longer list, running *no*
/// transaction without a word (`cmd/evm/internal/t8ntool/tx_iterator.go`, `rlp.NewStream(…,
/// 1024*1024)` then `in.List()` unchecked; v1.17.10). A list this long or longer goes as JSON.
pub const T8N_RLP_LIMIT: usize = 1024 * 1024;

/// How the transactions reach `evm t8n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxsFormat {
    /// `txs.rlp`: the RLP list as a hex string (what geth's own tests use), when it is under
    /// [`T8N_RLP_LIMIT`]; JSON otherwise.
    Auto,
    /// `txs.json`: the signed transactions as JSON objects (no size limit in geth).
    Json,
}

/// The transactions as `t8n` reads them: the file name and its contents.
fn txs_input(scenario: &Scenario, format: TxsFormat) -> Result<(&'static str, String), GethError> {
    let mut rlp = Vec::new();
    alloy_rlp::encode_list(&scenario.transactions, &mut rlp);
    if format == TxsFormat::Auto && rlp.len() < T8N_RLP_LIMIT {
        return Ok((
            "txs.rlp",
            Value::String(Bytes::from(rlp).to_string()).to_string(),
        ));
    }
    serde_json::to_string(&scenario.transactions)
        .map(|json| ("txs.json", json))
        .map_err(|e| GethError::Output(format!("encoding the transactions as JSON: {e}")))
}

/// The scenario's `alloc.json` and `env.json` as `t8n` reads them.
fn inputs(scenario: &Scenario) -> (Value, Value) {
    let alloc: serde_json::Map<String, Value> = scenario
        .alloc
        .iter()
        .map(|(address, a)| {
            let storage: serde_json::Map<String, Value> = a
                .storage
                .iter()
                .map(|(k, v)| (B256::from(*k).to_string(), Value::String(B256::from(*v).to_string())))
                .collect();
            (
                address.to_string(),
                json!({"balance": q(a.balance), "nonce": q(a.nonce), "code": a.code.to_string(), "storage": storage}),
            )
        })
        .collect();
    let e = &scenario.env;
    let env = json!({
        "currentCoinbase": e.coinbase.to_string(),
        "currentGasLimit": q(e.gas_limit),
        "currentNumber": q(e.number),
        "currentTimestamp": q(e.timestamp),
        "currentBaseFee": q(e.base_fee),
        "currentRandom": e.prevrandao.to_string(),
        "currentDifficulty": "0x0",
        "currentExcessBlobGas": "0x0",
        "parentBeaconBlockRoot": e.parent_beacon_block_root.to_string(),
        "blockHashes": { (e.number - 1).to_string(): e.parent_hash.to_string() },
        "withdrawals": e_withdrawals(scenario),
    });
    (Value::Object(alloc), env)
}

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a str, GethError> {
    v.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| GethError::Output(format!("no {name} in result.json")))
}

fn parse_u64(s: &str) -> Result<u64, GethError> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .map_err(|e| GethError::Output(format!("{s}: {e}")))
}

fn parse_b256(s: &str) -> Result<B256, GethError> {
    s.parse()
        .map_err(|e| GethError::Output(format!("{s}: {e}")))
}

/// Runs `evm t8n` on `scenario` within [`t8n_limits`] and reads its result.
pub fn run_t8n(evm: &Path, scenario: &Scenario) -> Result<Outcome, GethError> {
    run_t8n_within(evm, scenario, &t8n_limits())
}

/// Runs `evm t8n` on `scenario`, killed when it passes `limits`, and reads its result.
pub fn run_t8n_within(
    evm: &Path,
    scenario: &Scenario,
    limits: &Limits,
) -> Result<Outcome, GethError> {
    run_t8n_as(evm, scenario, limits, TxsFormat::Auto)
}

/// [`run_t8n_within`] with the transactions passed as `format` says.
pub fn run_t8n_as(
    evm: &Path,
    scenario: &Scenario,
    limits: &Limits,
    format: TxsFormat,
) -> Result<Outcome, GethError> {
    let dir = gigagas_guard::interrupt::TempDir::new("gigagas-differential-")?;
    let (alloc, env) = inputs(scenario);
    let (txs_file, txs) = txs_input(scenario, format)?;
    std::fs::write(dir.path().join("alloc.json"), alloc.to_string())?;
    std::fs::write(dir.path().join("env.json"), env.to_string())?;
    std::fs::write(dir.path().join(txs_file), txs)?;
    let output = child::run(
        Command::new(evm).current_dir(dir.path()).args([
            "t8n",
            "--input.alloc=alloc.json",
            "--input.env=env.json",
            &format!("--input.txs={txs_file}"),
            "--output.result=result.json",
            "--output.alloc=post.json",
            &format!("--state.fork={}", fork_name(scenario.spec)),
            &format!("--state.chainid={}", crate::scenario::CHAIN_ID),
            "--state.reward=-1",
        ]),
        &format!(
            "evm t8n on the differential block ({})",
            fork_name(scenario.spec)
        ),
        limits,
    )?;
    if !output.status.success() {
        return Err(GethError::T8n(format!(
            "exit {}: {}",
            output.status,
            output.stderr_tail()
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::fs::File::open(dir.path().join("result.json"))?,
            MAX_RESULT_BYTES + 1,
        ),
        &mut bytes,
    )?;
    if bytes.len() as u64 > MAX_RESULT_BYTES {
        return Err(GethError::Output(format!(
            "result.json is larger than {MAX_RESULT_BYTES} bytes"
        )));
    }
    let result: Value =
        serde_json::from_slice(&bytes).map_err(|e| GethError::Output(e.to_string()))?;
    if let Some(rejected) = result.get("rejected").and_then(Value::as_array) {
        if !rejected.is_empty() {
            return Err(GethError::Output(format!(
                "geth rejected transactions: {}",
                gigagas_guard::text::printable(&format!("{rejected:?}"))
            )));
        }
    }
    let receipts = result
        .get("receipts")
        .and_then(Value::as_array)
        .ok_or_else(|| GethError::Output("no receipts".into()))?;
    // Every transaction is either executed or rejected: anything else is transactions geth
    // never read (as its RLP reader once dropped a list over 1 MiB), not a result.
    if receipts.len() != scenario.transactions.len() {
        return Err(GethError::Output(format!(
            "evm t8n returned {} receipts and no rejection for {} transactions: it did not read them all",
            receipts.len(),
            scenario.transactions.len()
        )));
    }
    let tx_gas = receipts
        .iter()
        .map(|r| parse_u64(field(r, "gasUsed")?))
        .collect::<Result<Vec<_>, _>>()?;
    let tx_success = receipts
        .iter()
        .map(|r| Ok(field(r, "status")? == "0x1"))
        .collect::<Result<Vec<_>, GethError>>()?;
    let bal = match result.get("blockAccessList").and_then(Value::as_str) {
        Some(hex) => {
            let bytes: Bytes = hex
                .parse()
                .map_err(|e| GethError::Output(format!("blockAccessList: {e}")))?;
            Some(
                BlockAccessList::decode(&mut &bytes[..])
                    .map_err(|e| GethError::Output(format!("blockAccessList RLP: {e}")))?,
            )
        }
        None => None,
    };
    let _ = U256::ZERO;
    Ok(Outcome {
        state_root: parse_b256(field(&result, "stateRoot")?)?,
        receipts_root: parse_b256(field(&result, "receiptsRoot")?)?,
        gas_used: parse_u64(field(&result, "gasUsed")?)?,
        tx_gas,
        tx_success,
        bal_hash: result
            .get("blockAccessListHash")
            .and_then(Value::as_str)
            .map(parse_b256)
            .transpose()?,
        bal,
    })
}
