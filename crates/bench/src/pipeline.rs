//! `bench --root/--pipeline`: the whole block pipeline (recover → prefetch → execute → verify
//! → write → root, `gigagas_engine::run_pipeline`) measured like execution — warm-up passes,
//! then repeats interleaved across configurations — and reported as [`PipelineReport`]s,
//! the end-to-end figure beside execution alone. Every pass verifies every block (and every
//! state root on complete states) before its time is kept.

use crate::BenchOptions;
use gigagas_engine::{
    run_pipeline_on, BalVariant, BlockCase, DiskRoot, Execution, IncrementalState, PipelineRun,
    Recoverer, RecoveryBackend, RootMode, RunSpec, SpecError, StateKind, StateSpec, SyncPolicy,
    ValidRun, ValidState,
};
use gigagas_exec::{ExecError, WorkerPool};
use gigagas_lab::{PipelineBlock, PipelineReport};

/// One pipeline configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineConfig {
    /// Thread budget (the execution pool's size and every other stage's).
    pub threads: usize,
    /// State root after each block.
    pub root: RootMode,
    /// Stages overlapped across blocks, or back to back.
    pub overlap: bool,
    /// The store's page cache dropped before every block (on-disk state only).
    pub cold: bool,
    /// What each block's list carries.
    pub bal: BalVariant,
    /// The on-disk store's overlay (the next block reads the last one's writes from memory
    /// while they commit); only with the stages overlapped on disk, else `false`.
    pub overlay: bool,
    /// Where senders are recovered.
    pub recovery: RecoveryBackend,
    /// Threads of the stages' own pool (0: they share the budget; overlapped only).
    pub stage_threads: usize,
}

impl PipelineConfig {
    /// The configuration as a run spec (parallel with `scheduler`, or, with the list variant
    /// `none`, sequential without one, `threads` then being the budget of every other
    /// stage). The store's directory is the bench's own temporary one.
    pub fn spec(&self, options: &BenchOptions, scheduler: gigagas_exec::Scheduler) -> RunSpec {
        let no_list = self.bal == BalVariant::None;
        RunSpec {
            execution: Execution::Parallel,
            threads: (!no_list).then_some(self.threads),
            scheduler: (!no_list).then_some(scheduler),
            mega: None,
            root: Some(self.root),
            bal: self.bal,
            pipeline: Some(self.overlap),
            state: StateSpec {
                kind: if options.disk {
                    StateKind::Disk
                } else {
                    StateKind::Memory
                },
                dir: options.disk.then(|| "bench-store".into()),
                sync: options.sync,
                overlay: (options.disk && self.overlap).then_some(self.overlay),
                cold: self.cold,
                cold_index: None,
                trie_buffer: options.trie_buffer.filter(|_| options.disk),
                trie_journal: options.trie_journal.filter(|_| options.disk),
                // Only where the overlay holds the blocks of a group.
                write_group: options
                    .write_group
                    .filter(|_| options.disk && self.overlap && self.overlay && !self.cold),
                // Every disk row with a trie buffer (cold rows have one only when given;
                // else the engine's default).
                wal: options
                    .wal
                    .filter(|_| options.disk && !(self.cold && options.trie_buffer.is_none())),
            },
            warm_spin: None,
            small_block_gas: Some(0),
            recovery: self.recovery,
            stage_threads: (self.stage_threads > 0).then_some(self.stage_threads),
        }
    }

    /// The configuration validated ([`RunSpec::validate`]); its thread budget is `threads`
    /// also without a list.
    pub fn validate(
        &self,
        options: &BenchOptions,
        scheduler: gigagas_exec::Scheduler,
    ) -> Result<ValidRun, SpecError> {
        let mut valid = self.spec(options, scheduler).validate(self.threads)?;
        valid.options.threads = self.threads;
        Ok(valid)
    }
}

/// Every pipeline configuration of `options`: threads × roots × pipeline on/off (× overlay
/// on/off with the pipeline on, on disk) × warm/cold × BAL variants × recovery backends (×
/// the stages' own pool's threads with the pipeline on), in that nesting. Empty
/// when neither `--root` nor `--pipeline` was given.
pub fn configs(options: &BenchOptions) -> Vec<PipelineConfig> {
    let bals = if options.bals.is_empty() {
        vec![BalVariant::Keys]
    } else {
        options.bals.clone()
    };
    let colds = if options.cold.is_empty() {
        vec![false]
    } else {
        options.cold.clone()
    };
    let recoveries = if options.recovery_backends.is_empty() {
        vec![RecoveryBackend::Cpu]
    } else {
        options.recovery_backends.clone()
    };
    let mut configs = Vec::new();
    for &threads in &options.threads {
        for &root in &options.roots {
            for &overlap in &options.overlap {
                let overlays = match (overlap && options.disk, options.overlay.is_empty()) {
                    (false, _) => vec![false],
                    (true, true) => vec![true],
                    (true, false) => options.overlay.clone(),
                };
                for &overlay in &overlays {
                    for &cold in &colds {
                        for &bal in &bals {
                            for &recovery in &recoveries {
                                for &stage_threads in &stage_pools(options, overlap) {
                                    configs.push(PipelineConfig {
                                        threads,
                                        root,
                                        overlap,
                                        cold,
                                        bal,
                                        overlay,
                                        recovery,
                                        stage_threads,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    configs
}

/// The stages' own pool sizes a configuration runs with: those of `options` with the stages
/// overlapped (empty: 0, the shared budget), 0 back to back (nothing runs beside a stage).
fn stage_pools(options: &BenchOptions, overlap: bool) -> Vec<usize> {
    if overlap && !options.stage_threads.is_empty() {
        options.stage_threads.clone()
    } else {
        vec![0]
    }
}

/// Runs every pipeline configuration of `options` over `cases`: `options.warmup` verified
/// passes each, then `options.repeats` timed passes, repeat r of every configuration before
/// repeat r+1 of any (each repeat in its own order, [`crate::repeat_order`]). Parallel
/// execution with the first of `options.schedulers`. `on_step` is called after every pass.
pub fn measure(
    cases: &[BlockCase<'_>],
    options: &BenchOptions,
    on_step: &(dyn Fn() + Sync),
) -> Result<Vec<PipelineReport>, ExecError> {
    let configs = configs(options);
    if configs.is_empty() || cases.is_empty() {
        return Ok(Vec::new());
    }
    let scheduler = options
        .schedulers
        .first()
        .copied()
        .unwrap_or(gigagas_exec::Scheduler::Ordered);
    let pools: std::collections::BTreeMap<usize, WorkerPool> = configs
        .iter()
        .filter(|c| c.bal.has_bal())
        // No warm spin: with the stages overlapped the pool is busy between blocks anyway, and
        // a spinning worker measured 13-16% slower end to end (docs/results/warm-workers-2core.md).
        .map(|c| (c.threads, WorkerPool::new(c.threads)))
        .collect();
    // The on-disk state: one store built from the first block's pre-state, copied afresh
    // before every pass (untimed).
    let disk = if options.disk {
        Some(DiskTemplate::new(&cases[0])?)
    } else {
        None
    };
    // Every backend opened once (a GPU is set up before anything is timed).
    let mut recoverers = std::collections::BTreeMap::new();
    for config in &configs {
        if let std::collections::btree_map::Entry::Vacant(slot) = recoverers.entry(config.recovery)
        {
            let opened = Recoverer::open(config.recovery).map_err(|e| ExecError::Unsupported {
                block: cases[0].number(),
                what: e,
            })?;
            slot.insert(opened);
        }
    }
    let recoverers = &recoverers;
    let pass = |config: &PipelineConfig| -> Result<PipelineRun, ExecError> {
        let valid = config
            .validate(options, scheduler)
            .map_err(|e| ExecError::Unsupported {
                block: cases[0].number(),
                what: e.to_string(),
            })?;
        let state = match (&disk, &valid.state) {
            (
                Some(template),
                ValidState::Disk {
                    sync,
                    overlay,
                    cold,
                    trie_buffer,
                    trie_journal,
                    write_group,
                    wal,
                    ..
                },
            ) => {
                let store = template.fresh(cases[0].number(), *sync)?;
                let refused = |what: String| ExecError::Unsupported {
                    block: cases[0].number(),
                    what,
                };
                let store = store
                    .with_trie_buffer(*trie_buffer)
                    .map_err(refused)?
                    .with_trie_journal(*trie_journal)
                    .with_write_group(*write_group)
                    .map_err(refused)?;
                let store = if *cold {
                    store
                        .make_cold(gigagas_engine::disk::ColdIndex::Dropped)
                        .map_err(|e| refused(format!("cold reads: {e}")))?
                } else {
                    store.with_overlay(*overlay)
                }
                .with_wal(*wal)
                .map_err(refused)?;
                Some(Box::new(store) as Box<dyn IncrementalState>)
            }
            _ => None,
        };
        let pool = pools.get(&config.threads).filter(|_| config.bal.has_bal());
        let recovery = &recoverers[&config.recovery];
        let run = run_pipeline_on(cases, &valid.options, pool, state, recovery);
        on_step();
        run
    };
    for config in &configs {
        for _ in 0..options.warmup {
            pass(config)?;
        }
    }
    let mut runs: Vec<Vec<PipelineRun>> = vec![Vec::new(); configs.len()];
    for r in 0..options.repeats.max(1) {
        for c in crate::repeat_order(configs.len(), r) {
            runs[c].push(pass(&configs[c])?);
        }
    }
    Ok(configs
        .iter()
        .zip(runs)
        .map(|(config, runs)| {
            let mut row = report(config, scheduler, runs);
            row.recovery = recoverers[&config.recovery].describe();
            row.state = if options.disk { "disk" } else { "memory" }.into();
            row.cache = if config.cold { "cold" } else { "warm" }.into();
            row.sync = options
                .disk
                .then(|| sync_of(options, config.cold).to_string());
            row.final_sync_ns = row.final_sync_ns.filter(|_| options.disk);
            // What `spec` asked for: the group on rows with the overlay, else one block.
            // What the validated spec ran: the write-ahead log on or off.
            row.wal = config
                .validate(options, scheduler)
                .ok()
                .and_then(|v| match v.state {
                    ValidState::Disk { wal, .. } => Some(wal),
                    ValidState::Memory => None,
                });
            row.write_group = options.disk.then(|| {
                (config.overlap && config.overlay && !config.cold)
                    .then_some(options.write_group)
                    .flatten()
                    .unwrap_or(1)
            });
            row
        })
        .collect())
}

/// The sync policy of a pass on disk: `--sync`, else `run`'s default (a node's batching warm,
/// every block cold: cold mode closes the store after every block, which flushes it).
fn sync_of(options: &BenchOptions, cold: bool) -> SyncPolicy {
    options.sync.unwrap_or(if cold {
        SyncPolicy::EveryBlock
    } else {
        SyncPolicy::NODE
    })
}

/// A store holding the first block's pre-state, in a temporary directory, and the copy every
/// pass runs on.
struct DiskTemplate {
    dir: tempfile::TempDir,
}

impl DiskTemplate {
    fn new(first: &BlockCase<'_>) -> Result<Self, ExecError> {
        let input = first.prepared.input;
        let fail = |what: String| ExecError::Unsupported {
            block: input.number(),
            what: format!("--state disk: {what}"),
        };
        let dir = tempfile::Builder::new()
            .prefix("gigagas-bench-store")
            .tempdir()
            .map_err(|e| fail(format!("temporary directory: {e}")))?;
        let store: gigagas_store::Store =
            gigagas_store::Store::create(&dir.path().join("template"))
                .map_err(|e| fail(e.to_string()))?;
        store
            .load(
                &input.pre_state,
                input.number().saturating_sub(1),
                input.header.parent_hash,
            )
            .map_err(|e| fail(format!("loading the first block's pre-state: {e}")))?;
        Ok(Self { dir })
    }

    /// A fresh copy of the template, opened, its writes made durable as `sync` says.
    fn fresh(&self, block: u64, sync: SyncPolicy) -> Result<DiskRoot, ExecError> {
        let fail = |what: String| ExecError::Unsupported {
            block,
            what: format!("--state disk: {what}"),
        };
        let (template, run) = (
            self.dir.path().join("template"),
            self.dir.path().join("run"),
        );
        if run.exists() {
            std::fs::remove_dir_all(&run).map_err(|e| fail(format!("{}: {e}", run.display())))?;
        }
        std::fs::create_dir(&run).map_err(|e| fail(format!("{}: {e}", run.display())))?;
        for entry in std::fs::read_dir(&template).map_err(|e| fail(e.to_string()))? {
            let entry = entry.map_err(|e| fail(e.to_string()))?;
            let to = run.join(entry.file_name());
            std::fs::copy(entry.path(), &to)
                .map_err(|e| fail(format!("copying the store: {e}")))?;
            // The copy is flushed here, before the pass: otherwise the first block's durable
            // commit flushed the whole copied store inside its timed write (measured: 80 ms
            // of a 300M block's write, against 5 ms for the next blocks).
            std::fs::File::open(&to)
                .and_then(|f| f.sync_all())
                .map_err(|e| fail(format!("flushing the copied store: {e}")))?;
        }
        let store = gigagas_store::Store::open_with(&run, sync.durable_commits())
            .map_err(|e| fail(e.to_string()))?;
        DiskRoot::new(store).with_sync(sync).map_err(fail)
    }
}

/// Every pipeline configuration of `options` validated as a run spec, before any data is
/// loaded: the first refusal names its fields.
pub fn validate(options: &BenchOptions) -> Result<(), SpecError> {
    let scheduler = options
        .schedulers
        .first()
        .copied()
        .unwrap_or(gigagas_exec::Scheduler::Ordered);
    if options.disk && options.roots.iter().any(|r| *r != RootMode::Incremental) {
        return Err(SpecError::conflict(
            "root",
            "state",
            "a state on disk is measured with the store's root: root incremental only",
        ));
    }
    configs(options)
        .iter()
        .try_for_each(|c| c.validate(options, scheduler).map(|_| ()))
}

/// Refuses, before anything runs, a pipeline configuration the data cannot take: the
/// incremental root needs complete states that ship their BALs.
pub fn check(blocks: &[gigagas_data::BlockInput], options: &BenchOptions) -> Result<(), SpecError> {
    if options.roots.contains(&RootMode::Incremental) {
        gigagas_engine::spec::check_incremental_data(blocks)?;
    }
    Ok(())
}

/// Number of passes [`measure`] makes (for progress bars).
pub fn steps(options: &BenchOptions) -> u64 {
    (configs(options).len() * (options.warmup + options.repeats.max(1))) as u64
}

/// One configuration's report: the repeats' walls, and everything else from the median
/// repeat (the one whose wall time is the lower median), so that its stage times, bound and
/// timeline belong to one real run.
fn report(
    config: &PipelineConfig,
    scheduler: gigagas_exec::Scheduler,
    mut runs: Vec<PipelineRun>,
) -> PipelineReport {
    let repeat_ns: Vec<u64> = runs.iter().map(|r| r.wall_ns).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| repeat_ns[i]);
    let median = runs.swap_remove(order[(order.len() - 1) / 2]);
    let phases = median.phases_ns();
    let total_gas = median.gas();
    PipelineReport {
        mode: median.mode.clone(),
        threads: config.threads,
        scheduler: scheduler.to_string(),
        root: median.root.name().into(),
        recovery: median.recovery.into(),
        stage_threads: median.stage_threads,
        state: "memory".into(),
        overlap: config.overlap,
        overlay: median.overlay,
        bal: config.bal.name().into(),
        cache: "warm".into(),
        sync: None,
        final_sync_ns: Some(median.final_sync_ns),
        write_group: None,
        wal: None,
        demand_reads: median.blocks.iter().filter_map(|b| b.demand_reads).sum(),
        read_bytes: median
            .blocks
            .iter()
            .map(|b| b.read_bytes)
            .sum::<Option<u64>>(),
        total_gas,
        median_ns: median.wall_ns,
        e2e_mgas_per_s: median.e2e_mgas_per_s(),
        mgas_per_s: total_gas as f64 / phases["execute"].max(1) as f64 * 1e3,
        phases_ns: phases.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        bound_ns: median.bound_ns(),
        percent_of_bound: median.percent_of_bound(),
        timeline: median
            .blocks
            .iter()
            .map(|b| PipelineBlock {
                number: b.number,
                gas: b.gas,
                txs: b.txs,
                stages: b
                    .stages
                    .iter()
                    .map(|(k, s)| ((*k).to_owned(), [s.start_ns, s.end_ns]))
                    .collect(),
                demand_reads: b.demand_reads,
                read_bytes: b.read_bytes,
            })
            .collect(),
        repeat_ns,
    }
}
