//! What a pipeline run reports: every block's stage spans on one clock, and the run's
//! end-to-end figure, per-stage busy time and bound.

use super::STAGES;
use crate::root::RootMode;
use crate::variant::BalVariant;
use alloy_primitives::B256;
use std::collections::BTreeMap;

/// Start and end of one stage of one block, ns since the pipeline started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StageSpan {
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

impl StageSpan {
    /// Duration, ns.
    pub fn nanos(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One block's way through the pipeline.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BlockTimeline {
    /// Block number.
    pub number: u64,
    /// Gas used.
    pub gas: u64,
    /// Transactions.
    pub txs: usize,
    /// Span of each stage that ran (keys from [`STAGES`]).
    pub stages: BTreeMap<&'static str, StageSpan>,
    /// Number of the first block of the execution unit this block ran in (its own number
    /// unless it ran inside a mega-block). A unit's execute span is recorded on its first
    /// block; its other blocks carry an empty span at the unit's end.
    pub unit: u64,
    /// What this run verified for the block.
    pub checks: crate::checks::Checks,
    /// The state root computed (with a root mode other than `none`).
    pub state_root: Option<B256>,
    /// Whether that root was compared with the header's and matched (complete states only;
    /// a touched-only pre-state gives the root of that partial state, not compared).
    pub root_checked: bool,
    /// Bytes the process read from storage (`/proc/self/io` `read_bytes`: page-cache misses)
    /// between the previous block's commit and this one's: exactly this block's reads with
    /// the pipeline off; with it on, also the next block's prefetch and recovery, which
    /// overlap. `None` where unreadable.
    pub read_bytes: Option<u64>,
    /// Accounts, slots and code execution read from the store on demand (not prefetched,
    /// not supplied by a `full` list, not in the code cache): reads on the executing
    /// threads' critical path. A mega-block's count is on its first block. `None` when the
    /// state is in memory.
    pub demand_reads: Option<u64>,
    /// Distinct items the prefetch read for the block: accounts and slots its list names
    /// and, where those reads missed the page cache, the trie nodes on its changed paths
    /// (`gigagas_store::DiskState::read_ahead`). On a cold store this is the least it can
    /// read, each item once: `read_bytes` / 4096 over it is the layout's pages per item. A
    /// mega-block's count is on its first block. `None` when the state is in memory.
    pub read_ahead: Option<u64>,
    /// What the block's commit to a disk store waited for and wrote: its write time, the
    /// persistence wait (durable writes the next block waited for) and the trie-buffer
    /// flush it made, if any. `None` in memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<crate::root::BlockWrite>,
}

/// A verified pipeline run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PipelineRun {
    /// Execution mode name.
    pub mode: String,
    /// The BAL variant the blocks ran from.
    pub bal: BalVariant,
    /// Root mode.
    pub root: RootMode,
    /// Whether stages overlapped.
    pub overlap: bool,
    /// Whether any unit started without waiting for the last one's commit, reading its
    /// writes from memory ([`crate::root::IncrementalState::overlays`], overlapped stages, roots computed
    /// from shipped BALs: never with `--bal none` or where every unit is a mega-block).
    pub overlay: bool,
    /// Where senders were recovered (`cpu` or `gpu`).
    pub recovery: &'static str,
    /// Thread budget.
    pub threads: usize,
    /// Threads of the stages' own pool (0: they shared the budget).
    pub stage_threads: usize,
    /// Every block, in order.
    pub blocks: Vec<BlockTimeline>,
    /// Wall time of the whole run, ns, without the time spent between blocks on work that is
    /// not a node's ([`crate::root::IncrementalState::between_blocks`]: cold mode's cache drop).
    pub wall_ns: u64,
    /// The time left out of `wall_ns`, ns.
    pub untimed_ns: u64,
    /// The wait, after the last block's commit, for every write to be durable (`--sync
    /// every-N|end`: the flush the last commit started, or the one done then), ns; inside
    /// `wall_ns`.
    pub final_sync_ns: u64,
    /// Process CPU time (user + system) during the run, ns; `None` where unreadable.
    pub cpu_ns: Option<u64>,
    /// The trie buffer's flush at the end of the run (inside `final_sync_ns`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_flush: Option<crate::root::Flush>,
    /// The trie buffer's journal written at the end of the run (inside `final_sync_ns`),
    /// if any: what the next run on the store continues from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_journal: Option<gigagas_store::JournalStats>,
}

impl PipelineRun {
    /// Gas of all blocks.
    pub fn gas(&self) -> u64 {
        self.blocks.iter().map(|b| b.gas).sum()
    }

    /// End-to-end throughput: gas / wall time of the whole pipeline, Mgas/s.
    pub fn e2e_mgas_per_s(&self) -> f64 {
        self.gas() as f64 / self.wall_ns.max(1) as f64 * 1e3
    }

    /// Busy time of each stage summed over blocks, ns (every key of [`STAGES`]).
    pub fn phases_ns(&self) -> BTreeMap<&'static str, u64> {
        let mut phases: BTreeMap<&'static str, u64> = STAGES.iter().map(|s| (*s, 0)).collect();
        for b in &self.blocks {
            for (stage, span) in &b.stages {
                *phases.entry(stage).or_default() += span.nanos();
            }
        }
        phases
    }

    /// The pipeline's lower bound on wall time, ns: the largest of the process CPU time over
    /// the threads that could run at once (the budget and the stages' own pool), the busiest
    /// stage's total (a stage handles one block at a time) and the longest block (its stages
    /// depend on each other: the time covered by at least one of them, since a root computed
    /// from the shipped BAL runs beside the block's execution).
    pub fn bound_ns(&self) -> u64 {
        let busiest_stage = self.phases_ns().values().copied().max().unwrap_or(0);
        let longest_block = self
            .blocks
            .iter()
            .map(|b| covered_ns(b.stages.values().copied()))
            .max()
            .unwrap_or(0);
        let cpu = self.cpu_ns.unwrap_or(0) / (self.threads + self.stage_threads).max(1) as u64;
        busiest_stage.max(longest_block).max(cpu)
    }

    /// Bound / wall, percent (how close the run came to its bound).
    pub fn percent_of_bound(&self) -> f64 {
        self.bound_ns() as f64 / self.wall_ns.max(1) as f64 * 100.0
    }
}

/// Time covered by at least one of `spans` (the length of their union), ns.
fn covered_ns(spans: impl Iterator<Item = StageSpan>) -> u64 {
    let mut spans: Vec<StageSpan> = spans.filter(|s| s.nanos() > 0).collect();
    spans.sort_by_key(|s| s.start_ns);
    let mut covered = 0;
    let mut reach = 0; // the end of what was counted so far
    for s in spans {
        let from = s.start_ns.max(reach);
        if s.end_ns > from {
            covered += s.end_ns - from;
            reach = s.end_ns;
        }
    }
    covered
}

/// Process CPU time (user + system) so far, from `/proc/self/stat`; `None` elsewhere.
pub(super) fn process_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // The kernel's USER_HZ is 100 on every Linux architecture gigagas targets.
    Some((utime + stime) * 10_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start_ns: u64, end_ns: u64) -> StageSpan {
        StageSpan { start_ns, end_ns }
    }

    #[test]
    fn covered_time_counts_overlaps_once() {
        assert_eq!(covered_ns(std::iter::empty()), 0);
        // Back to back: the sum.
        assert_eq!(covered_ns([span(0, 10), span(10, 30)].into_iter()), 30);
        // A root beside execution: counted once; a gap is not covered.
        let spans = [span(0, 10), span(10, 50), span(20, 60), span(70, 80)];
        assert_eq!(covered_ns(spans.into_iter()), 70);
        // One span inside another, in any order.
        assert_eq!(covered_ns([span(5, 8), span(0, 20)].into_iter()), 20);
    }
}
