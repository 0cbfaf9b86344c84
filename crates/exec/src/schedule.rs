//! Schedulers: the order in which transactions are handed to free workers.

use crate::ExecError;
use std::str::FromStr;

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
#[derive(Debug)]
pub struct WorkerPool {
    pool: rayon::ThreadPool,
    threads: usize,
}

/// Stack of every worker thread: deep call chains in the EVM need more than the 2 MiB
/// default (virtual memory; only touched pages are committed).
pub const WORKER_STACK_BYTES: usize = 64 << 20;

impl WorkerPool {
    /// A pool of `threads` workers (at least one).
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("gigagas-worker-{i}"))
            .stack_size(WORKER_STACK_BYTES)
            .build()
            .expect("spawning worker threads");
        Self { pool, threads }
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
}
