#!/usr/bin/env bash
# Installs go-ethereum's `evm` v1.17.10 (the differential-check oracle) into the gigagas tool
# cache: $GIGAGAS_TOOLS/geth-v1.17.10/evm, default ~/.cache/gigagas/geth-v1.17.10/evm.
# Cached between runs: does nothing when the right version is already there. Needs Go
# (the module proxy serves go-ethereum); about 4–5 minutes cold.
set -euo pipefail
version=v1.17.10
dir="${GIGAGAS_TOOLS:-$HOME/.cache/gigagas}/geth-$version"
if "$dir/evm" --version 2>/dev/null | grep -q "${version#v}"; then
  echo "geth evm $version: $dir/evm (cached)"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "install-geth-evm: Go is required" >&2; exit 1; }
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/ethereum/go-ethereum/cmd/evm@$version"
"$dir/evm" --version
