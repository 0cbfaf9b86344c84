//! A go-ethereum genesis file (`geth init GENESIS`, `geth --dev dumpgenesis`): the chain id,
//! the one fork its chain runs under, and the genesis allocation. Used by
//! `gigagas fetch --genesis` to give a chain fetched from a node its complete genesis state.

use crate::genesis::AllocAccount;
use alloy_primitives::{Address, Bytes, U256};
use revm::primitives::hardfork::SpecId;
use serde_json::{Map, Value};
use std::{collections::BTreeMap, str::FromStr};

/// What a geth genesis file says about its chain.
#[derive(Debug, Clone)]
pub struct GethGenesis {
    /// `config.chainId`.
    pub chain_id: u64,
    /// The fork every block runs under (the newest one the config activates at time 0).
    pub spec: SpecId,
    /// `alloc`.
    pub alloc: BTreeMap<Address, AllocAccount>,
}

/// Timestamp forks geth's config names, oldest first, and revm's fork for each.
const TIME_FORKS: [(&str, SpecId); 4] = [
    ("shanghaiTime", SpecId::SHANGHAI),
    ("cancunTime", SpecId::CANCUN),
    ("pragueTime", SpecId::PRAGUE),
    ("osakaTime", SpecId::OSAKA),
];

/// Largest geth genesis file read (bytes); raised with [`MAX_GENESIS_BYTES_ENV`]. A dev
/// chain's genesis is a few kilobytes; one listing a large state can be hundreds of megabytes.
pub const MAX_GENESIS_BYTES: u64 = 256 << 20;
/// Environment setting that raises [`MAX_GENESIS_BYTES`] (bytes).
pub const MAX_GENESIS_BYTES_ENV: &str = "GIGAGAS_MAX_GENESIS_BYTES";

/// Reads and parses the geth genesis file `path`: a regular file of at most
/// [`MAX_GENESIS_BYTES`] (a device such as `/dev/zero`, a FIFO or a directory is refused
/// unread). Errors name the file.
pub fn read_geth_genesis(path: &std::path::Path) -> Result<GethGenesis, crate::DataError> {
    let bytes =
        crate::read_limited(path, MAX_GENESIS_BYTES, MAX_GENESIS_BYTES_ENV).map_err(|source| {
            crate::DataError::Io {
                path: path.to_owned(),
                source,
            }
        })?;
    parse_geth_genesis(&bytes).map_err(|what| crate::DataError::Invalid {
        path: path.to_owned(),
        what,
    })
}

/// Parses a geth genesis JSON. Errors say what is wrong in the file's terms.
pub fn parse_geth_genesis(bytes: &[u8]) -> Result<GethGenesis, String> {
    const NOT_GETH: &str = "not a geth genesis file (a JSON object with `config` holding \
        `chainId`, and `alloc`; scripts/geth-dev.sh writes DATADIR/genesis-osaka.json)";
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("{NOT_GETH}: not JSON: {e}"))?;
    let (Some(config), Some(alloc)) = (
        value.get("config").and_then(Value::as_object),
        value.get("alloc").and_then(Value::as_object),
    ) else {
        return Err(format!(
            "{NOT_GETH}: no `config` object or no `alloc` object"
        ));
    };
    let chain_id = config
        .get("chainId")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{NOT_GETH}: `config.chainId` is missing or not a number"))?;
    let spec = fork_of(config)?;
    let mut accounts = BTreeMap::new();
    for (key, account) in alloc {
        let address = Address::from_str(key.strip_prefix("0x").unwrap_or(key))
            .map_err(|e| format!("alloc: {key:?} is not an address: {e}"))?;
        let a = parse_account(account).map_err(|e| format!("alloc {address}: {e}"))?;
        if accounts.insert(address, a).is_some() {
            return Err(format!("alloc: {address} appears twice"));
        }
    }
    Ok(GethGenesis {
        chain_id,
        spec,
        alloc: accounts,
    })
}

/// The one fork of a config: every block-number fork and every timestamp fork at 0 (a
/// post-merge chain that never changes fork), the newest one revm 43 and gigagas know.
fn fork_of(config: &Map<String, Value>) -> Result<SpecId, String> {
    let mut spec = None;
    for (key, value) in config {
        let is_block = key.ends_with("Block") && key != "terminalTotalDifficultyPassed";
        let is_time = key.ends_with("Time");
        if !is_block && !is_time {
            continue;
        }
        if value.as_u64() != Some(0) {
            return Err(format!(
                "config.{key} is {value}: only chains whose forks all activate at the genesis \
                 (block 0, time 0) are supported (one fork per chain)"
            ));
        }
        if is_time {
            match TIME_FORKS.iter().find(|(name, _)| name == key) {
                Some((_, s)) => spec = spec.max(Some(*s)),
                None => {
                    return Err(format!(
                        "config.{key}: a fork revm 43 and gigagas do not run alike with geth \
                         (Shanghai to Osaka are supported; scripts/geth-dev.sh removes \
                         geth --dev's bogotaTime)"
                    ))
                }
            }
        }
    }
    if config
        .get("terminalTotalDifficulty")
        .and_then(Value::as_u64)
        != Some(0)
    {
        return Err(
            "config.terminalTotalDifficulty must be 0 (a proof-of-stake chain from \
                    the genesis)"
                .into(),
        );
    }
    spec.ok_or_else(|| {
        "config names no fork from Shanghai on at time 0 (shanghaiTime: 0, ...)".into()
    })
}

/// A quantity as geth writes it: 0x-hex or decimal, string or number.
fn quantity(v: &Value, what: &str) -> Result<U256, String> {
    match v {
        Value::String(s) => U256::from_str(s).map_err(|e| format!("{what} {s:?}: {e}")),
        Value::Number(n) => n
            .as_u64()
            .map(U256::from)
            .ok_or_else(|| format!("{what} {n}: not a non-negative integer")),
        other => Err(format!("{what} {other}: not a quantity")),
    }
}

fn parse_account(v: &Value) -> Result<AllocAccount, String> {
    let obj = v.as_object().ok_or("not an object")?;
    for key in obj.keys() {
        if !matches!(
            key.as_str(),
            "balance" | "nonce" | "code" | "storage" | "secretKey"
        ) {
            return Err(format!("unknown field {key:?}"));
        }
    }
    let balance = match obj.get("balance") {
        Some(b) => quantity(b, "balance")?,
        None => return Err("no balance".into()),
    };
    let nonce = match obj.get("nonce") {
        Some(n) => {
            let n = quantity(n, "nonce")?;
            u64::try_from(n).map_err(|_| format!("nonce {n} does not fit 64 bits"))?
        }
        None => 0,
    };
    let code = match obj.get("code") {
        Some(Value::String(s)) => Bytes::from_str(s).map_err(|e| format!("code: not hex: {e}"))?,
        Some(other) => return Err(format!("code {other}: not a hex string")),
        None => Bytes::new(),
    };
    let mut storage = BTreeMap::new();
    if let Some(s) = obj.get("storage") {
        let s = s.as_object().ok_or("storage: not an object")?;
        for (k, v) in s {
            let key = U256::from_str(k).map_err(|e| format!("storage key {k:?}: {e}"))?;
            let value = quantity(v, &format!("storage {k}"))?;
            if !value.is_zero() {
                storage.insert(key, value);
            }
        }
    }
    Ok(AllocAccount {
        balance,
        nonce,
        code,
        storage,
    })
}
