//! The root of an ordered trie (keys `rlp(index)`, as the receipts and transactions roots
//! use), with the subtries below the upper branches built in parallel on the current rayon
//! pool. alloy-trie's `ordered_trie_root*` feed one `HashBuilder` leaf by leaf, so the whole
//! root (a keccak per leaf and per branch, over receipts of hundreds of bytes each) runs on
//! one thread: on a 300M block of ~3,800 receipts that was ~10 ms, longer than its parallel
//! execution at 16 threads (issue 39). The nodes are alloy-trie's own encodings; only the
//! recursion is written here, and the tests hold it equal to alloy-trie's root.

use alloy_primitives::{keccak256, B256};
use alloy_rlp::Encodable;
use alloy_trie::{
    nodes::{BranchNodeRef, ExtensionNodeRef, LeafNodeRef, RlpNode},
    Nibbles, TrieMask, EMPTY_ROOT_HASH,
};
use rayon::prelude::*;

/// Leaves below which a subtrie is built on the calling thread (a task per child costs more
/// than hashing a few nodes).
const PARALLEL_MIN: usize = 64;

/// The root of the trie mapping `rlp(i)` to `values[i]`: equal to alloy-trie's
/// `ordered_trie_root_encoded(values)`.
pub fn ordered_trie_root(values: &[Vec<u8>]) -> B256 {
    if values.is_empty() {
        return EMPTY_ROOT_HASH;
    }
    let mut leaves: Vec<(Nibbles, usize)> = (0..values.len())
        .map(|i| (Nibbles::unpack(alloy_rlp::encode_fixed_size(&i)), i))
        .collect();
    leaves.sort_unstable_by_key(|leaf| leaf.0);
    // The root is hashed whatever its length.
    keccak256(node(&leaves, 0, values))
}

/// The RLP of the node at `depth` over `leaves` (sorted, at least one, sharing their first
/// `depth` nibbles). `rlp(i)` keys are prefix-free (no key is the start of another), so no
/// branch holds a value.
fn node(leaves: &[(Nibbles, usize)], depth: usize, values: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let (first, last) = (&leaves[0].0, &leaves[leaves.len() - 1].0);
    if leaves.len() == 1 {
        let suffix = first.slice(depth..);
        LeafNodeRef::new(&suffix, &values[leaves[0].1]).encode(&mut out);
        return out;
    }
    // Sorted: what the first and last share, all share.
    let shared = first.common_prefix_length(last);
    if shared > depth {
        let child = RlpNode::from_rlp(&branch(leaves, shared, values));
        let key = first.slice(depth..shared);
        ExtensionNodeRef::new(&key, &child).encode(&mut out);
        return out;
    }
    branch(leaves, depth, values)
}

/// The RLP of the branch at `depth` over `leaves` (at least two, differing at `depth`).
fn branch(leaves: &[(Nibbles, usize)], depth: usize, values: &[Vec<u8>]) -> Vec<u8> {
    // The runs of equal nibbles at `depth`, in order.
    let mut groups: Vec<(u8, &[(Nibbles, usize)])> = Vec::with_capacity(16);
    let mut start = 0;
    for i in 1..=leaves.len() {
        let nibble = leaves[start].0.get_unchecked(depth);
        if i == leaves.len() || leaves[i].0.get_unchecked(depth) != nibble {
            groups.push((nibble, &leaves[start..i]));
            start = i;
        }
    }
    let child =
        |(_, group): &(u8, &[(Nibbles, usize)])| RlpNode::from_rlp(&node(group, depth + 1, values));
    let stack: Vec<RlpNode> = if leaves.len() >= PARALLEL_MIN {
        groups.par_iter().map(child).collect()
    } else {
        groups.iter().map(child).collect()
    };
    let mut mask = TrieMask::default();
    for (nibble, _) in &groups {
        mask.set_bit(*nibble);
    }
    let mut out = Vec::new();
    BranchNodeRef::new(&stack, mask).encode(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_to_alloy_trie_at_the_key_length_edges() {
        // rlp(i) changes length at 1, 128 and 256; the trie's shape changes with it.
        for n in [
            0, 1, 2, 3, 16, 17, 127, 128, 129, 200, 255, 256, 257, 1000, 4097,
        ] {
            let values: Vec<Vec<u8>> = (0..n)
                .map(|i| (0..(i % 70)).map(|b| (b * 7 + i) as u8).collect())
                .collect();
            assert_eq!(
                ordered_trie_root(&values),
                alloy_trie::root::ordered_trie_root_encoded(&values),
                "{n} values"
            );
        }
    }

    proptest! {
        /// Any number of values of any length (short ones embed their leaves in the parent,
        /// long ones are hashed): the same root as alloy-trie's.
        #[test]
        fn equal_to_alloy_trie(values in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..80), 0..600)) {
            prop_assert_eq!(
                ordered_trie_root(&values),
                alloy_trie::root::ordered_trie_root_encoded(&values)
            );
        }
    }
}
