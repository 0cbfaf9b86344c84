#!/usr/bin/env bash
# The disk store's overlay (`run --overlay on|off`: the next block reads the last one's writes
# from memory while they commit) on the seed's block at a size, hot account, warm, `run`'s
# defaults otherwise (pipelined, every-3). A-B-B-A rounds, every second one reversed; each run
# starts from a fresh copy of the genesis store read into the page cache, and is followed by
# `db verify` (= from scratch, or the script says so). Prints each run and the geometric mean
# of the adjacent on/off pairs (docs/results/hot-account-10gb-2core.md, "The overlay").
# Usage: scripts/measure-overlay.sh WORK [SLOTS=10000000] [BLOCKS=24] [ROUNDS=2]
# BIN overrides the binary; THREADS (default 2) is the thread count.
set -uo pipefail
work="${1:?usage: scripts/measure-overlay.sh WORK [SLOTS] [BLOCKS] [ROUNDS]}"
slots="${2:-10000000}"; blocks="${3:-24}"; rounds="${4:-2}"; threads="${THREADS:-2}"
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$PWD/target/release/gigagas; fi
mkdir -p "$work"; cd "$work" || exit 1
chain=chain-hot-$slots-$blocks; genesis=db-hot-$slots
[[ -f $chain/chain.json ]] || /usr/bin/time -v "$BIN" gen sstore-bloated --existing-slots --fork Osaka \
  --block-gas 30M --slots "$slots" --blocks "$blocks" --out $chain > gen.out 2> gen.err || { tail -3 gen.err; exit 1; }
[[ -d $genesis ]] || /usr/bin/time -v "$BIN" db init --data $chain --out $genesis > init.out 2> init.err || { tail -3 init.err; exit 1; }
one() {  # NAME on|off
  local name=$1 overlay=$2
  rm -rf tmpdb; mkdir tmpdb; cp -a $genesis/. tmpdb/; sync; cat tmpdb/mdbx.dat > /dev/null
  if ! "$BIN" run --data $chain --state disk --db tmpdb --root incremental --threads "$threads" \
      --overlay "$overlay" --json overlay-$name.json > overlay-$name.out 2> overlay-$name.err; then
    echo "$name: run failed"; tail -3 overlay-$name.err; exit 1
  fi
  du -s --block-size=1M tmpdb | cut -f1 > overlay-$name.size
  "$BIN" db verify tmpdb > overlay-$name.verify 2>&1 && grep -q "= from scratch" overlay-$name.verify \
    || { echo "$name: db verify failed"; tail -3 overlay-$name.verify; exit 1; }
  echo "$name load $(cut -d' ' -f1-3 /proc/loadavg)" >> overlay-runs.log
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="on off off on"; else order="off on on off"; fi
  i=0; for o in $order; do i=$((i + 1)); one r$r-$i-$o $o; done
done
rm -rf tmpdb
python3 - <<'PY'
import glob, json, math, re
runs = []
for f in sorted(glob.glob('overlay-r*.json')):
    r = json.load(open(f))['run']; bl = r['blocks']
    st = lambda b, s: (b['stages'][s]['end_ns'] - b['stages'][s]['start_ns']) / 1e6 if s in b['stages'] else 0
    avg = lambda s: sum(st(b, s) for b in bl) / len(bl)
    e2e = sum(b['gas'] for b in bl) / r['wall_ns'] * 1e3
    name = f[len('overlay-'):-len('.json')]
    size = open(f'overlay-{name}.size').read().strip()
    runs.append((name, e2e))
    print(f"{name:12s} overlay {str(r['overlay']):5s} blocks {len(bl)} write {avg('write'):6.1f} execute {avg('execute'):6.1f} "
          f"root {avg('root'):6.1f} e2e {e2e:6.1f} Mgas/s store {size} MiB")
# Adjacent pairs within a round: positions (1,2) and (3,4).
by = {}
for name, e2e in runs:
    rnd, pos, o = re.match(r'r(\d+)-(\d)-(on|off)', name).groups()
    by.setdefault((rnd, (int(pos) - 1) // 2), {})[o] = e2e
ratios = [p['on'] / p['off'] for p in by.values() if 'on' in p and 'off' in p]
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"on / off, adjacent pairs: {' '.join(f'{x:.2f}' for x in ratios)}; geometric mean {g:.3f}")
PY
