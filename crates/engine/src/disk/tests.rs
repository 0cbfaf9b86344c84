//! The on-disk state's trie buffer: the same store whatever its bound, refused out of bounds;
//! write groups: the same store whatever their size, each block in the store only once its
//! group's last block committed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use super::*;
use crate::{prepare, run_pipeline_with, BlockCase, Mode, PipelineOptions, RootMode};
use gigagas_exec::{Scheduler, WorkerPool};

fn chain() -> gigagas_data::Dataset {
    let options = gigagas_gen::GenOptions {
        workload: gigagas_gen::Workload::MainnetMix,
        blocks: 5,
        block_gas: 3_000_000,
        seed: 40,
        spec: revm::primitives::hardfork::SpecId::AMSTERDAM,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 12,
        verify_threads: 2,
        precompiles: Vec::new(),
        slots: None,
        spread: false,
        existing_slots: false,
    };
    let dir = tempfile::tempdir().unwrap();
    gigagas_gen::generate(&options, &|_| {})
        .unwrap()
        .write(dir.path())
        .unwrap();
    gigagas_data::load(&gigagas_data::DataSource::open(dir.path()).unwrap()).unwrap()
}

/// A store in a new directory holding the chain's pre-state (its directory, kept alive by the
/// caller, and the store's path), closed.
fn genesis_store(data: &gigagas_data::Dataset) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let first = &data.blocks[0];
    let store: Store = Store::create(&path).unwrap();
    store
        .load(
            &first.pre_state,
            first.number() - 1,
            first.header.parent_hash,
        )
        .unwrap();
    (dir, path)
}

/// The chain through the pipeline with trie buffers of every size (none, flushed after
/// every block, flushed only at the end): the header's roots, a store that verifies from
/// scratch and holds the same nodes, per-block write statistics, and flushes where the
/// bound says.
#[test]
fn a_trie_buffer_gives_the_same_store_flushing_where_its_bound_says() {
    let data = chain();
    let cases: Vec<BlockCase<'_>> = data.blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let mut stores = Vec::new();
    // (bound, journal at the end): none, a flush every block, one flush at the end, the
    // journal at the end (written into the tries by the next open).
    for (bound, journal) in [
        (0u64, false),
        (1, false),
        (DEFAULT_TRIE_BUFFER, false),
        (DEFAULT_TRIE_BUFFER, true),
    ] {
        let (_dir, path) = genesis_store(&data);
        let disk = DiskRoot::new(Store::open_with(&path, false).unwrap())
            .with_sync(SyncPolicy::NODE)
            .unwrap()
            .with_trie_journal(journal);
        // A bound of 1 byte (below what `with_trie_buffer` takes): a flush every block.
        let disk = Arc::new(DiskRoot {
            trie_buffer: bound,
            ..disk
        });
        let options = PipelineOptions {
            root: RootMode::Incremental,
            threads: 2,
            ..PipelineOptions::new(Mode::Parallel {
                threads: 2,
                scheduler: Scheduler::Ordered,
            })
        };
        let pool = WorkerPool::new(2);
        let run = run_pipeline_with(
            &cases,
            &options,
            Some(&pool),
            Some(Box::new(Shared(disk.clone()))),
        )
        .unwrap_or_else(|e| panic!("bound {bound}: {e}"));
        for (b, input) in run.blocks.iter().zip(&data.blocks) {
            assert_eq!(b.state_root, Some(input.header.state_root), "bound {bound}");
        }
        let writes = disk.block_writes();
        assert_eq!(writes.len(), data.blocks.len());
        let flushes = writes.iter().filter(|w| w.flush.is_some()).count();
        match bound {
            0 => assert!(flushes == 0 && disk.final_flush().is_none()),
            1 => {
                assert_eq!(flushes, data.blocks.len(), "{writes:?}");
                let f = writes[0].flush.unwrap();
                assert!(f.entries > 0 && f.bytes > 0 && f.blocks == 1, "{f:?}");
                assert!(f.pages.unwrap() > 0);
                assert!(disk.final_flush().is_none());
            }
            _ => {
                assert_eq!(flushes, 0);
                assert_eq!(
                    writes.last().unwrap().buffer_blocks,
                    data.blocks.len() as u64
                );
                let last = data.blocks.last().unwrap().number();
                if journal {
                    assert!(disk.final_flush().is_none());
                    let j = disk.final_journal().unwrap();
                    assert_eq!((j.blocks, j.through), (data.blocks.len() as u64, last));
                    assert!(j.entries > 0 && j.file_bytes > 0);
                    assert!(path.join(gigagas_store::TRIE_JOURNAL).is_file());
                } else {
                    assert!(disk.final_journal().is_none());
                    let f = disk.final_flush().unwrap();
                    assert_eq!((f.blocks, f.through), (data.blocks.len() as u64, last));
                }
            }
        }
        drop(disk);
        // Opening writes a journal into the tries.
        let store: Store = Store::open(&path).unwrap();
        assert_eq!(store.trie_lag().unwrap(), None);
        assert!(!path.join(gigagas_store::TRIE_JOURNAL).exists());
        let verified = store.verify().unwrap();
        assert!(
            verified.ok(),
            "bound {bound}, journal {journal}: {verified:?}"
        );
        let (memory, _) = store.to_memory().unwrap();
        stores.push(memory);
    }
    assert!(stores.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_trie_buffer_too_small_or_too_large_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let store: Store = Store::create(&dir.path().join("db")).unwrap();
    let disk = DiskRoot::new(store);
    let e = disk.with_trie_buffer(4096).unwrap_err();
    assert!(
        e.contains("state.trie_buffer = 4096") && e.contains("1048576"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let store: Store = Store::create(&dir.path().join("db")).unwrap();
    let e = DiskRoot::new(store).with_trie_buffer(1 << 60).unwrap_err();
    assert!(e.contains("state.trie_buffer = 1152921504606846976"), "{e}");
    assert!(e.contains("half of this machine's memory"), "{e}");
}

/// The chain through the pipeline writing 1 or 3 blocks per transaction (every-3, with and
/// without a trie buffer): the header's roots, the same store verifying from scratch; a
/// held block is in the store only after its group's last block committed, and the run's
/// end writes a short last group.
#[test]
fn write_groups_give_the_same_store_and_hold_blocks_until_their_group_commits() {
    let data = chain();
    let mut stores = Vec::new();
    for (group, buffer) in [(1, DEFAULT_TRIE_BUFFER), (3, DEFAULT_TRIE_BUFFER), (3, 0)] {
        let (_dir, path) = genesis_store(&data);
        let disk = DiskRoot::new(Store::open_with(&path, false).unwrap())
            .with_sync(SyncPolicy::Every(3))
            .unwrap()
            .with_trie_buffer(buffer)
            .unwrap()
            .with_write_group(group)
            .unwrap();
        let disk = Arc::new(disk);
        // Block by block, back to back through the trait: the store's head after each commit.
        let mut heads = Vec::new();
        for input in &data.blocks {
            let changes = crate::root::change_set(
                input.access_list.as_ref().unwrap(),
                &crate::root::touched_post_state(
                    &input.pre_state,
                    input.access_list.as_ref().unwrap(),
                ),
            );
            let pending = disk.compute(input, &changes).unwrap();
            assert_eq!(
                disk.commit(input, pending).unwrap(),
                input.header.state_root
            );
            let head = disk
                .with_store(|s| Ok(s.head().unwrap().unwrap().number))
                .unwrap();
            heads.push(head);
        }
        let n = data.blocks[0].number();
        let expected: Vec<u64> = (0..data.blocks.len() as u64)
            .map(|i| match group {
                1 => n + i,
                // Blocks 1-2 held (the store at the genesis), written with block 3; 4-5 held.
                _ => n - 1 + (i + 1) / 3 * 3,
            })
            .collect();
        assert_eq!(heads, expected, "group {group}, buffer {buffer}");
        let writes = disk.block_writes();
        assert!(disk.finish().unwrap());
        let head = disk
            .with_store(|s| Ok(s.head().unwrap().unwrap().number))
            .unwrap();
        assert_eq!(
            head,
            data.blocks.last().unwrap().number(),
            "the end writes the rest"
        );
        if group > 1 {
            let held: Vec<bool> = writes.iter().map(|w| w.write_ns == 0).collect();
            assert_eq!(held, [true, true, false, true, true], "{writes:?}");
            assert!(
                disk.block_writes().last().unwrap().write_ns > 0,
                "the short last group"
            );
        }
        drop(disk);
        let store: Store = Store::open(&path).unwrap();
        let verified = store.verify().unwrap();
        assert!(
            verified.ok(),
            "group {group}, buffer {buffer}: {verified:?}"
        );
        stores.push(store.to_memory().unwrap().0);
    }
    assert!(stores.windows(2).all(|w| w[0] == w[1]));
    // Out of bounds: refused by name.
    let dir = tempfile::tempdir().unwrap();
    let store: Store = Store::create(&dir.path().join("db")).unwrap();
    let e = DiskRoot::new(store).with_write_group(17).unwrap_err();
    assert!(e.contains("state.write_group = 17"), "{e}");
}

/// The chain through the write-ahead log (every sync policy; a buffer that never fills and
/// one that flushes every block): the header's roots; the store's own head stays at the last
/// flush while the log's last block is the one committed; what the run leaves (the store,
/// its log and its trie journal, or the store flushed) opens at the last block and verifies
/// from scratch, equal to the store written without the log.
#[test]
fn the_write_ahead_log_gives_the_same_store_and_the_store_moves_only_at_a_flush() {
    let data = chain();
    let last = data.blocks.last().unwrap().number();
    let first = data.blocks[0].number();
    let mut stores = Vec::new();
    use SyncPolicy::{End, Every, EveryBlock};
    let full = DEFAULT_TRIE_BUFFER;
    // (log, buffer, sync, journal, overlay, cold)
    for (wal, buffer, sync, journal, overlay, cold) in [
        (false, full, Every(3), true, true, false),
        (true, full, Every(3), true, true, false),
        (true, full, EveryBlock, false, true, false),
        (true, full, End, true, true, false),
        // A bound of 1 byte (below what `with_trie_buffer` takes): a flush every block.
        (true, 1, Every(2), true, true, false),
        // Without the overlay (the stages back to back), and with cold reads: the store
        // closed, its page cache dropped and reopened between blocks, the buffer and the
        // log kept.
        (true, full, Every(3), true, false, false),
        (true, full, EveryBlock, true, false, true),
        (true, 1, EveryBlock, false, false, true),
    ] {
        let what = format!(
            "wal {wal}, buffer {buffer}, sync {sync}, journal {journal}, overlay {overlay}, cold {cold}"
        );
        let (_dir, path) = genesis_store(&data);
        let disk = DiskRoot::new(Store::open_with(&path, sync.durable_commits()).unwrap())
            .with_sync(sync)
            .unwrap()
            .with_trie_journal(journal);
        let disk = DiskRoot {
            trie_buffer: buffer,
            cold,
            ..disk.with_overlay(overlay)
        }
        .with_wal(wal)
        .unwrap();
        let disk = Arc::new(disk);
        let mut heads = Vec::new();
        for input in &data.blocks {
            let changes = crate::root::change_set(
                input.access_list.as_ref().unwrap(),
                &crate::root::touched_post_state(
                    &input.pre_state,
                    input.access_list.as_ref().unwrap(),
                ),
            );
            let pending = disk.compute(input, &changes).unwrap();
            assert_eq!(
                disk.commit(input, pending).unwrap(),
                input.header.state_root,
                "{what}"
            );
            if cold {
                disk.between_blocks().unwrap();
            }
            heads.push(
                disk.with_store(|s| Ok(s.head().unwrap().unwrap().number))
                    .unwrap(),
            );
            if wal {
                // The log's last block: the newest segment's, else (a segment just started
                // by a flush) the older one's until that flush retires it.
                let logged = gigagas_store::wal_head(&path).unwrap().map(|h| h.number);
                assert!(
                    logged == Some(input.number()) || (buffer == 1 && logged.is_none()),
                    "{what}: block {} logged as {logged:?}",
                    input.number()
                );
            }
        }
        for (head, b) in heads.iter().zip(&data.blocks) {
            match (wal, buffer) {
                // Nothing written into the store: the buffer never fills.
                (true, DEFAULT_TRIE_BUFFER) => assert_eq!(*head, first - 1, "{what}"),
                // Every block fills the buffer: with the log it is flushed in the
                // background (the one before waited for first), so the store is at the
                // block or the one before.
                (true, _) => assert!(
                    *head + 1 >= b.number() && *head <= b.number(),
                    "{what}: store at {head} after block {}",
                    b.number()
                ),
                _ => assert_eq!(*head, b.number(), "{what}"),
            }
        }
        if wal {
            assert!(
                disk.block_writes().iter().all(|w| w.wal_bytes > 0),
                "{what}: {:?}",
                disk.block_writes()
            );
        }
        // Something left to make durable at the end, except where every block's flush
        // ended in its commit (cold reads) and every block's log was synced.
        let everything_done = cold && buffer == 1 && sync == SyncPolicy::EveryBlock;
        assert_eq!(disk.finish().unwrap(), !everything_done, "{what}");
        drop(disk);
        let store: Store = Store::open(&path).unwrap();
        assert_eq!(store.head().unwrap().unwrap().number, last, "{what}");
        assert!(!path.join(gigagas_store::WAL_FILE).exists(), "{what}");
        let verified = store.verify().unwrap();
        assert!(verified.ok(), "{what}: {verified:?}");
        stores.push(store.to_memory().unwrap().0);
    }
    assert!(stores.windows(2).all(|w| w[0] == w[1]));
    // Without a trie buffer: refused by name.
    let dir = tempfile::tempdir().unwrap();
    let store: Store = Store::create(&dir.path().join("db")).unwrap();
    let e = DiskRoot::new(store)
        .with_trie_buffer(0)
        .unwrap()
        .with_wal(true)
        .unwrap_err();
    assert!(e.contains("state.wal"), "{e}");
}

/// A `DiskRoot` the test keeps a handle on while the pipeline owns the state.
struct Shared(Arc<DiskRoot>);

impl IncrementalState for Shared {
    fn compute(
        &self,
        input: &BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String> {
        self.0.compute(input, changes)
    }
    fn commit(&self, input: &BlockInput, pending: PendingRoot) -> Result<B256, String> {
        self.0.commit(input, pending)
    }
    fn overlays(&self) -> bool {
        self.0.overlays()
    }
    fn snapshot(&self, readers: usize) -> Result<Option<DiskSnapshot>, String> {
        self.0.snapshot(readers)
    }
    fn finish(&self) -> Result<bool, String> {
        self.0.finish()
    }
}
