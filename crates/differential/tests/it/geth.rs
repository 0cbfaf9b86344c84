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

/// An `evm` that never exits is killed at the deadline: the error names the run, the
/// setting that changes the limit, and quotes its stderr escaped.
#[test]
fn a_hanging_evm_fails_at_its_deadline() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let evm = dir.path().join("evm");
    std::fs::write(
        &evm,
        "#!/bin/sh\necho 'resolving \x1b]0;title\x07' >&2\nsleep 1000\n",
    )
    .unwrap();
    std::fs::set_permissions(&evm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut limits = geth::t8n_limits();
    limits.timeout = std::time::Duration::from_millis(500);
    let err = geth::run_t8n_within(&evm, &scenario::build(SpecId::PRAGUE), &limits)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("evm t8n on the differential block (Prague)"),
        "{err}"
    );
    assert!(err.contains(geth::T8N_TIMEOUT_ENV), "{err}");
    assert!(err.contains("resolving \\u{1b}]0;title\\u{7}"), "{err}");
}

/// The transactions as JSON (how a list over geth's 1 MiB RLP reader limit is passed) give
/// geth's same outcome as the RLP list, on every fork's differential block — legacy, EIP-1559,
/// EIP-7702 and deploying transactions included.
#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn transactions_as_json_give_the_same_outcome_as_rlp() {
    let evm = evm();
    for spec in [SpecId::PRAGUE, SpecId::OSAKA, SpecId::AMSTERDAM] {
        let s = scenario::build(spec);
        let limits = geth::t8n_limits();
        let rlp = geth::run_t8n_as(&evm, &s, &limits, geth::TxsFormat::Auto).expect("rlp");
        let json = geth::run_t8n_as(&evm, &s, &limits, geth::TxsFormat::Json).expect("json");
        let d = differences(&rlp, &json, &s.labels, &[]);
        assert!(
            d.is_empty(),
            "{spec:?}: JSON and RLP input differ:\n{}",
            d.join("\n")
        );
    }
}
