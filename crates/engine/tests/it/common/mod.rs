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
