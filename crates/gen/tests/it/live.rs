//! `gigagas_gen::live`: the deployments and the stream signed for a live node, run on revm.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_consensus::TxEnvelope;
use alloy_primitives::keccak256;
use gigagas_gen::{
    live::live_workload,
    workload::{genesis_at, Workload},
    LiveOptions,
};
use revm::{
    context::{Context, TxEnv},
    database::{CacheDB, EmptyDB},
    handler::{MainBuilder, MainContext},
    primitives::hardfork::SpecId,
    state::AccountInfo,
    ExecuteCommitEvm,
};

fn options(workload: Workload) -> LiveOptions {
    LiveOptions {
        workload,
        txs: 40,
        seed: 3,
        chain_id: 1337,
        senders: 4,
        precompiles: Vec::new(),
        max_fee_per_gas: 10_000_000_000,
        max_priority_fee_per_gas: 1_000_000_000,
        long_tx_gas: 1_000_000,
        tx_gas_cap: 1 << 24,
    }
}

/// The deployments run on revm (Osaka, chain 1337) create the contracts at their stated
/// addresses with the code of the compiled contract and the genesis storage of that layout;
/// the stream then runs against them without failing (mainnet-mix: only its deliberate
/// reverts).
#[test]
fn deployments_create_the_genesis_contracts_and_the_stream_runs() {
    const NONCES: [u64; 4] = [0, 2, 0, 7];
    for workload in [
        Workload::MainnetMix,
        Workload::Uniswap,
        Workload::Eip7702,
        Workload::SerialChain,
    ] {
        let live = live_workload(&options(workload), 5, &NONCES).unwrap();
        let mut db = CacheDB::new(EmptyDB::default());
        for (address, wei) in live.funding() {
            let nonce = if address == live.deployer {
                5
            } else {
                NONCES[live.senders.iter().position(|a| *a == address).unwrap()]
            };
            db.insert_account_info(
                address,
                AccountInfo {
                    balance: wei,
                    nonce,
                    ..Default::default()
                },
            );
        }
        let mut cfg = revm::context::CfgEnv::<SpecId>::default()
            .with_spec_and_mainnet_gas_params(SpecId::OSAKA);
        cfg.chain_id = 1337;
        let mut evm = Context::mainnet()
            .with_db(db)
            .with_cfg(cfg)
            .modify_block_chained(|b| {
                b.basefee = 1_000_000_000;
                b.gas_limit = 60_000_000;
            })
            .build_mainnet();
        let mut failed = 0;
        for tx in live.deployments.iter().map(|d| &d.tx).chain(&live.txs) {
            let envelope: TxEnvelope =
                alloy_eips::eip2718::Decodable2718::decode_2718(&mut tx.raw.as_ref()).unwrap();
            assert_eq!(*envelope.hash(), tx.hash);
            let env: TxEnv = gigagas_exec::tx_env(&envelope, tx.sender);
            let out = evm
                .transact_commit(env)
                .unwrap_or_else(|e| panic!("{workload}: {} nonce {}: {e}", tx.sender, tx.nonce));
            if !out.is_success() {
                failed += 1;
            }
        }
        if workload == Workload::MainnetMix {
            assert!(failed * 5 < live.txs.len(), "{workload}: {failed} failed");
        } else {
            assert_eq!(failed, 0, "{workload}");
        }
        let genesis = genesis_at(workload, &live.senders, &live.layout);
        for d in &live.deployments {
            let account = &evm.ctx.journaled_state.database.cache.accounts[&d.address];
            let code = account.info.code.clone().unwrap_or_default();
            assert_eq!(keccak256(code.original_bytes()), d.code_hash, "{}", d.name);
            assert_eq!(d.slots, genesis[&d.address].storage.len(), "{}", d.name);
        }
    }
}

#[test]
fn refuses_what_a_transaction_cannot_deploy() {
    let e = live_workload(&options(Workload::SstoreBloated), 0, &[0; 4]).unwrap_err();
    assert!(e.to_string().contains("sstore-bloated"), "{e}");
    let mut many = options(Workload::Erc20);
    many.senders = 1000;
    let e = live_workload(&many, 0, &vec![0; 1000]).unwrap_err();
    assert!(e.to_string().contains("EIP-3860"), "{e}");
}

/// The same seed gives the same stream as long as the nonces are the same; other nonces or
/// another chain id give other transactions.
#[test]
fn signing_is_deterministic() {
    let a = live_workload(&options(Workload::Erc20), 0, &[0; 4]).unwrap();
    let b = live_workload(&options(Workload::Erc20), 0, &[0; 4]).unwrap();
    let hashes = |w: &gigagas_gen::LiveWorkload| w.txs.iter().map(|t| t.hash).collect::<Vec<_>>();
    assert_eq!(hashes(&a), hashes(&b));
    let mut other = options(Workload::Erc20);
    other.chain_id = 1;
    assert_ne!(
        hashes(&a),
        hashes(&live_workload(&other, 0, &[0; 4]).unwrap())
    );
}
