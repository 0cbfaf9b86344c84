//! `gigagas_fetch::fetch` against a JSON-RPC node in the test (no network): blocks of the
//! bundled sample come back identical, verify, and every failure names block and method and
//! leaves no block looking complete.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

mod common;

use common::{Call, Chain, Node, Reply};
use gigagas_data::DataSource;
use gigagas_fetch::{fetch, FetchError, FetchOptions, FetchReport};
use std::{
    path::Path,
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

/// Two consecutive sample blocks (the merge) and a Frontier block.
const MERGE: [u64; 2] = [15_537_393, 15_537_394];
const FRONTIER: u64 = 46_147;

fn options(node: &Node, from: u64, to: u64, out: &Path) -> FetchOptions {
    let mut o = FetchOptions::new(&node.url, from, to, out);
    o.backoff = Duration::from_millis(5);
    o.attempts = 3;
    o.timeout = Duration::from_secs(20);
    o
}

fn run(o: &FetchOptions) -> Result<FetchReport, FetchError> {
    fetch(o, &|_, _| {})
}

fn block_dirs(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("blocks"))
        .map(|it| {
            it.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Loads `out` and checks each block equals the sample's (hash, header, transactions,
/// pre-state) and verifies through the engine.
fn check_against_sample(out: &Path, numbers: &[u64]) {
    let fetched = gigagas_data::load(&DataSource::open(out).unwrap()).unwrap();
    let sample = gigagas_data::load(&DataSource::embedded().unwrap()).unwrap();
    assert_eq!(
        fetched
            .blocks
            .iter()
            .map(|b| b.number())
            .collect::<Vec<_>>(),
        numbers
    );
    for block in &fetched.blocks {
        let want = sample
            .blocks
            .iter()
            .find(|b| b.number() == block.number())
            .unwrap();
        assert_eq!(block.hash, want.hash);
        assert_eq!(block.header, want.header);
        assert_eq!(block.transactions.len(), want.transactions.len());
        assert_eq!(
            block.pre_state.len(),
            want.pre_state.len(),
            "block {}",
            block.number()
        );
        for (addr, acc) in want.pre_state.accounts() {
            let got = block
                .pre_state
                .account(addr)
                .unwrap_or_else(|| panic!("block {}: {addr} missing", block.number()));
            assert_eq!(got.info.balance, acc.info.balance, "{addr}");
            assert_eq!(got.info.nonce, acc.info.nonce, "{addr}");
            assert_eq!(got.info.code_hash, acc.info.code_hash, "{addr}");
            assert_eq!(got.info.code, acc.info.code, "{addr}");
            assert_eq!(got.storage, acc.storage, "{addr}");
        }
        // Every hash the sample knows in BLOCKHASH reach is in the fetched table too.
        for (k, h) in want.pre_state.block_hashes().iter() {
            if *k + 256 >= block.number() && *k < block.number() {
                assert_eq!(block.pre_state.block_hashes().get(k), Some(h));
            }
        }
        gigagas_engine::prepare(block)
            .unwrap_or_else(|e| panic!("block {} does not verify: {e}", block.number()));
    }
}

#[test]
fn fetches_sample_blocks_that_load_equal_and_verify() {
    let node = Node::start(Chain::sample(&MERGE), None);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let report = run(&options(&node, MERGE[0], MERGE[1], &out)).unwrap();
    assert_eq!(report.fetched, MERGE);
    assert!(report.skipped.is_empty());
    // Ancestors from − 256 ..= from − 1, each once.
    assert_eq!(report.hashes_fetched, 256);
    // from − 256 ..= to, plus the parent of the oldest ancestor (its header names it).
    assert_eq!(report.hashes_total, 256 + 2 + 1);
    assert_eq!(report.chain_id, 1);
    assert_eq!(block_dirs(&out), ["15537393", "15537394"]);
    let marker: gigagas_fetch::Marker =
        serde_json::from_slice(&std::fs::read(out.join("fetch.json")).unwrap()).unwrap();
    assert_eq!(marker.ranges, [MERGE]);
    assert_eq!(marker.chain_id, 1);
    assert!(marker.hosts[0].starts_with("127.0.0.1:"));
    check_against_sample(&out, &MERGE);

    // block.json is the node's answer unchanged.
    let served: serde_json::Value =
        serde_json::from_str(&Chain::sample(&MERGE).blocks[&MERGE[0]]).unwrap();
    let written = std::fs::read_to_string(out.join("blocks/15537393/block.json")).unwrap();
    assert_eq!(written, served.to_string());
}

#[test]
fn resume_fetches_nothing_new_and_extends_a_range() {
    let node = Node::start(Chain::sample(&[FRONTIER, MERGE[0], MERGE[1]]), None);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let first = run(&options(&node, MERGE[0], MERGE[1], &out)).unwrap();
    assert_eq!(first.fetched, MERGE);
    let calls_before = node.calls().len();
    let again = run(&options(&node, MERGE[0], MERGE[1], &out)).unwrap();
    assert!(again.fetched.is_empty(), "{again:?}");
    assert_eq!(again.skipped, MERGE);
    assert_eq!(again.hashes_fetched, 0);
    // Only eth_chainId was asked.
    let new: Vec<Call> = node.calls()[calls_before..].to_vec();
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(new[0].method, "eth_chainId");

    // A block whose directory was damaged is fetched again; a stale partial directory goes.
    std::fs::write(out.join("blocks/15537394/pre_state.json"), "{").unwrap();
    std::fs::create_dir(out.join("blocks/.15537394.abc.partial")).unwrap();
    let repaired = run(&options(&node, MERGE[0], MERGE[1], &out)).unwrap();
    assert_eq!(repaired.fetched, [MERGE[1]]);
    assert_eq!(repaired.skipped, [MERGE[0]]);
    assert_eq!(block_dirs(&out), ["15537393", "15537394"]);

    // Another range into the same directory: merged marker, bytecodes and hashes.
    let more = run(&options(&node, FRONTIER, FRONTIER, &out)).unwrap();
    assert_eq!(more.fetched, [FRONTIER]);
    let marker: gigagas_fetch::Marker =
        serde_json::from_slice(&std::fs::read(out.join("fetch.json")).unwrap()).unwrap();
    assert_eq!(marker.ranges, [[FRONTIER, FRONTIER], MERGE]);
    check_against_sample(&out, &[FRONTIER, MERGE[0], MERGE[1]]);
}

/// Runs a fetch of the merge blocks against a node with `custom` answers; returns the error
/// text and the output directory's block entries.
fn failing(custom: common::Override) -> (String, Vec<String>, Node) {
    let node = Node::start(Chain::sample(&MERGE), Some(custom));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let err = run(&options(&node, MERGE[0], MERGE[1], &out)).unwrap_err();
    let dirs = block_dirs(&out);
    (err.to_string(), dirs, node)
}

#[test]
fn a_refused_method_names_block_and_method_and_leaves_no_block() {
    let (err, dirs, _node) = failing(Box::new(|c| {
        (c.method == "debug_traceBlockByNumber").then_some(Reply::Error(
            -32601,
            "the method debug_traceBlockByNumber does not exist/is not available",
        ))
    }));
    assert!(err.contains("block 15537393"), "{err}");
    assert!(err.contains("debug_traceBlockByNumber"), "{err}");
    assert!(err.contains("-32601"), "{err}");
    assert!(dirs.is_empty(), "{dirs:?}");
}

#[test]
fn a_connection_closed_midway_is_retried_then_reported() {
    let (err, dirs, node) = failing(Box::new(|c| {
        (c.method == "debug_traceBlockByNumber" && c.block == Some(MERGE[1]))
            .then_some(Reply::CloseMidway)
    }));
    assert!(err.contains("block 15537394"), "{err}");
    assert!(err.contains("debug_traceBlockByNumber"), "{err}");
    assert!(err.contains("after 3 tries"), "{err}");
    // Three tries of that call.
    let tries = node
        .calls()
        .iter()
        .filter(|c| c.method == "debug_traceBlockByNumber" && c.block == Some(MERGE[1]))
        .count();
    assert_eq!(tries, 3);
    // The other block may have finished (it is complete then); the failed one is absent.
    assert!(!dirs.iter().any(|d| d.contains("15537394")), "{dirs:?}");
}

#[test]
fn a_malformed_answer_is_refused() {
    let (err, dirs, _node) = failing(Box::new(|c| {
        (c.method == "eth_getBlockByNumber" && c.params[1] == serde_json::json!(true))
            .then(|| Reply::Raw("<html>502 bad gateway</html>".into()))
    }));
    assert!(err.contains("block 15537393"), "{err}");
    assert!(err.contains("eth_getBlockByNumber"), "{err}");
    assert!(err.contains("nonsensical answer"), "{err}");
    assert!(dirs.is_empty(), "{dirs:?}");
}

#[test]
fn missing_fields_and_a_wrong_trace_are_refused() {
    let chain = Chain::sample(&MERGE);
    let mut broken: serde_json::Value = serde_json::from_str(&chain.blocks[&MERGE[0]]).unwrap();
    broken.as_object_mut().unwrap().remove("stateRoot");
    let (err, dirs, _node) = failing(Box::new(move |c| {
        (c.method == "eth_getBlockByNumber"
            && c.block == Some(MERGE[0])
            && c.params[1] == serde_json::json!(true))
        .then(|| Reply::Result(broken.clone()))
    }));
    assert!(
        err.contains("block 15537393: eth_getBlockByNumber"),
        "{err}"
    );
    assert!(err.contains("stateRoot"), "{err}");
    // The other block is independent and may have finished (complete); this one is absent.
    assert!(!dirs.iter().any(|d| d.contains("15537393")), "{dirs:?}");

    let (err, dirs, _node) = failing(Box::new(|c| {
        (c.method == "debug_traceBlockByNumber").then(|| Reply::Result(serde_json::json!([])))
    }));
    assert!(err.contains("debug_traceBlockByNumber"), "{err}");
    assert!(err.contains("0 traces for a block of"), "{err}");
    assert!(dirs.is_empty(), "{dirs:?}");
}

#[test]
fn a_wrong_block_number_is_refused() {
    let chain = Chain::sample(&MERGE);
    let other: serde_json::Value = serde_json::from_str(&chain.blocks[&MERGE[1]]).unwrap();
    let (err, dirs, _node) = failing(Box::new(move |c| {
        (c.method == "eth_getBlockByNumber"
            && c.block == Some(MERGE[0])
            && c.params[1] == serde_json::json!(true))
        .then(|| Reply::Result(other.clone()))
    }));
    assert!(
        err.contains("block 15537393: eth_getBlockByNumber")
            && err.contains("the answer is block 15537394"),
        "{err}"
    );
    assert!(!dirs.iter().any(|d| d.contains("15537393")), "{dirs:?}");
}

#[test]
fn a_tampered_block_is_refused_by_its_hash() {
    let chain = Chain::sample(&MERGE);
    let mut tampered: serde_json::Value = serde_json::from_str(&chain.blocks[&MERGE[0]]).unwrap();
    tampered["gasUsed"] = serde_json::json!("0x1");
    let (err, _dirs, _node) = failing(Box::new(move |c| {
        (c.method == "eth_getBlockByNumber"
            && c.block == Some(MERGE[0])
            && c.params[1] == serde_json::json!(true))
        .then(|| Reply::Result(tampered.clone()))
    }));
    assert!(err.contains("not to its stated hash"), "{err}");
}

#[test]
fn a_missing_block_is_named() {
    let node = Node::start(Chain::sample(&MERGE), None);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let err = run(&options(&node, MERGE[1], MERGE[1] + 1, &out))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("block 15537395: eth_getBlockByNumber"),
        "{err}"
    );
    assert!(err.contains("no such block"), "{err}");
    // The block before it finished and counts as complete on a re-run.
    assert_eq!(block_dirs(&out), ["15537394"]);
    let again = run(&options(&node, MERGE[1], MERGE[1], &out)).unwrap();
    assert_eq!(again.skipped, [MERGE[1]]);
}

#[test]
fn errors_503_twice_are_retried_and_succeed() {
    let failures = AtomicUsize::new(0);
    let node = Node::start(
        Chain::sample(&MERGE),
        Some(Box::new(move |c| {
            (c.method == "debug_traceBlockByNumber"
                && c.block == Some(MERGE[0])
                && failures.fetch_add(1, Ordering::SeqCst) < 2)
                .then(|| Reply::Status(503, "busy".into()))
        })),
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let report = run(&options(&node, MERGE[0], MERGE[0], &out)).unwrap();
    assert_eq!(report.fetched, [MERGE[0]]);
    assert_eq!(report.retries, 2);
    let traces = node.count("debug_traceBlockByNumber");
    assert_eq!(traces, 3);
    // A 429 with JSON-RPC rate limit (-32005) is retried as well; a 404 is not.
    let node = Node::start(
        Chain::sample(&MERGE),
        Some(Box::new(|c| {
            (c.method == "eth_chainId").then(|| Reply::Status(404, "no".into()))
        })),
    );
    let err = run(&options(&node, MERGE[0], MERGE[0], &tmp.path().join("x")))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("eth_chainId") && err.contains("HTTP 404"),
        "{err}"
    );
    assert_eq!(node.count("eth_chainId"), 1);
}

#[test]
fn an_answer_over_the_size_limit_is_refused() {
    let node = Node::start(Chain::sample(&MERGE), None);
    let tmp = tempfile::tempdir().unwrap();
    let mut o = options(&node, MERGE[0], MERGE[0], &tmp.path().join("data"));
    o.max_response_bytes = 4096;
    let err = run(&o).unwrap_err().to_string();
    assert!(err.contains("block 15537393"), "{err}");
    assert!(err.contains("larger than 4096 bytes"), "{err}");
}

#[test]
fn an_unreachable_node_is_named() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut o = FetchOptions::new(
        format!("http://127.0.0.1:{port}"),
        1,
        1,
        tmp.path().join("d"),
    );
    o.attempts = 2;
    o.backoff = Duration::from_millis(1);
    let err = run(&o).unwrap_err().to_string();
    assert!(
        err.contains("eth_chainId") && err.contains("after 2 tries"),
        "{err}"
    );
}

#[test]
fn out_must_be_new_empty_or_fetched_and_flags_are_bounded() {
    let node = Node::start(Chain::sample(&MERGE), None);
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "x").unwrap();
    let err = run(&options(&node, MERGE[0], MERGE[0], &other))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--out") && err.contains("no fetch.json"),
        "{err}"
    );
    std::fs::write(other.join("chain.json"), "{}").unwrap();
    let err = run(&options(&node, MERGE[0], MERGE[0], &other))
        .unwrap_err()
        .to_string();
    assert!(err.contains("generated chain"), "{err}");
    assert_eq!(node.calls().len(), 0);

    let out = tmp.path().join("d");
    for (o, flag) in [
        (
            {
                let mut o = options(&node, 5, 4, &out);
                o.jobs = 4;
                o
            },
            "--to",
        ),
        (options(&node, 0, 100_000, &out), "--to"),
        (
            {
                let mut o = options(&node, 1, 1, &out);
                o.jobs = 0;
                o
            },
            "--jobs",
        ),
        (
            {
                let mut o = options(&node, 1, 1, &out);
                o.jobs = 65;
                o
            },
            "--jobs",
        ),
        (
            {
                let mut o = options(&node, 1, 1, &out);
                o.rpc = "ftp://x".into();
                o
            },
            "--rpc",
        ),
    ] {
        let err = run(&o).unwrap_err().to_string();
        assert!(err.starts_with(flag), "{err}");
    }
    assert!(!out.exists());

    // A directory of another chain is refused.
    let fetched = tmp.path().join("f");
    run(&options(&node, MERGE[0], MERGE[0], &fetched)).unwrap();
    let mut marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fetched.join("fetch.json")).unwrap()).unwrap();
    marker["chain_id"] = serde_json::json!(5);
    std::fs::write(fetched.join("fetch.json"), marker.to_string()).unwrap();
    let err = run(&options(&node, MERGE[0], MERGE[0], &fetched))
        .unwrap_err()
        .to_string();
    assert!(err.contains("holds chain 5"), "{err}");
}

#[test]
fn a_node_that_does_not_answer_times_out() {
    let node = Node::start(
        Chain::sample(&MERGE),
        Some(Box::new(|c| {
            (c.method == "eth_getBlockByNumber" && c.block == Some(MERGE[0]))
                .then_some(Reply::Stall(Duration::from_secs(3)))
        })),
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut o = options(&node, MERGE[0], MERGE[0], &tmp.path().join("data"));
    o.timeout = Duration::from_millis(300);
    o.attempts = 2;
    let t0 = std::time::Instant::now();
    let err = run(&o).unwrap_err().to_string();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert!(
        err.contains("block 15537393: eth_getBlockByNumber"),
        "{err}"
    );
    assert!(
        err.contains("after 2 tries") && err.contains("timeout"),
        "{err}"
    );
}

/// A chain other than mainnet needs `--fork` (recorded in the marker and used by the loader:
/// chain id and fork rules); a later run must not name another fork.
#[test]
fn another_chain_needs_a_fork_which_the_marker_records_and_the_loader_uses() {
    let node = Node::start(
        Chain::sample(&MERGE),
        Some(Box::new(|c: &Call| {
            (c.method == "eth_chainId").then(|| Reply::Result(serde_json::json!("0x539")))
        })),
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    let err = run(&options(&node, MERGE[0], MERGE[1], &out)).unwrap_err();
    assert!(
        matches!(err, FetchError::Flag { flag: "--fork", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("chain 1337"), "{err}");
    assert!(block_dirs(&out).is_empty());

    let mut opts = options(&node, MERGE[0], MERGE[1], &out);
    opts.fork = Some("Cancun".into());
    run(&opts).unwrap();
    let marker: gigagas_fetch::Marker =
        serde_json::from_slice(&std::fs::read(out.join("fetch.json")).unwrap()).unwrap();
    assert_eq!(
        (marker.chain_id, marker.fork.as_deref()),
        (1337, Some("Cancun"))
    );
    let data = gigagas_data::load(&DataSource::open(&out).unwrap()).unwrap();
    for block in &data.blocks {
        assert_eq!(block.chain_id, 1337);
        assert_eq!(block.spec.map(Into::<&str>::into), Some("Cancun"));
    }
    // A re-run without --fork resumes with the recorded one; another fork is refused.
    opts.fork = None;
    run(&opts).unwrap();
    opts.fork = Some("Prague".into());
    let err = run(&opts).unwrap_err().to_string();
    assert!(
        err.contains("--fork Cancun") && err.contains("Prague"),
        "{err}"
    );

    // A marker of another chain without a fork is refused by the loader, naming the way out.
    let mut marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fetch.json")).unwrap()).unwrap();
    marker.as_object_mut().unwrap().remove("fork");
    std::fs::write(out.join("fetch.json"), marker.to_string()).unwrap();
    let err = gigagas_data::load(&DataSource::open(&out).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("--fork"), "{err}");
}

/// A node that lies about a transaction (a field changed, its stated hash kept) or repeats a
/// transaction (the header's transactions root no longer matches) is refused,
/// naming the block and the transaction; a stored block altered on disk the same way is not
/// "already complete" on a re-run but fetched again.
#[test]
fn a_block_whose_transactions_do_not_hash_as_stated_is_refused_and_refetched() {
    let chain = Chain::sample(&MERGE);
    let honest: serde_json::Value = serde_json::from_str(&chain.blocks[&MERGE[0]]).unwrap();
    let mut lying = honest.clone();
    lying["transactions"][0]["value"] = serde_json::json!("0x1234");
    let answer = lying.clone();
    let (err, dirs, _node) = failing(Box::new(move |c| {
        (c.method == "eth_getBlockByNumber"
            && c.block == Some(MERGE[0])
            && c.params[1] == serde_json::json!(true))
        .then(|| Reply::Result(answer.clone()))
    }));
    assert!(
        err.contains("block 15537393") && err.contains("transaction 0") && err.contains("hash"),
        "{err}"
    );
    assert!(!dirs.iter().any(|d| d == "15537393"), "{dirs:?}");

    // A transaction repeated (each hashes as stated): the root gives it away.
    let mut swapped = honest.clone();
    let txs = swapped["transactions"].as_array_mut().unwrap();
    let first = txs[0].clone();
    txs.push(first);
    let (err, _dirs, _node) = failing(Box::new(move |c| {
        (c.method == "eth_getBlockByNumber"
            && c.block == Some(MERGE[0])
            && c.params[1] == serde_json::json!(true))
        .then(|| Reply::Result(swapped.clone()))
    }));
    assert!(err.contains("transactionsRoot"), "{err}");

    // Stored, then altered on disk: the re-run re-verifies it and fetches it again.
    let node = Node::start(Chain::sample(&MERGE), None);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("data");
    run(&options(&node, MERGE[0], MERGE[0], &out)).unwrap();
    let stored = out.join("blocks/15537393/block.json");
    std::fs::write(&stored, lying.to_string()).unwrap();
    let again = run(&options(&node, MERGE[0], MERGE[0], &out)).unwrap();
    assert_eq!(again.fetched, [MERGE[0]], "{again:?}");
    assert!(again.skipped.is_empty(), "{again:?}");
    assert_eq!(
        std::fs::read_to_string(&stored).unwrap(),
        honest.to_string()
    );
}

/// A node that accepts connections but never answers fails the run at the first call within
/// the probe's deadline, not after the full timeout times every retry; a node that answers
/// the first call and then hangs fails within the per-request deadline, each retry reported.
#[test]
fn a_node_that_never_answers_fails_within_the_deadlines_and_says_so() {
    let node = Node::start(
        Chain::sample(&MERGE),
        Some(Box::new(|_| Some(Reply::Stall(Duration::from_secs(600))))),
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut o = FetchOptions::new(&node.url, MERGE[0], MERGE[0], tmp.path().join("data"));
    // The defaults (120 s per try, 6 tries) would wait 12 minutes; a short probe deadline
    // keeps the test short while exercising the same path.
    assert_eq!(o.timeout, Duration::from_secs(120));
    o.deadline = Duration::from_secs(2);
    o.notice = None;
    let t0 = std::time::Instant::now();
    let err = run(&o).unwrap_err().to_string();
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
    assert!(
        err.contains("eth_chainId") && err.contains("deadline") && err.contains("tries"),
        "{err}"
    );

    // Answers eth_chainId, then hangs on the block: per-request deadline, retries reported.
    let node = Node::start(
        Chain::sample(&MERGE),
        Some(Box::new(|c| {
            (c.method != "eth_chainId").then_some(Reply::Stall(Duration::from_secs(600)))
        })),
    );
    let notices = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = notices.clone();
    let mut o = options(&node, MERGE[0], MERGE[0], &tmp.path().join("data2"));
    o.timeout = Duration::from_millis(400);
    o.attempts = 11;
    o.deadline = Duration::from_secs(2);
    o.notice = Some(gigagas_fetch::Notice(std::sync::Arc::new(move |line| {
        seen.lock().unwrap().push(line.to_owned())
    })));
    let err = run(&o).unwrap_err().to_string();
    assert!(err.contains("deadline of one request"), "{err}");
    let notices = notices.lock().unwrap();
    assert!(
        !notices.is_empty() && notices[0].contains("try 1 of 11"),
        "{notices:?}"
    );
}
