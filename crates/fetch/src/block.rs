//! One block: its JSON checked against itself, the prestate traces merged into the state
//! before the block, and the block directory written atomically.

use crate::{rpc::Client, Failure, FetchError};
use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeMap, HashSet},
    fs,
    io::Write,
    path::Path,
};

pub(crate) const GET_BLOCK: &str = "eth_getBlockByNumber";
pub(crate) const TRACE_BLOCK: &str = "debug_traceBlockByNumber";

/// What a fetched (or found complete) block contributes to the data set's shared files.
#[derive(Debug)]
pub(crate) struct BlockFacts {
    pub number: u64,
    pub hash: B256,
    pub parent_hash: B256,
    /// Code hash → code of every account with code in the pre-state.
    pub codes: Vec<(B256, Bytes)>,
}

pub(crate) fn hex(n: u64) -> String {
    format!("0x{n:x}")
}

/// A number given as a JSON number or a 0x-hex string (nodes write quantities as hex; some
/// tools as numbers). Its error says what it got; the caller names the field.
#[derive(Clone, Copy)]
struct NumOrHex(u64);

impl NumOrHex {
    fn get(self) -> u64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for NumOrHex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        num_or_hex(&value)
            .map(Self)
            .map_err(serde::de::Error::custom)
    }
}

/// At most this many characters of an unexpected JSON value are quoted.
const QUOTED: usize = 80;

/// `value` as JSON text, cut to [`QUOTED`] characters (JSON escapes control characters).
fn quote(value: &serde_json::Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
        None => text,
    }
}

/// `value` as a u64: a JSON number or a 0x-hex string of at most 64 bits; else an error
/// saying what was expected and quoting what came.
fn num_or_hex(value: &serde_json::Value) -> Result<u64, String> {
    let parsed = match value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s
            .strip_prefix("0x")
            .filter(|d| !d.is_empty())
            .and_then(|d| u64::from_str_radix(d, 16).ok()),
        _ => None,
    };
    parsed.ok_or_else(|| {
        format!(
            "expected a number or 0x-hex string of at most 64 bits, got {}",
            quote(value)
        )
    })
}

/// Field `name` of a JSON object (`None` when absent or null) as `T`, the error naming the
/// field (`path` then `name`), what it should be and what it is.
fn field<T: serde::de::DeserializeOwned>(
    object: &serde_json::Value,
    path: &str,
    name: &str,
    expected: &str,
) -> Result<Option<T>, String> {
    match object.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|_| format!("{path}{name}: expected {expected}, got {}", quote(value))),
    }
}

/// Field `name` as a number ([`num_or_hex`]), the error naming it.
fn number_field(object: &serde_json::Value, path: &str, name: &str) -> Result<Option<u64>, String> {
    object
        .get(name)
        .filter(|v| !v.is_null())
        .map(|v| num_or_hex(v).map_err(|e| format!("{path}{name}: {e}")))
        .transpose()
}

/// An `eth_getBlockByNumber` answer as a header. serde names no field of a wrong value (and
/// the header's flattened fields hide its position), so on an error each field of the answer
/// is tried alone in a valid header: the error names the first that fails (`block.gasLimit:
/// …, got "zz"`).
pub(crate) fn parse_rpc_header(text: &str) -> Result<alloy_rpc_types_eth::Header, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    serde_json::from_value(value.clone()).map_err(|e| {
        let template = serde_json::to_value(alloy_rpc_types_eth::Header::new(
            alloy_consensus::Header::default(),
        ));
        let culprit = value
            .as_object()
            .zip(template.ok())
            .and_then(|(object, template)| {
                object.iter().find_map(|(k, v)| {
                    let mut alone = template.clone();
                    alone[k.as_str()] = v.clone();
                    serde_json::from_value::<alloy_rpc_types_eth::Header>(alone)
                        .err()
                        .map(|e| format!("block.{k}: {e}; got {}", quote(v)))
                })
            });
        culprit.unwrap_or_else(|| e.to_string())
    })
}

/// What the block JSON must say about itself.
pub(crate) struct BlockSummary {
    pub hash: B256,
    pub parent_hash: B256,
    pub tx_hashes: Vec<B256>,
}

/// Checks block JSON `text` as the answer for block `number`: an object with that number,
/// a header that hashes to its stated hash, and full transaction objects — each of a known
/// type whose fields hash to its stated hash, together giving the header's transactions root
/// (and the withdrawals their root): exactly what the loader accepts, checked by its own
/// parser ([`gigagas_data::parse_block_json`], [`gigagas_data::integrity::check_block`]).
pub(crate) fn check_block_json(number: u64, text: &str) -> Result<BlockSummary, String> {
    let summary = check_block_shape(number, text)?;
    let name = std::path::PathBuf::from(format!("block {number}"));
    let block = gigagas_data::parse_block_json(&name, number, text.as_bytes())
        .map_err(|e| e.to_string())?;
    gigagas_data::integrity::check_block(&block).map_err(|e| e.to_string())?;
    let hashes: Vec<B256> = block.transactions.iter().map(|t| t.hash()).collect();
    if hashes != summary.tx_hashes {
        return Err("the transactions' stated hashes are not their computed ones".into());
    }
    Ok(summary)
}

/// The shape checks of [`check_block_json`]: number, header hash, full transactions.
fn check_block_shape(number: u64, text: &str) -> Result<BlockSummary, String> {
    let body: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a block object: {e}"))?;
    if !body.is_object() {
        return Err(format!("not a block object: {}", quote(&body)));
    }
    let stated = number_field(&body, "block.", "number")?.ok_or("the block has no `number`")?;
    if stated != number {
        return Err(format!(
            "asked for block {number}, the answer is block {stated}"
        ));
    }
    let header = parse_rpc_header(text).map_err(|e| format!("block header: {e}"))?;
    let computed = header.inner.hash_slow();
    if computed != header.hash {
        return Err(format!(
            "the header hashes to {computed}, not to its stated hash {}",
            header.hash
        ));
    }
    let txs = body
        .get("transactions")
        .and_then(|t| t.as_array())
        .ok_or("the block has no `transactions` array")?;
    let tx_hashes = txs
        .iter()
        .enumerate()
        .map(|(i, tx)| {
            if !tx.is_object() {
                return Err(format!(
                    "transaction {i} is not an object (full transactions were asked for)"
                ));
            }
            field::<B256>(
                tx,
                &format!("block.transactions[{i}]."),
                "hash",
                "a 32-byte 0x-hex hash",
            )?
            .ok_or_else(|| format!("block.transactions[{i}] has no `hash`"))
        })
        .collect::<Result<_, _>>()?;
    Ok(BlockSummary {
        hash: header.hash,
        parent_hash: header.inner.parent_hash,
        tx_hashes,
    })
}

/// One account as `pre_state.json` stores it (the format `gigagas_data` loads).
#[derive(Serialize, Deserialize)]
struct StoredAccount {
    balance: U256,
    nonce: NumOrHexOut,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code_hash: Option<B256>,
    #[serde(default)]
    storage: BTreeMap<U256, U256>,
}

/// A nonce written as a number, read as a number or 0x-hex.
#[derive(Deserialize)]
#[serde(from = "NumOrHex")]
struct NumOrHexOut(u64);

impl From<NumOrHex> for NumOrHexOut {
    fn from(n: NumOrHex) -> Self {
        Self(n.get())
    }
}

impl Serialize for NumOrHexOut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

/// One account in a `prestateTracer` result (geth's names), each field checked by
/// [`traced_account`] so that an error names it.
struct TracedAccount {
    balance: Option<U256>,
    nonce: Option<u64>,
    code: Option<Bytes>,
    code_hash: Option<B256>,
    storage: Option<BTreeMap<U256, U256>>,
}

/// The account `value` of trace `path` (`trace 3: account 0x…: `), its fields named in errors.
fn traced_account(value: &serde_json::Value, path: &str) -> Result<TracedAccount, String> {
    if !value.is_object() {
        return Err(format!("{path}expected an object, got {}", quote(value)));
    }
    Ok(TracedAccount {
        balance: field(
            value,
            path,
            "balance",
            "a 0x-hex quantity of at most 256 bits",
        )?,
        nonce: number_field(value, path, "nonce")?,
        code: field(value, path, "code", "0x-hex bytes")?,
        code_hash: field(value, path, "codeHash", "a 32-byte 0x-hex hash")?,
        storage: field(
            value,
            path,
            "storage",
            "an object of 0x-hex slots to 0x-hex values of at most 256 bits",
        )?,
    })
}

/// One transaction's entry of a `debug_traceBlockByNumber` answer.
struct TraceEntry {
    tx_hash: Option<B256>,
    result: Option<serde_json::Map<String, serde_json::Value>>,
    error: Option<String>,
}

/// Entry `i` of the trace list, its fields named in errors.
fn trace_entry(value: &serde_json::Value, i: usize) -> Result<TraceEntry, String> {
    let path = format!("trace {i}: ");
    if !value.is_object() {
        return Err(format!("{path}expected an object, got {}", quote(value)));
    }
    Ok(TraceEntry {
        tx_hash: field(value, &path, "txHash", "a 32-byte 0x-hex hash")?,
        result: field(value, &path, "result", "an object of accounts")?,
        error: field(value, &path, "error", "a string")?,
    })
}

/// Merges the per-transaction `prestateTracer` results of a block into the state before the
/// block: for each account and each slot the value from the first transaction that touched
/// it. Returns the `pre_state.json` text and the codes.
pub(crate) fn merge_prestate(
    text: &str,
    tx_hashes: &[B256],
) -> Result<(String, Vec<(B256, Bytes)>), String> {
    let entries: Vec<serde_json::Value> = serde_json::from_str(text)
        .map_err(|e| format!("not a list of per-transaction traces: {e}"))?;
    if entries.len() != tx_hashes.len() {
        return Err(format!(
            "{} traces for a block of {} transactions",
            entries.len(),
            tx_hashes.len()
        ));
    }
    let mut state: BTreeMap<Address, StoredAccount> = BTreeMap::new();
    let mut codes: BTreeMap<B256, Bytes> = BTreeMap::new();
    for (i, (entry, &hash)) in entries.iter().zip(tx_hashes).enumerate() {
        let entry = trace_entry(entry, i)?;
        if let Some(err) = entry.error {
            return Err(format!(
                "transaction {i} ({hash}): the tracer failed: {err}"
            ));
        }
        if let Some(got) = entry.tx_hash {
            if got != hash {
                return Err(format!(
                    "trace {i} is for transaction {got}, the block's transaction {i} is {hash}"
                ));
            }
        }
        let accounts = entry
            .result
            .ok_or_else(|| format!("trace {i} ({hash}) has no `result`"))?;
        for (key, value) in &accounts {
            let address: Address = key.parse().map_err(|_| {
                format!("trace {i}: result: expected 20-byte 0x-hex addresses as keys, got {key:?}")
            })?;
            let acc = traced_account(value, &format!("trace {i}: account {address}: "))?;
            let code_hash = match &acc.code {
                Some(code) if !code.is_empty() => {
                    let computed = keccak256(code);
                    if let Some(stated) = acc.code_hash {
                        if stated != computed {
                            return Err(format!(
                                "trace {i}: account {address} states code hash {stated} but its code hashes to {computed}"
                            ));
                        }
                    }
                    codes.entry(computed).or_insert_with(|| code.clone());
                    Some(computed)
                }
                _ => None,
            };
            let storage = acc.storage.unwrap_or_default();
            match state.get_mut(&address) {
                Some(known) => {
                    // Seen in an earlier transaction: only slots it did not touch are new.
                    for (slot, value) in storage {
                        known.storage.entry(slot).or_insert(value);
                    }
                }
                None => {
                    let balance = acc
                        .balance
                        .ok_or_else(|| format!("trace {i}: account {address} has no `balance`"))?;
                    state.insert(
                        address,
                        StoredAccount {
                            balance,
                            nonce: NumOrHexOut(acc.nonce.unwrap_or(0)),
                            code_hash,
                            storage,
                        },
                    );
                }
            }
        }
    }
    let text = serde_json::to_string(&state)
        .map_err(|e| format!("the merged pre-state does not serialise: {e}"))?;
    Ok((text, codes.into_iter().collect()))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError + '_ {
    move |source| FetchError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Whether `blocks/<number>` is complete: both files exist and parse, the block JSON is
/// block `number` and hashes to its stated hash, and every code its pre-state names is in
/// `codes`. `None` when it is not (it is then fetched again).
pub(crate) fn complete(blocks: &Path, number: u64, codes: &HashSet<B256>) -> Option<BlockFacts> {
    let dir = blocks.join(number.to_string());
    let text = gigagas_data::read_bounded(&dir.join("block.json")).ok()?;
    let text = String::from_utf8(text).ok()?;
    // Re-verified in full (every transaction's hash, the roots), as when it was fetched.
    let summary = check_block_json(number, &text).ok()?;
    let pre = gigagas_data::read_bounded(&dir.join("pre_state.json")).ok()?;
    let pre: BTreeMap<Address, StoredAccount> = serde_json::from_slice(&pre).ok()?;
    let empty = keccak256([]);
    let all_codes = pre
        .values()
        .filter_map(|a| a.code_hash)
        .filter(|h| *h != empty && *h != B256::ZERO)
        .all(|h| codes.contains(&h));
    all_codes.then_some(BlockFacts {
        number,
        hash: summary.hash,
        parent_hash: summary.parent_hash,
        codes: Vec::new(),
    })
}

/// Fetches block `number` and its pre-state and writes `blocks/<number>/` atomically.
pub(crate) fn fetch_block(
    client: &Client,
    blocks: &Path,
    number: u64,
) -> Result<BlockFacts, FetchError> {
    let nonsense = |method: &str, what: String| FetchError::Rpc {
        block: Some(number),
        method: method.to_owned(),
        host: client.host.clone(),
        what: Failure::Nonsense(what),
    };
    let block = client.call(
        GET_BLOCK,
        serde_json::json!([hex(number), true]),
        Some(number),
    )?;
    if block.get() == "null" {
        return Err(FetchError::Rpc {
            block: Some(number),
            method: GET_BLOCK.into(),
            host: client.host.clone(),
            what: Failure::NoSuchBlock,
        });
    }
    let summary = check_block_json(number, block.get()).map_err(|w| nonsense(GET_BLOCK, w))?;
    let trace = client.call(
        TRACE_BLOCK,
        serde_json::json!([hex(number), {"tracer": "prestateTracer"}]),
        Some(number),
    )?;
    let (pre_state, codes) =
        merge_prestate(trace.get(), &summary.tx_hashes).map_err(|w| nonsense(TRACE_BLOCK, w))?;
    write_block_dir(blocks, number, block.get().as_bytes(), pre_state.as_bytes())?;
    Ok(BlockFacts {
        number,
        hash: summary.hash,
        parent_hash: summary.parent_hash,
        codes,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), FetchError> {
    let mut file = fs::File::create(path).map_err(io(path))?;
    file.write_all(bytes).map_err(io(path))?;
    file.sync_all().map_err(io(path))
}

/// Writes both files into a fresh hidden directory beside the target (ignored by the loader:
/// its name starts with a dot) and renames it into place; an incomplete old directory is
/// moved aside first and removed.
fn write_block_dir(
    blocks: &Path,
    number: u64,
    block: &[u8],
    pre_state: &[u8],
) -> Result<(), FetchError> {
    // Removed by a signal that ends the process (once renamed into place, its path is gone).
    let (fresh, _partial) = gigagas_guard::interrupt::temp_dir_in(
        tempfile::Builder::new()
            .prefix(&format!(".{number}."))
            .suffix(".partial"),
        blocks,
    )
    .map_err(io(blocks))?;
    write_file(&fresh.path().join("block.json"), block)?;
    write_file(&fresh.path().join("pre_state.json"), pre_state)?;
    let dest = blocks.join(number.to_string());
    // Renaming a directory onto the empty placeholder replaces it; `aside` then removes the
    // old content when dropped. A plain file is removed.
    let aside = if fs::symlink_metadata(&dest).is_ok() {
        let made = gigagas_guard::interrupt::temp_dir_in(
            tempfile::Builder::new()
                .prefix(&format!(".{number}."))
                .suffix(".old"),
            blocks,
        )
        .map_err(io(blocks))?;
        Some(made)
    } else {
        None
    };
    // One commit point: never at the same time as a signal's cleanup.
    gigagas_guard::interrupt::commit(|| {
        if let Some((aside, _)) = &aside {
            if fs::metadata(&dest).map(|m| m.is_dir()).unwrap_or(false) {
                fs::rename(&dest, aside.path())?;
            } else {
                fs::remove_file(&dest)?;
            }
        }
        fs::rename(fresh.path(), &dest)
    })
    .map_err(io(&dest))?;
    let _ = fresh.keep();
    Ok(())
}

/// A block's hash and its parent's.
struct Head {
    hash: B256,
    parent_hash: B256,
}

/// The hash and parent hash of block `number` from `eth_getBlockByNumber(number, false)`.
pub(crate) fn fetch_hash(client: &Client, number: u64) -> Result<(B256, B256), FetchError> {
    let fail = |what| FetchError::Rpc {
        block: Some(number),
        method: GET_BLOCK.into(),
        host: client.host.clone(),
        what,
    };
    let raw = client.call(
        GET_BLOCK,
        serde_json::json!([hex(number), false]),
        Some(number),
    )?;
    if raw.get() == "null" {
        return Err(fail(Failure::NoSuchBlock));
    }
    let nonsense = |what: String| fail(Failure::Nonsense(what));
    let head: serde_json::Value =
        serde_json::from_str(raw.get()).map_err(|e| nonsense(format!("block header: {e}")))?;
    if !head.is_object() {
        return Err(nonsense(format!("not a block object: {}", quote(&head))));
    }
    let stated = number_field(&head, "block.", "number")
        .and_then(|n| n.ok_or_else(|| "the block has no `number`".to_owned()))
        .map_err(nonsense)?;
    if stated != number {
        return Err(nonsense(format!(
            "asked for block {number}, the answer is block {stated}"
        )));
    }
    let hash = |name: &str| {
        field::<B256>(&head, "block.", name, "a 32-byte 0x-hex hash")
            .and_then(|h| h.ok_or_else(|| format!("the block has no `{name}`")))
            .map_err(nonsense)
    };
    let head = Head {
        hash: hash("hash")?,
        parent_hash: hash("parentHash")?,
    };
    Ok((head.hash, head.parent_hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A malformed node answer names the field, what it should be and what it is (the
    /// untagged-enum message named none): block number, transaction hash, every traced
    /// account field, trace keys, and a header field through the serde error's position.
    #[test]
    fn malformed_answers_name_the_field() {
        let block = |number: serde_json::Value| {
            serde_json::json!({"number": number, "transactions": []}).to_string()
        };
        for (number, quoted) in [
            (serde_json::json!("zz"), "\"zz\""),
            (serde_json::json!("0x"), "\"0x\""),
            (
                serde_json::json!(format!("0x{}", "f".repeat(100))),
                "\"0xfff",
            ),
            (serde_json::json!(-1), "-1"),
            (serde_json::json!({"a": 1}), "{\"a\":1}"),
        ] {
            let err = check_block_shape(1, &block(number)).err().unwrap();
            assert!(
                err.starts_with(
                    "block.number: expected a number or 0x-hex string of at most 64 bits, got "
                ),
                "{err}"
            );
            assert!(err.contains(quoted), "{err}");
            assert!(!err.contains("untagged"), "{err}");
        }
        // A 100-digit value is quoted cut, with its length.
        let err = check_block_shape(
            1,
            &block(serde_json::json!(format!("0x{}", "f".repeat(100)))),
        )
        .err()
        .unwrap();
        assert!(err.contains("(104 characters)"), "{err}");
        assert!(check_block_shape(1, &block(serde_json::json!(2)))
            .err()
            .unwrap()
            .contains("asked for block 1, the answer is block 2"));

        let a = "0x00000000000000000000000000000000000000aa";
        let h1 = B256::repeat_byte(1);
        let traced = |account: serde_json::Value| {
            serde_json::json!([{"txHash": h1, "result": {a: account}}]).to_string()
        };
        for (account, want) in [
            (
                serde_json::json!({"balance": "0x1", "nonce": "seven"}),
                "trace 0: account 0x00000000000000000000000000000000000000AA: nonce: expected a number or 0x-hex string of at most 64 bits, got \"seven\"",
            ),
            (
                serde_json::json!({"balance": "0xzz"}),
                "trace 0: account 0x00000000000000000000000000000000000000AA: balance: expected a 0x-hex quantity of at most 256 bits, got \"0xzz\"",
            ),
            (
                serde_json::json!({"balance": "0x1", "code": 5}),
                "account 0x00000000000000000000000000000000000000AA: code: expected 0x-hex bytes, got 5",
            ),
            (
                serde_json::json!({"balance": "0x1", "storage": {"0x1": "x"}}),
                "storage: expected an object of 0x-hex slots",
            ),
            (serde_json::json!("0x1"), "account 0x00000000000000000000000000000000000000AA: expected an object, got \"0x1\""),
        ] {
            let err = merge_prestate(&traced(account), &[h1]).err().unwrap();
            assert!(err.contains(want), "{err}\n  wanted: {want}");
        }
        let bad_key = serde_json::json!([{"result": {"0x12": {"balance": "0x1"}}}]).to_string();
        let err = merge_prestate(&bad_key, &[h1]).err().unwrap();
        assert!(
            err.contains(
                "trace 0: result: expected 20-byte 0x-hex addresses as keys, got \"0x12\""
            ),
            "{err}"
        );
        let bad_hash = serde_json::json!([{"txHash": 7, "result": {}}]).to_string();
        let err = merge_prestate(&bad_hash, &[h1]).err().unwrap();
        assert!(
            err.contains("trace 0: txHash: expected a 32-byte 0x-hex hash, got 7"),
            "{err}"
        );

        // A wrong header value: each field is tried alone, the wrong one is named.
        let mut header = serde_json::to_value(alloy_rpc_types_eth::Header::new(
            alloy_consensus::Header::default(),
        ))
        .unwrap();
        assert!(parse_rpc_header(&header.to_string()).is_ok());
        header["gasLimit"] = serde_json::json!("zz");
        let message = parse_rpc_header(&header.to_string()).unwrap_err();
        assert!(message.starts_with("block.gasLimit: "), "{message}");
        assert!(message.ends_with("; got \"zz\""), "{message}");
        let err = check_block_shape(0, &header.to_string()).err().unwrap();
        assert!(err.starts_with("block header: block.gasLimit: "), "{err}");
    }

    #[test]
    fn merge_takes_each_account_and_slot_from_its_first_transaction() {
        let a = "0x00000000000000000000000000000000000000aa";
        let b = "0x00000000000000000000000000000000000000bb";
        let (h1, h2) = (B256::repeat_byte(1), B256::repeat_byte(2));
        let trace = serde_json::json!([
            {"txHash": h1, "result": {a: {"balance": "0x10", "nonce": 3, "storage": {"0x01": "0x05"}}}},
            {"txHash": h2, "result": {
                a: {"balance": "0x20", "nonce": 4, "storage": {"0x01": "0x06", "0x02": "0x07"}},
                b: {"balance": "0x1", "nonce": "0x2", "code": "0x6000", "codeHash": keccak256([0x60, 0x00])}
            }},
        ]);
        let (text, codes) = merge_prestate(&trace.to_string(), &[h1, h2]).unwrap();
        let state: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(state[a]["balance"], "0x10");
        assert_eq!(state[a]["nonce"], 3);
        // Slot 1 from the first transaction, slot 2 first touched by the second.
        assert_eq!(state[a]["storage"]["0x1"], "0x5");
        assert_eq!(state[a]["storage"]["0x2"], "0x7");
        assert!(state[a].get("code_hash").is_none());
        assert_eq!(state[b]["nonce"], 2);
        let hash = keccak256([0x60, 0x00]);
        assert_eq!(state[b]["code_hash"], serde_json::json!(hash));
        assert_eq!(codes, vec![(hash, Bytes::from_static(&[0x60, 0x00]))]);

        // A lying code hash, a wrong transaction hash and a missing balance are refused.
        let lie = serde_json::json!([{"result": {b: {"balance": "0x1", "code": "0x6000", "codeHash": h1}}}]);
        assert!(merge_prestate(&lie.to_string(), &[h1])
            .unwrap_err()
            .contains("code hash"));
        let wrong = serde_json::json!([{"txHash": h2, "result": {}}]);
        assert!(merge_prestate(&wrong.to_string(), &[h1])
            .unwrap_err()
            .contains("is for transaction"));
        let no_balance = serde_json::json!([{"result": {a: {"nonce": 1}}}]);
        assert!(merge_prestate(&no_balance.to_string(), &[h1])
            .unwrap_err()
            .contains("balance"));
        let failed = serde_json::json!([{"error": "execution timeout"}]);
        assert!(merge_prestate(&failed.to_string(), &[h1])
            .unwrap_err()
            .contains("execution timeout"));
    }
}
