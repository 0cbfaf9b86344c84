//! The ethereum/tests `TrieTests`: every expected root rebuilt with `trie_root`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{hex, keccak256, B256};
use gigagas_state::trie_root;
use serde_json::Value;
use std::collections::BTreeMap;

/// A key or value: `0x`-prefixed hex, or the string's own bytes.
fn bytes(v: &Value) -> Option<Vec<u8>> {
    let s = v.as_str()?;
    Some(match s.strip_prefix("0x") {
        Some(h) => hex::decode(h).expect("hex in TrieTests"),
        None => s.as_bytes().to_vec(),
    })
}

/// The final key/value set of a test: `in` is a map, or a list of updates where `null`
/// deletes.
fn final_entries(input: &Value) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut entries = BTreeMap::new();
    let pairs: Vec<(Value, Value)> = match input {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (Value::String(k.clone()), v.clone()))
            .collect(),
        Value::Array(list) => list
            .iter()
            .map(|pair| (pair[0].clone(), pair[1].clone()))
            .collect(),
        other => panic!("unexpected `in`: {other}"),
    };
    for (k, v) in pairs {
        let key = bytes(&k).expect("key");
        match bytes(&v) {
            Some(value) if !value.is_empty() => {
                entries.insert(key, value);
            }
            _ => {
                entries.remove(&key);
            }
        }
    }
    entries
}

#[test]
#[cfg_attr(
    not(gigagas_shared_trie_tests),
    ignore = "needs ../shared/data/ethereum-tests/TrieTests (GIGAGAS_SHARED_DATA)"
)]
fn every_trie_test_root_matches() {
    let dir = gigagas_data::shared_data_dir("ethereum-tests/TrieTests");
    let mut checked = 0;
    let mut prefixed = 0;
    for file in [
        "trietest.json",
        "trieanyorder.json",
        "trietest_secureTrie.json",
        "trieanyorder_secureTrie.json",
        "hex_encoded_securetrie_test.json",
    ] {
        let secure = file.contains("ecure");
        let text = std::fs::read_to_string(dir.join(file)).expect("read TrieTests file");
        let tests: BTreeMap<String, Value> = serde_json::from_str(&text).expect("json");
        for (name, test) in tests {
            let entries = final_entries(&test["in"]);
            let entries = entries.into_iter().map(|(k, v)| {
                let key = if secure { keccak256(&k).to_vec() } else { k };
                (key, v)
            });
            let expected: B256 = test["root"].as_str().unwrap().parse().unwrap();
            match trie_root(entries) {
                Ok(root) => {
                    assert_eq!(root, expected, "{file} / {name}");
                    checked += 1;
                }
                // Only the unhashed tests have keys that prefix others; state and storage
                // tries never do.
                Err(e) if !secure => {
                    eprintln!("TrieTests {file} / {name}: not built ({e})");
                    prefixed += 1;
                }
                Err(e) => panic!("{file} / {name}: {e}"),
            }
        }
    }
    assert!(checked >= 15, "only {checked} TrieTests found");
    assert!(prefixed <= 10, "{prefixed} tests with prefix keys");
    eprintln!("TrieTests: {checked} roots match, {prefixed} with prefix keys not built");
}
