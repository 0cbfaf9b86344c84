#!/usr/bin/env bash
# Sender recovery on the lent GPU machine (issue 41; docs/results/gpu-recovery.md): the device
# suite (over 1,000,000 random and adversarial signatures through the GPU kernel, every address
# compared with libsecp256k1's) and the measurement (recoveries/s at batch sizes 100 ... 100,000,
# transfers included and kernel alone, against libsecp256k1 on 1 and all CPU threads).
#
# Runs the release binary built on the development machine (the device has no Rust): strip and
# compress it into a folder git ignores, carry that folder, and run this script there:
#
#   here, once:  grep -qx '/.gpu/' .git/info/exclude || echo /.gpu/ >> .git/info/exclude
#   here:        cargo build --release --locked --bin gigagas && mkdir -p .gpu &&
#                strip -o .gpu/gigagas target/release/gigagas && gzip -9f .gpu/gigagas
#   device tool: run(command="scripts/device-gpu.sh .gpu/gigagas.gz", carry=[".gpu"], timeout_s=540)
#
# Usage: scripts/device-gpu.sh BINARY[.gz|.zst|.xz] [OUTDIR=$OUT]
#   SIGNATURES (default 1000000): random signatures of the suite (the adversarial ones added).
#   BATCHES (default 100,1000,10000,45000,100000), REPEATS (default 10) for the bench.
# Budget: at most 8 minutes (each step has its own timeout); every file is written as its step
# runs (the bench prints each batch's row as soon as it is measured), so a run killed part way
# still leaves what it measured. Files (at most 8, as the device tool brings back): steps.log
# (the machine first), info.txt, check.txt, check.json, pipeline.txt, pipeline.json (the node
# pipeline at 4, 8 and 16 threads with CPU and GPU recovery side by side, issues 39 and 41),
# bench.txt, bench.json.
set -uo pipefail
bin_in="${1:?usage: scripts/device-gpu.sh BINARY[.gz|.zst|.xz] [OUTDIR]}"
out="${2:-${OUT:?no OUTDIR given and OUT is unset}}"
mkdir -p "$out"
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

# NVRTC and the driver library: on the loader's path already, or in the CUDA toolkit, the
# driver's mount, or the Python wheels (nvidia-cuda-nvrtc); cudarc dlopens libnvrtc.so.13 /
# libnvrtc.so and libcuda.so.1 by name.
extra=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [[ -d $d ]] && extra="$extra:$d"
done
while IFS= read -r f; do extra="$extra:$(dirname "$f")"; done < <(
  timeout 30 find /usr/local /usr/lib /opt -xdev \( -name 'libnvrtc.so.1[0-9]' -o -name 'libnvrtc.so' \) 2>/dev/null | head -5)
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}${extra}"

{
  echo "# $(date -u +%FT%TZ) $("$bin" --version 2>&1)"
  echo "# $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# memory: $(grep MemTotal /proc/meminfo); kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  command -v nvcc >/dev/null && nvcc --version | tail -2
  echo "# LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "# libnvrtc: $(ldconfig -p 2>/dev/null | grep -m2 libnvrtc | tr -s ' \n' ' ')"
  echo "# libcuda: $(ldconfig -p 2>/dev/null | grep -m1 'libcuda.so.1' | tr -s ' \n' ' ')"
} >> "$out/steps.log" 2>&1
cat "$out/steps.log"

step() {  # NAME LIMIT_S COMMAND...: stdout to NAME.txt (as it comes), stderr too, rc and time logged
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > >(tee "$out/$name.txt") 2>&1
  local rc=$?
  log "$name rc=$rc $((SECONDS - t0)) s (total $((SECONDS - start)) s)"
  return $rc
}

gpu_rows=()
if step info 90 "$bin" gpu info; then
  step check 200 "$bin" gpu check --signatures "${SIGNATURES:-1000000}" --json "$out/check.json"
else
  log "no usable GPU (see info.txt): no check, CPU rows only"
  gpu_rows=(--cpu-only)
fi
# The node pipeline on mainnet-mix 300M blocks (MDBX-free: in memory, incremental root), at 4, 8
# and 16 threads, senders recovered on the CPU and (auto) on the GPU: end to end, stage shares
# and % of the pipeline's bound per row; `gigagas simulate pipeline.json` predicts 32 and 64.
chain=/tmp/gigagas-mm300
t0=$SECONDS
if timeout 120 "$bin" gen mainnet-mix --block-gas 300M --blocks "${PIPE_BLOCKS:-3}" \
    --out "$chain" --force >> "$out/steps.log" 2>&1; then
  log "gen rc=0 $((SECONDS - t0)) s"
  step pipeline 170 "$bin" bench --data "$chain" --threads 4,8,16 --scheduler ordered \
    --root incremental --pipeline on --recovery cpu,auto --repeats 2 --warmup 1 \
    --json "$out/pipeline.json"
else
  log "gen failed after $((SECONDS - t0)) s: no pipeline rows"
fi
# The bench after the check: the CPU rows take longest at 1 thread (~156,000 recoveries per
# repeat); what is left of the 8 minutes bounds it.
left=$(( 470 - (SECONDS - start) )); (( left < 60 )) && left=60
step bench "$left" "$bin" gpu bench --batch-sizes "${BATCHES:-100,1000,10000,45000,100000}" \
  --repeats "${REPEATS:-10}" --cpu-repeats 3 "${gpu_rows[@]}" --json "$out/bench.json"
log "done in $((SECONDS - start)) s"
