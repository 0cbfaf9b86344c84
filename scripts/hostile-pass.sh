#!/usr/bin/env bash
# A hostile pass over every subcommand of the release binary (issue 29, round 3): malformed,
# huge and hostile inputs (truncated files, junk JSON, NaN/1e308/negative numbers in result
# JSON, HTML and ANSI escape injection, huge flag values, nonexistent paths, directories where
# files are expected, closed stdout, /dev/full, hanging children and nodes, SIGKILL mid-write
# then rerun). Each input runs under `timeout 60` and `/usr/bin/time` and is classed:
#
#   OK        the expected outcome (a clear error naming the cause, or a success)
#   PANIC     "panicked" in the output or exit status 101
#   LOSS      a rerun after SIGKILL fails, or the data it left does not load or verify
#   HANG      killed by the 60 s timeout
#   OOM       peak RSS above 2 GiB (every input here is small)
#   SILENT    a hostile input accepted with exit status 0 where an error is due
#   UNCLEAR   a failure with no message, or a closed pipe reported as an error
#   SECURITY  injected markup in an HTML page, or a raw escape character (ESC) on the terminal
#
#   scripts/hostile-pass.sh [BIN] [TABLE.md]   (default target/release/gigagas, stdout)
#
# Needs python3 (JSON edits, fake nodes), tar with zstd, GNU time at /usr/bin/time.
set -uo pipefail
export LC_ALL=C.UTF-8 NO_COLOR=1
root="$(cd "$(dirname "$0")/.." && pwd)"
G="$(realpath "${1:-$root/target/release/gigagas}")"
table="${2:-/dev/stdout}"
W="$(mktemp -d /tmp/hostile-pass.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$W"
}
trap cleanup EXIT
cd "$W" || exit 1

# ---- fixtures (not counted) -------------------------------------------------------------
"$G" gen transfers --blocks 3 --block-gas 1M --senders 4 --fork Prague --out "$W/chain" >/dev/null 2>&1 \
  || { echo "gen of the fixture chain failed" >&2; exit 1; }
cp "$root/docs/results/bench-mainnet-2core.json" "$W/b.json"
mkdir -p "$W/mn" "$W/empty" && tar --zstd -xf "$root/data/mainnet-sample.tar.zst" -C "$W/mn"
[ -d "$W/mn/blocks" ] || mv "$W"/mn/*/* "$W/mn/" 2>/dev/null
"$G" pack --data "$W/mn" --out "$W/sample.tar.zst" --blocks "$(ls "$W/mn/blocks" | head -2 | paste -sd,)" --level 1 >/dev/null 2>&1
"$G" db init --data "$W/chain" --out "$W/db" >/dev/null 2>&1
"$G" peers --data "$W/chain" --peers gigagas-process --repeats 1 --warmup 0 --json "$W/p.json" >/dev/null 2>&1
mkfifo "$W/fifo"
cat > "$W/hang-evm" <<'EOF'
#!/bin/sh
case "$1" in --version|version) echo "evm version 1.17.10-stable"; exit 0;; esac
exec sleep 100000
EOF
chmod +x "$W/hang-evm"
python3 - "$W/ports" <<'EOF' &
import socket, sys, threading, time
def silent(c): time.sleep(600); c.close()
def garbage(c):
    c.recv(65536); c.sendall(b"\x1b[31mjunk\x00\xff\r\n\r\nnot http"); c.close()
def lying(c):
    c.recv(65536)
    body = b'{"jsonrpc":"2.0","id":1,"result":"\\u001b[2J<script>alert(1)</script>"}'
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body); c.close()
ports = []
for f in (silent, garbage, lying):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64); ports.append(s.getsockname()[1])
    def serve(s=s, f=f):
        while True:
            c, _ = s.accept(); threading.Thread(target=f, args=(c,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
open(sys.argv[1], "w").write(" ".join(map(str, ports)))
time.sleep(3600)
EOF
pids+=($!)
for _ in $(seq 50); do [ -s "$W/ports" ] && break; sleep 0.1; done
read -r SILENT_PORT GARBAGE_PORT LYING_PORT < "$W/ports"

# edit FILE PYTHON-EXPR-ON-d OUT: a JSON file edited by a Python statement on `d`.
edit() {
  python3 - "$1" "$3" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], "w").write(json.dumps(d) if not isinstance(d, str) else d)
EOF
}
# chain_with NAME PYTHON: a copy of the fixture chain with chain.json edited.
chain_with() {
  mkdir -p "$W/$1" && cp "$W/chain/blocks.rlp" "$W/$1/" && edit "$W/chain/chain.json" "$2" "$W/$1/chain.json"
}

# ---- the pass ---------------------------------------------------------------------------
n=0
declare -A count=([OK]=0 [PANIC]=0 [LOSS]=0 [HANG]=0 [OOM]=0 [SILENT]=0 [UNCLEAR]=0 [SECURITY]=0)
rows=""

# t EXPECT LABEL COMMAND [HTML-FILE]
#   EXPECT: fail (a clear error is due), ok (must succeed), any (either; no panic, hang,
#   OOM), pipe (closed stdout: status 0 or 141, nothing on stderr about it).
t() {
  local expect=$1 label=$2 cmd=$3 html=${4:-}
  n=$((n + 1))
  rm -f "$W/time"
  /usr/bin/time -f "%M %e" -o "$W/time" timeout -k 5 60 bash -c "$cmd" >"$W/out" 2>"$W/err" </dev/null
  local rc=$?
  local rss secs
  read -r rss secs < <(tail -n 1 "$W/time" 2>/dev/null || echo "0 0")
  local class=OK note=""
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    class=HANG
  elif grep -q "panicked" "$W/err" "$W/out" || [ "$rc" = 101 ]; then
    class=PANIC
  elif [ "${rss:-0}" -gt $((2 * 1024 * 1024)) ]; then
    class=OOM
  elif grep -q $'\x1b' "$W/err" || grep -q $'\x1b' "$W/out"; then
    class=SECURITY; note="raw ESC in the output; "
  elif [ -n "$html" ] && grep -q "<script>alert" "$html" 2>/dev/null; then
    class=SECURITY; note="markup from the input in $html; "
  else
    case $expect in
      fail) if [ "$rc" = 0 ]; then class=SILENT; elif [ ! -s "$W/err" ]; then class=UNCLEAR; fi ;;
      ok) if [ "$rc" != 0 ]; then class=UNCLEAR; note="expected success; "; fi ;;
      pipe) if [ "$rc" != 0 ] && [ "$rc" != 141 ]; then class=UNCLEAR; elif grep -qi "broken pipe" "$W/err"; then class=UNCLEAR; note="reports the closed pipe; "; fi ;;
      any) ;;
    esac
  fi
  count[$class]=$((count[$class] + 1))
  local msg
  msg="$(grep -v '^\s*$' "$W/err" | grep -m1 -iE 'error|refus|fail|limit|timeout' || head -n 1 "$W/err")"
  msg="$(printf '%s' "$note$msg" | cut -c1-160 | cat -v | sed 's/|/\\|/g; s/`/'"'"'/g')"
  local shown
  shown="$(printf '%s' "$label" | sed 's/|/\\|/g')"
  rows+="| $n | $class | $rc | $secs | $((rss / 1024)) | $shown | $msg |"$'\n'
  printf '%3d %-8s rc=%-3s %6ss %5s MiB  %s\n' "$n" "$class" "$rc" "$secs" "$((rss / 1024))" "$label" >&2
}

C="$W/chain"
# run: data sets
t fail "run --data (nonexistent)" "'$G' run --data /nonexistent/x"
t fail "run --data (empty directory)" "'$G' run --data '$W/empty'"
t fail "run --data (a regular file)" "'$G' run --data /etc/passwd"
t fail "run --data /dev/zero" "'$G' run --data /dev/zero"
t fail "run --data (a FIFO)" "'$G' run --data '$W/fifo'"
mkdir -p "$W/trunc" && cp "$C/blocks.rlp" "$W/trunc/" && head -c 300 "$C/chain.json" > "$W/trunc/chain.json"
t fail "run: chain.json truncated" "'$G' run --data '$W/trunc'"
mkdir -p "$W/junk" && cp "$C/blocks.rlp" "$W/junk/" && echo '{{{ not json' > "$W/junk/chain.json"
t fail "run: chain.json junk" "'$G' run --data '$W/junk'"
mkdir -p "$W/null" && cp "$C/blocks.rlp" "$W/null/" && echo 'null' > "$W/null/chain.json"
t fail "run: chain.json null" "'$G' run --data '$W/null'"
mkdir -p "$W/rlpt" && cp "$C/chain.json" "$W/rlpt/" && head -c 1000 "$C/blocks.rlp" > "$W/rlpt/blocks.rlp"
t fail "run: blocks.rlp truncated" "'$G' run --data '$W/rlpt'"
mkdir -p "$W/rlp0" && cp "$C/chain.json" "$W/rlp0/" && : > "$W/rlp0/blocks.rlp"
t fail "run: blocks.rlp empty" "'$G' run --data '$W/rlp0'"
chain_with bal1 'a=next(k for k,v in d["alloc"].items() if "code" not in v); d["alloc"][a]["balance"]=hex(int(d["alloc"][a]["balance"],16)+1)'
t fail "run: one genesis balance +1 wei" "'$G' run --data '$W/bal1'"
chain_with fill 'd["storage_fill"]=[{"address":"0x00000000000000000000000000000000f1110000","accounts":1,"slots":100000000,"period":7,"nonce":1}]'
t fail "run: storage_fill of 100M slots added" "'$G' run --data '$W/fill'"
chain_with forkx 'd["fork"]="<script>alert(1)</script>"'
t fail "run: fork = <script>" "'$G' run --data '$W/forkx'"
chain_with forke 'd["fork"]="\u001b[2J\u001b[31mPrague"'
t fail "run: fork with ANSI escapes" "'$G' run --data '$W/forke'"
chain_with blk 'd["blocks"]=1e308'
t fail "run: blocks = 1e308" "'$G' run --data '$W/blk'"
chain_with cid 'd["chain_id"]=-1'
t fail "run: chain_id = -1" "'$G' run --data '$W/cid'"
chain_with gh 'd["genesis_hash"]="0xzz"'
t fail "run: genesis_hash not hex" "'$G' run --data '$W/gh'"
chain_with schema 'd["schema"]="gigagas.chain/999"'
t fail "run: unknown schema" "'$G' run --data '$W/schema'"
chain_with seed 'd["seed"]=2'
t fail "run: seed changed (genesis no longer matches)" "'$G' run --data '$W/seed'"
# run: flags
t fail "run --threads 0" "'$G' run --threads 0"
t fail "run --threads 99999999999" "'$G' run --threads 99999999999"
t fail "run --mega 0" "'$G' run --mega 0"
t fail "run --mega 1e308" "'$G' run --mega 1e308"
t fail "run --scheduler '<x>'" "'$G' run --scheduler '<x>'"
t fail "run --warm-spin 1e308s" "'$G' run --warm-spin 1e308s"
t fail "run --small-block-gas -1" "'$G' run --small-block-gas -1"
t fail "run --state disk --db (nonexistent)" "'$G' run --data '$C' --state disk --db /nonexistent/db"
t any "run --state disk --db (new directory: a store is built)" "'$G' run --data '$C' --state disk --db '$W/newdb'"
t fail "run --json (a directory)" "'$G' run --json '$W/empty'"
t fail "run --json (the chain's own chain.json)" "'$G' run --data '$C' --json '$C/chain.json'"
# run: archives and mainnet layout
head -c 2000 "$W/sample.tar.zst" > "$W/trunc.tar.zst"
t fail "run --data archive truncated" "'$G' run --data '$W/trunc.tar.zst'"
: > "$W/zero.tar.zst"
t fail "run --data archive of 0 bytes" "'$G' run --data '$W/zero.tar.zst'"
head -c 100000 /dev/urandom > "$W/rand.tar.zst"
t fail "run --data archive of random bytes" "'$G' run --data '$W/rand.tar.zst'"
python3 - "$W/bomb.tar.zst" <<'EOF'
import io, sys, tarfile, subprocess
# 4 members of 1 GiB of zeros before a manifest, streamed through zstd.
p = subprocess.Popen(["zstd", "-1", "-q", "-o", sys.argv[1], "-f"], stdin=subprocess.PIPE)
class Zeros(io.RawIOBase):
    def __init__(s, n): s.n = n
    def readinto(s, b):
        k = min(len(b), s.n); b[:k] = bytes(k); s.n -= k; return k
with tarfile.open(fileobj=p.stdin, mode="w|") as t:
    for i in range(4):
        ti = tarfile.TarInfo(f"junk{i}.bin"); ti.size = 1 << 30; t.addfile(ti, Zeros(1 << 30))
    m = b"00" * 32 + b"  blocks/1/block.json\n"
    ti = tarfile.TarInfo("MANIFEST.sha256"); ti.size = len(m); t.addfile(ti, io.BytesIO(m))
p.stdin.close(); p.wait()
EOF
t fail "run --data bomb (4 x 1 GiB zero members before the manifest)" "'$G' run --data '$W/bomb.tar.zst'"
cp -r "$W/mn" "$W/mnj" && b=$(ls "$W/mnj/blocks" | head -1) && echo '{"number":' > "$W/mnj/blocks/$b/block.json"
t fail "run: mainnet block.json junk" "'$G' run --data '$W/mnj'"
cp -r "$W/mn" "$W/mnp" && b=$(ls "$W/mnp/blocks" | head -1) && rm "$W/mnp/blocks/$b/pre_state.json"
t fail "run: mainnet pre_state.json missing" "'$G' run --data '$W/mnp'"
cp -r "$W/mn" "$W/mnb" && b=$(ls "$W/mnb/blocks" | head -1) && edit "$W/mn/blocks/$b/pre_state.json" 'k=next(iter(d)); d[k]["balance"]=1e308' "$W/mnb/blocks/$b/pre_state.json"
t fail "run: mainnet pre_state balance 1e308" "'$G' run --data '$W/mnb'"
t pipe "run | head -1" "'$G' run | head -1; exit \${PIPESTATUS[0]}"
t fail "run > /dev/full" "'$G' run > /dev/full"
# gen
t fail "gen --blocks 0" "'$G' gen transfers --blocks 0 --out '$W/g0'"
t fail "gen --blocks 99999999" "'$G' gen transfers --blocks 99999999 --out '$W/g1'"
t fail "gen --block-gas 1e308" "'$G' gen transfers --block-gas 1e308 --out '$W/g2'"
t fail "gen --block-gas -1" "'$G' gen transfers --block-gas=-1 --out '$W/g3'"
t fail "gen (unknown workload <b>x</b>)" "'$G' gen '<b>x</b>' --out '$W/g4'"
t fail "gen --out (parent missing)" "'$G' gen transfers --out /nonexistent/x"
t fail "gen --out (a regular file)" "'$G' gen transfers --out /etc/passwd"
t fail "gen --out (non-empty directory)" "'$G' gen transfers --blocks 1 --out '$C'"
t fail "gen --senders 0" "'$G' gen transfers --senders 0 --out '$W/g5'"
t fail "gen sstore-bloated --slots 1e11" "'$G' gen sstore-bloated --slots 100000000000 --out '$W/g6'"
t fail "gen --seed -1" "'$G' gen transfers --seed=-1 --out '$W/g7'"
t fail "gen --fork '\\e[2J'" "'$G' gen transfers --fork \$'\\e[2J' --out '$W/g8'"
t fail "gen --tx-gas-cap 0" "'$G' gen transfers --tx-gas-cap 0 --out '$W/g9'"
t pipe "gen with stdout closed" "'$G' gen transfers --blocks 2 --block-gas 1M --senders 4 --out '$W/gp' | true; exit \${PIPESTATUS[0]}"
t fail "gen > /dev/full" "'$G' gen transfers --blocks 2 --block-gas 1M --senders 4 --out '$W/gf' > /dev/full"
# gen killed mid-write, then rerun: nothing partial left, the rerun completes and loads.
t ok "gen SIGKILL mid-write, rerun, run the result" "('$G' gen mainnet-mix --blocks 40 --block-gas 30M --out '$W/gk' >/dev/null 2>&1 & p=\$!; sleep 2; kill -9 \$p; wait \$p; [ ! -e '$W/gk' ] || [ -f '$W/gk/chain.json' ] || { echo 'error: partial --out left' >&2; exit 1; }; rm -rf '$W/gk'; '$G' gen transfers --blocks 3 --block-gas 1M --senders 4 --out '$W/gk' >/dev/null && '$G' run --data '$W/gk' --mode sequential >/dev/null) || { echo 'LOSS' >&2; exit 1; }"
# bal stats
t fail "bal stats --data (nonexistent)" "'$G' bal stats --data /nonexistent"
t fail "bal stats --data (junk chain)" "'$G' bal stats --data '$W/junk'"
t pipe "bal stats | head -1" "'$G' bal stats | head -1; exit \${PIPESTATUS[0]}"
t fail "bal stats > /dev/full" "'$G' bal stats > /dev/full"
t fail "bal stats --json (parent missing)" "'$G' bal stats --json /nonexistent/x.json"
t fail "bal stats --json (its own input)" "'$G' bal stats --data '$C' --json '$C/chain.json'"
# report
t fail "report (nonexistent)" "'$G' report /nonexistent.json"
echo '{{junk' > "$W/junk.json"; : > "$W/empty.json"
t fail "report junk JSON" "'$G' report '$W/junk.json' --out '$W/r1.html'"
t fail "report empty file" "'$G' report '$W/empty.json' --out '$W/r2.html'"
t fail "report /dev/zero" "'$G' report /dev/zero --out '$W/r3.html'"
t fail "report (a directory)" "'$G' report '$W/empty' --out '$W/r4.html'"
edit "$W/b.json" 'd["machine"]["os"]="<script>alert(1)</script>"' "$W/x1.json"
t any "report machine.os = <script>" "'$G' report '$W/x1.json' --out '$W/x1.html'" "$W/x1.html"
edit "$W/b.json" 'd["runs"][0]["mode"]="<script>alert(1)</script>"' "$W/x2.json"
t any "report runs[0].mode = <script>" "'$G' report '$W/x2.json' --out '$W/x2.html'" "$W/x2.html"
edit "$W/b.json" 'd["runs"][1]["scheduler"]="<img src=x onerror=alert(1)>\u001b[2J"' "$W/x3.json"
t any "report runs[1].scheduler = <img onerror> + ESC" "'$G' report '$W/x3.json' --out '$W/x3.html'; grep -q '<img src=x' '$W/x3.html' && { echo 'error: markup survived' >&2; exit 3; }; true"
edit "$W/b.json" 'd["runs"][0]["recover_senders"]="\"><script>alert(1)</script>"' "$W/x4.json"
t any "report recover_senders = attribute break-out" "'$G' report '$W/x4.json' --out '$W/x4.html'" "$W/x4.html"
edit "$W/b.json" 'd["data"]="</title><script>alert(1)</script>"' "$W/x5.json"
t any "report data = </title><script>" "'$G' report '$W/x5.json' --out '$W/x5.html'" "$W/x5.html"
edit "$W/b.json" '[r.__setitem__("mgas_per_s",1e308) for r in d["runs"]]' "$W/n1.json"
t any "report mgas_per_s = 1e308" "'$G' report '$W/n1.json' --out '$W/n1.html'"
edit "$W/b.json" 'd["runs"][0]["mgas_per_s"]="NaN"' "$W/n2.json"
t fail "report mgas_per_s = \"NaN\"" "'$G' report '$W/n2.json' --out '$W/n2.html'"
sed 's/"mgas_per_s": *[0-9.e+-]*/"mgas_per_s": NaN/' "$W/b.json" > "$W/n3.json"
t fail "report mgas_per_s = NaN (bare)" "'$G' report '$W/n3.json' --out '$W/n3.html'"
edit "$W/b.json" '[r.__setitem__("mgas_per_s",-1) for r in d["runs"]]' "$W/n4.json"
t fail "report mgas_per_s = -1" "'$G' report '$W/n4.json' --out '$W/n4.html'"
edit "$W/b.json" '[r.__setitem__("threads",4294967295) for r in d["runs"]]' "$W/n5.json"
t any "report threads = 2^32-1" "'$G' report '$W/n5.json' --out '$W/n5.html'"
edit "$W/b.json" 'd["runs"][0]["threads"]=-1' "$W/n6.json"
t fail "report threads = -1" "'$G' report '$W/n6.json' --out '$W/n6.html'"
edit "$W/b.json" 'd["runs"][0]["median_ns"]=1e308' "$W/n7.json"
t any "report median_ns = 1e308" "'$G' report '$W/n7.json' --out '$W/n7.html'"
edit "$W/b.json" 'd["machine"]["cores"]=18446744073709551615' "$W/n8.json"
t any "report machine.cores = 2^64-1" "'$G' report '$W/n8.json' --out '$W/n8.html'"
edit "$W/b.json" '[r.__setitem__("repeat_ns",[1]*2000000) for r in d["runs"][:1]]' "$W/n9.json"
t any "report with 2M repeats in a run" "'$G' report '$W/n9.json' --out '$W/n9.html'"
edit "$W/b.json" 'd["blocks"]=d["blocks"]*40' "$W/n10.json"
t any "report with 2000 block rows (x40)" "'$G' report '$W/n10.json' --out '$W/n10.html'"
edit "$W/p.json" 'd["data"]="<script>alert(1)</script>"' "$W/p1.json"
t any "report peers result, data = <script>" "'$G' report '$W/p1.json' --out '$W/p1.html'" "$W/p1.html"
t fail "report --out /dev/full" "'$G' report '$W/b.json' --out /dev/full"
t pipe "report --out - | head -c 100" "'$G' report '$W/b.json' --out - | head -c 100 >/dev/null; exit \${PIPESTATUS[0]}"
t fail "report --out (its own input)" "'$G' report '$W/b.json' --out '$W/b.json'"
# compare
t fail "compare with junk B" "'$G' compare '$W/b.json' '$W/junk.json'"
t fail "compare with a missing B" "'$G' compare '$W/b.json' /nonexistent.json"
t ok "compare A with itself" "'$G' compare '$W/b.json' '$W/b.json'"
t any "compare with mgas_per_s 1e308" "'$G' compare '$W/b.json' '$W/n1.json'"
t any "compare with median_ns 1e308" "'$G' compare '$W/b.json' '$W/n7.json'"
t any "compare with 2M repeats" "'$G' compare '$W/n9.json' '$W/b.json'"
t fail "compare --floor -5%" "'$G' compare --floor=-5% '$W/b.json' '$W/b.json'"
t fail "compare --floor 1e308" "'$G' compare --floor 1e308 '$W/b.json' '$W/b.json'"
t fail "compare --floor NaN" "'$G' compare --floor NaN '$W/b.json' '$W/b.json'"
t fail "compare --floor abc" "'$G' compare --floor abc '$W/b.json' '$W/b.json'"
t any "compare with mode = <script> + ESC (terminal)" "'$G' compare '$W/b.json' '$W/x3.json'"
t pipe "compare | head -1" "'$G' compare '$W/b.json' '$W/b.json' | head -1; exit \${PIPESTATUS[0]}"
t fail "compare > /dev/full" "'$G' compare '$W/b.json' '$W/b.json' > /dev/full"
# simulate
t fail "simulate junk" "'$G' simulate '$W/junk.json'"
t fail "simulate (a directory)" "'$G' simulate '$W/empty'"
t fail "simulate --threads 0" "'$G' simulate '$W/b.json' --threads 0"
t fail "simulate --threads 4294967296" "'$G' simulate '$W/b.json' --threads 4294967296"
t fail "simulate --mega 0" "'$G' simulate '$W/b.json' --mega 0"
t fail "simulate --scheduler '<x>'" "'$G' simulate '$W/b.json' --scheduler '<x>'"
t any "simulate mgas_per_s 1e308" "'$G' simulate '$W/n1.json'"
t any "simulate threads 2^32-1" "'$G' simulate '$W/n5.json'"
t any "simulate with ESC in scheduler" "'$G' simulate '$W/x3.json'"
t pipe "simulate | head -1" "'$G' simulate '$W/b.json' | head -1; exit \${PIPESTATUS[0]}"
t fail "simulate > /dev/full" "'$G' simulate '$W/b.json' > /dev/full"
# conformance
t fail "conformance (nonexistent)" "'$G' conformance /nonexistent"
t fail "conformance junk JSON" "'$G' conformance '$W/junk.json'"
t fail "conformance /dev/zero" "'$G' conformance /dev/zero"
t fail "conformance --threads 0" "'$G' conformance '$W/junk.json' --threads 0"
echo '{"t\u001b[2J<script>":{"network":"Prague\u001b[31m","blocks":[],"genesisBlockHeader":{},"pre":{},"postState":{}}}' > "$W/ct.json"
t any "conformance test named with ESC" "'$G' conformance '$W/ct.json'"
t fail "conformance --mutations 1e308" "'$G' conformance '$W/ct.json' --mutations 1e308"
# pack
t fail "pack --data (nonexistent)" "'$G' pack --data /nonexistent --out '$W/o.tar.zst'"
t fail "pack --out inside --data" "'$G' pack --data '$W/mn' --out '$W/mn/in.tar.zst'"
b1=$(ls "$W/mn/blocks" | head -1)
t ok "pack --blocks N,N (packed once)" "'$G' pack --data '$W/mn' --blocks $b1,$b1 --out '$W/dup.tar.zst'"
t fail "pack --blocks 1e308" "'$G' pack --data '$W/mn' --blocks 1e308 --out '$W/big.tar.zst'"
t fail "pack --level 99" "'$G' pack --data '$W/mn' --level 99 --out '$W/l.tar.zst'"
t fail "pack --out /dev/full" "'$G' pack --data '$W/mn' --blocks $b1 --level 1 --out /dev/full"
t fail "pack --data (junk block)" "'$G' pack --data '$W/mnj' --level 1 --out '$W/j.tar.zst'"
# db
t fail "db init --data (nonexistent)" "'$G' db init --data /nonexistent --out '$W/d1'"
t fail "db init --out (a regular file)" "'$G' db init --data '$C' --out /etc/passwd"
t fail "db init --data (balance edited)" "'$G' db init --data '$W/bal1' --out '$W/d2'"
t fail "db init --data (storage_fill 100M)" "'$G' db init --data '$W/fill' --out '$W/d3'"
t fail "db verify (nonexistent)" "'$G' db verify /nonexistent"
t fail "db verify (empty directory)" "'$G' db verify '$W/empty'"
mkdir -p "$W/fakedb" && head -c 65536 /dev/urandom > "$W/fakedb/mdbx.dat"
t fail "db verify (random mdbx.dat)" "'$G' db verify '$W/fakedb'"
t fail "db verify > /dev/full" "'$G' db verify '$W/db' > /dev/full"
t pipe "db verify | head -1" "'$G' db verify '$W/db' | head -1; exit \${PIPESTATUS[0]}"
t fail "run --state disk with another chain's store" "'$G' run --data '$W/mn' --state disk --db '$W/db'"
"$G" gen sstore-bloated --slots 3000000 --blocks 1 --block-gas 3M --senders 4 --out "$W/big" >/dev/null 2>&1
t ok "db init SIGKILL mid-write, rerun, db verify" "('$G' db init --data '$W/big' --out '$W/dk' >/dev/null 2>&1 & p=\$!; sleep 3; kill -9 \$p; wait \$p; [ ! -e '$W/dk' ] || '$G' db verify '$W/dk' >/dev/null || { echo 'error: a partial store left at --out' >&2; exit 1; }; rm -rf '$W/dk'; '$G' db init --data '$W/big' --out '$W/dk' >/dev/null && '$G' db verify '$W/dk' >/dev/null) || { echo 'LOSS' >&2; exit 1; }"
# export
t fail "export --data (nonexistent)" "'$G' export --data /nonexistent --out '$W/e1'"
t fail "export --data (mainnet layout)" "'$G' export --data '$W/mn' --out '$W/e2'"
t fail "export --format junk" "'$G' export --data '$C' --format junk --out '$W/e3'"
t fail "export --out (a regular file)" "'$G' export --data '$C' --out /etc/passwd"
t fail "export --data (balance edited)" "'$G' export --data '$W/bal1' --out '$W/e4'"
# peers and differential: hanging children
t fail "peers --data (nonexistent)" "'$G' peers --data /nonexistent"
t fail "peers --repeats 0" "'$G' peers --data '$C' --repeats 0"
t fail "peers --timeout 0" "'$G' peers --data '$C' --timeout 0"
t fail "peers --peers '<x>'" "'$G' peers --data '$C' --peers '<x>'"
t fail "peers with an evm that hangs (--timeout 3)" "GIGAGAS_GETH_EVM='$W/hang-evm' '$G' peers --data '$C' --peers geth-blocktest --timeout 3 --repeats 1 --warmup 0"
t fail "differential --fork junk" "'$G' differential --fork junk"
t fail "differential --workload transfers --block-gas 1e308" "'$G' differential --workload transfers --block-gas 1e308"
t fail "differential with an evm that hangs (GIGAGAS_T8N_TIMEOUT=3)" "GIGAGAS_GETH_EVM='$W/hang-evm' GIGAGAS_T8N_TIMEOUT=3 '$G' differential --fork prague"
t fail "differential with GIGAGAS_GETH_EVM=/dev/null" "GIGAGAS_GETH_EVM=/dev/null '$G' differential --fork prague"
# fetch and inject: lying and silent nodes
t fail "fetch --rpc junk://" "'$G' fetch --rpc 'junk://x' --from 1 --to 1 --out '$W/f1'"
t fail "fetch --rpc (closed port)" "'$G' fetch --rpc http://127.0.0.1:1 --from 1 --to 1 --out '$W/f2' --retries 0"
t fail "fetch --from 5 --to 1" "'$G' fetch --rpc http://127.0.0.1:1 --from 5 --to 1 --out '$W/f3'"
t fail "fetch --to 999999999" "'$G' fetch --rpc http://127.0.0.1:1 --from 1 --to 999999999 --out '$W/f4'"
t fail "fetch --genesis /dev/zero" "'$G' fetch --rpc http://127.0.0.1:1 --from 1 --to 1 --genesis /dev/zero --out '$W/f5'"
t fail "fetch: node never answers" "'$G' fetch --rpc http://127.0.0.1:$SILENT_PORT --from 1 --to 1 --out '$W/f6' --timeout 2 --retries 1"
t fail "fetch: node answers garbage with ESC" "'$G' fetch --rpc http://127.0.0.1:$GARBAGE_PORT --from 1 --to 1 --out '$W/f7' --timeout 2 --retries 1"
t fail "fetch: node answers a string with ESC and <script>" "'$G' fetch --rpc http://127.0.0.1:$LYING_PORT --from 1 --to 1 --out '$W/f8' --timeout 2 --retries 1"
t fail "fetch --jobs 0" "'$G' fetch --rpc http://127.0.0.1:1 --from 1 --to 1 --jobs 0 --out '$W/f9'"
t fail "inject: node never answers" "'$G' inject --rpc http://127.0.0.1:$SILENT_PORT --workload transfers --txs 1 --timeout 2 --retries 0"
t fail "inject --txs 0" "'$G' inject --rpc http://127.0.0.1:1 --workload transfers --txs 0"
t fail "inject --max-fee-gwei 1e308" "'$G' inject --rpc http://127.0.0.1:1 --workload transfers --txs 1 --max-fee-gwei 1e308"
# bench
t fail "bench --threads 0" "'$G' bench --threads 0"
t fail "bench --repeats 0" "'$G' bench --repeats 0"
t fail "bench --data (nonexistent)" "'$G' bench --data /nonexistent"
t fail "bench --json (parent missing)" "'$G' bench --json /nonexistent/x.json"
t fail "bench --workload '<x>'" "'$G' bench --workload '<x>'"
t fail "bench --data (balance edited)" "'$G' bench --data '$W/bal1' --repeats 1"
# completions and the top level
t fail "completions junk" "'$G' completions junk"
t pipe "completions bash | head -1" "'$G' completions bash | head -1; exit \${PIPESTATUS[0]}"
t fail "completions bash > /dev/full" "'$G' completions bash > /dev/full"
t fail "unknown subcommand with ESC" "'$G' \$'\\e[2Jrm'"
t pipe "--help | head -1" "'$G' --help | head -1; exit \${PIPESTATUS[0]}"

# ---- hostile trial 3's classes (issue 42), each with cases beside its example ----------
# The store never follows a symlink it did not create; a changed victim file exits 0 with a
# message, so that a `fail` expectation classes it (SILENT; the label says it was destroyed).
for f in mdbx.dat mdbx.lck; do
  rm -rf "$W/dbs-$f" && cp -r "$W/db" "$W/dbs-$f" && rm -f "$W/dbs-$f/$f"
  printf 'the user'"'"'s own file\n%.0s' $(seq 200) > "$W/victim" && cp "$W/victim" "$W/victim.orig"
  ln -s "$W/victim" "$W/dbs-$f/$f"
  t fail "db verify with $f a symlink to a user file" "'$G' db verify '$W/dbs-$f'; rc=\$?; cmp -s '$W/victim' '$W/victim.orig' || { echo 'error: the symlinked file was changed (SECURITY)' >&2; exit 0; }; exit \$rc"
  t fail "run --state disk with $f a symlink" "'$G' run --data '$C' --state disk --db '$W/dbs-$f'; rc=\$?; cmp -s '$W/victim' '$W/victim.orig' || { echo 'error: the symlinked file was changed (SECURITY)' >&2; exit 0; }; exit \$rc"
done
rm -rf "$W/dbl" && ln -s "$W/db" "$W/dbl"
t fail "db verify on a symlinked store directory" "'$G' db verify '$W/dbl'"
# Two writers: the first holds writer.lock (flock), as a running `run --state disk` does.
rm -rf "$W/db2w" && cp -r "$W/db" "$W/db2w"
t fail "run --state disk while another process holds the store" "flock '$W/db2w/writer.lock' sleep 20 & sleep 0.5; '$G' run --data '$C' --state disk --db '$W/db2w'; rc=\$?; kill %1; exit \$rc"
t fail "db verify while another process holds the store" "flock '$W/db2w/writer.lock' sleep 20 & sleep 0.5; '$G' db verify '$W/db2w'; rc=\$?; kill %1; exit \$rc"
# A truncated data file is refused unchanged (verify used to re-initialise it).
for len in 100 8192 16384; do
  rm -rf "$W/dbt" && cp -r "$W/db" "$W/dbt" && truncate -s "$len" "$W/dbt/mdbx.dat"
  t fail "db verify with mdbx.dat truncated to $len bytes (must stay $len)" "'$G' db verify '$W/dbt'; rc=\$?; [ \$(stat -c %s '$W/dbt/mdbx.dat') = $len ] || { echo 'error: the truncated file was rewritten' >&2; exit 0; }; exit \$rc"
done
# The environment is input too.
t fail "run with RAYON_NUM_THREADS=100000" "RAYON_NUM_THREADS=100000 '$G' run --data '$C'"
t fail "run with RAYON_NUM_THREADS=3000" "RAYON_NUM_THREADS=3000 '$G' run --data '$C'"
t fail "run with RAYON_NUM_THREADS=lots" "RAYON_NUM_THREADS=lots '$G' run --data '$C'"
t ok "db verify under ulimit -v 1 TiB" "ulimit -v 1073741824; '$G' db verify '$W/db'"
t ok "db verify under ulimit -v 4 GiB" "ulimit -v 4194304; '$G' db verify '$W/db'"
t fail "db verify under ulimit -v 400 MiB (named, with the numbers)" "ulimit -v 409600; '$G' db verify '$W/db'"
t ok "run --state disk under ulimit -v 4 GiB" "rm -rf '$W/dbu'; ulimit -v 4194304; '$G' run --data '$C' --state disk --db '$W/dbu'"
# Listed is not bounded: the contention floor's private copies at 64 threads.
t any "bench --contention-floor --threads 64 (bounded or refused)" "'$G' bench --data '$C' --contention-floor --threads 64 --repeats 1 --warmup 0"
# Result files that contradict themselves.
edit "$W/b.json" '[r.__setitem__("threads",0) for r in d["runs"]]' "$W/c1.json"
t fail "report threads = 0" "'$G' report '$W/c1.json' --out '$W/c1.html'"
edit "$W/b.json" '[r.__setitem__("mega",0) for r in d["runs"]]' "$W/c2.json"
t fail "report mega = 0" "'$G' report '$W/c2.json' --out '$W/c2.html'"
edit "$W/b.json" 'd["machine"]["cores"]=0' "$W/c3.json"
t fail "report machine.cores = 0" "'$G' report '$W/c3.json' --out '$W/c3.html'"
edit "$W/b.json" '[r.__setitem__("block_ns",[1]) for r in d["runs"]]' "$W/c4.json"
t fail "report block_ns with 1 entry" "'$G' report '$W/c4.json' --out '$W/c4.html'"
edit "$W/b.json" '[r.__setitem__("block_ns",[1]*10000) for r in d["runs"]]' "$W/c5.json"
t fail "report block_ns with 10,000 entries" "'$G' report '$W/c5.json' --out '$W/c5.html'"
edit "$W/b.json" '[r.__setitem__("mode","banana") for r in d["runs"]]' "$W/c6.json"
t fail "report mode = banana" "'$G' report '$W/c6.json' --out '$W/c6.html'"
edit "$W/b.json" '[r.__setitem__("median_ns",1) for r in d["runs"]]' "$W/c7.json"
t fail "report median 1 ns beside its repeats" "'$G' report '$W/c7.json' --out '$W/c7.html'"
t fail "simulate threads = 0" "'$G' simulate '$W/c1.json'"
t fail "simulate mode = banana" "'$G' simulate '$W/c6.json'"
t fail "compare with cores = 0" "'$G' compare '$W/b.json' '$W/c3.json'"
t fail "bench --data X,X (the same data set twice)" "'$G' bench --data '$C' --data '$C' --repeats 1 --warmup 0"
t fail "bal stats --data X --data X" "'$G' bal stats --data '$C' --data '$C'"
t fail "report /dev/zero with the size limit raised" "GIGAGAS_MAX_RESULT_BYTES=100000000000 '$G' report /dev/zero --out '$W/z.html'"
t fail "report a FIFO" "'$G' report '$W/fifo' --out '$W/zf.html'"
# Parts of an input ignored: bytes or a second zstd frame after an archive's frame.
cp "$W/sample.tar.zst" "$W/trail.tar.zst" && printf 'trailing junk' >> "$W/trail.tar.zst"
t fail "run --data (archive + trailing bytes)" "'$G' run --data '$W/trail.tar.zst'"
cat "$W/sample.tar.zst" "$W/sample.tar.zst" > "$W/twice.tar.zst"
t fail "run --data (archive + a second zstd frame)" "'$G' run --data '$W/twice.tar.zst'"
# ---- the table --------------------------------------------------------------------------
{
  echo "| class | count |"
  echo "|---|---|"
  for c in OK PANIC LOSS HANG OOM SILENT UNCLEAR SECURITY; do echo "| $c | ${count[$c]} |"; done
  echo "| **total** | $n |"
  echo
  echo "| # | class | status | s | max RSS MiB | input | message (first error line, cut at 160) |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
} > "$table"
