//! The EIP-7928 scenarios of ethereum/execution-specs
//! (`tests/amsterdam/eip7928_block_level_access_lists/`), ported as named [`Case`]s: each is
//! a [`Scenario`] both engines run, the BAL entries the Python test states (where they do
//! not depend on one devnet's gas schedule), and — for the invalid-BAL tests — the lie told
//! about the block's BAL and the defect the parallel path must name when rejecting it.

pub mod cases;
pub mod dsl;

use crate::scenario::Scenario;
use alloy_eip7928::{AccountChanges, BlockAccessList};
use alloy_primitives::{Address, Bytes, U256};
use gigagas_verify::BalViolation;
use std::sync::Arc;

/// The execution-specs commit the scenarios were ported from (gnosischain/execution-specs
/// `master`, which carries ethereum/execution-specs' Amsterdam tests; 2026-05-06).
pub const EXECUTION_SPECS_COMMIT: &str = "8f6ca5b1a6a2aee8b63ec59168262000a6722d82";

/// Folder of the source tests in that repository.
pub const SOURCE_DIR: &str = "tests/amsterdam/eip7928_block_level_access_lists";

/// Test functions per source file at [`EXECUTION_SPECS_COMMIT`] (`grep -c '^def test_'`).
pub const SOURCE_FUNCTIONS: &[(&str, usize)] = &[
    ("test_block_access_lists.py", 36),
    ("test_block_access_lists_cross_index.py", 4),
    ("test_block_access_lists_eip2935.py", 5),
    ("test_block_access_lists_eip4788.py", 4),
    ("test_block_access_lists_eip4895.py", 14),
    ("test_block_access_lists_eip7002.py", 5),
    ("test_block_access_lists_eip7251.py", 1),
    ("test_block_access_lists_eip7702.py", 13),
    ("test_block_access_lists_invalid.py", 14),
    ("test_block_access_lists_opcodes.py", 30),
];

/// A BAL entry a test states.
#[derive(Debug, Clone)]
pub enum Expect {
    /// The account is not in the BAL.
    Absent(Address),
    /// The account is in the BAL (any changes).
    Present(Address),
    /// The account is in the BAL with no changes and no reads.
    Empty(Address),
    /// Exactly these nonce changes `(index, nonce)`.
    Nonce(Address, Vec<(u64, u64)>),
    /// Exactly these balance changes `(index, post balance)`.
    Balance(Address, Vec<(u64, U256)>),
    /// Exactly these code changes `(index, code)`.
    Codes(Address, Vec<(u64, Bytes)>),
    /// Exactly these storage writes: `(slot, [(index, value)])`, sorted by slot.
    Storage(Address, Vec<(u64, Vec<(u64, u64)>)>),
    /// Exactly these storage reads.
    Reads(Address, Vec<u64>),
    /// The slot's writes include `(index, value)`.
    Written(Address, u64, u64, U256),
    /// The slot is read (listed in `storage_reads`).
    Read(Address, u64),
    /// The slot is neither written nor read.
    Untouched(Address, u64),
    /// Status of every transaction.
    Success(Vec<bool>),
}

/// Which rejection the parallel path must give for a lying BAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    /// Not in canonical form (order, duplicates, index range): rejected when planning.
    Malformed,
    /// Execution accessed or wrote something at `address` the BAL does not list.
    Missing(Address),
    /// The BAL states a write at `address` execution did not make (or a different value).
    WrongWrite(Address),
    /// The BAL lists something at `address` no transaction touched: the rebuilt BAL differs
    /// (or a worker finds the extra write).
    Extra(Address),
    /// Any BAL violation (several lies at once).
    Any,
}

impl Defect {
    /// Whether `v` names this defect.
    pub fn matches(&self, v: &BalViolation) -> bool {
        match (self, v) {
            (Defect::Any, _) => true,
            (Defect::Malformed, BalViolation::Malformed(_)) => true,
            (Defect::Missing(a), BalViolation::MissingAccess { address, .. }) => a == address,
            (Defect::Missing(a), BalViolation::WrongWrite { address, bal, .. }) => {
                a == address && bal == "no write"
            }
            (
                Defect::WrongWrite(a) | Defect::Extra(a),
                BalViolation::WrongWrite { address, .. },
            ) => a == address,
            (
                Defect::WrongWrite(a) | Defect::Extra(a) | Defect::Missing(a),
                BalViolation::RebuiltDiffers(s),
            ) => s.to_lowercase().contains(&a.to_string().to_lowercase()),
            (Defect::Extra(_), BalViolation::Malformed(_)) => false,
            _ => false,
        }
    }

    /// Readable form.
    pub fn describe(&self) -> String {
        match self {
            Defect::Malformed => "malformed BAL".into(),
            Defect::Missing(a) => format!("missing entry for {a}"),
            Defect::WrongWrite(a) => format!("wrong write for {a}"),
            Defect::Extra(a) => format!("extraneous entry for {a}"),
            Defect::Any => "any BAL violation".into(),
        }
    }
}

/// A lie told about the block's BAL: applied to the correct BAL.
#[derive(Clone)]
pub struct Lie {
    /// The Python modifier(s), as written there.
    pub modifier: String,
    /// Turns the correct BAL into the lying one.
    pub apply: Arc<dyn Fn(&mut BlockAccessList) + Send + Sync>,
    /// The defect the parallel path must name.
    pub defect: Defect,
}

impl std::fmt::Debug for Lie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lie")
            .field("modifier", &self.modifier)
            .field("defect", &self.defect)
            .finish()
    }
}

/// One ported test case.
#[derive(Debug, Clone)]
pub struct Case {
    /// `test_name[param]`.
    pub name: String,
    /// Source file in [`SOURCE_DIR`].
    pub file: &'static str,
    /// The block.
    pub scenario: Scenario,
    /// BAL entries (and statuses) the Python test states.
    pub expect: Vec<Expect>,
    /// For invalid-BAL tests: the lie.
    pub lie: Option<Lie>,
    /// How the port departs from the Python test, if at all.
    pub note: String,
}

impl Case {
    /// The Python test function (without parameters).
    pub fn function(&self) -> &str {
        self.name.split('[').next().unwrap_or(&self.name)
    }
}

fn find<'a>(bal: &'a BlockAccessList, a: &Address) -> Option<&'a AccountChanges> {
    bal.iter().find(|c| c.address == *a)
}

/// Every stated expectation `bal`/`success` does not meet, one line each.
pub fn unmet(expect: &[Expect], bal: &BlockAccessList, success: &[bool]) -> Vec<String> {
    let mut out = Vec::new();
    for e in expect {
        let need = |a: &Address, out: &mut Vec<String>| -> Option<AccountChanges> {
            let c = find(bal, a).cloned();
            if c.is_none() {
                out.push(format!("{a} missing from the BAL"));
            }
            c
        };
        match e {
            Expect::Absent(a) => {
                if find(bal, a).is_some() {
                    out.push(format!("{a} in the BAL, expected absent"));
                }
            }
            Expect::Present(a) => {
                need(a, &mut out);
            }
            Expect::Empty(a) => {
                if let Some(c) = need(a, &mut out) {
                    let empty = AccountChanges {
                        address: *a,
                        ..Default::default()
                    };
                    if c != empty {
                        out.push(format!("{a}: expected no changes, BAL has {c:?}"));
                    }
                }
            }
            Expect::Nonce(a, want) => {
                if let Some(c) = need(a, &mut out) {
                    let have: Vec<(u64, u64)> = c
                        .nonce_changes
                        .iter()
                        .map(|n| (n.block_access_index.0, n.new_nonce))
                        .collect();
                    if &have != want {
                        out.push(format!("{a}: nonce changes {have:?}, expected {want:?}"));
                    }
                }
            }
            Expect::Balance(a, want) => {
                if let Some(c) = need(a, &mut out) {
                    let have: Vec<(u64, U256)> = c
                        .balance_changes
                        .iter()
                        .map(|n| (n.block_access_index.0, n.post_balance))
                        .collect();
                    if &have != want {
                        out.push(format!("{a}: balance changes {have:?}, expected {want:?}"));
                    }
                }
            }
            Expect::Codes(a, want) => {
                if let Some(c) = need(a, &mut out) {
                    let have: Vec<(u64, Bytes)> = c
                        .code_changes
                        .iter()
                        .map(|n| (n.block_access_index.0, n.new_code.clone()))
                        .collect();
                    if &have != want {
                        out.push(format!("{a}: code changes {have:?}, expected {want:?}"));
                    }
                }
            }
            Expect::Storage(a, want) => {
                if let Some(c) = need(a, &mut out) {
                    let have: Vec<(U256, Vec<(u64, U256)>)> = c
                        .storage_changes
                        .iter()
                        .map(|s| {
                            (
                                s.slot,
                                s.changes
                                    .iter()
                                    .map(|x| (x.block_access_index.0, x.new_value))
                                    .collect(),
                            )
                        })
                        .collect();
                    let want: Vec<(U256, Vec<(u64, U256)>)> = want
                        .iter()
                        .map(|(s, ch)| {
                            (
                                U256::from(*s),
                                ch.iter().map(|(i, v)| (*i, U256::from(*v))).collect(),
                            )
                        })
                        .collect();
                    if have != want {
                        out.push(format!("{a}: storage changes {have:?}, expected {want:?}"));
                    }
                }
            }
            Expect::Reads(a, want) => {
                if let Some(c) = need(a, &mut out) {
                    let want: Vec<U256> = want.iter().map(|s| U256::from(*s)).collect();
                    if c.storage_reads != want {
                        out.push(format!(
                            "{a}: storage reads {:?}, expected {want:?}",
                            c.storage_reads
                        ));
                    }
                }
            }
            Expect::Read(a, slot) => {
                if let Some(c) = need(a, &mut out) {
                    if !c.storage_reads.contains(&U256::from(*slot)) {
                        out.push(format!("{a}: slot {slot:#x} not in storage reads"));
                    }
                }
            }
            Expect::Written(a, slot, index, value) => {
                if let Some(c) = need(a, &mut out) {
                    let s = U256::from(*slot);
                    let hit = c.storage_changes.iter().any(|x| {
                        x.slot == s
                            && x.changes
                                .iter()
                                .any(|w| w.block_access_index.0 == *index && w.new_value == *value)
                    });
                    if !hit {
                        out.push(format!(
                            "{a}: no write of {value:#x} to slot {slot:#x} at index {index}"
                        ));
                    }
                }
            }
            Expect::Untouched(a, slot) => {
                if let Some(c) = find(bal, a) {
                    let s = U256::from(*slot);
                    if c.storage_reads.contains(&s) || c.storage_changes.iter().any(|x| x.slot == s)
                    {
                        out.push(format!(
                            "{a}: slot {slot:#x} in the BAL, expected untouched"
                        ));
                    }
                }
            }
            Expect::Success(want) => {
                if success != want.as_slice() {
                    out.push(format!("tx statuses {success:?}, expected {want:?}"));
                }
            }
        }
    }
    out
}
