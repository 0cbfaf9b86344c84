//! A streamed build (leaves pushed in key order, nodes handed out as they complete) gives the
//! root and exactly the branch nodes of the in-memory from-scratch build, and refuses an
//! unsorted stream.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{keccak256, B256, U256};
use alloy_trie::{HashBuilder, Nibbles, EMPTY_ROOT_HASH, KECCAK_EMPTY};
use gigagas_trie::{
    from_scratch, join_parts, AccountInfo, BranchNode, Parallelism, StreamBuilder, StreamError,
};
use proptest::prelude::*;
use std::{collections::BTreeMap, convert::Infallible};

/// Streams `slots` (sorted here) and returns the root and the nodes by path.
fn streamed(slots: &BTreeMap<B256, U256>) -> (B256, BTreeMap<Nibbles, BranchNode>, u64) {
    let mut nodes = BTreeMap::new();
    let mut builder = StreamBuilder::new(|path, node| {
        assert!(
            nodes.insert(path, node).is_none(),
            "a node handed out twice"
        );
        Ok::<(), Infallible>(())
    });
    for (k, v) in slots {
        builder.push(*k, alloy_rlp::encode(v)).unwrap();
    }
    let built = builder.finish().unwrap();
    assert_eq!(built.leaves, slots.len() as u64);
    (built.root, nodes, built.nodes)
}

/// Keys that share long prefixes: each byte drawn from a small alphabet.
fn keys() -> impl Strategy<Value = BTreeMap<B256, U256>> {
    let byte = prop_oneof![
        Just(0x00u8),
        Just(0x01),
        Just(0x10),
        Just(0xff),
        any::<u8>()
    ];
    let key =
        (proptest::collection::vec(byte, 1..6), any::<[u8; 32]>()).prop_map(|(head, mut rest)| {
            rest[..head.len()].copy_from_slice(&head);
            B256::from(rest)
        });
    proptest::collection::btree_map(key, (1u64..u64::MAX).prop_map(U256::from), 0..300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn streamed_equals_from_scratch(slots in keys()) {
        let owner = B256::repeat_byte(7);
        let info = AccountInfo { nonce: 1, balance: U256::ZERO, code_hash: KECCAK_EMPTY };
        let (_, store) = from_scratch(
            [(owner, info)],
            [(owner, slots.iter().map(|(k, v)| (*k, *v)).collect())],
            Parallelism::Serial,
        );
        let (root, nodes, count) = streamed(&slots);
        let expected_root = store.accounts.get(&owner).map(|a| a.storage_root).unwrap();
        prop_assert_eq!(root, expected_root);
        let expected = store.storage_nodes.get(&owner).cloned().unwrap_or_default();
        prop_assert_eq!(count as usize, expected.len());
        prop_assert_eq!(nodes, expected);

        // And an independent root: alloy-trie's HashBuilder.
        let mut hb = HashBuilder::default();
        for (k, v) in &slots {
            hb.add_leaf(Nibbles::unpack(k), &alloy_rlp::encode(v));
        }
        prop_assert_eq!(root, hb.root());
    }
}

/// Streams `slots` as 16 parts, one per first nibble, and joins them.
fn streamed_in_parts(slots: &BTreeMap<B256, U256>) -> (B256, BTreeMap<Nibbles, BranchNode>, u64) {
    let mut nodes = BTreeMap::new();
    let mut parts = Vec::new();
    for nibble in 0..16u8 {
        let mut builder = StreamBuilder::new(|path, node| {
            assert!(
                nodes.insert(path, node).is_none(),
                "a node handed out twice"
            );
            Ok::<(), Infallible>(())
        });
        for (k, v) in slots.iter().filter(|(k, _)| k[0] >> 4 == nibble) {
            builder.push(*k, alloy_rlp::encode(v)).unwrap();
        }
        parts.push(builder.finish_part().unwrap());
    }
    let built = join_parts(parts, |path, node| {
        assert!(
            nodes.insert(path, node).is_none(),
            "the root handed out twice"
        );
        Ok::<(), Infallible>(())
    })
    .unwrap();
    assert_eq!(built.leaves, slots.len() as u64);
    (built.root, nodes, built.nodes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A trie built as 16 parts (one per first nibble) and joined is the trie built in one
    /// stream: the same root, the same nodes, the same count.
    #[test]
    fn parts_joined_equal_one_stream(slots in keys()) {
        prop_assert_eq!(streamed_in_parts(&slots), streamed(&slots));
    }
}

#[test]
fn parts_must_hold_one_first_nibble_each_in_order() {
    let part = |keys: &[u8]| {
        let mut b = StreamBuilder::new(|_, _| Ok::<(), Infallible>(()));
        for k in keys {
            b.push(B256::repeat_byte(*k), vec![1]).unwrap();
        }
        b.finish_part().unwrap()
    };
    let sink = |_, _| Ok::<(), Infallible>(());
    // Keys under two first nibbles in one part.
    assert!(matches!(
        join_parts(vec![part(&[0x11, 0x22])], sink),
        Err(StreamError::PartsOverlap)
    ));
    // Parts out of order, or twice the same nibble.
    assert!(matches!(
        join_parts(vec![part(&[0x22]), part(&[0x11])], sink),
        Err(StreamError::PartsOverlap)
    ));
    assert!(matches!(
        join_parts(vec![part(&[0x11]), part(&[0x12])], sink),
        Err(StreamError::PartsOverlap)
    ));
    // Empty parts are skipped.
    let joined = join_parts(vec![part(&[]), part(&[0x11]), part(&[])], sink).unwrap();
    assert_eq!(joined.leaves, 1);
}

#[test]
fn empty_and_single_leaf() {
    assert_eq!(streamed(&BTreeMap::new()).0, EMPTY_ROOT_HASH);
    let one: BTreeMap<B256, U256> = [(keccak256([1u8]), U256::from(5))].into();
    let (root, nodes, _) = streamed(&one);
    assert!(nodes.is_empty());
    let mut hb = HashBuilder::default();
    hb.add_leaf(
        Nibbles::unpack(keccak256([1u8])),
        &alloy_rlp::encode(U256::from(5)),
    );
    assert_eq!(root, hb.root());
}

#[test]
fn unsorted_or_repeated_keys_are_refused() {
    let mut b = StreamBuilder::new(|_, _| Ok::<(), Infallible>(()));
    b.push(B256::repeat_byte(2), vec![1]).unwrap();
    let err = b.push(B256::repeat_byte(1), vec![1]).unwrap_err();
    assert!(matches!(err, StreamError::NotSorted { .. }), "{err}");
    let err = b.push(B256::repeat_byte(2), vec![1]).unwrap_err();
    assert!(matches!(err, StreamError::NotSorted { .. }), "{err}");
    assert!(matches!(
        b.push(B256::repeat_byte(3), vec![]).unwrap_err(),
        StreamError::EmptyValue(_)
    ));
}
