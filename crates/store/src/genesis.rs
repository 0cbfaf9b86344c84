//! A genesis state loaded in memory bounded independently of its size: the slots of a
//! `storage_fill` account generated in hashed-key order (in passes, each over one range of
//! hashed keys, so at most [`GenesisOptions::pass_slots`] slots are held at a time), appended
//! to the storage table in key order, and every trie built on the fly by
//! [`gigagas_trie::StreamBuilder`] (its branch nodes written as they complete, its root kept).
//! Also the streaming verification of a whole store ([`Store::verify_streaming`]).

use crate::{
    codec,
    kv::{Backend, KvRead, KvWrite, Table},
    Counts, Error, Head, Store, Verified,
};
use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_trie::{Nibbles, TrieAccount, EMPTY_ROOT_HASH, KECCAK_EMPTY};
use gigagas_data::chain::{check_storage_fill, AllocAccount, StorageFill};
use gigagas_trie::{join_parts, BranchNode, StreamBuilder, StreamError};
use rayon::prelude::*;
use std::{
    cell::RefCell,
    collections::BTreeMap,
    path::Path,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, PoisonError,
    },
};

/// Slots above which [`Store::verify_streaming`] rebuilds a storage trie as 16 parts in
/// parallel; below it, an owner's trie is one stream (the split's 16 seeks and threads cost
/// more than they save).
pub const SPLIT_SLOTS: u64 = 1 << 16;

/// Accounts whose storage tries `verify_streaming` rebuilds at once, in parallel: its memory
/// is one window of accounts (and their tries' open paths), however many the state holds.
const VERIFY_WINDOW: usize = 1024;

/// A storage key's owner and hashed slot; a key that is not 64 bytes is corrupt.
fn storage_key(k: &[u8]) -> Result<(B256, B256), Error> {
    if k.len() != 64 {
        return Err(Error::Corrupt {
            table: Table::Storage.name(),
            key: codec::hex(k),
            what: "storage key is not 64 bytes".into(),
        });
    }
    Ok((B256::from_slice(&k[..32]), B256::from_slice(&k[32..])))
}

/// Bytes of store per genesis slot, measured (`docs/results/hot-account-10gb-2core.md`:
/// 1M and 10M slots of one account), rounded up: the slot record and its share of the storage
/// trie's branch nodes and of the B-tree pages.
pub const STORE_BYTES_PER_SLOT: u64 = 210;

/// Bytes of store a genesis with `slots` slots and `accounts` accounts takes (an estimate
/// for the free-space check; [`STORE_BYTES_PER_SLOT`] per slot, 256 per account, 16 MiB
/// for the rest).
pub fn estimate_store_bytes(slots: u64, accounts: u64) -> u64 {
    slots
        .saturating_mul(STORE_BYTES_PER_SLOT)
        .saturating_add(accounts.saturating_mul(256))
        .saturating_add(16 << 20)
}

/// Free bytes for an unprivileged user on the file system holding `path` (`statvfs`).
#[cfg(unix)]
pub fn free_bytes(path: &Path) -> Result<u64, Error> {
    use std::os::unix::ffi::OsStrExt;
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `s` a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    if rc != 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    Ok((s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

/// Free bytes on the file system holding `path` (not known off Unix: no limit).
#[cfg(not(unix))]
pub fn free_bytes(_path: &Path) -> Result<u64, Error> {
    Ok(u64::MAX)
}

/// How a streamed genesis load runs.
#[derive(Debug, Clone, Copy)]
pub struct GenesisOptions {
    /// Most slots of one account generated, sorted and held at once (40 bytes each); an
    /// account with more is generated in several passes over its whole slot range, each
    /// keeping the slots of one range of hashed keys.
    pub pass_slots: usize,
    /// Slots per write transaction (each commit is durable; the head record is written only
    /// by the last one, so an interrupted load never looks complete).
    pub commit_slots: u64,
}

impl Default for GenesisOptions {
    /// 8 Mi slots per pass (≈ 320 MiB), 2 Mi slots per commit.
    fn default() -> Self {
        Self {
            pass_slots: 8 << 20,
            commit_slots: 2 << 20,
        }
    }
}

/// Where an account's genesis slots come from.
enum Slots<'a> {
    /// Listed in the allocation.
    Listed(&'a BTreeMap<U256, U256>),
    /// Account `k` of a fill entry.
    Fill(&'a StorageFill, u64),
    /// A pre-state's account: its listed slots merged with its rule's, if any.
    Account(&'a gigagas_data::PreAccount),
}

struct GenesisAccount<'a> {
    hashed: B256,
    nonce: u64,
    balance: U256,
    code_hash: B256,
    slots: Slots<'a>,
}

/// Total slots of a genesis (`alloc`'s non-zero slots and every fill's).
pub fn genesis_slots(alloc: &BTreeMap<Address, AllocAccount>, fills: &[StorageFill]) -> u64 {
    let listed: u64 = alloc
        .values()
        .map(|a| a.storage.values().filter(|v| !v.is_zero()).count() as u64)
        .sum();
    listed + fills.iter().map(|f| f.slots).sum::<u64>()
}

/// Calls `visit` on every slot of fill account `k` in increasing hashed-key order, in passes
/// of at most `pass_slots` slots ([`gigagas_data::SlotFill::for_each_sorted`]).
pub fn fill_slots_sorted(
    fill: &StorageFill,
    k: u64,
    pass_slots: usize,
    visit: &mut dyn FnMut(B256, U256) -> Result<(), Error>,
) -> Result<(), Error> {
    fill.rule(k).for_each_sorted(pass_slots, visit)
}

fn stream_err(e: StreamError<Error>) -> Error {
    match e {
        StreamError::Sink(e) => e,
        e => Error::Backend(format!("streamed trie: {e}")),
    }
}

/// The genesis accounts (alloc and fill accounts, at most `MAX_FILL_ACCOUNTS` of the latter:
/// nothing here grows with the slots), sorted by hashed address, with their codes.
fn genesis_accounts<'a>(
    alloc: &'a BTreeMap<Address, AllocAccount>,
    fills: &'a [StorageFill],
) -> (Vec<GenesisAccount<'a>>, BTreeMap<B256, Bytes>) {
    let mut codes = BTreeMap::new();
    let mut code_hash = |code: &Bytes| {
        if code.is_empty() {
            return KECCAK_EMPTY;
        }
        let h = keccak256(code);
        codes.entry(h).or_insert_with(|| code.clone());
        h
    };
    let mut accounts = Vec::with_capacity(alloc.len());
    for (address, a) in alloc {
        accounts.push(GenesisAccount {
            hashed: keccak256(address),
            nonce: a.nonce,
            balance: a.balance,
            code_hash: code_hash(&a.code),
            slots: Slots::Listed(&a.storage),
        });
    }
    for f in fills {
        let hash = code_hash(&f.code);
        for k in 0..f.accounts {
            accounts.push(GenesisAccount {
                hashed: keccak256(f.account(k)),
                nonce: f.nonce,
                balance: U256::ZERO,
                code_hash: hash,
                slots: Slots::Fill(f, k),
            });
        }
    }
    accounts.sort_unstable_by_key(|a| a.hashed);
    (accounts, codes)
}

impl<B: Backend> Store<B> {
    /// Loads a genesis — `alloc` plus the `fills` expanded — into an empty store with memory
    /// bounded independently of the number of slots: accounts in hashed-address order, each
    /// account's slots generated in hashed-slot order ([`fill_slots_sorted`]) and appended,
    /// its storage trie streamed ([`StreamBuilder`]) with every branch node written as it
    /// completes; then the account trie the same way, the codes, block hash `number → hash`
    /// and, in the last transaction, the head. `progress(slots)` after every commit. Returns
    /// the head (its root is the computed one: the caller checks it against the header).
    pub fn load_genesis(
        &self,
        alloc: &BTreeMap<Address, AllocAccount>,
        fills: &[StorageFill],
        number: u64,
        hash: B256,
        opts: &GenesisOptions,
        progress: &dyn Fn(u64),
    ) -> Result<Head, Error> {
        check_storage_fill(alloc, fills).map_err(|what| Error::Genesis(what.to_string()))?;
        let (accounts, codes) = genesis_accounts(alloc, fills);
        let hashes = BTreeMap::from([(number, hash)]);
        self.load_accounts(accounts, &codes, &hashes, number, hash, opts, progress)
    }

    /// [`Store::load`] of a state whose storage follows rules ([`gigagas_data::SlotFill`]):
    /// streamed as [`Store::load_genesis`] streams a genesis, so the memory does not grow with
    /// the rules' slots. Every account's code and the state's block hashes are written too.
    pub fn load_streaming(
        &self,
        state: &gigagas_data::PreState,
        number: u64,
        hash: B256,
        progress: &dyn Fn(u64),
    ) -> Result<Head, Error> {
        let codes = crate::state_codes(state)?;
        let mut accounts: Vec<GenesisAccount<'_>> = state
            .accounts()
            .map(|(address, a)| GenesisAccount {
                hashed: keccak256(address),
                nonce: a.info.nonce,
                balance: a.info.balance,
                code_hash: a.info.code_hash,
                slots: Slots::Account(a),
            })
            .collect();
        accounts.sort_unstable_by_key(|a| a.hashed);
        let hashes: BTreeMap<u64, B256> =
            state.block_hashes().iter().map(|(n, h)| (*n, *h)).collect();
        let opts = GenesisOptions::default();
        self.load_accounts(accounts, &codes, &hashes, number, hash, &opts, progress)
    }

    /// The streamed load of [`Store::load_genesis`] and [`Store::load_streaming`]: `accounts`
    /// sorted by hashed address.
    #[allow(clippy::too_many_arguments)]
    fn load_accounts(
        &self,
        accounts: Vec<GenesisAccount<'_>>,
        codes: &BTreeMap<B256, Bytes>,
        block_hashes: &BTreeMap<u64, B256>,
        number: u64,
        hash: B256,
        opts: &GenesisOptions,
        progress: &dyn Fn(u64),
    ) -> Result<Head, Error> {
        if let Some(head) = self.head()? {
            return Err(Error::NotEmpty {
                path: self.path.clone(),
                head,
            });
        }
        let at = |e| crate::at(&self.path, e);
        let no_txn = || Error::Backend("no write transaction".into());
        let mut txn = Some(self.backend.write().map_err(at)?);
        let (mut done, mut uncommitted) = (0u64, 0u64);
        let mut leaves: Vec<(B256, TrieAccount)> = Vec::with_capacity(accounts.len());
        let pending: RefCell<Vec<(Nibbles, BranchNode)>> = RefCell::new(Vec::new());
        let put_nodes = |t: &B::Write, owner: B256| -> Result<(), Error> {
            for (path, node) in pending.borrow_mut().drain(..) {
                t.put(
                    Table::StorageTrie,
                    &codec::node_key(Some(owner), &path).1,
                    &codec::encode_node(&node),
                )?;
            }
            Ok(())
        };
        for account in &accounts {
            let owner = account.hashed;
            let mut builder = StreamBuilder::new(|path, node| {
                pending.borrow_mut().push((path, node));
                Ok::<(), Error>(())
            });
            let mut put_slot = |slot: B256, value: U256| -> Result<(), Error> {
                let t = txn.as_ref().ok_or_else(no_txn)?;
                t.append(
                    Table::Storage,
                    &codec::slot_key(&owner, &slot),
                    &codec::encode_value(&value),
                )?;
                builder
                    .push(slot, alloy_rlp::encode(value))
                    .map_err(stream_err)?;
                put_nodes(t, owner)?;
                done += 1;
                uncommitted += 1;
                if uncommitted >= opts.commit_slots.max(1) {
                    txn.take().ok_or_else(no_txn)?.commit().map_err(at)?;
                    txn = Some(self.backend.write().map_err(at)?);
                    uncommitted = 0;
                    progress(done);
                }
                Ok(())
            };
            match account.slots {
                Slots::Listed(map) => {
                    let mut sorted: Vec<(B256, U256)> = map
                        .iter()
                        .filter(|(_, v)| !v.is_zero())
                        .map(|(k, v)| (keccak256(k.to_be_bytes::<32>()), *v))
                        .collect();
                    sorted.sort_unstable_by_key(|(k, _)| *k);
                    for (k, v) in sorted {
                        put_slot(k, v)?;
                    }
                }
                Slots::Fill(f, k) => fill_slots_sorted(f, k, opts.pass_slots, &mut put_slot)?,
                Slots::Account(a) => a.for_each_hashed_slot(&mut put_slot)?,
            }
            let storage_root = builder.finish().map_err(stream_err)?.root;
            put_nodes(txn.as_ref().ok_or_else(no_txn)?, owner)?;
            leaves.push((
                owner,
                TrieAccount {
                    nonce: account.nonce,
                    balance: account.balance,
                    storage_root,
                    code_hash: account.code_hash,
                },
            ));
        }
        drop(accounts);
        let t = txn.take().ok_or_else(no_txn)?;
        let mut builder = StreamBuilder::new(|path, node| {
            t.put(
                Table::AccountTrie,
                &codec::node_key(None, &path).1,
                &codec::encode_node(&node),
            )
        });
        for (hashed, account) in &leaves {
            t.append(
                Table::Accounts,
                hashed.as_slice(),
                &codec::encode_account(account),
            )?;
            builder
                .push(*hashed, alloy_rlp::encode(account))
                .map_err(stream_err)?;
        }
        let root = builder.finish().map_err(stream_err)?.root;
        for (code_hash, code) in codes {
            t.append(Table::Code, code_hash.as_slice(), code)?;
        }
        for (n, h) in block_hashes {
            t.put(Table::BlockHashes, &n.to_be_bytes(), h.as_slice())?;
        }
        let head = Head {
            number,
            hash,
            state_root: root,
        };
        t.put(Table::Meta, b"head", &codec::encode_head(&head))?;
        t.commit().map_err(at)?;
        progress(done);
        Ok(head)
    }

    /// [`Store::verify`] in memory bounded independently of the store's size: the storage
    /// table owner by owner in key order (each owner's slots first counted up to
    /// [`SPLIT_SLOTS`], without hashing), each storage trie rebuilt by a [`StreamBuilder`]
    /// (above the threshold as 16 parts on the rayon pool, joined) whose every node is
    /// compared with the stored one; then the account
    /// table the same way, each account leaf's storage root checked against the rebuilt one;
    /// the stored node counts compared with the rebuilt ones (a stored node no build makes is
    /// found that way). Holds one storage root per account.
    pub fn verify_streaming(&self, progress: &(dyn Fn(u64) + Sync)) -> Result<Verified, Error> {
        self.verify_streaming_split(progress, SPLIT_SLOTS)
    }

    /// [`Self::verify_streaming`] with the number of slots above which a storage trie is
    /// rebuilt in 16 parts on as many threads.
    pub fn verify_streaming_split(
        &self,
        progress: &(dyn Fn(u64) + Sync),
        split_slots: u64,
    ) -> Result<Verified, Error> {
        self.check_trie_whole()?;
        let head = self.require_head()?;
        // Every table, as `verify` checks them: the block hashes and meta records first.
        let block_hashes = self.verify_block_hashes(&head)?;
        let kv = self.read_kv()?;
        // Leaves and nodes were written in key order, so the scan reads the file mostly
        // front to back: with the store's usual no-read-ahead, a cold 75M-slot verify made
        // 4 million single-page reads (docs/results/hot-account-10gb-2core.md).
        self.backend.advise_sequential()?;
        let mut counts = Counts {
            block_hashes,
            ..Counts::default()
        };
        let difference: Mutex<Option<String>> = Mutex::new(None);
        let note = |what: String| {
            let mut d = difference.lock().unwrap_or_else(PoisonError::into_inner);
            if d.is_none() {
                *d = Some(what);
            }
        };
        let check_node = |table: Table, owner: Option<B256>, path: Nibbles, node: BranchNode| {
            let key = codec::node_key(owner, &path).1;
            let stored = kv
                .get(table, &key)?
                .map(|v| codec::decode_node(table, &key, &v))
                .transpose()?;
            let trie = owner.map_or_else(|| "account".to_string(), |o| format!("storage {o}"));
            match stored {
                None => note(format!(
                    "branch node of the {trie} trie at path {path:?} is missing from the store"
                )),
                Some(s) if s != node => note(format!(
                    "branch node of the {trie} trie at path {path:?} differs from the one rebuilt from its leaves"
                )),
                Some(_) => {}
            }
            Ok::<(), Error>(())
        };
        // Each account's storage trie, rebuilt from its slots: accounts in key order, in
        // windows of `VERIFY_WINDOW` whose storage tries are rebuilt in parallel on the rayon
        // pool (one of more than `split_slots` slots itself as 16 parts, its slots' first
        // nibble, then joined), then pushed into the account trie in order. Memory: one
        // window, whatever the number of accounts.
        let built_nodes = AtomicU64::new(0);
        let slots = AtomicU64::new(0);
        // Counts a slot: progress, and the scan keeps only what it is reading resident
        // (it maps the whole store).
        let counted = || -> Result<(), Error> {
            let done = slots.fetch_add(1, Ordering::Relaxed) + 1;
            if done & ((1 << 20) - 1) == 0 {
                progress(done);
                self.backend.release_resident()?;
            }
            Ok(())
        };
        // Scans `owner`'s slots from `from` while `keep(slot)`, pushing each into `builder`.
        let push_slots = |owner: B256,
                          from: &[u8],
                          keep: &dyn Fn(&B256) -> bool,
                          builder: &mut dyn FnMut(B256, Vec<u8>) -> Result<(), Error>|
         -> Result<(), Error> {
            kv.scan(Table::Storage, from, &mut |k, v| {
                let (o, slot) = storage_key(k)?;
                if o != owner || !keep(&slot) {
                    return Ok(false);
                }
                builder(slot, alloy_rlp::encode(codec::decode_value(k, v)?))?;
                counted()?;
                Ok(true)
            })
        };
        let sink =
            |owner: B256| move |path, node| check_node(Table::StorageTrie, Some(owner), path, node);
        // The root of `owner`'s storage trie rebuilt from its slots, every branch node
        // checked against the store's.
        let storage_root = |owner: B256| -> Result<B256, Error> {
            // How many slots, up to the split threshold (a count, no hashing).
            let mut seen = 0u64;
            kv.scan(Table::Storage, owner.as_slice(), &mut |k, _| {
                let (o, _) = storage_key(k)?;
                seen += u64::from(o == owner);
                Ok(o == owner && seen <= split_slots)
            })?;
            if seen == 0 {
                return Ok(EMPTY_ROOT_HASH);
            }
            let built = if seen <= split_slots {
                let mut b = StreamBuilder::new(sink(owner));
                push_slots(owner, owner.as_slice(), &|_| true, &mut |slot, value| {
                    b.push(slot, value).map_err(stream_err)
                })?;
                b.finish().map_err(stream_err)?
            } else {
                let parts = (0..16u8)
                    .into_par_iter()
                    .map(|nibble| {
                        let mut b = StreamBuilder::new(sink(owner));
                        let mut start = [0u8; 64];
                        start[..32].copy_from_slice(owner.as_slice());
                        start[32] = nibble << 4;
                        push_slots(
                            owner,
                            &start,
                            &|slot| slot[0] >> 4 == nibble,
                            &mut |slot, value| b.push(slot, value).map_err(stream_err),
                        )?;
                        b.finish_part().map_err(stream_err)
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                join_parts(parts, sink(owner)).map_err(stream_err)?
            };
            built_nodes.fetch_add(built.nodes, Ordering::Relaxed);
            Ok(built.root)
        };
        // Slots whose owner lies after `after` and before `before` (either end open) belong
        // to no account.
        let orphans = |after: Option<&B256>, before: Option<&B256>| -> Result<(), Error> {
            let from = match after {
                None => Vec::new(),
                Some(a) => match U256::from_be_bytes(a.0).checked_add(U256::from(1u8)) {
                    Some(next) => next.to_be_bytes::<32>().to_vec(),
                    None => return Ok(()),
                },
            };
            if let Some((k, _)) = kv.seek(Table::Storage, &from)? {
                let (owner, _) = storage_key(&k)?;
                if before.is_none_or(|b| owner < *b) {
                    note(format!(
                        "storage slots without an account (the first under owner {owner})"
                    ));
                }
            }
            Ok(())
        };
        let mut account_builder =
            StreamBuilder::new(|path, node| check_node(Table::AccountTrie, None, path, node));
        let mut window: Vec<(B256, TrieAccount)> = Vec::with_capacity(VERIFY_WINDOW);
        let mut last: Option<B256> = None;
        let mut flush = |window: &mut Vec<(B256, TrieAccount)>| -> Result<(), Error> {
            let rebuilt = window
                .par_iter()
                .enumerate()
                .map(|(i, (hashed, _))| {
                    let before = if i == 0 { last } else { Some(window[i - 1].0) };
                    orphans(before.as_ref(), Some(hashed))?;
                    storage_root(*hashed)
                })
                .collect::<Result<Vec<_>, Error>>()?;
            for ((hashed, mut account), rebuilt) in window.drain(..).zip(rebuilt) {
                if account.storage_root != rebuilt {
                    note(format!(
                        "account leaf {hashed}: storage root {} recorded, {rebuilt} rebuilt from its slots",
                        account.storage_root
                    ));
                }
                account.storage_root = rebuilt;
                account_builder
                    .push(hashed, alloy_rlp::encode(account))
                    .map_err(stream_err)?;
                counts.accounts += 1;
                last = Some(hashed);
            }
            Ok(())
        };
        kv.scan(Table::Accounts, &[], &mut |k, v| {
            window.push((
                codec::b256(Table::Accounts, k, k)?,
                codec::decode_account(k, v)?,
            ));
            if window.len() == VERIFY_WINDOW {
                flush(&mut window)?;
            }
            Ok(true)
        })?;
        flush(&mut window)?;
        orphans(last.as_ref(), None)?;
        counts.slots = slots.load(Ordering::Relaxed) as usize;
        let built = account_builder.finish().map_err(stream_err)?;
        let built_nodes = built_nodes.load(Ordering::Relaxed) + built.nodes;
        let computed_root = built.root;
        let mut stored_nodes = 0u64;
        for table in [Table::AccountTrie, Table::StorageTrie] {
            kv.scan(table, &[], &mut |_, _| {
                stored_nodes += 1;
                if stored_nodes & ((1 << 20) - 1) == 0 {
                    self.backend.release_resident()?;
                }
                Ok(true)
            })?;
        }
        if stored_nodes != built_nodes {
            note(format!(
                "{stored_nodes} branch nodes stored, {built_nodes} rebuilt from the leaves"
            ));
        }
        kv.scan(Table::Code, &[], &mut |k, v| {
            if keccak256(v).as_slice() != k {
                return Err(Error::Corrupt {
                    table: Table::Code.name(),
                    key: codec::hex(k),
                    what: "code does not hash to its key".into(),
                });
            }
            counts.codes += 1;
            Ok(true)
        })?;
        counts.nodes = stored_nodes as usize;
        Ok(Verified {
            head,
            computed_root,
            counts,
            node_difference: difference
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_data::{chain::genesis_state, PreState};
    use proptest::prelude::*;
    use std::sync::Arc;

    fn alloc() -> BTreeMap<Address, AllocAccount> {
        let mut alloc = BTreeMap::new();
        alloc.insert(
            Address::repeat_byte(1),
            AllocAccount {
                balance: U256::from(1_000u64),
                nonce: 3,
                code: Bytes::from_static(&[0x60, 0x00, 0x56]),
                storage: [(U256::from(1), U256::from(9)), (U256::from(2), U256::ZERO)].into(),
            },
        );
        alloc.insert(
            Address::repeat_byte(2),
            AllocAccount {
                balance: U256::from(5u64),
                ..Default::default()
            },
        );
        alloc
    }

    fn fill(address: u8, accounts: u64, slots: u64, period: u64) -> StorageFill {
        StorageFill {
            address: Address::repeat_byte(address),
            accounts,
            slots,
            period,
            nonce: 1,
            code: Bytes::from_static(&[0x60, 0x01, 0x00]),
        }
    }

    /// The reference: the genesis expanded in memory and bulk-loaded by [`Store::load`].
    fn reference(
        alloc: &BTreeMap<Address, AllocAccount>,
        fills: &[StorageFill],
    ) -> (Store, tempfile::TempDir) {
        let state = PreState::new(genesis_state(alloc, fills).unwrap(), Arc::default());
        let dir = tempfile::tempdir().unwrap();
        let store: Store = Store::create(dir.path()).unwrap();
        store.load(&state, 0, B256::repeat_byte(0xaa)).unwrap();
        (store, dir)
    }

    fn streamed(
        alloc: &BTreeMap<Address, AllocAccount>,
        fills: &[StorageFill],
        opts: GenesisOptions,
    ) -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store: Store = Store::create(dir.path()).unwrap();
        store
            .load_genesis(alloc, fills, 0, B256::repeat_byte(0xaa), &opts, &|_| {})
            .unwrap();
        (store, dir)
    }

    #[test]
    fn fill_slots_come_sorted_whatever_the_passes() {
        let f = fill(9, 2, 1001, 4);
        let mut expected: Vec<(B256, U256)> = (0..f.slots_of(1))
            .map(|i| (keccak256(U256::from(i).to_be_bytes::<32>()), f.value(i)))
            .collect();
        expected.sort_unstable();
        for pass in [1, 7, 100, 500, 1 << 20] {
            let mut got = Vec::new();
            fill_slots_sorted(&f, 1, pass, &mut |k, v| {
                got.push((k, v));
                Ok(())
            })
            .unwrap();
            assert_eq!(got, expected, "pass_slots {pass}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// The streamed load holds exactly what the in-memory bulk load holds: the same
        /// head root, leaves and branch nodes; and the streaming verification agrees.
        #[test]
        fn streamed_genesis_equals_in_memory_load(
            accounts in 1u64..4,
            slots in 4u64..400,
            period in 1u64..6,
            second in 0u64..40,
            pass_slots in 1usize..128,
            commit_slots in 1u64..64,
            split_slots in 1u64..600,
        ) {
            let mut fills = vec![fill(0x40, accounts, slots, period)];
            if second > 0 {
                fills.push(fill(0x50, 1, second, 3));
            }
            let alloc = alloc();
            let (expected, _a) = reference(&alloc, &fills);
            let (got, _b) = streamed(&alloc, &fills, GenesisOptions { pass_slots, commit_slots });
            prop_assert_eq!(got.head().unwrap(), expected.head().unwrap());
            let (a, codes_a) = got.to_memory().unwrap();
            let (b, codes_b) = expected.to_memory().unwrap();
            prop_assert_eq!(codes_a, codes_b);
            prop_assert_eq!(crate::first_difference(&a, &b), None);
            prop_assert_eq!(a.storage, b.storage);
            let reference = got.verify().unwrap();
            // Every storage trie as one stream, as 16 parts, and the default threshold.
            for split in [u64::MAX, 0, split_slots] {
                let v = got.verify_streaming_split(&|_| {}, split).unwrap();
                prop_assert!(v.ok(), "split {}: {:?}", split, v);
                prop_assert_eq!(v.computed_root, reference.computed_root);
                prop_assert_eq!(v.counts, reference.counts);
            }
        }
    }

    #[test]
    fn verify_streaming_finds_a_flipped_value_a_changed_node_and_an_extra_node() {
        let fills = [fill(0x40, 1, 500, 4)];
        let (store, _dir) = streamed(&alloc(), &fills, GenesisOptions::default());
        let head = store.head().unwrap().unwrap();
        // Each defect is found with the trie as one stream and as 16 parts; the root and
        // counts agree, the first difference noted may be another node.
        let verify = |store: &Store| {
            let one = store.verify_streaming_split(&|_| {}, u64::MAX).unwrap();
            let parts = store.verify_streaming_split(&|_| {}, 0).unwrap();
            assert_eq!(one.computed_root, parts.computed_root);
            assert_eq!(one.counts, parts.counts);
            assert_eq!(
                one.node_difference.is_some(),
                parts.node_difference.is_some()
            );
            one
        };
        let v = verify(&store);
        assert!(v.ok(), "{v:?}");
        assert_eq!(v.counts.slots, 501);

        // One slot's value flipped: the root differs from the head's.
        let kv = store.read_kv().unwrap();
        let (key, value) = kv.seek(Table::Storage, &[]).unwrap().unwrap();
        drop(kv);
        let mut flipped = value.clone();
        flipped[0] ^= 0x10;
        let txn = store.backend.write().unwrap();
        txn.put(Table::Storage, &key, &flipped).unwrap();
        txn.commit().unwrap();
        let v = verify(&store);
        assert_ne!(v.computed_root, head.state_root);
        assert!(v.node_difference.is_some(), "{v:?}");
        assert!(!v.ok());

        // Restored, then a stored node changed: the root still matches, a node does not.
        let txn = store.backend.write().unwrap();
        txn.put(Table::Storage, &key, &value).unwrap();
        txn.commit().unwrap();
        assert!(verify(&store).ok());
        let kv = store.read_kv().unwrap();
        let (node_key, node) = kv.seek(Table::StorageTrie, &[]).unwrap().unwrap();
        drop(kv);
        let mut other = codec::decode_node(Table::StorageTrie, &node_key, &node).unwrap();
        other.children.swap(0, 1);
        let txn = store.backend.write().unwrap();
        txn.put(Table::StorageTrie, &node_key, &codec::encode_node(&other))
            .unwrap();
        txn.commit().unwrap();
        let v = verify(&store);
        assert_eq!(v.computed_root, head.state_root);
        let d = v.node_difference.unwrap();
        assert!(d.contains("differs"), "{d}");

        // Restored, then a node no build makes added.
        let txn = store.backend.write().unwrap();
        txn.put(Table::StorageTrie, &node_key, &node).unwrap();
        let mut extra = node_key.clone();
        extra.extend([0x0f; 20]);
        txn.put(Table::StorageTrie, &extra, &node).unwrap();
        txn.commit().unwrap();
        let d = verify(&store).node_difference.unwrap();
        assert!(d.contains("branch nodes stored"), "{d}");

        // Restored, then a slot under an owner that is no account: before the first account,
        // between two, after the last.
        let txn = store.backend.write().unwrap();
        txn.delete(Table::StorageTrie, &extra).unwrap();
        txn.commit().unwrap();
        assert!(verify(&store).ok());
        let kv = store.read_kv().unwrap();
        let (first, _) = kv.seek(Table::Accounts, &[]).unwrap().unwrap();
        drop(kv);
        // Just after the first account: before the second.
        let between = (U256::from_be_slice(&first) + U256::from(1u8)).to_be_bytes::<32>();
        for owner in [vec![0u8; 32], between.to_vec(), vec![0xff; 32]] {
            let mut key = owner.clone();
            key.extend([0x11; 32]);
            let txn = store.backend.write().unwrap();
            txn.put(Table::Storage, &key, &[7]).unwrap();
            txn.commit().unwrap();
            let d = verify(&store).node_difference.unwrap();
            assert!(d.contains("without an account"), "{d}");
            let txn = store.backend.write().unwrap();
            txn.delete(Table::Storage, &key).unwrap();
            txn.commit().unwrap();
            assert!(verify(&store).ok());
        }
    }

    #[test]
    fn a_bad_fill_is_refused_and_a_loaded_store_is_not_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        let store: Store = Store::create(dir.path()).unwrap();
        let bad = [fill(0x40, 3, 2, 1)];
        let err = store
            .load_genesis(
                &alloc(),
                &bad,
                0,
                B256::ZERO,
                &GenesisOptions::default(),
                &|_| {},
            )
            .unwrap_err();
        assert!(err.to_string().contains("3 accounts for 2 slots"), "{err}");
        assert!(store.head().unwrap().is_none());
        let ok = [fill(0x40, 1, 10, 1)];
        store
            .load_genesis(
                &alloc(),
                &ok,
                0,
                B256::ZERO,
                &GenesisOptions::default(),
                &|_| {},
            )
            .unwrap();
        let err = store
            .load_genesis(
                &alloc(),
                &ok,
                0,
                B256::ZERO,
                &GenesisOptions::default(),
                &|_| {},
            )
            .unwrap_err();
        assert!(matches!(err, Error::NotEmpty { .. }), "{err}");
    }
}
