//! The EIP-7928 scenarios ported from ethereum/execution-specs
//! (`gigagas_differential::eip7928`): on gigagas alone (both paths agree, stated BAL entries
//! hold, every invalid BAL rejected by both paths, the parallel one naming the defect), and
//! against geth `evm t8n` v1.17.10.

use gigagas_differential::{geth, suite};

fn check(report: &suite::Report) {
    let failed: Vec<String> = report
        .rows
        .iter()
        .filter(|r| r.result == suite::Verdict::Failed)
        .map(|r| {
            format!(
                "{} [{} / {} / geth {}]: {}",
                r.scenario,
                r.sequential,
                r.parallel,
                r.geth,
                r.notes.join(" | ")
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failed.len(),
        report.ported_cases,
        failed.join("\n")
    );
    assert!(
        report.ported_invalid_cases >= 40,
        "{}",
        report.ported_invalid_cases
    );
    assert_eq!(report.passed, report.ported_cases);
}

#[test]
fn eip7928_scenarios_on_gigagas() {
    let report = suite::run(None, 2, None);
    check(&report);
}

#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn eip7928_scenarios_agree_with_geth() {
    let evm = geth::evm_binary(false).unwrap_or_else(|e| panic!("{e}"));
    let report = suite::run(Some(&evm), 2, None);
    assert!(report
        .rows
        .iter()
        .filter(|r| r.result != suite::Verdict::Skipped)
        .all(|r| r.geth != "not run"));
    check(&report);
}

/// Control for the invalid-BAL cases: the same blocks with their *correct* BAL are accepted by
/// both paths through the same harness, so each rejection above is the lie's doing.
#[test]
fn invalid_bal_blocks_with_the_correct_bal_are_accepted() {
    use gigagas_differential::{eip7928, engine};
    let cases: Vec<_> = eip7928::cases::all()
        .into_iter()
        .filter(|c| c.lie.is_some())
        .collect();
    assert!(cases.len() >= 40);
    for c in cases {
        let built =
            engine::run_detailed(&c.scenario, 2).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let verdict = engine::run_with_bal(&c.scenario, &built.access.bal, 2).unwrap();
        assert!(
            verdict.sequential.is_none(),
            "{}: {:?}",
            c.name,
            verdict.sequential
        );
        if let Err(e) = verdict.parallel {
            panic!("{}: correct BAL rejected: {e}", c.name);
        }
    }
}
