#!/usr/bin/env bash
# Thread scaling on a many-core machine (the lent 16-core device; docs/results/scaling-16core.md):
#  1. the bundled 50 mainnet blocks at 1..N threads, every scheduler, beside `simulate`'s
#     prediction from the same run's 1-thread traces (measured vs predicted);
#  2. generated workloads at 1..N threads, 300M-gas blocks (independent, contended and
#     root-heavy shapes);
#  3. the seed's block at 10M slots, hot account vs --spread, cold and warm, 1 and N threads
#     (scripts/measure-hot-sync.sh; needs root for drop_caches).
# Every figure is printed by the binary only after its run verified.
# Usage: scripts/measure-scaling.sh OUTDIR [THREADS=1,2,4,8,16]
#   BIN: the binary (default: build it); CHAINS: a folder holding chain-hot and chain-spread
#   (10M slots) to reuse instead of generating them; STEPS (default "1 3 2") selects the parts
#   and their order; REPEATS (default 5) the bench repeats of part 1; ROUNDS (default 1) and
#   SYNC_RUNS (default 0: none; 1: every --sync policy, pipelined, at the largest thread
#   count) are passed to measure-hot-sync.sh.
set -uo pipefail
out="${1:?usage: scripts/measure-scaling.sh OUTDIR [THREADS]}"; threads="${2:-1,2,4,8,16}"
steps="${STEPS:-1 3 2}"
cd "$(dirname "$0")/.." || exit 1
root=$PWD
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$root/target/release/gigagas; fi
mkdir -p "$out"; out=$(cd "$out" && pwd)
max=${threads##*,}
{
  echo "# $(date -u +%FT%TZ) $("$BIN" --version)"
  echo "# $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# memory: $(grep MemTotal /proc/meminfo); kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"
timed() {  # NAME COMMAND...: stdout to NAME.txt, stderr to NAME.err, wall and rc logged
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$out/$name.txt" 2> "$out/$name.err"
  echo "$name rc=$? $((SECONDS - t0)) s load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/steps.log"
}
step1() {
  timed bench-mainnet "$BIN" bench --threads "$threads" --repeats "${REPEATS:-5}" --warmup 1 --json "$out/bench-mainnet.json"
  timed simulate-mainnet "$BIN" simulate "$out/bench-mainnet.json" --threads "$threads,32,64"
}
step2() {
  timed bench-workloads "$BIN" bench --workload mainnet-mix,erc20,bal-mixed-graph:group-5:half,bal-state-root:per-tx:max \
    --block-gas 300M --blocks 3 --threads "$threads" --scheduler gas-used --repeats 3 --warmup 1 \
    --json "$out/bench-workloads.json"
}
step3() {
  work=${WORK:-/tmp/gigagas-scaling-work}
  mkdir -p "$work"
  [[ -n "${CHAINS:-}" ]] && for k in hot spread; do [[ -d $work/chain-$k ]] || cp -a "$CHAINS/chain-$k" "$work/"; done
  t0=$SECONDS
  local counts="1 $max"; [[ $max == 1 ]] && counts=1
  BIN=$BIN THREADS="$counts" SYNC_RUNS="${SYNC_RUNS:-0}" PIPE_THREADS=$max \
    scripts/measure-hot-sync.sh "$work" 10000000 6 "${ROUNDS:-1}" > "$out/hot-spread.txt" 2>&1
  echo "hot-spread rc=$? $((SECONDS - t0)) s" | tee -a "$out/steps.log"
  cp "$work"/runs.log "$out/hot-spread-runs.log" 2>/dev/null
  local files; files=$(cd "$work" && ls r*.json init-*.err 2>/dev/null)
  [[ -n $files ]] && tar -C "$work" -czf "$out/hot-spread-json.tar.gz" $files
}
for s in $steps; do "step$s"; done
