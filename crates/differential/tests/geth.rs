//! gigagas against geth `evm t8n` on the differential block, per fork.
//!
//! Needs geth's `evm` v1.17.10 (`scripts/install-geth-evm.sh`, or `GIGAGAS_GETH_EVM`). Absent:
//! a loud skip locally; under `CI` the test installs it (cached) and fails if it cannot.

use gigagas_differential::{compare::differences, engine, geth, scenario, Outcome};
use revm::primitives::hardfork::SpecId;

fn evm() -> Option<std::path::PathBuf> {
    let in_ci = std::env::var_os("CI").is_some();
    match geth::evm_binary(in_ci) {
        Ok(path) => Some(path),
        Err(e) if in_ci => panic!("{e}"),
        Err(e) => {
            eprintln!("\n*** GETH ABSENT: {e}; differential test NOT RUN ***\n");
            None
        }
    }
}

fn outcomes(spec: SpecId) -> (scenario::Scenario, Outcome, Outcome) {
    let evm = evm().expect("evm");
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
fn agrees_with_geth_on_prague_and_osaka() {
    if evm().is_none() {
        return;
    }
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
fn amsterdam_differs_only_by_eip8282() {
    if evm().is_none() {
        return;
    }
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
