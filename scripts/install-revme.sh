#!/usr/bin/env bash
# Installs revm's `revme` 43.0.3 (a peer engine for `gigagas peers`) into the gigagas tool
# cache: $GIGAGAS_TOOLS/revme-43.0.3/bin/revme, default ~/.cache/gigagas/revme-43.0.3/bin/revme.
# Cached between runs: does nothing when the right version is already there. Needs cargo and
# crates.io; builds for several minutes cold. The last line printed is the binary's path.
set -euo pipefail
version=43.0.3
root="${GIGAGAS_TOOLS:-$HOME/.cache/gigagas}/revme-$version"
bin="$root/bin/revme"
# revme has no --version: cargo's install record names the version.
installed() { [ -x "$bin" ] && grep -q "\"revme $version " "$root/.crates.toml" 2>/dev/null; }
if installed; then
  echo "revme $version (cached)"
  echo "$bin"
  exit 0
fi
command -v cargo >/dev/null 2>&1 || { echo "install-revme: cargo is required" >&2; exit 1; }
mkdir -p "$root"
cargo install revme --version "$version" --locked --root "$root"
installed || { echo "install-revme: $bin is not revme $version after cargo install" >&2; exit 1; }
echo "$bin"
