//! The differential block does what its labels say, on gigagas alone (no geth needed).

use gigagas_differential::{engine, scenario};
use revm::primitives::hardfork::SpecId;

#[test]
fn every_scenario_transaction_does_what_it_says() {
    for spec in [SpecId::PRAGUE, SpecId::OSAKA, SpecId::AMSTERDAM] {
        let s = scenario::build(spec);
        let out = engine::run(&s, 2).expect("runs and both paths agree");
        for (i, label) in s.labels.iter().enumerate() {
            let expect_success = !label.starts_with("reverting");
            assert_eq!(
                out.tx_success[i], expect_success,
                "{spec:?} tx {i} ({label})"
            );
        }
        assert_eq!(out.bal.is_some(), spec == SpecId::AMSTERDAM);
    }
    // The delegated account's own storage was written through its delegation.
    let s = scenario::build(SpecId::PRAGUE);
    let input = engine::block_input(&s);
    let senders = gigagas_exec::recover_senders(&input).unwrap();
    let prepared = gigagas_exec::PreparedBlock::with_envs(
        &input,
        &senders,
        gigagas_exec::BlockEnvs::with_spec(&input, s.spec),
    );
    let run = gigagas_exec::execute_sequential(&prepared, &*input.pre_state).unwrap();
    let post = gigagas_state::apply_changes(&input.pre_state, &run.post);
    let delegate = post
        .account(&scenario::signer(6).address())
        .expect("delegate exists");
    assert_eq!(
        delegate.storage.get(&revm::primitives::U256::from(3)),
        Some(&revm::primitives::U256::from(4))
    );
    assert!(post.account(&scenario::FRESH).is_some());
}
