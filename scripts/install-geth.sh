#!/usr/bin/env bash
# Installs go-ethereum's `geth` v1.17.10 (the dev node that `gigagas inject`/`fetch` are tested
# against, and the `geth import` peer) into the gigagas tool cache:
# $GIGAGAS_TOOLS/geth-v1.17.10/geth, default ~/.cache/gigagas/geth-v1.17.10/geth, and beside it
# `gigagas-geth-init` (tools/geth-init: a genesis too large for `geth init`'s memory, written
# through geth's own state code in chunks; `peers` uses it above 256 MiB of genesis.json).
# Cached between runs: does nothing when the right versions are already there. Needs Go (the
# module proxy serves go-ethereum); several minutes cold. The geth binary's path is the last
# line printed.
set -euo pipefail
version=v1.17.10
dir="${GIGAGAS_TOOLS:-$HOME/.cache/gigagas}/geth-$version"
src="$(cd "$(dirname "$0")/../tools/geth-init" && pwd)"
# The init tool is rebuilt whenever its source changes.
stamp="$(cat "$src/main.go" "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-16)"
need_go() { command -v go >/dev/null 2>&1 || { echo "install-geth: Go is required" >&2; exit 1; }; }
if "$dir/geth" version 2>/dev/null | grep -q "^Version: ${version#v}"; then
  echo "geth $version (cached)"
else
  need_go
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/ethereum/go-ethereum/cmd/geth@$version"
  "$dir/geth" version
fi
if [ -x "$dir/gigagas-geth-init" ] && [ "$(cat "$dir/gigagas-geth-init.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "gigagas-geth-init (cached)"
else
  need_go
  mkdir -p "$dir"
  (cd "$src" && go build -o "$dir/gigagas-geth-init.tmp" .)
  mv "$dir/gigagas-geth-init.tmp" "$dir/gigagas-geth-init"
  echo "$stamp" > "$dir/gigagas-geth-init.stamp"
  echo "gigagas-geth-init built from tools/geth-init ($stamp)"
fi
echo "$dir/geth"
