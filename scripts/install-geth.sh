#!/usr/bin/env bash
# Installs go-ethereum's `geth` v1.17.10 (the dev node that `gigagas inject`/`fetch` are tested
# against) into the gigagas tool cache: $GIGAGAS_TOOLS/geth-v1.17.10/geth, default
# ~/.cache/gigagas/geth-v1.17.10/geth. Cached between runs: does nothing when the right version
# is already there. Needs Go (the module proxy serves go-ethereum); several minutes cold.
# The binary's path is the last line printed.
set -euo pipefail
version=v1.17.10
dir="${GIGAGAS_TOOLS:-$HOME/.cache/gigagas}/geth-$version"
if "$dir/geth" version 2>/dev/null | grep -q "^Version: ${version#v}"; then
  echo "geth $version (cached)"
  echo "$dir/geth"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "install-geth: Go is required" >&2; exit 1; }
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/ethereum/go-ethereum/cmd/geth@$version"
"$dir/geth" version
echo "$dir/geth"
