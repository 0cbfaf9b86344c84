//! The store as the state a block executes against: `gigagas_exec::StateProvider` over one
//! read snapshot.

use crate::{kv::KvRead, View};
use alloy_primitives::{keccak256, map::HashMap, Address, B256, U256};
use alloy_trie::EMPTY_ROOT_HASH;
use gigagas_data::PreStateError;
use gigagas_exec::{StateProvider, StorageProbe};
use revm::{
    bytecode::Bytecode, database_interface::DatabaseRef, primitives::KECCAK_EMPTY,
    state::AccountInfo,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Analysed bytecode by code hash, kept across blocks (a node keeps its code cache too):
/// code read from disk is analysed (jump table) once, not once per transaction. Loads are
/// single-flight: workers that miss the same code at once wait for one store read instead
/// of each reading it (so a block's demand reads do not depend on thread timing).
#[derive(Debug, Default)]
pub struct CodeCache(RwLock<HashMap<B256, Arc<Mutex<Option<Bytecode>>>>>);

impl CodeCache {
    /// Codes held (loaded, or being loaded).
    pub fn len(&self) -> usize {
        self.0.read().map_or(0, |c| c.len())
    }

    /// Whether no code is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of `code_hash`: the existing one, or a new empty one.
    fn slot(&self, code_hash: B256) -> Arc<Mutex<Option<Bytecode>>> {
        if let Some(slot) = self.0.read().ok().and_then(|c| c.get(&code_hash).cloned()) {
            return slot;
        }
        match self.0.write() {
            Ok(mut cache) => cache.entry(code_hash).or_default().clone(),
            // A poisoned cache (a worker panicked holding it): load without caching.
            Err(_) => Arc::default(),
        }
    }
}

/// The state before a block as the store holds it: one read snapshot (a [`crate::Layered`]
/// one in the pipeline: the blocks before it not yet committed laid over it, so that later
/// writes are invisible to it) shared by every worker, with the code cache. Reads hash the
/// address and slot (the store is keyed by hashes).
#[derive(Debug)]
pub struct DiskState<T> {
    view: View<T>,
    codes: Arc<CodeCache>,
    warm: Warm,
    /// Reads that went to the store while executing (accounts, slots and code not held in
    /// memory): [`Self::demand_reads`].
    demand: AtomicU64,
    /// Items read ahead of execution: [`Self::read_ahead`].
    ahead: AtomicU64,
}

/// Accounts and slots read ahead of execution ([`DiskState::prefetch`]), by address: what
/// the block's BAL names, answered from memory instead of a hashed store lookup.
#[derive(Debug, Default)]
struct Warm {
    accounts: HashMap<Address, Option<AccountInfo>>,
    slots: HashMap<(Address, U256), U256>,
}

impl<T: KvRead> DiskState<T> {
    /// The state in `view`, analysed code cached in `codes`.
    pub fn new(view: View<T>, codes: Arc<CodeCache>) -> Self {
        Self {
            view,
            codes,
            warm: Warm::default(),
            demand: AtomicU64::new(0),
            ahead: AtomicU64::new(0),
        }
    }

    /// Reads every account and slot `bal` names and the trie nodes on their paths:
    /// [`Self::prefetch_values`] then [`Self::warm_trie_paths`]. Returns the number of items
    /// read.
    pub fn prefetch(
        &mut self,
        bal: &alloy_eip7928::BlockAccessList,
    ) -> Result<usize, PreStateError> {
        Ok(self.prefetch_values(bal)? + self.warm_trie_paths(bal)?)
    }

    /// Holds the given pre-block values (a `full` BAL's: they came with the block), so that
    /// execution reads them from memory and not from the store.
    pub fn supply(
        &mut self,
        accounts: impl IntoIterator<Item = (Address, Option<AccountInfo>)>,
        slots: impl IntoIterator<Item = ((Address, U256), U256)>,
    ) {
        self.warm.accounts.extend(accounts);
        self.warm.slots.extend(slots);
    }

    /// How many reads went to the store on demand since this snapshot was taken: accounts,
    /// slots and code that neither a prefetch nor [`Self::supply`] nor the code cache held
    /// (each one a wait on the device when cold, on the executing thread).
    pub fn demand_reads(&self) -> u64 {
        self.demand.load(Ordering::Relaxed)
    }

    /// Distinct items read ahead since this snapshot was taken: accounts and slots
    /// ([`Self::prefetch_values`]) and trie nodes on the changed paths
    /// ([`Self::warm_trie_paths`]). With both read, the least a block can read from a cold
    /// store: every item at least once, so its pages read over this count says how far the
    /// layout is from that minimum.
    pub fn read_ahead(&self) -> u64 {
        self.ahead.load(Ordering::Relaxed)
    }

    fn on_demand(&self) {
        self.demand.fetch_add(1, Ordering::Relaxed);
    }

    /// Reads every account and slot `bal` names (in parallel on the current rayon pool, in
    /// the store's key order: hashed address, then hashed slot) and keeps them, so that
    /// execution reads them from memory. Returns the number of items read.
    pub fn prefetch_values(
        &mut self,
        bal: &alloy_eip7928::BlockAccessList,
    ) -> Result<usize, PreStateError> {
        use rayon::prelude::*;
        // (hashed address, hashed slot or None for the account, address, slot)
        let mut keys: Vec<(B256, Option<B256>, Address, U256)> = Vec::new();
        for account in bal {
            let address = account.address;
            let owner = keccak256(address);
            keys.push((owner, None, address, U256::ZERO));
            let slots = account
                .storage_changes
                .iter()
                .map(|c| c.slot)
                .chain(account.storage_reads.iter().copied());
            keys.extend(slots.map(|slot| {
                (
                    owner,
                    Some(keccak256(slot.to_be_bytes::<32>())),
                    address,
                    slot,
                )
            }));
        }
        keys.sort_unstable_by_key(|k| (k.0, k.1));
        let view = &self.view;
        let read: Vec<Read> = keys
            .par_chunks(64)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|(owner, hashed_slot, address, slot)| match hashed_slot {
                        None => view
                            .account_leaf(owner)
                            .map(|leaf| Read::Account(*address, leaf.map(|a| info(&a))))
                            .map_err(|e| store_error(&format!("account {address}"), e)),
                        Some(h) => view
                            .slot(owner, h)
                            .map(|v| Read::Slot(*address, *slot, v))
                            .map_err(|e| store_error(&format!("slot {slot} of {address}"), e)),
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect();
        let n = read.len();
        self.ahead.fetch_add(n as u64, Ordering::Relaxed);
        for r in read {
            match r {
                Read::Account(address, info) => {
                    self.warm.accounts.insert(address, info);
                }
                Read::Slot(address, slot, value) => {
                    self.warm.slots.insert((address, slot), value);
                }
            }
        }
        Ok(n)
    }

    /// Reads the trie's branch nodes on the paths of the BAL's accounts and changed slots
    /// ([`gigagas_trie::warm_paths`], in parallel on the current rayon pool), so that the
    /// root's walks find them in the page cache. Returns the number of nodes read.
    pub fn warm_trie_paths(
        &self,
        bal: &alloy_eip7928::BlockAccessList,
    ) -> Result<usize, PreStateError> {
        use rayon::prelude::*;
        let view = &self.view;
        // The branch nodes the root's walks will read: the account trie along every BAL
        // account, each storage trie along its changed slots. Read (into the page cache),
        // not kept.
        let mut tries: Vec<(Option<B256>, Vec<B256>)> =
            vec![(None, bal.iter().map(|a| keccak256(a.address)).collect())];
        tries.extend(
            bal.iter()
                .filter(|a| !a.storage_changes.is_empty())
                .map(|a| {
                    let slots = a
                        .storage_changes
                        .iter()
                        .map(|c| keccak256(c.slot.to_be_bytes::<32>()))
                        .collect();
                    (Some(keccak256(a.address)), slots)
                }),
        );
        let nodes = tries
            .par_iter()
            .map(|(owner, keys)| {
                gigagas_trie::warm_paths(view, *owner, keys)
                    .map_err(|e| store_error("trie nodes", e))
            })
            .collect::<Result<Vec<usize>, _>>()?
            .into_iter()
            .sum::<usize>();
        self.ahead.fetch_add(nodes as u64, Ordering::Relaxed);
        Ok(nodes)
    }

    /// The snapshot.
    pub fn view(&self) -> &View<T> {
        &self.view
    }
}

enum Read {
    Account(Address, Option<AccountInfo>),
    Slot(Address, U256, U256),
}

fn info(a: &alloy_trie::TrieAccount) -> AccountInfo {
    AccountInfo {
        balance: a.balance,
        nonce: a.nonce,
        code_hash: a.code_hash,
        code: None,
        ..Default::default()
    }
}

fn store_error(what: &str, e: impl std::fmt::Display) -> PreStateError {
    PreStateError::Store(format!("{what}: {e}"))
}

impl<T: KvRead> DatabaseRef for DiskState<T> {
    type Error = PreStateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, PreStateError> {
        if let Some(warm) = self.warm.accounts.get(&address) {
            return Ok(warm.clone());
        }
        self.on_demand();
        let leaf = self
            .view
            .account_leaf(&keccak256(address))
            .map_err(|e| store_error(&format!("account {address}"), e))?;
        Ok(leaf.map(|a| info(&a)))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, PreStateError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        let slot = self.codes.slot(code_hash);
        // Held while reading: another worker missing the same code waits for this read.
        let mut held = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(code) = held.as_ref() {
            return Ok(code.clone());
        }
        self.on_demand();
        let bytes = self
            .view
            .code(&code_hash)
            .map_err(|e| store_error(&format!("code {code_hash}"), e))?
            .ok_or(PreStateError::MissingCode(code_hash))?;
        let code = Bytecode::new_raw(bytes.into());
        *held = Some(code.clone());
        Ok(code)
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, PreStateError> {
        if let Some(value) = self.warm.slots.get(&(address, index)) {
            return Ok(*value);
        }
        self.on_demand();
        self.view
            .slot(&keccak256(address), &keccak256(index.to_be_bytes::<32>()))
            .map_err(|e| store_error(&format!("slot {index} of {address}"), e))
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, PreStateError> {
        self.view
            .block_hash(number)
            .map_err(|e| store_error(&format!("block hash {number}"), e))?
            .ok_or(PreStateError::MissingBlockHash(number))
    }
}

impl<T: KvRead> StorageProbe for DiskState<T> {
    /// Non-empty storage ⇔ the account's storage root is not the empty trie's. A read that
    /// fails answers "has storage" (the creation then collides), so the transaction's result
    /// differs from the BAL's and verification names it: never a silent pass.
    fn has_storage(&self, address: Address) -> bool {
        self.on_demand();
        match self.view.account_leaf(&keccak256(address)) {
            Ok(leaf) => leaf.is_some_and(|a| a.storage_root != EMPTY_ROOT_HASH),
            Err(_) => true,
        }
    }
}

impl<T: KvRead> StateProvider for DiskState<T> {}
