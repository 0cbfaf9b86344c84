//! The compiled workload contracts and where the generator deploys them.

use alloy_primitives::{address, keccak256, Address, Bytes, U256};
use std::collections::BTreeMap;

/// `contracts/bytecode.json`, produced by `node contracts/build.js` (solc-js, pinned).
const BYTECODE_JSON: &str = include_str!("../../../contracts/bytecode.json");

/// Runtime code of contract `name` (panics on a name not in the compiled set: a build error).
#[allow(clippy::expect_used)] // the compiled contracts are embedded at build time (include_str!) and parsed by the tests
pub fn code(name: &str) -> Bytes {
    let parsed: serde_json::Value = serde_json::from_str(BYTECODE_JSON).expect("bytecode.json");
    let hex = parsed["contracts"][name]
        .as_str()
        .unwrap_or_else(|| panic!("contract {name} missing from contracts/bytecode.json"));
    hex.parse().expect("hex bytecode")
}

/// Token A (ERC-20).
pub const TOKEN_A: Address = address!("0x00000000000000000000000000000000000a0001");
/// Token B (ERC-20).
pub const TOKEN_B: Address = address!("0x00000000000000000000000000000000000a0002");
/// Constant-product pairs of A/B.
pub const PAIRS: [Address; 3] = [
    address!("0x00000000000000000000000000000000000b0001"),
    address!("0x00000000000000000000000000000000000b0002"),
    address!("0x00000000000000000000000000000000000b0003"),
];
/// The swap router.
pub const ROUTER: Address = address!("0x00000000000000000000000000000000000b00ff");
/// NFT mint contract.
pub const NFT: Address = address!("0x00000000000000000000000000000000000c0001");
/// Storage spam / overwrite contract.
pub const SPAM: Address = address!("0x00000000000000000000000000000000000c0002");
/// Keccak loop.
pub const COMPUTE: Address = address!("0x00000000000000000000000000000000000c0003");
/// Serial-chain contract.
pub const SERIAL: Address = address!("0x00000000000000000000000000000000000c0004");
/// Precompile caller.
pub const PRECOMPILES: Address = address!("0x00000000000000000000000000000000000c0005");

/// Storage slot of `mapping(address => ...)` at `slot` for `key` (Solidity layout).
pub fn mapping_slot(key: Address, slot: u64) -> U256 {
    let mut buf = [0u8; 64];
    buf[12..32].copy_from_slice(key.as_slice());
    buf[32..].copy_from_slice(&U256::from(slot).to_be_bytes::<32>());
    U256::from_be_bytes(keccak256(buf).0)
}

/// Storage slot of `mapping(address => mapping(address => ...))` at `slot`.
pub fn nested_mapping_slot(outer: Address, inner: Address, slot: u64) -> U256 {
    let mut buf = [0u8; 64];
    buf[12..32].copy_from_slice(inner.as_slice());
    buf[32..].copy_from_slice(&mapping_slot(outer, slot).to_be_bytes::<32>());
    U256::from_be_bytes(keccak256(buf).0)
}

/// ABI call data: 4-byte selector of `signature` and 32-byte words.
pub fn call(signature: &str, words: &[U256]) -> Bytes {
    let mut data = keccak256(signature.as_bytes())[..4].to_vec();
    for w in words {
        data.extend_from_slice(&w.to_be_bytes::<32>());
    }
    data.into()
}

/// An address as an ABI word.
pub fn word(address: Address) -> U256 {
    U256::from_be_slice(address.as_slice())
}

/// Storage of a contract as a map.
pub type Storage = BTreeMap<U256, U256>;
