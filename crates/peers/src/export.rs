//! A generated chain written for other engines.
//!
//! - [`Format::BlockTest`]: `blocktest.json`, one ethereum/tests `BlockchainTests` test
//!   (`genesisBlockHeader`, `genesisRLP`, `pre`, `blocks[]` with `blockHeader`, `rlp`,
//!   `transactions` (with `sender`, which `revme` needs) and `withdrawals`, the full
//!   `postState`, `lastblockhash`, `network`, `sealEngine: NoProof`).
//! - [`Format::Rlp`]: `chain.rlp` (the blocks' RLP concatenated, what `geth import` reads) and
//!   `genesis.json` (a geth genesis with every fork up to the chain's active at block 0).
//!
//! Chains of Cancun, Prague, Osaka and Amsterdam (`gigagas gen`'s default) are exported. The
//! first three both go-ethereum 1.17.10 and revm 43 implement alike. On Amsterdam they differ
//! (geth runs the EIP-8282 system contracts after the transactions and revm 43 does not), so
//! an Amsterdam export is for revm-based engines (`revme`, `gigagas conformance`), and
//! [`ChainExport::geth_disagrees`] says why geth cannot reach its state root.

use alloy_consensus::{
    transaction::SignerRecoverable, Block, BlockBody, Header, Transaction as _, TxEnvelope,
    Typed2718,
};
use alloy_eips::eip4895::Withdrawals;
use alloy_primitives::{keccak256, map::HashMap, Address, Bytes, B256, U256};
use alloy_rlp::Encodable;
use gigagas_data::{
    chain::{self, AllocAccount, ChainMeta},
    DataError, DataSource, PreAccount, PreState,
};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Map, Value};
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

/// File name of the blockchain test in an export directory.
pub const BLOCKTEST_FILE: &str = "blocktest.json";
/// File name of the concatenated block RLP in an export directory.
pub const RLP_FILE: &str = "chain.rlp";
/// File name of the geth genesis in an export directory.
pub const GENESIS_FILE: &str = "genesis.json";

/// The mainnet deposit contract (EIP-6110 logs are read from it; generated chains have none).
const DEPOSIT_CONTRACT: &str = "0x00000000219ab540356cbb839cbe05303d7705fa";

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// `blocktest.json`: an ethereum/tests blockchain test.
    BlockTest,
    /// `chain.rlp` + `genesis.json`: for `geth init` and `geth import`.
    Rlp,
}

impl Format {
    /// Parses `blocktest` or `rlp`.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "blocktest" | "blockchaintest" => Some(Self::BlockTest),
            "rlp" => Some(Self::Rlp),
            _ => None,
        }
    }

    /// The files this format writes.
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Self::BlockTest => &[BLOCKTEST_FILE],
            Self::Rlp => &[RLP_FILE, GENESIS_FILE],
        }
    }
}

/// Why a chain cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The chain could not be loaded.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The data set is not a generated chain (no complete genesis state).
    #[error("{0}: not a generated chain (no chain.json, gigagas.chain/1): an export needs the complete genesis state; make one with `gigagas gen WORKLOAD --fork Prague --out DIR`, or fetch a node's chain from block 1 with its genesis file: `gigagas fetch --from 1 --genesis GENESIS.json ...`")]
    NotAChain(PathBuf),
    /// The chain's fork cannot be expressed for the peers.
    #[error("{path}: fork {fork}: {why}")]
    Fork {
        /// The chain.
        path: PathBuf,
        /// Its fork as `chain.json` names it.
        fork: String,
        /// Why not.
        why: String,
    },
    /// The chain does not re-encode to what it claims.
    #[error("{path}: {what}")]
    Inconsistent {
        /// The chain.
        path: PathBuf,
        /// What differs.
        what: String,
    },
    /// Writing a file failed.
    #[error("{path}: cannot write: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

/// One block as exported.
#[derive(Debug, Clone)]
pub struct ExportBlock {
    /// The block (header, transactions, empty ommers, withdrawals).
    pub block: Block<TxEnvelope>,
    /// Its hash.
    pub hash: B256,
    /// Sender of each transaction (recovered from the signature when exported).
    pub senders: Vec<Address>,
}

/// A generated chain ready to be written for other engines.
#[derive(Debug, Clone)]
pub struct ChainExport {
    /// Where it was read from.
    pub source: PathBuf,
    /// Test name inside `blocktest.json`.
    pub name: String,
    /// The fork, as revm names it.
    pub spec: SpecId,
    /// The network name both geth and revm's test runners accept (`Prague`, ...).
    pub network: &'static str,
    /// `chain.json`.
    pub meta: ChainMeta,
    /// The genesis header (rebuilt from `chain.json`, hashes to `meta.genesis_hash`).
    pub genesis: Header,
    /// The blocks.
    pub blocks: Vec<ExportBlock>,
    /// The state after the last block (genesis with every block's BAL applied).
    pub post: BTreeMap<Address, AllocAccount>,
}

impl ChainExport {
    /// Why geth 1.17.10 cannot run this chain to its state root, if it cannot (an Amsterdam
    /// chain; see [`geth_disagrees`]).
    pub fn geth_disagrees(&self) -> Option<&'static str> {
        geth_disagrees(self.spec)
    }

    /// Whether the chain can be written as a blockchain test: geth's `evm blocktest` and
    /// `revme blockchaintest` run every test with chain id 1 (the network name fixes the
    /// chain config), so transactions signed for another chain id fail their checks there.
    pub fn check_blocktest(&self) -> Result<(), ExportError> {
        if self.meta.chain_id == 1 {
            return Ok(());
        }
        Err(ExportError::Fork {
            path: self.source.clone(),
            fork: self.meta.fork.clone(),
            why: format!(
                "chain id {}: a blockchain test (blocktest.json) runs with chain id 1 in geth's \
                 evm blocktest and in revme, so this chain's transactions would be refused \
                 there; only --format rlp (geth import) can take it. For a geth --dev node, \
                 start it with GETH_DEV_CHAIN_ID=1 scripts/geth-dev.sh ...",
                self.meta.chain_id
            ),
        })
    }

    /// Gas used by all blocks (header values).
    pub fn gas_used(&self) -> u64 {
        self.blocks.iter().map(|b| b.block.header.gas_used).sum()
    }

    /// Transactions in all blocks.
    pub fn txs(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| b.block.body.transactions.len())
            .sum()
    }

    /// Hash of the head block (the genesis for an empty chain).
    pub fn head_hash(&self) -> B256 {
        self.blocks
            .last()
            .map_or(self.meta.genesis_hash, |b| b.hash)
    }

    /// State root of the head block.
    pub fn head_state_root(&self) -> B256 {
        self.blocks
            .last()
            .map_or(self.genesis.state_root, |b| b.block.header.state_root)
    }

    /// The concatenated RLP of every block (what `geth import` reads).
    pub fn rlp(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for b in &self.blocks {
            b.block.encode(&mut out);
        }
        out
    }

    /// The genesis block's RLP.
    pub fn genesis_rlp(&self) -> Vec<u8> {
        let mut out = Vec::new();
        Block::<TxEnvelope> {
            header: self.genesis.clone(),
            body: BlockBody {
                transactions: Vec::new(),
                ommers: Vec::new(),
                withdrawals: Some(Withdrawals::default()),
            },
        }
        .encode(&mut out);
        out
    }

    /// The ethereum/tests blockchain test (a file holding one test named [`Self::name`]).
    pub fn blocktest_json(&self) -> Value {
        let blocks: Vec<Value> = self
            .blocks
            .iter()
            .map(|b| {
                let mut rlp = Vec::new();
                b.block.encode(&mut rlp);
                let txs: Vec<Value> = b
                    .block
                    .body
                    .transactions
                    .iter()
                    .zip(&b.senders)
                    .map(|(tx, sender)| tx_json(tx, *sender))
                    .collect();
                json!({
                    "blockHeader": header_json(&b.block.header, b.hash),
                    "rlp": Bytes::from(rlp),
                    "transactions": txs,
                    "uncleHeaders": [],
                    "withdrawals": [],
                    "blocknumber": b.block.header.number.to_string(),
                })
            })
            .collect();
        let test = json!({
            "_info": {
                "comment": match &self.meta.fetched_from {
                    Some(host) => format!(
                        "chain {} fetched from the node at {host} with its genesis (gigagas fetch --genesis), {} blocks, exported by gigagas export",
                        self.meta.chain_id, self.blocks.len()
                    ),
                    None => format!(
                        "gigagas generated chain: workload {}, seed {}, {} blocks, exported by gigagas export",
                        self.meta.workload, self.meta.seed, self.blocks.len()
                    ),
                },
                "generated-by": format!("gigagas {}", env!("CARGO_PKG_VERSION")),
            },
            "network": self.network,
            "sealEngine": "NoProof",
            "genesisBlockHeader": header_json(&self.genesis, self.meta.genesis_hash),
            "genesisRLP": Bytes::from(self.genesis_rlp()),
            "pre": alloc_json(&self.meta.alloc),
            "blocks": blocks,
            "postState": alloc_json(&self.post),
            "lastblockhash": self.head_hash(),
        });
        let mut file = Map::new();
        file.insert(self.name.clone(), test);
        Value::Object(file)
    }

    /// A geth `genesis.json` for this chain (every fork up to the chain's at block 0).
    pub fn geth_genesis_json(&self) -> Value {
        let mut config = json!({
            "chainId": self.meta.chain_id,
            "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0, "eip158Block": 0,
            "byzantiumBlock": 0, "constantinopleBlock": 0, "petersburgBlock": 0,
            "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 0, "mergeNetsplitBlock": 0,
            "shanghaiTime": 0, "cancunTime": 0,
            "terminalTotalDifficulty": 0,
            "depositContractAddress": DEPOSIT_CONTRACT,
        });
        let mut blobs = json!({
            "cancun": {"target": 3, "max": 6, "baseFeeUpdateFraction": 3338477},
        });
        if self.spec.is_enabled_in(SpecId::PRAGUE) {
            config["pragueTime"] = json!(0);
            blobs["prague"] = json!({"target": 6, "max": 9, "baseFeeUpdateFraction": 5007716});
        }
        if self.spec.is_enabled_in(SpecId::OSAKA) {
            config["osakaTime"] = json!(0);
            blobs["osaka"] = json!({"target": 6, "max": 9, "baseFeeUpdateFraction": 5007716});
        }
        if self.spec.is_enabled_in(SpecId::AMSTERDAM) {
            config["amsterdamTime"] = json!(0);
            blobs["amsterdam"] = json!({"target": 6, "max": 9, "baseFeeUpdateFraction": 5007716});
        }
        config["blobSchedule"] = blobs;
        let g = &self.genesis;
        json!({
            "config": config,
            "nonce": format!("{:#x}", u64::from_be_bytes(g.nonce.0)),
            "timestamp": hex_u64(g.timestamp),
            "extraData": g.extra_data,
            "gasLimit": hex_u64(g.gas_limit),
            "difficulty": hex_u256(g.difficulty),
            "mixHash": g.mix_hash,
            "coinbase": g.beneficiary,
            "number": "0x0",
            "gasUsed": "0x0",
            "parentHash": g.parent_hash,
            "baseFeePerGas": g.base_fee_per_gas.map(hex_u64),
            "excessBlobGas": g.excess_blob_gas.map(hex_u64),
            "blobGasUsed": g.blob_gas_used.map(hex_u64),
            "alloc": alloc_json(&self.meta.alloc),
        })
    }

    /// Writes the files of `formats` into `dir` (which must exist), each through a temporary
    /// file in `dir` renamed into place; returns the paths written.
    pub fn write(&self, dir: &Path, formats: &[Format]) -> Result<Vec<PathBuf>, ExportError> {
        if formats.contains(&Format::BlockTest) {
            self.check_blocktest()?;
        }
        let mut written = Vec::new();
        for format in formats {
            let files: Vec<(&str, Vec<u8>)> = match format {
                Format::BlockTest => vec![(
                    BLOCKTEST_FILE,
                    serde_json::to_vec_pretty(&self.blocktest_json()).map_err(|e| {
                        ExportError::Io {
                            path: dir.join(BLOCKTEST_FILE),
                            source: e.into(),
                        }
                    })?,
                )],
                Format::Rlp => vec![
                    (RLP_FILE, self.rlp()),
                    (
                        GENESIS_FILE,
                        serde_json::to_vec_pretty(&self.geth_genesis_json()).map_err(|e| {
                            ExportError::Io {
                                path: dir.join(GENESIS_FILE),
                                source: e.into(),
                            }
                        })?,
                    ),
                ],
            };
            for (name, bytes) in files {
                let path = dir.join(name);
                write_atomic(&path, &bytes).map_err(|source| ExportError::Io {
                    path: path.clone(),
                    source,
                })?;
                written.push(path);
            }
        }
        Ok(written)
    }
}

/// Writes `bytes` to a temporary file beside `path` and renames it onto `path`; the temporary
/// file is removed when either step fails.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The network name geth 1.17.10 (`tests/init.go` `Forks`) and revm 43's test runner
/// (`ForkSpec`) both accept for a fork, or why there is none.
pub fn network_name(spec: SpecId) -> Result<&'static str, String> {
    match spec {
        SpecId::CANCUN => Ok("Cancun"),
        SpecId::PRAGUE => Ok("Prague"),
        SpecId::OSAKA => Ok("Osaka"),
        SpecId::AMSTERDAM => Ok("Amsterdam"),
        other => Err(format!(
            "{other:?} cannot be exported for the peers (generated chains are Cancun or later; \
             generate the chain with `gigagas gen ... --fork Osaka` (or Prague, Amsterdam))"
        )),
    }
}

/// Why go-ethereum 1.17.10 cannot reach the state root of a chain of fork `spec`, if it
/// cannot; the message names the flag that makes a chain geth agrees with.
pub fn geth_disagrees(spec: SpecId) -> Option<&'static str> {
    (spec == SpecId::AMSTERDAM).then_some(
        "geth 1.17.10's Amsterdam runs the EIP-8282 builder deposit/exit system contracts \
         after the transactions and revm 43 does not, so geth cannot reach this chain's state \
         root; to time geth, generate the chain with `gigagas gen ... --fork Osaka` (or Prague)",
    )
}

/// Loads the generated chain at `path` (directory or `.tar.zst`) and prepares its export:
/// checks the fork, rebuilds the genesis header (it must hash to `chain.json`'s
/// `genesis_hash`), recovers every sender, re-encodes every block (each must hash to its
/// stored hash) and derives the head state (its root must be the last header's).
pub fn export_chain(path: &Path) -> Result<ChainExport, ExportError> {
    let source = DataSource::open(path)?;
    let Some(meta_bytes) = source.read_optional(chain::CHAIN_META)? else {
        return Err(ExportError::NotAChain(path.to_owned()));
    };
    let meta: ChainMeta = serde_json::from_slice(&meta_bytes).map_err(|e| DataError::Json {
        path: source.display_path(chain::CHAIN_META),
        what: "chain metadata".into(),
        source: e,
    })?;
    let fork_err = |why: String| ExportError::Fork {
        path: path.to_owned(),
        fork: meta.fork.clone(),
        why,
    };
    let spec = chain::parse_fork(&meta.fork).ok_or_else(|| fork_err("unknown fork".into()))?;
    let network = network_name(spec).map_err(fork_err)?;
    let dataset = gigagas_data::load(&source)?;
    let inconsistent = |what: String| ExportError::Inconsistent {
        path: path.to_owned(),
        what,
    };

    // Other clients take the genesis slot by slot: expand any `storage_fill`.
    let mut meta = meta;
    if !meta.storage_fill.is_empty() {
        meta.alloc = meta.full_alloc().map_err(&inconsistent)?;
        meta.storage_fill.clear();
    }
    let mut state: HashMap<Address, PreAccount> = chain::genesis_accounts(&meta.alloc);
    let genesis_root = gigagas_state::state_root(&PreState::new(state.clone(), Arc::default()));
    // A fetched chain (`gigagas fetch --genesis`) stores the node's genesis header; a
    // generated one's is rebuilt from chain.json.
    let stored = meta.stored_genesis_header().map_err(&inconsistent)?;
    if let Some(g) = &stored {
        if g.state_root != genesis_root {
            return Err(inconsistent(format!(
                "the genesis allocation of chain.json has state root {genesis_root}, its \
                 genesis_header says {}",
                g.state_root
            )));
        }
    }
    let genesis = stored.clone().unwrap_or_else(|| {
        gigagas_gen::builder::genesis_header(spec, meta.block_gas, meta.seed, genesis_root)
    });
    if stored.is_none() && genesis.hash_slow() != meta.genesis_hash {
        return Err(inconsistent(format!(
            "the genesis header rebuilt from chain.json hashes to {}, chain.json says {}: the \
             chain was generated by an older gigagas whose genesis other clients cannot \
             express (non-zero parentBeaconBlockRoot); generate it again",
            genesis.hash_slow(),
            meta.genesis_hash
        )));
    }
    let mut blocks = Vec::with_capacity(dataset.blocks.len());
    for input in dataset.blocks {
        let number = input.header.number;
        let mut senders = Vec::with_capacity(input.transactions.len());
        for (i, tx) in input.transactions.iter().enumerate() {
            let sender = tx.envelope.recover_signer().map_err(|e| {
                inconsistent(format!("block {number} tx {i}: sender recovery: {e}"))
            })?;
            if sender != tx.claimed_sender {
                return Err(inconsistent(format!(
                    "block {number} tx {i}: signature recovers {sender}, the chain says {}",
                    tx.claimed_sender
                )));
            }
            senders.push(sender);
        }
        let Some(bal) = &input.access_list else {
            return Err(inconsistent(format!("block {number}: no access list")));
        };
        chain::apply_bal(&mut state, bal);
        let block = Block {
            header: input.header,
            body: BlockBody {
                transactions: input.transactions.into_iter().map(|t| t.envelope).collect(),
                ommers: Vec::new(),
                withdrawals: Some(Withdrawals::new(input.withdrawals)),
            },
        };
        let mut rlp = Vec::new();
        block.encode(&mut rlp);
        let decoded_hash = block.header.hash_slow();
        if decoded_hash != input.hash || keccak256(alloy_rlp::encode(&block.header)) != input.hash {
            return Err(inconsistent(format!(
                "block {number}: re-encoded header hashes to {decoded_hash}, expected {}",
                input.hash
            )));
        }
        blocks.push(ExportBlock {
            block,
            hash: input.hash,
            senders,
        });
    }
    let head_root = gigagas_state::state_root(&PreState::new(state.clone(), Arc::default()));
    let expected = blocks
        .last()
        .map_or(genesis_root, |b| b.block.header.state_root);
    if head_root != expected {
        return Err(inconsistent(format!(
            "state derived from the genesis and every BAL has root {head_root}, the head header says {expected}"
        )));
    }
    let name = match &meta.fetched_from {
        Some(_) => format!(
            "gigagas/fetched/{}/chain{}/{}-blocks",
            network,
            meta.chain_id,
            blocks.len()
        ),
        None => format!(
            "gigagas/{}/{}/seed{}/{}-blocks",
            meta.workload,
            network,
            meta.seed,
            blocks.len()
        ),
    };
    Ok(ChainExport {
        source: path.to_owned(),
        name,
        spec,
        network,
        post: chain::alloc_of(&state),
        meta,
        genesis,
        blocks,
    })
}

fn hex_u64(v: u64) -> String {
    format!("{v:#x}")
}

fn hex_u256(v: U256) -> String {
    format!("{v:#x}")
}

/// A 32-byte word as 64 hex digits (geth reads storage keys and values only in even length).
fn word(v: U256) -> String {
    format!("0x{v:064x}")
}

/// An allocation in the ethereum/tests account format (`balance`, `code`, `nonce`,
/// `storage`; exactly these four, as revm's test types require).
fn alloc_json(alloc: &BTreeMap<Address, AllocAccount>) -> Value {
    let mut out = Map::new();
    for (address, a) in alloc {
        let storage: Map<String, Value> = a
            .storage
            .iter()
            .filter(|(_, v)| !v.is_zero())
            .map(|(k, v)| (word(*k), Value::String(word(*v))))
            .collect();
        out.insert(
            format!("{address:#x}"),
            json!({
                "balance": hex_u256(a.balance),
                "code": a.code,
                "nonce": hex_u64(a.nonce),
                "storage": storage,
            }),
        );
    }
    Value::Object(out)
}

/// A header in the ethereum/tests JSON format.
fn header_json(h: &Header, hash: B256) -> Value {
    let mut v = json!({
        "parentHash": h.parent_hash,
        "uncleHash": h.ommers_hash,
        "coinbase": h.beneficiary,
        "stateRoot": h.state_root,
        "transactionsTrie": h.transactions_root,
        "receiptTrie": h.receipts_root,
        "bloom": h.logs_bloom,
        "difficulty": hex_u256(h.difficulty),
        "number": hex_u64(h.number),
        "gasLimit": hex_u64(h.gas_limit),
        "gasUsed": hex_u64(h.gas_used),
        "timestamp": hex_u64(h.timestamp),
        "extraData": h.extra_data,
        "mixHash": h.mix_hash,
        "nonce": h.nonce,
        "hash": hash,
    });
    // Every field the header has: `conformance` holds each block's JSON header to its RLP.
    let optional: [(&str, Option<Value>); 8] = [
        (
            "baseFeePerGas",
            h.base_fee_per_gas.map(|x| json!(hex_u64(x))),
        ),
        ("withdrawalsRoot", h.withdrawals_root.map(|x| json!(x))),
        ("blobGasUsed", h.blob_gas_used.map(|x| json!(hex_u64(x)))),
        (
            "excessBlobGas",
            h.excess_blob_gas.map(|x| json!(hex_u64(x))),
        ),
        (
            "parentBeaconBlockRoot",
            h.parent_beacon_block_root.map(|x| json!(x)),
        ),
        ("requestsHash", h.requests_hash.map(|x| json!(x))),
        (
            "blockAccessListHash",
            h.block_access_list_hash.map(|x| json!(x)),
        ),
        ("slotNumber", h.slot_number.map(|x| json!(hex_u64(x)))),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            v[key] = value;
        }
    }
    v
}

/// A transaction in the ethereum/tests JSON format, with its `sender` (revm's runner takes
/// the sender from the file instead of recovering it).
fn tx_json(tx: &TxEnvelope, sender: Address) -> Value {
    let sig = tx.signature();
    let v = if tx.is_legacy() {
        match tx.chain_id() {
            Some(id) => 35 + 2 * id + u64::from(sig.v()),
            None => 27 + u64::from(sig.v()),
        }
    } else {
        u64::from(sig.v())
    };
    let mut out = json!({
        "type": format!("{:#04x}", tx.ty()),
        "nonce": hex_u64(tx.nonce()),
        "gasLimit": hex_u64(tx.gas_limit()),
        "to": tx.to().map_or(String::new(), |a| format!("{a:#x}")),
        "value": hex_u256(tx.value()),
        "data": tx.input(),
        "v": hex_u64(v),
        "r": hex_u256(sig.r()),
        "s": hex_u256(sig.s()),
        "sender": sender,
        "hash": tx.tx_hash(),
    });
    if let Some(id) = tx.chain_id() {
        out["chainId"] = json!(hex_u64(id));
    }
    if tx.is_legacy() || tx.ty() == 1 {
        out["gasPrice"] = json!(format!("{:#x}", tx.max_fee_per_gas()));
    } else {
        out["maxFeePerGas"] = json!(format!("{:#x}", tx.max_fee_per_gas()));
        out["maxPriorityFeePerGas"] = json!(format!(
            "{:#x}",
            tx.max_priority_fee_per_gas().unwrap_or_default()
        ));
    }
    if let Some(list) = tx.access_list() {
        out["accessList"] = json!(list);
    }
    if let Some(auths) = tx.authorization_list() {
        out["authorizationList"] = json!(auths);
    }
    if let Some(hashes) = tx.blob_versioned_hashes() {
        out["blobVersionedHashes"] = json!(hashes);
        out["maxFeePerBlobGas"] = json!(format!(
            "{:#x}",
            tx.max_fee_per_blob_gas().unwrap_or_default()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of an Amsterdam header is written (`conformance` holds each block's JSON
    /// header to its RLP: a field left out fails the exported test).
    #[test]
    fn header_json_writes_every_field_of_the_header() {
        let h = Header {
            base_fee_per_gas: Some(7),
            withdrawals_root: Some(B256::repeat_byte(1)),
            blob_gas_used: Some(0),
            excess_blob_gas: Some(0),
            parent_beacon_block_root: Some(B256::repeat_byte(2)),
            requests_hash: Some(B256::repeat_byte(3)),
            block_access_list_hash: Some(B256::repeat_byte(4)),
            slot_number: Some(9),
            ..Default::default()
        };
        let v = header_json(&h, h.hash_slow());
        assert_eq!(v["blockAccessListHash"], json!(B256::repeat_byte(4)));
        assert_eq!(v["slotNumber"], "0x9");
        assert_eq!(v.as_object().unwrap().len(), 24, "{v:#}");
        let pre_london = header_json(&Header::default(), B256::ZERO);
        assert!(pre_london.get("baseFeePerGas").is_none());
        assert!(pre_london.get("slotNumber").is_none());
    }
}
