//! The run spec: every setting of a run in one value ([`RunSpec`]), validated once, before
//! any data is loaded, into the settings the engine runs from ([`ValidRun`]).
//!
//! The spec speaks in its own field names (`threads`, `state.cold`, …), never in a
//! front end's flags: a [`SpecError`] names the field (and the field it conflicts with), and
//! each front end maps field names to its own flags ([`SpecError::render`]). Rules that
//! depend on the data (an incremental root needs complete states that ship their lists) are
//! checked once the blocks are known ([`PipelineOptions::check`]).

use crate::block::{BlockCase, Mode};
use crate::disk::SyncPolicy;
use crate::pipeline::PipelineOptions;
use crate::recovery::RecoveryBackend;
use crate::root::RootMode;
use crate::variant::BalVariant;
use gigagas_exec::Scheduler;
use std::path::PathBuf;
use std::time::Duration;

mod error;
pub use error::SpecError;

/// Most worker threads a run takes.
pub const MAX_THREADS: usize = 1024;

/// Most threads of the stages' own pool ([`RunSpec::stage_threads`]).
pub const MAX_STAGE_THREADS: usize = MAX_THREADS;

/// Most blocks one mega-block takes.
pub const MAX_MEGA: usize = 100_000;

/// Longest warm spin of the worker threads after a unit.
pub const MAX_WARM_SPIN: Duration = Duration::from_secs(1);

/// How transactions execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Execution {
    /// One after another on one thread (the baseline, which builds the BAL).
    Sequential,
    /// All at once from the block's BAL, on the worker pool.
    #[default]
    Parallel,
}

/// Where the state lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateKind {
    /// In memory (the node store is built from the first pre-state before timing).
    #[default]
    Memory,
    /// In an MDBX store on disk (`state.dir`).
    Disk,
}

/// The state's settings as given (each `None`: not given, the default applies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateSpec {
    /// Memory or disk.
    pub kind: StateKind,
    /// The store's directory (disk only; required there).
    pub dir: Option<PathBuf>,
    /// When the store's writes become durable (disk only).
    pub sync: Option<SyncPolicy>,
    /// The overlay: the next block reads the last one's writes from memory while they
    /// commit (disk with the pipeline on only).
    pub overlay: Option<bool>,
    /// Cold reads: the store's page cache dropped before every block (disk, pipeline off).
    pub cold: bool,
    /// With cold reads, what stays cached of the data file: nothing (the default) or the
    /// B-tree's branch pages ([`crate::disk::ColdIndex`]).
    pub cold_index: Option<crate::disk::ColdIndex>,
    /// The trie buffer's bound, bytes: trie-node writes gathered across blocks and flushed
    /// as one sorted batch when it is reached (disk only; 0: written with every block;
    /// default [`crate::DEFAULT_TRIE_BUFFER`], with cold reads 0).
    pub trie_buffer: Option<u64>,
    /// At the end of the run, the trie buffer journaled (`true`: one sequential file beside
    /// the store that the next run continues from, geth's journal at shutdown; the default)
    /// or flushed into the trie tables (`false`). Disk with a trie buffer only.
    pub trie_journal: Option<bool>,
    /// Blocks written per write transaction (disk with the overlay only; default 1): the
    /// blocks of a group are held in memory as overlay layers and written together when
    /// the last one commits, a page several of them change copied once ([`crate::disk`]).
    /// At most [`crate::MAX_WRITE_GROUP`]; with `every-N` it divides N, so that every N-th
    /// block still ends a transaction and its sync.
    pub write_group: Option<usize>,
    /// The write-ahead log of the flat state (disk with the overlay and a trie buffer, one
    /// block per write; default on wherever those hold): a block's flat writes appended to
    /// the store's log,
    /// durable under `state.sync`, and held with its trie nodes in the trie buffer, the
    /// store's B-tree written when the buffer fills ([`crate::disk`]).
    pub wal: Option<bool>,
}

/// Every setting of one run, as given (`None`: not given).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunSpec {
    /// Sequential or parallel.
    pub execution: Execution,
    /// Worker threads (parallel only; default: the machine's cores).
    pub threads: Option<usize>,
    /// Dispatch order (parallel only; default: ordered).
    pub scheduler: Option<Scheduler>,
    /// Blocks per execution unit (parallel only; default 1).
    pub mega: Option<usize>,
    /// The state root after each block (default: none in memory, incremental on disk).
    pub root: Option<RootMode>,
    /// What each block's list carries (`none`: no list, sequential without building one).
    pub bal: BalVariant,
    /// Overlap the stages of neighbouring blocks (default: on).
    pub pipeline: Option<bool>,
    /// Where the state lives.
    pub state: StateSpec,
    /// How long the workers spin after a unit with the pipeline off (default 0).
    pub warm_spin: Option<Duration>,
    /// The small-block threshold, gas (blocks below it run on the calling thread; default
    /// [`gigagas_exec::SMALL_BLOCK_GAS`]; 0 is off; mega-blocks always use the pool).
    pub small_block_gas: Option<u64>,
    /// Where senders are recovered (default: the CPU).
    pub recovery: RecoveryBackend,
    /// Threads of a pool of their own for verification, the roots and the commit, beside
    /// the execution workers' (default 0: they share the workers' budget; overlapped stages
    /// only). See [`PipelineOptions::stage_threads`].
    pub stage_threads: Option<usize>,
}

/// The state's settings, validated and with their defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidState {
    /// In memory.
    Memory,
    /// On disk.
    Disk {
        /// The store's directory.
        dir: PathBuf,
        /// When writes become durable.
        sync: SyncPolicy,
        /// The overlay on.
        overlay: bool,
        /// Cold reads.
        cold: bool,
        /// With cold reads, what stays cached ([`crate::disk::ColdIndex::Dropped`] without).
        cold_index: crate::disk::ColdIndex,
        /// The trie buffer's bound, bytes (0: none).
        trie_buffer: u64,
        /// The trie buffer journaled at the end (`false`: flushed; always `false` without
        /// a buffer).
        trie_journal: bool,
        /// Blocks per write transaction (1 without the overlay).
        write_group: usize,
        /// The flat state through the write-ahead log and the trie buffer.
        wal: bool,
    },
}

/// A validated run spec: what the engine runs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidRun {
    /// The pipeline's options (mode, threads, root, overlap, mega, list).
    pub options: PipelineOptions,
    /// Where the state lives.
    pub state: ValidState,
    /// The workers' spin after a unit.
    pub warm_spin: Duration,
    /// The small-block threshold, gas (0 with mega-blocks).
    pub small_block_gas: u64,
    /// Where senders are recovered.
    pub recovery: RecoveryBackend,
}

impl RunSpec {
    /// Checks every setting and every combination, and fills in the defaults (`cores`: the
    /// machine's, the default thread count). Nothing is loaded or opened.
    pub fn validate(&self, cores: usize) -> Result<ValidRun, SpecError> {
        let mode = self.mode(cores)?;
        let state = self.valid_state()?;
        let disk = matches!(state, ValidState::Disk { .. });
        let mega = match self.mega {
            Some(k) if !(1..=MAX_MEGA).contains(&k) => {
                return Err(SpecError::field(
                    "mega",
                    format!("{k} blocks per unit: from 1 to {MAX_MEGA}"),
                ))
            }
            Some(k) => k,
            None => 1,
        };
        let root = match (disk, self.root) {
            // The store's root is incremental, split in parallel at every node with two or
            // more changes: both names mean it there.
            (true, None | Some(RootMode::Incremental | RootMode::Parallel)) => {
                RootMode::Incremental
            }
            (true, Some(other)) => {
                return Err(SpecError::conflict(
                    "root",
                    "state",
                    format!(
                        "the store keeps the state root itself (incremental); root {} cannot be combined with state disk",
                        other.name()
                    ),
                ))
            }
            (false, root) => root.unwrap_or(RootMode::None),
        };
        if let Some(spin) = self.warm_spin {
            if spin > MAX_WARM_SPIN {
                return Err(SpecError::field(
                    "warm_spin",
                    format!("{spin:?}: at most {MAX_WARM_SPIN:?}"),
                ));
            }
        }
        let options = PipelineOptions {
            root,
            overlap: self.pipeline.unwrap_or(true),
            mega,
            bal: self.bal,
            stage_threads: self.stage_threads.unwrap_or(0),
            ..PipelineOptions::new(mode)
        };
        options.check_settings()?;
        Ok(ValidRun {
            // The pipeline's stages keep the pool busy between blocks: a spinning worker
            // measured 13-16% slower end to end (docs/results/warm-workers-2core.md), so the
            // spin is used only with the stages back to back.
            warm_spin: if options.overlap {
                Duration::ZERO
            } else {
                self.warm_spin.unwrap_or(Duration::ZERO)
            },
            // Mega-blocks run every unit on the pool (the small-block threshold is per block).
            small_block_gas: if mega > 1 {
                0
            } else {
                self.small_block_gas
                    .unwrap_or(gigagas_exec::SMALL_BLOCK_GAS)
            },
            options,
            state,
            recovery: self.recovery,
        })
    }

    /// The execution mode: the list variant `none` runs sequentially without one; the
    /// thread count and scheduler apply to parallel mode only.
    fn mode(&self, cores: usize) -> Result<Mode, SpecError> {
        let parallel_only = [
            ("threads", self.threads.is_some()),
            ("scheduler", self.scheduler.is_some()),
            ("mega", self.mega.is_some_and(|k| k > 1)),
        ];
        let given = parallel_only.iter().find(|(_, given)| *given).map(|f| f.0);
        if self.bal == BalVariant::None {
            if let Some(field) = given {
                return Err(SpecError::conflict(
                    field,
                    "bal",
                    "does not apply to bal none: without a list the block runs sequentially",
                ));
            }
            return Ok(Mode::SequentialNoBal);
        }
        match self.execution {
            Execution::Sequential => match given {
                Some(field) => Err(SpecError::conflict(
                    field,
                    "execution",
                    "applies to parallel execution only (sequential execution runs one transaction after another on one thread)",
                )),
                None => Ok(Mode::Sequential),
            },
            Execution::Parallel => {
                let threads = match self.threads {
                    Some(t) if !(1..=MAX_THREADS).contains(&t) => {
                        return Err(SpecError::field(
                            "threads",
                            format!("{t} threads: from 1 to {MAX_THREADS}"),
                        ))
                    }
                    Some(t) => t,
                    None => cores.clamp(1, MAX_THREADS),
                };
                Ok(Mode::Parallel {
                    threads,
                    scheduler: self.scheduler.unwrap_or(Scheduler::Ordered),
                })
            }
        }
    }

    /// The state's settings: the disk's only on disk, cold only back to back and every
    /// block durable, the overlay only with the stages overlapped.
    fn valid_state(&self) -> Result<ValidState, SpecError> {
        let s = &self.state;
        let overlap = self.pipeline.unwrap_or(true);
        if s.kind == StateKind::Memory {
            let disk_only = [
                ("state.dir", s.dir.is_some()),
                ("state.sync", s.sync.is_some()),
                ("state.overlay", s.overlay.is_some()),
                ("state.cold", s.cold),
                ("state.cold_index", s.cold_index.is_some()),
                ("state.trie_buffer", s.trie_buffer.is_some()),
                ("state.trie_journal", s.trie_journal.is_some()),
                ("state.write_group", s.write_group.is_some()),
                ("state.wal", s.wal.is_some()),
            ];
            if let Some((field, _)) = disk_only.iter().find(|(_, given)| *given) {
                return Err(SpecError::conflict(
                    field,
                    "state",
                    "applies to a state on disk only (the state is in memory)",
                ));
            }
            return Ok(ValidState::Memory);
        }
        let Some(dir) = s.dir.clone() else {
            return Err(SpecError::field(
                "state.dir",
                "a state on disk needs the store's directory",
            ));
        };
        if s.cold && overlap {
            return Err(SpecError::conflict(
                "state.cold",
                "pipeline",
                "cold reads need the stages back to back: the page cache is dropped between blocks, which overlapped stages of other blocks would straddle",
            ));
        }
        if let (Some(_), false) = (s.cold_index, s.cold) {
            return Err(SpecError::conflict(
                "state.cold_index",
                "state.cold",
                "what cold reads keep cached between blocks: without cold reads every page stays cached",
            ));
        }
        let sync = match (s.sync, s.cold) {
            (Some(sync), true) if sync != SyncPolicy::EveryBlock => {
                return Err(SpecError::conflict(
                    "state.sync",
                    "state.cold",
                    format!("{sync}: cold mode closes the store after every block, which flushes it outside the timed run; only every-block is measured honestly there"),
                ))
            }
            (Some(sync), _) => sync,
            (None, true) => SyncPolicy::EveryBlock,
            (None, false) => SyncPolicy::NODE,
        };
        if let (Some(on), false) = (s.overlay, overlap) {
            return Err(SpecError::conflict(
                "state.overlay",
                "pipeline",
                format!(
                    "overlay {}: with the stages back to back no block starts before the last one committed",
                    if on { "on" } else { "off" }
                ),
            ));
        }
        // Cold reads measure the worst case as before unless a buffer is asked for: every
        // block's trie nodes written with it. With one, the store's pages are still dropped
        // before every block; the buffer is the process's memory, as a node's would be.
        let trie_buffer = match (s.trie_buffer, s.cold) {
            (Some(b), _) => check_trie_buffer(b)?,
            (None, true) => 0,
            (None, false) => crate::DEFAULT_TRIE_BUFFER,
        };
        if let (Some(on), 0) = (s.trie_journal, trie_buffer) {
            return Err(SpecError::conflict(
                "state.trie_journal",
                // The field that made it none: the buffer given as 0, else cold's default.
                if s.cold && s.trie_buffer.is_none() { "state.cold" } else { "state.trie_buffer" },
                format!(
                    "trie journal {}: there is no trie buffer to journal or flush at the end (every block writes its trie nodes{})",
                    if on { "on" } else { "off" },
                    if s.cold && s.trie_buffer.is_none() { "; with cold reads, unless state.trie_buffer is given" } else { "" }
                ),
            ));
        }
        let overlay = s.overlay.unwrap_or(true) && !s.cold;
        let write_group = match s.write_group {
            None => 1,
            Some(n) => check_write_group(n, sync, overlay, s.cold, overlap)?,
        };
        // On by default with the overlapped pipeline and the overlay (a trie buffer takes the
        // blocks' flat writes, one block per write); given, also with the stages back to
        // back, without the overlay and with cold reads: the next block reads the flat state
        // through the trie buffer either way.
        let can_log = overlap && overlay && trie_buffer > 0 && write_group == 1;
        let wal = s.wal.unwrap_or(can_log);
        if wal && s.wal.is_some() {
            let refused = if trie_buffer == 0 {
                // The field that made it none: the buffer given as 0, else cold's default.
                Some(if s.cold && s.trie_buffer.is_none() {
                    ("state.cold", "the log's blocks are held in the trie buffer until it is flushed, and cold reads have none unless a trie buffer is given")
                } else {
                    ("state.trie_buffer", "the log's blocks are held in the trie buffer until it is flushed, and there is none")
                })
            } else if write_group > 1 {
                Some((
                    "state.write_group",
                    "each block is appended to the log at its own commit",
                ))
            } else {
                None
            };
            if let Some((with, why)) = refused {
                return Err(SpecError::conflict(
                    "state.wal",
                    with,
                    format!("wal on: {why}"),
                ));
            }
        }
        Ok(ValidState::Disk {
            dir,
            sync,
            overlay,
            cold: s.cold,
            cold_index: s.cold_index.unwrap_or_default(),
            trie_buffer,
            trie_journal: trie_buffer > 0 && s.trie_journal.unwrap_or(true),
            write_group,
            wal,
        })
    }
}

impl PipelineOptions {
    /// The rules between the pipeline's own settings: the list variant `none` goes with
    /// sequential execution without a list and every other variant with a mode that has
    /// one; a mega-block is parallel work.
    pub fn check_settings(&self) -> Result<(), SpecError> {
        match (self.bal, self.mode) {
            (BalVariant::None, Mode::SequentialNoBal) => {}
            (BalVariant::None, mode) => {
                return Err(SpecError::conflict(
                    "bal",
                    "execution",
                    format!("bal none runs a block without a list (sequential, building none); mode {mode} needs one"),
                ))
            }
            (variant, Mode::SequentialNoBal) => {
                return Err(SpecError::conflict(
                    "execution",
                    "bal",
                    format!("sequential execution without a BAL has no list to read from: bal none, not {variant}"),
                ))
            }
            _ => {}
        }
        if self.mega > 1 && !matches!(self.mode, Mode::Parallel { .. }) {
            return Err(SpecError::conflict(
                "mega",
                "execution",
                "a mega-block is parallel work (its blocks' transactions run at once from their merged BALs)",
            ));
        }
        match self.stage_threads {
            0 => {}
            n if n > MAX_STAGE_THREADS => {
                return Err(SpecError::field(
                    "stage_threads",
                    format!("{n} threads: from 0 (the workers' budget) to {MAX_STAGE_THREADS}"),
                ))
            }
            _ if !self.overlap => {
                return Err(SpecError::conflict(
                    "stage_threads",
                    "pipeline",
                    "a pool of the stages' own keeps verification and the roots beside the next block's execution; back to back nothing runs beside them",
                ))
            }
            _ => {}
        }
        Ok(())
    }

    /// [`Self::check_settings`], and the rules that depend on the blocks: an incremental
    /// root needs complete states that ship their block access lists.
    pub fn check(&self, cases: &[BlockCase<'_>]) -> Result<(), SpecError> {
        self.check_settings()?;
        if self.root != RootMode::Incremental {
            return Ok(());
        }
        let inputs = cases.iter().map(|c| c.prepared.input);
        check_incremental_data(inputs)
    }
}

/// A trie buffer's bound: 0 (none), or from [`crate::MIN_TRIE_BUFFER`] to half this machine's
/// memory.
/// A write group of `n` blocks: 1 to [`crate::MAX_WRITE_GROUP`]; more than one needs the
/// overlay (the blocks held are read from memory) and, with `every-N`, divides N.
fn check_write_group(
    n: usize,
    sync: SyncPolicy,
    overlay: bool,
    cold: bool,
    overlap: bool,
) -> Result<usize, SpecError> {
    let max = crate::MAX_WRITE_GROUP;
    if n == 0 || n > max {
        return Err(SpecError::field(
            "state.write_group",
            format!("{n}: from 1 to {max} blocks per write transaction"),
        ));
    }
    if n == 1 {
        return Ok(1);
    }
    let (with, why) = if cold {
        (
            "state.cold",
            "cold reads write every block before the next one starts".to_owned(),
        )
    } else if !overlap {
        ("pipeline", "with the stages back to back the next block reads the store, so each block is written before it starts".to_owned())
    } else if !overlay {
        ("state.overlay", "without the overlay the next block reads the store, so each block is written before it starts".to_owned())
    } else {
        match sync {
            SyncPolicy::EveryBlock => (
                "state.sync",
                "every-block makes each block durable at its own commit".to_owned(),
            ),
            SyncPolicy::Every(every) if every % n as u64 != 0 => (
                "state.sync",
                format!("every-{every}: the group must divide the sync interval, so that each sync comes at the end of a transaction"),
            ),
            _ => return Ok(n),
        }
    };
    Err(SpecError::conflict(
        "state.write_group",
        with,
        format!("{n} blocks per transaction: {why}"),
    ))
}

fn check_trie_buffer(bytes: u64) -> Result<u64, SpecError> {
    if bytes != 0 && bytes < crate::MIN_TRIE_BUFFER {
        return Err(SpecError::field(
            "state.trie_buffer",
            format!(
                "{bytes} bytes: the least is {} (1 MiB; 0 writes trie nodes with every block)",
                crate::MIN_TRIE_BUFFER
            ),
        ));
    }
    if let Some(total) = crate::os::memory_bytes() {
        if bytes > total / 2 {
            return Err(SpecError::field(
                "state.trie_buffer",
                format!("{bytes} bytes: more than half of this machine's memory ({total} bytes)"),
            ));
        }
    }
    Ok(bytes)
}

/// An incremental root needs complete states that ship their block access lists (generated
/// chains): the first block that does not is named.
pub fn check_incremental_data<'b>(
    blocks: impl IntoIterator<Item = &'b gigagas_data::BlockInput>,
) -> Result<(), SpecError> {
    match blocks
        .into_iter()
        .find(|b| !b.complete_state || b.access_list.is_none())
    {
        Some(bad) => Err(SpecError::field(
            "root",
            format!(
                "root incremental needs complete states that ship their block access lists (generated chains); block {} has {}; use root serial or parallel",
                bad.number(),
                if bad.complete_state { "no BAL" } else { "a touched-only pre-state" }
            ),
        )),
        None => Ok(()),
    }
}
