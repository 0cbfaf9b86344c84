#!/usr/bin/env bash
# Every kind of `gigagas report` page rendered in a real browser (scripts/browser-check.js):
# a bench result (runs, phases, per-block, cost model, simulator), a sweep over generated
# workloads with mega-blocks, a bench with the block pipeline (root, pipeline on/off), a peers
# result and a `bal stats` result. Each page must load
# with no console message, no network request and no overlapping plot labels; a PNG of each
# is kept beside it as an artifact.
#   scripts/report-check.sh [BIN] [OUT]      (default target/release/gigagas, target/report-check)
# Needs node and Debian's chromium-headless-shell (or chromium; GIGAGAS_CHROMIUM=PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/gigagas}
out=${2:-target/report-check}
[ -x "$bin" ] || { echo "report-check: no binary at $bin (cargo build --release --bin gigagas)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
quick=(--repeats 3 --warmup 0 --threads 1,2)

"$bin" bench "${quick[@]}" --json "$out/bench.json" > "$out/bench.txt"
"$bin" bench "${quick[@]}" --workload transfers,erc20 --block-gas 1M,3M --blocks 2 --mega 1,2 \
  --json "$out/sweep.json" > "$out/sweep.txt"
# gen's defaults (Amsterdam): export and peers take them.
"$bin" gen transfers --blocks 2 --block-gas 1M --out "$out/chain" > /dev/null
"$bin" bench "${quick[@]}" --data "$out/chain" --root incremental --pipeline on,off \
  --json "$out/pipeline.json" > "$out/pipeline.txt"
"$bin" peers --data "$out/chain" --repeats 3 --warmup 0 --peers gigagas-process \
  --json "$out/peers.json" > "$out/peers.txt"
"$bin" bal stats --json "$out/balstats.json" > "$out/balstats.txt"
for kind in bench sweep pipeline peers balstats; do
  "$bin" report "$out/$kind.json" --out "$out/$kind.html"
done
node scripts/browser-check.js "$out"/bench.html "$out"/sweep.html "$out"/pipeline.html \
  "$out"/peers.html "$out"/balstats.html
