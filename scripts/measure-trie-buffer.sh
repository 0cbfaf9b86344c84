#!/usr/bin/env bash
# The trie buffer (trie-node persistence decoupled from the block, docs/store.md) on the
# seed's block at a size, hot account, warm, `run`'s defaults otherwise (pipelined, overlay,
# every-3), against the same chain in memory. A-B-B-A rounds (A: --trie-buffer 0,
# every block's nodes written with it; B: the default buffer), every second round reversed;
# each disk run starts from a fresh copy of the genesis store read into the page cache and is
# followed by `db verify` (= from scratch, or the script says so); one in-memory run per
# round. Prints each run (end to end, write share of the busy time with and without the final
# flush, its ratio to the in-memory run) and the geometric mean of the adjacent B/A pairs.
# Usage: scripts/measure-trie-buffer.sh WORK [SLOTS=2000000] [BLOCKS=6] [ROUNDS=2]
# BIN overrides the binary; THREADS (default 2) is the thread count. A_FLAGS and B_FLAGS
# replace what A and B add to the disk run (defaults: "--trie-buffer 0" and
# "--trie-buffer 256M"); e.g. A_FLAGS="--trie-journal off" B_FLAGS="--trie-journal on"
# compares the end of the run flushed and journaled. A_BIN and B_BIN (default: BIN) run A
# and B with two binaries (a before/after of a change; the in-memory run uses B's).
set -uo pipefail
work="${1:?usage: scripts/measure-trie-buffer.sh WORK [SLOTS] [BLOCKS] [ROUNDS]}"
slots="${2:-2000000}"; blocks="${3:-6}"; rounds="${4:-2}"; threads="${THREADS:-2}"
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --locked --quiet --bin gigagas; BIN=$PWD/target/release/gigagas; fi
mkdir -p "$work"; cd "$work" || exit 1
chain=chain-hot-$slots-$blocks; genesis=db-hot-$slots
[[ -f $chain/chain.json ]] || /usr/bin/time -v "$BIN" gen sstore-bloated --existing-slots --fork Osaka \
  --block-gas 30M --slots "$slots" --blocks "$blocks" --out $chain > gen.out 2> gen.err || { tail -3 gen.err; exit 1; }
[[ -d $genesis ]] || /usr/bin/time -v "$BIN" db init --data $chain --out $genesis > init.out 2> init.err || { tail -3 init.err; exit 1; }
a_flags="${A_FLAGS:---trie-buffer 0}"; b_flags="${B_FLAGS:---trie-buffer 256M}"
a_bin="${A_BIN:-$BIN}"; b_bin="${B_BIN:-$BIN}"
disk() {  # NAME FLAGS BIN
  local name=$1 flags=$2 bin=$3
  rm -rf tmpdb; mkdir tmpdb; cp -a $genesis/. tmpdb/; sync; cat tmpdb/mdbx.dat > /dev/null
  echo "$name load $(cut -d' ' -f1-3 /proc/loadavg)" >> tb-runs.log
  # shellcheck disable=SC2086 # the flags are words
  if ! /usr/bin/time -v "$bin" run --data $chain --state disk --db tmpdb $flags \
      --root incremental --threads "$threads" --json tb-$name.json > tb-$name.out 2> tb-$name.err; then
    echo "$name: run failed"; tail -3 tb-$name.err; exit 1
  fi
  du -s --block-size=1M tmpdb | cut -f1 > tb-$name.size
  "$BIN" db verify tmpdb > tb-$name.verify 2>&1 && grep -q "= from scratch" tb-$name.verify \
    || { echo "$name: db verify failed"; tail -3 tb-$name.verify; exit 1; }
}
memory() {  # NAME
  echo "$1 load $(cut -d' ' -f1-3 /proc/loadavg)" >> tb-runs.log
  "$b_bin" run --data $chain --root incremental --threads "$threads" --json tb-$1.json > tb-$1.out 2> tb-$1.err \
    || { echo "$1: run failed"; tail -3 tb-$1.err; exit 1; }
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="A B B A"; else order="B A A B"; fi
  memory r$r-0-mem
  i=0; for o in $order; do
    i=$((i + 1)); if [[ $o == A ]]; then disk r$r-$i-A "$a_flags" "$a_bin"; else disk r$r-$i-B "$b_flags" "$b_bin"; fi
  done
done
rm -rf tmpdb
python3 - <<'PY'
import glob, json, math, re
runs = {}
for f in sorted(glob.glob('tb-r*.json')):
    r = json.load(open(f))['run']; bl = r['blocks']
    st = lambda b, s: (b['stages'][s]['end_ns'] - b['stages'][s]['start_ns']) / 1e6 if s in b['stages'] else 0
    stages = sorted({s for b in bl for s in b['stages']})
    busy = sum(st(b, s) for b in bl for s in stages)
    write = sum(st(b, 'write') for b in bl)
    final = r.get('final_sync_ns', 0) / 1e6
    e2e = sum(b['gas'] for b in bl) / r['wall_ns'] * 1e3
    name = f[len('tb-'):-len('.json')]
    runs[name] = dict(e2e=e2e, write=write, busy=busy, final=final, wall=r['wall_ns'] / 1e6,
                      writes=[round(st(b, 'write')) for b in bl])
mem = {n.split('-')[0]: v['e2e'] for n, v in runs.items() if n.endswith('mem')}
for n, v in runs.items():
    rnd = n.split('-')[0]
    share = v['write'] / v['busy'] * 100 if v['busy'] else 0
    share_f = (v['write'] + v['final']) / (v['busy'] + v['final']) * 100 if v['busy'] else 0
    ratio = v['e2e'] / mem[rnd] if rnd in mem else float('nan')
    print(f"{n:10s} e2e {v['e2e']:6.1f} Mgas/s  x{ratio:4.2f} of memory  wall {v['wall']:7.0f} ms  write {v['write']:6.0f} ms "
          f"({share:4.1f}% of busy; {share_f:4.1f}% with the final flush {v['final']:5.0f} ms)  per block {v['writes']}")
by = {}
for n, v in runs.items():
    m = re.match(r'r(\d+)-(\d)-(A|B)', n)
    if m:
        rnd, pos, o = m.groups()
        by.setdefault((rnd, (int(pos) - 1) // 2), {})[o] = v['e2e']
ratios = [p['B'] / p['A'] for p in by.values() if 'A' in p and 'B' in p]
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"B / A, adjacent pairs: {' '.join(f'{x:.2f}' for x in ratios)}; geometric mean {g:.3f}")
PY
