//! `gigagas fetch --genesis FILE`: a chain fetched from a node in the generated-chain format
//! (`gigagas.chain/1`, `docs/chain-format.md`) — the complete genesis state from the geth
//! genesis file the node was initialised with, every block from block 1 from the node — so
//! that `run`/`bench` check state roots on complete states and `export`/`peers` can hand it
//! to other engines.
//!
//! The chain format ships each block's BAL (the loader derives every pre-state from the
//! genesis and the earlier blocks' BALs, without executing). Blocks before Amsterdam carry
//! none, so this module computes them: each block runs through gigagas's sequential path
//! (`gigagas_engine::prepare`: senders recovered, receipts, gas, bloom and — on the complete
//! pre-state — the header's state root checked), its BAL is applied to the state, and the
//! derived state's root must again be the header's. Nothing is trusted that was not checked
//! against the node's headers; the node's own per-transaction pre-state (its prestate
//! traces) must also agree with the derived state for every account and slot it names.

use crate::{block::GET_BLOCK, rpc::Client, store, Failure, FetchError, FetchOptions};
use alloy_consensus::{Block, BlockBody, Header};
use alloy_eips::eip4895::Withdrawals;
use alloy_primitives::{map::HashMap, Address, Bytes, B256, U256};
use gigagas_data::{
    chain::{self, ChainBlock, ChainMeta, CHAIN_SCHEMA},
    geth_genesis::GethGenesis,
    DataSource, PreAccount, PreState,
};
use std::{path::Path, sync::Arc, time::Instant};

/// Why a chain could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// Fetching failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The node, the genesis file and the blocks disagree, or a block did not verify.
    #[error("{0}")]
    Check(String),
}

/// A fetched chain ready to be written.
#[derive(Debug)]
pub struct FetchedChain {
    /// `chain.json`.
    pub meta: ChainMeta,
    /// The blocks with their BALs and senders.
    pub blocks: Vec<ChainBlock>,
    /// The fetch of the blocks (into a temporary mainnet-layout directory).
    pub fetch: crate::FetchReport,
    /// Seconds before the block fetch: chain id, block 0's header, the genesis state root.
    pub genesis_seconds: f64,
    /// Seconds loading the fetched blocks back (the mainnet-layout loader's checks).
    pub load_seconds: f64,
    /// Seconds spent executing the blocks, deriving and checking the states.
    pub derive_seconds: f64,
    /// Seconds removing the temporary mainnet-layout directory.
    pub cleanup_seconds: f64,
    /// Transactions in all blocks.
    pub txs: usize,
    /// Gas used by all blocks.
    pub gas: u64,
}

impl FetchedChain {
    /// Writes `chain.json` and `blocks.rlp` into `dir` (the caller's temporary directory,
    /// renamed into place once complete).
    pub fn write(&self, dir: &Path) -> Result<(), FetchError> {
        let io = |path: std::path::PathBuf| move |source| FetchError::Io { path, source };
        let path = dir.join(chain::CHAIN_META);
        let meta = serde_json::to_vec_pretty(&self.meta).map_err(|e| FetchError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        std::fs::write(&path, meta).map_err(io(path.clone()))?;
        let path = dir.join(chain::CHAIN_BLOCKS);
        std::fs::write(&path, chain::encode_blocks(&self.blocks)).map_err(io(path.clone()))?;
        Ok(())
    }
}

/// Block `number`'s header from the node (`eth_getBlockByNumber(n, false)`): it must be
/// block `number` and hash to its stated hash. Returns the hash and the header.
pub fn fetch_header(options: &FetchOptions, number: u64) -> Result<(B256, Header), FetchError> {
    let client = client(options)?;
    header_from(&client, number)
}

fn client(options: &FetchOptions) -> Result<Client, FetchError> {
    crate::client(
        options,
        crate::rpc_host(&options.rpc)?,
        std::time::Instant::now(),
    )
}

fn header_from(client: &Client, number: u64) -> Result<(B256, Header), FetchError> {
    let fail = |what| FetchError::Rpc {
        block: Some(number),
        method: GET_BLOCK.into(),
        host: client.host.clone(),
        what,
    };
    let raw = client.call(
        GET_BLOCK,
        serde_json::json!([crate::block::hex(number), false]),
        Some(number),
    )?;
    if raw.get() == "null" {
        return Err(fail(Failure::NoSuchBlock));
    }
    let header = crate::block::parse_rpc_header(raw.get())
        .map_err(|e| fail(Failure::Nonsense(format!("block header: {e}"))))?;
    if header.inner.number != number {
        return Err(fail(Failure::Nonsense(format!(
            "asked for block {number}, the answer is block {}",
            header.inner.number
        ))));
    }
    let computed = header.inner.hash_slow();
    if computed != header.hash {
        return Err(fail(Failure::Nonsense(format!(
            "the header hashes to {computed}, not to its stated hash {}",
            header.hash
        ))));
    }
    Ok((header.hash, header.inner))
}

/// Fetches blocks `options.from ..= options.to` (`from` must be 1) and makes them a chain
/// whose genesis is `genesis` (the geth genesis file the node was initialised with, shown as
/// `genesis_name` in messages). `options.out` is ignored: the blocks go through a temporary
/// mainnet-layout directory (with the node's prestate traces, used as a cross-check) that is
/// removed afterwards. `progress(done, total)` follows the fetch.
pub fn fetch_chain(
    options: &FetchOptions,
    genesis: &GethGenesis,
    genesis_name: &str,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<FetchedChain, ChainError> {
    let check = |what: String| ChainError::Check(what);
    let start = Instant::now();
    if options.from != 1 {
        return Err(check(format!(
            "--from {}: a chain with its complete state starts at block 1 (every block since \
             the genesis of {genesis_name}); fetch with --from 1",
            options.from
        )));
    }
    crate::check_options(options)?;
    let fork = <&str>::from(genesis.spec).to_owned();
    if let Some(named) = &options.fork {
        if !named.eq_ignore_ascii_case(&fork) {
            return Err(check(format!(
                "--fork {named}: {genesis_name} activates {fork} at the genesis; leave out \
                 --fork (it comes from the genesis file)"
            )));
        }
    }
    let client = client(options)?;
    let chain_id = store::chain_id(&client)?;
    if chain_id != genesis.chain_id {
        return Err(check(format!(
            "the node serves chain {chain_id}, {genesis_name} is chain {} (config.chainId): \
             not the genesis this node was initialised with",
            genesis.chain_id
        )));
    }
    let accounts = chain::genesis_accounts(&genesis.alloc);
    let genesis_root = gigagas_state::state_root(&PreState::new(accounts.clone(), Arc::default()));
    let (genesis_hash, genesis_header) = header_from(&client, 0)?;
    if genesis_header.state_root != genesis_root {
        return Err(check(format!(
            "{genesis_name}: its allocation has state root {genesis_root}, the node's block 0 \
             ({genesis_hash}) has state root {}: not the genesis this node was initialised \
             with",
            genesis_header.state_root
        )));
    }

    // The blocks, through the mainnet-layout fetch (its checks, retries and bounds).
    let tmp = gigagas_guard::interrupt::TempDir::new("gigagas-fetch-chain-").map_err(|source| {
        FetchError::Io {
            path: std::env::temp_dir(),
            source,
        }
    })?;
    let mut inner = options.clone();
    inner.out = tmp.path().join("blocks");
    inner.fork = Some(fork.clone());
    let genesis_seconds = start.elapsed().as_secs_f64();
    let report = crate::fetch(&inner, progress)?;
    let t_load = Instant::now();
    let source = DataSource::open(&inner.out).map_err(|e| check(e.to_string()))?;
    let dataset = gigagas_data::load(&source).map_err(|e| check(e.to_string()))?;

    let load_seconds = t_load.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let mut hashes: HashMap<u64, B256> = HashMap::default();
    hashes.insert(0, genesis_hash);
    for b in &dataset.blocks {
        hashes.insert(b.number(), b.hash);
    }
    let hashes = Arc::new(hashes);
    let mut state = accounts;
    let mut parent = genesis_hash;
    let mut blocks = Vec::with_capacity(dataset.blocks.len());
    let (mut txs, mut gas) = (0, 0);
    for (k, mut input) in dataset.blocks.into_iter().enumerate() {
        let number = input.number();
        if number != k as u64 + 1 || input.header.parent_hash != parent {
            return Err(check(format!(
                "block {number}: parent {} is not the previous block {parent}",
                input.header.parent_hash
            )));
        }
        if !input.ommers.is_empty() {
            return Err(check(format!(
                "block {number}: has ommers (not a post-merge chain)"
            )));
        }
        agrees_with_node(number, &input.pre_state, &state).map_err(check)?;
        input.pre_state = Arc::new(PreState::new(state.clone(), hashes.clone()));
        input.complete_state = true;
        let bal = {
            let case = gigagas_engine::prepare(&input)
                .map_err(|e| check(format!("block {number}: {e}")))?;
            case.baseline.access.bal
        };
        chain::apply_bal(&mut state, &bal);
        let derived = gigagas_state::state_root(&PreState::new(state.clone(), Arc::default()));
        if derived != input.header.state_root {
            return Err(check(format!(
                "block {number}: the state derived from the genesis and the BALs has root \
                 {derived}, the header says {}",
                input.header.state_root
            )));
        }
        parent = input.hash;
        txs += input.transactions.len();
        gas += input.header.gas_used;
        let senders = input
            .transactions
            .iter()
            .map(|t| t.claimed_sender)
            .collect();
        blocks.push(ChainBlock {
            block: Block {
                body: BlockBody {
                    transactions: input.transactions.into_iter().map(|t| t.envelope).collect(),
                    ommers: Vec::new(),
                    withdrawals: input
                        .header
                        .withdrawals_root
                        .is_some()
                        .then(|| Withdrawals::new(input.withdrawals)),
                },
                header: input.header,
            },
            bal,
            senders,
        });
    }
    let derive_seconds = t0.elapsed().as_secs_f64();
    let t_clean = Instant::now();
    let tmp_path = tmp.path().to_owned();
    tmp.close().map_err(|source| FetchError::Io {
        path: tmp_path,
        source,
    })?;
    let cleanup_seconds = t_clean.elapsed().as_secs_f64();
    let meta = ChainMeta {
        schema: CHAIN_SCHEMA.to_owned(),
        fork,
        chain_id,
        workload: "fetched".into(),
        seed: 0,
        block_gas: genesis_header.gas_limit,
        blocks: blocks.len(),
        genesis_hash,
        alloc: genesis.alloc.clone(),
        genesis_header: Some(Bytes::from(alloy_rlp::encode(&genesis_header))),
        fetched_from: Some(report.host.clone()),
        storage_fill: Vec::new(),
    };
    Ok(FetchedChain {
        meta,
        blocks,
        fetch: report,
        genesis_seconds,
        load_seconds,
        derive_seconds,
        cleanup_seconds,
        txs,
        gas,
    })
}

/// Every account and slot the node's prestate traces name for block `number` (the state
/// before the transaction that first touched it) must equal the derived state before the
/// block (an account absent there has balance 0, nonce 0, no code, no storage).
fn agrees_with_node(
    number: u64,
    traced: &PreState,
    state: &HashMap<Address, PreAccount>,
) -> Result<(), String> {
    let empty = PreAccount::default();
    for (address, node) in traced.accounts() {
        let ours = state.get(address).unwrap_or(&empty);
        let differs = |field: &str, node: String, ours: String| {
            Err(format!(
                "block {number}: the node's pre-state (prestate trace) has {address} {field} \
                 {node}, the state derived from the genesis and the earlier blocks has {ours}"
            ))
        };
        if node.info.balance != ours.info.balance {
            return differs(
                "balance",
                node.info.balance.to_string(),
                ours.info.balance.to_string(),
            );
        }
        if node.info.nonce != ours.info.nonce {
            return differs(
                "nonce",
                node.info.nonce.to_string(),
                ours.info.nonce.to_string(),
            );
        }
        let code_hash = |a: &PreAccount| {
            if a.info.code.as_ref().is_none_or(|c| c.is_empty()) {
                alloy_primitives::KECCAK256_EMPTY
            } else {
                a.info.code_hash
            }
        };
        if code_hash(node) != code_hash(ours) {
            return differs(
                "code hash",
                code_hash(node).to_string(),
                code_hash(ours).to_string(),
            );
        }
        for (slot, value) in &node.storage {
            let mine = ours.storage.get(slot).copied().unwrap_or(U256::ZERO);
            if *value != mine {
                return differs(
                    &format!("slot {slot:#x}"),
                    value.to_string(),
                    mine.to_string(),
                );
            }
        }
    }
    Ok(())
}
