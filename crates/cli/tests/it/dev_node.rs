//! A real node: go-ethereum v1.17.10 in `--dev` mode on 127.0.0.1 (started by
//! `scripts/geth-dev.sh`: Osaka from block 0, a temporary data directory, a port geth picks).
//! `gigagas inject` sends a workload, `gigagas fetch` pulls the blocks that hold it, and
//! `gigagas run --data` verifies them sequentially and in parallel; a fetch from a node
//! killed mid-way fails cleanly; and `gigagas fetch --genesis` makes a node's chain (chain id
//! 1, from block 1) a complete-state chain that `run` verifies with state roots and `peers`
//! hands to the other engines. The node is always stopped: [`DevNode`]'s `Drop` kills it
//! and waits for it, also when an assertion fails.
//!
//! Needs geth (`scripts/install-geth.sh`); without it these tests are ignored (a build error
//! under `CI`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

/// The geth binary the build probe found (same lookup as `tools/test-probe.rs`).
fn geth_path() -> PathBuf {
    if let Some(p) = std::env::var_os("GIGAGAS_GETH") {
        return p.into();
    }
    std::env::var_os("GIGAGAS_TOOLS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gigagas")))
        .unwrap_or_else(|| PathBuf::from(".cache/gigagas"))
        .join("geth-v1.17.10/geth")
}

/// A `geth --dev` process; killed and waited for when dropped.
struct DevNode {
    child: Option<Child>,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// Longest wait for geth to start answering. A cold start on a loaded 2-core machine takes a
/// few seconds; this bounds a node that never comes up.
const START_DEADLINE: Duration = Duration::from_secs(120);

/// `--wait` of every `inject`: how long a phase's transactions may take to be included after
/// the last send. geth --dev mines on arrival (well under a second here); generous for a
/// loaded machine, bounded for a node that stopped mining.
const INCLUSION_WAIT: &str = "300";

impl DevNode {
    /// Starts geth with a fresh data directory and waits (at most [`START_DEADLINE`]) until it
    /// answers `eth_blockNumber`.
    fn start() -> Self {
        Self::start_with_chain_id(None)
    }

    /// As [`Self::start`], with `GETH_DEV_CHAIN_ID` (the script's default is 1337).
    ///
    /// geth picks its own HTTP port (`--http.port 0`) and the test reads it from geth's log
    /// ("HTTP server started endpoint=127.0.0.1:PORT"): a port chosen by the test and handed
    /// to geth could be taken by another test's node in between.
    fn start_with_chain_id(chain_id: Option<u64>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("geth.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/geth-dev.sh");
        let log_file = std::fs::File::create(&log).unwrap();
        let mut command = Command::new("bash");
        if let Some(id) = chain_id {
            command.env("GETH_DEV_CHAIN_ID", id.to_string());
        }
        let child = command
            .arg(script)
            .arg(dir.path().join("data"))
            .arg("0")
            .env("GETH", geth_path())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .expect("start scripts/geth-dev.sh");
        let mut node = Self {
            child: Some(child),
            url: String::new(),
            log,
            _dir: dir,
        };
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if node.url.is_empty() {
                if let Some(endpoint) = node.http_endpoint() {
                    node.url = format!("http://{endpoint}/");
                }
            }
            if !node.url.is_empty() && node.rpc("eth_blockNumber", "[]").is_some() {
                return node;
            }
            if let Some(status) = node.child.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "geth exited ({status}) before answering:\n{}",
                    node.log_tail()
                );
            }
            assert!(
                Instant::now() < deadline,
                "geth did not answer within {} s:\n{}",
                START_DEADLINE.as_secs(),
                node.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `127.0.0.1:PORT` from geth's "HTTP server started" log line, once it is there.
    fn http_endpoint(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.log).ok()?;
        let line = text.lines().find(|l| l.contains("HTTP server started"))?;
        let endpoint = line.split("endpoint=").nth(1)?.split_whitespace().next()?;
        endpoint
            .starts_with("127.0.0.1:")
            .then(|| endpoint.to_owned())
    }

    /// The genesis file `scripts/geth-dev.sh` initialised the node with.
    fn genesis(&self) -> PathBuf {
        self._dir.path().join("data/genesis-osaka.json")
    }

    fn port(&self) -> u16 {
        self.url
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// One JSON-RPC call over a plain HTTP/1.0 connection (30 s timeout: a loaded machine
    /// can be slow, a hung node must not hang the test); the `result` text.
    fn rpc(&self, method: &str, params: &str) -> Option<String> {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
        let mut s = TcpStream::connect(("127.0.0.1", self.port())).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
        s.set_write_timeout(Some(Duration::from_secs(30))).ok()?;
        write!(
            s,
            "POST / HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .ok()?;
        let mut answer = String::new();
        s.read_to_string(&mut answer).ok()?;
        let json = answer.split("\r\n\r\n").nth(1)?;
        let v: serde_json::Value = serde_json::from_str(json).ok()?;
        v.get("result").map(|r| r.to_string())
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The chain head (`eth_blockNumber`).
    fn head(&self) -> u64 {
        let head = self
            .rpc("eth_blockNumber", "[]")
            .unwrap_or_else(|| panic!("eth_blockNumber failed:\n{}", self.log_tail()));
        u64::from_str_radix(head.trim_matches('"').trim_start_matches("0x"), 16).unwrap()
    }

    /// Kills geth now (SIGKILL) and reaps it.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for DevNode {
    fn drop(&mut self) {
        self.kill();
    }
}

fn gigagas(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args(args)
        .output()
        .expect("run gigagas")
}

fn ok(what: &str, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
#[cfg_attr(
    not(gigagas_geth),
    ignore = "needs geth v1.17.10 (scripts/install-geth.sh)"
)]
fn inject_fetch_and_verify_on_a_geth_dev_node() {
    let node = DevNode::start();
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("inject.json");
    let t = Instant::now();
    let out = gigagas(&[
        "inject",
        "--rpc",
        &node.url,
        "--workload",
        "mainnet-mix",
        "--txs",
        "120",
        "--seed",
        "7",
        "--senders",
        "8",
        "--fund-from-node",
        "--wait",
        INCLUSION_WAIT,
        "--json",
        report.to_str().unwrap(),
    ]);
    let text = ok("gigagas inject", &out);
    eprintln!("inject ({:.2} s):\n{text}", t.elapsed().as_secs_f64());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["chain_id"], 1337);
    let phase = &report["workload_phase"];
    assert_eq!(phase["txs"], 120);
    assert!(report["deployments"]["txs"].as_u64().unwrap() >= 8);
    assert_eq!(report["deployments"]["failed"], 0);
    // mainnet-mix reverts about 5% on purpose; nothing else fails.
    assert!(phase["failed"].as_u64().unwrap() * 5 < 120, "{phase}");
    let blocks = phase["blocks"].as_array().unwrap();
    let ours: u64 = blocks.iter().map(|b| b["ours"].as_u64().unwrap()).sum();
    assert_eq!(ours, 120);
    let (from, to) = (
        phase["first_block"].as_u64().unwrap(),
        phase["last_block"].as_u64().unwrap(),
    );
    let (from, to) = (from.to_string(), to.to_string());

    let data = tmp.path().join("fetched");
    let t = Instant::now();
    let out = gigagas(&[
        "fetch",
        "--rpc",
        &node.url,
        "--from",
        &from,
        "--to",
        &to,
        "--fork",
        "Osaka",
        "--out",
        data.to_str().unwrap(),
    ]);
    eprintln!(
        "fetch {from}..={to} ({:.2} s): {}",
        t.elapsed().as_secs_f64(),
        ok("gigagas fetch", &out)
    );
    let marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("fetch.json")).unwrap()).unwrap();
    assert_eq!(marker["chain_id"], 1337);
    assert_eq!(marker["fork"], "Osaka");

    for mode in [
        &["--mode", "sequential"][..],
        &["--mode", "parallel", "--threads", "2"][..],
    ] {
        let mut args = vec!["run", "--data", data.to_str().unwrap()];
        args.extend_from_slice(mode);
        let text = ok(&format!("gigagas run {mode:?}"), &gigagas(&args));
        let total = text
            .lines()
            .find(|l| l.starts_with("total:"))
            .unwrap_or_default();
        eprintln!("run {mode:?}: {total}");
        // Fetched pre-states hold what the blocks touch: the run says what it trusted.
        assert!(
            text.contains("verified against the data set's own pre-state"),
            "{text}"
        );
        assert!(
            total.contains("120 txs") && total.contains("verified"),
            "{text}"
        );
        assert!(text.contains("Osaka"), "{text}");
    }
    drop(node);
}

#[test]
#[cfg_attr(
    not(gigagas_geth),
    ignore = "needs geth v1.17.10 (scripts/install-geth.sh)"
)]
fn fetch_from_a_node_killed_midway_fails_cleanly() {
    let mut node = DevNode::start();
    // Enough blocks that the fetch is still going when the node dies. How many blocks a batch
    // of transactions fills depends on how fast the dev node mines them (on a loaded machine
    // it packs more into each), so batches are sent until there are 20 (at most 8 batches).
    let mut head = 0;
    for batch in 0..8 {
        let seed = (batch + 1).to_string();
        let out = gigagas(&[
            "inject",
            "--rpc",
            &node.url,
            "--workload",
            "transfers",
            "--txs",
            "200",
            "--senders",
            "4",
            "--seed",
            &seed,
            "--fund-from-node",
            "--wait",
            INCLUSION_WAIT,
        ]);
        ok("gigagas inject", &out);
        head = node.head();
        if head >= 20 {
            break;
        }
    }
    assert!(
        head >= 20,
        "only {head} blocks after 8 batches of 200 transactions"
    );

    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("fetched");
    let mut fetch = Command::new(env!("CARGO_BIN_EXE_gigagas"))
        .args([
            "fetch",
            "--rpc",
            &node.url,
            "--from",
            "1",
            "--to",
            &head.to_string(),
            "--fork",
            "Osaka",
            "--jobs",
            "1",
            "--retries",
            "1",
            "--timeout",
            "5",
            "--out",
            data.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill the node as soon as the first block is written (bounded wait; polled every
    // millisecond, not spun: on a loaded machine a spinning test takes the CPU the fetch and
    // the node need).
    let first = data.join("blocks/1");
    let deadline = Instant::now() + START_DEADLINE;
    let t = Instant::now();
    while !first.exists() {
        if let Some(status) = fetch.try_wait().unwrap() {
            let out = fetch.wait_with_output().unwrap();
            panic!(
                "fetch ended ({status}) before writing block 1:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            Instant::now() < deadline,
            "no block written within {} s",
            START_DEADLINE.as_secs()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    node.kill();
    eprintln!(
        "node killed {:.3} s after the fetch started, {head} blocks",
        t.elapsed().as_secs_f64()
    );
    let out = fetch.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "fetch must fail: {stderr}");
    assert!(
        stderr.contains("error: block ") && stderr.contains("(node 127.0.0.1:"),
        "the error names the block and the node: {stderr}"
    );
    assert!(
        stderr.contains("eth_getBlockByNumber") || stderr.contains("debug_traceBlockByNumber"),
        "the error names the method: {stderr}"
    );
    // Every block directory left is complete; the failed block has none; the hash table is
    // written only by a successful run.
    let mut complete = 0;
    for entry in std::fs::read_dir(data.join("blocks")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let dir = entry.path();
        for file in ["block.json", "pre_state.json"] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .unwrap_or_else(|e| panic!("{name}/{file} is not whole JSON: {e}"));
        }
        complete += 1;
    }
    assert!(
        complete >= 1 && complete < head as usize,
        "{complete} of {head}"
    );
    let failed: u64 = stderr
        .split("error: block ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .and_then(|n| n.parse().ok())
        .expect("block number in the error");
    assert!(!data.join(format!("blocks/{failed}")).exists());
    assert!(!data.join("block_hashes.json").exists());
}

#[test]
#[cfg_attr(
    not(gigagas_geth),
    ignore = "needs geth v1.17.10 (scripts/install-geth.sh)"
)]
fn fetch_with_the_genesis_makes_a_chain_the_peers_run() {
    let node = DevNode::start_with_chain_id(Some(1));
    let out = gigagas(&[
        "inject",
        "--rpc",
        &node.url,
        "--workload",
        "mainnet-mix",
        "--txs",
        "60",
        "--seed",
        "3",
        "--senders",
        "4",
        "--fund-from-node",
        "--wait",
        INCLUSION_WAIT,
    ]);
    ok("gigagas inject", &out);
    let head = node.head();
    let head = head.to_string();
    let genesis = node.genesis();
    let genesis = genesis.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fetch = |from: &str, genesis: &str, out: &Path| {
        gigagas(&[
            "fetch",
            "--rpc",
            &node.url,
            "--from",
            from,
            "--to",
            &head,
            "--genesis",
            genesis,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let refused = |out: &Output, dir: &Path, needle: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "must fail: {stderr}");
        assert!(stderr.contains(needle), "{needle:?} in: {stderr}");
        assert!(!dir.exists(), "nothing written at {}", dir.display());
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    };

    // Not from block 1: refused before anything is fetched.
    let bad = tmp.path().join("from2");
    refused(&fetch("2", genesis, &bad), &bad, "--from 1");
    // Another genesis than the node's: the two roots are named.
    let mut other: serde_json::Value =
        serde_json::from_slice(&std::fs::read(genesis).unwrap()).unwrap();
    other["alloc"]["0000000000000000000000000000000000000001"]["balance"] = "0x2".into();
    let other_path = tmp.path().join("other-genesis.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let out = fetch("1", other_path.to_str().unwrap(), &bad);
    refused(&out, &bad, "has state root 0x");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the node's block 0"), "{stderr}");
    // Not a geth genesis file.
    let not_geth = tmp.path().join("not-geth.json");
    std::fs::write(&not_geth, r#"{"schema":"gigagas.chain/1"}"#).unwrap();
    refused(
        &fetch("1", not_geth.to_str().unwrap(), &bad),
        &bad,
        "not a geth genesis file",
    );

    let chain = tmp.path().join("chain");
    let text = ok("gigagas fetch --genesis", &fetch("1", genesis, &chain));
    eprintln!("fetch --genesis: {text}");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(chain.join("chain.json")).unwrap()).unwrap();
    assert_eq!(meta["schema"], "gigagas.chain/1");
    assert_eq!(meta["fork"], "Osaka");
    assert_eq!(meta["chain_id"], 1);
    assert_eq!(meta["blocks"].as_u64().unwrap().to_string(), head);

    for mode in [
        &["--mode", "sequential"][..],
        &["--mode", "parallel", "--threads", "2"][..],
    ] {
        let mut args = vec!["run", "--data", chain.to_str().unwrap()];
        args.extend_from_slice(mode);
        let text = ok(&format!("gigagas run {mode:?}"), &gigagas(&args));
        let total = text.lines().last().unwrap_or_default();
        assert!(total.contains("verified"), "{text}");
        // Complete state: every block's state root is checked, nothing trusted to note.
        assert!(!text.contains("own pre-state"), "{text}");
        assert!(text.contains("state root"), "{text}");
    }

    // Every peer that is installed accepts every block and reaches the same head (geth is,
    // or this test would not run; evm and revme may not be).
    let report = tmp.path().join("peers.json");
    let text = ok(
        "gigagas peers",
        &gigagas(&[
            "peers",
            "--data",
            chain.to_str().unwrap(),
            "--repeats",
            "1",
            "--warmup",
            "0",
            "--json",
            report.to_str().unwrap(),
        ]),
    );
    eprintln!("{text}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["network"], "Osaka");
    let rows = report["rows"].as_array().unwrap();
    for row in rows {
        assert!(
            row["status"] == "ok" || row["status"] == "not installed",
            "{row}"
        );
    }
    for engine in [
        "gigagas conformance (process)",
        "gigagas run on MDBX, warm (process)",
        "geth import",
    ] {
        assert!(
            rows.iter()
                .any(|r| r["engine"] == engine && r["status"] == "ok"),
            "{engine}: {rows:?}"
        );
    }
    // geth import's like-for-like row is gigagas on its store.
    let geth = rows.iter().find(|r| r["engine"] == "geth import").unwrap();
    assert_eq!(
        geth["net_compared_with"], "gigagas run on MDBX, warm (process)",
        "{geth}"
    );
    assert!(geth["net_ratio"].as_f64().unwrap() > 0.0, "{geth}");
    drop(node);
}
