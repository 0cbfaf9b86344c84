//! World state after a block, and its Merkle-Patricia root.
//!
//! - [`apply_changes`]: pre-state + the final accounts of an executed block (revm's
//!   `PostState`, from either execution path) → the next block's pre-state, with
//!   self-destructed and EIP-161-deleted accounts removed and zero slots dropped;
//!   [`first_difference`] names where two states differ.
//! - [`state_root`]: the accounts trie over keccak(address) with every account's storage trie
//!   over keccak(slot), built with `alloy-trie`'s `HashBuilder`; storage tries in parallel
//!   (rayon), the way a client's commitment stage splits the work.
//! - [`trie_root`]: the root of any key/value set, for the ethereum/tests `TrieTests`.
//!
//! Architecture invariant: pure functions of in-memory state; no I/O, no execution.

mod apply;
mod root;

pub use apply::{apply_changes, first_difference};
pub use root::{state_root, state_root_serial, storage_root, trie_root, PrefixKeyError};
