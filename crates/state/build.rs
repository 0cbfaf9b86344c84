//! Marks the tests that need inputs outside the repository (see `tools/test-probe.rs`).

#[path = "../../tools/test-probe.rs"]
mod probe;

fn main() {
    probe::shared_data("gigagas_shared_trie_tests", "ethereum-tests/TrieTests");
}
