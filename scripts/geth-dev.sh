#!/usr/bin/env bash
# Starts go-ethereum v1.17.10 in --dev mode on 127.0.0.1:PORT (HTTP JSON-RPC: eth, debug, net,
# web3) with data directory DATADIR, at the newest fork geth and revm 43 agree on: Osaka.
#
#   scripts/geth-dev.sh DATADIR PORT [more geth flags]
#
# Plain `geth --dev` 1.17.10 runs its development fork "Bogota" from block 0 (EIP-8037 state
# gas, EIP-8282 system contracts), which revm 43 does not implement. So a fresh DATADIR is
# first initialised (`geth init`) with geth's own dev genesis (`geth --dev dumpgenesis`) minus
# `bogotaTime`, with geth's fixed developer account funded as --dev would fund it; --dev then
# runs that chain (Osaka from block 0, chain id 1337, mining a block whenever transactions
# are pending). It keeps every block's state (archive, hash scheme): a full node answers
# `debug_traceBlockByNumber` only for about the last 128 blocks ("historical state is not
# available"), and a workload of a thousand transactions spans more. GETH_DEV_CHAIN_ID (default
# 1337) sets the chain id of a fresh DATADIR: use 1 for a chain that `gigagas fetch --genesis
# DATADIR/genesis-osaka.json` hands to `gigagas peers` (geth's evm blocktest and revme run
# blockchain tests with chain id 1). The script ends by exec-ing geth, so its process id is geth's. Binary:
# $GETH, default the one scripts/install-geth.sh installs.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DATADIR PORT [geth flags]" >&2; exit 2; }
datadir=$1 port=$2
shift 2
chain_id="${GETH_DEV_CHAIN_ID:-1337}"
case $chain_id in ''|*[!0-9]*) echo "geth-dev: GETH_DEV_CHAIN_ID=$chain_id is not a number" >&2; exit 2;; esac
geth="${GETH:-${GIGAGAS_TOOLS:-$HOME/.cache/gigagas}/geth-v1.17.10/geth}"
[ -x "$geth" ] || { echo "geth-dev: no geth at $geth (run scripts/install-geth.sh)" >&2; exit 1; }
# geth's developer key (params.DeveloperKey), imported by --dev into an empty keystore.
dev=71562b71999873db5b286df957af199ec94617f7
if [ ! -d "$datadir/geth/chaindata" ]; then
  mkdir -p "$datadir"
  genesis="$datadir/genesis-osaka.json"
  "$geth" --dev dumpgenesis 2>/dev/null \
    | sed -e 's/"bogotaTime":[0-9]*,//' \
          -e "s/\"chainId\":1337,/\"chainId\":$chain_id,/" \
          -e "s/\"alloc\":{/\"alloc\":{\"$dev\":{\"balance\":\"0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7\"},/" \
    > "$genesis"
  grep -q '"osakaTime":0' "$genesis" && ! grep -q bogotaTime "$genesis" \
    && grep -q "\"chainId\":$chain_id," "$genesis" \
    || { echo "geth-dev: unexpected dumpgenesis output in $genesis" >&2; exit 1; }
  "$geth" init --state.scheme hash --datadir "$datadir" "$genesis" 2>"$datadir/init.log" \
    || { cat "$datadir/init.log" >&2; exit 1; }
fi
exec "$geth" --dev --dev.period 0 --datadir "$datadir" --state.scheme hash --gcmode archive \
  --http --http.addr 127.0.0.1 --http.port "$port" --http.api eth,debug,net,web3 \
  --port 0 --nodiscover --maxpeers 0 --authrpc.port 0 --ipcdisable "$@"
