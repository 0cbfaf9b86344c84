//! Incremental, parallel Ethereum state root.
//!
//! The secure state trie (keccak(address) → RLP account) and the storage tries
//! (keccak(slot) → RLP value) are kept as branch nodes in a [`NodeStore`], keyed by
//! (owner, nibble path), each recording every child's reference; leaves live in the store's
//! hashed-account and hashed-storage tables. [`apply`] re-hashes only the paths a
//! [`ChangeSet`] touches: it walks the stored nodes along the sorted changed keys, reuses
//! untouched children's references, builds new subtrees where keys are inserted, and collapses
//! branches that deletions leave with one child (reading that child's leaf from the leaf table
//! when it is a leaf). Storage tries run in parallel heaviest first, and any walk forks into
//! its 16 children's key prefixes at a node with enough changes below it, so one hot storage
//! trie is split by its own hashed-slot prefix and stitched back at the node where it forked.
//!
//! The result equals a from-scratch build, node for node (tested with proptest).

mod node;
mod state;
mod store;
mod stream;
mod update;
mod warm;

pub use node::{BranchNode, Child, ExtensionChild};
pub use state::{
    apply, compute_updates, from_prestate, from_scratch, stored_root, write_updates, AccountChange,
    AccountInfo, ChangeSet, Parallelism, StateUpdates,
};
pub use store::{lower_bound, MemoryStore, NodeStore, Owner, StoreError};
pub use stream::{join_parts, Built, Part, StreamBuilder, StreamError};
pub use update::TrieUpdates;
pub use warm::warm_paths;
