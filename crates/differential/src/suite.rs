//! The EIP-7928 scenario suite: every ported [`Case`] through gigagas (sequential and
//! BAL-parallel), its stated BAL entries checked, invalid BALs required to be rejected by both
//! paths (the parallel one naming the defect), and — when geth's `evm` is given — the block
//! compared with `evm t8n` field by field and BAL account by account.

use crate::{
    compare::{bal_differences, differences},
    eip7928::{self, Case},
    engine, geth, scenario,
};
use gigagas_exec::ExecError;
use gigagas_verify::VerifyError;
use serde::Serialize;
use std::path::Path;

/// Schema of the JSON report.
pub const SCHEMA: &str = "gigagas.eip7928-suite/1";

/// Result of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Everything checked agreed.
    Passed,
    /// Something differed or was accepted that must be rejected.
    Failed,
    /// Not ported (reason in the notes).
    Skipped,
}

/// One scenario's row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `test_name[param]`.
    pub scenario: String,
    /// Source file.
    pub source: String,
    /// `valid` or `invalid-bal`.
    pub kind: &'static str,
    /// What the sequential path did.
    pub sequential: String,
    /// What the parallel path did.
    pub parallel: String,
    /// geth agreement: `agrees`, `differs`, `not run`, or its error.
    pub geth: String,
    /// The verdict.
    pub result: Verdict,
    /// Unmet expectations, differences, adaptation notes.
    pub notes: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// execution-specs commit the cases come from.
    pub execution_specs_commit: &'static str,
    /// Source folder.
    pub source_dir: &'static str,
    /// geth `evm` version used, if any.
    pub geth: Option<&'static str>,
    /// Rows passed.
    pub passed: usize,
    /// Rows failed.
    pub failed: usize,
    /// Rows skipped (unported test functions).
    pub skipped: usize,
    /// Ported cases (valid + invalid-BAL).
    pub ported_cases: usize,
    /// Ported invalid-BAL cases.
    pub ported_invalid_cases: usize,
    /// Source test functions with at least one ported case.
    pub functions_ported: usize,
    /// Source test functions in total.
    pub functions_total: usize,
    /// Every row.
    pub rows: Vec<Row>,
}

/// Test functions not ported, with the reason (reported as skipped rows).
pub const NOT_PORTED: &[(&str, &str, &str)] = &[
    ("test_block_access_lists.py", "test_bal_cross_block_ripemd160_state_leak", "needs two blocks; the differential harness runs one block per scenario"),
    ("test_block_access_lists.py", "test_bal_gas_limit_boundary", "exact block gas-limit boundary follows the newer devnet's gas schedule (EIP-8037 state gas differs)"),
    ("test_block_access_lists_eip7002.py", "test_bal_7002_partial_sweep", "needs two blocks (queue overflow swept in the next block)"),
];

fn exec_error_short(e: &ExecError) -> String {
    let s = e.to_string();
    if s.len() > 240 {
        format!("{}…", &s[..240])
    } else {
        s
    }
}

/// Runs every case (`filter`: substring of the name); `evm`: geth's binary, if any.
pub fn run(evm: Option<&Path>, threads: usize, filter: Option<&str>) -> Report {
    let cases: Vec<Case> = eip7928::cases::all()
        .into_iter()
        .filter(|c| filter.is_none_or(|f| c.name.contains(f)))
        .collect();
    let mut rows: Vec<Row> = cases.iter().map(|c| run_case(c, evm, threads)).collect();
    if filter.is_none() {
        for (file, function, why) in NOT_PORTED {
            rows.push(Row {
                scenario: (*function).to_owned(),
                source: (*file).to_owned(),
                kind: "valid",
                sequential: "-".into(),
                parallel: "-".into(),
                geth: "-".into(),
                result: Verdict::Skipped,
                notes: vec![format!("not ported: {why}")],
            });
        }
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.result == v).count();
    let mut functions: Vec<&str> = cases.iter().map(|c| c.function()).collect();
    functions.sort();
    functions.dedup();
    Report {
        schema: SCHEMA,
        execution_specs_commit: eip7928::EXECUTION_SPECS_COMMIT,
        source_dir: eip7928::SOURCE_DIR,
        geth: evm.map(|_| geth::GETH_VERSION),
        passed: count(Verdict::Passed),
        failed: count(Verdict::Failed),
        skipped: count(Verdict::Skipped),
        ported_cases: cases.len(),
        ported_invalid_cases: cases.iter().filter(|c| c.lie.is_some()).count(),
        functions_ported: functions.len(),
        functions_total: eip7928::SOURCE_FUNCTIONS.iter().map(|(_, n)| n).sum(),
        rows,
    }
}

/// Runs one case.
pub fn run_case(case: &Case, evm: Option<&Path>, threads: usize) -> Row {
    let mut row = Row {
        scenario: case.name.clone(),
        source: case.file.to_owned(),
        kind: if case.lie.is_some() {
            "invalid-bal"
        } else {
            "valid"
        },
        sequential: String::new(),
        parallel: String::new(),
        geth: "not run".into(),
        result: Verdict::Passed,
        notes: Vec::new(),
    };
    let mut failed = false;
    let detailed = match engine::run_detailed(&case.scenario, threads) {
        Ok(d) => d,
        Err(e) => {
            row.sequential = "error".into();
            row.parallel = "error".into();
            row.notes.push(format!("gigagas: {}", exec_error_short(&e)));
            row.result = Verdict::Failed;
            return row;
        }
    };
    let bal = detailed.outcome.bal.clone().unwrap_or_default();
    let unmet = eip7928::unmet(&case.expect, &bal, &detailed.outcome.tx_success);
    if !unmet.is_empty() {
        failed = true;
        row.notes
            .extend(unmet.into_iter().map(|u| format!("expectation: {u}")));
    }
    match &case.lie {
        None => {
            row.sequential = "ok".into();
            row.parallel = "ok (= sequential)".into();
        }
        Some(lie) => {
            let mut lying = bal.clone();
            (lie.apply)(&mut lying);
            if lying == bal {
                failed = true;
                row.notes
                    .push(format!("modifier {} changed nothing", lie.modifier));
            }
            match engine::run_with_bal(&case.scenario, &lying, threads) {
                Err(e) => {
                    failed = true;
                    row.sequential = "error".into();
                    row.parallel = "error".into();
                    row.notes.push(format!("gigagas: {}", exec_error_short(&e)));
                }
                Ok(verdict) => {
                    match verdict.sequential {
                        Some(_) => row.sequential = "rejected (built BAL ≠ given)".into(),
                        None => {
                            failed = true;
                            row.sequential = "ACCEPTED".into();
                        }
                    }
                    match verdict.parallel {
                        Ok(()) => {
                            failed = true;
                            row.parallel = "ACCEPTED".into();
                        }
                        Err(ExecError::Verify(VerifyError::Bal { violation, .. })) => {
                            if lie.defect.matches(&violation) {
                                row.parallel = format!("rejected: {violation}");
                            } else {
                                failed = true;
                                row.parallel = format!(
                                    "rejected, but not naming {}: {violation}",
                                    lie.defect.describe()
                                );
                            }
                        }
                        Err(e @ ExecError::Lifecycle { .. })
                            if lie.defect == eip7928::Defect::Any =>
                        {
                            row.parallel = format!("rejected: {}", exec_error_short(&e));
                        }
                        Err(e) => {
                            failed = true;
                            row.parallel =
                                format!("rejected for another reason: {}", exec_error_short(&e));
                        }
                    }
                    row.notes.push(format!("lie: {}", lie.modifier));
                }
            }
        }
    }
    if let Some(evm) = evm {
        match geth::run_t8n(evm, &case.scenario) {
            Err(e) => {
                failed = true;
                row.geth = "error".into();
                row.notes.push(format!("geth: {e}"));
            }
            Ok(theirs) => {
                let ignore = scenario::eip8282_contracts();
                let mut d: Vec<String> =
                    differences(&detailed.outcome, &theirs, &case.scenario.labels, &ignore)
                        .into_iter()
                        .filter(|l| !l.starts_with("BAL hash"))
                        .collect();
                let geth_bal: Vec<_> = theirs
                    .bal
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|a| !ignore.contains(&a.address))
                    .collect();
                if Some(alloy_eip7928::compute_block_access_list_hash(&geth_bal))
                    != detailed.outcome.bal_hash
                {
                    let extra = bal_differences(&bal, &geth_bal, &[]);
                    if extra.is_empty() {
                        d.push("BAL hash (without EIP-8282 accounts) differs".into());
                    }
                }
                if d.is_empty() {
                    row.geth = "agrees".into();
                } else {
                    failed = true;
                    row.geth = "differs".into();
                    row.notes
                        .extend(d.into_iter().map(|x| format!("geth: {x}")));
                }
            }
        }
    }
    if !case.note.is_empty() {
        row.notes.push(format!("port: {}", case.note));
    }
    if failed {
        row.result = Verdict::Failed;
    }
    row
}

/// The report as a terminal table.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<78} {:<40} {:<9} {:<9} {:<8} {}\n",
        "scenario", "source", "seq", "par", "geth", "result / notes"
    ));
    for r in &report.rows {
        let short = |s: &str| -> String {
            if s.starts_with("rejected") {
                "rejected".into()
            } else if s.starts_with("ok") {
                "ok".into()
            } else {
                s.chars().take(9).collect()
            }
        };
        let notes: Vec<&String> = r
            .notes
            .iter()
            .filter(|n| !n.starts_with("port:") && !n.starts_with("lie:"))
            .collect();
        out.push_str(&format!(
            "{:<78} {:<40} {:<9} {:<9} {:<8} {:?}{}\n",
            r.scenario,
            r.source,
            short(&r.sequential),
            short(&r.parallel),
            r.geth,
            r.result,
            if notes.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    notes
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" | ")
                )
            }
        ));
        if r.result == Verdict::Failed && r.parallel.starts_with("rejected") && r.parallel.len() > 9
        {
            out.push_str(&format!("    parallel: {}\n", r.parallel));
        }
    }
    out.push_str(&format!(
        "\n{} ported cases ({} invalid-BAL) from {}/{} test functions of execution-specs {} — passed {}, failed {}, skipped {}\n",
        report.ported_cases,
        report.ported_invalid_cases,
        report.functions_ported,
        report.functions_total,
        &report.execution_specs_commit[..12],
        report.passed,
        report.failed,
        report.skipped
    ));
    out
}
