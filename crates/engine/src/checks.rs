//! What a verified run of a block checked ([`Checks`], [`RootCheck`]): the claims every
//! report prints come from here, never from the front end.

use crate::block::{BlockCase, Mode};

/// What a verified run of one block checked: a value the engine reports (in every
/// [`crate::BlockTimeline`]), so that a printed claim is always one the run made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Checks {
    /// Gas used equal to the header's.
    pub gas_used: bool,
    /// Logs bloom equal to the header's.
    pub logs_bloom: bool,
    /// Receipts root equal to the header's; `false` before Byzantium, whose receipts carry an
    /// intermediate state root that a touched-only pre-state cannot rebuild.
    pub receipts_root: bool,
    /// How the post-state root was checked.
    pub state_root: RootCheck,
    /// The BAL checked: in parallel mode every transaction's reads and writes against the
    /// BAL's entries at its index and the rebuilt BAL's hash; in sequential mode the rebuilt
    /// BAL equal to the baseline's; `false` for the sequential path without the builder.
    pub bal: bool,
    /// Receipts equal, transaction by transaction, to the sequential baseline's (parallel
    /// mode: two independent paths agree).
    pub equals_sequential: bool,
}

/// How a run checked a block's post-state root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootCheck {
    /// Not checked: the pre-state holds only what the block touches (or a rule-filled storage
    /// above one streaming pass, which the baseline does not hash), and this run computed no
    /// root.
    None,
    /// This run computed no root; the sequential baseline's post-state root (complete
    /// state) equalled the header's, and this run's results equal that baseline's.
    Baseline,
    /// Computed by this run and equal to the header's.
    Header,
    /// Computed by this run from a touched-only pre-state: the root of that partial state,
    /// not comparable with the header's.
    Uncompared,
}

impl Checks {
    /// The checks of a verified run of `case` in `mode`: header values as the baseline
    /// established which can be checked, the root as this run computed it (`computed`,
    /// `compared`: equal to the header's).
    pub fn of(case: &BlockCase<'_>, mode: Mode, computed: bool, compared: bool) -> Self {
        Self {
            gas_used: case.header_check.gas_used,
            logs_bloom: case.header_check.logs_bloom,
            receipts_root: case.header_check.receipts_root,
            state_root: match (computed, compared, case.state_root_checked) {
                (true, true, _) => RootCheck::Header,
                (true, false, _) => RootCheck::Uncompared,
                (false, _, true) => RootCheck::Baseline,
                (false, _, false) => RootCheck::None,
            },
            bal: mode != Mode::SequentialNoBal,
            equals_sequential: matches!(mode, Mode::Parallel { .. }),
        }
    }
}

impl std::fmt::Display for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<&str> = Vec::new();
        if self.gas_used {
            parts.push("gas");
        }
        if self.logs_bloom {
            parts.push("bloom");
        }
        parts.push(if self.receipts_root {
            "receipts root"
        } else {
            "no receipts root (pre-Byzantium)"
        });
        match self.state_root {
            RootCheck::None => {}
            RootCheck::Baseline => parts.push("state root (baseline)"),
            RootCheck::Header => parts.push("state root"),
            RootCheck::Uncompared => parts.push("partial-state root not compared"),
        }
        if self.bal {
            parts.push("BAL");
        }
        if self.equals_sequential {
            parts.push("= sequential");
        }
        f.write_str(&parts.join(", "))
    }
}
