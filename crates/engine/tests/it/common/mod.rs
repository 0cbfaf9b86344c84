//! Shared by the engine's tests: a small generated chain (complete states, shipped BALs).

/// A `mainnet-mix` chain of `blocks` 3M-gas Amsterdam blocks from `seed`, loaded.
pub fn generated_chain(blocks: usize, seed: u64) -> gigagas_data::Dataset {
    let options = gigagas_gen::GenOptions {
        workload: gigagas_gen::Workload::MainnetMix,
        blocks,
        block_gas: 3_000_000,
        seed,
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

/// A node store (`inner`) with every commit slowed down by `commit_ms` and every compute by
/// `compute_ms`, logging when each block's compute started and its commit ended (as positions
/// in one sequence); everything else is the inner store's.
pub struct SlowCommits<S> {
    pub inner: S,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<(&'static str, u64)>>>,
    pub commit_ms: u64,
    pub compute_ms: u64,
}

impl<S: gigagas_engine::IncrementalState> gigagas_engine::IncrementalState for SlowCommits<S> {
    fn compute(
        &self,
        input: &gigagas_data::BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<gigagas_engine::PendingRoot, String> {
        self.log.lock().unwrap().push(("compute", input.number()));
        std::thread::sleep(std::time::Duration::from_millis(self.compute_ms));
        self.inner.compute(input, changes)
    }

    fn commit(
        &self,
        input: &gigagas_data::BlockInput,
        pending: gigagas_engine::PendingRoot,
    ) -> Result<alloy_primitives::B256, String> {
        std::thread::sleep(std::time::Duration::from_millis(self.commit_ms));
        let root = self.inner.commit(input, pending)?;
        self.log.lock().unwrap().push(("committed", input.number()));
        Ok(root)
    }

    fn overlays(&self) -> bool {
        self.inner.overlays()
    }

    fn executes_on_snapshot(&self) -> bool {
        self.inner.executes_on_snapshot()
    }

    fn snapshot(&self, readers: usize) -> Result<Option<gigagas_engine::DiskSnapshot>, String> {
        self.inner.snapshot(readers)
    }

    fn finish(&self) -> Result<bool, String> {
        self.inner.finish()
    }
}
