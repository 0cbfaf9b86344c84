//! One trie's incremental update: walk the stored branch nodes along the sorted changed keys,
//! re-hash only what changed, reuse every untouched child's stored reference, collapse branches
//! left with one child, and (when parallel) fork the walk at nodes with many changes below.

use crate::{
    node::{extension_ref, leaf_ref, root_of_ref, BranchNode, Child, ExtensionChild},
    store::{NodeStore, Owner, StoreError},
};
use alloy_primitives::B256;
use alloy_trie::{nodes::RlpNode, Nibbles, TrieMask, EMPTY_ROOT_HASH};
use rayon::prelude::*;

/// A changed key: `Some(rlp value)` to insert or update, `None` to delete.
pub(crate) type Change = (Nibbles, Option<Vec<u8>>);

/// A leaf to build from: full key and RLP value.
pub(crate) type Leaf = (Nibbles, Vec<u8>);

/// Node writes of one trie, by path: `Some` put, `None` delete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrieUpdates {
    /// Every node of the trie is removed before `nodes` are written (storage wiped, account
    /// deleted).
    pub wiped: bool,
    /// Puts (`Some`) and deletes (`None`), sorted by nibble path, one per path.
    pub nodes: Vec<(Nibbles, Option<BranchNode>)>,
}

type Writes = Vec<(Nibbles, Option<BranchNode>)>;

/// The subtree below some position after (or before) an update.
#[derive(Debug, Clone)]
pub(crate) enum Sub {
    Empty,
    Leaf { key: Nibbles, value: Vec<u8> },
    Branch { path: Nibbles, branch_ref: RlpNode },
}

/// A slot of a branch being recomposed.
enum Slot {
    Absent,
    Stored(Child),
    New(Sub),
}

impl Sub {
    /// The child a branch at depth `pos_len - 1` records for this subtree at `pos_len`.
    pub(crate) fn to_child(&self, pos_len: usize, buf: &mut Vec<u8>) -> Option<Child> {
        match self {
            Sub::Empty => None,
            Sub::Leaf { key, value } => {
                Some(Child::Leaf(leaf_ref(&key.slice(pos_len..), value, buf)))
            }
            Sub::Branch { path, branch_ref } => {
                let ext = path.slice(pos_len..);
                if ext.is_empty() {
                    Some(Child::Branch(branch_ref.clone()))
                } else {
                    let node_ref = extension_ref(&ext, branch_ref, buf);
                    Some(Child::Extension(Box::new(ExtensionChild {
                        ext,
                        branch_ref: branch_ref.clone(),
                        node_ref,
                    })))
                }
            }
        }
    }

    /// Root hash of a trie whose root subtree is `self`.
    pub(crate) fn root_hash(&self) -> B256 {
        let mut buf = Vec::with_capacity(128);
        match self.to_child(0, &mut buf) {
            None => EMPTY_ROOT_HASH,
            Some(child) => {
                // A root is hashed even when its encoding is shorter than 32 bytes.
                let r = child.node_ref();
                match r.as_hash() {
                    Some(hash) => hash,
                    None => root_of_ref(r),
                }
            }
        }
    }
}

/// Update of one trie against a read-only store.
pub(crate) struct TrieWalk<'a, S: ?Sized> {
    pub store: &'a S,
    pub owner: Owner,
    /// Fork the walk (rayon) at a node with at least this many changes below; `None`: serial.
    pub split: Option<usize>,
}

impl<S: NodeStore + ?Sized> TrieWalk<'_, S> {
    /// The trie's current root subtree, from the store.
    pub fn root_sub(&self) -> Result<Sub, StoreError> {
        if let Some((path, node)) = self.store.seek_node(self.owner, &Nibbles::new())? {
            let branch_ref = node.rlp(&mut Vec::with_capacity(600));
            return Ok(Sub::Branch { path, branch_ref });
        }
        Ok(self.seek_leaf(&Nibbles::new())?.unwrap_or(Sub::Empty))
    }

    /// Applies sorted, distinct `changes` to the trie whose root subtree is `root`.
    pub fn run(&self, root: Sub, changes: &[Change]) -> Result<(Sub, Writes), StoreError> {
        let mut out = Writes::new();
        let sub = self.update(Nibbles::new(), root, changes, &mut out)?;
        Ok((sub, out))
    }

    /// Builds a trie from scratch out of sorted, distinct leaves.
    pub fn build_root(&self, leaves: &[Leaf]) -> (Sub, Writes) {
        let mut out = Writes::new();
        let sub = self.build(Nibbles::new(), leaves, &mut out);
        (sub, out)
    }

    fn seek_leaf(&self, prefix: &Nibbles) -> Result<Option<Sub>, StoreError> {
        Ok(match self.owner {
            None => self.store.seek_account(prefix)?.map(|(k, a)| Sub::Leaf {
                key: Nibbles::unpack(k),
                value: alloy_rlp::encode(a),
            }),
            Some(owner) => self
                .store
                .seek_slot(owner, prefix)?
                .map(|(k, v)| Sub::Leaf {
                    key: Nibbles::unpack(k),
                    value: alloy_rlp::encode(v),
                }),
        })
    }

    fn missing(&self, path: Nibbles, what: &'static str) -> StoreError {
        StoreError::Missing {
            owner: self.owner,
            path,
            what,
        }
    }

    fn fork(&self, n: usize) -> bool {
        self.split.is_some_and(|s| n >= s)
    }

    /// The subtree at `pos` after applying `changes` (all under `pos`) to `cur`.
    fn update(
        &self,
        pos: Nibbles,
        cur: Sub,
        changes: &[Change],
        out: &mut Writes,
    ) -> Result<Sub, StoreError> {
        if changes.is_empty() {
            return Ok(cur);
        }
        match cur {
            Sub::Empty => {
                let leaves: Vec<Leaf> = changes
                    .iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| (*k, v.clone())))
                    .collect();
                Ok(self.build(pos, &leaves, out))
            }
            Sub::Leaf { key, value } => {
                let mut leaves = Vec::with_capacity(changes.len() + 1);
                let mut old = Some((key, value));
                for (k, v) in changes {
                    if let Some(o) = old.take_if(|(ok, _)| &*ok < k) {
                        leaves.push(o);
                    } else if old.as_ref().is_some_and(|(ok, _)| ok == k) {
                        old = None;
                    }
                    if let Some(v) = v {
                        leaves.push((*k, v.clone()));
                    }
                }
                leaves.extend(old);
                Ok(self.build(pos, &leaves, out))
            }
            Sub::Branch { path, branch_ref } => {
                // Keys under `path` are one contiguous run of the sorted changes.
                let lo = changes.partition_point(|(k, _)| *k < path);
                let hi = lo + changes[lo..].partition_point(|(k, _)| k.starts_with(&path));
                let divergent_len = changes[..lo]
                    .iter()
                    .chain(&changes[hi..])
                    .filter(|(_, v)| v.is_some())
                    .map(|(k, _)| k.common_prefix_length(&path))
                    .min();
                let Some(d_len) = divergent_len else {
                    // Changes outside `path` only delete keys that do not exist.
                    if lo == hi {
                        return Ok(Sub::Branch { path, branch_ref });
                    }
                    return self.update_branch(path, &changes[lo..hi], out);
                };
                // A new branch at `d` splits the extension above `path`.
                let d = path.slice(..d_len);
                let lo = changes.partition_point(|(k, _)| *k < d);
                let hi = lo + changes[lo..].partition_point(|(k, _)| k.starts_with(&d));
                let changes = &changes[lo..hi];
                let old_nibble = path.get_unchecked(d_len);
                let mut slots: [Slot; 16] = std::array::from_fn(|_| Slot::Absent);
                slots[old_nibble as usize] = Slot::New(Sub::Branch { path, branch_ref });
                for (nibble, group) in groups(changes, d_len) {
                    let child_pos = push(d, nibble);
                    let sub = if nibble == old_nibble {
                        let Slot::New(old) =
                            std::mem::replace(&mut slots[nibble as usize], Slot::Absent)
                        else {
                            unreachable!()
                        };
                        self.update(child_pos, old, group, out)?
                    } else {
                        self.update(child_pos, Sub::Empty, group, out)?
                    };
                    slots[nibble as usize] = Slot::New(sub);
                }
                self.compose(d, slots, false, out)
            }
        }
    }

    /// Updates the stored branch at `path`; every change is under `path`.
    fn update_branch(
        &self,
        path: Nibbles,
        changes: &[Change],
        out: &mut Writes,
    ) -> Result<Sub, StoreError> {
        let node = self
            .store
            .node(self.owner, &path)?
            .ok_or_else(|| self.missing(path, "branch node"))?;
        let groups: Vec<(u8, &[Change])> = groups(changes, path.len()).collect();
        let one = |nibble: u8, group: &[Change], out: &mut Writes| -> Result<Sub, StoreError> {
            let child_pos = push(path, nibble);
            let cur = match node.child(nibble) {
                None => Sub::Empty,
                Some(child) => self.stored_sub(child_pos, child)?,
            };
            self.update(child_pos, cur, group, out)
        };
        let mut slots: [Slot; 16] = std::array::from_fn(|_| Slot::Absent);
        for (nibble, child) in node.iter() {
            slots[nibble as usize] = Slot::Stored(child.clone());
        }
        if self.fork(changes.len()) && groups.len() > 1 {
            let results: Vec<Result<(u8, Sub, Writes), StoreError>> = groups
                .par_iter()
                .with_max_len(1)
                .map(|(nibble, group)| {
                    let mut w = Writes::new();
                    one(*nibble, group, &mut w).map(|s| (*nibble, s, w))
                })
                .collect();
            let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
            // One growth for all the forks' writes: appended one by one, a large list is
            // reallocated (fresh pages from the OS, zeroed by the kernel) at every doubling.
            out.reserve(results.iter().map(|(_, _, w)| w.len()).sum());
            for (nibble, sub, mut w) in results {
                out.append(&mut w);
                slots[nibble as usize] = Slot::New(sub);
            }
        } else {
            for (nibble, group) in groups {
                let sub = one(nibble, group, out)?;
                slots[nibble as usize] = Slot::New(sub);
            }
        }
        self.compose(path, slots, true, out)
    }

    /// The subtree a stored child stands for (a leaf is read from the leaf table).
    fn stored_sub(&self, pos: Nibbles, child: &Child) -> Result<Sub, StoreError> {
        Ok(match child {
            Child::Leaf(_) => self
                .seek_leaf(&pos)?
                .ok_or_else(|| self.missing(pos, "leaf"))?,
            Child::Branch(r) => Sub::Branch {
                path: pos,
                branch_ref: r.clone(),
            },
            Child::Extension(e) => Sub::Branch {
                path: pos.join(&e.ext),
                branch_ref: e.branch_ref.clone(),
            },
        })
    }

    /// The subtree rooted at a branch position `at` with these children: nothing, the single
    /// child itself (the branch collapses), or a branch node written at `at`.
    fn compose(
        &self,
        at: Nibbles,
        slots: [Slot; 16],
        existed: bool,
        out: &mut Writes,
    ) -> Result<Sub, StoreError> {
        let present = |s: &Slot| !matches!(s, Slot::Absent | Slot::New(Sub::Empty));
        let count = slots.iter().filter(|s| present(s)).count();
        if count <= 1 {
            if existed {
                out.push((at, None));
            }
            let Some((nibble, slot)) = slots.into_iter().enumerate().find(|(_, s)| present(s))
            else {
                return Ok(Sub::Empty);
            };
            return match slot {
                Slot::New(sub) => Ok(sub),
                Slot::Stored(child) => self.stored_sub(push(at, nibble as u8), &child),
                Slot::Absent => unreachable!(),
            };
        }
        let mut buf = Vec::with_capacity(600);
        let mut node = BranchNode {
            state_mask: TrieMask::default(),
            children: Vec::with_capacity(count),
        };
        for (nibble, slot) in slots.into_iter().enumerate() {
            let child = match slot {
                Slot::Absent => None,
                Slot::Stored(child) => Some(child),
                Slot::New(sub) => sub.to_child(at.len() + 1, &mut buf),
            };
            if let Some(child) = child {
                node.state_mask.set_bit(nibble as u8);
                node.children.push(child);
            }
        }
        let branch_ref = node.rlp(&mut buf);
        out.push((at, Some(node)));
        Ok(Sub::Branch {
            path: at,
            branch_ref,
        })
    }

    /// The subtree at `pos` holding exactly `leaves` (sorted, distinct, all under `pos`).
    fn build(&self, pos: Nibbles, leaves: &[Leaf], out: &mut Writes) -> Sub {
        match leaves {
            [] => return Sub::Empty,
            [(key, value)] => {
                return Sub::Leaf {
                    key: *key,
                    value: value.clone(),
                }
            }
            _ => {}
        }
        let first = &leaves[0].0;
        let last = &leaves[leaves.len() - 1].0;
        let at = first.slice(..first.common_prefix_length(last).max(pos.len()));
        let groups: Vec<(u8, &[Leaf])> = groups(leaves, at.len()).collect();
        let mut slots: [Slot; 16] = std::array::from_fn(|_| Slot::Absent);
        if self.fork(leaves.len()) {
            let results: Vec<(u8, Sub, Writes)> = groups
                .par_iter()
                .with_max_len(1)
                .map(|(nibble, group)| {
                    let mut w = Writes::new();
                    let sub = self.build(push(at, *nibble), group, &mut w);
                    (*nibble, sub, w)
                })
                .collect();
            for (nibble, sub, mut w) in results {
                out.append(&mut w);
                slots[nibble as usize] = Slot::New(sub);
            }
        } else {
            for (nibble, group) in groups {
                slots[nibble as usize] = Slot::New(self.build(push(at, nibble), group, out));
            }
        }
        // Every slot is `Slot::New`: composing reads nothing from the store, the only source
        // of its errors. TODO(issue 29): return the Result through `build`.
        #[allow(clippy::expect_used)]
        self.compose(at, slots, false, out)
            .expect("a new branch reads nothing")
    }
}

fn push(mut path: Nibbles, nibble: u8) -> Nibbles {
    path.push_unchecked(nibble);
    path
}

/// Runs of sorted entries (all sharing a prefix of length `depth`) by their nibble at `depth`.
fn groups<T>(
    entries: &[(Nibbles, T)],
    depth: usize,
) -> impl Iterator<Item = (u8, &[(Nibbles, T)])> {
    let mut rest = entries;
    std::iter::from_fn(move || {
        let (first, _) = rest.first()?;
        let nibble = first.get_unchecked(depth);
        let n = rest.partition_point(|(k, _)| k.get_unchecked(depth) <= nibble);
        let (group, tail) = rest.split_at(n);
        rest = tail;
        Some((nibble, group))
    })
}

/// Turns a walk's write list into per-path updates (sorted in parallel when large).
pub(crate) fn into_updates(wiped: bool, mut nodes: Writes, parallel: bool) -> TrieUpdates {
    if parallel && nodes.len() >= 4096 {
        nodes.par_sort_unstable_by_key(|a| a.0);
    } else {
        nodes.sort_unstable_by_key(|a| a.0);
    }
    debug_assert!(
        nodes.windows(2).all(|w| w[0].0 != w[1].0),
        "two writes at one path"
    );
    TrieUpdates { wiped, nodes }
}
