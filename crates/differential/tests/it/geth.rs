//! gigagas against geth `evm t8n` on the differential block, per fork.
//!
//! Needs geth's `evm` v1.17.10 (`scripts/install-geth-evm.sh`, or `GIGAGAS_GETH_EVM`); when it
//! is absent at build time these tests are ignored (counted by the runner), and CI fails.

use gigagas_differential::{compare::differences, engine, geth, scenario, Outcome};
use revm::primitives::hardfork::SpecId;

/// The installed `evm` (these tests are ignored at build time when it is absent, see
/// `build.rs`).
fn evm() -> std::path::PathBuf {
    geth::evm_binary(false).unwrap_or_else(|e| panic!("{e}"))
}

fn outcomes(spec: SpecId) -> (scenario::Scenario, Outcome, Outcome) {
    let evm = evm();
    let s = scenario::build(spec);
    let ours = engine::run(&s, 3).expect("gigagas runs the scenario");
    let theirs = geth::run_t8n(&evm, &s).expect("geth runs the scenario");
    (s, ours, theirs)
}

fn diff(spec: SpecId) -> Vec<String> {
    let (s, ours, theirs) = outcomes(spec);
    differences(&ours, &theirs, &s.labels, &scenario::eip8282_contracts())
}

#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn agrees_with_geth_on_prague_and_osaka() {
    for spec in [SpecId::PRAGUE, SpecId::OSAKA] {
        let d = diff(spec);
        assert!(
            d.is_empty(),
            "{spec:?}: gigagas and geth differ:\n{}",
            d.join("\n")
        );
    }
}

/// geth 1.17.10 runs the EIP-8282 builder-request system calls after the transactions on
/// Amsterdam; revm 43 does not. Everything else — state root, receipts root, two-dimensional
/// block gas, every transaction's gas and status, every other BAL account — must agree, and
/// geth's BAL without the two EIP-8282 accounts must hash like gigagas's.
#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn amsterdam_differs_only_by_eip8282() {
    let (s, ours, theirs) = outcomes(SpecId::AMSTERDAM);
    let ignore = scenario::eip8282_contracts();
    let d = differences(&ours, &theirs, &s.labels, &ignore);
    assert_eq!(d.len(), 1, "unexpected differences:\n{}", d.join("\n"));
    assert!(d[0].starts_with("BAL hash"), "{}", d[0]);
    let geth_bal = theirs.bal.expect("geth returns the BAL");
    for address in ignore {
        assert!(
            geth_bal.iter().any(|a| a.address == address),
            "{address} not in geth's BAL"
        );
        assert!(!ours
            .bal
            .as_ref()
            .unwrap()
            .iter()
            .any(|a| a.address == address));
    }
    let without: Vec<_> = geth_bal
        .into_iter()
        .filter(|a| !ignore.contains(&a.address))
        .collect();
    assert_eq!(
        Some(alloy_eip7928::compute_block_access_list_hash(&without)),
        ours.bal_hash,
        "geth's BAL minus the EIP-8282 accounts"
    );
}
