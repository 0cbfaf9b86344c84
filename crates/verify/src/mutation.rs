//! BAL mutants: a correct block access list with exactly one thing changed. A verifier that
//! accepts any of them trusts the BAL instead of checking it.

use alloy_eip7928::{BlockAccessIndex, BlockAccessList, StorageChange};
use alloy_primitives::U256;

/// The kinds of lie a mutant tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MutationKind {
    /// A storage post-value off by one.
    WrongStorageValue,
    /// A balance post-value off by one.
    WrongBalance,
    /// A nonce post-value off by one.
    WrongNonce,
    /// A storage write removed (the slot stays listed as read).
    MissingWrite,
    /// A read-only slot turned into a write by some transaction.
    ExtraWrite,
    /// A storage write moved to another transaction index.
    WriteAtWrongIndex,
    /// A read-only slot removed.
    MissingRead,
    /// A whole account removed.
    MissingAccount,
    /// Two neighbouring accounts swapped (the list is no longer sorted).
    UnorderedAccounts,
    /// An account listed twice.
    DuplicateAccount,
}

impl MutationKind {
    /// Every kind.
    pub const ALL: [MutationKind; 10] = [
        Self::WrongStorageValue,
        Self::WrongBalance,
        Self::WrongNonce,
        Self::MissingWrite,
        Self::ExtraWrite,
        Self::WriteAtWrongIndex,
        Self::MissingRead,
        Self::MissingAccount,
        Self::UnorderedAccounts,
        Self::DuplicateAccount,
    ];

    /// Kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::WrongStorageValue => "wrong-storage-value",
            Self::WrongBalance => "wrong-balance",
            Self::WrongNonce => "wrong-nonce",
            Self::MissingWrite => "missing-write",
            Self::ExtraWrite => "extra-write",
            Self::WriteAtWrongIndex => "write-at-wrong-index",
            Self::MissingRead => "missing-read",
            Self::MissingAccount => "missing-account",
            Self::UnorderedAccounts => "unordered-accounts",
            Self::DuplicateAccount => "duplicate-account",
        }
    }
}

/// One mutated BAL and what was changed.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// The kind of lie.
    pub kind: MutationKind,
    /// Where: account, slot, index.
    pub description: String,
    /// The mutated list.
    pub bal: BlockAccessList,
}

/// Picks at most `n` of `len` positions, spread evenly and deterministically.
fn spread(len: usize, n: usize) -> impl Iterator<Item = usize> {
    let step = len.div_ceil(n.max(1)).max(1);
    (0..len).step_by(step).take(n)
}

/// Up to `per_kind` mutants of each kind of `bal`, for a block of `tx_count` transactions.
/// Kinds the BAL offers no place for (e.g. no storage reads) produce none.
pub fn mutants(bal: &BlockAccessList, tx_count: usize, per_kind: usize) -> Vec<Mutant> {
    let mut out = Vec::new();
    let mut push = |kind, description: String, bal: BlockAccessList| {
        out.push(Mutant {
            kind,
            description,
            bal,
        })
    };
    let tx_index = |i: u64| (1..=tx_count as u64).contains(&i);

    // Storage writes: (account, slot, change).
    let writes: Vec<(usize, usize, usize)> = bal
        .iter()
        .enumerate()
        .flat_map(|(a, acc)| {
            acc.storage_changes
                .iter()
                .enumerate()
                .flat_map(move |(s, slot)| (0..slot.changes.len()).map(move |c| (a, s, c)))
        })
        .collect();
    let reads: Vec<(usize, usize)> = bal
        .iter()
        .enumerate()
        .flat_map(|(a, acc)| (0..acc.storage_reads.len()).map(move |r| (a, r)))
        .collect();

    for k in spread(writes.len(), per_kind) {
        let (a, s, c) = writes[k];
        let mut m = bal.clone();
        let slot = &mut m[a].storage_changes[s];
        let change = &mut slot.changes[c];
        change.new_value = change.new_value.wrapping_add(U256::from(1));
        let what = format!(
            "account {} slot {:#x} index {}",
            m[a].address,
            m[a].storage_changes[s].slot,
            m[a].storage_changes[s].changes[c].block_access_index.get()
        );
        push(MutationKind::WrongStorageValue, what, m);

        let mut m = bal.clone();
        let slot = &mut m[a].storage_changes[s];
        let removed = slot.changes.remove(c);
        let key = slot.slot;
        if slot.changes.is_empty() {
            m[a].storage_changes.remove(s);
            let reads = &mut m[a].storage_reads;
            reads.push(key);
            reads.sort_unstable();
        }
        let what = format!(
            "account {} slot {key:#x} index {}",
            m[a].address,
            removed.block_access_index.get()
        );
        push(MutationKind::MissingWrite, what, m);
    }
    // Moves of a transaction's write to another transaction index free for that slot.
    let movable: Vec<(usize, usize, usize, u64)> = writes
        .iter()
        .filter_map(|&(a, s, c)| {
            let slot = &bal[a].storage_changes[s];
            let from = slot.changes[c].block_access_index.get();
            if !tx_index(from) {
                return None;
            }
            let taken = |i: u64| {
                slot.changes
                    .iter()
                    .any(|ch| ch.block_access_index.get() == i)
            };
            (1..=tx_count as u64)
                .filter(|&i| i != from && !taken(i))
                .min_by_key(|&i| i.abs_diff(from))
                .map(|to| (a, s, c, to))
        })
        .collect();
    for k in spread(movable.len(), per_kind) {
        let (a, s, c, to) = movable[k];
        let mut m = bal.clone();
        let slot = &mut m[a].storage_changes[s];
        let from = slot.changes[c].block_access_index.get();
        slot.changes[c].block_access_index = BlockAccessIndex::new(to);
        slot.changes.sort_by_key(|ch| ch.block_access_index);
        let what = format!(
            "account {} slot {:#x} index {from} → {to}",
            m[a].address, m[a].storage_changes[s].slot
        );
        push(MutationKind::WriteAtWrongIndex, what, m);
    }
    for k in spread(reads.len(), per_kind) {
        let (a, r) = reads[k];
        let mut m = bal.clone();
        let key = m[a].storage_reads.remove(r);
        let what = format!("account {} slot {key:#x}", m[a].address);
        push(MutationKind::MissingRead, what, m.clone());
        if tx_count > 0 {
            let index = 1 + (k % tx_count) as u64;
            let mut m = bal.clone();
            m[a].storage_reads.remove(r);
            let pos = m[a].storage_changes.partition_point(|s| s.slot < key);
            m[a].storage_changes.insert(
                pos,
                alloy_eip7928::SlotChanges {
                    slot: key,
                    changes: vec![StorageChange {
                        block_access_index: BlockAccessIndex::new(index),
                        new_value: U256::from(0x6761_7367_6173u64),
                    }],
                },
            );
            let what = format!("account {} slot {key:#x} index {index}", m[a].address);
            push(MutationKind::ExtraWrite, what, m);
        }
    }
    let balances: Vec<(usize, usize)> = bal
        .iter()
        .enumerate()
        .flat_map(|(a, acc)| (0..acc.balance_changes.len()).map(move |c| (a, c)))
        .collect();
    for k in spread(balances.len(), per_kind) {
        let (a, c) = balances[k];
        let mut m = bal.clone();
        let change = &mut m[a].balance_changes[c];
        change.post_balance = change.post_balance.wrapping_add(U256::from(1));
        let index = change.block_access_index.get();
        let what = format!("account {} index {index}", m[a].address);
        push(MutationKind::WrongBalance, what, m);
    }
    let nonces: Vec<(usize, usize)> = bal
        .iter()
        .enumerate()
        .flat_map(|(a, acc)| (0..acc.nonce_changes.len()).map(move |c| (a, c)))
        .collect();
    for k in spread(nonces.len(), per_kind) {
        let (a, c) = nonces[k];
        let mut m = bal.clone();
        let change = &mut m[a].nonce_changes[c];
        change.new_nonce = change.new_nonce.wrapping_add(1);
        let index = change.block_access_index.get();
        let what = format!("account {} index {index}", m[a].address);
        push(MutationKind::WrongNonce, what, m);
    }
    for a in spread(bal.len(), per_kind) {
        let mut m = bal.clone();
        let removed = m.remove(a);
        push(
            MutationKind::MissingAccount,
            format!("account {}", removed.address),
            m,
        );
        let mut m = bal.clone();
        m.insert(a, bal[a].clone());
        push(
            MutationKind::DuplicateAccount,
            format!("account {}", bal[a].address),
            m,
        );
    }
    for a in spread(bal.len().saturating_sub(1), per_kind) {
        let mut m = bal.clone();
        m.swap(a, a + 1);
        push(
            MutationKind::UnorderedAccounts,
            format!("accounts {} and {}", bal[a].address, bal[a + 1].address),
            m,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_eip7928::{AccountChanges, BalanceChange, NonceChange, SlotChanges};
    use alloy_primitives::Address;

    fn sample() -> BlockAccessList {
        let idx = BlockAccessIndex::new;
        vec![
            AccountChanges {
                address: Address::repeat_byte(1),
                storage_changes: vec![SlotChanges {
                    slot: U256::from(5),
                    changes: vec![StorageChange {
                        block_access_index: idx(1),
                        new_value: U256::from(9),
                    }],
                }],
                storage_reads: vec![U256::from(7)],
                balance_changes: vec![BalanceChange {
                    block_access_index: idx(2),
                    post_balance: U256::from(100),
                }],
                nonce_changes: vec![NonceChange {
                    block_access_index: idx(2),
                    new_nonce: 3,
                }],
                code_changes: vec![],
            },
            AccountChanges {
                address: Address::repeat_byte(2),
                ..Default::default()
            },
        ]
    }

    #[test]
    fn every_kind_changes_exactly_the_described_thing() {
        let bal = sample();
        let all = mutants(&bal, 2, 3);
        for kind in MutationKind::ALL {
            assert!(all.iter().any(|m| m.kind == kind), "no {kind:?} mutant");
        }
        for m in &all {
            assert_ne!(m.bal, bal, "{:?} changed nothing", m.kind);
        }
        let moved = all
            .iter()
            .find(|m| m.kind == MutationKind::WriteAtWrongIndex)
            .unwrap();
        assert_eq!(
            moved.bal[0].storage_changes[0].changes[0]
                .block_access_index
                .get(),
            2
        );
        let missing = all
            .iter()
            .find(|m| m.kind == MutationKind::MissingWrite)
            .unwrap();
        assert!(missing.bal[0].storage_changes.is_empty());
        assert_eq!(
            missing.bal[0].storage_reads,
            vec![U256::from(5), U256::from(7)]
        );
    }

    #[test]
    fn per_kind_limits_the_count() {
        let bal = sample();
        let one = mutants(&bal, 2, 1);
        for kind in MutationKind::ALL {
            assert!(one.iter().filter(|m| m.kind == kind).count() <= 1);
        }
    }
}
