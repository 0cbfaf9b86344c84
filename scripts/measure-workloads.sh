#!/usr/bin/env bash
# Generates every workload at the given block gas sizes and benchmarks it (sequential and
# parallel at the given thread counts, gas-used scheduler), printing one markdown row per
# workload and size. Usage: scripts/measure-workloads.sh [BLOCKS] [SIZES] [THREADS]
#   e.g. scripts/measure-workloads.sh 3 30M,300M 1,2
# WORKLOADS="erc20 precompile:modexp" overrides the list (precompile:X = --precompile X).
set -euo pipefail
cd "$(dirname "$0")/.."
blocks="${1:-3}"; sizes="${2:-30M,300M}"; threads="${3:-1,2}"
work="${WORK:-target/workloads}"
mkdir -p "$work"
cargo build --release --quiet --bin gigagas
bin=target/release/gigagas
workloads="${WORKLOADS:-transfers erc20 uniswap nft-mint mainnet-mix serial-chain long-tx sstore-bloated keccak precompile 7702}"
echo "| workload | block gas | txs | gen s | seq Mgas/s | seq ns/gas | par 1t | par ${threads##*,}t | speedup | % of CP bound | longest-tx share |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for size in ${sizes//,/ }; do
  for w in $workloads; do
    dir="$work/${w//[:,]/-}-$size"
    extra=()
    if [[ "$w" == *:* ]]; then extra=(--precompile "${w#*:}"); fi
    gen=$($bin gen "${w%%:*}" "${extra[@]}" --blocks "$blocks" --block-gas "$size" --seed 1 --out "$dir" --force 2>/dev/null)
    secs=$(sed -E 's/.*generated in ([0-9.]+) s.*/\1/' <<<"$gen")
    txs=$(sed -E 's/.*: [0-9]+ blocks, ([0-9]+) txs.*/\1/' <<<"$gen")
    $bin bench --data "$dir" --threads "$threads" --scheduler gas-used --repeats 3 --warmup 1 \
      --json "$dir.bench.json" >/dev/null 2>&1
    python3 - "$dir.bench.json" "$w" "$size" "$txs" "$secs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); w, size, txs, secs = sys.argv[2:6]
runs = r["runs"]
seq = next(x for x in runs if x["mode"] == "sequential")
par = sorted((x for x in runs if x["mode"] == "parallel"), key=lambda x: x["threads"])
top = par[-1]
bound = top.get("bound_fraction")
print(f"| {w} | {size} | {txs} | {secs} | {seq['mgas_per_s']:.0f} | {1e3 / seq['mgas_per_s']:.2f} | {par[0]['mgas_per_s']:.0f} | "
      f"{top['mgas_per_s']:.0f} | {top['speedup_vs_sequential']:.2f}x | "
      f"{'-' if bound is None else f'{bound*100:.0f}%'} | {top['longest_tx_share']*100:.0f}% |")
PY
  done
done
