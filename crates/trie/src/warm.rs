//! Reading ahead the branch nodes an update will walk: every stored node on the paths of the
//! given keys, level by level, each level's nodes read in parallel (on the current rayon pool)
//! and in key order. A disk store's pages are then in the page cache when the root is
//! computed; the nodes themselves are dropped.

use crate::{store::NodeStore, BranchNode, Child, Owner, StoreError};
use alloy_primitives::B256;
use alloy_trie::Nibbles;
use rayon::prelude::*;

/// Reads every stored branch node of trie `owner` on the paths of `keys` (hashed keys; in
/// any order, duplicates allowed). Each node is read once. Returns the number of nodes read.
pub fn warm_paths<S: NodeStore + ?Sized>(
    store: &S,
    owner: Owner,
    keys: &[B256],
) -> Result<usize, StoreError> {
    let mut keys: Vec<Nibbles> = keys.iter().map(|k| Nibbles::unpack(k)).collect();
    keys.sort_unstable();
    keys.dedup();
    let Some((path, node)) = store.seek_node(owner, &Nibbles::new())? else {
        return Ok(0);
    };
    let mut read = 1;
    // The frontier: (a node's path, the node, the range of `keys` below it).
    let mut frontier = vec![(path, node, 0..keys.len())];
    while !frontier.is_empty() {
        let next: Vec<(Nibbles, std::ops::Range<usize>)> = frontier
            .iter()
            .flat_map(|(path, node, range)| children(path, node, &keys, range.clone()))
            .collect();
        read += next.len();
        frontier = next
            .into_par_iter()
            .map(|(path, range)| Ok(store.node(owner, &path)?.map(|node| (path, node, range))))
            .collect::<Result<Vec<_>, StoreError>>()?
            .into_iter()
            .flatten()
            .collect();
    }
    Ok(read)
}

/// The stored child branches of `node` (at `path`) that some key of `keys[range]` passes
/// through: each child's node path and the keys below it.
fn children(
    path: &Nibbles,
    node: &BranchNode,
    keys: &[Nibbles],
    range: std::ops::Range<usize>,
) -> Vec<(Nibbles, std::ops::Range<usize>)> {
    let depth = path.len();
    let mut out = Vec::new();
    let mut i = range.start;
    while i < range.end {
        let key = &keys[i];
        if !key.starts_with(path) || key.len() <= depth {
            i += 1;
            continue;
        }
        let nibble = key.get(depth).unwrap_or(0);
        // Keys of this child: a contiguous run of the sorted keys.
        let end = i + keys[i..range.end]
            .partition_point(|k| k.starts_with(path) && k.get(depth) == Some(nibble));
        let mut child_path = *path;
        child_path.push(nibble);
        match node.child(nibble) {
            Some(Child::Branch(_)) => out.push((child_path, i..end.max(i + 1))),
            Some(Child::Extension(e)) => {
                // Only keys that follow the whole extension pass through its branch; a key
                // that leaves it splits the extension without reading below.
                child_path.extend(&e.ext);
                let run = &keys[i..end.max(i + 1)];
                let lo = i + run.partition_point(|k| *k < child_path);
                let hi =
                    lo + keys[lo..end.max(i + 1)].partition_point(|k| k.starts_with(&child_path));
                if lo < hi {
                    out.push((child_path, lo..hi));
                }
            }
            Some(Child::Leaf(_)) | None => {}
        }
        i = end.max(i + 1);
    }
    out
}
