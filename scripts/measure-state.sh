#!/usr/bin/env bash
# Pure execution against end-to-end with the state root and the state on disk, on one chain,
# in interleaved rounds (configuration order rotates each round, so drift is spread over all).
# Prints one markdown row per configuration: median end-to-end Mgas/s, median execution-alone
# Mgas/s, each stage's share, % of the pipeline bound, bytes read per block, wall ratio to
# pure execution.
# Usage: scripts/measure-state.sh CHAIN_DIR [ROUNDS] [THREADS]
#   e.g. scripts/measure-state.sh /tmp/mix300 3 2
# BIN=path overrides the binary (default: target/release/gigagas, built here).
set -euo pipefail
chain="$1"; rounds="${2:-3}"; threads="${3:-2}"
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then
  cargo build --release --quiet --bin gigagas
  BIN=target/release/gigagas
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
configs=(
  "pure|--root none --pipeline on"
  "memory, serial root, pipeline off|--root serial --pipeline off"
  "memory, parallel root, pipeline on|--root parallel --pipeline on"
  "memory, incremental root, pipeline off|--root incremental --pipeline off"
  "memory, incremental root, pipeline on|--root incremental --pipeline on"
  "disk, incremental root, pipeline off|--state disk --root incremental --pipeline off"
  "disk, incremental root, pipeline on|--state disk --root incremental --pipeline on"
  "disk cold, incremental root, pipeline off|--state disk --root incremental --pipeline off --cold"
)
# One store built once (before any timing) and copied per disk run, so every disk run starts
# at the chain's genesis.
$BIN db init --data "$chain" --out "$work/genesis.db" >/dev/null
n=${#configs[@]}
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < n; k++)); do
    i=$(( (k + r) % n ))
    name="${configs[$i]%%|*}"; flags="${configs[$i]#*|}"
    extra=()
    if [[ "$flags" == *"--state disk"* ]]; then
      rm -rf "$work/run.db"; cp -r "$work/genesis.db" "$work/run.db"; extra=(--db "$work/run.db")
    fi
    # shellcheck disable=SC2086
    $BIN run --data "$chain" --mode parallel --threads "$threads" $flags "${extra[@]}" \
      --json "$work/$i-$r.json" >/dev/null
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$rounds" "${configs[@]}" <<'PY'
import json, statistics, sys
work, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
med = statistics.median
rows = []
for i, c in enumerate(configs):
    runs = [json.load(open(f"{work}/{i}-{r}.json")) for r in range(rounds)]
    e2e = med(x["e2e_mgas_per_s"] for x in runs)
    exe = med(x["mgas_per_s"] for x in runs)
    wall = med(x["run"]["wall_ns"] for x in runs)
    phases = {k: med(x["phases_ns"][k] for x in runs) for k in runs[0]["phases_ns"]}
    total = sum(phases.values()) or 1
    share = ", ".join(f"{k} {v / total * 100:.0f}%" for k, v in phases.items() if v)
    bound = med(x["bound_ns"] / x["run"]["wall_ns"] * 100 for x in runs)
    reads = [b.get("read_bytes") for x in runs for b in x["run"]["blocks"]]
    reads = [v for v in reads if v is not None]
    read = f"{med(reads) / 2**20:.1f}" if reads else "-"
    rows.append((c.split("|")[0], e2e, exe, wall, share, bound, read))
pure_wall = rows[0][3]
print("| configuration | e2e Mgas/s | execution alone Mgas/s | wall ÷ pure | stage shares (busy) | % of pipeline bound | MiB read per block (median) |")
print("|---|---|---|---|---|---|---|")
for name, e2e, exe, wall, share, bound, read in rows:
    print(f"| {name} | {e2e:.0f} | {exe:.0f} | {wall / pure_wall:.2f} | {share} | {bound:.0f}% | {read} |")
PY
