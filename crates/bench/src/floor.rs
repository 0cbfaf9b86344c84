//! The machine's contention floor (`bench --contention-floor`): how much slower a transaction
//! runs when T *independent* streams share the machine, so that the parallel path's "tx work
//! vs 1t" can be split into what the machine costs and what the engine adds.
//!
//! Each stream owns a deep copy of every block ([`BlockInput::deep_clone`]: pre-state,
//! bytecode, transactions), prepares it on its own thread (so its allocations come from that
//! thread's allocator arena) and runs it through the same 1-worker parallel path the engine's
//! "tx work vs 1t" baseline uses, on its own 1-thread worker pool. Streams start at different
//! blocks (stream i at block i·n/T, wrapping), so they never run the same transaction at the
//! same time. Every run is verified like any other.
//!
//! A round runs every thread count once (rotating order, streams started together by a
//! barrier); the ratio of a round is Σ per-transaction time of its T streams ÷ (T × that of
//! the 1-stream run of the same round). Beside it, the typical transaction's slowdown: Σ over
//! transactions of the median of its times in every T-stream pass ÷ the same over the
//! 1-stream passes ([`gigagas_lab::stats::sum_of_medians`]), which a preempted pass does not
//! move.

use gigagas_data::BlockInput;
use gigagas_engine::{prepare, run_block_with, Mode, Recovery};
use gigagas_exec::{ExecError, Scheduler, WorkerPool, WORKER_STACK_BYTES};
use gigagas_lab::{
    stats::{percentile, sum_of_medians},
    ContentionFloor, FloorSharing,
};
use std::sync::{Barrier, Mutex};

/// Measures the floor at every thread count in `threads` (1 is always measured: it is the
/// reference) over `rounds` timed rounds after one warm-up round, the streams sharing what
/// `sharing` says. `on_step` is called after every stream pass.
pub fn contention_floor(
    blocks: &[BlockInput],
    threads: &[usize],
    rounds: usize,
    sharing: FloorSharing,
    on_step: &(dyn Fn() + Sync),
) -> Result<Vec<ContentionFloor>, ExecError> {
    let mut counts: Vec<usize> = threads.iter().copied().filter(|&t| t > 0).collect();
    counts.push(1);
    counts.sort_unstable();
    counts.dedup();
    let streams = *counts.last().unwrap_or(&1);
    if blocks.is_empty() {
        return Err(ExecError::Unsupported {
            block: 0,
            what: "contention floor: no blocks".into(),
        });
    }
    if sharing == FloorSharing::Nothing {
        if let Some(available) = gigagas_data::chain::available_memory() {
            check_memory(blocks, streams, available)?;
        }
    }
    let rounds = rounds.max(1);
    // The schedule every stream follows: (thread count, timed?) per step; the first round is
    // the warm-up. Round r starts at thread count r (mod count).
    let schedule: Vec<(usize, Option<usize>)> = (0..=rounds)
        .flat_map(|r| {
            let counts = &counts;
            (0..counts.len()).map(move |k| {
                let t = counts[(r + k) % counts.len()];
                (t, r.checked_sub(1))
            })
        })
        .collect();
    // sums[step][stream]: Σ per-transaction ns of that stream's pass; times[step][stream]:
    // its per-transaction ns in block order (whatever block the stream started at).
    let sums: Mutex<Vec<Vec<u64>>> = Mutex::new(vec![vec![0; streams]; schedule.len()]);
    let times: Mutex<Vec<Vec<Vec<u64>>>> =
        Mutex::new(vec![vec![Vec::new(); streams]; schedule.len()]);
    // Where each block's transactions start in that order.
    let tx_offsets: Vec<usize> = blocks
        .iter()
        .scan(0, |at, b| {
            let start = *at;
            *at += b.transactions.len();
            Some(start)
        })
        .collect();
    let total_txs: usize = blocks.iter().map(|b| b.transactions.len()).sum();
    let failure: Mutex<Option<ExecError>> = Mutex::new(None);
    let barrier = Barrier::new(streams);
    let n = blocks.len();
    // With shared inputs, one prepared copy read by every stream.
    let shared = match sharing {
        FloorSharing::Nothing => None,
        FloorSharing::Inputs => Some(blocks.iter().map(prepare).collect::<Result<Vec<_>, _>>()?),
    };
    let shared = shared.as_deref();
    std::thread::scope(|s| {
        // Streams start only once all are spawned (a failed spawn drops the gate's senders:
        // the spawned streams then leave before their first barrier).
        let mut gates = Vec::with_capacity(streams);
        for stream in 0..streams {
            let (schedule, sums, failure, barrier) = (&schedule, &sums, &failure, &barrier);
            let (times, tx_offsets) = (&times, &tx_offsets);
            let (gate, open) = std::sync::mpsc::channel::<()>();
            let spawned = std::thread::Builder::new()
                .name(format!("gigagas-floor-{stream}"))
                .stack_size(WORKER_STACK_BYTES)
                .spawn_scoped(s, move || {
                    if open.recv().is_err() {
                        return;
                    }
                    // Every stream takes part in every barrier, also after a failure, so that
                    // no other stream waits forever.
                    let fail = |e: ExecError| {
                        let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
                        f.get_or_insert(e);
                    };
                    let copy: Vec<BlockInput> = match shared {
                        Some(_) => Vec::new(),
                        None => blocks.iter().map(BlockInput::deep_clone).collect(),
                    };
                    let own = match shared {
                        Some(_) => None,
                        None => copy
                            .iter()
                            .map(prepare)
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(fail)
                            .ok(),
                    };
                    let cases = shared.or(own.as_deref());
                    let pool = WorkerPool::new(1);
                    let mode = Mode::Parallel {
                        threads: 1,
                        scheduler: Scheduler::Ordered,
                    };
                    for (step, &(t, _)) in schedule.iter().enumerate() {
                        barrier.wait();
                        if let (Some(cases), true) = (cases, stream < t) {
                            let start = match sharing {
                                FloorSharing::Nothing => stream * n / t,
                                FloorSharing::Inputs => 0,
                            };
                            let mut total = 0u64;
                            let mut pass = vec![0u64; total_txs];
                            for k in 0..n {
                                let b = (start + k) % n;
                                match run_block_with(&cases[b], mode, Recovery::Pre, Some(&pool)) {
                                    Ok(run) => {
                                        total += run.tx_nanos.iter().sum::<u64>();
                                        // One time per transaction of the block (no
                                        // panic here: the other streams wait on the barrier).
                                        let at = tx_offsets[b];
                                        if let Some(slot) =
                                            pass.get_mut(at..at + run.tx_nanos.len())
                                        {
                                            slot.copy_from_slice(&run.tx_nanos);
                                        }
                                    }
                                    Err(e) => {
                                        fail(e);
                                        break;
                                    }
                                }
                            }
                            sums.lock().unwrap_or_else(|p| p.into_inner())[step][stream] = total;
                            times.lock().unwrap_or_else(|p| p.into_inner())[step][stream] = pass;
                            on_step();
                        }
                        barrier.wait();
                    }
                });
            match spawned {
                Ok(_) => gates.push(gate),
                Err(e) => {
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(ExecError::Unsupported {
                            block: 0,
                            what: format!("contention floor: spawning stream {stream}: {e}"),
                        });
                    return; // the gates drop here: every spawned stream leaves
                }
            }
        }
        for gate in gates {
            let _ = gate.send(());
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let sums = sums.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut times = times.into_inner().unwrap_or_else(|p| p.into_inner());
    // Every timed pass of `t` streams (each stream's per-transaction times).
    let mut passes_at = |t: usize| -> Vec<Vec<u64>> {
        schedule
            .iter()
            .enumerate()
            .filter(|(_, &(tt, r))| tt == t && r.is_some())
            .flat_map(|(step, _)| std::mem::take(&mut times[step]).into_iter().take(t))
            .collect()
    };
    let alone_median = sum_of_medians(&passes_at(1));
    let median_ratios: Vec<(usize, Option<f64>)> = counts
        .iter()
        .map(|&t| {
            let typical = if t == 1 {
                alone_median
            } else {
                sum_of_medians(&passes_at(t))
            };
            (
                t,
                (alone_median > 0).then(|| typical as f64 / alone_median as f64),
            )
        })
        .collect();
    let alone = |round: usize| {
        schedule
            .iter()
            .position(|&(t, r)| t == 1 && r == Some(round))
            .map(|step| sums[step][0])
    };
    Ok(counts
        .iter()
        .map(|&t| {
            let ratios: Vec<f64> = schedule
                .iter()
                .enumerate()
                .filter(|(_, &(tt, r))| tt == t && r.is_some())
                .filter_map(|(step, &(_, r))| {
                    let one = alone(r?)?;
                    let total: u64 = sums[step][..t].iter().sum();
                    (one > 0).then(|| total as f64 / (t as f64 * one as f64))
                })
                .collect();
            ContentionFloor {
                sharing,
                threads: t,
                tx_work_ratio: percentile_f64(&ratios, 50.0),
                p10: percentile_f64(&ratios, 10.0),
                p90: percentile_f64(&ratios, 90.0),
                median_tx_ratio: median_ratios
                    .iter()
                    .find(|&&(tt, _)| tt == t)
                    .and_then(|&(_, r)| r),
                rounds: ratios.len(),
            }
        })
        .collect())
}

/// Percentile of ratios by the same rule as [`percentile`] on nanoseconds (scaled to
/// keep four decimals).
fn percentile_f64(ratios: &[f64], p: f64) -> f64 {
    let scaled: Vec<u64> = ratios.iter().map(|r| (r * 1e6).round() as u64).collect();
    percentile(&scaled, p).map_or(f64::NAN, |v| v as f64 / 1e6)
}

/// Refuses, before any stream starts, a floor whose `streams` private copies of the data set
/// would not fit in `available` bytes: one copy is made and prepared, and its size taken as
/// the larger of its measured resident growth and a count of what it holds (slots, code bytes and
/// transactions), times the streams (a 200k-slot chain at 64 streams took > 6 GiB
/// before). The error names the numbers and the way out (shared inputs, fewer threads).
pub fn check_memory(
    blocks: &[BlockInput],
    streams: usize,
    available: u64,
) -> Result<(), ExecError> {
    // What one copy holds, counted: each distinct code once per block (a deep copy shares one
    // code among the accounts that run it).
    let counted: u64 = blocks
        .iter()
        .map(|b| {
            let mut codes = std::collections::HashMap::new();
            let state: u64 = b
                .pre_state
                .accounts()
                .map(|(_, a)| {
                    if let Some(code) = &a.info.code {
                        codes.insert(a.info.code_hash, code.len() as u64);
                    }
                    128 + a.storage.len() as u64 * gigagas_data::chain::LOADED_BYTES_PER_SLOT
                })
                .sum();
            // A transaction decoded, with its signature and sender: ~0.5 KiB.
            state + codes.values().sum::<u64>() + b.transactions.len() as u64 * 512
        })
        .sum();
    let refuse = |one: u64| {
        let need = one.saturating_mul(streams as u64);
        (need > available).then(|| {
            let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
            ExecError::Unsupported {
                block: blocks.first().map_or(0, BlockInput::number),
                what: format!(
                    "contention floor: {streams} streams each hold a private copy of the data set ({:.3} GiB for one: the larger of its measured resident growth and what it holds), {:.2} GiB in all, more than the {:.2} GiB available (MemAvailable); measure fewer thread counts or share the inputs (one prepared copy read by every stream)",
                    gib(one),
                    gib(need),
                    gib(available)
                ),
            }
        })
    };
    // Refused on the count alone before anything is copied; otherwise one copy is made and
    // prepared, and its measured growth decides.
    if let Some(e) = refuse(counted) {
        return Err(e);
    }
    let before = resident_bytes();
    let copy: Vec<BlockInput> = blocks.iter().map(BlockInput::deep_clone).collect();
    let prepared = copy.iter().map(prepare).collect::<Result<Vec<_>, _>>()?;
    let measured = before
        .zip(resident_bytes())
        .map_or(0, |(before, after)| after.saturating_sub(before));
    drop(prepared);
    drop(copy);
    match refuse(measured.max(counted)) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// This process's resident memory, bytes (`VmRSS` of `/proc/self/status`); `None` where
/// unreadable.
fn resident_bytes() -> Option<u64> {
    gigagas_data::chain::proc_kib_field("/proc/self/status", "VmRSS")
}
