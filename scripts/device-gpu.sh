#!/usr/bin/env bash
# Sender recovery on the lent GPU machine (issue 41; docs/results/gpu-recovery.md) and the node
# pipeline at 16 cores (issue 39): the device suite (over 1,000,000 random and adversarial
# signatures through the GPU kernel, every address compared with libsecp256k1's), recoveries/s
# at batch sizes 100 ... 100,000 (transfers included and kernel alone) against libsecp256k1 on
# 1 and all CPU threads, then the node pipeline with CPU and GPU recovery side by side.
#
# Runs the release binary built on the development machine (the device has no Rust): strip and
# compress it into a folder git ignores, carry that folder, and run this script there:
#
#   here, once:  grep -qx '/.gpu/' .git/info/exclude || echo /.gpu/ >> .git/info/exclude
#   here:        cargo build --release --locked --bin gigagas && mkdir -p .gpu &&
#                strip -o .gpu/gigagas target/release/gigagas && gzip -9f .gpu/gigagas
#   device tool: run(command="scripts/device-gpu.sh .gpu/gigagas.gz", carry=[".gpu"], timeout_s=480)
#
# Usage: scripts/device-gpu.sh BINARY[.gz|.zst|.xz] [OUTDIR=$OUT]
#   BUDGET (default 420): seconds for the whole script; each step has its own timeout inside it.
#   SIGNATURES (default 1000000): random signatures of the suite (the adversarial ones added).
#   BATCHES (default 100,1000,10000,45000,100000), REPEATS (default 10) for the recovery bench.
#   PIPE_GAS (default 300M), PIPE_BLOCKS (default 3), PIPE_GAS_BIG (default 1G; empty for none),
#   PIPE_BLOCKS_BIG (default 2), PIPE_THREADS (default 4,8,16): the mainnet-mix chains of the
#   pipeline rows;
#   PIPE_LIMIT (default 150): that step's seconds (more for 1- and 2-thread rows).
#   STAGE_THREADS (default 0,4): the stages' own pool sizes the pipeline and mainnet steps
#   sweep with the pipeline on (`bench --stage-threads`; 0 = they share the workers' budget).
#   SHAPES: the EF workloads of the last step (default: issue 39's five).
#   SHAPE_GAS (default 300M): their block size.
#   STEPS: the steps to run, comma-separated (default all: info,check,bench,pipeline,mdbx,
#   mainnet,efshapes,run,hot; info always runs).
#   HOT: a `gen sstore-bloated` chain folder (carried) for the hot-account step (none: no
#   step); HOT_THREADS (default all cores).
#   GPU_REQUIRED=1: stop after `gpu info` fails (on the lent machine a failure there is a bug to
#   fix before anything else is worth its device time); otherwise the CPU rows still run.
# Steps, most valuable first: info, check, recovery bench, the pipeline in memory (4/8/16
# threads; mainnet-mix 300M and 1G), the 300M chain on MDBX (durable every 3), the bundled
# mainnet sample through the pipeline, the dense EF shapes at 1 and all threads.
# Every step writes as it runs, so a run killed part way still leaves what it measured. Files
# (at most 8, as the device tool brings back): steps.log (the machine first, then each step's
# exit and time), all.txt (every step's tables and messages, in order), check.json,
# bench.json, pipeline.json, mdbx.json, mainnet.json, efshapes.json, hot.tar.gz.
set -uo pipefail
bin_in="${1:?usage: scripts/device-gpu.sh BINARY[.gz|.zst|.xz] [OUTDIR]}"
out="${2:-${OUT:?no OUTDIR given and OUT is unset}}"
budget="${BUDGET:-420}"
[[ $budget =~ ^[0-9]+$ ]] && (( budget >= 10 && budget <= 3600 )) ||
  { echo "BUDGET must be whole seconds from 10 to 3600, not '$budget'" >&2; exit 2; }
pipe_limit="${PIPE_LIMIT:-150}"
[[ $pipe_limit =~ ^[0-9]+$ ]] && (( pipe_limit >= 10 && pipe_limit <= 3600 )) ||
  { echo "PIPE_LIMIT must be whole seconds from 10 to 3600, not '$pipe_limit'" >&2; exit 2; }
for n in "${PIPE_BLOCKS:-3}" "${PIPE_BLOCKS_BIG:-2}"; do
  [[ $n =~ ^[0-9]+$ ]] && (( n >= 1 && n <= 1000 )) ||
    { echo "PIPE_BLOCKS and PIPE_BLOCKS_BIG must be 1 to 1000 blocks, not '$n'" >&2; exit 2; }
done
# Never over earlier results: the output folder must be new or empty.
if [[ -e $out && ( ! -d $out || -n $(ls -A "$out" 2>/dev/null) ) ]]; then
  echo "OUTDIR $out exists and is not an empty folder: give a new one (nothing is overwritten)" >&2
  exit 2
fi
mkdir -p "$out" || exit 1
start=$SECONDS
log() { echo "$*" | tee -a "$out/steps.log"; }

# The binary, unpacked outside the tree.
bin=/tmp/gigagas-gpu-bin
case "$bin_in" in
  *.gz) gzip -dc "$bin_in" > "$bin" ;;
  *.zst) zstd -dcq "$bin_in" > "$bin" ;;
  *.xz) xz -dc "$bin_in" > "$bin" ;;
  *) cp "$bin_in" "$bin" ;;
esac || { log "cannot unpack $bin_in"; exit 1; }
chmod +x "$bin"

# NVRTC and the driver library for `--recovery auto`.
source "$(dirname "$0")/cuda-libs.sh"

{
  echo "# $(date -u +%FT%TZ) $("$bin" --version 2>&1)"
  echo "# $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  # The topology the guest sees (threads per core, NUMA, caches): 1- and 2-thread rows
  # depend on it (docs/results/node-16core-h200-lease3.md).
  echo "# topology: $(lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA node\(|L2|L3)' | tr -s ' ' | paste -sd';' -)"
  echo "# memory: $(grep MemTotal /proc/meminfo); kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# disk: $(df -h /tmp | tail -1)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  command -v nvcc >/dev/null && nvcc --version | tail -2
  echo "# LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "# libnvrtc: $(ldconfig -p 2>/dev/null | grep -m2 libnvrtc | tr -s ' \n' ' ')"
  echo "# libcuda: $(ldconfig -p 2>/dev/null | grep -m1 'libcuda.so.1' | tr -s ' \n' ' ')"
} >> "$out/steps.log" 2>&1
cat "$out/steps.log"

left() { echo $(( budget - (SECONDS - start) )); }
steps=",${STEPS:-info,check,bench,pipeline,mdbx,mainnet,efshapes,run,hot},"
step() {  # NAME LIMIT_S COMMAND...: output appended to all.txt (as it comes), rc and time logged
  local name=$1 limit=$2; shift 2
  [[ $name == info || $steps == *",$name,"* ]] || return 0
  local l; l=$(left)
  (( limit > l )) && limit=$l
  if (( limit < 10 )); then log "$name skipped: $l s of the budget left"; return 99; fi
  local t0=$SECONDS
  echo "=== $name (limit $limit s): $*" >> "$out/all.txt"
  timeout "$limit" "$@" > >(tee -a "$out/all.txt") 2>&1
  local rc=$?
  log "$name rc=$rc $((SECONDS - t0)) s (total $((SECONDS - start)) s)"
  return $rc
}

gpu_rows=()
recovery=cpu,auto
if step info 60 "$bin" gpu info; then
  step check 90 "$bin" gpu check --signatures "${SIGNATURES:-1000000}" --json "$out/check.json"
else
  if [[ ${GPU_REQUIRED:-0} == 1 ]]; then log "gpu info failed and GPU_REQUIRED=1: stopping"; exit 1; fi
  log "no usable GPU (see all.txt): no check, CPU rows only"
  gpu_rows=(--cpu-only)
  recovery=cpu
fi
step bench 90 "$bin" gpu bench --batch-sizes "${BATCHES:-100,1000,10000,45000,100000}" \
  --repeats "${REPEATS:-10}" --cpu-repeats 3 "${gpu_rows[@]}" --json "$out/bench.json"

# The node pipeline on mainnet-mix blocks in memory (incremental root) at 4, 8 and 16 threads,
# senders recovered on the CPU and (auto) on the GPU: end to end, stage shares and % of the
# pipeline's bound per row, one sweep over the 300M and the 1G chain, overlapped and back to
# back; `gigagas simulate pipeline.json` predicts 32 and 64, and predicts the overlapped rows
# from the back-to-back stages with no calibration (every measured count a test).
gen() {  # GAS BLOCKS DIR
  local t0=$SECONDS
  if timeout 90 "$bin" gen mainnet-mix --block-gas "$1" --blocks "$2" --out "$3" --force \
      >> "$out/all.txt" 2>&1; then
    log "gen $1 x $2 rc=0 $((SECONDS - t0)) s"
  else
    log "gen $1 x $2 failed after $((SECONDS - t0)) s"; rm -rf "$3"; return 1
  fi
}
chains=()
rm -rf /tmp/gigagas-mm /tmp/gigagas-mm-big
if [[ $steps == *,pipeline,* || $steps == *,mdbx,* || $steps == *,run,* ]]; then
  gen "${PIPE_GAS:-300M}" "${PIPE_BLOCKS:-3}" /tmp/gigagas-mm && chains+=(/tmp/gigagas-mm)
fi
if [[ $steps == *,pipeline,* && -n ${PIPE_GAS_BIG-1G} ]]; then
  gen "${PIPE_GAS_BIG:-1G}" "${PIPE_BLOCKS_BIG:-2}" /tmp/gigagas-mm-big && chains+=(/tmp/gigagas-mm-big)
fi
threads="${PIPE_THREADS:-4,8,16}"
all_threads=$(nproc)
if (( ${#chains[@]} )); then
  step pipeline "$pipe_limit" "$bin" bench --data "$(IFS=,; echo "${chains[*]}")" --threads "$threads" \
    --scheduler ordered --root incremental --pipeline on,off --recovery "$recovery" \
    --stage-threads "${STAGE_THREADS:-0,4}" --repeats 2 --warmup 1 --json "$out/pipeline.json"
fi
# The 300M chain on MDBX: a fresh store per pass, durable every 3 blocks, overlay on.
if [[ -d /tmp/gigagas-mm ]]; then
  step mdbx 90 "$bin" bench --data /tmp/gigagas-mm --threads "$all_threads" --scheduler ordered \
    --root incremental --pipeline on --state disk --sync every-3 --recovery "$recovery" \
    --repeats 2 --warmup 1 --json "$out/mdbx.json"
fi
# The bundled mainnet sample (Frontier to Cancun) through the pipeline (root none: its
# pre-states are touched-only), as issue 39's first table.
step mainnet 60 "$bin" bench --threads "$threads" --scheduler ordered --root none \
  --pipeline on --recovery "$recovery" --stage-threads "${STAGE_THREADS:-0,4}" --repeats 3 \
  --warmup 1 --json "$out/mainnet.json"
# The dense EF shapes of issue 39 at 300M (2 blocks): per-block work around execution against
# the parallel execution, % of the critical-path bound and tx work at 1 and 16 threads.
step efshapes 90 "$bin" bench --workload "${SHAPES:-bal-mixed-graph:group-2:max,bal-state-root:per-tx:max,bal-deploy-interact:single:max,bal-prefetch-cold,bal-serial-chain}" \
  --block-gas "${SHAPE_GAS:-300M}" --blocks 2 --threads "1,$all_threads" --scheduler ordered --repeats 3 \
  --warmup 1 --json "$out/efshapes.json"
# `run` as a user runs it: senders on the GPU when one answers (`auto`), and what it says it used.
if [[ -d /tmp/gigagas-mm ]]; then
  step run 60 "$bin" run --data /tmp/gigagas-mm --threads "$all_threads" --root incremental \
    --recovery auto
fi
# The hot account on MDBX at 16 cores (issue 40): HOT = a carried `gen sstore-bloated` chain
# (chain.json + blocks.rlp, ~0.5 MB at any slot count; the store is built here by `db init`).
# Each run from a fresh copy of that store, A B B A of `--wal off` (the flat state written
# into the B-tree per block) and the default (the write-ahead log), then the cold mode
# (`--pipeline off --cold`) and the same chain in memory; every run's JSON and block lines go
# into hot.tar.gz, `db verify` of the last log run (its replay and the root from scratch).
hot_run() {  # NAME FLAGS...: one run from a fresh copy of the store
  local name=$1; shift
  rm -rf /tmp/gigagas-hot-run
  if [[ $* != *"--state memory"* ]]; then cp -a /tmp/gigagas-hot-db /tmp/gigagas-hot-run || return 1; fi
  "$bin" run --data "$HOT" --root incremental --threads "${HOT_THREADS:-$all_threads}" \
    --json /tmp/gigagas-hot/$name.json "$@" > /tmp/gigagas-hot/$name.out 2>&1
  local rc=$?
  echo "hot $name rc=$rc: $(grep -m1 -i 'end to end\|Mgas/s' /tmp/gigagas-hot/$name.out | tr -s ' ')"
  tail -4 /tmp/gigagas-hot/$name.out
  return $rc
}
hot() {
  rm -rf /tmp/gigagas-hot /tmp/gigagas-hot-db; mkdir -p /tmp/gigagas-hot
  local t0=$SECONDS
  "$bin" db init --data "$HOT" --out /tmp/gigagas-hot-db > /tmp/gigagas-hot/init.out 2>&1 || {
    echo "db init failed"; tail -5 /tmp/gigagas-hot/init.out; return 1; }
  echo "db init $((SECONDS - t0)) s: $(du -sh /tmp/gigagas-hot-db | cut -f1)"
  local disk=(--state disk --db /tmp/gigagas-hot-run)
  hot_run A1-nowal "${disk[@]}" --wal off
  hot_run B1-wal "${disk[@]}"
  hot_run B2-wal "${disk[@]}"
  hot_run A2-nowal "${disk[@]}" --wal off
  hot_run mem --state memory
  hot_run cold "${disk[@]}" --pipeline off --cold
  hot_run B3-wal "${disk[@]}"
  timeout 120 "$bin" db verify /tmp/gigagas-hot-run > /tmp/gigagas-hot/verify.out 2>&1
  echo "db verify after B3 rc=$?: $(tail -2 /tmp/gigagas-hot/verify.out | tr '\n' ' ')"
  tar -czf "$out/hot.tar.gz" -C /tmp gigagas-hot
}
if [[ -n ${HOT:-} && -d ${HOT:-} ]]; then
  export -f hot hot_run; export bin out HOT all_threads HOT_THREADS
  step hot 240 bash -c hot
fi
log "done in $((SECONDS - start)) s"
