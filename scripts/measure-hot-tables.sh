#!/usr/bin/env bash
# The seed's block (`gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M`) at a
# size, on MDBX, as issue 40 tabulates it: cold (`--pipeline off --cold`, 1 and 2 threads),
# warm (run's defaults, 1 and 2 threads; 2 threads again with `--trie-buffer 0`) and the same
# chain in memory, ROUNDS interleaved rounds; each disk run on a fresh copy of the genesis
# store (warm: read into the page cache first). Prints one row per run: end to end, stage
# means per block, the end flush, pages read from the device per block against the items read
# ahead (the least a cold block can read, each item once).
# Usage: scripts/measure-hot-tables.sh WORK [SLOTS=10000000] [BLOCKS=3] [ROUNDS=2]
# BIN overrides the binary; ONLY (space-separated names, e.g. "warm2 warm2-flush") runs only
# those configurations. warm2 ends with the trie buffer journaled (run's default),
# warm2-flush with it flushed into the trie tables (--trie-journal off); cold*-buf are cold
# runs with a trie buffer (cold takes none unless given); cold*-index keep the store's B-tree
# index cached between blocks (--cold-index cached: its branch pages read once before the
# first block; every data page from the device).
set -uo pipefail
work="${1:?usage: scripts/measure-hot-tables.sh WORK [SLOTS] [BLOCKS] [ROUNDS]}"
slots="${2:-10000000}"; blocks="${3:-3}"; rounds="${4:-2}"
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$PWD/target/release/gigagas; fi
mkdir -p "$work"; cd "$work" || exit 1
chain=chain-hot-$slots-$blocks; genesis=db-hot-$slots-$blocks
[[ -f $chain/chain.json ]] || "$BIN" gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M \
  --slots "$slots" --blocks "$blocks" --out $chain > gen.out 2> gen.err || { tail -3 gen.err; exit 1; }
[[ -d $genesis ]] || /usr/bin/time -v "$BIN" db init --data $chain --out $genesis > init.out 2> init.err \
  || { tail -3 init.err; exit 1; }
configs=("cold1|--pipeline off --cold --threads 1" "cold2|--pipeline off --cold --threads 2"
  "cold1-index|--pipeline off --cold --cold-index cached --threads 1"
  "cold2-index|--pipeline off --cold --cold-index cached --threads 2"
  "cold2-index-buf|--pipeline off --cold --cold-index cached --threads 2 --trie-buffer 256M"
  "cold1-buf|--pipeline off --cold --threads 1 --trie-buffer 256M"
  "cold2-buf|--pipeline off --cold --threads 2 --trie-buffer 256M"
  "warm1|--threads 1" "warm2|--threads 2" "warm2-flush|--threads 2 --trie-journal off"
  "warm2-nobuf|--threads 2 --trie-buffer 0")
for ((r = 1; r <= rounds; r++)); do
  for cfg in "${configs[@]}"; do
    name=${cfg%%|*}; read -ra args <<< "${cfg#*|}"
    [[ -n ${ONLY:-} && " $ONLY " != *" $name "* ]] && continue
    rm -rf tmpdb; mkdir tmpdb; cp -a $genesis/. tmpdb/; sync  # the store itself, also when $genesis is a link
    [[ $name == warm* ]] && cat tmpdb/mdbx.dat > /dev/null
    echo "r$r-$name load $(cut -d' ' -f1-3 /proc/loadavg)" >> ht-runs.log
    "$BIN" run --data $chain --state disk --db tmpdb --root incremental "${args[@]}" --json ht-r$r-$name.json \
      > ht-r$r-$name.out 2> ht-r$r-$name.err || { echo "r$r-$name failed"; tail -3 ht-r$r-$name.err; exit 1; }
  done
  # In memory the node store lists every slot: refused (by name) where that does not fit.
  [[ -n ${ONLY:-} && " $ONLY " != *" mem "* ]] && continue
  "$BIN" run --data $chain --root incremental --threads 2 --json ht-r$r-mem.json > ht-r$r-mem.out 2> ht-r$r-mem.err \
    || echo "r$r-mem: no in-memory run: $(tail -1 ht-r$r-mem.err)"
done
rm -rf tmpdb
python3 - <<'PY'
import glob, json
print("| run | threads | end to end (Mgas/s) | prefetch ms/block | root ms/block | write ms/block | final flush + sync (ms) | pages read per block | items read ahead per block | pages per item |")
print("|---|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob('ht-r*.json')):
    d = json.load(open(f)); r = d['run']; bl = r['blocks']
    st = lambda b, s: (b['stages'][s]['end_ns'] - b['stages'][s]['start_ns']) / 1e6 if s in b['stages'] else 0
    avg = lambda s: sum(st(b, s) for b in bl) / len(bl)
    pages = [((b.get('read_bytes') or 0) + 4095) // 4096 for b in bl]
    ahead = [b.get('read_ahead') or 0 for b in bl]
    pp = ' '.join(f"{p:,}" for p in pages) if any(pages) else '0'
    ppi = ' '.join(f"{p / a:.2f}" for p, a in zip(pages, ahead) if a) if any(pages) else '–'
    ah = ' '.join(f"{a:,}" for a in ahead) if any(ahead) else '–'
    print(f"| {f[3:-5]} | {r['threads']} | {d['e2e_mgas_per_s']:.1f} | {avg('prefetch'):.1f} | {avg('root'):.1f} | "
          f"{avg('write'):.1f} | {r.get('final_sync_ns', 0) / 1e6:.0f} | {pp} | {ah} | {ppi} |")
PY
