//! `gigagas db init|verify` and `run --state disk` on the real binary: init → verify on a
//! generated chain, refusals (partial pre-state, non-empty or symlinked output, foreign
//! directory), and crash safety: the run is SIGKILLed at several points, the store must then
//! hold a whole block whose root verifies from scratch, and resuming must reach the same final
//! head as an uninterrupted run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use crate::gigagas;
use std::{
    path::Path,
    process::{Command, Stdio},
    time::Instant,
};

/// One real mainnet block (touched-only pre-state) from the bundled sample.
fn mainnet_block(dir: &Path) {
    let gigagas_data::DataSource::Archive { files, .. } =
        gigagas_data::DataSource::embedded().unwrap()
    else {
        unreachable!("the embedded sample is an archive")
    };
    for (rel, bytes) in files {
        if !rel.starts_with("blocks/") || rel.starts_with("blocks/46147/") {
            let path = dir.join(&rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A small generated chain (complete states, shipped BALs).
fn chain(dir: &Path, blocks: usize) -> std::path::PathBuf {
    let out = dir.join("chain");
    let n = blocks.to_string();
    let (ok, _, err) = gigagas(&[
        "gen",
        "mainnet-mix",
        "--blocks",
        &n,
        "--block-gas",
        "2000000",
        "--senders",
        "16",
        "--seed",
        "5",
        "--out",
        s(&out),
    ]);
    assert!(ok, "gen failed: {err}");
    out
}

/// `db verify`'s head line: "block N (hash), state root R = from scratch".
fn verified_head(db: &Path) -> (u64, String) {
    let (ok, out, err) = gigagas(&["db", "verify", s(db)]);
    assert!(ok, "db verify {}: {err}", db.display());
    let rest = out.split(": block ").nth(1).expect("head line");
    let number = rest.split_whitespace().next().unwrap().parse().unwrap();
    let root = rest
        .split("state root ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    (number, root)
}

/// `run --data DATA --state disk --db DB --root incremental`.
fn run_args<'a>(data: &'a Path, db: &'a Path) -> [&'a str; 9] {
    [
        "run",
        "--data",
        s(data),
        "--state",
        "disk",
        "--db",
        s(db),
        "--root",
        "incremental",
    ]
}

/// [`run_args`], to its end.
fn run_on_store(data: &Path, db: &Path) -> (bool, String, String) {
    gigagas(&run_args(data, db))
}

/// [`run_args`] on 2 threads with the trie buffer's bound set (`--trie-buffer`; `None`: the
/// default), output discarded, to be started (and killed).
fn run_disk_buffered(
    data: &Path,
    db: &Path,
    trie_buffer: Option<u64>,
    write_group: Option<usize>,
    wal: Option<bool>,
    extra: &[&str],
) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gigagas"));
    cmd.args(run_args(data, db)).args(extra);
    if let Some(bytes) = trie_buffer {
        cmd.args(["--trie-buffer", &bytes.to_string()]);
    }
    if let Some(blocks) = write_group {
        cmd.args(["--write-group", &blocks.to_string()]);
    }
    if let Some(on) = wal {
        cmd.args(["--wal", if on { "on" } else { "off" }]);
    }
    cmd.args(["--threads", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

#[test]
fn init_verify_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let data = chain(dir.path(), 2);
    let db = dir.path().join("db");
    let (ok, out, err) = gigagas(&["db", "init", "--data", s(&data), "--out", s(&db)]);
    assert!(ok, "{err}");
    assert!(out.contains("store created"), "{out}");
    let (number, _) = verified_head(&db);
    assert_eq!(number, 0);
    // No temporary directory is left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // An existing store is not overwritten.
    let (ok, _, err) = gigagas(&["db", "init", "--data", s(&data), "--out", s(&db)]);
    assert!(!ok && err.contains("not empty"), "{err}");
    // A symlink is refused.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
    let (ok, _, err) = gigagas(&["db", "init", "--data", s(&data), "--out", s(&link)]);
    assert!(!ok && err.contains("symbolic link"), "{err}");
    // A partial pre-state (the bundled mainnet sample) is refused.
    let sample = dir.path().join("sample");
    mainnet_block(&sample);
    let (ok, _, err) = gigagas(&[
        "db",
        "init",
        "--data",
        s(&sample),
        "--out",
        s(&dir.path().join("db2")),
    ]);
    assert!(!ok && err.contains("partial pre-state"), "{err}");
    assert!(!dir.path().join("db2").exists());
    // verify on something that is not a store.
    let (ok, _, err) = gigagas(&["db", "verify", s(&data)]);
    assert!(!ok && err.contains("not a gigagas store"), "{err}");
    // run --state disk from the init'ed store: every block, then nothing left to do.
    let (ok, out, err) = run_on_store(&data, &db);
    assert!(ok, "{err}");
    assert!(out.contains("= header"), "{out}");
    assert_eq!(verified_head(&db).0, 2);
    let (ok, out, err) = run_on_store(&data, &db);
    assert!(ok && out.contains("nothing to run"), "{out}{err}");
    // --state disk needs --db and an incremental root.
    let (ok, _, err) = gigagas(&["run", "--data", s(&data), "--state", "disk"]);
    assert!(!ok && err.contains("--db"), "{err}");
}

/// `run --state disk --cold`: every block verified reading a store whose page cache was
/// dropped, the bytes read shown per block and the cache drop left out of the wall time;
/// refused without a store or with overlapped stages, before any work.
#[test]
fn cold_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = chain(dir.path(), 3);
    let db = dir.path().join("db");
    let cold = |db: &Path, pipeline: &str, state: &str| {
        gigagas(&[
            "run",
            "--data",
            s(&data),
            "--state",
            state,
            "--db",
            s(db),
            "--root",
            "incremental",
            "--pipeline",
            pipeline,
            "--cold",
            "--threads",
            "2",
        ])
    };
    let (ok, out, err) = cold(&db, "off", "disk");
    assert!(ok, "{err}");
    assert_eq!(out.matches("= header").count(), 3, "{out}");
    // Each block line: bytes read from the device (with the pages per item read ahead
    // where there were any), then the reads that went to the store.
    assert_eq!(out.matches(" MiB").count(), 3, "{out}");
    assert_eq!(out.matches(" items read ahead").count(), 3, "{out}");
    assert_eq!(
        out.matches(" reads on demand  persist wait ").count(),
        3,
        "{out}"
    );
    assert!(out.contains("left out of the wall time"), "{out}");
    let head = verified_head(&db);
    assert_eq!(head.0, 3);
    // With a trie buffer asked for: the store is reopened between blocks with its tries
    // lagging (never rebuilt), the buffer journaled at the end; the same store.
    let buffered = dir.path().join("db-buffered");
    let mut args = run_args(&data, &buffered).to_vec();
    args.extend([
        "--pipeline",
        "off",
        "--cold",
        "--threads",
        "2",
        "--trie-buffer",
        "1M",
    ]);
    let (ok, out, err) = gigagas(&args);
    assert!(ok, "{err}");
    assert_eq!(out.matches("= header").count(), 3, "{out}");
    assert!(out.contains("trie buffer journaled at the end"), "{out}");
    assert!(!err.contains("rebuilding"), "{err}");
    assert_eq!(verified_head(&buffered), head);
    let fresh = dir.path().join("db2");
    let (ok, _, err) = cold(&fresh, "on", "disk");
    assert!(!ok && err.contains("--cold with --pipeline"), "{err}");
    let (ok, _, err) = cold(&fresh, "off", "memory");
    assert!(
        !ok && err.contains("with --state: applies to a state on disk only"),
        "{err}"
    );
    assert!(!fresh.exists(), "a refused run created {}", fresh.display());
}

/// `run --state disk --sync`: every policy gives the same verified blocks and the same
/// store (roots verified from scratch); `end` and `every-N` flush inside the timed run;
/// bad policies and combinations are refused by name before any work.
#[test]
fn sync_policies_give_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = chain(dir.path(), 3);
    let mut heads = Vec::new();
    // The overlay (the next block read through the last one's writes while they commit) on
    // by default, and off: the same store either way.
    for (policy, overlay) in [
        ("every-block", "on"),
        ("every-2", "on"),
        ("end", "on"),
        ("every-2", "off"),
    ] {
        let db = dir.path().join(format!("db-{policy}-{overlay}"));
        let mut args = vec![
            "run",
            "--data",
            s(&data),
            "--state",
            "disk",
            "--db",
            s(&db),
            "--root",
            "incremental",
            "--threads",
            "2",
            "--sync",
            policy,
        ];
        if overlay == "off" {
            args.extend(["--overlay", "off"]);
        }
        let (ok, out, err) = gigagas(&args);
        assert!(ok, "{policy}: {err}");
        assert_eq!(out.matches("= header").count(), 3, "{policy}: {out}");
        assert_eq!(
            out.contains("pipeline on, overlay on"),
            overlay == "on",
            "{policy} overlay {overlay}: {out}"
        );
        assert!(out.contains(&format!("--sync {policy}")), "{policy}: {out}");
        // Every policy ends with a timed flush: the trie buffer's (on by default), and with
        // every-N or end the sync it waits for as well.
        assert!(out.contains("the last flush"), "{policy}: {out}");
        heads.push(verified_head(&db));
    }
    assert_eq!(heads[0].0, 3);
    assert!(heads.iter().all(|h| *h == heads[0]), "{heads:?}");
    let fresh = dir.path().join("db-refused");
    for (args, named) in [
        (vec!["--sync", "every-0"], "every-N"),
        (vec!["--sync", "every-1000001"], "every-N"),
        (vec!["--sync", "sometimes"], "every-block"),
        (
            vec!["--sync", "end", "--pipeline", "off", "--cold"],
            "--cold",
        ),
        (
            vec!["--overlay", "off", "--pipeline", "off"],
            "--overlay with --pipeline",
        ),
        (vec!["--overlay", "maybe"], "--overlay"),
    ] {
        let mut all = vec![
            "run",
            "--data",
            s(&data),
            "--state",
            "disk",
            "--db",
            s(&fresh),
            "--root",
            "incremental",
        ];
        all.extend(args);
        let (ok, _, err) = gigagas(&all);
        assert!(!ok && err.contains(named), "{all:?}: {err}");
    }
    let (ok, _, err) = gigagas(&["run", "--data", s(&data), "--sync", "end"]);
    assert!(!ok && err.contains("--sync with --state"), "{err}");
    let (ok, _, err) = gigagas(&["run", "--data", s(&data), "--overlay", "on"]);
    assert!(
        !ok && err.contains("--overlay with --state: applies to a state on disk only"),
        "{err}"
    );
    assert!(!fresh.exists(), "a refused run created {}", fresh.display());
}

/// A store built by `db init` records the genesis allocation it hashed, so `run` on the same
/// chain does not hash it again; an altered allocation (another digest) is hashed and
/// refused, and a record whose root is not the genesis header's is refused too.
#[test]
fn a_store_spares_hashing_its_own_genesis_again() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bloated");
    let (ok, _, err) = crate::gen_bloated(&data, &[]);
    assert!(ok, "{err}");
    let init = |db: &Path| {
        let (ok, _, err) = gigagas(&["db", "init", "--data", s(&data), "--out", s(db)]);
        assert!(ok, "{err}");
    };
    let run = run_on_store;
    const SPARED: &str = "not hashed again";
    let db = dir.path().join("db");
    init(&db);
    let (ok, out, err) = run(&data, &db);
    assert!(ok, "{err}");
    assert!(err.contains(SPARED), "{err}");
    assert_eq!(out.matches("= header").count(), 2, "{out}");
    assert_eq!(verified_head(&db).0, 2);
    // The same chain with one more slot in its rule: another allocation, hashed and refused.
    let altered = dir.path().join("altered");
    std::fs::create_dir(&altered).unwrap();
    std::fs::copy(data.join("blocks.rlp"), altered.join("blocks.rlp")).unwrap();
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("chain.json")).unwrap()).unwrap();
    meta["storage_fill"][0]["slots"] = 5001.into();
    std::fs::write(altered.join("chain.json"), meta.to_string()).unwrap();
    let (ok, _, err) = run(&altered, &db);
    assert!(!ok && !err.contains(SPARED), "{err}");
    assert!(err.contains("genesis_hash says"), "{err}");
    // A record of this allocation with another root: the root is still checked.
    let db3 = dir.path().join("db3");
    init(&db3);
    {
        let store: gigagas_store::Store = gigagas_store::Store::open(&db3).unwrap();
        let mut known = store.genesis_alloc().unwrap().expect("db init records it");
        known.state_root = alloy_primitives::B256::repeat_byte(7);
        store.record_genesis_alloc(known).unwrap();
    }
    let (ok, _, err) = run(&data, &db3);
    assert!(!ok && err.contains(SPARED), "{err}");
    assert!(err.contains("the store's record is damaged"), "{err}");
    // The same record with chain.json's genesis_hash altered: the allocation is hashed, and
    // the chain, not the store, is blamed.
    let rehashed = dir.path().join("rehashed");
    std::fs::create_dir(&rehashed).unwrap();
    std::fs::copy(data.join("blocks.rlp"), rehashed.join("blocks.rlp")).unwrap();
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("chain.json")).unwrap()).unwrap();
    meta["genesis_hash"] = format!("{}", alloy_primitives::B256::repeat_byte(9)).into();
    std::fs::write(rehashed.join("chain.json"), meta.to_string()).unwrap();
    let (ok, _, err) = run(&rehashed, &db3);
    assert!(!ok, "{err}");
    assert!(
        err.contains("genesis_hash says") && !err.contains("record is damaged"),
        "{err}"
    );
}

/// SIGKILL at several points of a disk run; after each, the store holds a whole block that
/// verifies from scratch, and the head never goes back; resuming reaches the head of an
/// uninterrupted run. With the default trie buffer (256 MiB: these blocks never fill it, so
/// every kill after the first block leaves trie nodes unflushed, rebuilt by `db verify`'s
/// open) and the default write-ahead log (every block's flat state in the log only, replayed
/// by that open).
#[test]
fn kill_and_resume() {
    kill_and_resume_with(None, None, None, &[]);
}

/// [`kill_and_resume`] without the write-ahead log: every block's flat state written into
/// the store at its commit.
#[test]
fn kill_and_resume_without_the_log() {
    kill_and_resume_with(None, None, Some(false), &[]);
}

/// [`kill_and_resume`] writing 3 blocks per transaction (`--write-group 3`, every-3): kills
/// land while blocks are held in memory for their group; the store stays at the last
/// group written.
#[test]
fn kill_and_resume_with_write_groups() {
    kill_and_resume_with(None, Some(3), None, &[]);
}

/// [`kill_and_resume`] with a 1 MiB trie buffer, flushed every few blocks: kills land
/// during blocks with nodes buffered, and during or between flushes (with the log: the
/// flush's sync and the log started anew).
#[test]
fn kill_and_resume_with_flushes() {
    kill_and_resume_with(Some(1 << 20), None, None, &[]);
}

/// [`kill_and_resume`] with cold reads, a 1 MiB trie buffer and the log (`--pipeline off
/// --cold --trie-buffer 1M --wal on`): the store closed and reopened between blocks, the
/// buffer's flushes ending inside their blocks' commits.
#[test]
fn kill_and_resume_cold_with_the_log() {
    kill_and_resume_with(
        Some(1 << 20),
        None,
        Some(true),
        &["--pipeline", "off", "--cold"],
    );
}

/// Without a trie buffer: every block's nodes written with it.
#[test]
fn kill_and_resume_unbuffered() {
    kill_and_resume_with(Some(0), None, None, &[]);
}

fn kill_and_resume_with(
    trie_buffer: Option<u64>,
    write_group: Option<usize>,
    wal: Option<bool>,
    extra: &[&str],
) {
    let run_disk =
        |data: &Path, db: &Path| run_disk_buffered(data, db, trie_buffer, write_group, wal, extra);
    let dir = tempfile::tempdir().unwrap();
    let data = chain(dir.path(), 24);
    let reference = dir.path().join("reference");
    let t0 = Instant::now();
    assert!(run_disk(&data, &reference).status().unwrap().success());
    let full = t0.elapsed();
    let (last, final_root) = verified_head(&reference);
    assert_eq!(last, 24);

    let db = dir.path().join("db");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut heads = Vec::new();
    let mut killed = 0;
    let mut lagged = 0usize;
    // First a kill at a random moment of the start (store creation, loading, preparing),
    // then kills as soon as the store (read from this process while the run writes it)
    // reaches a random block.
    let early = full.mul_f64((next() % 300) as f64 / 1000.0);
    let mut child = run_disk(&data, &db).spawn().unwrap();
    std::thread::sleep(early);
    if child.try_wait().unwrap().is_none() {
        child.kill().unwrap(); // SIGKILL
        killed += 1;
    }
    child.wait().unwrap();
    if db.exists() {
        heads.push(verified_head(&db).0);
    }
    for _ in 0..8 {
        let start = heads.last().copied().unwrap_or(0);
        if start >= last - 1 {
            break;
        }
        // Small random steps, so that several kills land before the end.
        let target = start + 1 + next() % ((last - 1 - start) / 3 + 1);
        let mut child = run_disk(&data, &db).spawn().unwrap();
        let deadline = Instant::now() + full * 20;
        loop {
            if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                break;
            }
            // Beside the run: its head only (the tries may be in its trie buffer), or the
            // write-ahead log's last block (the store's own head stays at the last flush).
            let head =
                gigagas_store::Store::<gigagas_store::mdbx::Mdbx>::open_unrecovered(&db, true)
                    .ok()
                    .and_then(|store| store.head().ok().flatten())
                    .map(|h| h.number)
                    .max(
                        gigagas_store::wal_head(&db)
                            .ok()
                            .flatten()
                            .map(|h| h.number),
                    );
            if head.is_some_and(|n| n >= target) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed += 1;
        }
        child.wait().unwrap();
        // Whether the kill left trie nodes unflushed (`db verify` rebuilds them on open).
        let lag = gigagas_store::Store::<gigagas_store::mdbx::Mdbx>::open_unrecovered(&db, true)
            .ok()
            .and_then(|store| store.trie_lag().ok().flatten());
        lagged += usize::from(lag.is_some() || db.join(gigagas_store::WAL_FILE).exists());
        let (number, _) = verified_head(&db);
        if let Some(&previous) = heads.last() {
            assert!(number >= previous, "head went back: {previous} → {number}");
        }
        heads.push(number);
    }
    assert!(
        run_disk(&data, &db).status().unwrap().success(),
        "resume failed"
    );
    assert_eq!(verified_head(&db), (last, final_root));
    eprintln!(
        "trie buffer {trie_buffer:?}, write group {write_group:?}, wal {wal:?}: killed {killed} runs, {lagged} with trie nodes or flat state unflushed; heads after each kill: {heads:?}"
    );
    if trie_buffer == Some(0) {
        assert_eq!(lagged, 0);
    }
    // Runs were killed in the middle: some head strictly between the start and the end.
    assert!(killed > 0);
    assert!(heads.iter().any(|h| *h > 0 && *h < last), "{heads:?}");
}

/// A run's trie buffer journaled at its end (the default) is what the next run on the store
/// goes on from: a chain run in two halves (the first half a prefix data set) ends at the
/// same head and root as the whole chain in one run; any other opener writes the journal
/// into the trie tables; a damaged journal is removed and the tries rebuilt from the flat
/// state; `--trie-journal off` flushes instead; a journal without a buffer is refused.
#[test]
fn the_trie_journal_carries_a_run_into_the_next() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (short, long) = (chain(d1.path(), 4), chain(d2.path(), 8));
    let reference = d1.path().join("reference");
    let mut args = run_args(&long, &reference).to_vec();
    args.extend(["--trie-journal", "off"]);
    let (ok, out, err) = gigagas(&args);
    assert!(ok, "{err}");
    assert!(out.contains("trie buffer flushed at the end"), "{out}");
    assert!(!reference.join(gigagas_store::TRIE_JOURNAL).exists());
    let whole = verified_head(&reference);
    assert_eq!(whole.0, 8);

    let db = d1.path().join("db");
    let (ok, out, err) = run_on_store(&short, &db);
    assert!(ok, "{err}");
    assert!(out.contains("trie buffer journaled at the end"), "{out}");
    assert!(db.join(gigagas_store::TRIE_JOURNAL).is_file());
    // With the write-ahead log (the default) the store's own head stays at genesis: blocks
    // 1-4 are in its log, their trie nodes in the journal.
    assert_eq!(
        gigagas_store::wal_head(&db).unwrap().map(|h| h.number),
        Some(4)
    );
    let store =
        gigagas_store::Store::<gigagas_store::mdbx::Mdbx>::open_unrecovered(&db, true).unwrap();
    assert_eq!(store.head().unwrap().map(|h| h.number), Some(0));
    drop(store);
    let (ok, out, err) = run_on_store(&long, &db);
    assert!(ok, "{err}");
    assert!(
        err.contains("replayed 4 block(s)")
            && err.contains("goes on from the last run's journal")
            && err.contains("blocks 1..=4"),
        "{err}"
    );
    assert_eq!(out.matches("= header").count(), 4, "{out}");
    assert_eq!(verified_head(&db), whole);
    // `db verify` wrote the second run's journal into the tries: none is left.
    assert!(!db.join(gigagas_store::TRIE_JOURNAL).exists());

    // A damaged journal: removed, the tries rebuilt from the flat state.
    let damaged = d1.path().join("damaged");
    assert!(run_on_store(&short, &damaged).0);
    let journal = damaged.join(gigagas_store::TRIE_JOURNAL);
    let bytes = std::fs::read(&journal).unwrap();
    std::fs::write(&journal, &bytes[..bytes.len() / 2]).unwrap();
    let (ok, _, err) = gigagas(&["db", "verify", s(&damaged)]);
    assert!(
        ok && err.contains("unreadable") && err.contains("rebuilding"),
        "{err}"
    );
    assert!(!journal.exists());
    let (ok, out, err) = run_on_store(&long, &damaged);
    assert!(ok && out.matches("= header").count() == 4, "{err}");
    assert_eq!(verified_head(&damaged), whole);

    let fresh = d1.path().join("refused");
    let mut refused = run_args(&short, &fresh).to_vec();
    refused.extend(["--trie-journal", "on", "--trie-buffer", "0"]);
    let (ok, _, err) = gigagas(&refused);
    assert!(
        !ok && err.contains("--trie-journal") && err.contains("--trie-buffer"),
        "{err}"
    );
    assert!(!fresh.exists(), "a refused run created {}", fresh.display());
}
