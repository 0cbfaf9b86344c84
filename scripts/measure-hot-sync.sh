#!/usr/bin/env bash
# The seed's block (`gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M`) at a
# size: hot account vs --spread, cold (page cache dropped before each block) and warm (the
# store file read into the page cache first), 1 and 2 threads, stages back to back; then the
# hot account warm and pipelined under each --sync policy. Each run starts from a fresh copy
# of the genesis store. Needs root (drop_caches). Writes one JSON per run into WORK and prints
# the per-block means (docs/results/hot-account-10gb-2core.md, "10M slots").
# Usage: scripts/measure-hot-sync.sh WORK [SLOTS=10000000] [BLOCKS=6] [ROUNDS=2]
# BIN overrides the binary; THREADS (default "1 2") the thread counts of the cold and warm runs;
# SYNC_RUNS=0 skips the --sync runs; PIPE_THREADS (default 2) is their thread count.
set -uo pipefail
work="${1:?usage: scripts/measure-hot-sync.sh WORK [SLOTS] [BLOCKS] [ROUNDS]}"
slots="${2:-10000000}"; blocks="${3:-6}"; rounds="${4:-2}"
threads="${THREADS:-1 2}"; sync_runs="${SYNC_RUNS:-1}"; pipe_threads="${PIPE_THREADS:-2}"
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$PWD/target/release/gigagas; fi
mkdir -p "$work"; cd "$work" || exit 1
for kind in hot spread; do
  extra=(); [[ $kind == spread ]] && extra=(--spread)
  [[ -f chain-$kind/chain.json ]] || /usr/bin/time -v "$BIN" gen sstore-bloated --existing-slots --fork Osaka \
    --block-gas 30M --slots "$slots" --blocks "$blocks" "${extra[@]}" --out chain-$kind > gen-$kind.out 2> gen-$kind.err
  [[ -d db-$kind ]] || /usr/bin/time -v "$BIN" db init --data chain-$kind --out db-$kind > init-$kind.out 2> init-$kind.err
done
one() {  # NAME KIND RUN-ARGS...
  local name=$1 kind=$2; shift 2
  rm -rf tmpdb; mkdir tmpdb; cp -a db-$kind/. tmpdb/; sync; echo 3 > /proc/sys/vm/drop_caches
  case "$*" in *--cold*) ;; *) cat tmpdb/mdbx.dat > /dev/null ;; esac
  /usr/bin/time -v "$BIN" run --data chain-$kind --state disk --db tmpdb --root incremental "$@" \
    --json $name.json > $name.out 2> $name.err
  echo "$name rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
}
for ((r = 1; r <= rounds; r++)); do
  for kind in hot spread; do
    for t in $threads; do one r$r-$kind-cold$t $kind --pipeline off --cold --threads $t; done
    for t in $threads; do one r$r-$kind-warm$t $kind --pipeline off --threads $t --sync every-block; done
  done
  [[ $sync_runs == 0 ]] && continue
  for sync in every-block every-3 end; do one r$r-hot-sync-$sync hot --threads "$pipe_threads" --sync $sync; done
done
rm -rf tmpdb
python3 - <<'PY'
import json, glob, os
for f in sorted(glob.glob('r*.json')):
    r = json.load(open(f))['run']; bl = r['blocks']
    st = lambda b, s: (b['stages'][s]['end_ns'] - b['stages'][s]['start_ns']) / 1e6 if s in b['stages'] else 0
    avg = lambda s: sum(st(b, s) for b in bl) / len(bl)
    rb = sum((b['read_bytes'] or 0) for b in bl) / len(bl) / 2**20
    e2e = sum(b['gas'] for b in bl) / r['wall_ns'] * 1e3
    print(f"{f[:-5]:28s} t{r['threads']} pre {avg('prefetch'):7.1f} exe {avg('execute'):5.1f} root {avg('root'):6.1f} "
          f"write {avg('write'):6.1f} read {rb:6.1f} MiB e2e {e2e:6.1f} final {r.get('final_sync_ns', 0) / 1e6:6.1f}")
PY
