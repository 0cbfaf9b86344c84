#!/usr/bin/env bash
# Writes docs/results/README.md, the index of the measured results: one table row per file in
# docs/results/ (every file: a new one gets a row without anyone editing the index), with what
# it shows (an .md's first heading; a .txt's first comment line that is not a command, else its
# first line; a .json/.png: the file of the same name it belongs to) and the command that
# produced it (the list below; a file missing from it gets "see the file" and a warning).
#
#   scripts/results-index.sh           rewrite docs/results/README.md
#   scripts/results-index.sh --check   exit 1 when docs/results/README.md is not what it would write
set -euo pipefail
export LC_ALL=C.UTF-8
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/docs/results"
index="$dir/README.md"

# file<TAB>command (Markdown; `|` written `\|` so table cells do not split).
commands() {
  cat <<'EOF'
lto-abba-2core.txt	`CARGO_PROFILE_RELEASE_LTO=false cargo build --release` into another target dir, then `OUT=/tmp/abba-lto scripts/abba.sh LTO NOLTO 2 --threads 1,2 --repeats 5 --warmup 1` (issue 30: the test profile drops LTO, the binary keeps it)
shared-deps-abba-2core.txt	B built from a worktree with `[profile.release]` lto = false, codegen-units = 1 and `[profile.release.package."*"]` codegen-units = 16 into another target dir, then `OUT=/tmp/abba-deps scripts/abba.sh THINLTO B 2 --threads 1,2 --repeats 5 --warmup 1` (issue 43: one profile for the binary and the tests)
one-run-path-abba-2core.txt	`OUT=/tmp/abba31 scripts/abba.sh BEFORE target/release/gigagas 2 --threads 1,2 --scheduler ordered,gas-used --repeats 3 --warmup 1` (issue 31: the refactor against the build before it)
bal-builder-cost-2core.txt	`gigagas bench --sequential-without-bal --threads 1 --scheduler ordered --repeats 10 --warmup 1` (bundled sample), then `--data /tmp/balgen/erc20,/tmp/balgen/mainnet-mix,/tmp/balgen/uniswap … --repeats 5`; quiet machine
bal-stats-tables.md	`gigagas gen erc20\|uniswap\|mainnet-mix --block-gas 300M --blocks 3 --out /tmp/balgen/W`, then `gigagas bal stats --data /tmp/balgen/mainnet-mix,/tmp/balgen/erc20,/tmp/balgen/uniswap,../shared/data/mainnet --markdown --json /tmp/bal-stats.json`
bal-variants-2core.md	`gigagas bal stats …`, `gigagas bench --sequential-without-bal …` and `gigagas bench … --state disk --cache warm,cold --bal full,keys,writes,none` (the rows around it; summary and reading in the file)
bal-variants-disk-2core.txt	`gigagas bench --data /tmp/balgen/mainnet-mix,/tmp/balgen/erc20,/tmp/balgen/uniswap,/tmp/balgen/hot1m,/tmp/balgen/prefetch-cold --state disk --root incremental --pipeline off --cache warm,cold --bal full,keys,writes,none --threads 1,2 --scheduler ordered --repeats 3 --warmup 1 --sequential-without-bal --markdown` (raw output behind `bal-variants-2core.md` § 3)
eest-bal-differential-geth-1.17.10.txt	`scripts/install-geth-evm.sh && gigagas differential --workload eest-bal --block-gas 30M` (and `--fork osaka`, `--block-gas 300M`)
eest-bal-shapes-2core.md	`gigagas bench --workload eest-bal --block-gas 30M,300M --blocks 2 --threads 1,2 --scheduler ordered --repeats 3 --warmup 1 --contention-floor --root parallel --pipeline on`, the 10-repeat reruns, `--state disk --cache warm,cold --bal keys,writes` and `gigagas bal stats` on the generated shapes (commands in the file)
hot-account-10gb-2core.md	`gigagas gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M --slots 75000000 --blocks 2`, `db init`, `run --state disk --cold --threads 1|2` on copies, `db verify` (75M end to end; earlier: `cargo run --release -p gigagas-store --example load_genesis -- SLOTS DIR`; commands in the file)
scaling-16core.md	`BIN=… CHAINS=… scripts/measure-scaling.sh OUT 1,2,4,8,16` on a lent 16-core machine (bundled mainnet blocks vs `simulate`, generated 300M blocks, 10M hot vs --spread at 1 and 16 threads)
scaling-16core.txt	`scripts/measure-scaling.sh OUT 1,2,4,8,16` (raw output behind `scaling-16core.md`)
hot-account-cold-index-2core.md	`scripts/measure-cold-index.sh WORK 75000000 6` and `… 10000000 6` (cold reads, index cached and dropped), `gigagas peers --data CHAIN-10M --peers gigagas-disk,gigagas-disk-cold,geth-import --repeats 2 --warmup 0`
hot-account-goals-2core.md	`scripts/measure-hot-goals.sh CHAIN-10M DB-10M OUT` and `… CHAIN-75M DB-75M OUT` (warm and cold, before and now, 1 and 2 threads), `MODES="cold-now cold-before" …` (75M cold again, alone), `A_FLAGS="--wal off" B_FLAGS="" scripts/measure-trie-buffer.sh WORK 2000000 6 2`
hot-account-10m-peers-2core.md	`scripts/measure-hot-tables.sh WORK 10000000 3 2` and `… 75000000 3 1` (10M, 75M: cold/warm/no buffer/memory), `scripts/measure-trie-buffer.sh WORK 2000000 30 2` (the buffer over 30 blocks), `gigagas peers --data CHAIN-1M --peers gigagas-disk,gigagas-disk-cold,geth-import --repeats 3 --warmup 0` (geth beside gigagas on MDBX)
trie-journal-2core.md	`BIN=… ONLY="warm1 warm2 warm2-flush warm2-nobuf" scripts/measure-hot-tables.sh WORK 75000000 3 2` (75M warm: journal, end flush, no buffer), `… ONLY="cold1 cold1-buf cold2 cold2-buf" … 75000000 3 1` twice (75M cold with and without a buffer), `… scripts/measure-hot-tables.sh WORK 10000000 3 1` (10M, every configuration) and `BIN=… A_FLAGS="--trie-journal off" B_FLAGS="--trie-journal on" scripts/measure-trie-buffer.sh WORK 2000000 6 2` (2M A-B-B-A); resume: `run` of a 6-block chain then of its 30-block extension on one store, `db verify`
trie-buffer-2m-2core.md	`gigagas gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M --slots 2000000 --blocks 6`, `db init`, then `BIN=target/release/gigagas scripts/measure-trie-buffer.sh WORK 2000000 6 2` (A-B-B-A: `--trie-buffer 0` vs the default buffer, one in-memory run per round, db verify after each run); kill tests: `cargo test -p gigagas-cli --release --test it kill_and_resume` (measured with the former `test-release` profile, the release profile without LTO)
overlay-10m-2core.txt	`scripts/measure-overlay.sh WORK 10000000 24 2` (gen and db init the 10M hot chain of 24 blocks, then run --overlay on/off A-B-B-A with every second round reversed, db verify after each run)
hot-spread-sync-10m-2core.txt	`scripts/measure-hot-sync.sh WORK 10000000 6 2` (hot vs --spread, cold/warm, 1/2 threads, then --sync every-block|every-3|end; root: drops the page cache)
bench-inline-recovery-2core.txt	`gigagas bench --recover-senders pre,inline --repeats 5`
bench-mainnet-2core.json	`gigagas bench --repeats 10 --json docs/results/bench-mainnet-2core.json` (the JSON of `bench-mainnet-2core.txt`)
bench-mainnet-2core.txt	`gigagas bench --repeats 10 --json docs/results/bench-mainnet-2core.json`
bench-mainnet-mix-2core.txt	`gigagas bench --data target/workloads/mix50 --threads 1,2 --repeats 3` (cost model on mainnet-mix: R² 0.04 — 50 near-identical blocks leave nothing for the model to explain)
compare-aa-2core.txt	a second identical bench minutes later (`--json docs/results/bench-mainnet-2core-rerun.json`), then `gigagas compare docs/results/bench-mainnet-2core.json docs/results/bench-mainnet-2core-rerun.json` — an A/A test. It reports two false "faster" verdicts (sequential +27.6 %, 2t/ordered +15.1 %): on this VM the drift *between* runs is larger than the noise *within* a run that the bootstrap sees, so comparisons of separately taken runs should pool A-B-B-A runs: `scripts/abba.sh BIN_A BIN_B ROUNDS [bench args]` runs `bench` in that order and calls `gigagas compare A1,A2 B1,B2`, which joins each side's repeats so drift widens both intervals instead of biasing one side
compare-abba-aa-2core.txt	`OUT=/tmp/abba-aa scripts/abba.sh target/release/gigagas target/release/gigagas 1 --threads 1,2 --scheduler ordered,gas-used --repeats 5` — the A/A test with A-B-B-A pooling: all five configurations "no change"
conformance-disk-2core.md	`gigagas conformance ../shared/data/ethereum-tests/BlockchainTests --state disk --json conformance-disk.json`
conformance-exceptions-2core.txt	`gigagas conformance ../shared/data/ethereum-tests/BlockchainTests` (issue 42: every invalid block checked for its expected exception)
conformance-full-2core.txt	`gigagas conformance ../shared/data/ethereum-tests/BlockchainTests --json conformance.json` (and `--mode sequential`, `--mode parallel`; summary lines at the end)
conformance-mutations-2core.txt	`gigagas conformance ../shared/data/ethereum-tests/BlockchainTests --mutations 1` (one BAL mutant of each kind per valid block)
contention-floor-2core.md	`gigagas bench --threads 1,2 --scheduler ordered,gas-used --mega 1,10 --repeats 10 --contention-floor --json floor-bundled.json` on a quiet machine (and the generated-chain and perf commands in the file)
contention-floor-generated-2core.txt	`gigagas bench --workload mainnet-mix,erc20 --blocks 10 --block-gas 100M --threads 1,2 --scheduler ordered,gas-used --mega 1,10 --repeats 5 --contention-floor`
contention-floor-mainnet-2core.txt	`gigagas bench --threads 1,2 --scheduler ordered,gas-used --mega 1,10 --repeats 10 --contention-floor --json floor-bundled.json` (raw output behind `contention-floor-2core.md`)
contention-floor-medians-2core.txt	`gigagas bench --threads 1,2 --scheduler ordered,gas-used --mega 1,10 --repeats 10 --contention-floor`
contention-floor-warm-2core.txt	the runs of `contention-floor-2core.md`, section "After warm workers" (commands in that file)
dev-node-loop-2core.md	`crates/cli/tests/dev_node.rs` (now the `dev_node` module of `crates/cli/tests/it/`: `cargo test --release -p gigagas-cli --test it dev_node::`) 50 times with `yes > /dev/null` holding a core (loop in the file)
dev-node-2core.md	`scripts/geth-dev.sh /tmp/devnode 8545 &`, then `gigagas inject --rpc http://127.0.0.1:8545 --workload mainnet-mix --txs 1000 --seed 1 --fund-from-node --json inject.json`, `gigagas fetch --from A --to B --fork Osaka …`, `gigagas run --data DIR --mode sequential\|parallel` (inject → fetch → verify on geth 1.17.10 --dev)
differential-geth-1.17.10.txt	`scripts/install-geth-evm.sh && gigagas differential`
eip7928-scenarios.md	`gigagas differential --suite eip7928 --json out.json` (304 execution-specs scenarios, both paths and geth t8n)
hostile-inputs-cli.md	every hostile CLI input tried, before and after (release binary)
hostile-inputs-data.md	every hostile data input tried (block files, pre-states, archives, generated chains, fixtures), before and after; the fuzz properties in `crates/{data,conformance,lab}/tests/fuzz.rs`, `scripts/fuzz.sh`
hostile-pass-round3.md	`scripts/hostile-pass.sh target/release/gigagas docs/results/hostile-pass-round3.md` (issue 29, round 3: every subcommand with malformed, huge and hostile inputs, classed OK/PANIC/LOSS/HANG/OOM/SILENT/UNCLEAR/SECURITY; header and reading added by hand)
hostile-pass-writeback-2core.md	A helper's hostile pass on the release binary (SIGKILL loops, MDBX rolled back to its last steady commit with `mdbx_chk`, tmpfs full, `sync_file_range` failures injected with `strace -e inject` and an `LD_PRELOAD` shim, journal damage; its scripts under /tmp/hostile5; issue 40)
hostile-pass-simulate-2core.md	A helper's 205 hostile cases against `simulate` (crafted result files from genuine bench output, hostile files, absurd flags, closed stdout; issue 39): 13 defects, 11 fixed
node-16core-h200-2026-11-28.md	`HOT=.gpu/hot10m STEPS=info,pipeline,mdbx,mainnet,efshapes,run,hot BUDGET=450 scripts/device-gpu.sh .gpu/gg-B.gz` (run 1, `a36b759`), `STEPS=pipeline,mainnet PIPE_ROUNDS=2 PIPE_THREADS=4,8,16 scripts/device-ab.sh .gpu/gg-A.gz .gpu/gg-B.gz` (run 2: A `a36b759`, B `b8f2c52`) and `… PIPE_THREADS=8,16 … .gpu/gg-C.gz` (run 3: B `3cbde5e`, not kept) on lent nvidia-h200 machines; cold reads on the 2-core VM: per run a fresh copy of the 10M/75M store and `gigagas run --data CHAIN --state disk --db COPY --root incremental --threads 2 --pipeline off --cold [--trie-buffer 256M [--wal on]]`; B-tree shapes: `cargo run --release -p gigagas-store --example table_stats -- DBDIR` (issues 39, 40)
node-16core-h200-lease3.md	`SIGNATURES=200000 STEPS=check,pipeline,mdbx,mainnet,run PIPE_THREADS=1,2,4,8,16 scripts/device-gpu.sh .gpu/gg-B.gz` then `STEPS=pipeline,mainnet PIPE_ROUNDS=2 PIPE_THREADS=4,8,16 scripts/device-ab.sh .gpu/gg-A.gz .gpu/gg-B.gz` (runs 1 and A: A `20fcb13`, B `0d14dc9`), `PIPE_BLOCKS=12 PIPE_BLOCKS_BIG=4 STAGE_THREADS=0 STEPS=pipeline,mdbx scripts/device-gpu.sh …`, `bench --threads 1,2,4,8,16 --contention-floor` and the EF shapes (run 2), `PIPE_BLOCKS=12 PIPE_THREADS=8,16 scripts/device-ab.sh .gpu/gg-B.gz .gpu/gg-C.gz` (run 3: C `61dba7a`, not kept) on a lent nvidia-h200 machine; `gigagas simulate run1-pipeline.json --scheduler ordered` (issue 39)
node-16core-h200-lease3.tar.gz	the JSON of every run of \`node-16core-h200-lease3.md\` (\`run1-*\`, \`runA-*-N-A\|B.json\`, \`run2-*\`, \`run3-pipeline-N-A\|B.json\`, \`run2-topology.txt\`), per-transaction arrays emptied; \`tar xzf … -C DIR && gigagas simulate DIR/run1-pipeline.json --scheduler ordered\`
node-16core-h200-lease3.txt	the runs of `node-16core-h200-lease3.md` (raw output: each run's steps.log, the A-B compare tables, the contention floor, the topology)
pipeline-deps-2core.md	`scripts/replay-deps.py BENCH.json` on the H200 run 2 JSONs (`json.tar.gz` of `node-16core-h200-2026-11-28.md`: the 16-thread timelines replayed under the old and new stage dependencies, a prediction); `gigagas bench --data MM300 --threads 2 --scheduler ordered --root incremental --pipeline on --repeats 3 --warmup 1` A B B A × 2 (A = `20fcb13`, B = `3a708bf`), and `--stage-threads 0,1,2 --repeats 5` (issue 39)
pipeline-pool-2core-2026-11-28.md	`OUT=… scripts/abba.sh A B 2\|3 --data MM300 --threads 2 --scheduler ordered --root incremental --pipeline on --repeats 3 --warmup 1` (mainnet-mix 300M ×3; B = main, `exp/share-yield`, `exp/stage-pool-nice`); the simulator replayed on `node-16core-h200-2026-11-28-pipeline.tar.gz` with the binary before and after (`gigagas simulate FILE --scheduler ordered`) (issue 39)
node-16core-h200-2026-11-28-pipeline.tar.gz	the \`pipeline\` and \`mainnet\` steps' JSON of run 1 (\`run1-pipeline.json\`, \`run1-mainnet.json\`), the pipeline A-B rows of runs 2 and 3 (\`run2-pipeline-N-A\|B.json\`, \`run3-…\`) and one mainnet A-B file (\`run2-mainnet-2-B.json\`) from the lent nvidia-h200 runs, per-transaction arrays emptied; \`tar xzf … -C DIR && gigagas simulate DIR/run1-pipeline.json --scheduler ordered\`
node-16core-h200-2026-11-28.txt	the runs of `node-16core-h200-2026-11-28.md` (raw output: steps.log, run 1's all.txt and hot-account block lines, runs 2-3's `compare` tables)
write-ahead-log-2core.md	`gigagas gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M --slots 2000000 --blocks 6` (and `--blocks 30`, `--blocks 90`, `--slots 10000000`, `--slots 75000000`), `db init`, then `BIN=target/release/gigagas A_FLAGS="--wal off" B_FLAGS="" scripts/measure-trie-buffer.sh WORK 2000000 6 3` (30 blocks: `… 2000000 30 2`; 10M: `… 10000000 6 2`); 90 blocks: per run a fresh copy and `gigagas run --data CHAIN --state disk --db COPY --root incremental --threads 2 --wal on\|off [--trie-buffer 64M]`; tests `blocks_through_the_write_ahead_log_equal_blocks_applied_one_by_one`, `the_write_ahead_log_gives_the_same_store_and_the_store_moves_only_at_a_flush`, `kill_and_resume*` (issue 40)
write-groups-2core.md	`gigagas gen sstore-bloated --existing-slots --fork Osaka --block-gas 30M --slots 2000000 --blocks 30`, `db init`, then per run a fresh copy of the store and `gigagas run --data CHAIN --state disk --db COPY --root incremental --threads 2 --json F [--write-group 3]` (A-B-B-A × 2); the 6-block check: `scripts/measure-trie-buffer.sh WORK 2000000 6 2` with `A_BIN`/`B_BIN`; tests `write_groups_give_the_same_store_and_hold_blocks_until_their_group_commits`, `kill_and_resume_with_write_groups`; the prefetch beside the root: `scripts/measure-trie-buffer.sh WORK 2000000 6 3` with `A_BIN`/`B_BIN` (issue 40)
hostile-pass-round4.md	`scripts/hostile-pass.sh target/release/gigagas docs/results/hostile-pass-round4.md` (issue 42: round 3's inputs plus hostile trial 3's classes; header and reading added by hand)
hot-account-2core.md	`gigagas gen sstore-bloated --slots 1000000 [--spread] --blocks 3 --block-gas 30M --fork cancun --seed 1 --out DIR`, then `scripts/measure-hot.sh 3 /tmp/hot1m /tmp/spread1m` (root, prefetch, write, bytes read; 1/2 threads, warm/cold)
gpu-recovery.md	`cargo test -p gigagas-gpu --release` (the kernel compiled for the host against libsecp256k1), `gigagas gpu check --host`, `gigagas gpu bench --cpu-only --threads 1,2`; on the lent H200 machine: `GPU_REQUIRED=1 BUDGET=300 scripts/device-gpu.sh .gpu/gigagas.gz` (three runs; `gpu check --signatures 1000000`, `gpu bench`, `bench --recovery cpu,auto` on mainnet-mix 300M/1G, MDBX and the mainnet sample; commands in the file)
incremental-root.md	`cargo run --release -p gigagas-trie --example incremental_root -- 1000000 4200 21`
mega-mainnet-mix-2core.txt	`gigagas bench --workload mainnet-mix --block-gas 30M --blocks 50 --mega 1,10,50 --threads 1,2 --scheduler ordered,gas-used --repeats 3 --json mega-mix.json --markdown`
mega-mainnet-sample-2core.txt	`gigagas bench --mega 1,2 --threads 1,2 --repeats 5 --json mega-mainnet.json --markdown` (the bundled sample's three runs of consecutive blocks, each crossing a fork)
newcomer.md	a fresh clone without `../shared`, then the README's two commands under `/usr/bin/time -v` (the first with `--timings`)
one-thread-2core.md	`scripts/abba.sh /tmp/gigagas-base /tmp/gigagas-new 2 --threads 1,2 --scheduler ordered,gas-used --mega 1,10 --repeats 5` and the others in the file
padding-abba-2core.txt	issue-15 experiment: cache-padded cursor/abort/result slots, `scripts/abba.sh UNPADDED PADDED 3 --threads 1,2 --scheduler ordered,gas-used --repeats 5` (not kept: no change)
peers-2core.md	`gigagas gen mainnet-mix --fork Prague --blocks 5 --block-gas 30M --out /tmp/mix`, then `gigagas peers --data /tmp/mix --repeats 7 --warmup 1 --json peers-mix.json` (geth `evm` and `geth` 1.17.10, `revme` 43.0.3 installed by the scripts; docs/peers.md)
peers-dev-node-2core.json	the `--json` of `peers-dev-node-2core.md` (10 KB)
peers-dev-node-2core.md	`GETH_DEV_CHAIN_ID=1 scripts/geth-dev.sh /tmp/dpr/node 18645 &`, `gigagas inject --rpc http://127.0.0.1:18645 --workload mainnet-mix --txs 1000 --seed 1 --fund-from-node --json inject.json`, `gigagas fetch --rpc http://127.0.0.1:18645 --from 1 --to 305 --genesis /tmp/dpr/node/genesis-osaka.json --out chain`, `gigagas peers --data chain --repeats 7 --warmup 1 --require-all --json peers.json` (inject → fetch → verify → peers on a dev node's chain)
pipeline-sim-back-to-back-2core.md	`gigagas bench --data mm300 --threads 1,2 --root incremental --pipeline on,off --repeats 3 --warmup 1 --scheduler ordered --json pipe-onoff.json`, then `gigagas simulate pipe-onoff.json --scheduler ordered` (issue 39: the overlapped pipeline predicted from back-to-back stages)
pipeline-spec-2core.md	`gigagas gen bal-mixed-graph --group 2 --density max --block-gas 300M --blocks 2`, then `gigagas bench --threads 2 --scheduler ordered --repeats 3 --warmup 1 --json F` with the old and new binaries interleaved (A B B A; issue 39: the work around execution, the run spec's refusals; sections 4 and 5: the allocator and the commit while the block executes, `--root incremental --pipeline on`, A B B A × 3 each)
pipeline-16core-h200.md	`GPU_REQUIRED=1 BUDGET=300 scripts/device-gpu.sh .gpu/gigagas.gz` on the lent 16-core H200 machine (issue 39: the pipeline at 4/8/16 threads on mainnet-mix 300M and 1G, MDBX durable every 3, the mainnet sample, the dense EF shapes; `gigagas simulate pipeline.json`); `scripts/abba.sh` on 2 cores; the commit in lanes: `scripts/device-ab.sh A B` (A-B-B-A of two binaries) on the lent machine
commit-lanes-16core-h200.txt	`scripts/device-ab.sh .gpu/gg-A.gz .gpu/gg-B.gz` on the lent 16-core H200 machine (runs 5-8 of `pipeline-16core-h200.md`: the dense EF shapes and mainnet-mix 300M A-B-B-A, the contention floor)
pipeline-2core.md	`gigagas run --data CHAIN --threads 2 --scheduler gas-used --root none\|serial\|parallel\|incremental --pipeline on\|off`, A-B-B-A; the third run `gigagas bench --root … --pipeline …` (in the file)
provider-abba-2core.txt	`scripts/abba.sh /tmp/gigagas-before target/release/gigagas 2 --threads 1 --repeats 5` (then 3 rounds): the state-provider generics and the one worker loop against the build before them, quiet machine
report-mainnet-2core.png	`gigagas report docs/results/bench-mainnet-2core.json --out /tmp/report.html`, then `chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=/tmp/chr --hide-scrollbars --window-size=1000,3400 --screenshot=docs/results/report-mainnet-2core.png file:///tmp/report.html` (Debian `chromium`)
report-sweep-2core.png	`gigagas report sweep.json --out /tmp/sweep.html` (sweep.json from `sweep-workloads-2core.txt`) and the chromium command of `report-mainnet-2core.png` with `--window-size=1000,1000` (top of the page: sweep summary and throughput vs block gas per workload)
simulate-mainnet-2core.txt	`gigagas simulate docs/results/bench-mainnet-2core.json`
simulate-mega-2core.txt	`gigagas simulate mega-mix.json --threads 1,2,16 --mega 1,10,50` and `gigagas simulate mega-mainnet.json --threads 1,2,16 --mega 1,2` (the JSON of `mega-mainnet-mix-2core.txt` and `mega-mainnet-sample-2core.txt`)
small-block-threshold-2core.md	`gigagas bench --workload transfers --block-gas 21000,…,2688000 …` and the A-B-B-A runs (in the file)
sstore-bloated-gen-2core.md	`/usr/bin/time -v gigagas gen sstore-bloated --slots 1000000\|10000000 [--spread] --blocks 2 --block-gas 30M --fork cancun --out DIR`, then `/usr/bin/time -v gigagas db init --data DIR --out DIR.db`
state-disk-2core.md	`gigagas gen mainnet-mix --blocks 10 --block-gas 300M --seed 1 --out /tmp/p-mainnet-mix`, then `scripts/measure-state.sh /tmp/p-mainnet-mix 3 2` (pure vs end to end: roots, state in memory or on disk, cold, pipeline on/off)
store-2core.md	`gigagas gen mainnet-mix --blocks 40 --block-gas 30M --seed 1 --out mix40`, `gigagas gen sstore-bloated --blocks 5 --block-gas 30M --senders 100000 --out bloat`, `gigagas db init …`, `gigagas db verify …` (in the file)
sweep-workloads-2core.txt	`gigagas bench --workload erc20,uniswap,keccak --block-gas 10M,30M,100M --blocks 2 --threads 1,2 --scheduler ordered,gas-used --mega 1,2 --repeats 2 --json sweep.json`
warm-workers-2core.md	`scripts/abba.sh A B 2 --threads 1,2 --scheduler ordered,gas-used --mega 1,10 --repeats 10` and the others in the file
workloads-2core.md	`scripts/measure-workloads.sh 3 30M,300M 1,2`; `scripts/measure-workloads.sh 1 1G 1,2`; `WORKLOADS="precompile:ecrecover precompile:modexp precompile:point-evaluation" scripts/measure-workloads.sh 1 300M 1,2`; `gigagas gen transfers --blocks 2 --block-gas 1G --out target/workloads/transfers-1G`
EOF
}

# What a file shows: one line, `|` escaped, at most 200 characters.
summary() {
  local f="$1" name stem line=""
  name="$(basename "$f")"
  stem="${name%.*}"
  case "$name" in
    *.md) line="$(grep -m1 '^# ' "$f" | sed 's/^# //')" ;;
    *.txt)
      # The first comment line (within the first 12) that is not the command (those are in the
      # command column), else the first output line that is not part of a drawn table, else
      # the first comment line after all.
      line="$(awk '
        NR > 12 && fb != "" { exit }
        /^# / {
          l = substr($0, 3)
          if (first == "") first = l
          if (l ~ /^command:/ || (l ~ /^(gigagas |scripts\/|OUT=)/ && l ~ / --/)) next
          found = l; exit
        }
        /^#/ || /^[[:space:]]*$/ { next }
        /^(┌|│|╞|├|└|╘|╒|═)/ { next }
        fb == "" { fb = $0 }
        END { print (found != "" ? found : fb != "" ? fb : first) }
      ' "$f")" ;;
    *.json) line="the JSON result behind \`$(ls "$dir" | grep -m1 -x -e "$stem.md" -e "$stem.txt" || echo "$stem")\`" ;;
    *.png) line="screenshot of the HTML report (\`gigagas report\`)" ;;
    *.tar.gz) line="the bench JSON files behind \`${stem%-*}.md\` (per-transaction arrays \`blocks[].tx\` emptied to keep them small)" ;;
    *) line="" ;;
  esac
  if [ "${#line}" -gt 200 ]; then line="${line:0:197}…"; fi
  line="${line//|/\\|}"
  line="${line//</\&lt;}"
  line="${line//>/\&gt;}"
  printf '%s' "$line"
}

render() {
  local table f name cmd missing=()
  table="$(commands)"
  cat <<'EOF'
# Measured results

<!-- Generated by scripts/results-index.sh: edit that script (its command list), not this file. -->

Each file records its own machine, date and load; most were taken on the development machine
(a shared 2-core AMD EPYC VM). Absolute times belong to that machine and moment only: compare
ratios within one run. Most JSON results are not committed (about 2 MB each); the commands
regenerate them. `gigagas` = `cargo run --release --bin gigagas --`. Table labels are defined
in [docs/glossary.md](../glossary.md).

| file | what it shows | command |
|---|---|---|
EOF
  for f in "$dir"/*; do
    name="$(basename "$f")"
    [ "$name" = README.md ] && continue
    cmd="$(printf '%s\n' "$table" | awk -F'\t' -v n="$name" '$1 == n { print $2; exit }')"
    if [ -z "$cmd" ]; then
      cmd="see the file"
      missing+=("$name")
    fi
    printf '| [`%s`](%s) | %s | %s |\n' "$name" "$name" "$(summary "$f")" "$cmd"
  done
  for name in "${missing[@]}"; do
    echo "results-index: no command listed for $name: add it to scripts/results-index.sh" >&2
  done
}

if [ "${1:-}" = --check ]; then
  if ! diff -u "$index" <(render) >&2; then
    echo "results-index: $index is stale: run scripts/results-index.sh" >&2
    exit 1
  fi
  exit 0
fi
tmp="$(mktemp)"
render > "$tmp"
cat "$tmp" > "$index"
rm -f "$tmp"
echo "wrote $index ($(grep -c '^| \[' "$index") files)"
