//! What a block access list weighs, and what each part of it is made of.
//!
//! For every block: the EIP-7928 BAL as specified (`keys`: post-values per index plus the keys
//! of everything only read) RLP-encoded with `alloy-eip7928`, its size compressed with snappy
//! (raw block format, as devp2p compresses its messages) and zstd, per Mgas and as a share of
//! the block's own RLP; its composition (accounts, storage writes and reads, balance, nonce and
//! code changes) and its largest accounts. Beside it, two variants of the same information so
//! that the size side of the trade-off is complete:
//!
//! - `writes`: the diffs alone — no storage read keys, no accounts that were only read;
//! - `full`: `keys` plus the pre-block value of everything read — each read slot's value, each
//!   written slot's value before the block (SSTORE reads it for its gas), and each listed
//!   account's balance, nonce and code hash before the block ([`FullAccountChanges`]).
//!
//! A block without a shipped BAL (mainnet data) is measured with the one its verified
//! sequential run builds ([`gigagas_engine::prepare`]); a shipped one (generated Amsterdam
//! chains) is used as shipped, after `prepare` has checked it equals the rebuilt one.
//!
//! Architecture invariant: measures; no file I/O and no printing (the CLI writes what
//! [`BalStatsReport`] and [`markdown`] return).

#![warn(missing_docs)]

use alloy_eip7928::{AccountChanges, BalanceChange, CodeChange, NonceChange, SlotChanges};
use alloy_primitives::{map::HashMap, Address, Bytes, U256};
use alloy_rlp::{Encodable, RlpEncodable};
use gigagas_data::{BlockInput, Dataset, PreState};
use gigagas_exec::ExecError;
use serde::Serialize;

/// The JSON schema name of [`BalStatsReport`] (documented in `docs/balstats-json.md`).
pub const SCHEMA: &str = "gigagas.balstats/1";

/// The zstd level every BAL is compressed with (zstd's default).
pub const ZSTD_LEVEL: i32 = 3;

/// Largest accounts kept per block.
pub const TOP_ACCOUNTS_PER_BLOCK: usize = 3;

/// Largest accounts kept per data set (summed over its blocks).
pub const TOP_ACCOUNTS_PER_DATASET: usize = 10;

/// What can stop a measurement.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The block did not prepare: execution, verification against its header, or a shipped
    /// BAL that differs from the rebuilt one.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// A compressor refused its input.
    #[error("block {block}: {codec} compression of the {variant} BAL failed: {detail}")]
    Compress {
        /// Block number.
        block: u64,
        /// `snappy` or `zstd`.
        codec: &'static str,
        /// Which variant was being compressed.
        variant: &'static str,
        /// The compressor's message.
        detail: String,
    },
}

/// One encoded size: RLP bytes and the same bytes compressed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Size {
    /// RLP length in bytes.
    pub rlp_bytes: u64,
    /// Snappy (raw block format) compressed length in bytes.
    pub snappy_bytes: u64,
    /// Zstd (level [`ZSTD_LEVEL`]) compressed length in bytes.
    pub zstd_bytes: u64,
}

impl Size {
    /// The sizes of `rlp` (an encoding) as is and compressed; `block` and `variant` name it
    /// in an error.
    pub fn of(rlp: &[u8], block: u64, variant: &'static str) -> Result<Self, StatsError> {
        let snappy =
            snap::raw::Encoder::new()
                .compress_vec(rlp)
                .map_err(|e| StatsError::Compress {
                    block,
                    codec: "snappy",
                    variant,
                    detail: e.to_string(),
                })?;
        let zstd = zstd::bulk::compress(rlp, ZSTD_LEVEL).map_err(|e| StatsError::Compress {
            block,
            codec: "zstd",
            variant,
            detail: e.to_string(),
        })?;
        Ok(Self {
            rlp_bytes: rlp.len() as u64,
            snappy_bytes: snappy.len() as u64,
            zstd_bytes: zstd.len() as u64,
        })
    }

    fn add(&mut self, other: &Self) {
        self.rlp_bytes += other.rlp_bytes;
        self.snappy_bytes += other.snappy_bytes;
        self.zstd_bytes += other.zstd_bytes;
    }
}

/// What a BAL lists (the `keys` variant, as specified).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Accounts listed.
    pub accounts: u64,
    /// Accounts with at least one storage, balance, nonce or code change.
    pub accounts_changed: u64,
    /// Accounts listed with no change (read or touched only; their storage reads, if any).
    pub accounts_read_only: u64,
    /// Distinct storage slots written (`storage_changes` entries).
    pub storage_slots_written: u64,
    /// Storage writes: (slot, index, post-value) entries; a slot written by several
    /// transactions counts once per transaction.
    pub storage_writes: u64,
    /// Storage slots only read (`storage_reads` entries).
    pub storage_reads: u64,
    /// Balance changes (index, post-balance).
    pub balance_changes: u64,
    /// Nonce changes (index, post-nonce).
    pub nonce_changes: u64,
    /// Code changes (index, new code).
    pub code_changes: u64,
    /// Bytes of new code in the code changes.
    pub code_change_bytes: u64,
}

impl Counts {
    /// The counts of `bal`.
    pub fn of(bal: &[AccountChanges]) -> Self {
        let mut c = Self::default();
        for account in bal {
            c.accounts += 1;
            let changed = account
                .storage_changes
                .iter()
                .any(|s| !s.changes.is_empty())
                || !account.balance_changes.is_empty()
                || !account.nonce_changes.is_empty()
                || !account.code_changes.is_empty();
            if changed {
                c.accounts_changed += 1;
            } else {
                c.accounts_read_only += 1;
            }
            c.storage_slots_written += account.storage_changes.len() as u64;
            c.storage_writes += account
                .storage_changes
                .iter()
                .map(|s| s.changes.len() as u64)
                .sum::<u64>();
            c.storage_reads += account.storage_reads.len() as u64;
            c.balance_changes += account.balance_changes.len() as u64;
            c.nonce_changes += account.nonce_changes.len() as u64;
            c.code_changes += account.code_changes.len() as u64;
            c.code_change_bytes += account
                .code_changes
                .iter()
                .map(|c| c.new_code.len() as u64)
                .sum::<u64>();
        }
        c
    }

    fn add(&mut self, o: &Self) {
        self.accounts += o.accounts;
        self.accounts_changed += o.accounts_changed;
        self.accounts_read_only += o.accounts_read_only;
        self.storage_slots_written += o.storage_slots_written;
        self.storage_writes += o.storage_writes;
        self.storage_reads += o.storage_reads;
        self.balance_changes += o.balance_changes;
        self.nonce_changes += o.nonce_changes;
        self.code_changes += o.code_changes;
        self.code_change_bytes += o.code_change_bytes;
    }
}

/// One account's share of a BAL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountSize {
    /// The account.
    pub address: Address,
    /// Its `AccountChanges` entry's RLP length (summed over blocks in a data set's list).
    pub rlp_bytes: u64,
    /// Its storage writes (entries).
    pub storage_writes: u64,
    /// Its storage reads.
    pub storage_reads: u64,
}

/// Every account of `bal` with its encoded size, largest first (ties by address).
pub fn account_sizes(bal: &[AccountChanges]) -> Vec<AccountSize> {
    let mut sizes: Vec<AccountSize> = bal
        .iter()
        .map(|a| AccountSize {
            address: a.address,
            rlp_bytes: a.length() as u64,
            storage_writes: a
                .storage_changes
                .iter()
                .map(|s| s.changes.len() as u64)
                .sum(),
            storage_reads: a.storage_reads.len() as u64,
        })
        .collect();
    sort_largest_first(&mut sizes);
    sizes
}

fn sort_largest_first(sizes: &mut [AccountSize]) {
    sizes.sort_by(|a, b| {
        b.rlp_bytes
            .cmp(&a.rlp_bytes)
            .then(a.address.cmp(&b.address))
    });
}

/// The RLP encoding of a BAL, as the header's `blockAccessListHash` hashes it.
pub fn bal_rlp(bal: &[AccountChanges]) -> Vec<u8> {
    let mut out = Vec::with_capacity(alloy_rlp::list_length(bal));
    alloy_rlp::encode_list(bal, &mut out);
    out
}

/// The `writes` variant of `bal` (what `--bal writes` runs from): the engine's
/// [`gigagas_engine::writes_only`], the one definition of it.
pub use gigagas_engine::writes_only as writes_variant;

/// A storage slot with its value before the block.
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable)]
pub struct SlotValue {
    /// The slot.
    pub slot: U256,
    /// Its value before the block (0 when absent).
    pub value: U256,
}

/// One account of the `full` variant: the EIP-7928 entry with the pre-block value of
/// everything the block reads of it. RLP:
/// `[address, storage_changes, [[slot, pre_value], …] (the reads), balance_changes,
/// nonce_changes, code_changes, [[slot, pre_value], …] (the written slots), pre_balance,
/// pre_nonce, pre_code_hash]`, the first six fields as in EIP-7928 except that each read
/// carries its value; `pre_code_hash` is empty for an account without code or one that did not
/// exist (balance and nonce then 0). Code itself is not included
/// ([`BlockStats::pre_code_bytes`] says how much a variant that included it would add).
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable)]
pub struct FullAccountChanges {
    /// The account.
    pub address: Address,
    /// Post-values per index, as in the BAL.
    pub storage_changes: Vec<SlotChanges>,
    /// The slots only read, each with its pre-block value.
    pub storage_reads: Vec<SlotValue>,
    /// As in the BAL.
    pub balance_changes: Vec<BalanceChange>,
    /// As in the BAL.
    pub nonce_changes: Vec<NonceChange>,
    /// As in the BAL.
    pub code_changes: Vec<CodeChange>,
    /// The written slots' pre-block values, in the order of `storage_changes`.
    pub storage_write_pre: Vec<SlotValue>,
    /// Balance before the block.
    pub pre_balance: U256,
    /// Nonce before the block.
    pub pre_nonce: u64,
    /// Code hash before the block; empty without code.
    pub pre_code_hash: Bytes,
}

/// The `full` variant of `bal` with every pre-block value taken from `pre` (a slot absent from
/// it is 0, an account absent from it did not exist: as execution reads them).
pub fn full_variant(bal: &[AccountChanges], pre: &PreState) -> Vec<FullAccountChanges> {
    bal.iter()
        .map(|a| {
            let account = pre.account(&a.address);
            let value = |slot: &U256| SlotValue {
                slot: *slot,
                value: account.map_or(U256::ZERO, |acc| acc.slot(slot)),
            };
            let code_hash = account
                .map(|acc| acc.info.code_hash)
                .filter(|h| *h != alloy_primitives::KECCAK256_EMPTY && !h.is_zero());
            FullAccountChanges {
                address: a.address,
                storage_changes: a.storage_changes.clone(),
                storage_reads: a.storage_reads.iter().map(value).collect(),
                balance_changes: a.balance_changes.clone(),
                nonce_changes: a.nonce_changes.clone(),
                code_changes: a.code_changes.clone(),
                storage_write_pre: a.storage_changes.iter().map(|s| value(&s.slot)).collect(),
                pre_balance: account.map(|acc| acc.info.balance).unwrap_or_default(),
                pre_nonce: account.map_or(0, |acc| acc.info.nonce),
                pre_code_hash: code_hash
                    .map(|h| Bytes::copy_from_slice(h.as_slice()))
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The RLP encoding of a `full` variant.
pub fn full_rlp(full: &[FullAccountChanges]) -> Vec<u8> {
    let mut out = Vec::with_capacity(alloy_rlp::list_length(full));
    alloy_rlp::encode_list(full, &mut out);
    out
}

/// Bytes of distinct pre-block code of the accounts `bal` lists (what a `full` variant that
/// spared code reads too would add).
pub fn pre_code_bytes(bal: &[AccountChanges], pre: &PreState) -> u64 {
    let mut seen: alloy_primitives::map::HashSet<alloy_primitives::B256> = Default::default();
    bal.iter()
        .filter_map(|a| pre.account(&a.address))
        .filter_map(|acc| acc.info.code.as_ref().map(|c| (acc.info.code_hash, c)))
        .filter(|(hash, _)| seen.insert(*hash))
        .map(|(_, code)| code.original_byte_slice().len() as u64)
        .sum()
}

/// The block's own RLP length (header, transactions, ommer headers, withdrawals; encoded with
/// `alloy-consensus`) and the number of ommers left out because the data set has only their
/// hashes (mainnet data; the length is then a lower bound).
pub fn block_rlp_len(input: &BlockInput) -> (u64, usize) {
    let ommers = if input.ommer_headers.len() == input.ommers.len() {
        input.ommer_headers.clone()
    } else {
        Vec::new()
    };
    let missing = input.ommers.len().saturating_sub(ommers.len());
    let block = alloy_consensus::Block {
        header: input.header.clone(),
        body: alloy_consensus::BlockBody {
            transactions: input
                .transactions
                .iter()
                .map(|t| t.envelope.clone())
                .collect::<Vec<_>>(),
            ommers,
            withdrawals: input
                .header
                .withdrawals_root
                .map(|_| alloy_eips::eip4895::Withdrawals::new(input.withdrawals.clone())),
        },
    };
    (block.length() as u64, missing)
}

/// Where a block's BAL came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BalSource {
    /// Shipped with the block (and equal to the one sequential execution builds).
    Shipped,
    /// Built by the block's verified sequential run (the block carries none).
    Built,
}

/// The measurements of one block.
#[derive(Debug, Clone, Serialize)]
pub struct BlockStats {
    /// Block number.
    pub number: u64,
    /// Fork the block executes under.
    pub fork: String,
    /// Transactions.
    pub txs: usize,
    /// Gas used (header).
    pub gas_used: u64,
    /// Where its BAL came from.
    pub bal_source: BalSource,
    /// The block's own RLP length, without the BAL.
    pub block_rlp_bytes: u64,
    /// Ommers whose headers the data set lacks (their bytes are not in `block_rlp_bytes`).
    pub ommers_without_header: usize,
    /// The BAL as specified (EIP-7928).
    pub keys: Size,
    /// Diffs only.
    pub writes: Size,
    /// Keys plus pre-block values of everything read.
    pub full: Size,
    /// `keys.rlp_bytes` per million gas used (`None` for a block that used no gas).
    pub keys_bytes_per_mgas: Option<f64>,
    /// `keys.rlp_bytes / block_rlp_bytes`.
    pub keys_share_of_block: f64,
    /// What the BAL lists.
    pub counts: Counts,
    /// Distinct pre-block code of the listed accounts, bytes (not in any variant).
    pub pre_code_bytes: u64,
    /// The largest accounts of the BAL (at most [`TOP_ACCOUNTS_PER_BLOCK`]).
    pub top_accounts: Vec<AccountSize>,
    /// What a speculative engine would re-execute at each of [`SPECULATIVE_THREADS`]
    /// ([`speculative_estimate`]); empty when the gas per transaction is unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub speculative: Vec<Speculative>,
}

/// The thread counts [`speculative_estimate`] is given for.
pub const SPECULATIVE_THREADS: [usize; 4] = [2, 4, 8, 16];

/// What a speculative (Block-STM-like) engine would have to re-execute of a block at
/// `threads`, estimated from the block's dependency graph as its BAL shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Speculative {
    /// Worker threads.
    pub threads: usize,
    /// Transactions re-executed at least once.
    pub reexecuted_txs: u64,
    /// Their gas (each re-executed in full: the work before the conflict is lost).
    pub reexecuted_gas: u64,
}

/// Estimates what a speculative engine would re-execute at `threads`, from the BAL: the
/// transactions run optimistically in index order, `threads` at a time, so transaction *i*
/// overlaps *i − threads + 1 … i − 1*; a transaction that writes a storage slot an earlier
/// transaction of that window also writes is taken to have read it first (the
/// read-modify-write of a counter, a balance, a pointer) and is re-executed once, in full.
/// `gas_per_tx[i − 1]` is transaction *i*'s gas. A model, not a simulation: it counts
/// neither cascades (a re-execution that aborts again; more work) nor blind writes (no read;
/// less work), and sees reads only through writes, as the BAL records reads without their
/// index. Pre- and post-execution system writes (indices 0 and *n* + 1) conflict with none.
pub fn speculative_estimate(
    bal: &[AccountChanges],
    gas_per_tx: &[u64],
    threads: usize,
) -> Speculative {
    let n = gas_per_tx.len() as u64;
    // Per transaction: the distance to the nearest earlier transaction writing a slot it
    // writes.
    let mut nearest = vec![u64::MAX; gas_per_tx.len()];
    for account in bal {
        for slot in &account.storage_changes {
            let mut previous: Option<u64> = None;
            for change in &slot.changes {
                let i = change.block_access_index.0;
                if (1..=n).contains(&i) {
                    if let (Some(p), Some(d)) = (previous, nearest.get_mut(i as usize - 1)) {
                        *d = (*d).min(i - p);
                    }
                    previous = Some(i);
                }
            }
        }
    }
    let (mut reexecuted_txs, mut reexecuted_gas) = (0, 0);
    for (gas, distance) in gas_per_tx.iter().zip(&nearest) {
        if *distance < threads as u64 {
            reexecuted_txs += 1;
            reexecuted_gas += gas;
        }
    }
    Speculative {
        threads,
        reexecuted_txs,
        reexecuted_gas,
    }
}

/// The measurements of `input` with its BAL `bal` (from `source`), executed under `fork`.
pub fn block_stats(
    input: &BlockInput,
    bal: &[AccountChanges],
    source: BalSource,
    fork: &str,
) -> Result<BlockStats, StatsError> {
    let number = input.number();
    let keys = Size::of(&bal_rlp(bal), number, "keys")?;
    let writes = Size::of(&bal_rlp(&writes_variant(bal)), number, "writes")?;
    let full = Size::of(
        &full_rlp(&full_variant(bal, &input.pre_state)),
        number,
        "full",
    )?;
    let (block_rlp_bytes, ommers_without_header) = block_rlp_len(input);
    let gas_used = input.gas_used();
    let mut top_accounts = account_sizes(bal);
    top_accounts.truncate(TOP_ACCOUNTS_PER_BLOCK);
    Ok(BlockStats {
        number,
        fork: fork.to_owned(),
        txs: input.transactions.len(),
        gas_used,
        bal_source: source,
        block_rlp_bytes,
        ommers_without_header,
        keys,
        writes,
        full,
        keys_bytes_per_mgas: per_mgas(keys.rlp_bytes, gas_used),
        keys_share_of_block: ratio(keys.rlp_bytes, block_rlp_bytes),
        counts: Counts::of(bal),
        pre_code_bytes: pre_code_bytes(bal, &input.pre_state),
        top_accounts,
        speculative: Vec::new(),
    })
}

fn per_mgas(bytes: u64, gas: u64) -> Option<f64> {
    (gas > 0).then(|| bytes as f64 / (gas as f64 / 1e6))
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Blocks summed: per fork, or all of a data set.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Aggregate {
    /// The fork, or `total`.
    pub label: String,
    /// Blocks.
    pub blocks: usize,
    /// Transactions.
    pub txs: usize,
    /// Gas used.
    pub gas_used: u64,
    /// Blocks' own RLP bytes.
    pub block_rlp_bytes: u64,
    /// Ommers without headers (bytes not counted in `block_rlp_bytes`).
    pub ommers_without_header: usize,
    /// Summed sizes of the `keys` BALs (each block compressed on its own).
    pub keys: Size,
    /// Summed sizes of the `writes` variants.
    pub writes: Size,
    /// Summed sizes of the `full` variants.
    pub full: Size,
    /// Summed counts.
    pub counts: Counts,
    /// Summed distinct pre-block code per block.
    pub pre_code_bytes: u64,
    /// `keys.rlp_bytes` per million gas.
    pub keys_bytes_per_mgas: Option<f64>,
    /// `keys.rlp_bytes / block_rlp_bytes`.
    pub keys_share_of_block: f64,
    /// `full.rlp_bytes / keys.rlp_bytes`.
    pub full_over_keys: f64,
    /// `writes.rlp_bytes / keys.rlp_bytes`.
    pub writes_over_keys: f64,
}

impl Aggregate {
    /// The sum of `blocks`, labelled `label`.
    pub fn of<'a>(label: &str, blocks: impl IntoIterator<Item = &'a BlockStats>) -> Self {
        let mut a = Self {
            label: label.to_owned(),
            ..Self::default()
        };
        for b in blocks {
            a.blocks += 1;
            a.txs += b.txs;
            a.gas_used += b.gas_used;
            a.block_rlp_bytes += b.block_rlp_bytes;
            a.ommers_without_header += b.ommers_without_header;
            a.keys.add(&b.keys);
            a.writes.add(&b.writes);
            a.full.add(&b.full);
            a.counts.add(&b.counts);
            a.pre_code_bytes += b.pre_code_bytes;
        }
        a.keys_bytes_per_mgas = per_mgas(a.keys.rlp_bytes, a.gas_used);
        a.keys_share_of_block = ratio(a.keys.rlp_bytes, a.block_rlp_bytes);
        a.full_over_keys = ratio(a.full.rlp_bytes, a.keys.rlp_bytes);
        a.writes_over_keys = ratio(a.writes.rlp_bytes, a.keys.rlp_bytes);
        a
    }
}

/// One data set's measurements.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetStats {
    /// The data set's name (directory, archive or the bundled sample).
    pub name: String,
    /// Every block, ascending.
    pub blocks: Vec<BlockStats>,
    /// Per fork, in the order the forks first appear.
    pub by_fork: Vec<Aggregate>,
    /// All blocks.
    pub total: Aggregate,
    /// The accounts with the most BAL bytes over all blocks (at most
    /// [`TOP_ACCOUNTS_PER_DATASET`]).
    pub top_accounts: Vec<AccountSize>,
}

/// Measures every block of `dataset`: each is prepared (senders recovered, executed
/// sequentially, verified against its header; a shipped BAL checked against the rebuilt one)
/// and its BAL measured. `on_block` is called after each block.
pub fn dataset_stats(dataset: &Dataset, on_block: &dyn Fn()) -> Result<DatasetStats, StatsError> {
    let mut blocks = Vec::with_capacity(dataset.blocks.len());
    let mut per_account: HashMap<Address, AccountSize> = HashMap::default();
    for input in &dataset.blocks {
        let case = gigagas_engine::prepare(input)?;
        let (bal, source) = match &input.access_list {
            Some(shipped) => (shipped, BalSource::Shipped),
            None => (&case.baseline.access.bal, BalSource::Built),
        };
        let mut stats = block_stats(input, bal, source, case.fork())?;
        let gas: Vec<u64> = case.baseline.receipts.iter().map(|r| r.gas_used).collect();
        stats.speculative = SPECULATIVE_THREADS
            .iter()
            .map(|&t| speculative_estimate(bal, &gas, t))
            .collect();
        blocks.push(stats);
        for a in account_sizes(bal) {
            let entry = per_account.entry(a.address).or_insert(AccountSize {
                address: a.address,
                rlp_bytes: 0,
                storage_writes: 0,
                storage_reads: 0,
            });
            entry.rlp_bytes += a.rlp_bytes;
            entry.storage_writes += a.storage_writes;
            entry.storage_reads += a.storage_reads;
        }
        on_block();
    }
    let mut top_accounts: Vec<AccountSize> = per_account.into_values().collect();
    sort_largest_first(&mut top_accounts);
    top_accounts.truncate(TOP_ACCOUNTS_PER_DATASET);
    Ok(summarise(dataset.name.clone(), blocks, top_accounts))
}

/// A data set's aggregates from its per-block measurements.
pub fn summarise(
    name: String,
    blocks: Vec<BlockStats>,
    top_accounts: Vec<AccountSize>,
) -> DatasetStats {
    let mut forks: Vec<&str> = Vec::new();
    for b in &blocks {
        if !forks.contains(&b.fork.as_str()) {
            forks.push(&b.fork);
        }
    }
    let by_fork = forks
        .iter()
        .map(|f| Aggregate::of(f, blocks.iter().filter(|b| b.fork == *f)))
        .collect();
    let total = Aggregate::of("total", &blocks);
    DatasetStats {
        name,
        blocks,
        by_fork,
        total,
        top_accounts,
    }
}

/// The result of `gigagas bal stats` (schema [`SCHEMA`]).
#[derive(Debug, Clone, Serialize)]
pub struct BalStatsReport {
    /// [`SCHEMA`].
    pub schema: String,
    /// The gigagas version that measured.
    pub gigagas_version: String,
    /// How each size is measured.
    pub encoding: Encoding,
    /// One entry per data set, in the order given.
    pub datasets: Vec<DatasetStats>,
    /// The build and host that measured (the bench result's `provenance` object:
    /// `gigagas_lab::Provenance`), set by the binary; absent when not recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

/// How the sizes in a report were measured.
#[derive(Debug, Clone, Serialize)]
pub struct Encoding {
    /// The RLP encoding.
    pub rlp: String,
    /// The snappy format.
    pub snappy: String,
    /// The zstd level.
    pub zstd_level: i32,
    /// What each variant holds.
    pub variants: Vec<(String, String)>,
}

/// The report of `datasets`.
pub fn report(datasets: Vec<DatasetStats>) -> BalStatsReport {
    BalStatsReport {
        schema: SCHEMA.into(),
        gigagas_version: env!("CARGO_PKG_VERSION").into(),
        encoding: Encoding {
            rlp: "EIP-7928 BlockAccessList, alloy-eip7928 0.4 (keccak of it is the header's \
                  blockAccessListHash)"
                .into(),
            snappy: "snappy raw block format (snap::raw), as devp2p compresses messages".into(),
            zstd_level: ZSTD_LEVEL,
            variants: vec![
                (
                    "keys".into(),
                    "EIP-7928 as specified: post-values per index + keys of slots only read + \
                     accounts only touched"
                        .into(),
                ),
                (
                    "writes".into(),
                    "changed accounts with their post-values per index; no read keys, no \
                     read-only accounts"
                        .into(),
                ),
                (
                    "full".into(),
                    "keys + pre-block value of every read slot and every written slot + every \
                     listed account's pre-block balance, nonce and code hash (no code)"
                        .into(),
                ),
            ],
        },
        datasets,
        provenance: None,
    }
}

/// One table of a report: title, column names, rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// What the table shows.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
}

fn kb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e3)
}

fn per_block(bytes: u64, blocks: usize) -> String {
    format!("{:.0}", bytes as f64 / blocks.max(1) as f64)
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

/// Per data set: the blocks, the forks and the total, as tables.
pub fn tables(report: &BalStatsReport) -> Vec<Table> {
    let mut out = Vec::new();
    for d in &report.datasets {
        let header = [
            "block",
            "fork",
            "txs",
            "Mgas",
            "block B",
            "BAL B",
            "snappy B",
            "zstd B",
            "B/Mgas",
            "% of block",
            "writes B",
            "full B",
            "accts",
            "slot writes",
            "slot reads",
            "bal/nonce/code",
            "largest account (B)",
        ];
        let rows = d
            .blocks
            .iter()
            .map(|b| {
                let c = &b.counts;
                vec![
                    b.number.to_string(),
                    b.fork.clone(),
                    b.txs.to_string(),
                    format!("{:.1}", b.gas_used as f64 / 1e6),
                    format!(
                        "{}{}",
                        b.block_rlp_bytes,
                        if b.ommers_without_header > 0 { "*" } else { "" }
                    ),
                    b.keys.rlp_bytes.to_string(),
                    b.keys.snappy_bytes.to_string(),
                    b.keys.zstd_bytes.to_string(),
                    opt(b.keys_bytes_per_mgas),
                    format!("{:.1}", b.keys_share_of_block * 100.0),
                    b.writes.rlp_bytes.to_string(),
                    b.full.rlp_bytes.to_string(),
                    c.accounts.to_string(),
                    c.storage_writes.to_string(),
                    c.storage_reads.to_string(),
                    format!(
                        "{}/{}/{}",
                        c.balance_changes, c.nonce_changes, c.code_changes
                    ),
                    b.top_accounts.first().map_or_else(
                        || "-".into(),
                        |a| format!("{} ({})", short(&a.address), a.rlp_bytes),
                    ),
                ]
            })
            .collect();
        out.push(Table {
            title: format!("{}: per block", d.name),
            header: header.iter().map(|s| (*s).to_owned()).collect(),
            rows,
        });
        let header = [
            "fork",
            "blocks",
            "txs",
            "Mgas",
            "BAL B/block",
            "snappy B/block",
            "zstd B/block",
            "B/Mgas",
            "% of block",
            "writes B/block",
            "full B/block",
            "full/keys",
            "writes/keys",
            "accts/block",
            "slot writes/block",
            "slot reads/block",
        ];
        let rows = d
            .by_fork
            .iter()
            .chain(std::iter::once(&d.total))
            .map(|a| {
                let n = a.blocks;
                vec![
                    format!(
                        "{}{}",
                        a.label,
                        if a.ommers_without_header > 0 { "*" } else { "" }
                    ),
                    n.to_string(),
                    a.txs.to_string(),
                    format!("{:.1}", a.gas_used as f64 / 1e6),
                    per_block(a.keys.rlp_bytes, n),
                    per_block(a.keys.snappy_bytes, n),
                    per_block(a.keys.zstd_bytes, n),
                    opt(a.keys_bytes_per_mgas),
                    format!("{:.1}", a.keys_share_of_block * 100.0),
                    per_block(a.writes.rlp_bytes, n),
                    per_block(a.full.rlp_bytes, n),
                    format!("{:.2}", a.full_over_keys),
                    format!("{:.2}", a.writes_over_keys),
                    per_block(a.counts.accounts, n),
                    per_block(a.counts.storage_writes, n),
                    per_block(a.counts.storage_reads, n),
                ]
            })
            .collect();
        out.push(Table {
            title: format!(
                "{}: per fork (sizes per block; total {} kB BAL, {} kB blocks)",
                d.name,
                kb(d.total.keys.rlp_bytes),
                kb(d.total.block_rlp_bytes)
            ),
            header: header.iter().map(|s| (*s).to_owned()).collect(),
            rows,
        });
        out.push(Table {
            title: format!("{}: largest accounts over all blocks", d.name),
            header: ["account", "BAL B", "slot writes", "slot reads"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            rows: d
                .top_accounts
                .iter()
                .map(|a| {
                    vec![
                        a.address.to_string(),
                        a.rlp_bytes.to_string(),
                        a.storage_writes.to_string(),
                        a.storage_reads.to_string(),
                    ]
                })
                .collect(),
        });
        if let Some(table) = speculative_table(d) {
            out.push(table);
        }
    }
    out
}

/// The speculative-engine estimate of a data set ([`speculative_estimate`]), summed over its
/// blocks, one row per thread count; `None` when no block carries one.
fn speculative_table(d: &DatasetStats) -> Option<Table> {
    let txs: usize = d.blocks.iter().map(|b| b.txs).sum();
    let gas: u64 = d.blocks.iter().map(|b| b.gas_used).sum();
    let rows: Vec<Vec<String>> = SPECULATIVE_THREADS
        .iter()
        .map(|&t| {
            let of_t = || {
                d.blocks
                    .iter()
                    .flat_map(|b| &b.speculative)
                    .filter(move |s| s.threads == t)
            };
            let (n, g) = (
                of_t().map(|s| s.reexecuted_txs).sum::<u64>(),
                of_t().map(|s| s.reexecuted_gas).sum::<u64>(),
            );
            vec![
                t.to_string(),
                format!("{n} of {txs}"),
                format!("{:.1}", ratio(n, txs as u64) * 100.0),
                format!("{:.1}", g as f64 / 1e6),
                format!("{:.1}", ratio(g, gas) * 100.0),
            ]
        })
        .collect();
    d.blocks.iter().any(|b| !b.speculative.is_empty()).then(|| Table {
        title: format!(
            "{}: what a speculative engine would re-execute (estimate: a transaction writing a slot an earlier one of its window of T also writes is re-executed once, in full)",
            d.name
        ),
        header: ["threads", "txs re-executed", "% of txs", "Mgas re-executed", "% of gas"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        rows,
    })
}

fn short(a: &Address) -> String {
    let s = a.to_string();
    format!("{}…{}", &s[..6], &s[s.len() - 4..])
}

/// The tables of `report` in markdown, with the footnote for blocks whose ommer headers the
/// data set lacks.
pub fn markdown(report: &BalStatsReport) -> String {
    let mut out = String::new();
    for t in tables(report) {
        out.push_str(&format!("**{}**\n\n", t.title));
        out.push_str(&format!("| {} |\n", t.header.join(" | ")));
        out.push_str(&format!(
            "|{}\n",
            t.header.iter().map(|_| "---|").collect::<String>()
        ));
        for row in &t.rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out.push('\n');
    }
    out.push_str(FOOTNOTE);
    out.push('\n');
    out
}

/// What the `*` in the tables means, and how sizes are defined.
pub const FOOTNOTE: &str = "Sizes in bytes; BAL = EIP-7928 RLP (keys variant), snappy raw and \
zstd level 3 of that RLP, each block on its own. `*`: the block has ommers whose headers the data \
set lacks (only hashes): its block size leaves them out (a lower bound). writes = diffs only; \
full = keys + pre-block values of every read and written slot and every account's balance, nonce, \
code hash.";
