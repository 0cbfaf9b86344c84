#!/usr/bin/env bash
# Cold reads of the seed's block at a size, with the store's B-tree index dropped (D, the
# default) and cached (I, --cold-index cached), in the order I D I D: each run on a fresh copy
# of the genesis store, the page cache emptied first (root: drop_caches), 2 threads,
# --pipeline off --cold. Prints per run: end to end, prefetch and write ms per block, device
# microseconds per page read (the control: a shared disk varies), pages read per block and
# pages per item read ahead.
# Usage: scripts/measure-cold-index.sh WORK [SLOTS=10000000] [BLOCKS=6]
# (WORK/chain-hot-SLOTS-BLOCKS and WORK/db-hot-SLOTS-BLOCKS as scripts/measure-hot-tables.sh
# makes them; links are followed.) BIN overrides the binary.
set -uo pipefail
work="${1:?usage: scripts/measure-cold-index.sh WORK [SLOTS] [BLOCKS]}"
slots="${2:-10000000}"; blocks="${3:-6}"
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$PWD/target/release/gigagas; fi
cd "$work" || exit 1
chain=chain-hot-$slots-$blocks; genesis=db-hot-$slots-$blocks
[[ -f $chain/chain.json && -d $genesis ]] || { echo "no $chain or $genesis in $work (scripts/measure-hot-tables.sh makes them)" >&2; exit 1; }
i=0
for m in I D I D; do
  i=$((i + 1)); extra=(); [[ $m == I ]] && extra=(--cold-index cached)
  rm -rf tmpdb; mkdir tmpdb; cp -a $genesis/. tmpdb/; sync; echo 3 > /proc/sys/vm/drop_caches
  "$BIN" run --data $chain --state disk --db tmpdb --root incremental --pipeline off --cold --threads 2 \
    "${extra[@]}" --json ci-$i-$m.json > ci-$i-$m.out 2> ci-$i-$m.err || { echo "$i-$m failed"; tail -3 ci-$i-$m.err; exit 1; }
done
rm -rf tmpdb
python3 - <<'PY'
import glob, json
for f in sorted(glob.glob('ci-*.json')):
    d = json.load(open(f)); bl = d['run']['blocks']
    st = lambda b, s: (b['stages'][s]['end_ns'] - b['stages'][s]['start_ns']) / 1e6 if s in b['stages'] else 0
    avg = lambda s: sum(st(b, s) for b in bl) / len(bl)
    pages = [((b.get('read_bytes') or 0) + 4095) // 4096 for b in bl]
    per = [p / b['read_ahead'] for p, b in zip(pages, bl) if b.get('read_ahead')]
    us = 1000 * avg('prefetch') / max(1, sum(pages) / len(pages))
    print(f"{f[3:-5]:>4}  {d['e2e_mgas_per_s']:6.1f} Mgas/s  prefetch {avg('prefetch'):7.1f} ms  write {avg('write'):6.1f} ms  "
          f"{us:4.0f} us/page  pages {min(pages):,}-{max(pages):,}  per item {min(per):.2f}-{max(per):.2f}")
PY
