//! What the store keeps per branch node, and the node encodings.

use alloy_primitives::{keccak256, B256};
use alloy_trie::{
    nodes::{BranchNodeRef, ExtensionNodeRef, LeafNodeRef, RlpNode},
    Nibbles, TrieMask,
};

/// One child of a stored branch node: the reference its parent hashes (`node_ref`: the RLP of
/// the child node, or the RLP of its keccak when that is 32 bytes or more) and enough shape to
/// re-wrap it when a deletion collapses the branch above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Child {
    /// A leaf node; its key and value live in the leaf table.
    Leaf(RlpNode),
    /// A branch node stored directly at `parent path + nibble`.
    Branch(RlpNode),
    /// An extension node leading to a branch stored at `parent path + nibble + ext`.
    Extension(Box<ExtensionChild>),
}

/// An extension child: its key, the reference of the branch it leads to and its own reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionChild {
    /// Key of the extension node (non-empty).
    pub ext: Nibbles,
    /// Reference of the branch node at the end of the extension.
    pub branch_ref: RlpNode,
    /// Reference of the extension node itself (what the parent hashes).
    pub node_ref: RlpNode,
}

impl Child {
    /// The reference the parent branch hashes.
    pub fn node_ref(&self) -> &RlpNode {
        match self {
            Child::Leaf(r) | Child::Branch(r) => r,
            Child::Extension(e) => &e.node_ref,
        }
    }
}

/// A branch node as stored: which of the 16 children exist and, in nibble order, each present
/// child. Stored under its full nibble path (the extension leading to it, if any, is recorded
/// in the parent's [`Child::Extension`]). Every child's reference is kept, so recomputing a
/// changed path never reads an untouched sibling's leaf.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BranchNode {
    /// Bit `n` set when child `n` exists.
    pub state_mask: TrieMask,
    /// The present children, in nibble order.
    pub children: Vec<Child>,
}

impl BranchNode {
    /// Child at `nibble`, if present.
    pub fn child(&self, nibble: u8) -> Option<&Child> {
        let mask = self.state_mask.get();
        if mask & (1 << nibble) == 0 {
            return None;
        }
        let index = (mask & ((1u16 << nibble) - 1)).count_ones() as usize;
        self.children.get(index)
    }

    /// Present children with their nibbles.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &Child)> {
        self.state_mask.iter().zip(self.children.iter())
    }

    /// RLP reference of this branch node (value slot always empty).
    pub fn rlp(&self, buf: &mut Vec<u8>) -> RlpNode {
        let refs: Vec<RlpNode> = self.children.iter().map(|c| c.node_ref().clone()).collect();
        buf.clear();
        BranchNodeRef::new(&refs, self.state_mask).rlp(buf)
    }
}

/// Reference of the leaf node with key suffix `suffix` and (already RLP-encoded) `value`.
pub(crate) fn leaf_ref(suffix: &Nibbles, value: &[u8], buf: &mut Vec<u8>) -> RlpNode {
    buf.clear();
    LeafNodeRef::new(suffix, value).rlp(buf)
}

/// Reference of the extension node with key `ext` pointing at `child`.
pub(crate) fn extension_ref(ext: &Nibbles, child: &RlpNode, buf: &mut Vec<u8>) -> RlpNode {
    buf.clear();
    ExtensionNodeRef::new(ext, child).rlp(buf)
}

/// Root hash from the root node's reference: the hash itself, or keccak of an inline node.
pub(crate) fn root_of_ref(node_ref: &RlpNode) -> B256 {
    node_ref
        .as_hash()
        .unwrap_or_else(|| keccak256(node_ref.as_slice()))
}
