//! Key and value encodings. Keys are built so that byte order is the order the trie walks
//! need: a nibble path is one byte per nibble (so a path sorts before every path it is a
//! prefix of, as `Nibbles` do), storage keys start with the owner's hashed address.

use crate::{kv::Table, Error};
use alloy_primitives::{B256, U256};
use alloy_trie::{nodes::RlpNode, Nibbles, TrieAccount, TrieMask};
use gigagas_trie::{BranchNode, Child, ExtensionChild, Owner};

/// Lower-case hex of `bytes` (for error messages).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn corrupt(table: Table, key: &[u8], what: impl Into<String>) -> Error {
    Error::Corrupt {
        table: table.name(),
        key: hex(key),
        what: what.into(),
    }
}

/// The nibbles of `path`, one byte each.
pub fn nibble_bytes(path: &Nibbles) -> Vec<u8> {
    path.to_vec()
}

/// Table and key of the branch node at `path` of trie `owner`.
pub fn node_key(owner: Owner, path: &Nibbles) -> (Table, Vec<u8>) {
    match owner {
        None => (Table::AccountTrie, nibble_bytes(path)),
        Some(o) => {
            let mut key = Vec::with_capacity(32 + path.len());
            key.extend_from_slice(o.as_slice());
            key.extend_from_slice(&path.to_vec());
            (Table::StorageTrie, key)
        }
    }
}

/// The nibble path of a node key (after the owner, for storage tries).
pub fn decode_path(table: Table, key: &[u8], nibbles: &[u8]) -> Result<Nibbles, Error> {
    if nibbles.len() > 64 || nibbles.iter().any(|n| *n > 15) {
        return Err(corrupt(table, key, "key is not a nibble path"));
    }
    Ok(Nibbles::from_nibbles_unchecked(nibbles))
}

/// `owner ‖ hashed_slot`.
pub fn slot_key(owner: &B256, hashed_slot: &B256) -> [u8; 64] {
    let mut key = [0u8; 64];
    key[..32].copy_from_slice(owner.as_slice());
    key[32..].copy_from_slice(hashed_slot.as_slice());
    key
}

/// A 32-byte key.
pub fn b256(table: Table, key: &[u8], bytes: &[u8]) -> Result<B256, Error> {
    B256::try_from(bytes).map_err(|_| corrupt(table, key, "expected a 32-byte hash"))
}

/// A slot value: big-endian, leading zeros stripped.
pub fn encode_value(value: &U256) -> Vec<u8> {
    let bytes = value.to_be_bytes::<32>();
    let first = bytes.iter().position(|b| *b != 0).unwrap_or(32);
    bytes[first..].to_vec()
}

/// Inverse of [`encode_value`]; zero is not stored, so an empty or zero value is corrupt.
pub fn decode_value(key: &[u8], bytes: &[u8]) -> Result<U256, Error> {
    if bytes.is_empty() || bytes.len() > 32 || bytes[0] == 0 {
        return Err(corrupt(
            Table::Storage,
            key,
            "slot value is not a non-zero minimal big-endian number",
        ));
    }
    Ok(U256::from_be_slice(bytes))
}

/// An account leaf, RLP.
pub fn encode_account(account: &TrieAccount) -> Vec<u8> {
    alloy_rlp::encode(account)
}

/// Inverse of [`encode_account`].
pub fn decode_account(key: &[u8], mut bytes: &[u8]) -> Result<TrieAccount, Error> {
    let account: TrieAccount = alloy_rlp::Decodable::decode(&mut bytes)
        .map_err(|e| corrupt(Table::Accounts, key, format!("account RLP: {e}")))?;
    if !bytes.is_empty() {
        return Err(corrupt(
            Table::Accounts,
            key,
            "trailing bytes after the account",
        ));
    }
    Ok(account)
}

const LEAF: u8 = 0;
const BRANCH: u8 = 1;
const EXTENSION: u8 = 2;

fn put_ref(out: &mut Vec<u8>, r: &RlpNode) {
    out.push(r.len() as u8);
    out.extend_from_slice(r.as_slice());
}

/// A branch node: state mask (2 bytes big-endian), then per present child a tag (0 leaf,
/// 1 branch, 2 extension) and its references (length byte + bytes; an extension first has
/// its key as length byte + one byte per nibble, then the reference of the branch it leads
/// to, then its own).
pub fn encode_node(node: &BranchNode) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + node.children.len() * 34);
    out.extend_from_slice(&node.state_mask.get().to_be_bytes());
    for child in &node.children {
        match child {
            Child::Leaf(r) => {
                out.push(LEAF);
                put_ref(&mut out, r);
            }
            Child::Branch(r) => {
                out.push(BRANCH);
                put_ref(&mut out, r);
            }
            Child::Extension(e) => {
                out.push(EXTENSION);
                out.push(e.ext.len() as u8);
                out.extend_from_slice(&e.ext.to_vec());
                put_ref(&mut out, &e.branch_ref);
                put_ref(&mut out, &e.node_ref);
            }
        }
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    table: Table,
    key: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Error> {
        if self.bytes.len() < n {
            return Err(corrupt(self.table, self.key, "branch node is truncated"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    fn node_ref(&mut self) -> Result<RlpNode, Error> {
        let n = self.byte()? as usize;
        let (table, key) = (self.table, self.key);
        RlpNode::from_raw(self.take(n)?)
            .filter(|r| !r.is_empty())
            .ok_or_else(|| corrupt(table, key, "child reference longer than 33 bytes or empty"))
    }
}

/// Inverse of [`encode_node`]; anything malformed is [`Error::Corrupt`] naming the table
/// and key.
pub fn decode_node(table: Table, key: &[u8], bytes: &[u8]) -> Result<BranchNode, Error> {
    let mut r = Reader { bytes, table, key };
    let mask = u16::from_be_bytes([r.byte()?, r.byte()?]);
    let count = mask.count_ones() as usize;
    if count < 2 {
        return Err(corrupt(
            table,
            key,
            format!("branch node with {count} children"),
        ));
    }
    let mut children = Vec::with_capacity(count);
    for _ in 0..count {
        children.push(match r.byte()? {
            LEAF => Child::Leaf(r.node_ref()?),
            BRANCH => Child::Branch(r.node_ref()?),
            EXTENSION => {
                let n = r.byte()? as usize;
                let nibbles = r.take(n)?.to_vec();
                if n == 0 {
                    return Err(corrupt(table, key, "empty extension key"));
                }
                let ext = decode_path(table, key, &nibbles)?;
                let branch_ref = r.node_ref()?;
                let node_ref = r.node_ref()?;
                Child::Extension(Box::new(ExtensionChild {
                    ext,
                    branch_ref,
                    node_ref,
                }))
            }
            tag => {
                return Err(corrupt(
                    table,
                    key,
                    format!("unknown child tag {tag} in branch node"),
                ))
            }
        });
    }
    if !r.bytes.is_empty() {
        return Err(corrupt(table, key, "trailing bytes after the branch node"));
    }
    Ok(BranchNode {
        state_mask: TrieMask::new(mask),
        children,
    })
}

/// The head record: block number (8 bytes big-endian), block hash, state root.
pub fn encode_head(head: &crate::Head) -> Vec<u8> {
    let mut out = Vec::with_capacity(72);
    out.extend_from_slice(&head.number.to_be_bytes());
    out.extend_from_slice(head.hash.as_slice());
    out.extend_from_slice(head.state_root.as_slice());
    out
}

/// Inverse of [`encode_head`].
pub fn decode_head(bytes: &[u8]) -> Result<crate::Head, Error> {
    if bytes.len() != 72 {
        return Err(corrupt(
            Table::Meta,
            b"head",
            format!("head record is {} bytes, expected 72", bytes.len()),
        ));
    }
    let mut number = [0u8; 8];
    number.copy_from_slice(&bytes[..8]);
    Ok(crate::Head {
        number: u64::from_be_bytes(number),
        hash: B256::from_slice(&bytes[8..40]),
        state_root: B256::from_slice(&bytes[40..72]),
    })
}
