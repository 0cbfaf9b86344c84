//! Schedulers: the order in which transactions are handed to free workers.

use crate::ExecError;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A list-scheduling policy. Every worker takes the next transaction of one shared order as
/// soon as it is free; the policies differ only in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// Block order (ordered list scheduling).
    Ordered,
    /// Heaviest first by gas used in the sequential run (longest-processing-time first).
    GasUsed,
    /// Heaviest first by declared gas limit (needs no prior run).
    GasLimit,
}

impl Scheduler {
    /// Every scheduler, in a stable order.
    pub const ALL: [Scheduler; 3] = [Self::Ordered, Self::GasUsed, Self::GasLimit];

    /// Name as used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ordered => "ordered",
            Self::GasUsed => "gas-used",
            Self::GasLimit => "gas-limit",
        }
    }

    /// The order in which transactions are dispatched. Ties keep block order, so the order
    /// is deterministic.
    pub fn order(
        self,
        gas_limits: &[u64],
        gas_used: Option<&[u64]>,
        block: u64,
    ) -> Result<Vec<usize>, ExecError> {
        let mut order: Vec<usize> = (0..gas_limits.len()).collect();
        match self {
            Self::Ordered => {}
            Self::GasLimit => order.sort_by_key(|&i| std::cmp::Reverse(gas_limits[i])),
            Self::GasUsed => {
                let weights = gas_used.ok_or_else(|| ExecError::Unsupported {
                    block,
                    what: "the gas-used scheduler needs gas weights from a sequential run".into(),
                })?;
                order.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
            }
        }
        Ok(order)
    }
}

impl std::fmt::Display for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheduler {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|sch| sch.name() == s)
            .ok_or_else(|| {
                format!("unknown scheduler {s:?} (expected ordered, gas-used or gas-limit)")
            })
    }
}

/// A fixed set of worker threads, created once and reused for every block.
///
/// With a warm spin ([`WorkerPool::with_warm_spin`]; `run` and `bench` use [`WARM_SPIN`]) the
/// workers other than the caller stay awake after each block (unit), so that the next block
/// does not start by waking a sleeping thread. Without one ([`WorkerPool::new`]) they sleep
/// at once: the right choice when other threads of the process do the work between blocks
/// (conformance runs test files in parallel beside the pool).
#[derive(Debug)]
pub struct WorkerPool {
    pool: rayon::ThreadPool,
    threads: usize,
    /// Bumped each time the workers start on a unit: ends the previous unit's warm spin.
    epoch: Arc<AtomicU64>,
    /// How long the workers stay awake after a unit (zero: they go back to sleep at once).
    warm_spin: Duration,
}

/// The warm spin of `run` and `bench` (`--warm-spin`; not their pipeline, where a spin
/// measured slower): how long, after a unit's transactions are done, the workers other than
/// the caller keep spinning for the next unit before they go back to sleep. Meanwhile they
/// run any other job queued on the pool and otherwise yield the CPU, so the spin never holds
/// work back; it costs CPU only on threads that would otherwise idle. A sleeping worker
/// on the 2-core VM took a median ~60 µs, at worst milliseconds, to join the next block; the
/// bundled blocks' gap between executions (canonical commit and verification of the last
/// block) is ~1.4 ms on average and up to several ms, which a 10 ms spin covers
/// (`docs/results/warm-workers-2core.md`).
pub const WARM_SPIN: Duration = Duration::from_millis(10);

/// The longest warm spin a pool accepts.
pub const MAX_WARM_SPIN: Duration = Duration::from_secs(1);

/// Stack of every worker thread: deep call chains in the EVM need more than the 2 MiB
/// default (virtual memory; only touched pages are committed).
pub const WORKER_STACK_BYTES: usize = 64 << 20;

impl WorkerPool {
    /// A pool of `threads` workers (at least one) that go to sleep as soon as a unit is done.
    pub fn new(threads: usize) -> Self {
        Self::with_warm_spin(threads, Duration::ZERO)
    }

    /// A pool of `threads` workers (at least one) that stay awake for `warm_spin` after each
    /// unit (capped at [`MAX_WARM_SPIN`]; zero turns the spin off).
    pub fn with_warm_spin(threads: usize, warm_spin: Duration) -> Self {
        let threads = threads.max(1);
        // Spawning threads fails only when the system refuses new threads (resource exhaustion,
        // before any input is read); no input can cause it. TODO(issue 29): a fallible
        // constructor once every caller (bench, engine, cli run) can propagate the error.
        #[allow(clippy::expect_used)]
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("gigagas-worker-{i}"))
            .stack_size(WORKER_STACK_BYTES)
            .build()
            .expect("spawning worker threads");
        Self {
            pool,
            threads,
            epoch: Arc::new(AtomicU64::new(0)),
            warm_spin: warm_spin.min(MAX_WARM_SPIN),
        }
    }

    /// How long the workers stay awake after each unit.
    pub fn warm_spin(&self) -> Duration {
        self.warm_spin
    }

    /// Ends the current warm spin: the workers go back to sleep now. For a caller that knows
    /// no unit follows soon (bench, at the end of a pass, so that one configuration's spin
    /// never overlaps the next configuration's timed pass).
    pub fn rest(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Number of workers.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The workers as a rayon pool, for other work that must share the same thread budget
    /// (the engine's pipeline runs sender recovery, verification, writes and state roots on
    /// it, so that `--threads` bounds the whole process).
    pub fn rayon_pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    pub(crate) fn run_workers<F: Fn(usize) + Sync>(&self, worker: F) {
        self.pool.scope(|s| {
            for w in 0..self.threads {
                let worker = &worker;
                s.spawn(move |_| worker(w));
            }
            // Workers still spinning after the last unit leave their spin (having taken
            // these jobs, or about to).
            self.epoch.fetch_add(1, Ordering::Release);
        });
        self.keep_warm();
    }

    /// Keeps every worker but the calling one awake for the warm spin or until the next unit
    /// starts, whichever comes first. A spinning worker runs any other job queued on the pool
    /// meanwhile (`rayon::yield_now`), the next unit's included.
    fn keep_warm(&self) {
        if self.threads < 2 || self.warm_spin.is_zero() {
            return;
        }
        let epoch = Arc::clone(&self.epoch);
        let started = epoch.load(Ordering::Acquire);
        let caller = self.pool.current_thread_index();
        let warm_spin = self.warm_spin;
        self.pool.spawn_broadcast(move |ctx| {
            if Some(ctx.index()) == caller {
                return;
            }
            let deadline = Instant::now() + warm_spin;
            while epoch.load(Ordering::Acquire) == started && Instant::now() < deadline {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    // Give the CPU to any other runnable thread of the machine: a spin must
                    // not delay it.
                    std::thread::yield_now();
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        let limits = [10, 30, 20, 30];
        let used = [5, 1, 9, 1];
        assert_eq!(
            Scheduler::Ordered.order(&limits, None, 0).unwrap(),
            [0, 1, 2, 3]
        );
        assert_eq!(
            Scheduler::GasLimit.order(&limits, None, 0).unwrap(),
            [1, 3, 2, 0]
        );
        assert_eq!(
            Scheduler::GasUsed.order(&limits, Some(&used), 0).unwrap(),
            [2, 0, 1, 3]
        );
        assert!(Scheduler::GasUsed.order(&limits, None, 0).is_err());
    }

    #[test]
    fn names_round_trip() {
        for s in Scheduler::ALL {
            assert_eq!(s.name().parse::<Scheduler>().unwrap(), s);
        }
        assert!("fifo".parse::<Scheduler>().is_err());
    }

    /// Units run back to back on a pool whose workers are still spinning from the previous
    /// unit: every worker runs every unit exactly once, from inside the pool (as bench calls it)
    /// and from outside; the spin is capped.
    #[test]
    fn warm_workers_run_every_unit_once() {
        use std::sync::atomic::AtomicUsize;
        let pool = WorkerPool::with_warm_spin(3, Duration::from_secs(60));
        assert_eq!(pool.warm_spin(), MAX_WARM_SPIN);
        let runs: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        let units = 200;
        for _ in 0..units / 2 {
            pool.run_workers(|w| {
                runs[w].fetch_add(1, Ordering::Relaxed);
            });
        }
        pool.rayon_pool().install(|| {
            for _ in 0..units / 2 {
                pool.run_workers(|w| {
                    runs[w].fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        for (w, n) in runs.iter().enumerate() {
            assert_eq!(n.load(Ordering::Relaxed), units, "worker {w}");
        }
        assert!(WorkerPool::new(2).warm_spin().is_zero());
    }
}
