#!/usr/bin/env bash
# A/B comparison of two gigagas binaries with drift control: runs `bench` A, B, B, A (ROUNDS
# times), pools each side's runs and compares them, so slow machine drift between runs is
# spread over both sides instead of biasing one.
# Usage: scripts/abba.sh BIN_A BIN_B ROUNDS [bench args...]
#   e.g. scripts/abba.sh /tmp/gigagas-main target/release/gigagas 2 --threads 1,2 --repeats 5
set -euo pipefail
a="$1"; b="$2"; rounds="$3"; shift 3
out="${OUT:-$(mktemp -d)}"; mkdir -p "$out"
as=(); bs=()
for ((r = 0; r < rounds; r++)); do
  for side in A B B A; do
    bin="$a"; [[ "$side" == B ]] && bin="$b"
    file="$out/$((${#as[@]} + ${#bs[@]} + 1))-$side.json"
    "$bin" bench "$@" --json "$file" >/dev/null
    if [[ "$side" == A ]]; then as+=("$file"); else bs+=("$file"); fi
  done
done
join() { local IFS=,; echo "$*"; }
"$b" compare "$(join "${as[@]}")" "$(join "${bs[@]}")" ${FLOOR:+--floor "$FLOOR"}
