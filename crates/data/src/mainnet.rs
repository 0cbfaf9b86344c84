//! Loader for the mainnet layout: `blocks/<n>/block.json` (the `eth_getBlockByNumber` JSON
//! with full transactions), `blocks/<n>/pre_state.json`, `bytecodes.json`, `block_hashes.json`.

use crate::{
    prestate::PreAccount, BlockInput, DataError, DataSource, Dataset, PreState, Transaction,
};
use alloy_eips::{eip2718::Encodable2718, eip4895::Withdrawal};
use alloy_primitives::{keccak256, map::HashMap, Address, Bytes, B256, U256};
use rayon::prelude::*;
use revm::{
    bytecode::Bytecode,
    primitives::{hardfork::SpecId, KECCAK_EMPTY},
    state::AccountInfo,
};
use serde::Deserialize;
use std::sync::Arc;

/// Transaction types this build executes.
const KNOWN_TX_TYPES: [u64; 5] = [0, 1, 2, 3, 4];

#[derive(Deserialize)]
struct RawBlock {
    #[serde(flatten)]
    header: alloy_rpc_types_eth::Header,
    #[serde(default)]
    uncles: Vec<B256>,
    #[serde(default)]
    withdrawals: Option<Vec<Withdrawal>>,
}

#[derive(Deserialize)]
struct RawAccount {
    balance: U256,
    #[serde(deserialize_with = "u64_number_or_hex")]
    nonce: u64,
    #[serde(default)]
    code_hash: Option<B256>,
    #[serde(default)]
    storage: HashMap<U256, U256>,
}

fn u64_number_or_hex<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumOrHex {
        Num(u64),
        Hex(String),
    }
    match NumOrHex::deserialize(d)? {
        NumOrHex::Num(n) => Ok(n),
        NumOrHex::Hex(s) => {
            // A string is 0x-prefixed hex (the RPC convention); "12" would be ambiguous.
            let digits = s.strip_prefix("0x").ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "nonce {s:?}: a string nonce must be 0x-prefixed hex (or give a JSON number)"
                ))
            })?;
            u64::from_str_radix(digits, 16)
                .map_err(|e| serde::de::Error::custom(format!("nonce {s:?}: {e}")))
        }
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(
    source: &DataSource,
    rel: &str,
    bytes: &[u8],
    what: &str,
) -> Result<T, DataError> {
    serde_json::from_slice(bytes).map_err(|source_err| DataError::Json {
        path: source.display_path(rel),
        what: what.to_owned(),
        source: source_err,
    })
}

/// The part of `gigagas fetch`'s marker (`fetch.json`) the loader reads: which chain the
/// blocks come from and which fork rules they run under.
#[derive(Deserialize)]
struct FetchMarker {
    chain_id: u64,
    #[serde(default)]
    fork: Option<String>,
}

/// The chain id and fork of a data set: from `fetch.json` when `gigagas fetch` wrote it,
/// else mainnet (chain 1, the mainnet schedule by block number and timestamp). A fetched
/// data set of another chain must name its fork (`gigagas fetch --fork`).
fn chain_rules(source: &DataSource) -> Result<(u64, Option<SpecId>), DataError> {
    const REL: &str = "fetch.json";
    let Some(bytes) = source.read_optional(REL)? else {
        return Ok((1, None));
    };
    let marker: FetchMarker = parse_json(source, REL, &bytes, "fetch marker")?;
    let invalid = |what: String| DataError::Invalid {
        path: source.display_path(REL),
        what,
    };
    match marker.fork {
        Some(name) => {
            let spec = crate::chain::parse_fork(&name)
                .ok_or_else(|| invalid(format!("unknown fork {name:?}")))?;
            Ok((marker.chain_id, Some(spec)))
        }
        None if marker.chain_id == 1 => Ok((1, None)),
        None => Err(invalid(format!(
            "chain {} is not mainnet and names no fork, so its fork rules are unknown; fetch it again into a new directory with `gigagas fetch --fork NAME` (a geth --dev node: --fork Osaka)",
            marker.chain_id
        ))),
    }
}

/// Whether the loader reads the file `rel` (relative, `/`-separated) of a data set in this
/// layout.
pub(crate) fn reads(rel: &str) -> bool {
    match rel {
        "bytecodes.json" | "block_hashes.json" | "fetch.json" => true,
        _ => rel
            .strip_prefix("blocks/")
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(_, file)| file == "block.json" || file == "pre_state.json"),
    }
}

/// Loads the whole data set; blocks are parsed in parallel.
pub(crate) fn load(source: &DataSource) -> Result<Dataset, DataError> {
    let numbers = source.block_numbers()?;
    let (chain_id, spec) = chain_rules(source)?;
    let block_hashes = Arc::new(load_block_hashes(source)?);
    let codes = load_bytecodes(source)?;
    let blocks = numbers
        .par_iter()
        .map(|&n| {
            load_block(source, n, &codes, &block_hashes).map(|mut b| {
                b.chain_id = chain_id;
                b.spec = spec;
                b
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    crate::integrity::check_all(&blocks, &block_hashes)?;
    Ok(Dataset {
        name: source.display_path("").display().to_string(),
        blocks,
    })
}

fn load_block_hashes(source: &DataSource) -> Result<HashMap<u64, B256>, DataError> {
    const REL: &str = "block_hashes.json";
    let Some(bytes) = source.read_optional(REL)? else {
        return Ok(HashMap::default());
    };
    let raw: HashMap<String, B256> = parse_json(source, REL, &bytes, "block hashes")?;
    raw.into_iter()
        .map(|(k, v)| {
            let invalid = |what| DataError::Invalid {
                path: source.display_path(REL),
                what,
            };
            let n = k
                .parse::<u64>()
                .map_err(|_| invalid(format!("key {k:?} is not a block number")))?;
            // A zero hash is never a block's (it would be BLOCKHASH's answer in execution).
            if v.is_zero() {
                return Err(invalid(format!(
                    "block {n}: hash {v} is all zeros, which no block has (a zeroed or missing \
                     entry); remove the entry or fetch the data set again"
                )));
            }
            Ok((n, v))
        })
        .collect()
}

/// `None` when the data set has no `bytecodes.json`.
fn load_bytecodes(source: &DataSource) -> Result<Option<HashMap<B256, Bytecode>>, DataError> {
    const REL: &str = "bytecodes.json";
    let Some(bytes) = source.read_optional(REL)? else {
        return Ok(None);
    };
    let raw: HashMap<B256, Bytes> = parse_json(source, REL, &bytes, "bytecodes")?;
    raw.into_par_iter()
        .map(|(hash, code)| {
            let actual = keccak256(&code);
            if actual != hash {
                return Err(DataError::Invalid {
                    path: source.display_path(REL),
                    what: format!("code listed under {hash} hashes to {actual}"),
                });
            }
            let bytecode = Bytecode::new_raw_checked(code).map_err(|e| DataError::Invalid {
                path: source.display_path(REL),
                what: format!("code {hash}: {e:?}"),
            })?;
            Ok((hash, bytecode))
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

fn load_block(
    source: &DataSource,
    number: u64,
    codes: &Option<HashMap<B256, Bytecode>>,
    block_hashes: &Arc<HashMap<u64, B256>>,
) -> Result<BlockInput, DataError> {
    let block_rel = format!("blocks/{number}/block.json");
    let pre_rel = format!("blocks/{number}/pre_state.json");
    let block_path = source.display_path(&block_rel);
    let mut block = parse_block_json(&block_path, number, &source.read(&block_rel)?)?;
    block.pre_state = Arc::new(load_pre_state(source, &pre_rel, codes, block_hashes)?);
    Ok(block)
}

/// Parses `bytes`, an `eth_getBlockByNumber(number, true)` answer as `blocks/<n>/block.json`
/// stores it, into a block with an empty pre-state: the header must be block `number`, every
/// transaction of a known type whose fields hash to its stated hash. (The header's own hash
/// and roots are checked by [`crate::integrity::check_block`].) `path` names it in errors.
pub fn parse_block_json(
    path: &std::path::Path,
    number: u64,
    bytes: &[u8],
) -> Result<BlockInput, DataError> {
    let block_path = path.to_owned();
    let mut value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| DataError::Json {
            path: block_path.clone(),
            what: "block".into(),
            source: e,
        })?;
    let raw_txs = match value.get_mut("transactions").map(serde_json::Value::take) {
        Some(serde_json::Value::Array(txs)) => txs,
        _ => {
            return Err(DataError::Invalid {
                path: block_path,
                what: "missing `transactions` array (full transactions expected)".into(),
            })
        }
    };
    let raw: RawBlock = serde_json::from_value(value).map_err(|e| DataError::Json {
        path: block_path.clone(),
        what: "block header".into(),
        source: e,
    })?;
    if raw.header.inner.number != number {
        return Err(DataError::Invalid {
            path: block_path,
            what: format!(
                "header number {} does not match directory {number}",
                raw.header.inner.number
            ),
        });
    }

    let transactions = raw_txs
        .into_iter()
        .enumerate()
        .map(|(index, tx)| parse_transaction(&block_path, index, tx))
        .collect::<Result<Vec<_>, _>>()?;

    Ok(BlockInput {
        hash: raw.header.hash,
        header: raw.header.inner,
        transactions,
        withdrawals: raw.withdrawals.unwrap_or_default(),
        ommers: raw.uncles,
        ommer_headers: Vec::new(),
        pre_state: Arc::default(),
        source: block_path,
        spec: None,
        access_list: None,
        complete_state: false,
        chain_id: 1,
    })
}

fn parse_transaction(
    block_path: &std::path::Path,
    index: usize,
    tx: serde_json::Value,
) -> Result<Transaction, DataError> {
    let hash_str = tx
        .get("hash")
        .and_then(|h| h.as_str())
        .unwrap_or("<no hash>")
        .to_owned();
    let tx_type = tx
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("0x0")
        .to_owned();
    let known = u64::from_str_radix(tx_type.trim_start_matches("0x"), 16)
        .map(|t| KNOWN_TX_TYPES.contains(&t))
        .unwrap_or(false);
    if !known {
        return Err(DataError::UnknownTxType {
            path: block_path.to_owned(),
            index,
            hash: hash_str,
            tx_type,
        });
    }
    let parsed: alloy_rpc_types_eth::Transaction =
        serde_json::from_value(tx).map_err(|e| DataError::Json {
            path: block_path.to_owned(),
            what: format!("transaction {index} ({hash_str})"),
            source: e,
        })?;
    let claimed_sender = parsed.inner.signer();
    let envelope = parsed.inner.into_inner();
    // The envelope's stored hash comes from the file; recompute it from the signed payload so
    // that a tampered field is caught here instead of producing a plausible wrong result.
    let computed = keccak256(envelope.encoded_2718());
    if computed != *envelope.hash() {
        return Err(DataError::Invalid {
            path: block_path.to_owned(),
            what: format!(
                "transaction {index}: stated hash {hash_str} but its fields hash to {computed}"
            ),
        });
    }
    Ok(Transaction {
        envelope,
        claimed_sender,
    })
}

fn load_pre_state(
    source: &DataSource,
    rel: &str,
    codes: &Option<HashMap<B256, Bytecode>>,
    block_hashes: &Arc<HashMap<u64, B256>>,
) -> Result<PreState, DataError> {
    let raw: HashMap<Address, RawAccount> =
        parse_json(source, rel, &source.read(rel)?, "pre-state")?;
    let accounts = raw
        .into_iter()
        .map(|(address, acc)| {
            let code_hash = acc.code_hash.unwrap_or(KECCAK_EMPTY);
            let code = if code_hash == KECCAK_EMPTY || code_hash == B256::ZERO {
                None
            } else {
                let Some(codes) = codes else {
                    return Err(DataError::Invalid {
                        path: source.display_path(rel),
                        what: format!(
                            "account {address} has code hash {code_hash} but the data set has no bytecodes.json"
                        ),
                    });
                };
                Some(
                    codes
                        .get(&code_hash)
                        .cloned()
                        .ok_or(DataError::MissingCode {
                            path: source.display_path(rel),
                            address,
                            code_hash,
                        })?,
                )
            };
            let info = match code {
                Some(code) => AccountInfo::new(acc.balance, acc.nonce, code_hash, code),
                None => AccountInfo::from_balance(acc.balance).with_nonce(acc.nonce),
            };
            Ok((
                address,
                PreAccount {
                    info,
                    storage: acc.storage,
                    fill: None,
                },
            ))
        })
        .collect::<Result<HashMap<_, _>, DataError>>()?;
    Ok(PreState::new(accounts, block_hashes.clone()))
}
