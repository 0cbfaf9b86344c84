#!/usr/bin/env bash
# Issue 40's goals in one sitting: the seed's hot-account chain on MDBX, warm and cold, each
# as it ran before the round's changes and as it runs now, at 1 and 2 threads, interleaved
# (for each thread count: cold now, cold before, warm now, warm before; then again in reverse
# order). Every run starts from a fresh copy of the genesis store; warm runs read it into the
# page cache first, cold runs empty the page cache (root: drop_caches). "Before" is the round's
# starting point (warm: --trie-buffer 0 --wal off, every block's nodes and flat state written
# with it; cold: --pipeline off --cold, index dropped, no buffer); "now" is warm = run's
# defaults (trie buffer, write-ahead log) and cold = --cold --cold-index cached with the
# buffer and the log. Each "now" store is checked by `db verify` (= from scratch) after its
# run. Prints one line per run and the now/before ratios of the means per mode and thread count.
# Usage: scripts/measure-hot-goals.sh CHAIN GENESIS_DB OUT [THREADS="2 1"] [ORDERS=2]
# BIN overrides the binary; MODES (default "cold-now cold-before warm-now warm-before") picks
# and orders the configurations (reversed every second pass). OUT gets every run's json,
# stderr and verify output; the machine's other CPU use during each run is its last column.
set -uo pipefail
chain="${1:?usage: scripts/measure-hot-goals.sh CHAIN GENESIS_DB OUT [THREADS] [ORDERS]}"
genesis="${2:?genesis store}"; out="${3:?output directory}"
threads_list="${4:-2 1}"; orders="${5:-2}"
[[ -f $chain/chain.json ]] || { echo "no chain at $chain" >&2; exit 1; }
[[ -f $genesis/mdbx.dat ]] || { echo "no store at $genesis" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "cold runs empty the page cache: run as root" >&2; exit 1; }
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$PWD/target/release/gigagas; fi
mkdir -p "$out"
db="$out/tmpdb"
declare -A flags=(
  [cold-now]="--pipeline off --cold --cold-index cached --trie-buffer 256M --wal on"
  [cold-before]="--pipeline off --cold"
  [warm-now]=""
  [warm-before]="--trie-buffer 0 --wal off"
)
read -r -a order <<< "${MODES:-cold-now cold-before warm-now warm-before}"
for m in "${order[@]}"; do [[ -n ${flags[$m]+set} ]] || { echo "unknown mode $m" >&2; exit 1; }; done
reversed=(); for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[$i]}"); done
n=0
for ((o = 0; o < orders; o++)); do
  for t in $threads_list; do
    seq=("${order[@]}"); ((o % 2)) && seq=("${reversed[@]}")
    for mode in "${seq[@]}"; do
      n=$((n + 1)); name=$(printf '%02d-%s-%st' $n "$mode" "$t")
      rm -rf "$db"; mkdir "$db"; cp -a "$genesis/." "$db/"; sync
      if [[ $mode == cold-* ]]; then echo 3 > /proc/sys/vm/drop_caches; else cat "$db/mdbx.dat" > /dev/null; fi
      echo "$name start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/runs.log"
      # shellcheck disable=SC2086 # the flags are words
      if ! "$BIN" run --data "$chain" --state disk --db "$db" --root incremental --threads "$t" \
          ${flags[$mode]} --json "$out/$name.json" > "$out/$name.out" 2> "$out/$name.err"; then
        echo "$name failed"; tail -3 "$out/$name.err"; exit 1
      fi
      if [[ $mode == *-now ]]; then
        "$BIN" db verify "$db" > "$out/$name.verify" 2>&1 && grep -q "= from scratch" "$out/$name.verify" \
          || { echo "$name: db verify failed"; tail -3 "$out/$name.verify"; exit 1; }
      fi
    done
  done
done
rm -rf "$db"
python3 - "$out" <<'PY'
import glob, json, math, os, sys
from collections import defaultdict
out = sys.argv[1]
e2e = defaultdict(list)
print(f"{'run':<22} {'Mgas/s':>7} {'write ms/blk':>13} {'write %busy':>11} {'end ms':>7} "
      f"{'buffer MB':>9} {'flush pages':>11} {'MiB read/blk':>12} {'pages/item':>10} {'other cpu':>9}")
for f in sorted(glob.glob(os.path.join(out, '[0-9]*.json'))):
    name = os.path.basename(f)[:-5]
    d = json.load(open(f)); r = d['run']; bl = r['blocks']
    mode, t = name[3:].rsplit('-', 1)
    busy = sum(d['phases_ns'].values())
    w = [b['write']['write_ns'] / 1e6 for b in bl]
    end = r.get('final_sync_ns', 0) / 1e6
    buf = max(b['write'].get('buffer_bytes', 0) for b in bl) / 1e6
    fl = [b['write']['flush'] for b in bl if b['write'].get('flush')]
    flp = sum(x.get('pages', 0) for x in fl) if fl else 0
    rb = [(b.get('read_bytes') or 0) for b in bl]
    per = [((x + 4095) // 4096) / b['read_ahead'] for x, b in zip(rb, bl) if b.get('read_ahead')]
    other = d.get('machine', {}).get('cpu_during_run', {}).get('other_share', 0)
    e2e[(mode, t)].append(d['e2e_mgas_per_s'])
    print(f"{name:<22} {d['e2e_mgas_per_s']:7.1f} {min(w):6.0f}-{max(w):<6.0f} "
          f"{100 * d['phases_ns']['write'] / busy:10.0f}% {end:7.0f} {buf:9.1f} {flp:11,} "
          f"{sum(rb) / len(rb) / 2**20:12.1f} "
          f"{(f'{min(per):.2f}-{max(per):.2f}' if per else '-'):>10} {100 * other:8.0f}%")
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print()
for kind in ('cold', 'warm'):
    for t in sorted({t for (_, t) in e2e}):
        now, before = e2e.get((f'{kind}-now', t)), e2e.get((f'{kind}-before', t))
        if now and before:
            print(f"{kind} {t}: now {' '.join(f'{x:.1f}' for x in now)}  before "
                  f"{' '.join(f'{x:.1f}' for x in before)}  now/before (means) "
                  f"{(sum(now) / len(now)) / (sum(before) / len(before)):.2f}x")
PY
