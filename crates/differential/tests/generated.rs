//! A sample of `gigagas gen` output checked against geth `evm t8n`: the first block of every
//! workload, executed by geth on the chain's genesis, must reproduce the header gigagas wrote
//! (state root, receipts root, gas used, every transaction succeeding or failing alike) and,
//! apart from the EIP-8282 accounts geth adds, the block's access list.

use gigagas_differential::{geth, scenario};
use gigagas_gen::{generate, GenOptions, Workload};
use revm::primitives::hardfork::SpecId;

#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn first_block_of_every_workload_agrees_with_geth() {
    let evm = geth::evm_binary(false).unwrap_or_else(|e| panic!("{e}"));
    let ignore = scenario::eip8282_contracts();
    for workload in Workload::ALL {
        let options = GenOptions {
            workload,
            blocks: 1,
            block_gas: 3_000_000,
            seed: 11,
            spec: SpecId::AMSTERDAM,
            tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
            senders: 16,
            verify_threads: 2,
            precompiles: Vec::new(),
        };
        let chain = generate(&options, &|_| {}).unwrap_or_else(|e| panic!("{workload}: {e}"));
        let block = &chain.blocks[0];
        let s = scenario::from_generated(SpecId::AMSTERDAM, &chain.meta, block);
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
    }
}
