//! Execution reading the on-disk store: a generated chain run through the pipeline with its
//! state in a `gigagas-store` directory gives the header's roots in every mode, the store
//! ends at the last block and verifies, and a store whose state differs from the chain's is
//! caught by execution itself (so the blocks really execute against the disk, not against
//! the in-memory pre-state).

use crate::common;

use alloy_primitives::keccak256;
use gigagas_engine::disk::ColdIndex;
use gigagas_engine::{
    prepare, run_pipeline_with, BalVariant, BlockCase, DiskRoot, Mode, PipelineOptions, RootMode,
};
use gigagas_exec::{Scheduler, WorkerPool};
use gigagas_store::{codec, kv::Backend, kv::KvRead, kv::KvWrite, kv::Table, mdbx::Mdbx, Store};
use std::{path::Path, sync::OnceLock};

fn chain() -> &'static gigagas_data::Dataset {
    static DATA: OnceLock<gigagas_data::Dataset> = OnceLock::new();
    DATA.get_or_init(|| common::generated_chain(4, 21))
}

/// A store holding the chain's genesis (the first block's pre-state).
fn genesis_store(path: &Path) {
    let first = &chain().blocks[0];
    let store: Store = Store::create(path).unwrap();
    store
        .load(
            &first.pre_state,
            first.number() - 1,
            first.header.parent_hash,
        )
        .unwrap();
}

fn run(
    path: &Path,
    mode: Mode,
    overlap: bool,
    mega: usize,
) -> Result<gigagas_engine::PipelineRun, String> {
    let cases: Vec<BlockCase<'_>> = chain().blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let options = PipelineOptions {
        root: RootMode::Incremental,
        overlap,
        mega,
        ..PipelineOptions::new(mode)
    };
    run_with(path, &cases, &options, None)
}

fn run_with(
    path: &Path,
    cases: &[BlockCase<'_>],
    options: &PipelineOptions,
    cold: Option<ColdIndex>,
) -> Result<gigagas_engine::PipelineRun, String> {
    let pool = WorkerPool::new(options.mode.threads());
    let mut disk = DiskRoot::new(Store::open(path).unwrap());
    if let Some(index) = cold {
        disk = disk.make_cold(index)?;
    }
    run_pipeline_with(cases, options, Some(&pool), Some(Box::new(disk))).map_err(|e| e.to_string())
}

/// Every BAL variant on the store, warm and cold: the same verified roots; what the list does
/// not carry is read on demand, and the counts say so (`full` and `keys` read nothing but code
/// and creation probes while executing, `writes` reads what is only read, `none` everything).
#[test]
fn every_bal_variant_gives_the_header_roots_and_counts_its_reads() {
    let cases: Vec<BlockCase<'_>> = chain().blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let parallel = Mode::Parallel {
        threads: 2,
        scheduler: Scheduler::Ordered,
    };
    for cold in [false, true] {
        let mut reads = std::collections::BTreeMap::new();
        for bal in BalVariant::ALL {
            let mode = if bal == BalVariant::None {
                Mode::SequentialNoBal
            } else {
                parallel
            };
            let options = PipelineOptions {
                root: RootMode::Incremental,
                overlap: !cold,
                threads: 2,
                bal,
                // Two of the overlapped variants verify, hash and commit (MDBX's write
                // transactions) on the stages' own pool.
                stage_threads: if !cold && matches!(bal, BalVariant::Keys | BalVariant::Writes) {
                    2
                } else {
                    0
                },
                ..PipelineOptions::new(mode)
            };
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("db");
            genesis_store(&path);
            let run = run_with(&path, &cases, &options, cold.then_some(ColdIndex::Dropped))
                .unwrap_or_else(|e| panic!("--bal {bal} cold {cold}: {e}"));
            assert_eq!(run.bal, bal);
            assert_eq!(run.stage_threads, options.stage_threads);
            for (b, input) in run.blocks.iter().zip(&chain().blocks) {
                assert!(b.root_checked, "--bal {bal}: block {}", b.number);
                assert_eq!(b.state_root, Some(input.header.state_root), "--bal {bal}");
            }
            let store: Store = Store::open(&path).unwrap();
            assert!(store.verify().unwrap().ok(), "--bal {bal}");
            let n: u64 = run.blocks.iter().map(|b| b.demand_reads.unwrap()).sum();
            reads.insert(bal, n);
            if bal == BalVariant::Keys {
                // Every account and slot the list names is read ahead, once (the trie nodes on
                // its changed paths too when those reads went to the device: on a store this
                // small they may all sit in pages the snapshot's opening already read).
                for (b, input) in run.blocks.iter().zip(&chain().blocks) {
                    let list = input.access_list.as_ref().unwrap();
                    let values: u64 = list
                        .iter()
                        .map(|a| 1 + (a.storage_changes.len() + a.storage_reads.len()) as u64)
                        .sum();
                    let ahead = b.read_ahead.unwrap();
                    assert!(
                        ahead >= values,
                        "cold {cold}: block {}: {ahead} < {values}",
                        b.number
                    );
                }
            }
        }
        let (full, keys, writes, none) = (
            reads[&BalVariant::Full],
            reads[&BalVariant::Keys],
            reads[&BalVariant::Writes],
            reads[&BalVariant::None],
        );
        assert_eq!(full, keys, "cold {cold}: {reads:?}");
        assert!(keys < writes && writes < none, "cold {cold}: {reads:?}");
        // What a block only reads is a real share of a generated chain's reads.
        assert!(none > 4 * keys, "cold {cold}: {reads:?}");
    }
}

/// Cold reads that keep the store's index cached reach every header's root, and leave a
/// store that verifies, as cold reads that drop it do.
#[test]
fn cold_reads_keeping_the_index_give_the_header_roots() {
    let cases: Vec<BlockCase<'_>> = chain().blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let options = PipelineOptions {
        root: RootMode::Incremental,
        overlap: false,
        threads: 2,
        ..PipelineOptions::new(Mode::Parallel {
            threads: 2,
            scheduler: Scheduler::Ordered,
        })
    };
    for index in [ColdIndex::Dropped, ColdIndex::Cached] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        genesis_store(&path);
        let run = run_with(&path, &cases, &options, Some(index)).unwrap();
        assert_eq!(run.blocks.len(), chain().blocks.len());
        for (b, input) in run.blocks.iter().zip(&chain().blocks) {
            assert!(b.root_checked, "{index:?}: block {}", b.number);
            assert_eq!(b.state_root, Some(input.header.state_root), "{index:?}");
        }
        let store: Store = Store::open(&path).unwrap();
        assert!(store.verify().unwrap().ok(), "{index:?}");
    }
}

/// A variant and a mode that contradict each other are refused before anything runs.
#[test]
fn a_variant_without_its_mode_is_refused() {
    let cases: Vec<BlockCase<'_>> = chain().blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    genesis_store(&path);
    let parallel = Mode::Parallel {
        threads: 1,
        scheduler: Scheduler::Ordered,
    };
    for (mode, bal, says) in [
        (
            parallel,
            BalVariant::None,
            "bal none runs a block without a list",
        ),
        (Mode::SequentialNoBal, BalVariant::Writes, "no list"),
    ] {
        let options = PipelineOptions {
            root: RootMode::Incremental,
            bal,
            ..PipelineOptions::new(mode)
        };
        let err = run_with(&path, &cases, &options, None).unwrap_err();
        assert!(err.contains(says), "{mode} --bal {bal}: {err}");
    }
}

#[test]
fn blocks_execute_against_the_store() {
    let mega_2t = Mode::Parallel {
        threads: 2,
        scheduler: Scheduler::GasUsed,
    };
    for (mode, overlap, mega) in [
        (Mode::Sequential, false, 1),
        // Mega-blocks on the store: one snapshot per unit, every block rooted and written.
        (mega_2t, false, 2),
        (mega_2t, true, 3),
        (
            Mode::Parallel {
                threads: 1,
                scheduler: Scheduler::GasUsed,
            },
            true,
            1,
        ),
        (
            Mode::Parallel {
                threads: 2,
                scheduler: Scheduler::GasUsed,
            },
            false,
            1,
        ),
        (
            Mode::Parallel {
                threads: 2,
                scheduler: Scheduler::Ordered,
            },
            true,
            1,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        genesis_store(&path);
        let run = run(&path, mode, overlap, mega)
            .unwrap_or_else(|e| panic!("{mode} overlap {overlap} mega {mega}: {e}"));
        let last = chain().blocks.last().unwrap();
        assert_eq!(run.blocks.len(), chain().blocks.len());
        for (b, input) in run.blocks.iter().zip(&chain().blocks) {
            assert!(b.root_checked, "block {}", b.number);
            assert_eq!(b.state_root, Some(input.header.state_root));
            // Prefetch read the unit's BALs' accounts and slots from the store: a real span
            // (on the unit's first block).
            let prefetch = b.stages["prefetch"];
            assert!(
                b.unit != b.number || prefetch.end_ns > prefetch.start_ns,
                "block {}: {prefetch:?}",
                b.number
            );
        }
        let store: Store = Store::open(&path).unwrap();
        let head = store.head().unwrap().unwrap();
        assert_eq!((head.number, head.hash), (last.number(), last.hash));
        assert!(store.verify().unwrap().ok());
    }
}

/// Adds 1 wei to `address`'s balance in the store at `path`, behind the trie's back (its
/// nodes still hash the old leaf): a store that differs from the chain's state.
fn add_one_wei(path: &Path, address: alloy_primitives::Address) {
    let raw = Mdbx::open(path, false, true).unwrap();
    let txn = raw.write().unwrap();
    let key = keccak256(address);
    let bytes = txn.get(Table::Accounts, key.as_slice()).unwrap().unwrap();
    let mut leaf = codec::decode_account(key.as_slice(), &bytes).unwrap();
    leaf.balance += alloy_primitives::U256::from(1);
    txn.put(
        Table::Accounts,
        key.as_slice(),
        &codec::encode_account(&leaf),
    )
    .unwrap();
    txn.commit().unwrap();
}

/// One account's balance changed in the store behind the trie's back: the in-memory pre-state
/// is still right, so only execution reading the disk can notice — and it must, naming the
/// block and the transaction.
#[test]
fn a_store_that_differs_is_caught_by_execution() {
    let first = &chain().blocks[0];
    let senders = gigagas_exec::recover_senders(first).unwrap();
    let sender = senders[0];
    for mode in [
        Mode::Sequential,
        Mode::Parallel {
            threads: 2,
            scheduler: Scheduler::GasUsed,
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        genesis_store(&path);
        add_one_wei(&path, sender);
        let e = run(&path, mode, true, 1).unwrap_err();
        eprintln!("{mode}: {e}");
        assert!(
            e.contains(&format!("block {}", first.number())),
            "{mode}: {e}"
        );
        assert!(
            e.to_lowercase()
                .contains(&format!("{sender}").to_lowercase())
                || e.contains("tx"),
            "{mode}: {e}"
        );
        // Nothing was written: the failing block is the first, so the store is at genesis.
        let store: Store = Store::open(&path).unwrap();
        assert_eq!(
            store.head().unwrap().unwrap().number,
            first.number() - 1,
            "{mode}"
        );
    }
}

/// With the overlay, block N+1 is prefetched, executed and hashed against block N's writes
/// held in memory while N's (slowed) commit runs (by construction the early stage does not
/// wait for it), and the chain still ends at the header's
/// roots with a store that verifies from scratch; without it, no block is computed before
/// the one before it committed. Both runs leave the same store.
#[test]
fn the_overlay_runs_the_next_block_while_the_last_one_commits() {
    let cases: Vec<BlockCase<'_>> = chain().blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let mut digests = Vec::new();
    for overlay in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        genesis_store(&path);
        let log = std::sync::Arc::default();
        let state = common::SlowCommits {
            inner: DiskRoot::new(Store::open(&path).unwrap()).with_overlay(overlay),
            log: std::sync::Arc::clone(&log),
            commit_ms: 150,
            compute_ms: 0,
        };
        let options = PipelineOptions {
            root: RootMode::Incremental,
            threads: 2,
            ..PipelineOptions::new(Mode::Parallel {
                threads: 2,
                scheduler: Scheduler::Ordered,
            })
        };
        let pool = WorkerPool::new(2);
        let run = run_pipeline_with(&cases, &options, Some(&pool), Some(Box::new(state)))
            .unwrap_or_else(|e| panic!("overlay {overlay}: {e}"));
        assert_eq!(run.overlay, overlay);
        for (b, input) in run.blocks.iter().zip(&chain().blocks) {
            assert!(b.root_checked, "overlay {overlay}: block {}", b.number);
            assert_eq!(b.state_root, Some(input.header.state_root));
        }
        let log = log.lock().unwrap().clone();
        let at = |what, n| log.iter().position(|e| *e == (what, n)).unwrap();
        let early: Vec<u64> = chain().blocks[1..]
            .iter()
            .map(|b| b.number())
            .filter(|&n| at("compute", n) < at("committed", n - 1))
            .collect();
        if overlay {
            // Later blocks were computed during the (150 ms) commit before them: all of them
            // on a quiet machine; at least one however busy it is.
            assert!(!early.is_empty(), "{log:?}");
        } else {
            assert!(early.is_empty(), "{log:?}");
        }
        let store: Store = Store::open(&path).unwrap();
        let verified = store.verify().unwrap();
        assert!(verified.ok(), "overlay {overlay}: {verified:?}");
        let (memory, codes) = store.to_memory().unwrap();
        digests.push((store.head().unwrap(), memory, codes));
    }
    assert_eq!(digests[0].0, digests[1].0);
    assert_eq!(digests[0].2, digests[1].2);
    assert_eq!(
        gigagas_store::first_difference(&digests[0].1, &digests[1].1),
        None
    );
}

/// The changes block `input` makes, as the store's root takes them: from its BAL, as the
/// pipeline's incremental root derives them.
fn changes_of(input: &gigagas_data::BlockInput) -> gigagas_trie::ChangeSet {
    let bal = input.access_list.as_ref().unwrap();
    gigagas_engine::change_set(
        bal,
        &gigagas_engine::touched_post_state(&input.pre_state, bal),
    )
}

/// A reader taking snapshots over and over while blocks are computed and committed never
/// sees a state older than the last block computed: a block's layer is dropped only after
/// its write transaction committed (dropping it first would open a window, as long as the
/// durable commit, where a snapshot has neither the layer nor the block).
#[test]
fn a_snapshot_never_misses_a_block_that_is_committing() {
    use gigagas_engine::IncrementalState;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        genesis_store(&path);
        let disk = DiskRoot::new(Store::open(&path).unwrap());
        let computed = AtomicU64::new(chain().blocks[0].number() - 1);
        let done = AtomicBool::new(false);
        let looks = AtomicU64::new(0);
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                while !done.load(SeqCst) {
                    let expect = computed.load(SeqCst);
                    let snap = disk.snapshot(2).unwrap().unwrap();
                    let head = snap.view().kv().get(Table::Meta, b"head").unwrap().unwrap();
                    let head = codec::decode_head(&head).unwrap();
                    assert!(
                        head.number >= expect,
                        "a snapshot read block {} after block {expect} was computed",
                        head.number
                    );
                    looks.fetch_add(1, SeqCst);
                }
            });
            // The reader is looking before the first block is computed (however busy the
            // machine), and looks on while every block commits.
            while looks.load(SeqCst) == 0 && !reader.is_finished() {
                std::thread::yield_now();
            }
            for input in &chain().blocks {
                let pending = disk.compute(input, &changes_of(input)).unwrap();
                computed.store(input.number(), SeqCst);
                disk.commit(input, pending).unwrap();
            }
            done.store(true, SeqCst);
        });
        disk.finish().unwrap();
        drop(disk);
        let store: Store = Store::open(&path).unwrap();
        assert_eq!(
            store.head().unwrap().unwrap().number,
            chain().blocks.last().unwrap().number()
        );
        assert!(store.verify().unwrap().ok());
    }
}

/// With the overlay, a block that fails in execution after the blocks behind it were already
/// computed over its writes in memory leaves the store at its parent: nothing computed after
/// it is written, and the store verifies.
#[test]
fn a_later_block_that_fails_leaves_the_store_at_its_parent() {
    // An account whose balance a later block changes and no block before it touches.
    let blocks = &chain().blocks;
    let (k, account) = (1..blocks.len())
        .find_map(|k| {
            let earlier: std::collections::HashSet<_> = blocks[..k]
                .iter()
                .flat_map(|b| b.access_list.as_ref().unwrap().iter().map(|a| a.address))
                .collect();
            blocks[k]
                .access_list
                .as_ref()
                .unwrap()
                .iter()
                .find(|a| !a.balance_changes.is_empty() && !earlier.contains(&a.address))
                .map(|a| (k, a.address))
        })
        .expect("the chain has an account first touched after its first block");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    genesis_store(&path);
    add_one_wei(&path, account);
    let parallel = Mode::Parallel {
        threads: 2,
        scheduler: Scheduler::Ordered,
    };
    let e = run(&path, parallel, true, 1).unwrap_err();
    assert!(e.contains(&format!("block {}", blocks[k].number())), "{e}");
    // The blocks' trie nodes were in the run's trie buffer: opening rebuilds them from the
    // flat state, whose damaged balance no longer hashes to the head's root, and says so.
    let e = Store::<Mdbx>::open(&path).unwrap_err().to_string();
    assert!(e.contains("flat state is inconsistent"), "{e}");
    let store: Store = Store::open_unrecovered(&path, true).unwrap();
    let head = store.head().unwrap().unwrap();
    assert_eq!(
        (head.number, head.hash),
        (blocks[k - 1].number(), blocks[k - 1].hash)
    );
}
