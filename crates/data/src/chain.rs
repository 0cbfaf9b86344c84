//! The generated-chain format `gigagas.chain/1` (see `docs/chain-format.md`): `chain.json`
//! (metadata and the genesis allocation) and `blocks.rlp` (per block: the block's RLP, its
//! block access list's RLP, and its senders). Each block's pre-state is derived from the
//! genesis by applying the BALs of the blocks before it — a pure data transformation: loading
//! never executes a transaction.

use crate::{
    prestate::PreAccount, BlockInput, DataError, DataSource, Dataset, PreState, Transaction,
};
use alloy_consensus::{Block, Header, TxEnvelope};
use alloy_eip7928::{compute_block_access_list_hash, BlockAccessList};
use alloy_primitives::{map::HashMap, Address, Bytes, B256, U256};
use alloy_rlp::{Decodable, Encodable};
use revm::{bytecode::Bytecode, primitives::hardfork::SpecId, state::AccountInfo};
use serde::{Deserialize, Serialize};
use std::{collections::BTreeMap, str::FromStr, sync::Arc};

/// Schema identifier of `chain.json`.
pub const CHAIN_SCHEMA: &str = "gigagas.chain/1";
/// Metadata file of a chain directory.
pub const CHAIN_META: &str = "chain.json";
/// Block file of a chain directory.
pub const CHAIN_BLOCKS: &str = "blocks.rlp";

pub use crate::genesis::{
    check_storage_fill, AllocAccount, StorageFill, MAX_FILL_ACCOUNTS, MAX_FILL_SLOTS,
};

/// `chain.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainMeta {
    /// Always [`CHAIN_SCHEMA`].
    pub schema: String,
    /// Fork the blocks follow (revm's name, e.g. `Amsterdam`).
    pub fork: String,
    /// Chain id of the transactions.
    pub chain_id: u64,
    /// Workload that generated the chain.
    pub workload: String,
    /// Generator seed.
    pub seed: u64,
    /// Block gas limit.
    pub block_gas: u64,
    /// Number of blocks in `blocks.rlp`.
    pub blocks: usize,
    /// Hash of the genesis block (parent of the first block).
    pub genesis_hash: B256,
    /// Genesis allocation.
    pub alloc: BTreeMap<Address, AllocAccount>,
    /// The genesis header's RLP, for a chain whose genesis header is not rebuilt from the
    /// fields above (`gigagas fetch --genesis`: the node's block 0). It must hash to
    /// `genesis_hash`; the blocks' gas limits then follow the header rules (EIP-1559 bounds
    /// against the parent) instead of equalling `block_gas` (the genesis gas limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub genesis_header: Option<Bytes>,
    /// `host[:port]` of the node a fetched chain came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_from: Option<String>,
    /// Genesis accounts whose storage follows a rule instead of being listed slot by slot
    /// (large storages: `gen sstore-bloated --slots N`). Absent in older chains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage_fill: Vec<StorageFill>,
}

impl ChainMeta {
    /// The stored genesis header (`genesis_header`), decoded and checked against
    /// `genesis_hash`; `None` for a generated chain (its header is rebuilt from the fields).
    pub fn stored_genesis_header(&self) -> Result<Option<Header>, String> {
        let Some(rlp) = &self.genesis_header else {
            return Ok(None);
        };
        let header = Header::decode(&mut &rlp[..])
            .map_err(|e| format!("genesis_header: not a header's RLP: {e}"))?;
        let hash = header.hash_slow();
        if hash != self.genesis_hash {
            return Err(format!(
                "genesis_header hashes to {hash}, genesis_hash says {}",
                self.genesis_hash
            ));
        }
        if header.number != 0 {
            return Err(format!("genesis_header is block {}, not 0", header.number));
        }
        Ok(Some(header))
    }
}

impl ChainMeta {
    /// Checks the `storage_fill` entries: [`check_storage_fill`].
    pub fn check_storage_fill(&self) -> Result<(), String> {
        check_storage_fill(&self.alloc, &self.storage_fill)
    }

    /// The genesis state: [`genesis_state`].
    pub fn genesis_state(&self) -> Result<HashMap<Address, PreAccount>, String> {
        genesis_state(&self.alloc, &self.storage_fill)
    }

    /// The genesis allocation with `storage_fill` expanded into listed slots (for exports to
    /// other clients; large).
    pub fn full_alloc(&self) -> Result<BTreeMap<Address, AllocAccount>, String> {
        if self.storage_fill.is_empty() {
            return Ok(self.alloc.clone());
        }
        // The export holds the expanded state and the allocation made from it.
        let limit = crate::limit_from_env(MAX_FILL_MEMORY_ENV, MAX_FILL_MEMORY)
            .map_err(|e| e.to_string())?;
        check_fill_memory(&self.storage_fill, 2, limit)?;
        check_fill_available_memory(&self.storage_fill, 2, "an export to another client")?;
        Ok(alloc_of(&self.genesis_state()?))
    }
}

/// Default most memory (bytes) the expanded `storage_fill` accounts of a chain may take, over
/// every copy the in-memory loader holds (one per block's pre-state and the genesis). Raised
/// with the environment setting [`MAX_FILL_MEMORY_ENV`].
pub const MAX_FILL_MEMORY: u64 = 8 << 30;
/// Environment setting that raises [`MAX_FILL_MEMORY`] (bytes).
pub const MAX_FILL_MEMORY_ENV: &str = "GIGAGAS_MAX_FILL_MEMORY";

/// Bytes a storage map of `n` slots takes (hashbrown: a power-of-two number of buckets at
/// most 7/8 full, 64 bytes per `(U256, U256)` entry and one control byte), plus the account.
fn fill_account_bytes(n: u64) -> u128 {
    const ACCOUNT: u128 = 256;
    let buckets: u128 = match n {
        0 => 0,
        1..=3 => 4,
        4..=7 => 8,
        _ => u128::from(n.saturating_mul(8) / 7).next_power_of_two(),
    };
    ACCOUNT + buckets * 65
}

/// The memory (bytes) the `storage_fill` entries take once expanded, `copies` times (the
/// in-memory loader holds one copy of the genesis state per block). Computed from the counts;
/// allocates nothing.
pub fn fill_memory_bytes(fills: &[StorageFill], copies: u64) -> u128 {
    let one: u128 = fills
        .iter()
        .filter(|f| f.accounts > 0)
        .map(|f| {
            let (q, r) = (f.slots / f.accounts, f.slots % f.accounts);
            u128::from(r) * fill_account_bytes(q + 1)
                + u128::from(f.accounts - r) * fill_account_bytes(q)
        })
        .sum();
    one.saturating_mul(u128::from(copies.max(1)))
}

/// Refuses `storage_fill` entries whose expansion into memory ([`fill_memory_bytes`], `copies`
/// times) would pass `limit` bytes, before anything is allocated; the error names the memory
/// needed, the limit and the setting that raises it.
pub fn check_fill_memory(fills: &[StorageFill], copies: u64, limit: u64) -> Result<(), String> {
    let need = fill_memory_bytes(fills, copies);
    if need <= u128::from(limit) {
        return Ok(());
    }
    let slots: u64 = fills.iter().map(|f| f.slots).fold(0, u64::saturating_add);
    let gib = |b: u128| b as f64 / f64::from(1u32 << 30);
    Err(format!(
        "storage_fill: {slots} slots would take about {:.1} GiB of memory expanded ({copies} \
         in-memory copies: the genesis and each block's pre-state), above the limit of {:.1} GiB \
         (raise it with the environment setting {MAX_FILL_MEMORY_ENV}=BYTES); refused before \
         allocating",
        gib(need),
        gib(u128::from(limit))
    ))
}

/// The genesis state: `alloc` (zero slots dropped) and the accounts of the `storage_fill`
/// entries expanded (checked first by [`check_storage_fill`]; storage maps pre-sized). For
/// other clients' formats and tests; the loader keeps the rules ([`lazy_genesis_state`]).
pub fn genesis_state(
    alloc: &BTreeMap<Address, AllocAccount>,
    fills: &[StorageFill],
) -> Result<HashMap<Address, PreAccount>, String> {
    build_genesis_state(alloc, fills, true)
}

/// The genesis state with each `storage_fill` account's storage kept as its rule
/// ([`PreAccount::fill`]): memory independent of the slots (checked first by
/// [`check_storage_fill`]).
pub fn lazy_genesis_state(
    alloc: &BTreeMap<Address, AllocAccount>,
    fills: &[StorageFill],
) -> Result<HashMap<Address, PreAccount>, String> {
    build_genesis_state(alloc, fills, false)
}

fn build_genesis_state(
    alloc: &BTreeMap<Address, AllocAccount>,
    fills: &[StorageFill],
    expand: bool,
) -> Result<HashMap<Address, PreAccount>, String> {
    check_storage_fill(alloc, fills)?;
    let filled: u64 = fills.iter().map(|f| f.accounts).sum();
    let mut state =
        HashMap::with_capacity_and_hasher(alloc.len() + filled as usize, Default::default());
    state.extend(genesis_accounts(alloc));
    for f in fills {
        let code = Bytecode::new_raw(f.code.clone());
        let info = AccountInfo {
            nonce: f.nonce,
            code_hash: code.hash_slow(),
            code: Some(code),
            ..Default::default()
        };
        for k in 0..f.accounts {
            let rule = f.rule(k);
            let account = if expand {
                let n = rule.slots;
                let mut storage = HashMap::with_capacity_and_hasher(n as usize, Default::default());
                storage.extend((0..n).map(|i| (U256::from(i), f.value(i))));
                PreAccount {
                    info: info.clone(),
                    storage,
                    fill: None,
                }
            } else {
                PreAccount {
                    info: info.clone(),
                    storage: HashMap::default(),
                    fill: Some(rule),
                }
            };
            state.insert(f.account(k), account);
        }
    }
    Ok(state)
}

/// One block as stored: the block, its BAL and its senders (the claimed senders; recovery is
/// still done and cross-checked by the executor).
#[derive(Debug, Clone)]
pub struct ChainBlock {
    /// The block.
    pub block: Block<TxEnvelope>,
    /// Its block access list.
    pub bal: BlockAccessList,
    /// Sender of each transaction.
    pub senders: Vec<Address>,
}

/// Encodes blocks for `blocks.rlp`: per block three RLP strings (block, BAL, senders).
pub fn encode_blocks(blocks: &[ChainBlock]) -> Vec<u8> {
    let mut out = Vec::new();
    for b in blocks {
        let mut block = Vec::new();
        b.block.encode(&mut block);
        let mut bal = Vec::new();
        b.bal.encode(&mut bal);
        let senders: Vec<u8> = b.senders.iter().flat_map(|a| a.0 .0).collect();
        for item in [block, bal, senders] {
            Bytes::from(item).encode(&mut out);
        }
    }
    out
}

fn invalid(source: &DataSource, rel: &str, what: String) -> DataError {
    DataError::Invalid {
        path: source.display_path(rel),
        what,
    }
}

/// Decodes `blocks.rlp`.
fn decode_blocks(source: &DataSource, bytes: &[u8]) -> Result<Vec<ChainBlock>, DataError> {
    let err = |what: String| invalid(source, CHAIN_BLOCKS, what);
    let mut rest = bytes;
    let mut blocks = Vec::new();
    while !rest.is_empty() {
        let k = blocks.len();
        let mut item =
            || Bytes::decode(&mut rest).map_err(|e| err(format!("block record {k}: {e}")));
        let (block, bal, senders) = (item()?, item()?, item()?);
        let block = Block::<TxEnvelope>::decode(&mut &block[..])
            .map_err(|e| err(format!("block record {k}: block RLP: {e}")))?;
        let bal = BlockAccessList::decode(&mut &bal[..])
            .map_err(|e| err(format!("block record {k}: BAL RLP: {e}")))?;
        if senders.len() % 20 != 0 || senders.len() / 20 != block.body.transactions.len() {
            return Err(err(format!(
                "block record {k}: {} sender bytes for {} transactions",
                senders.len(),
                block.body.transactions.len()
            )));
        }
        let senders = senders.chunks(20).map(Address::from_slice).collect();
        blocks.push(ChainBlock {
            block,
            bal,
            senders,
        });
    }
    Ok(blocks)
}

/// The genesis state of an allocation.
pub fn genesis_accounts(alloc: &BTreeMap<Address, AllocAccount>) -> HashMap<Address, PreAccount> {
    alloc
        .iter()
        .map(|(address, a)| {
            let code = Bytecode::new_raw(a.code.clone());
            let info = AccountInfo {
                balance: a.balance,
                nonce: a.nonce,
                code_hash: code.hash_slow(),
                code: Some(code),
                ..Default::default()
            };
            let storage = a
                .storage
                .iter()
                .filter(|(_, v)| !v.is_zero())
                .map(|(k, v)| (*k, *v))
                .collect();
            (
                *address,
                PreAccount {
                    info,
                    storage,
                    fill: None,
                },
            )
        })
        .collect()
}

/// The allocation of a state (the inverse of [`genesis_accounts`]): the state before any block
/// of a chain, as a genesis allocation another client can start from.
pub fn alloc_of(state: &HashMap<Address, PreAccount>) -> BTreeMap<Address, AllocAccount> {
    state
        .iter()
        .map(|(address, a)| {
            let code = a
                .info
                .code
                .as_ref()
                .map(|c| c.original_bytes())
                .unwrap_or_default();
            // A rule's slots are listed one by one (an export is expanded by nature).
            let ruled = a.fill.iter().flat_map(|f| {
                (0..f.slots)
                    .map(U256::from)
                    .filter(|s| !a.storage.contains_key(s))
                    .map(|s| (s, f.value(&s)))
            });
            let storage = a
                .storage
                .iter()
                .map(|(k, v)| (*k, *v))
                .chain(ruled)
                .filter(|(_, v)| !v.is_zero())
                .collect();
            let account = AllocAccount {
                balance: a.info.balance,
                nonce: a.info.nonce,
                code,
                storage,
            };
            (*address, account)
        })
        .collect()
}

/// Whether a BAL entry writes anything (an account that was only read or touched does not).
pub fn writes_anything(changes: &alloy_eip7928::AccountChanges) -> bool {
    !changes.balance_changes.is_empty()
        || !changes.nonce_changes.is_empty()
        || !changes.code_changes.is_empty()
        || !changes.storage_changes.is_empty()
}

/// Applies a block's BAL (the last post-value of every account field and slot) to `state`;
/// a changed account left empty is removed (EIP-161, every fork a generated chain can have).
pub fn apply_bal(state: &mut HashMap<Address, PreAccount>, bal: &BlockAccessList) {
    for changes in bal {
        if !writes_anything(changes) {
            continue;
        }
        let account = state.entry(changes.address).or_default();
        apply_account_changes(account, changes);
        // EIP-161: a touched account left empty does not exist afterwards.
        if account.info.is_empty() && !account.has_storage() {
            state.remove(&changes.address);
        }
    }
}

/// Applies one account's entry of a BAL to `account`: the last post-value of its balance,
/// nonce, code and every slot it lists ([`apply_bal`]'s work on one account, without the
/// EIP-161 removal, which is the caller's: [`PreAccount::info`] empty and no storage left).
pub fn apply_account_changes(account: &mut PreAccount, changes: &alloy_eip7928::AccountChanges) {
    if let Some(c) = changes.balance_changes.last() {
        account.info.balance = c.post_balance;
    }
    if let Some(c) = changes.nonce_changes.last() {
        account.info.nonce = c.new_nonce;
    }
    if let Some(c) = changes.code_changes.last() {
        let code = Bytecode::new_raw(c.new_code.clone());
        account.info.code_hash = code.hash_slow();
        account.info.code = Some(code);
    }
    for slot in &changes.storage_changes {
        if let Some(c) = slot.changes.last() {
            account.set_slot(slot.slot, c.new_value);
        }
    }
}

/// Parses a fork name of `chain.json` (revm's spelling, `Cancun`; any letter case, `cancun`).
pub fn parse_fork(name: &str) -> Option<SpecId> {
    SpecId::from_str(name).ok().or_else(|| {
        let mut chars = name.chars();
        let first = chars.next()?;
        let capitalised: String = first
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect();
        SpecId::from_str(&capitalised).ok()
    })
}

/// Reads and checks `chain.json` of a chain directory (or archive) without reading its
/// blocks or expanding its genesis: schema, fork, stored genesis header, `storage_fill`
/// bounds. Returns it with the fork.
pub fn read_meta(source: &DataSource) -> Result<(ChainMeta, SpecId), DataError> {
    let meta_bytes = source.read(CHAIN_META)?;
    let meta: ChainMeta = serde_json::from_slice(&meta_bytes).map_err(|e| DataError::Json {
        path: source.display_path(CHAIN_META),
        what: "chain metadata".into(),
        source: e,
    })?;
    if meta.schema != CHAIN_SCHEMA {
        return Err(invalid(
            source,
            CHAIN_META,
            format!("schema {:?}, expected {CHAIN_SCHEMA}", meta.schema),
        ));
    }
    let spec = parse_fork(&meta.fork)
        .ok_or_else(|| invalid(source, CHAIN_META, format!("unknown fork {:?}", meta.fork)))?;
    meta.stored_genesis_header()
        .map_err(|what| invalid(source, CHAIN_META, what))?;
    meta.check_storage_fill()
        .map_err(|what| invalid(source, CHAIN_META, what))?;
    if meta.fill_slots() > PROPORTION_FLOOR_SLOTS {
        // Hashing a large fill takes minutes: first make sure the blocks use it.
        let blocks = decode_blocks(source, &source.read(CHAIN_BLOCKS)?)?;
        check_fill_proportion(&meta, &blocks).map_err(|what| invalid(source, CHAIN_META, what))?;
    }
    Ok((meta, spec))
}

/// Below this many `storage_fill` slots in all, a chain's fill is never refused for its
/// proportion: hashing it for the genesis root takes seconds.
pub const PROPORTION_FLOOR_SLOTS: u64 = 4_000_000;

/// Most `storage_fill` slots a chain may declare per storage entry (read or write) its
/// blocks' BALs list for the fill's accounts: above [`PROPORTION_FLOOR_SLOTS`], a chain
/// whose fill is larger than this many times what its blocks touch is refused before the
/// fill is hashed ([`check_fill_proportion`]). `gen sstore-bloated` chains touch one slot per
/// ~55,000 declared at 75M slots in one Amsterdam block, so they stay far below.
pub const MAX_FILL_PER_TOUCH: u64 = 1_000_000;

impl ChainMeta {
    /// Slots all `storage_fill` entries declare together.
    pub fn fill_slots(&self) -> u64 {
        self.storage_fill
            .iter()
            .map(|f| f.slots)
            .fold(0, u64::saturating_add)
    }
}

/// Storage entries (reads and writes, summed over blocks) the blocks' BALs list for accounts
/// of the `storage_fill` entries.
pub fn fill_touches(fills: &[StorageFill], blocks: &[ChainBlock]) -> u64 {
    let in_fill = |address: &Address| {
        let a = U256::from_be_slice(address.as_slice());
        fills.iter().any(|f| {
            let first = U256::from_be_slice(f.address.as_slice());
            a >= first && a - first < U256::from(f.accounts)
        })
    };
    blocks
        .iter()
        .flat_map(|b| &b.bal)
        .filter(|changes| in_fill(&changes.address))
        .map(|changes| (changes.storage_changes.len() + changes.storage_reads.len()) as u64)
        .sum()
}

/// Refuses a chain whose `storage_fill` is out of all proportion to what its blocks touch:
/// more than [`PROPORTION_FLOOR_SLOTS`] slots and more than [`MAX_FILL_PER_TOUCH`] slots per
/// storage entry the blocks' BALs list for the fill's accounts. Such a fill would be hashed
/// for minutes (the genesis root) to run blocks that do not use it; the error gives the
/// numbers. `run` and `db init` both refuse it ([`read_meta`]).
pub fn check_fill_proportion(meta: &ChainMeta, blocks: &[ChainBlock]) -> Result<(), String> {
    let slots = meta.fill_slots();
    if slots <= PROPORTION_FLOOR_SLOTS {
        return Ok(());
    }
    let touches = fill_touches(&meta.storage_fill, blocks);
    if slots / touches.max(1) > MAX_FILL_PER_TOUCH {
        return Err(format!(
            "storage_fill declares {slots} slots over {} account(s), but the chain's {} block(s) touch the fill's accounts {touches} time(s) (storage reads and writes in their BALs): more than {MAX_FILL_PER_TOUCH} declared slots per touch, out of all proportion (hashing the fill for the genesis root would take minutes); refused before hashing it. A chain made by `gen sstore-bloated` stays far below this bound; was chain.json edited?",
            meta.storage_fill.iter().map(|f| f.accounts).fold(0u64, u64::saturating_add),
            blocks.len()
        ));
    }
    Ok(())
}

/// Bytes of memory one genesis slot takes in a loaded pre-state (a `HashMap<U256, U256>`
/// entry with the map's spare capacity), rounded up from measurements
/// (`docs/results/hot-account-10gb-2core.md`).
pub const LOADED_BYTES_PER_SLOT: u64 = 128;

/// The memory the machine has available (`MemAvailable` of `/proc/meminfo`), if known.
pub fn available_memory() -> Option<u64> {
    proc_kib_field("/proc/meminfo", "MemAvailable")
}

/// A `Key:   N kB` line of a Linux `/proc` file (`/proc/meminfo`, `/proc/self/status`), in
/// bytes; `None` where the file or the line is missing or malformed.
pub fn proc_kib_field(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// Refuses, before anything is allocated, to expand `fills` into `copies` in-memory copies of
/// the genesis storage when that needs more than the memory available: the error names the
/// slots, the memory needed and what is available. `what` names who expands them.
pub fn check_fill_available_memory(
    fills: &[StorageFill],
    copies: u64,
    what: &str,
) -> Result<(), String> {
    let slots: u64 = fills.iter().map(|f| f.slots).sum();
    check_slots_available_memory(slots, copies, what)
}

/// [`check_fill_available_memory`] for `slots` rule-filled slots in all (a state's
/// [`crate::PreState::fill_slots`]).
pub fn check_slots_available_memory(slots: u64, copies: u64, what: &str) -> Result<(), String> {
    let need = slots
        .saturating_mul(LOADED_BYTES_PER_SLOT)
        .saturating_mul(copies.max(1));
    let Some(available) = available_memory() else {
        return Ok(());
    };
    if need > available {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        return Err(format!(
            "storage_fill: {slots} slots; {what} would list every one of them, {copies} slot-sized copies in memory, about {:.1} GiB ({LOADED_BYTES_PER_SLOT} B a slot), more than the {:.1} GiB available (MemAvailable); refused before allocating them (loading and running the chain keep the fill as its rule)",
            gib(need),
            gib(available)
        ));
    }
    Ok(())
}

/// A genesis allocation whose state root was computed and checked against its genesis
/// header before, by whoever built a state from it (`db init` records one in the store):
/// [`genesis_alloc_digest`] of the allocation and the root it gave. The loader trusts the
/// root only for an allocation with the same digest, and still checks it against the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownGenesis {
    /// [`genesis_alloc_digest`] of the allocation.
    pub alloc_digest: B256,
    /// The state root it was hashed to.
    pub state_root: B256,
}

/// Keccak-256 of the genesis allocation as `chain.json` states it (`alloc` and
/// `storage_fill`, serialized canonically: ordered maps, rules as written): two chains with the
/// same digest have the same genesis state. `None` if it cannot be serialized (then nothing
/// is recorded or skipped).
pub fn genesis_alloc_digest(meta: &ChainMeta) -> Option<B256> {
    serde_json::to_vec(&(&meta.alloc, &meta.storage_fill))
        .ok()
        .map(alloy_primitives::keccak256)
}

/// Loads a chain directory (or archive); `known` spares hashing the genesis allocation when
/// it is the allocation a store was built from ([`KnownGenesis`]).
pub(crate) fn load(source: &DataSource, known: Option<KnownGenesis>) -> Result<Dataset, DataError> {
    let (meta, spec) = read_meta(source)?;
    let blocks = decode_blocks(source, &source.read(CHAIN_BLOCKS)?)?;
    if blocks.len() != meta.blocks {
        return Err(invalid(
            source,
            CHAIN_BLOCKS,
            format!("{} blocks, chain.json says {}", blocks.len(), meta.blocks),
        ));
    }
    let mut hashes: HashMap<u64, B256> = HashMap::default();
    hashes.insert(0, meta.genesis_hash);
    for b in &blocks {
        hashes.insert(b.block.header.number, b.block.header.hash_slow());
    }
    let hashes = Arc::new(hashes);
    meta.check_storage_fill()
        .map_err(|what| invalid(source, CHAIN_META, what))?;
    // The stated genesis must be the allocation's (streamed: bounded memory at any size),
    // unless this very allocation was hashed before (a store's record).
    match known.filter(|k| Some(k.alloc_digest) == genesis_alloc_digest(&meta)) {
        Some(k) => {
            if check_genesis_root(source, &meta, spec, k.state_root).is_err() {
                // The recorded root does not give this chain's genesis: either chain.json
                // changed elsewhere (a header field, genesis_hash) or the record is wrong.
                // Hashing the allocation says which.
                check_genesis(source, &meta, spec)?;
                return Err(invalid(
                    source,
                    CHAIN_META,
                    format!(
                        "the store records state root {} for this genesis allocation, but the allocation hashes to the genesis header's: the store's record is damaged; build the store again with `db init`",
                        k.state_root
                    ),
                ));
            }
        }
        None => check_genesis(source, &meta, spec)?,
    }
    // `storage_fill` accounts keep their rule: each block's pre-state holds only the slots
    // earlier blocks changed, whatever the fill's size.
    let mut state = lazy_genesis_state(&meta.alloc, &meta.storage_fill)
        .map_err(|what| invalid(source, CHAIN_META, what))?;
    let mut parent = meta.genesis_hash;
    let mut inputs = Vec::with_capacity(blocks.len());
    for (k, b) in blocks.into_iter().enumerate() {
        let header = &b.block.header;
        let hash = header.hash_slow();
        if header.parent_hash != parent {
            return Err(invalid(
                source,
                CHAIN_BLOCKS,
                format!(
                    "block {}: parent {} is not the previous block {parent}",
                    header.number, header.parent_hash
                ),
            ));
        }
        // Amsterdam headers commit to the BAL; before, the shipped list is checked against
        // sequential execution by the executor.
        let bal_hash = compute_block_access_list_hash(&b.bal);
        if header.block_access_list_hash.is_some_and(|h| h != bal_hash) {
            return Err(invalid(
                source,
                CHAIN_BLOCKS,
                format!(
                    "block {} (record {k}): BAL hashes to {bal_hash}, header says {:?}",
                    header.number, header.block_access_list_hash
                ),
            ));
        }
        check_against_meta(source, &meta, k, &b)?;
        let pre_state = Arc::new(PreState::new(state.clone(), hashes.clone()));
        apply_bal(&mut state, &b.bal);
        parent = hash;
        let transactions = b
            .block
            .body
            .transactions
            .into_iter()
            .zip(b.senders)
            .map(|(envelope, claimed_sender)| Transaction {
                envelope,
                claimed_sender,
            })
            .collect();
        inputs.push(BlockInput {
            hash,
            withdrawals: b.block.body.withdrawals.map(|w| w.0).unwrap_or_default(),
            ommers: Vec::new(),
            ommer_headers: Vec::new(),
            pre_state,
            source: source.display_path(CHAIN_BLOCKS),
            spec: Some(spec),
            access_list: Some(b.bal),
            complete_state: true,
            chain_id: meta.chain_id,
            transactions,
            header: b.block.header,
        });
    }
    crate::integrity::check_all(&inputs, &hashes)?;
    Ok(Dataset {
        name: source.display_path("").display().to_string(),
        blocks: inputs,
    })
}

/// The genesis `chain.json` states must be the one its allocation makes: the allocation's
/// state root (`alloc` and `storage_fill`, [`crate::genesis_root::genesis_state_root`]) must be
/// the stored genesis header's (a fetched chain), or the genesis header rebuilt from it and the
/// chain's fields must hash to `genesis_hash` (a generated chain). The error names the file,
/// the stated and the computed values.
pub fn check_genesis(source: &DataSource, meta: &ChainMeta, spec: SpecId) -> Result<(), DataError> {
    let root = crate::genesis_root::genesis_state_root(&meta.alloc, &meta.storage_fill)
        .map_err(|what| invalid(source, CHAIN_META, what))?;
    check_genesis_root(source, meta, spec, root)
}

/// [`check_genesis`] with the allocation's state root `root` already computed.
fn check_genesis_root(
    source: &DataSource,
    meta: &ChainMeta,
    spec: SpecId,
    root: B256,
) -> Result<(), DataError> {
    let err = |what: String| invalid(source, CHAIN_META, what);
    match meta.stored_genesis_header().map_err(err)? {
        Some(header) if header.state_root != root => Err(err(format!(
            "the genesis allocation (alloc, storage_fill) has state root {root}, the stored \
             genesis_header (genesis_hash {}) says {}: the allocation or the header was altered",
            meta.genesis_hash, header.state_root
        ))),
        Some(_) => Ok(()),
        None => {
            let hash = crate::genesis_root::generated_genesis_header(
                spec,
                meta.block_gas,
                meta.seed,
                root,
            )
            .hash_slow();
            if hash == meta.genesis_hash {
                return Ok(());
            }
            Err(err(format!(
                "genesis_hash says {}, but the genesis computed from the allocation (alloc, \
                 storage_fill; state root {root}) hashes to {hash}: the allocation, a header \
                 field (fork, block_gas, seed) or genesis_hash was altered, or the chain was \
                 made by an older gigagas (generate it again)",
                meta.genesis_hash
            )))
        }
    }
}

/// A block's header and transactions must match the chain's metadata: its gas limit and the
/// chain id of every transaction that names one.
fn check_against_meta(
    source: &DataSource,
    meta: &ChainMeta,
    k: usize,
    b: &ChainBlock,
) -> Result<(), DataError> {
    use alloy_consensus::Transaction as _;
    let header = &b.block.header;
    // A stored genesis header (a fetched chain): gas limits follow the header rules.
    if meta.genesis_header.is_none() && header.gas_limit != meta.block_gas {
        return Err(invalid(
            source,
            CHAIN_BLOCKS,
            format!(
                "block {} (record {k}): gas limit {}, chain.json says block_gas {}",
                header.number, header.gas_limit, meta.block_gas
            ),
        ));
    }
    if header.number != k as u64 + 1 {
        return Err(invalid(
            source,
            CHAIN_BLOCKS,
            format!("record {k} is block {}, expected {}", header.number, k + 1),
        ));
    }
    for (i, tx) in b.block.body.transactions.iter().enumerate() {
        if let Some(id) = tx.chain_id() {
            if id != meta.chain_id {
                return Err(invalid(
                    source,
                    CHAIN_BLOCKS,
                    format!(
                        "block {} tx {i}: chain id {id}, chain.json says {}",
                        header.number, meta.chain_id
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The system contracts a chain from Prague on needs in its genesis (EIP-4788 beacon roots,
/// EIP-2935 history, EIP-7002/7251 request queues, and the EIP-8282 builder-request contracts
/// geth's `t8n` requires for Amsterdam), with their code.
pub fn system_contracts() -> Vec<(Address, Bytes)> {
    use alloy_eips::{eip2935, eip4788, eip7002, eip7251, eip8282};
    vec![
        (
            eip4788::BEACON_ROOTS_ADDRESS,
            eip4788::BEACON_ROOTS_CODE.clone(),
        ),
        (
            eip2935::HISTORY_STORAGE_ADDRESS,
            eip2935::HISTORY_STORAGE_CODE.clone(),
        ),
        (
            eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS,
            eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_CODE.clone(),
        ),
        (
            eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS,
            eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_CODE.clone(),
        ),
        (
            eip8282::BUILDER_DEPOSIT_CONTRACT_ADDRESS,
            eip8282::BUILDER_DEPOSIT_CONTRACT_CODE.clone(),
        ),
        (
            eip8282::BUILDER_EXIT_CONTRACT_ADDRESS,
            eip8282::BUILDER_EXIT_CONTRACT_CODE.clone(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(slots: u64) -> StorageFill {
        StorageFill {
            address: Address::repeat_byte(0x40),
            accounts: 1,
            slots,
            period: 4,
            nonce: 1,
            code: Bytes::new(),
        }
    }

    /// A fill the machine cannot hold is refused before anything is allocated, naming the
    /// slots, the memory needed and the memory available; a small one passes.
    #[test]
    fn fill_memory_is_checked_before_expanding() {
        if available_memory().is_none() {
            return; // Not Linux: no limit is known, nothing to check.
        }
        let err =
            check_fill_available_memory(&[fill(MAX_FILL_SLOTS)], 1 << 20, "loading the chain")
                .unwrap_err();
        assert!(err.contains("100000000 slots"), "{err}");
        assert!(err.contains("MemAvailable"), "{err}");
        assert!(err.contains("GiB"), "{err}");
        check_fill_available_memory(&[fill(1000)], 3, "loading the chain").unwrap();
    }

    fn meta_with(fills: Vec<StorageFill>) -> ChainMeta {
        serde_json::from_value(serde_json::json!({
            "schema": CHAIN_SCHEMA, "fork": "Prague", "chain_id": 1, "workload": "t",
            "seed": 0, "blocks": 0, "block_gas": 1, "genesis_hash": B256::ZERO, "alloc": {},
        }))
        .map(|mut m: ChainMeta| {
            m.storage_fill = fills;
            m
        })
        .unwrap()
    }

    fn touching(address: Address, slots: u64) -> ChainBlock {
        ChainBlock {
            block: Block::default(),
            bal: vec![alloy_eip7928::AccountChanges {
                address,
                storage_reads: (0..slots).map(U256::from).collect(),
                ..Default::default()
            }],
            senders: Vec::new(),
        }
    }

    /// A fill its blocks do not use is refused above the floor, with the numbers; one the
    /// blocks touch in proportion (an `sstore-bloated` chain) and any small fill pass.
    #[test]
    fn a_fill_out_of_proportion_to_its_blocks_is_refused() {
        let big = meta_with(vec![fill(100_000_000)]);
        let err = check_fill_proportion(&big, &[touching(Address::repeat_byte(1), 5)]).unwrap_err();
        assert!(err.contains("100000000 slots"), "{err}");
        assert!(err.contains("touch the fill's accounts 0 time"), "{err}");
        // 75M slots touched 1,365 times (one Amsterdam sstore-bloated block) pass.
        let bloated = meta_with(vec![fill(75_000_000)]);
        check_fill_proportion(&bloated, &[touching(Address::repeat_byte(0x40), 1365)]).unwrap();
        check_fill_proportion(&meta_with(vec![fill(PROPORTION_FLOOR_SLOTS)]), &[]).unwrap();
    }
}
