//! `gigagas gen` output checked against geth `evm t8n`: every block of every workload (3 blocks
//! each), executed by geth on the state before it (the genesis with every earlier block's BAL
//! applied), must reproduce the header gigagas wrote (state root, receipts root, gas used,
//! every transaction succeeding or failing alike) and, apart from the EIP-8282 accounts geth
//! adds, the block's access list.

use gigagas_differential::{geth, scenario};
use gigagas_gen::{generate, GenOptions, Workload};
use revm::primitives::hardfork::SpecId;

#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn every_block_of_every_workload_agrees_with_geth() {
    let evm = geth::evm_binary(false).unwrap_or_else(|e| panic!("{e}"));
    let ignore = scenario::eip8282_contracts();
    for workload in Workload::ALL {
        let options = GenOptions {
            workload,
            blocks: 3,
            block_gas: 3_000_000,
            seed: 11,
            spec: SpecId::AMSTERDAM,
            tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
            senders: 16,
            verify_threads: 2,
            precompiles: Vec::new(),
            slots: (workload == Workload::SstoreBloated).then_some(5_000),
            spread: false,
            existing_slots: false,
        };
        let chain = generate(&options, &|_| {}).unwrap_or_else(|e| panic!("{workload}: {e}"));
        // Each block starts from the genesis with every earlier block's BAL applied.
        let mut state = chain.meta.genesis_state().expect("genesis state");
        for (k, block) in chain.blocks.iter().enumerate() {
            let alloc = gigagas_data::chain::alloc_of(&state);
            let s = scenario::from_generated_block(SpecId::AMSTERDAM, alloc, block);
            let workload = format!("{workload} block {}", k + 1);
            let theirs = geth::run_t8n(&evm, &s).unwrap_or_else(|e| panic!("{workload}: {e}"));
            let h = &block.block.header;
            assert_eq!(theirs.state_root, h.state_root, "{workload}: state root");
            assert_eq!(
                theirs.receipts_root, h.receipts_root,
                "{workload}: receipts root"
            );
            assert_eq!(theirs.gas_used, h.gas_used, "{workload}: gas used");
            assert_eq!(
                theirs.tx_gas.len(),
                block.block.body.transactions.len(),
                "{workload}"
            );
            let geth_bal: Vec<_> = theirs
                .bal
                .expect("geth returns the BAL")
                .into_iter()
                .filter(|a| !ignore.contains(&a.address))
                .collect();
            assert_eq!(
                Some(alloy_eip7928::compute_block_access_list_hash(&geth_bal)),
                h.block_access_list_hash,
                "{workload}: BAL (without the EIP-8282 accounts) differs: {:?}",
                gigagas_differential::compare::bal_differences(&block.bal, &geth_bal, &[])
            );
            gigagas_data::chain::apply_bal(&mut state, &block.bal);
        }
    }
}

/// `gigagas differential --workload eest-bal`'s library path: the first block of every
/// EIP-7928 shape (every parameter set of its source that fits 3M gas) agrees with geth on
/// everything compared, and gigagas's result equals the generated header.
#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn every_eest_bal_shape_agrees_with_geth() {
    let evm = geth::evm_binary(false).unwrap_or_else(|e| panic!("{e}"));
    let sets = [gigagas_gen::WorkloadSet::EestBal];
    let expanded = gigagas_gen::expand_sets(
        &sets,
        &[3_000_000],
        Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
    )
    .unwrap();
    assert!(expanded.pairs.len() >= 17, "{:?}", expanded.skipped);
    for (workload, gas) in expanded.pairs {
        let row = gigagas_differential::workloads::run_workload(
            &evm,
            workload,
            SpecId::AMSTERDAM,
            gas,
            1,
            2,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            row.differences.is_empty(),
            "{}: {:?}",
            row.workload,
            row.differences
        );
        assert!(
            row.gigagas.tx_success.iter().all(|s| *s),
            "{}",
            row.workload
        );
    }
}
