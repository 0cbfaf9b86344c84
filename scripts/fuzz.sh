#!/usr/bin/env bash
# Long fuzz run of every input parser (block JSON, pre-state, bytecodes, block hashes, chain
# RLP + chain.json, BAL RLP, blockchain-test JSON through the runner, bench result JSON): the
# proptest fuzz tests of crates data, conformance and lab with many more cases than CI runs.
# Usage: scripts/fuzz.sh [CASES]   (default 20000 per property; CI runs 64–256)
# A failure prints the shrunk mutation list; proptest saves it under tests/*.proptest-regressions
# so the next plain `cargo test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${1:-20000}"
cargo test --release --locked -p gigagas-data -p gigagas-conformance --test it fuzz -- --nocapture
cargo test --release --locked -p gigagas-lab --test fuzz -- --nocapture
