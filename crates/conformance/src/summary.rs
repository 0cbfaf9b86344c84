//! Pass / fail / skip counts per directory, fork and reason.

use serde::Serialize;
use std::collections::BTreeMap;

/// Outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every selected path agreed with the fixture.
    Passed,
    /// Something differs (or the fixture could not be read).
    Failed,
    /// Not run; `reason` says why.
    Skipped,
}

/// One test's labelled outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// Fixture file.
    pub file: String,
    /// Directory label (path below `BlockchainTests/`).
    pub dir: String,
    /// Test name (`<file>` when the whole file failed to load).
    pub test: String,
    /// Network as the fixture names it.
    pub fork: String,
    /// Result.
    pub status: Status,
    /// Failure category or skip reason (empty when passed).
    pub reason: String,
    /// Full message for failures (names block, tx, account, slot).
    pub detail: String,
    /// BAL mutants rejected, per kind (passed tests only).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub mutants: BTreeMap<String, usize>,
    /// Blocks whose state transition the on-disk store also checked (`--state disk`).
    #[serde(skip_serializing_if = "is_zero")]
    pub store_blocks: usize,
    /// Blocks with `expectException` rejected for an expected reason.
    #[serde(skip_serializing_if = "is_zero")]
    pub exceptions_matched: usize,
    /// Of those, blocks judged with the transactions-root rule waived (legacy fixtures).
    #[serde(skip_serializing_if = "is_zero")]
    pub exceptions_waived: usize,
    /// Blocks with `expectException` whose rejection the mapping could not judge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exceptions_unmapped: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Counts of one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Tests passed.
    pub passed: usize,
    /// Tests failed.
    pub failed: usize,
    /// Tests skipped.
    pub skipped: usize,
}

impl Counts {
    fn add(&mut self, status: Status) {
        match status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Skipped => self.skipped += 1,
        }
    }

    /// Tests counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }
}

/// How the expected exceptions fared (`crate::exceptions`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExceptionCounts {
    /// Tests with at least one block that carries `expectException` and was rejected.
    pub tests_with_expected: usize,
    /// Of those, tests whose every rejection was judged to be for an expected reason.
    pub tests_checked: usize,
    /// Tests failed because a block was rejected for another reason than the expected one.
    pub tests_wrong_reason: usize,
    /// Blocks rejected for an expected reason.
    pub blocks_matched: usize,
    /// Of those, blocks of legacy fixtures whose header does not commit to the invalid
    /// transaction: rejected for the expected transaction exception once the
    /// transactions-root rule was waived (every client stops at that rule first).
    pub blocks_matched_root_waived: usize,
    /// Blocks whose rejection could not be judged (rejection kind not classified, or an
    /// expected name not known): they do not fail the test unless `--strict-exceptions`.
    pub blocks_unmapped: usize,
    /// `file :: test: detail` of every unmapped block.
    pub unmapped: Vec<String>,
    /// Whether unmapped blocks failed their tests (`--strict-exceptions`).
    pub strict: bool,
}

/// Failure category of a block rejected for another reason than its `expectException`.
pub const WRONG_REASON: &str = "rejected for another reason";
/// Failure category of an unmapped rejection under `--strict-exceptions`.
pub const UNMAPPED: &str = "unmapped expected exception";

/// Cause class: the fixture follows gas rules this EVM does not (another devnet's).
pub const CAUSE_GAS_RULES: &str = "gas rules differ (another devnet's, or a gas bug)";
/// Cause class: gas agrees but logs/receipts differ: an EIP (e.g. EIP-7708 logs) is
/// implemented differently or missing.
pub const CAUSE_EIP: &str =
    "an EIP implemented differently or missing (same gas, other logs or receipts)";
/// Cause class: the fixture could not be read (a field or format this runner does not read).
pub const CAUSE_NOT_READ: &str = "a field or format not read";
/// Cause class: the EVM refuses or lacks a rule.
pub const CAUSE_UNSUPPORTED: &str = "a rule the EVM lacks (unsupported, EVM error)";
/// Cause class: anything else: a real disagreement to investigate.
pub const CAUSE_DISAGREEMENT: &str = "a real disagreement (state, rules, rejections)";

/// The likely cause of a failure, from its category and message, so that a run on fixtures
/// of another devnet reads as a table of causes rather than one count. Heuristic and
/// ordered: gas first (a gas difference changes receipts, bloom and state after it).
pub fn failure_cause(reason: &str, detail: &str) -> &'static str {
    let text = format!("{reason} {detail}");
    if text.contains("gas_used") && !text.contains("rule gas_used") {
        CAUSE_GAS_RULES
    } else if text.contains("logs_bloom") || text.contains("receipts_root") {
        CAUSE_EIP
    } else if [
        "rlp decode",
        "invalid test",
        "invalid JSON",
        "unreadable file",
        "fixture",
        "unknown fork",
        "no tests",
    ]
    .iter()
    .any(|c| reason.starts_with(c))
    {
        CAUSE_NOT_READ
    } else if text.contains("unsupported") || text.contains("evm error") {
        CAUSE_UNSUPPORTED
    } else {
        CAUSE_DISAGREEMENT
    }
}

/// The summary of a conformance run (`--json` writes exactly this).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Schema identifier.
    pub schema: &'static str,
    /// Paths run: `sequential`, `parallel` or `both`.
    pub mode: String,
    /// Tests passed in every selected path.
    pub passed: usize,
    /// Tests failed.
    pub failed: usize,
    /// Tests skipped (each with a reason).
    pub skipped: usize,
    /// Counts per directory.
    pub by_dir: BTreeMap<String, Counts>,
    /// Counts per network.
    pub by_fork: BTreeMap<String, Counts>,
    /// Failures per category.
    pub failure_reasons: BTreeMap<String, usize>,
    /// Failures per likely cause ([`failure_cause`]).
    pub failure_causes: BTreeMap<String, usize>,
    /// Skips per reason.
    pub skip_reasons: BTreeMap<String, usize>,
    /// BAL mutants rejected by the parallel path, per kind, over every passed test (an
    /// accepted mutant fails its test).
    pub mutants_rejected: BTreeMap<String, usize>,
    /// Blocks whose state root the on-disk store also computed and checked, over every
    /// passed test (`--state disk`; 0 otherwise).
    pub store_blocks: usize,
    /// Expected exceptions: how many rejections were checked for their reason.
    pub exceptions: ExceptionCounts,
    /// Every failure.
    pub failures: Vec<Outcome>,
    /// Every skip.
    pub skips: Vec<Outcome>,
    /// Wall time of the run, seconds.
    pub wall_seconds: f64,
}

/// Schema identifier of [`Summary`].
pub const SCHEMA: &str = "gigagas.conformance/1";

impl Summary {
    /// Builds the summary of `outcomes`.
    pub fn new(mode: &str, outcomes: Vec<Outcome>, wall_seconds: f64) -> Self {
        let mut s = Summary {
            schema: SCHEMA,
            mode: mode.to_owned(),
            wall_seconds,
            ..Default::default()
        };
        for o in outcomes {
            s.by_dir.entry(o.dir.clone()).or_default().add(o.status);
            s.by_fork.entry(o.fork.clone()).or_default().add(o.status);
            for (kind, n) in &o.mutants {
                *s.mutants_rejected.entry(kind.clone()).or_default() += n;
            }
            s.store_blocks += o.store_blocks;
            let e = &mut s.exceptions;
            if o.exceptions_matched + o.exceptions_unmapped.len() > 0 {
                e.tests_with_expected += 1;
                e.tests_checked += usize::from(o.exceptions_unmapped.is_empty());
            }
            e.blocks_matched += o.exceptions_matched;
            e.blocks_matched_root_waived += o.exceptions_waived;
            e.blocks_unmapped += o.exceptions_unmapped.len();
            e.unmapped.extend(
                o.exceptions_unmapped
                    .iter()
                    .map(|d| format!("{} :: {}: {d}", o.file, o.test)),
            );
            if o.status == Status::Failed && o.reason == WRONG_REASON {
                e.tests_with_expected += 1;
                e.tests_wrong_reason += 1;
            }
            match o.status {
                Status::Passed => s.passed += 1,
                Status::Failed => {
                    s.failed += 1;
                    *s.failure_reasons.entry(o.reason.clone()).or_default() += 1;
                    *s.failure_causes
                        .entry(failure_cause(&o.reason, &o.detail).to_owned())
                        .or_default() += 1;
                    s.failures.push(o);
                }
                Status::Skipped => {
                    s.skipped += 1;
                    *s.skip_reasons.entry(o.reason.clone()).or_default() += 1;
                    s.skips.push(o);
                }
            }
        }
        s
    }

    /// Tests counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }

    /// `--strict-exceptions`: every passed test with an unmapped rejection becomes a
    /// failure ([`UNMAPPED`]).
    pub fn strict_exceptions(mut outcomes: Vec<Outcome>) -> Vec<Outcome> {
        for o in &mut outcomes {
            if o.status == Status::Passed && !o.exceptions_unmapped.is_empty() {
                o.status = Status::Failed;
                o.reason = UNMAPPED.to_owned();
                o.detail = o.exceptions_unmapped.join("; ");
            }
        }
        outcomes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(dir: &str, status: Status, reason: &str) -> Outcome {
        Outcome {
            file: format!("{dir}/a.json"),
            dir: dir.into(),
            test: "t".into(),
            fork: "Cancun".into(),
            status,
            reason: reason.into(),
            detail: String::new(),
            mutants: BTreeMap::new(),
            store_blocks: 0,
            exceptions_matched: 0,
            exceptions_waived: 0,
            exceptions_unmapped: Vec::new(),
        }
    }

    #[test]
    fn counts_group_by_dir_fork_and_reason() {
        let s = Summary::new(
            "both",
            vec![
                outcome("A", Status::Passed, ""),
                outcome("A", Status::Failed, "state root"),
                outcome("B", Status::Failed, "state root"),
                outcome("B", Status::Skipped, "why"),
            ],
            1.0,
        );
        assert_eq!((s.passed, s.failed, s.skipped), (1, 2, 1));
        assert_eq!(
            s.by_dir["A"],
            Counts {
                passed: 1,
                failed: 1,
                skipped: 0
            }
        );
        assert_eq!(s.by_fork["Cancun"].total(), 4);
        assert_eq!(s.failure_reasons["state root"], 2);
        assert_eq!(s.skips.len(), 1);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["passed"], 1);
        assert_eq!(json["failed"], 2);
        assert_eq!(json["skipped"], 1);
    }
}
