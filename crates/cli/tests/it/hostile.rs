//! Hostile inputs and faults against the built `gigagas` binary (issue 29): closed stdout,
//! a full device as stdout, a child process that hangs, RPC servers that never answer or
//! answer garbage, an archive bomb. Every case asserts a bounded run (generous deadlines, no
//! tight timing), no panic, a message naming the cause and the exit status.
//!
//! Not covered here: a full disk for the store or an output directory. It needs a size-limited
//! file system (a loop or tmpfs mount, root only); `/dev/full` as stdout covers the write
//! path of the output streams.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every case must finish within this (the commands take seconds; the margin is for a
/// loaded machine).
const LIMIT: Duration = Duration::from_secs(120);

/// What to do with the child's stdout.
enum Out {
    /// Read everything.
    Piped,
    /// Read one line, then close the pipe.
    CloseAfterLine,
    /// Close the pipe before the child writes anything.
    CloseNow,
    /// `/dev/full`.
    Full,
}

#[derive(Debug)]
struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: String,
    secs: f64,
    /// Peak resident memory of the child, KiB (its VmHWM, polled).
    max_rss_kib: i64,
    timed_out: bool,
}

impl Outcome {
    fn failed_clearly(&self, cause: &[&str]) {
        assert!(!self.timed_out, "did not finish within {LIMIT:?}: {self:?}");
        assert!(
            !self.stderr.contains("panicked"),
            "panicked: {}",
            self.stderr
        );
        assert!(
            self.code.is_some_and(|c| c != 0),
            "expected a non-zero exit: {self:?}"
        );
        assert!(
            cause.iter().any(|c| self.stderr.contains(c)),
            "no message naming the cause (one of {cause:?}): {}",
            self.stderr
        );
    }
}

fn gigagas() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gigagas"));
    cmd.env_remove("GIGAGAS_GETH_EVM")
        .env_remove("GIGAGAS_T8N_TIMEOUT")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs `cmd` with `out` as stdout, killed after [`LIMIT`], its peak memory polled.
fn run(mut cmd: Command, out: Out) -> Outcome {
    cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    match out {
        Out::Full => {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            cmd.stdout(full);
        }
        _ => {
            cmd.stdout(Stdio::piped());
        }
    }
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let stdout = child.stdout.take();
    let out_reader = std::thread::spawn(move || {
        let Some(stdout) = stdout else { return };
        match out {
            Out::Piped => {
                let mut sink = Vec::new();
                let _ = BufReader::new(stdout).read_to_end(&mut sink);
            }
            Out::CloseAfterLine => {
                let mut line = String::new();
                let _ = BufReader::new(stdout).read_line(&mut line);
            }
            Out::CloseNow | Out::Full => drop(stdout),
        }
    });
    // Peak memory: the child's VmHWM, polled while it runs (a lower bound: a peak held for
    // less than one poll can be missed, which a bomb read into memory is not).
    let status_file = format!("/proc/{}/status", child.id());
    let mut max_rss_kib = 0i64;
    let mut timed_out = false;
    let status = loop {
        if let Some(hwm) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<i64>().ok())
        }) {
            max_rss_kib = max_rss_kib.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let secs = start.elapsed().as_secs_f64();
    out_reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    Outcome {
        code: status.code(),
        signal: status.signal(),
        stderr,
        secs,
        max_rss_kib,
        timed_out,
    }
}

/// A closed pipe is a quiet end, as for other Unix tools: status 0 or 141, or SIGPIPE.
fn quiet_on_closed_pipe(o: &Outcome) {
    assert!(!o.timed_out, "{o:?}");
    assert!(!o.stderr.contains("panicked"), "panicked: {}", o.stderr);
    assert!(
        matches!(o.code, Some(0) | Some(141)) || o.signal == Some(13),
        "not a quiet exit on a closed stdout: {o:?}"
    );
    assert!(
        !o.stderr.contains("Broken pipe"),
        "a closed pipe is not an error to report: {}",
        o.stderr
    );
}

fn gen_chain(dir: &Path, fork: &str) {
    let o = run(
        {
            let mut c = gigagas();
            c.args(["gen", "transfers", "--blocks", "2", "--block-gas", "1M"])
                .args(["--senders", "4", "--fork", fork, "--out"])
                .arg(dir);
            c
        },
        Out::Piped,
    );
    assert_eq!(o.code, Some(0), "gen: {o:?}");
}

#[test]
fn closed_stdout_ends_run_gen_and_bal_stats_quietly() {
    let mut run_cmd = gigagas();
    run_cmd.args(["run", "--mode", "sequential"]);
    quiet_on_closed_pipe(&run(run_cmd, Out::CloseAfterLine));

    let tmp = tempfile::tempdir().unwrap();
    let mut gen_cmd = gigagas();
    gen_cmd
        .args(["gen", "transfers", "--blocks", "2", "--block-gas", "1M"])
        .args(["--senders", "4", "--out"])
        .arg(tmp.path().join("chain"));
    quiet_on_closed_pipe(&run(gen_cmd, Out::CloseNow));

    let mut stats = gigagas();
    stats.args(["bal", "stats"]);
    quiet_on_closed_pipe(&run(stats, Out::CloseAfterLine));
}

#[test]
fn a_full_device_as_stdout_is_a_clear_error() {
    for args in [&["run", "--mode", "sequential"][..], &["bal", "stats"]] {
        let mut cmd = gigagas();
        cmd.args(args);
        let o = run(cmd, Out::Full);
        o.failed_clearly(&["No space left on device"]);
        assert!(o.stderr.contains("stdout"), "names stdout: {}", o.stderr);
    }
}

/// An `evm` that answers `--version` as the pinned one, then hangs in every run.
fn hanging_evm(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("evm");
    std::fs::write(
        &path,
        "#!/bin/sh\ncase \"$1\" in --version|version) echo 'evm version 1.17.10-stable'; exit 0;; esac\nexec sleep 100000\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_hanging_child_is_killed_at_its_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let evm = hanging_evm(tmp.path());

    let mut cmd = gigagas();
    cmd.args(["differential", "--fork", "prague"])
        .env("GIGAGAS_GETH_EVM", &evm)
        .env("GIGAGAS_T8N_TIMEOUT", "3");
    let o = run(cmd, Out::Piped);
    o.failed_clearly(&["did not exit within 3 s"]);
    assert!(o.stderr.contains("GIGAGAS_T8N_TIMEOUT"), "{}", o.stderr);

    let chain = tmp.path().join("chain");
    gen_chain(&chain, "Prague");
    let mut cmd = gigagas();
    cmd.args(["peers", "--peers", "geth-blocktest", "--timeout", "3"])
        .args(["--repeats", "1", "--warmup", "0", "--data"])
        .arg(&chain)
        .env("GIGAGAS_GETH_EVM", &evm);
    let o = run(cmd, Out::Piped);
    o.failed_clearly(&["did not exit within 3 s"]);
    assert!(o.stderr.contains("--timeout"), "{}", o.stderr);
}

/// A fake node on a free port: `answer` handles each connection (in its own thread).
fn fake_node(answer: fn(std::net::TcpStream)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || answer(conn));
        }
    });
    port
}

fn fetch_from(port: u16, out: &Path) -> Outcome {
    let mut cmd = gigagas();
    cmd.args(["fetch", "--from", "1", "--to", "1", "--timeout", "2"])
        .args(["--retries", "1", "--rpc"])
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("--out")
        .arg(out);
    run(cmd, Out::Piped)
}

#[test]
fn a_node_that_never_answers_or_answers_garbage_is_an_error_in_time() {
    let tmp = tempfile::tempdir().unwrap();
    let silent = fake_node(|conn| {
        std::thread::sleep(Duration::from_secs(600));
        drop(conn);
    });
    let o = fetch_from(silent, &tmp.path().join("a"));
    o.failed_clearly(&["timeout"]);
    assert!(
        o.stderr.contains("--timeout"),
        "names the flag: {}",
        o.stderr
    );

    let garbage = fake_node(|mut conn| {
        let mut buf = [0u8; 4096];
        let _ = conn.read(&mut buf);
        let _ = conn.write_all(b"\x1b[31mjunk\x00\xff\r\n\r\nnot http at all");
    });
    let o = fetch_from(garbage, &tmp.path().join("b"));
    o.failed_clearly(&["http", "HTTP", "protocol"]);
    assert!(!o.stderr.contains('\u{1b}'), "raw escape: {}", o.stderr);

    let lying = fake_node(|mut conn| {
        let mut buf = [0u8; 4096];
        let _ = conn.read(&mut buf);
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"unexpected":[1e308,-1,null]}}"#;
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let _ = conn.write_all(body);
    });
    let o = fetch_from(lying, &tmp.path().join("c"));
    o.failed_clearly(&["eth_chainId"]);
}

/// A small .tar.zst whose first member is 1 GiB of zeros, before its manifest: refused, and
/// never held in memory.
#[test]
fn an_archive_bomb_is_refused_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.tar.zst");
    let file = std::fs::File::create(&path).unwrap();
    let encoder = zstd::Encoder::new(file, 1).unwrap().auto_finish();
    let mut tar = tar::Builder::new(encoder);
    let size: u64 = 1 << 30;
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(
        &mut header,
        "blocks/1/block.json",
        std::io::repeat(0).take(size),
    )
    .unwrap();
    let manifest =
        b"0000000000000000000000000000000000000000000000000000000000000000  blocks/1/block.json\n";
    let mut header = tar::Header::new_gnu();
    header.set_size(manifest.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, "MANIFEST.sha256", &manifest[..])
        .unwrap();
    drop(tar.into_inner().unwrap());
    let compressed = std::fs::metadata(&path).unwrap().len();
    assert!(
        compressed < 1 << 20,
        "the bomb is small: {compressed} bytes"
    );

    let mut cmd = gigagas();
    cmd.args(["run", "--data"]).arg(&path);
    let o = run(cmd, Out::Piped);
    o.failed_clearly(&["bomb.tar.zst"]);
    assert!(
        o.max_rss_kib < 512 * 1024,
        "peak memory {} MiB for a 1 GiB member",
        o.max_rss_kib / 1024
    );
    eprintln!(
        "archive bomb: refused in {:.1} s, peak {} MiB: {}",
        o.secs,
        o.max_rss_kib / 1024,
        o.stderr.trim()
    );
}

/// A 1 KB edit of a small generated chain's `chain.json` (a `storage_fill` of 100M slots its
/// blocks never touch) is refused at once by `run` and `db init`, with the numbers, instead of
/// minutes of hashing (issue 42).
#[test]
fn a_storage_fill_out_of_proportion_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain");
    gen_chain(&chain, "Prague");
    let meta_path = chain.join("chain.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
    meta["storage_fill"] = serde_json::json!([{
        "address": "0x00000000000000000000000000000000d0000000",
        "accounts": 1,
        "slots": 100_000_000u64,
        "period": 4,
        "nonce": 1
    }]);
    std::fs::write(&meta_path, serde_json::to_vec_pretty(&meta).unwrap()).unwrap();
    let mut run_cmd = gigagas();
    run_cmd
        .args(["run", "--mode", "sequential", "--data"])
        .arg(&chain);
    let mut init = gigagas();
    init.args(["db", "init", "--data"])
        .arg(&chain)
        .arg("--out")
        .arg(tmp.path().join("db"));
    for cmd in [run_cmd, init] {
        let o = run(cmd, Out::Piped);
        o.failed_clearly(&["storage_fill declares 100000000 slots"]);
        assert!(
            o.stderr.contains("touch the fill's accounts 0 time"),
            "{o:?}"
        );
        assert!(o.secs < 60.0, "took {:.1} s: {o:?}", o.secs);
    }
}

/// `conformance` with stdout closed (`>&-`: writes to it would be dropped silently) refuses
/// at once with a named error and a non-zero status instead of printing its report nowhere
/// and exiting 0 (issue 42, "lost output with exit 0").
#[test]
fn conformance_with_stdout_closed_is_an_error() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tests/fixtures");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("exec \"$0\" conformance \"$1\" >&-")
        .arg(env!("CARGO_BIN_EXE_gigagas"))
        .arg(&fixtures)
        .env("NO_COLOR", "1");
    let o = run(cmd, Out::Piped);
    o.failed_clearly(&["stdout is closed"]);
}

/// The environment is input too: a `RAYON_NUM_THREADS` above the thread limit or not a
/// number is refused at once naming the variable (100,000 used to keep a 0.1 s run busy for
/// minutes), while a sane one runs.
#[test]
fn a_hostile_rayon_num_threads_is_refused_by_name() {
    for (value, needle) in [
        (
            "100000",
            "RAYON_NUM_THREADS=100000: above the limit of 1024",
        ),
        ("lots", "RAYON_NUM_THREADS=\"lots\": not a whole number"),
    ] {
        let mut cmd = gigagas();
        cmd.env("RAYON_NUM_THREADS", value)
            .args(["run", "--mode", "sequential"]);
        let o = run(cmd, Out::Piped);
        o.failed_clearly(&[needle]);
        assert!(o.secs < 10.0, "took {:.1} s: {o:?}", o.secs);
    }
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain");
    gen_chain(&chain, "Prague");
    let mut cmd = gigagas();
    cmd.env("RAYON_NUM_THREADS", "2")
        .args(["run", "--mode", "sequential", "--data"])
        .arg(&chain);
    let o = run(cmd, Out::Piped);
    assert_eq!(o.code, Some(0), "{o:?}");
}

/// A small generated chain under `dir` and its store made by `db init`: (chain, store).
/// The two commands that open the store `db` for writing: `db verify` and a `run --state disk`
/// resuming `chain` on it.
fn store_writers(chain: &Path, db: &Path) -> [std::process::Command; 2] {
    let mut verify = gigagas();
    verify.args(["db", "verify"]).arg(db);
    let mut resume = gigagas();
    resume
        .args(["run", "--state", "disk", "--data"])
        .arg(chain)
        .arg("--db")
        .arg(db);
    [verify, resume]
}

fn chain_and_store(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let chain = dir.join("chain");
    gen_chain(&chain, "Prague");
    let db = dir.join("db");
    let mut init = gigagas();
    init.args(["db", "init", "--data"])
        .arg(&chain)
        .arg("--out")
        .arg(&db);
    assert_eq!(run(init, Out::Piped).code, Some(0));
    (chain, db)
}

/// A store directory whose data file is a symbolic link to the user's own file is refused by
/// every store command, read-only `db verify` included, and the file is left as it was (it
/// used to be truncated or overwritten).
#[test]
fn a_symlinked_store_file_never_writes_through() {
    let tmp = tempfile::tempdir().unwrap();
    let (chain, db) = chain_and_store(tmp.path());
    let victim = tmp.path().join("notes.txt");
    for name in ["mdbx.dat", "mdbx.lck"] {
        std::fs::write(&victim, b"my notes\n".repeat(1000)).unwrap();
        let kept = db.join(format!("{name}.kept"));
        std::fs::rename(db.join(name), &kept).unwrap();
        std::os::unix::fs::symlink(&victim, db.join(name)).unwrap();
        for cmd in store_writers(&chain, &db) {
            let o = run(cmd, Out::Piped);
            o.failed_clearly(&[&format!("{name} is a symbolic link")]);
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"my notes\n".repeat(1000));
        std::fs::remove_file(db.join(name)).unwrap();
        std::fs::rename(&kept, db.join(name)).unwrap();
    }
}

/// Two writers: `run --state disk` and `db verify` on a store another process holds for
/// writing (here this test, through the library) are refused naming that process (a second
/// run used to die on its first block with "nonce 0 too low"); once it is released both work.
#[test]
fn a_second_writer_is_refused_naming_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let (chain, db) = chain_and_store(tmp.path());
    let cmds = || store_writers(&chain, &db);
    let held: gigagas_store::Store = gigagas_store::Store::open(&db).unwrap();
    let holder = format!(
        "process {} holds this store for writing",
        std::process::id()
    );
    for cmd in cmds() {
        run(cmd, Out::Piped).failed_clearly(&[&holder]);
    }
    drop(held);
    for cmd in cmds() {
        let o = run(cmd, Out::Piped);
        assert_eq!(o.code, Some(0), "{o:?}");
    }
}
