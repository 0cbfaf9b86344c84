//! The state root: one interface, three implementations, chosen in one place.
//!
//! - **From scratch** ([`full_root`]): the root of a whole post-state, serial or with storage
//!   tries hashed in parallel (`gigagas_state`). The reference every other root is checked
//!   against ([`post_state_root`]), and what `RootMode::Serial`/`Parallel` compute.
//! - **Incremental in memory** ([`MemoryRoot`], an [`IncrementalState`] over
//!   `gigagas_trie::MemoryStore`): branch nodes kept between blocks, only the paths a block's
//!   BAL names re-hashed.
//! - **Incremental on the store** ([`crate::DiskRoot`], an [`IncrementalState`] over the MDBX
//!   store of `gigagas-store`): the same, with one write transaction per verified block, and
//!   the next block read through the last one's writes while they commit (the overlay).
//!
//! [`RootMode`] names the choice; [`incremental_state`] makes it for the pipeline.

use alloy_primitives::{Address, B256, U256};
use gigagas_data::PreState;

/// Which state root the pipeline computes after each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootMode {
    /// No root: the pure-execution condition.
    None,
    /// The root on one thread.
    Serial,
    /// Storage tries hashed in parallel on the thread budget, then the account trie.
    Parallel,
    /// Incremental and parallel (`gigagas_trie`): the branch nodes of the state are kept
    /// between blocks and only the paths the block's BAL names are re-hashed, hot storage
    /// tries split by key prefix. Needs complete states that ship their BALs (generated
    /// chains); the node store is built from the first block's pre-state before timing starts.
    Incremental,
}

impl RootMode {
    /// Name as used on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Serial => "serial",
            Self::Parallel => "parallel",
            Self::Incremental => "incremental",
        }
    }
}

impl std::str::FromStr for RootMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Self::None),
            "serial" => Ok(Self::Serial),
            "parallel" => Ok(Self::Parallel),
            "incremental" => Ok(Self::Incremental),
            _ => Err(format!(
                "unknown root mode {s:?} (expected none, serial, parallel or incremental)"
            )),
        }
    }
}

/// Where `RootMode::Incremental` keeps the state's branch nodes between blocks: in memory
/// ([`MemoryRoot`], built from the first pre-state) or on disk ([`crate::DiskRoot`], one
/// write transaction per block). Used in block order, on the thread budget's rayon pool, in
/// two steps per block: [`Self::compute`] (runs beside the block's execution, from the
/// changes its shipped BAL gives) and, once the block verified, [`Self::commit`]. Nothing
/// durable is written for a block that failed, nor after it (the in-memory store, which
/// lives only as long as its run, takes each block's nodes at its compute: a failed block
/// ends the run and the store with it).
///
/// The next block's `compute` and [`Self::snapshot`] come after that commit, unless the
/// state [`Self::overlays`]: then they read through the blocks computed and not yet
/// committed, so they may run while the block before commits. Each implementation
/// synchronises itself (`&self` throughout); a commit may run beside the next compute only
/// where [`Self::overlays`] is true.
pub trait IncrementalState: Send + Sync {
    /// Computes one block's new root and the updates that give it; writes nothing durable.
    /// A store that checks roots refuses one that differs from `input.header.state_root` on
    /// complete states. With [`Self::overlays`], the next block's reads see this block from
    /// now on.
    fn compute(
        &self,
        input: &gigagas_data::BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String>;

    /// Writes what [`Self::compute`] computed for `input` (a verified block, in block
    /// order); returns the new root.
    fn commit(
        &self,
        input: &gigagas_data::BlockInput,
        pending: PendingRoot,
    ) -> Result<B256, String>;

    /// Whether the next block's [`Self::compute`] and [`Self::snapshot`] may start before
    /// this block's [`Self::commit`] (they read the blocks computed and not yet committed
    /// from memory). Default: no, they wait for the commit.
    fn overlays(&self) -> bool {
        false
    }

    /// The state after the last block computed (with [`Self::overlays`]) or committed, for
    /// the next block to execute against, read by up to `readers` threads at once; `None`
    /// when execution reads the block's in-memory pre-state instead.
    fn snapshot(&self, readers: usize) -> Result<Option<DiskSnapshot>, String> {
        let _ = readers;
        Ok(None)
    }

    /// Whether the next block executes against [`Self::snapshot`] (a disk store's state,
    /// which the last block's commit or overlay moves). Default yes: its execution waits as
    /// its [`Self::compute`] does. No (the in-memory node store, whose blocks execute against
    /// their own pre-states): execution need not wait for the commit; only the next compute
    /// does.
    fn executes_on_snapshot(&self) -> bool {
        true
    }

    /// Work between blocks that is not a node's (cold mode: dropping the page cache), run
    /// after each commit; its time is left out of the run's wall time. Back-to-back pipelines
    /// only (the stages of other blocks would overlap it).
    fn between_blocks(&self) -> Result<(), String> {
        Ok(())
    }

    /// Whether [`Self::between_blocks`] has work to do.
    fn needs_between_blocks(&self) -> bool {
        false
    }

    /// After the last block's commit: makes what is not yet durable durable (the disk
    /// store's `--sync every-N|end`); `true` when there was something to flush. Part of the
    /// run's wall time.
    fn finish(&self) -> Result<bool, String> {
        Ok(false)
    }

    /// What block `number`'s commit waited for and wrote (a disk store's; `None` in memory).
    fn block_write(&self, number: u64) -> Option<BlockWrite> {
        let _ = number;
        None
    }

    /// The trie buffer's flush at the end of the run ([`Self::finish`]), if it made one.
    fn final_flush(&self) -> Option<Flush> {
        None
    }

    /// The trie buffer's journal written at the end of the run ([`Self::finish`]), if it
    /// wrote one.
    fn final_journal(&self) -> Option<gigagas_store::JournalStats> {
        None
    }
}

/// What one block's commit ([`IncrementalState::commit`]) waited for and wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct BlockWrite {
    /// The block.
    pub number: u64,
    /// Its write transaction (flat state only, with the trie buffer), ns.
    pub write_ns: u64,
    /// The persistence wait: time the commit spent waiting for durable writes before the
    /// next block could commit — the previous `--sync every-N` flush, and this block's
    /// trie-buffer flush if it filled the buffer — ns.
    pub persist_wait_ns: u64,
    /// The trie buffer after this block: blocks held and memory, estimated (0 without a
    /// buffer).
    pub buffer_blocks: u64,
    /// Bytes the trie buffer held after this block (estimated).
    pub buffer_bytes: u64,
    /// The trie-buffer flush this block's commit made (it filled the buffer).
    pub flush: Option<Flush>,
    /// Bytes it appended to the write-ahead log (0 without one).
    pub wal_bytes: u64,
}

/// One flush of the trie buffer: its nodes written to the store as one sorted batch (the
/// store's own account of it).
pub type Flush = gigagas_store::FlushStats;

/// A block's root computed by [`IncrementalState::compute`], not yet written.
#[derive(Debug)]
pub enum PendingRoot {
    /// The in-memory node store's block (its nodes already taken at the compute): its root.
    Memory(B256),
    /// The disk store's computed block.
    Disk(gigagas_store::PendingBlock),
}

impl PendingRoot {
    /// The root the block will have.
    pub fn root(&self) -> B256 {
        match self {
            Self::Memory(root) => *root,
            Self::Disk(p) => p.head().state_root,
        }
    }
}

/// The in-memory node store as the incremental root's state. A compute takes the block's
/// nodes into the store at once (the read lock for the compute, which forks on the pool, then
/// the write lock for its updates), so the next block's compute reads this block's nodes
/// without waiting for its verification and commit ([`IncrementalState::overlays`]), as a
/// node keeps its sparse trie from one block to the next (reth's payload processor). The
/// commit then only hands back the root. The store lives as long as its run: a block that
/// fails verification or its root check ends the run, and the store is dropped with it.
/// (In the 16-thread rows of the H200 runs, block N+1's root started a median 16 ms, 1–76
/// ms, after block N's had ended: it waited for N's verification and write,
/// `docs/results/pipeline-pool-2core-2026-11-28.md`.)
#[derive(Debug)]
pub struct MemoryRoot(std::sync::RwLock<gigagas_trie::MemoryStore>);

impl MemoryRoot {
    /// The state in `store`.
    pub fn new(store: gigagas_trie::MemoryStore) -> Self {
        Self(std::sync::RwLock::new(store))
    }
}

impl IncrementalState for MemoryRoot {
    fn compute(
        &self,
        _input: &gigagas_data::BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String> {
        let updates = {
            let store = self.0.read().map_err(|_| poisoned())?;
            gigagas_trie::compute_updates(&*store, changes, gigagas_trie::Parallelism::DEFAULT)
                .map_err(|e| e.to_string())?
        };
        let root = updates.root;
        let mut store = self.0.write().map_err(|_| poisoned())?;
        gigagas_trie::write_updates(&mut *store, updates).map_err(|e| e.to_string())?;
        Ok(PendingRoot::Memory(root))
    }

    fn commit(
        &self,
        input: &gigagas_data::BlockInput,
        pending: PendingRoot,
    ) -> Result<B256, String> {
        match pending {
            PendingRoot::Memory(root) => Ok(root),
            PendingRoot::Disk(_) => Err(format!(
                "block {}: a disk store's result given to the in-memory node store",
                input.number()
            )),
        }
    }

    fn overlays(&self) -> bool {
        true
    }

    fn executes_on_snapshot(&self) -> bool {
        false
    }
}

fn poisoned() -> String {
    "the node store's lock was poisoned: a thread panicked while it held it".to_owned()
}

/// The state a block executes against when it is on disk: a read snapshot of the store with
/// the blocks before it that are not yet committed laid over it.
pub type DiskSnapshot = gigagas_store::DiskState<gigagas_store::Layered<gigagas_store::ReadTxn>>;

/// The accounts `bal` writes, as they are after the block: what [`change_set`] needs, without
/// copying the rest of the state. Storage is copied only for an account whose info ends
/// empty (EIP-161: it is deleted unless storage remains); other accounts carry none (the
/// storage changes come from the BAL itself). Each account is built on the current pool:
/// on one thread (a keccak per code, a map entry per slot) this took 7–9 ms of a dense 300M
/// block's root stage at 2 threads (the first block 35–85 ms), half as long as the walk of
/// its tries, where the block executes in ~5 ms at 16 threads (issue 39).
pub fn touched_post_state(pre: &PreState, bal: &alloy_eip7928::BlockAccessList) -> PreState {
    use rayon::prelude::*;
    if !bal.windows(2).all(|w| w[0].address < w[1].address) {
        // Not in strict address order (a list its validation refuses; an account listed
        // twice has its entries applied one after another, as `apply_bal` applies them).
        return touched_post_state_in_order(pre, bal);
    }
    let built: Vec<(Address, gigagas_data::PreAccount)> = bal
        .par_iter()
        .with_min_len(64)
        .filter(|c| gigagas_data::chain::writes_anything(c))
        .filter_map(|changes| {
            let mut account = account_before(pre, changes);
            gigagas_data::chain::apply_account_changes(&mut account, changes);
            // EIP-161: a touched account left empty does not exist afterwards.
            let exists = !account.info.is_empty() || account.has_storage();
            exists.then_some((changes.address, account))
        })
        .collect();
    PreState::new(built.into_iter().collect(), pre.block_hashes().clone())
}

/// What [`touched_post_state`] starts an account the list writes from: its info before the
/// block, and its storage only where the info ends empty (EIP-161 then asks whether any
/// remains).
fn account_before(
    pre: &PreState,
    changes: &alloy_eip7928::AccountChanges,
) -> gigagas_data::PreAccount {
    let before = pre.account(&changes.address);
    let mut info = before.map(|a| a.info.clone()).unwrap_or_default();
    if let Some(c) = changes.balance_changes.last() {
        info.balance = c.post_balance;
    }
    if let Some(c) = changes.nonce_changes.last() {
        info.nonce = c.new_nonce;
    }
    if let Some(c) = changes.code_changes.last() {
        info.code_hash = alloy_primitives::keccak256(&c.new_code);
    }
    let (storage, fill) = match before {
        Some(a) if info.is_empty() => (a.storage.clone(), a.fill),
        _ => Default::default(),
    };
    gigagas_data::PreAccount {
        info: before.map(|a| a.info.clone()).unwrap_or_default(),
        storage,
        fill,
    }
}

/// [`touched_post_state`] for a list out of address order: the entries applied in list
/// order on one thread.
fn touched_post_state_in_order(pre: &PreState, bal: &alloy_eip7928::BlockAccessList) -> PreState {
    let mut accounts: alloy_primitives::map::HashMap<_, _> = Default::default();
    for changes in bal {
        if gigagas_data::chain::writes_anything(changes) {
            accounts.insert(changes.address, account_before(pre, changes));
        }
    }
    gigagas_data::chain::apply_bal(&mut accounts, bal);
    PreState::new(accounts, pre.block_hashes().clone())
}

/// A block's changes as the incremental trie takes them, from its BAL and the post-state the
/// BAL gives (hashed keys; an account left out of the post-state is deleted). Accounts are
/// hashed on the current pool, and the slots of an account that writes many (a hot
/// account's thousands) too: one thread hashing them took 11–17 ms of a dense 300M block.
pub fn change_set(
    bal: &alloy_eip7928::BlockAccessList,
    post: &PreState,
) -> gigagas_trie::ChangeSet {
    use alloy_primitives::keccak256;
    use rayon::prelude::*;
    let mut accounts: Vec<(B256, gigagas_trie::AccountChange)> = bal
        .par_iter()
        .with_min_len(64)
        .filter(|a| gigagas_data::chain::writes_anything(a))
        .map(|account| {
            let info = post
                .account(&account.address)
                .map(|a| gigagas_trie::AccountInfo {
                    nonce: a.info.nonce,
                    balance: a.info.balance,
                    code_hash: a.info.code_hash,
                });
            let change = gigagas_trie::AccountChange {
                info,
                storage_wiped: false,
                storage: hashed_slots(&account.storage_changes),
            };
            (keccak256(account.address), change)
        })
        .collect();
    // Sorted on the pool (stable: of keys listed twice the later stays, as with inserting),
    // then built at once.
    accounts.par_sort_by(|a, b| a.0.cmp(&b.0));
    gigagas_trie::ChangeSet {
        accounts: accounts.into_iter().collect(),
    }
}

/// Slots an account's list entry writes, by keccak(slot), with their last value (on the
/// current pool from [`PARALLEL_SLOTS`] slots).
fn hashed_slots(slots: &[alloy_eip7928::SlotChanges]) -> std::collections::BTreeMap<B256, U256> {
    use rayon::prelude::*;
    let hashed = |slot: &alloy_eip7928::SlotChanges| {
        let last = slot.changes.last()?;
        Some((
            alloy_primitives::keccak256(slot.slot.to_be_bytes::<32>()),
            last.new_value,
        ))
    };
    if slots.len() < PARALLEL_SLOTS {
        return slots.iter().filter_map(hashed).collect();
    }
    let mut hashed: Vec<_> = slots
        .par_iter()
        .with_min_len(256)
        .filter_map(hashed)
        .collect();
    hashed.par_sort_by(|a, b| a.0.cmp(&b.0));
    hashed.into_iter().collect()
}

/// Slots of one account from which [`change_set`] hashes them on the pool.
const PARALLEL_SLOTS: usize = 1024;

/// A block's changes as the incremental trie takes them, from what its execution changed
/// (`post`, the run's cache) with no list: every modified account, and of its storage the
/// slots whose value differs from `pre` (revm's cache also holds the slots it only read), as
/// a node's own bundle state gives them. A destroyed account's storage is wiped first.
pub fn change_set_of_execution(
    pre: &PreState,
    post: &(impl gigagas_data::FinalAccounts + ?Sized),
) -> gigagas_trie::ChangeSet {
    use alloy_primitives::keccak256;
    let mut changes = gigagas_trie::ChangeSet::default();
    for (address, cached) in post.final_accounts() {
        if cached.status.is_not_modified() {
            continue;
        }
        let wiped = cached.status.was_destroyed();
        let before = pre.account(address).filter(|_| !wiped);
        let info = cached.account.as_ref().map(|a| gigagas_trie::AccountInfo {
            nonce: a.info.nonce,
            balance: a.info.balance,
            code_hash: a.info.code_hash,
        });
        let storage = cached
            .account
            .iter()
            .flat_map(|a| a.storage.iter())
            .filter(|(slot, value)| {
                before.map_or(alloy_primitives::U256::ZERO, |b| b.slot(slot)) != **value
            })
            .map(|(slot, value)| (keccak256(slot.to_be_bytes::<32>()), *value))
            .collect();
        changes.accounts.insert(
            keccak256(address),
            gigagas_trie::AccountChange {
                info,
                storage_wiped: wiped,
                storage,
            },
        );
    }
    changes
}

/// The root of a whole post-state from scratch, `mode` `serial` (on the calling thread) or
/// `parallel`
/// (storage tries spread over the current pool: the budget).
pub fn full_root(mode: RootMode, state: &PreState) -> B256 {
    match mode {
        RootMode::Serial => gigagas_state::state_root_serial(state),
        _ => gigagas_state::state_root(state),
    }
}

/// The state root after a block: its touched accounts (`post`, a run's final cache) applied
/// to `pre` ([`gigagas_state::apply_changes`]) and the root computed from scratch. The
/// reference every incremental root is checked against.
pub fn post_state_root(pre: &PreState, post: &(impl gigagas_data::FinalAccounts + ?Sized)) -> B256 {
    gigagas_state::state_root(&gigagas_state::apply_changes(pre, post))
}

/// The incremental root's node store for a run in `mode`: `given` (the store on disk, which
/// must hold the first block's pre-state) or, for `RootMode::Incremental` without one, an
/// in-memory node store built from `first_pre_state` on the current rayon pool (before any
/// timing starts: a node has its state when it starts). `None` for the from-scratch modes.
pub fn incremental_state<'a>(
    mode: RootMode,
    given: Option<Box<dyn IncrementalState + 'a>>,
    first_pre_state: Option<&PreState>,
) -> Option<Box<dyn IncrementalState + 'a>> {
    if mode != RootMode::Incremental {
        return None;
    }
    given.or_else(|| {
        first_pre_state.map(|pre| {
            let (_, store) = gigagas_trie::from_prestate(pre, gigagas_trie::Parallelism::DEFAULT);
            Box::new(MemoryRoot::new(store)) as Box<dyn IncrementalState>
        })
    })
}
