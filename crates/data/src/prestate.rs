//! The immutable, shareable pre-state of one block.

use alloy_eip7928::BlockAccessList;
use alloy_primitives::{
    keccak256,
    map::{HashMap, HashSet},
    Address, B256, U256,
};
use revm::{
    bytecode::Bytecode,
    database_interface::{DBErrorMarker, DatabaseRef},
    state::AccountInfo,
};
use std::{borrow::Cow, sync::Arc};

/// One account of the pre-state.
#[derive(Debug, Clone, Default)]
pub struct PreAccount {
    /// Balance, nonce, code hash and code.
    pub info: AccountInfo,
    /// Storage slots known to the data set (the touched ones for mainnet data). With
    /// [`Self::fill`], the slots that differ from the rule (a zero value included).
    pub storage: HashMap<U256, U256>,
    /// Storage that follows a rule (a generated chain's `storage_fill` account): every slot
    /// not in `storage` holds the rule's value. Keeps an account of 10^8 slots in a few bytes.
    pub fill: Option<SlotFill>,
}

impl PreAccount {
    /// The value of storage slot `slot` (`storage` first, then the fill rule, else zero).
    pub fn slot(&self, slot: &U256) -> U256 {
        match self.storage.get(slot) {
            Some(v) => *v,
            None => self.fill.map_or(U256::ZERO, |f| f.value(slot)),
        }
    }

    /// Sets slot `slot` to `value`, keeping `storage` minimal: a value the rule (or, without
    /// one, zero) already gives is not stored.
    pub fn set_slot(&mut self, slot: U256, value: U256) {
        if self.fill.map_or(U256::ZERO, |f| f.value(&slot)) == value {
            self.storage.remove(&slot);
        } else {
            self.storage.insert(slot, value);
        }
    }

    /// Wipes the storage (self-destruct): no slot, no rule.
    pub fn clear_storage(&mut self) {
        self.storage.clear();
        self.fill = None;
    }

    /// Whether any slot holds a non-zero value.
    pub fn has_storage(&self) -> bool {
        if self.storage.values().any(|v| !v.is_zero()) {
            return true;
        }
        // Every stored slot is zero here: the rule's slots not overridden remain.
        self.fill.is_some_and(|f| {
            let zeroed = self.storage.keys().filter(|s| f.covers(s)).count() as u64;
            f.slots > zeroed
        })
    }

    /// The root of the account's storage trie, from scratch ([`Self::for_each_hashed_slot`]:
    /// streamed for a rule's slots).
    pub fn storage_root(&self) -> B256 {
        let mut builder = alloy_trie::HashBuilder::default();
        let mut any = false;
        let _ = self.for_each_hashed_slot::<std::convert::Infallible>(&mut |key, value| {
            any = true;
            builder.add_leaf(alloy_trie::Nibbles::unpack(key), &alloy_rlp::encode(value));
            Ok(())
        });
        if any {
            builder.root()
        } else {
            alloy_trie::EMPTY_ROOT_HASH
        }
    }

    /// Calls `visit` on every non-zero slot, keyed by keccak256 of the slot, in increasing
    /// key order: the rule's slots (generated in bounded passes, [`SlotFill::for_each_sorted`])
    /// merged with `storage`. Memory: one pass and a sorted copy of `storage`.
    pub fn for_each_hashed_slot<E>(
        &self,
        visit: &mut dyn FnMut(B256, U256) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut listed: Vec<(B256, U256)> = self
            .storage
            .iter()
            .map(|(s, v)| (keccak256(s.to_be_bytes::<32>()), *v))
            .collect();
        listed.sort_unstable_by_key(|(k, _)| *k);
        let mut listed = listed.into_iter().peekable();
        let emit = |key: B256, value: U256, visit: &mut dyn FnMut(B256, U256) -> Result<(), E>| {
            if value.is_zero() {
                Ok(())
            } else {
                visit(key, value)
            }
        };
        if let Some(fill) = self.fill {
            fill.for_each_sorted(FILL_PASS_SLOTS, &mut |key, value| {
                while let Some((k, v)) = listed.next_if(|(k, _)| *k < key) {
                    emit(k, v, visit)?;
                }
                match listed.next_if(|(k, _)| *k == key) {
                    Some((k, v)) => emit(k, v, visit),
                    None => emit(key, value, visit),
                }
            })?;
        }
        for (k, v) in listed {
            emit(k, v, visit)?;
        }
        Ok(())
    }
}

/// Slots a rule's sorted generation holds at once ([`SlotFill::for_each_sorted`]): 8 Mi
/// (about 320 MiB while a pass is sorted).
pub const FILL_PASS_SLOTS: usize = 8 << 20;

/// Storage given by a rule: slots `0..slots` (as integers), slot `i` holding
/// `(i mod period) + 1`; every other slot zero. A generated chain's `storage_fill` account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotFill {
    /// Slots `0..slots` are filled.
    pub slots: u64,
    /// Slot `i` holds `(i mod period) + 1` (at least 1).
    pub period: u64,
}

impl SlotFill {
    /// Whether `slot` is one of the rule's.
    pub fn covers(&self, slot: &U256) -> bool {
        *slot < U256::from(self.slots)
    }

    /// The rule's value of `slot` (zero outside `0..slots`).
    pub fn value(&self, slot: &U256) -> U256 {
        if self.covers(slot) {
            let i = slot.as_limbs()[0];
            U256::from(i % self.period.max(1) + 1)
        } else {
            U256::ZERO
        }
    }

    /// The storage root of the rule's slots (streamed: [`Self::for_each_sorted`]).
    pub fn root(&self) -> B256 {
        PreAccount {
            fill: Some(*self),
            ..Default::default()
        }
        .storage_root()
    }

    /// Calls `visit` on every slot of the rule in increasing order of keccak256(slot): in
    /// `ceil(slots / pass_slots)` passes, each hashing all slot indices on the current rayon
    /// pool and keeping (then sorting) those whose hashed key falls in the pass's range. Memory:
    /// one pass (40 bytes a slot), whatever `slots` is.
    pub fn for_each_sorted<E>(
        &self,
        pass_slots: usize,
        visit: &mut dyn FnMut(B256, U256) -> Result<(), E>,
    ) -> Result<(), E> {
        use rayon::prelude::*;
        let n = self.slots;
        let passes = n.div_ceil(pass_slots.max(1) as u64).max(1);
        let hash = |i: u64| keccak256(U256::from(i).to_be_bytes::<32>());
        let top = |h: &B256| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h.0[..8]);
            u64::from_be_bytes(b)
        };
        let period = self.period.max(1);
        for p in 0..passes {
            let lo = (u128::from(p) << 64) / u128::from(passes);
            let hi = (u128::from(p + 1) << 64) / u128::from(passes);
            let mut run: Vec<(B256, u64)> = (0..n)
                .into_par_iter()
                .filter_map(|i| {
                    let h = hash(i);
                    let t = u128::from(top(&h));
                    (passes == 1 || (lo <= t && t < hi)).then_some((h, i))
                })
                .collect();
            run.par_sort_unstable_by_key(|(h, _)| *h);
            for (h, i) in run {
                visit(h, U256::from(i % period + 1))?;
            }
        }
        Ok(())
    }
}

/// State before a block: accounts, storage, code and the block hashes `BLOCKHASH` may ask for.
///
/// Read-only after construction and `Sync`, so every worker thread reads the same instance
/// through [`DatabaseRef`]. Accounts absent from the map do not exist.
#[derive(Debug, Clone, Default)]
pub struct PreState {
    accounts: HashMap<Address, PreAccount>,
    codes: HashMap<B256, Bytecode>,
    block_hashes: Arc<HashMap<u64, B256>>,
}

/// A read the pre-state cannot answer: the data set is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreStateError {
    /// `BLOCKHASH` asked for a block the data set has no hash for.
    #[error("block hash of block {0} is not in the data set (block_hashes.json)")]
    MissingBlockHash(u64),
    /// Code was requested by a hash the data set has no code for.
    #[error("code with hash {0} is not in the data set (bytecodes.json)")]
    MissingCode(B256),
    /// The state store could not answer a read.
    #[error("state store: {0}")]
    Store(String),
}

impl DBErrorMarker for PreStateError {}

impl PreState {
    /// Builds a pre-state; `accounts` must already carry their code in `info.code`.
    pub fn new(
        accounts: HashMap<Address, PreAccount>,
        block_hashes: Arc<HashMap<u64, B256>>,
    ) -> Self {
        let codes = accounts
            .values()
            .filter_map(|a| a.info.code.clone().map(|c| (a.info.code_hash, c)))
            .collect();
        Self {
            accounts,
            codes,
            block_hashes,
        }
    }

    /// A copy that shares no memory with `self`: every code's bytes copied and re-analysed,
    /// every map and the block-hash table rebuilt. For measurements that must rule out
    /// sharing between threads (reference counts, cache lines): `bench --contention-floor`.
    pub fn deep_clone(&self) -> Self {
        let copy = |code: &Bytecode| {
            Bytecode::new_raw(revm::primitives::Bytes::copy_from_slice(
                code.original_byte_slice(),
            ))
        };
        let codes: HashMap<B256, Bytecode> =
            self.codes.iter().map(|(h, c)| (*h, copy(c))).collect();
        let accounts = self
            .accounts
            .iter()
            .map(|(address, account)| {
                let mut info = account.info.clone();
                info.code = info.code.as_ref().map(|c| {
                    codes
                        .get(&info.code_hash)
                        .cloned()
                        .unwrap_or_else(|| copy(c))
                });
                let storage = account.storage.iter().map(|(k, v)| (*k, *v)).collect();
                let fill = account.fill;
                (
                    *address,
                    PreAccount {
                        info,
                        storage,
                        fill,
                    },
                )
            })
            .collect();
        Self {
            accounts,
            codes,
            block_hashes: Arc::new(self.block_hashes.iter().map(|(n, h)| (*n, *h)).collect()),
        }
    }

    /// The account at `address`, if it exists.
    pub fn account(&self, address: &Address) -> Option<&PreAccount> {
        self.accounts.get(address)
    }

    /// All accounts.
    pub fn accounts(&self) -> impl Iterator<Item = (&Address, &PreAccount)> {
        self.accounts.iter()
    }

    /// The block hashes `BLOCKHASH` may ask for.
    pub fn block_hashes(&self) -> &Arc<HashMap<u64, B256>> {
        &self.block_hashes
    }

    /// The same state with other block hashes (the ancestors of the next block).
    pub fn with_block_hashes(mut self, block_hashes: Arc<HashMap<u64, B256>>) -> Self {
        self.block_hashes = block_hashes;
        self
    }

    /// The state before the first of several consecutive blocks, from each block's own
    /// pre-state and access list (`bals[b]` lists every account and slot block b accessed).
    /// Every account, slot, code and block hash comes from the earliest block that holds it;
    /// a later block's copy is used only for what no earlier block accessed (an earlier block
    /// that accessed it saw the value before the unit — or saw it absent, i.e. not existing —
    /// so a later block's post-change copy never leaks in). Exact for data sets whose
    /// pre-states hold what each block touches (mainnet data). Borrows the first state when
    /// nothing is missing from it (complete states: generated chains).
    pub fn for_consecutive<'a>(
        states: &[&'a PreState],
        bals: &[&BlockAccessList],
    ) -> Option<Cow<'a, PreState>> {
        let (first, rest) = states.split_first()?;
        let mut merged: Cow<'a, PreState> = Cow::Borrowed(first);
        let mut accessed: HashMap<Address, HashSet<U256>> = HashMap::default();
        for (b, later) in rest.iter().enumerate() {
            // Everything blocks 0..=b accessed.
            for account in bals.get(b).map_or(&[][..], |bal| &bal[..]) {
                let slots = accessed.entry(account.address).or_default();
                slots.extend(account.storage_reads.iter().copied());
                slots.extend(account.storage_changes.iter().map(|c| c.slot));
            }
            for (address, account) in &later.accounts {
                let Some(seen) = accessed.get(address) else {
                    if !merged.accounts.contains_key(address) {
                        merged.to_mut().accounts.insert(*address, account.clone());
                    }
                    continue;
                };
                let Some(known) = merged.accounts.get(address) else {
                    continue; // accessed earlier and absent then: it did not exist
                };
                let missing: Vec<(U256, U256)> = account
                    .storage
                    .iter()
                    .filter(|(slot, _)| !seen.contains(*slot) && !known.storage.contains_key(*slot))
                    .map(|(s, v)| (*s, *v))
                    .collect();
                if !missing.is_empty() {
                    if let Some(target) = merged.to_mut().accounts.get_mut(address) {
                        target.storage.extend(missing);
                    }
                }
            }
            for (hash, code) in &later.codes {
                if !merged.codes.contains_key(hash) {
                    merged.to_mut().codes.insert(*hash, code.clone());
                }
            }
            let missing: Vec<(u64, B256)> = later
                .block_hashes
                .iter()
                .filter(|(n, _)| !merged.block_hashes.contains_key(*n))
                .map(|(n, h)| (*n, *h))
                .collect();
            if !missing.is_empty() {
                let hashes = Arc::make_mut(&mut merged.to_mut().block_hashes);
                hashes.extend(missing);
            }
        }
        Some(merged)
    }

    /// Whether any account's storage follows a rule ([`PreAccount::fill`]): its root from
    /// scratch streams that account's slots (seconds within one pass of [`FILL_PASS_SLOTS`],
    /// minutes at 10^8 slots) instead of reading a map.
    pub fn has_fills(&self) -> bool {
        self.accounts.values().any(|a| a.fill.is_some())
    }

    /// Slots of every storage rule together (what listing them would hold).
    pub fn fill_slots(&self) -> u64 {
        self.accounts
            .values()
            .filter_map(|a| a.fill.map(|f| f.slots))
            .fold(0, u64::saturating_add)
    }

    /// Number of accounts.
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// Whether the pre-state holds no accounts.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }
}

impl DatabaseRef for PreState {
    type Error = PreStateError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, Self::Error> {
        Ok(self.accounts.get(&address).map(|a| a.info.clone()))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, Self::Error> {
        if code_hash == revm::primitives::KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.codes
            .get(&code_hash)
            .cloned()
            .ok_or(PreStateError::MissingCode(code_hash))
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, Self::Error> {
        Ok(self
            .accounts
            .get(&address)
            .map_or(U256::ZERO, |a| a.slot(&index)))
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, Self::Error> {
        self.block_hashes
            .get(&number)
            .copied()
            .ok_or(PreStateError::MissingBlockHash(number))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(balance: u64, slots: &[(u64, u64)]) -> PreAccount {
        PreAccount {
            info: AccountInfo {
                balance: U256::from(balance),
                ..Default::default()
            },
            storage: slots
                .iter()
                .map(|&(k, v)| (U256::from(k), U256::from(v)))
                .collect(),
            fill: None,
        }
    }

    fn state(accounts: &[(u8, PreAccount)], hashes: &[u64]) -> PreState {
        PreState::new(
            accounts
                .iter()
                .map(|(a, acc)| (Address::repeat_byte(*a), acc.clone()))
                .collect(),
            Arc::new(
                hashes
                    .iter()
                    .map(|&n| (n, B256::repeat_byte(n as u8)))
                    .collect(),
            ),
        )
    }

    fn touched(address: u8, slots: &[u64]) -> alloy_eip7928::AccountChanges {
        alloy_eip7928::AccountChanges {
            address: Address::repeat_byte(address),
            storage_reads: slots.iter().map(|&s| U256::from(s)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn consecutive_states_take_the_earliest_value_of_everything() {
        // Block 1 touched account 1 (slot 1 = 10, slot 3 read as zero, so absent) and account
        // 3 (absent: it did not exist). Block 2 sees account 1 after block 1 (balance, slots 1
        // and 3 changed) and also reads slot 2, account 2 and account 3 (created by block 1).
        let first = state(&[(1, account(100, &[(1, 10)]))], &[1]);
        let second = state(
            &[
                (1, account(50, &[(1, 11), (2, 20), (3, 30)])),
                (2, account(7, &[])),
                (3, account(9, &[])),
            ],
            &[1, 2],
        );
        let bal1 = vec![touched(1, &[1, 3]), touched(3, &[])];
        let merged = PreState::for_consecutive(&[&first, &second], &[&bal1]).unwrap();
        assert!(matches!(merged, Cow::Owned(_)));
        let one = merged.account(&Address::repeat_byte(1)).unwrap();
        assert_eq!(one.info.balance, U256::from(100));
        assert_eq!(one.storage[&U256::from(1)], U256::from(10));
        assert_eq!(one.storage[&U256::from(2)], U256::from(20));
        assert!(!one.storage.contains_key(&U256::from(3)));
        assert_eq!(
            merged
                .account(&Address::repeat_byte(2))
                .unwrap()
                .info
                .balance,
            U256::from(7)
        );
        assert!(merged.account(&Address::repeat_byte(3)).is_none());
        assert_eq!(merged.block_hashes().len(), 2);
    }

    #[test]
    fn a_complete_first_state_is_borrowed() {
        let first = state(&[(1, account(100, &[(1, 10), (2, 0)]))], &[1, 2]);
        let second = state(&[(1, account(90, &[(2, 5)])), (4, account(1, &[]))], &[2]);
        let bal1 = vec![touched(1, &[2]), touched(4, &[])];
        let merged = PreState::for_consecutive(&[&first, &second], &[&bal1]).unwrap();
        assert!(matches!(merged, Cow::Borrowed(_)));
        assert!(PreState::for_consecutive(&[], &[]).is_none());
    }
}
