#!/usr/bin/env bash
# The state root and disk reads when one account is hot: chains from
# `gigagas gen sstore-bloated --slots N [--spread]`, run with the state on disk (incremental,
# parallel root; stages back to back), 1 and 2 threads, warm and cold, interleaved rounds.
# Prints per chain and configuration: median root ms per block, median execute ms per block,
# end-to-end Mgas/s, MiB read per block.
# Usage: scripts/measure-hot.sh ROUNDS CHAIN_DIR...   (BIN=path overrides the binary)
set -euo pipefail
rounds="$1"; shift
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then cargo build --release --quiet --bin gigagas; BIN=target/release/gigagas; fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
chains=("$@")
for c in "${!chains[@]}"; do $BIN db init --data "${chains[$c]}" --out "$work/g$c.db" >/dev/null; done
configs=("1|" "2|" "1|--cold" "2|--cold")
for ((r = 0; r < rounds; r++)); do
  for c in "${!chains[@]}"; do
    for k in "${!configs[@]}"; do
      t="${configs[$k]%%|*}"; extra="${configs[$k]#*|}"
      rm -rf "$work/run.db"; cp -r "$work/g$c.db" "$work/run.db"
      # shellcheck disable=SC2086
      $BIN run --data "${chains[$c]}" --threads "$t" --state disk --db "$work/run.db" \
        --root incremental --pipeline off $extra --json "$work/$c-$k-$r.json" >/dev/null
    done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$rounds" "${#chains[@]}" "${chains[@]}" <<'PY'
import json, statistics, sys
work, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
chains = sys.argv[4:4 + n]
names = ["1 thread, warm", "2 threads, warm", "1 thread, cold", "2 threads, cold"]
med = statistics.median
print("| chain | configuration | root ms/block | execute ms/block | prefetch ms/block | write ms/block | e2e Mgas/s | MiB read/block |")
print("|---|---|---|---|---|---|---|---|")
for c, chain in enumerate(chains):
    for k, name in enumerate(names):
        runs = [json.load(open(f"{work}/{c}-{k}-{r}.json")) for r in range(rounds)]
        blocks = [b for x in runs for b in x["run"]["blocks"]]
        span = lambda b, s: (b["stages"][s]["end_ns"] - b["stages"][s]["start_ns"]) / 1e6 if s in b["stages"] else 0
        reads = [b["read_bytes"] for b in blocks if b.get("read_bytes") is not None]
        print(f"| {chain} | {name} | {med(span(b, 'root') for b in blocks):.1f} | {med(span(b, 'execute') for b in blocks):.1f} | "
              f"{med(span(b, 'prefetch') for b in blocks):.1f} | {med(span(b, 'write') for b in blocks):.1f} | "
              f"{med(x['e2e_mgas_per_s'] for x in runs):.0f} | {med(reads) / 2**20 if reads else 0:.1f} |")
PY
