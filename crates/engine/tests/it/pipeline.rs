//! The block pipeline on a generated chain (a complete state, so every root is checked):
//! overlapped and back-to-back runs, every root mode and every execution mode (parallel,
//! sequential with and without the BAL builder) give the header's state roots; a wrong state
//! root in a header stops the run at that block.

use crate::common;

use gigagas_engine::{
    prepare, prepare_with, run_pipeline, BaselineRoot, BlockCase, Mode, PipelineOptions, RootMode,
    STAGES,
};
use gigagas_exec::{Scheduler, WorkerPool};
use proptest::prelude::*;
use std::sync::OnceLock;

fn chain() -> &'static gigagas_data::Dataset {
    static DATA: OnceLock<gigagas_data::Dataset> = OnceLock::new();
    DATA.get_or_init(|| common::generated_chain(5, 9))
}

fn options(mode: Mode, root: RootMode, overlap: bool) -> PipelineOptions {
    PipelineOptions {
        root,
        overlap,
        ..PipelineOptions::new(mode)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any mode, root mode, overlap and mega-block size: every block verified, each root the
    /// header's, every stage timed inside the run, each block in the unit it belongs to.
    #[test]
    fn every_configuration_gives_the_header_roots(
        threads in 1usize..=4,
        kind in 0u8..3,
        root in prop::sample::select(vec![RootMode::None, RootMode::Serial, RootMode::Parallel, RootMode::Incremental]),
        overlap in any::<bool>(),
        mega in 1usize..=4,
        stage_threads in 0usize..=2,
    ) {
        let data = chain();
        let cases: Vec<BlockCase<'_>> = data.blocks.iter().map(|b| prepare(b).unwrap()).collect();
        let mode = match kind {
            0 => Mode::Parallel { threads, scheduler: Scheduler::GasUsed },
            1 => Mode::Sequential,
            _ => Mode::SequentialNoBal,
        };
        let parallel = matches!(mode, Mode::Parallel { .. });
        let pool = parallel.then(|| WorkerPool::new(threads));
        // A pool of the stages' own only where they overlap (refused back to back).
        let stage_threads = if overlap { stage_threads } else { 0 };
        let options = PipelineOptions { mega, stage_threads, ..options(mode, root, overlap) };
        let run = match run_pipeline(&cases, &options, pool.as_ref()) {
            Err(e) if !parallel && mega > 1 => {
                // A mega-block is parallel work: refused in sequential mode, saying why.
                prop_assert!(e.to_string().contains("mega-block"), "{}", e);
                return Ok(());
            }
            run => run.unwrap(),
        };
        prop_assert_eq!(run.blocks.len(), data.blocks.len());
        prop_assert_eq!(run.stage_threads, stage_threads);
        let first = data.blocks[0].number();
        for (b, input) in run.blocks.iter().zip(&data.blocks) {
            prop_assert_eq!(b.number, input.number());
            // Generated chains are consecutive: units are chunks of `mega` blocks.
            let unit = if parallel { mega as u64 } else { 1 };
            prop_assert_eq!(b.unit, first + (b.number - first) / unit * unit);
            prop_assert!(b.checks.gas_used && b.checks.logs_bloom && b.checks.receipts_root);
            prop_assert_eq!(b.checks.equals_sequential, parallel);
            match root {
                RootMode::None => {
                    prop_assert!(b.state_root.is_none());
                    prop_assert_eq!(b.checks.state_root, gigagas_engine::RootCheck::Baseline);
                }
                _ => {
                    prop_assert_eq!(b.state_root, Some(input.header.state_root));
                    prop_assert!(b.root_checked);
                    prop_assert_eq!(b.checks.state_root, gigagas_engine::RootCheck::Header);
                }
            }
            for span in b.stages.values() {
                prop_assert!(span.start_ns <= span.end_ns && span.end_ns <= run.wall_ns);
            }
        }
        let phases = run.phases_ns();
        prop_assert_eq!(phases.len(), STAGES.len());
        prop_assert!(run.bound_ns() <= run.wall_ns.max(run.cpu_ns.unwrap_or(0)));
        prop_assert_eq!(run.gas(), data.total_gas());
    }
}

/// A header whose state root was changed (and re-hashed, so the loader's hash check passes):
/// `prepare` refuses it; prepared without that check, the pipeline refuses it at that block
/// with both roots named,
/// overlapped or not, committing none of the blocks after it.
#[test]
fn a_wrong_state_root_stops_the_run_at_its_block() {
    let data = chain();
    let mut blocks = data.blocks.clone();
    let last = blocks.len() - 1;
    let wrong = alloy_primitives::B256::repeat_byte(0xab);
    blocks[last].header.state_root = wrong;
    blocks[last].hash = blocks[last].header.hash_slow();
    let e = prepare(&blocks[last]).unwrap_err().to_string();
    assert!(
        e.contains("state_root") && e.contains(&wrong.to_string()),
        "{e}"
    );

    // A run that computes roots leaves the check to itself (`BaselineRoot::ByTheRun`, what
    // `run` does): the tampered block prepares, and the pipeline refuses it.
    let cases: Vec<BlockCase<'_>> = blocks
        .iter()
        .map(|b| prepare_with(b, BaselineRoot::ByTheRun).unwrap())
        .collect();
    assert!(!cases[last].state_root_checked);
    for overlap in [false, true] {
        let pool = WorkerPool::new(2);
        let mode = Mode::Parallel {
            threads: 2,
            scheduler: Scheduler::Ordered,
        };
        let e = run_pipeline(
            &cases,
            &options(mode, RootMode::Parallel, overlap),
            Some(&pool),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(&format!("block {}", blocks[last].number())) && e.contains("state_root"),
            "{e}"
        );
    }
}

/// Consecutive blocks obey the header rules against their parent: the real consecutive
/// mainnet pairs of the bundled sample (each crossing a fork) pass, and a generated block
/// whose gas limit or timestamp was changed (header re-hashed, so the loader's checks pass)
/// is refused naming the rule.
#[test]
fn consecutive_blocks_obey_the_header_rules() {
    let sample = gigagas_data::load(&gigagas_data::DataSource::embedded().unwrap()).unwrap();
    let cases = gigagas_engine::prepare_chain(&sample.blocks).unwrap();
    let pairs = cases
        .windows(2)
        .filter(|w| w[1].number() == w[0].number() + 1)
        .count();
    assert_eq!(pairs, 3, "the sample's three consecutive pairs");

    let data = chain();
    let cases: Vec<BlockCase<'_>> = data.blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let last = cases.len() - 1;
    for (rule, edit) in [
        (
            "gas_limit",
            (|h: &mut alloy_consensus::Header| h.gas_limit *= 2) as fn(&mut _),
        ),
        ("timestamp", |h: &mut alloy_consensus::Header| {
            h.timestamp -= 12
        }),
    ] {
        let mut tampered = data.blocks[last].clone();
        edit(&mut tampered.header);
        tampered.hash = tampered.header.hash_slow();
        let mut case = prepare(&data.blocks[last]).unwrap();
        case.prepared.input = &tampered;
        let e = gigagas_engine::check_parent(&case, &cases[last - 1])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(rule) && e.contains(&format!("block {}", tampered.number())),
            "{e}"
        );
    }
}

/// In memory a block executes against its own pre-state and its root reads the node store
/// as the last block's compute left it: overlapped, block N+1 executes and has its root
/// computed while N's (slowed) commit runs, and every root is still the header's. (Before,
/// execution waited for the commit of the block before it: 5.4 ms of verification and write
/// between two executions of a 300M block at 16 threads; then the root still did.)
#[test]
fn in_memory_execution_runs_ahead_of_the_commit_before_it() {
    let data = chain();
    let (run, log) = slowed_in_memory(150, 0);
    // Block N+1's execution started before block N's write (its commit) ended: for every
    // block but the first (each commit takes 150 ms; an execution here a few).
    let ahead = run
        .blocks
        .windows(2)
        .filter(|w| w[1].stages["execute"].start_ns < w[0].stages["write"].end_ns)
        .count();
    assert!(
        ahead * 2 >= run.blocks.len() - 1,
        "{ahead} of {} blocks ahead: {log:?}",
        run.blocks.len() - 1,
    );
    let committed = log.iter().filter(|e| e.0 == "committed").count();
    assert_eq!(committed, data.blocks.len());
    // Block N+1's root was computed before block N's commit ended, for every block but the
    // first: the store takes a block's nodes at its compute, so the next root reads them
    // without waiting for N's verification and write (before, it waited for each commit).
    let at = |what: &str, n: u64| log.iter().position(|e| *e == (what, n));
    for w in data.blocks.windows(2) {
        let (n, next) = (w[0].number(), w[1].number());
        assert!(
            at("compute", next) < at("committed", n),
            "block {next}'s root waited for block {n}'s commit: {log:?}"
        );
    }
    assert!(run.overlay, "the in-memory store overlays");
}

/// In memory execution waits for nothing of the roots' thread: with every root's compute
/// slowed to 200 ms, block N+1 executes before block N's root is computed, for every block,
/// and every root is still the header's. (Before, the roots' thread handed each unit its
/// state after computing the last unit's roots: on the H200 a 300M block's execution waited
/// 5 ms for the root before it, and, through the roots' queue to the commit, the mainnet
/// sample's waited 10 ms for the Merge block's verification.)
#[test]
fn in_memory_execution_does_not_wait_for_the_roots() {
    let (run, _) = slowed_in_memory(0, 200);
    for w in run.blocks.windows(2) {
        let (root, next) = (w[0].stages["root"], w[1].stages["execute"]);
        assert!(
            next.start_ns < root.end_ns,
            "block {} executed at {} ns, after block {}'s root ended at {} ns",
            w[1].number,
            next.start_ns,
            w[0].number,
            root.end_ns
        );
    }
}

/// The generated chain through the overlapped pipeline at 2 threads with an incremental root
/// on the in-memory node store, each commit slowed by `commit_ms` and each compute by
/// `compute_ms` (`common::SlowCommits`): the run, every root checked to be the header's, and
/// the store's log of computes and commits.
fn slowed_in_memory(
    commit_ms: u64,
    compute_ms: u64,
) -> (gigagas_engine::PipelineRun, Vec<(&'static str, u64)>) {
    let data = chain();
    let cases: Vec<BlockCase<'_>> = data.blocks.iter().map(|b| prepare(b).unwrap()).collect();
    let log = std::sync::Arc::default();
    let (_, store) = gigagas_trie::from_prestate(
        &data.blocks[0].pre_state,
        gigagas_trie::Parallelism::DEFAULT,
    );
    let state = common::SlowCommits {
        inner: gigagas_engine::MemoryRoot::new(store),
        log: std::sync::Arc::clone(&log),
        commit_ms,
        compute_ms,
    };
    let mode = Mode::Parallel {
        threads: 2,
        scheduler: Scheduler::Ordered,
    };
    let options = PipelineOptions {
        threads: 2,
        ..options(mode, RootMode::Incremental, true)
    };
    let pool = WorkerPool::new(2);
    let run =
        gigagas_engine::run_pipeline_with(&cases, &options, Some(&pool), Some(Box::new(state)))
            .unwrap();
    for (b, input) in run.blocks.iter().zip(&data.blocks) {
        assert!(b.root_checked, "block {}", b.number);
        assert_eq!(b.state_root, Some(input.header.state_root));
    }
    let log = log.lock().unwrap().clone();
    (run, log)
}
