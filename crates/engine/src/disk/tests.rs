//! The on-disk state's trie buffer: the same store whatever its bound, refused out of bounds.
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
        drop(store);
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
