//! Measurement driver: prepares blocks (sender recovery, the sequential baseline that builds
//! the BAL), runs configurations (sequential, or parallel at a thread count with a scheduler),
//! verifies every run, and assembles a [`BenchReport`].
//!
//! Architecture invariant: a time is recorded only for a run that verified; any verification
//! failure aborts with an error naming block, transaction and item.

use gigagas_data::Dataset;
pub use gigagas_engine::{
    mega_plan, mega_pre_state, prepare, run_block, run_block_with, run_mega, BlockCase, BlockRun,
    MegaUnit, Mode, Recovery,
};
use gigagas_exec::{ExecError, Scheduler, WorkerPool};
use gigagas_lab::{
    cost_model::{BlockSample, CostModel},
    critical_path_bound, mega_units,
    report::{BlockPhases, Machine, Settings},
    stats::{median, percentile, sum_of_medians},
    BenchReport, BlockReport, BlockTrace, PhaseTotals, RunReport, TxTrace, SCHEMA,
};
use std::collections::BTreeMap;

pub mod floor;
pub mod pipeline;

/// How Mgas/s is defined everywhere in gigagas.
pub const THROUGHPUT_DEFINITION: &str = "gas used / execution wall time, with pre-state in \
memory and senders recovered in advance; no state root. Sequential: pre-execution, all \
transactions, post-execution and BAL construction. Parallel: all transactions on the worker \
pool, each checked against the BAL, receipts merged in block order, and (a block run alone, \
since 2026-11-27) the part of the canonical commit and BAL rebuild the workers do while the \
block executes. Sender recovery, BAL preparation, the rest of the commit/BAL rebuild \
(post-execution, the comparison; all of it for mega-blocks) and verification are timed as \
separate phases.";

/// One measured configuration: an execution mode, where sender recovery happens, and how
/// many consecutive blocks form one mega-block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Config {
    /// Execution mode.
    pub mode: Mode,
    /// Sender recovery placement.
    pub recovery: Recovery,
    /// Blocks per mega-block (1 = each block on its own; always 1 for sequential).
    pub mega: usize,
}

/// What `bench` runs.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Thread counts for the parallel modes.
    pub threads: Vec<usize>,
    /// Schedulers for the parallel modes.
    pub schedulers: Vec<Scheduler>,
    /// Untimed (but verified) passes per configuration.
    pub warmup: usize,
    /// Timed passes per configuration, interleaved across configurations.
    pub repeats: usize,
    /// Sender-recovery placements to measure (each with every mode).
    pub recovery: Vec<Recovery>,
    /// Mega-block sizes for the parallel modes (1 = per block).
    pub mega: Vec<usize>,
    /// Also measure the contention floor at every thread count ([`floor`]), the streams
    /// sharing what the value says.
    pub contention_floor: Option<gigagas_lab::FloorSharing>,
    /// State roots of the whole-pipeline runs ([`pipeline`]); with `overlap`, both empty
    /// for none.
    pub roots: Vec<gigagas_engine::RootMode>,
    /// Pipeline on (`true`) and/or off for the whole-pipeline runs.
    pub overlap: Vec<bool>,
    /// The whole-pipeline runs keep the state in an on-disk store (`roots` must then be
    /// incremental only): every pass starts from a copy of one store built from the first
    /// block's pre-state before anything is timed.
    pub disk: bool,
    /// How long the parallel modes' worker threads stay awake after each block or unit
    /// ([`WorkerPool::with_warm_spin`]); the whole-pipeline runs never spin.
    pub warm_spin: std::time::Duration,
    /// Also measure the sequential path on a plain revm `State` that builds no BAL
    /// ([`Mode::SequentialNoBal`], the row `sequential-nobal`, verified like the baseline):
    /// the BAL builder's cost per block is the difference from the `sequential` row.
    pub sequential_without_bal: bool,
    /// BAL variants of the whole-pipeline runs ([`gigagas_engine::BalVariant`]; `keys`, the
    /// EIP-7928 list, when none is asked for): each a configuration of its own.
    pub bals: Vec<gigagas_engine::BalVariant>,
    /// Page cache of the on-disk store for the whole-pipeline runs: warm (`false`) and/or
    /// cold (`true`: dropped before every block, untimed; needs `disk` and the pipeline off).
    pub cold: Vec<bool>,
    /// The on-disk store's overlay on (`true`) and/or off with the pipeline on (`--overlay`;
    /// empty: on, as `run` does). Pipeline-off and in-memory configurations have none.
    pub overlay: Vec<bool>,
    /// When the on-disk store's writes are made durable (`--sync`); `None`: as `run` does,
    /// [`gigagas_engine::SyncPolicy::NODE`] warm and every block cold.
    pub sync: Option<gigagas_engine::SyncPolicy>,
    /// Where the whole-pipeline runs recover senders (each backend a configuration of its
    /// own; empty: the CPU).
    pub recovery_backends: Vec<gigagas_engine::RecoveryBackend>,
    /// Threads of the stages' own pool with the pipeline on, each a configuration of its own
    /// (`--stage-threads`; empty: 0, the stages share the workers' budget).
    pub stage_threads: Vec<usize>,
    /// The on-disk store's trie buffer, bytes (`None`: the engine's default; 0: none).
    pub trie_buffer: Option<u64>,
    /// The on-disk store's trie buffer at the end of each pass: journaled (`true`, the
    /// default) or flushed into the trie tables (`--trie-journal`).
    pub trie_journal: Option<bool>,
    /// Blocks per write transaction on rows with the overlay (`None`: one).
    pub write_group: Option<usize>,
    /// The write-ahead log on rows with the overlay (`None`: the engine's default, on).
    pub wal: Option<bool>,
}

impl Default for BenchOptions {
    /// The main job's defaults on one core: sequential and parallel on 1 thread with the
    /// ordered scheduler, one warm-up, [`DEFAULT_REPEATS`] repeats, senders recovered in
    /// advance, no pipeline runs.
    fn default() -> Self {
        Self {
            threads: vec![1],
            schedulers: vec![Scheduler::Ordered],
            warmup: DEFAULT_WARMUP,
            repeats: DEFAULT_REPEATS,
            recovery: vec![Recovery::Pre],
            mega: vec![1],
            contention_floor: None,
            roots: Vec::new(),
            overlap: Vec::new(),
            disk: false,
            warm_spin: std::time::Duration::ZERO,
            sequential_without_bal: false,
            bals: Vec::new(),
            cold: Vec::new(),
            overlay: Vec::new(),
            sync: None,
            recovery_backends: Vec::new(),
            stage_threads: Vec::new(),
            trie_buffer: None,
            trie_journal: None,
            write_group: None,
            wal: None,
        }
    }
}

/// Timed passes per configuration when none are asked for (`bench --repeats`).
pub const DEFAULT_REPEATS: usize = 5;

/// Untimed, verified passes per configuration when none are asked for (`bench --warmup`).
pub const DEFAULT_WARMUP: usize = 1;

impl BenchOptions {
    /// The thread counts measured when none are asked for (`bench --threads`): 1, 2, 4, …
    /// up to `cores`, and `cores` itself.
    pub fn default_threads(cores: usize) -> Vec<usize> {
        let cores = cores.max(1);
        let mut threads: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
            .take_while(|&t| t <= cores)
            .collect();
        if threads.last() != Some(&cores) {
            threads.push(cores);
        }
        threads
    }

    /// Every configuration: per recovery placement, sequential first (then the sequential
    /// path without the BAL builder, when asked), then mega sizes × threads × schedulers.
    pub fn configs(&self) -> Vec<Config> {
        let mut configs = Vec::new();
        for &recovery in &self.recovery {
            configs.push(Config {
                mode: Mode::Sequential,
                recovery,
                mega: 1,
            });
            if self.sequential_without_bal {
                configs.push(Config {
                    mode: Mode::SequentialNoBal,
                    recovery,
                    mega: 1,
                });
            }
            for &mega in &self.mega {
                for &threads in &self.threads {
                    for &scheduler in &self.schedulers {
                        configs.push(Config {
                            mode: Mode::Parallel { threads, scheduler },
                            recovery,
                            mega: mega.max(1),
                        });
                    }
                }
            }
        }
        configs
    }

    /// Number of unit runs (blocks, or mega-blocks) `bench` performs on blocks numbered
    /// `numbers` (for progress bars).
    pub fn steps(&self, numbers: &[u64]) -> u64 {
        let per_pass: usize = self
            .configs()
            .iter()
            .map(|c| mega_units(numbers, c.mega).len())
            .sum();
        let floor = if self.contention_floor.is_some() {
            // One warm-up round and `repeats` timed ones; a round runs every count once,
            // 1 included, and each stream pass is one step.
            let mut counts = self.threads.clone();
            counts.push(1);
            counts.sort_unstable();
            counts.dedup();
            counts.iter().sum::<usize>() * (self.repeats.max(1) + 1)
        } else {
            0
        };
        (per_pass * (self.warmup + self.repeats) + floor) as u64 + pipeline::steps(self)
    }
}

/// Runs every configuration over all `cases` (warm-up, then interleaved repeats: repeat r of
/// every configuration before repeat r+1 of any, each repeat in its own order,
/// [`repeat_order`]) and assembles the
/// report. `on_step` is called
/// after every block run.
pub fn bench(
    dataset: &Dataset,
    cases: &[BlockCase<'_>],
    options: &BenchOptions,
    on_step: &(dyn Fn() + Sync),
) -> Result<BenchReport, ExecError> {
    validate(options)?;
    let spec_error = |e: gigagas_engine::SpecError| ExecError::Unsupported {
        block: dataset.blocks.first().map_or(0, |b| b.number()),
        what: e.to_string(),
    };
    pipeline::validate(options).map_err(spec_error)?;
    pipeline::check(&dataset.blocks, options).map_err(spec_error)?;
    let load_avg_start = gigagas_lab::report::load_average();
    // Other processes' CPU time over the whole measurement (warm-up, timed repeats, the
    // contention floor and the pipeline runs): `machine.cpu_during_run`.
    let load_meter = gigagas_lab::machine_load::LoadMeter::start();
    let modes = options.configs();
    if modes.is_empty() {
        return Err(ExecError::Unsupported {
            block: 0,
            what: "no configuration to measure (empty --recover-senders)".into(),
        });
    }
    let pools: BTreeMap<usize, WorkerPool> = options
        .threads
        .iter()
        .map(|&t| (t, WorkerPool::with_warm_spin(t, options.warm_spin)))
        .collect();
    // Mega-block units (and their merged pre-states), built once, outside every timing.
    let units: BTreeMap<usize, Vec<MegaUnit<'_>>> = modes
        .iter()
        .filter(|c| c.mega > 1)
        .map(|c| Ok((c.mega, mega_plan(cases, c.mega)?)))
        .collect::<Result<_, ExecError>>()?;
    // One entry per block, or per mega-block unit for a mega configuration.
    let pass_on = |config: Config| -> Result<Vec<BlockRun>, ExecError> {
        let pool = pools.get(&config.mode.threads());
        match (config.mode, units.get(&config.mega)) {
            (Mode::Parallel { threads, scheduler }, Some(units)) => {
                let pool = pool.filter(|p| p.threads() == threads).ok_or_else(|| {
                    ExecError::Unsupported {
                        block: cases[0].number(),
                        what: format!("no worker pool with {threads} threads"),
                    }
                })?;
                units
                    .iter()
                    .map(|unit| {
                        let run = run_mega(cases, unit, pool, scheduler);
                        on_step();
                        run
                    })
                    .collect()
            }
            _ => cases
                .iter()
                .map(|case| {
                    let run = run_block_with(case, config.mode, config.recovery, pool);
                    on_step();
                    run
                })
                .collect(),
        }
    };
    // Every pass runs on a worker thread, as a node's execution stage would: a parallel pass
    // on one of its own pool's threads, so that its workers are not woken from and handed
    // back to the calling thread at every block (measured: ~0.13 ms per block on the 2-core
    // VM, docs/results/one-thread-2core.md); the sequential pass on a 1-thread pool of its
    // own, so that both paths run on the same kind of thread (stack, allocator arena).
    let sequential_pool = WorkerPool::new(1);
    let pass = |config: Config| -> Result<Vec<BlockRun>, ExecError> {
        let pool = match config.mode {
            Mode::Sequential | Mode::SequentialNoBal => Some(&sequential_pool),
            Mode::Parallel { threads, .. } => pools.get(&threads),
        };
        match pool {
            Some(pool) => {
                let run = pool.rayon_pool().install(|| pass_on(config));
                // No spin of this pass's workers may overlap the next configuration's pass.
                pool.rest();
                run
            }
            None => pass_on(config),
        }
    };
    for &mode in &modes {
        for _ in 0..options.warmup {
            pass(mode)?;
        }
    }
    // runs[mode][repeat][block]
    let mut runs: Vec<Vec<Vec<BlockRun>>> = vec![Vec::new(); modes.len()];
    // Repeat r runs every configuration once, in an order of its own (`repeat_order`).
    for r in 0..options.repeats.max(1) {
        for m in repeat_order(modes.len(), r) {
            runs[m].push(pass(modes[m])?);
        }
    }
    let contention_floor = match options.contention_floor {
        Some(sharing) => floor::contention_floor(
            &dataset.blocks,
            &options.threads,
            options.repeats,
            sharing,
            on_step,
        )?,
        None => Vec::new(),
    };
    let pipeline = pipeline::measure(cases, options, on_step)?;
    let mut report = assemble(dataset, cases, options, &modes, &runs, load_avg_start);
    report.contention_floor = contention_floor;
    report.pipeline = pipeline;
    report.machine.cpu_during_run = load_meter.finish();
    report.provenance = Some(gigagas_lab::Provenance::capture());
    Ok(report)
}

/// The order in which repeat `r` runs `count` configurations: a shuffle seeded by `r`, the
/// same in every run. A pass can be slowed by the one before it (caches, the allocator, a
/// pool's threads waking): the 1-thread pass that always followed the sequential pass read up
/// to 20% slower per block on a generated chain (`docs/results/warm-workers-2core.md`). A
/// fixed cyclic order (rotating only the start) keeps every configuration behind the same
/// neighbour in every repeat and charges it that cost every time; shuffled, the neighbours
/// vary and the median over repeats sees the typical pass.
pub fn repeat_order(count: usize, r: usize) -> Vec<usize> {
    use rand::{seq::SliceRandom, SeedableRng};
    let mut order: Vec<usize> = (0..count).collect();
    order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(r as u64));
    order
}

/// Rejects option combinations `bench` cannot measure: a mega-block size of 0, and inline
/// sender recovery with mega-blocks (not implemented).
fn validate(options: &BenchOptions) -> Result<(), ExecError> {
    if options.mega.contains(&0) {
        return Err(ExecError::Unsupported {
            block: 0,
            what: "mega-block size 0".into(),
        });
    }
    if options.recovery.contains(&Recovery::Inline) && options.mega.iter().any(|&k| k > 1) {
        return Err(ExecError::Unsupported {
            block: 0,
            what: "--recover-senders inline with --mega > 1 (not implemented: mega-blocks \
                   are measured with senders recovered in advance)"
                .into(),
        });
    }
    Ok(())
}

fn assemble(
    dataset: &Dataset,
    cases: &[BlockCase<'_>],
    options: &BenchOptions,
    modes: &[Config],
    runs: &[Vec<Vec<BlockRun>>],
    load_avg_start: Option<f64>,
) -> BenchReport {
    let total_gas: u64 = cases.iter().map(|c| c.prepared.input.gas_used()).sum();
    let total_txs: usize = cases.iter().map(|c| c.prepared.txs.len()).sum();
    let repeat_sum = |m: usize, f: fn(&BlockRun) -> u64| -> Vec<u64> {
        runs[m].iter().map(|rep| rep.iter().map(f).sum()).collect()
    };
    let block_median = |m: usize, b: usize, f: fn(&BlockRun) -> u64| -> u64 {
        median(&runs[m].iter().map(|rep| f(&rep[b])).collect::<Vec<_>>()).unwrap_or(0)
    };

    // 1-thread per-transaction traces: the 1-thread ordered parallel run if measured, else the
    // sequential run; median over repeats per transaction (a typical run, like the run
    // medians it is compared with).
    let pre = |m: &Config| m.recovery == Recovery::Pre && m.mega == 1;
    let seq_index = modes
        .iter()
        .position(|m| m.mode == Mode::Sequential && pre(m))
        .unwrap_or(0);
    let trace_mode = modes
        .iter()
        .position(|m| {
            pre(m)
                && m.mode
                    == Mode::Parallel {
                        threads: 1,
                        scheduler: Scheduler::Ordered,
                    }
        })
        .or_else(|| {
            modes
                .iter()
                .position(|m| pre(m) && m.mode.threads() == 1 && is_parallel(m.mode))
        })
        .unwrap_or(seq_index);
    let traces: Vec<BlockTrace> = (0..cases.len())
        .map(|b| BlockTrace {
            tx_nanos: (0..cases[b].prepared.txs.len())
                .map(|t| {
                    let samples: Vec<u64> = runs[trace_mode]
                        .iter()
                        .map(|rep| rep[b].tx_nanos[t])
                        .collect();
                    median(&samples).unwrap_or(0)
                })
                .collect(),
        })
        .collect();
    let numbers: Vec<u64> = cases.iter().map(BlockCase::number).collect();
    // Per mega size: the units' joined traces (a mega-block's critical path).
    let traces_for = |mega: usize| gigagas_lab::unit_traces(&traces, &mega_units(&numbers, mega));

    let medians: Vec<u64> = (0..modes.len())
        .map(|m| median(&repeat_sum(m, |r| r.exec_nanos)).unwrap_or(0))
        .collect();
    let seq_median = medians[seq_index].max(1);
    let nobal_index = modes
        .iter()
        .position(|m| m.mode == Mode::SequentialNoBal && pre(m));
    // The 1-thread run of a scheduler at a mega size (falling back to per-block).
    let one_thread_median = |scheduler: Scheduler, recovery: Recovery, mega: usize| {
        let at = |k: usize| {
            modes.iter().position(|m| {
                m.recovery == recovery
                    && m.mega == k
                    && m.mode
                        == Mode::Parallel {
                            threads: 1,
                            scheduler,
                        }
            })
        };
        at(mega).or_else(|| at(1)).map(|m| medians[m])
    };

    let run_reports: Vec<RunReport> = modes
        .iter()
        .enumerate()
        .map(|(m, config)| {
            let mode = &config.mode;
            let repeat_ns = repeat_sum(m, |r| r.exec_nanos);
            let median_ns = medians[m].max(1);
            let threads = mode.threads();
            let unit_traces = traces_for(config.mega);
            let longest_sum: u64 = unit_traces.iter().map(BlockTrace::longest).sum();
            let bound = critical_path_bound(&unit_traces, threads);
            let parallelism_score = (is_parallel(*mode) && seq_median > longest_sum).then(|| {
                (seq_median as f64 - median_ns as f64) / (seq_median - longest_sum) as f64
            });
            let (mode_name, scheduler, bound_fraction) = match mode {
                Mode::Sequential => ("sequential", None, None),
                Mode::SequentialNoBal => ("sequential-nobal", None, None),
                Mode::Parallel { scheduler, .. } => (
                    "parallel",
                    Some(scheduler.name().to_owned()),
                    one_thread_median(*scheduler, config.recovery, config.mega)
                        .map(|one| one as f64 / median_ns as f64 / bound),
                ),
            };
            RunReport {
                mode: mode_name.into(),
                recover_senders: config.recovery.name().into(),
                threads,
                scheduler,
                mega: config.mega,
                total_gas,
                p90_ns: percentile(&repeat_ns, 90.0).unwrap_or(0),
                p99_ns: percentile(&repeat_ns, 99.0).unwrap_or(0),
                repeat_ns,
                median_ns,
                mgas_per_s: total_gas as f64 / median_ns as f64 * 1e3,
                speedup_vs_sequential: seq_median as f64 / median_ns as f64,
                longest_tx_share: longest_sum as f64 / median_ns as f64,
                critical_path_bound: bound,
                bound_fraction,
                parallelism_score,
                commit_ns: median(&repeat_sum(m, |r| r.commit_nanos)).unwrap_or(0),
                verify_ns: median(&repeat_sum(m, |r| r.verify_nanos)).unwrap_or(0),
                block_ns: (0..runs[m].first().map_or(0, Vec::len))
                    .map(|b| block_median(m, b, |r| r.exec_nanos))
                    .collect(),
                block_serial_ns: (0..runs[m].first().map_or(0, Vec::len))
                    .map(|b| block_median(m, b, |r| r.serial_nanos))
                    .collect(),
                block_head_ns: (0..runs[m].first().map_or(0, Vec::len))
                    .map(|b| block_median(m, b, |r| r.head_nanos))
                    .collect(),
                sum_tx_ns: median(&repeat_sum(m, |r| r.tx_nanos.iter().sum())).unwrap_or(0),
                median_tx_ns: sum_of_medians(
                    &runs[m]
                        .iter()
                        .map(|rep| {
                            rep.iter()
                                .flat_map(|r| r.tx_nanos.iter().copied())
                                .collect()
                        })
                        .collect::<Vec<Vec<u64>>>(),
                ),
                // Allocation counts do not vary between repeats: the first one's.
                allocs_per_tx: gigagas_alloc::counting().then(|| {
                    let allocations: u64 = runs[m][0].iter().map(|r| r.tx_allocations).sum();
                    allocations as f64 / total_txs.max(1) as f64
                }),
            }
        })
        .collect();

    let best = (0..modes.len())
        .filter(|&m| pre(&modes[m]) && is_parallel(modes[m].mode))
        .min_by_key(|&m| medians[m])
        .unwrap_or(seq_index);
    let blocks: Vec<BlockReport> = cases
        .iter()
        .enumerate()
        .map(|(b, case)| BlockReport {
            number: case.number(),
            fork: case.fork().to_owned(),
            txs: case.prepared.txs.len(),
            gas_used: case.prepared.input.gas_used(),
            verified: true,
            receipts_root_checked: case.header_check.receipts_root,
            bal_hash: case.baseline.access.hash().to_string(),
            bal_accounts: case.baseline.access.bal.len(),
            lifecycle_events: case.baseline.access.lifecycle.len(),
            sum_tx_ns: traces[b].total(),
            longest_tx_ns: traces[b].longest(),
            phases: BlockPhases {
                recover_ns: case.recover_nanos,
                bal_prepare_ns: case.bal_prepare_nanos,
                sequential_ns: block_median(seq_index, b, |r| r.exec_nanos),
                sequential_nobal_ns: nobal_index.map(|m| block_median(m, b, |r| r.exec_nanos)),
                parallel_ns: block_median(best, b, |r| r.exec_nanos),
                commit_ns: block_median(best, b, |r| r.commit_nanos),
                verify_ns: block_median(best, b, |r| r.verify_nanos),
            },
            tx: traces[b]
                .tx_nanos
                .iter()
                .zip(&case.baseline.receipts)
                .zip(&case.baseline.tx_slots)
                .zip(&case.prepared.txs)
                .zip(&case.baseline.tx_gas_spent)
                .map(
                    |((((&ns, receipt), &(slots_read, slots_written)), tx), &gas_spent)| TxTrace {
                        ns,
                        gas: receipt.gas_used,
                        gas_limit: tx.gas_limit,
                        slots_read,
                        slots_written,
                        gas_spent,
                    },
                )
                .collect(),
        })
        .collect();
    let samples: Vec<BlockSample> = blocks
        .iter()
        .map(|b: &BlockReport| BlockSample {
            gas: b.tx.iter().map(|t| t.gas_spent).sum::<u64>() as f64,
            slots_changed: b.tx.iter().map(|t| t.slots_written as u64).sum::<u64>() as f64,
            txs: b.txs as f64,
            time_ns: b.phases.sequential_ns as f64,
        })
        .collect();
    let cost_model = CostModel::fit(&samples, 1000, 0x636f_7374);
    let txs = dataset.total_txs();
    let recover_ns: u64 = cases.iter().map(|c| c.recover_nanos).sum();
    BenchReport {
        schema: SCHEMA.into(),
        gigagas_version: env!("CARGO_PKG_VERSION").into(),
        data: dataset.name.clone(),
        machine: Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            load_avg_start,
            load_avg_end: gigagas_lab::report::load_average(),
            cpu_during_run: None,
        },
        settings: Settings {
            warmup: options.warmup,
            repeats: options.repeats.max(1),
            small_block_gas: cases.first().map_or(0, |c| c.plan.small_block_gas()),
            warm_spin_us: options.warm_spin.as_micros() as u64,
        },
        throughput_definition: THROUGHPUT_DEFINITION.into(),
        blocks,
        runs: run_reports,
        phases: PhaseTotals {
            txs,
            recover_ns,
            recover_ns_per_tx: recover_ns as f64 / txs.max(1) as f64,
            bal_prepare_ns: cases.iter().map(|c| c.bal_prepare_nanos).sum(),
        },
        cost_model,
        contention_floor: Vec::new(),
        provenance: None,
        pipeline: Vec::new(),
    }
}

/// Whether `mode` runs on the parallel path (not one of the sequential baselines).
fn is_parallel(mode: Mode) -> bool {
    matches!(mode, Mode::Parallel { .. })
}

#[cfg(test)]
mod tests {
    use super::repeat_order;

    /// Every repeat runs every configuration once, the orders are reproducible, and over a
    /// bench's repeats each configuration runs after several different neighbours (a rotating
    /// start would give each exactly one).
    #[test]
    fn repeat_orders_are_permutations_with_varied_neighbours() {
        let count = 9;
        let orders: Vec<Vec<usize>> = (0..10).map(|r| repeat_order(count, r)).collect();
        for (r, order) in orders.iter().enumerate() {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..count).collect::<Vec<_>>(), "repeat {r}");
            assert_eq!(
                order,
                &repeat_order(count, r),
                "repeat {r} not reproducible"
            );
        }
        // The pass each configuration follows, across repeat boundaries too.
        let sequence: Vec<usize> = orders.concat();
        for c in 0..count {
            let mut before: Vec<usize> = sequence
                .windows(2)
                .filter(|w| w[1] == c)
                .map(|w| w[0])
                .collect();
            before.sort_unstable();
            before.dedup();
            assert!(
                before.len() >= 3,
                "configuration {c} follows only {before:?}"
            );
        }
        assert_eq!(repeat_order(1, 7), [0]);
        assert!(repeat_order(0, 3).is_empty());
    }
}
