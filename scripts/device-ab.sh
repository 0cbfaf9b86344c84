#!/usr/bin/env bash
# A-B-B-A of two gigagas binaries on the lent 16-core machine (issue 39): the dense EF shapes'
# parallel execution at all threads, the node pipeline on mainnet-mix 300M, and the machine's
# contention floor, each step interleaved A B B A so that drift spreads over both sides.
# `docs/results/` records what each run compared.
#
# Build both binaries here (the device has no Rust), strip and compress them into a folder git
# ignores, carry it, run this there:
#
#   here:   git worktree add /tmp/gg-a BASE && (cd /tmp/gg-a && cargo build --release --locked --bin gigagas)
#           mkdir -p .gpu && strip -o .gpu/gg-A /tmp/gg-a/target/release/gigagas && gzip -9f .gpu/gg-A
#           cargo build --release --locked --bin gigagas && strip -o .gpu/gg-B target/release/gigagas && gzip -9f .gpu/gg-B
#   device: run(command="BUDGET=360 bash scripts/device-ab.sh .gpu/gg-A.gz .gpu/gg-B.gz", carry=[".gpu"], timeout_s=420)
#
# Usage: scripts/device-ab.sh BIN_A[.gz] BIN_B[.gz] [OUTDIR=$OUT]
#   BUDGET (default 360): seconds for the whole script; each step stops at its own limit.
#   ROUNDS (default 2): A B B A rounds per step; SHAPE_ROUNDS, PIPE_ROUNDS override it per step.
#   PIPE_BLOCKS (default 3): blocks of the pipeline step's mainnet-mix 300M chain.
#   PIPE_THREADS, SHAPE_THREADS (default all cores): thread counts of the pipeline and shapes
#     steps, comma-separated.
#   SHAPES, SHAPE_GAS (default issue 39's five dense shapes at 300M, 2 blocks each).
#   ENV_B: extra environment for side B only (e.g. "MIMALLOC_PURGE_DELAY=-1"), to A-B a
#     setting with one binary (give the same binary twice).
#   STEPS (default shapes,floor,pipeline): which steps run, in this order (also: mainnet, the
#     bundled mainnet sample through the pipeline).
# Files (the device tool brings back 8 at most): steps.log (machine, each step's exit and time),
# all.txt (every table, in order), json.tar.gz (every bench JSON, named STEP-N-SIDE.json).
set -uo pipefail
a_in="${1:?usage: scripts/device-ab.sh BIN_A BIN_B [OUTDIR]}"
b_in="${2:?usage: scripts/device-ab.sh BIN_A BIN_B [OUTDIR]}"
out="${3:-${OUT:?no OUTDIR given and OUT is unset}}"
budget="${BUDGET:-360}"
rounds="${ROUNDS:-2}"
[[ $budget =~ ^[0-9]+$ ]] && (( budget >= 10 && budget <= 3600 )) ||
  { echo "BUDGET must be whole seconds from 10 to 3600, not '$budget'" >&2; exit 2; }
for r in "$rounds" "${SHAPE_ROUNDS:-1}" "${PIPE_ROUNDS:-1}"; do
  [[ $r =~ ^[0-9]+$ ]] && (( r >= 1 && r <= 10 )) ||
    { echo "ROUNDS, SHAPE_ROUNDS and PIPE_ROUNDS must be 1 to 10, not '$r'" >&2; exit 2; }
done
[[ ${PIPE_BLOCKS:-3} =~ ^[0-9]+$ ]] && (( ${PIPE_BLOCKS:-3} >= 1 && ${PIPE_BLOCKS:-3} <= 1000 )) ||
  { echo "PIPE_BLOCKS must be 1 to 1000 blocks, not '${PIPE_BLOCKS}'" >&2; exit 2; }
if [[ -e $out && ( ! -d $out || -n $(ls -A "$out" 2>/dev/null) ) ]]; then
  echo "OUTDIR $out exists and is not an empty folder: give a new one (nothing is overwritten)" >&2
  exit 2
fi
mkdir -p "$out" || exit 1
work=$(mktemp -d /tmp/gigagas-ab.XXXXXX) || exit 1
trap 'tar -C "$work" -czf "$out/json.tar.gz" json 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/json"
start=$SECONDS
log() { echo "$*" | tee -a "$out/steps.log"; }
left() { echo $(( budget - (SECONDS - start) )); }

unpack() {  # IN OUT
  case "$1" in
    *.gz) gzip -dc "$1" > "$2" ;;
    *.zst) zstd -dcq "$1" > "$2" ;;
    *.xz) xz -dc "$1" > "$2" ;;
    *) cp "$1" "$2" ;;
  esac && chmod +x "$2"
}
unpack "$a_in" "$work/A" || { log "cannot unpack $a_in"; exit 1; }
unpack "$b_in" "$work/B" || { log "cannot unpack $b_in"; exit 1; }
threads=$(nproc)
# NVRTC and the driver library for `--recovery auto`.
source "$(dirname "$0")/cuda-libs.sh"
{
  echo "# $(date -u +%FT%TZ) A: $("$work/A" --version 2>&1)"
  echo "# B: $("$work/B" --version 2>&1)${ENV_B:+ with $ENV_B}"
  echo "# $threads cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  # The topology the guest sees (threads per core, NUMA, caches): 1- and 2-thread rows
  # depend on it (docs/results/node-16core-h200-lease3.md).
  echo "# topology: $(lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA node\(|L2|L3)' | tr -s ' ' | paste -sd';' -)"
  echo "# memory: $(grep MemTotal /proc/meminfo); kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$out/steps.log"
cat "$out/steps.log"

steps=",${STEPS:-shapes,floor,pipeline},"
# ab NAME LIMIT BENCH_ARGS...: A B B A × ROUNDS, then `compare` (B's binary) of the pooled sides.
ab() {
  local name=$1 limit=$2 rounds=$3; shift 3
  [[ $steps == *",$name,"* ]] || return 0
  local l; l=$(left); (( limit > l )) && limit=$l
  if (( limit < 20 )); then log "$name skipped: $l s of the budget left"; return 99; fi
  local t0=$SECONDS as=() bs=() k=0 rc=0 side f
  echo "=== $name (limit $limit s, A B B A x $rounds): bench $*" >> "$out/all.txt"
  for ((r = 0; r < rounds; r++)); do
    for side in A B B A; do
      k=$((k + 1)); f="$work/json/$name-$k-$side.json"
      local rest=$(( limit - (SECONDS - t0) ))
      if (( rest < 5 )); then log "$name: out of time after $((k - 1)) runs"; rc=124; break 2; fi
      if [[ $side == B ]]; then
        env ${ENV_B:-} timeout "$rest" "$work/B" bench "$@" --json "$f" >> "$out/all.txt" 2>&1 || rc=$?
        bs+=("$f")
      else
        timeout "$rest" "$work/A" bench "$@" --json "$f" >> "$out/all.txt" 2>&1 || rc=$?
        as+=("$f")
      fi
      (( rc )) && { log "$name: run $k ($side) exit $rc"; break 2; }
    done
  done
  local IFS=,
  if (( ${#as[@]} && ${#bs[@]} )); then
    "$work/B" compare "${as[*]}" "${bs[*]}" 2>&1 | tee -a "$out/all.txt"
  fi
  log "$name rc=$rc $((SECONDS - t0)) s (total $((SECONDS - start)) s)"
}

gen() {  # WORKLOAD GAS BLOCKS DIR
  local t0=$SECONDS
  if timeout 120 "$work/B" gen "$1" --block-gas "$2" --blocks "$3" --out "$4" --force >> "$out/all.txt" 2>&1; then
    log "gen $1 $2 x $3: $((SECONDS - t0)) s"
  else
    log "gen $1 failed after $((SECONDS - t0)) s"; rm -rf "$4"; return 1
  fi
}

shapes="${SHAPES:-bal-mixed-graph:group-2:max,bal-state-root:per-tx:max,bal-deploy-interact:single:max,bal-prefetch-cold,bal-serial-chain}"
dirs=()
if [[ $steps == *,shapes,* || $steps == *,floor,* ]]; then
  IFS=, read -ra list <<< "$shapes"
  for s in "${list[@]}"; do
    d="$work/shape-${s//[^A-Za-z0-9-]/_}"
    gen "$s" "${SHAPE_GAS:-300M}" 2 "$d" && dirs+=("$d")
  done
fi
if (( ${#dirs[@]} )); then
  # Parallel execution alone (no pipeline) at every core: the commit runs inside it.
  ab shapes 150 "${SHAPE_ROUNDS:-$rounds}" --data "$(IFS=,; echo "${dirs[*]}")" --threads "${SHAPE_THREADS:-$threads}" --scheduler ordered \
    --repeats 3 --warmup 1
fi
# The machine's contention floor on the first shape: T threads each running their own copy
# (nothing shared), beside the parallel path's tx work (B only).
if [[ $steps == *,floor,* ]] && (( ${#dirs[@]} )); then
  l=$(left); lim=60; (( lim > l )) && lim=$l
  if (( lim >= 20 )); then
    t0=$SECONDS
    echo "=== floor (limit $lim s): B bench --threads 1,$threads --contention-floor" >> "$out/all.txt"
    env ${ENV_B:-} timeout "$lim" "$work/B" bench --data "${dirs[0]}" --threads "1,$threads" \
      --scheduler ordered --repeats 3 --warmup 1 --contention-floor \
      --json "$work/json/floor-B.json" 2>&1 | tee -a "$out/all.txt" | grep -E "floor|parallel" | head -20
    log "floor rc=${PIPESTATUS[0]} $((SECONDS - t0)) s (total $((SECONDS - start)) s)"
  else
    log "floor skipped: $l s left"
  fi
fi
# The node pipeline on mainnet-mix 300M (PIPE_BLOCKS, default 3) in memory, incremental root,
# at every core;
# CPU recovery (and the GPU's where one answers).
if [[ $steps == *,pipeline,* ]] && gen mainnet-mix 300M "${PIPE_BLOCKS:-3}" "$work/mm300"; then
  rec=cpu
  "$work/B" gpu info > /dev/null 2>&1 && rec=cpu,auto
  ab pipeline 150 "${PIPE_ROUNDS:-$rounds}" --data "$work/mm300" --threads "${PIPE_THREADS:-$threads}" --scheduler ordered \
    --root incremental --pipeline on --recovery "$rec" --repeats 2 --warmup 1
fi
# The bundled mainnet sample (50 blocks, Frontier to Cancun) through the pipeline at every core,
# root none (its pre-states are touched-only); CPU recovery (and the GPU's where one answers).
if [[ $steps == *,mainnet,* ]]; then
  rec=cpu
  "$work/B" gpu info > /dev/null 2>&1 && rec=cpu,auto
  ab mainnet 120 "${PIPE_ROUNDS:-$rounds}" --threads "${PIPE_THREADS:-$threads}" --scheduler ordered \
    --root none --pipeline on --recovery "$rec" --repeats 3 --warmup 1
fi
log "done in $((SECONDS - start)) s"
