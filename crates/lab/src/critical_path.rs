//! The critical-path bound: how fast a block can run on T workers when every transaction is
//! independent (as the BAL makes them) and each takes its 1-thread time.

/// Per-transaction execution times of one block (or mega-block), nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockTrace {
    /// Execution time of each transaction.
    pub tx_nanos: Vec<u64>,
}

impl BlockTrace {
    /// Sum of all transaction times (the 1-worker time).
    pub fn total(&self) -> u64 {
        self.tx_nanos.iter().sum()
    }

    /// The longest transaction (no schedule can finish before it).
    pub fn longest(&self) -> u64 {
        self.tx_nanos.iter().copied().max().unwrap_or(0)
    }

    /// Lower bound on the block's time on `threads` workers: `max(Σt / T, max t)`.
    pub fn bound(&self, threads: usize) -> f64 {
        let threads = threads.max(1) as f64;
        (self.total() as f64 / threads).max(self.longest() as f64)
    }
}

/// How `bench`, `run --mega` and the simulator group blocks into mega-blocks of `k`: maximal
/// runs of consecutive block numbers, each cut into chunks of `k` (the last chunk of a run may
/// be shorter). Returns index ranges into `numbers`.
pub fn mega_units(numbers: &[u64], k: usize) -> Vec<std::ops::Range<usize>> {
    let k = k.max(1);
    let mut units = Vec::new();
    let mut start = 0;
    for end in 1..=numbers.len() {
        let run_ends = end == numbers.len() || numbers[end] != numbers[end - 1] + 1;
        if run_ends || end - start == k {
            units.push(start..end);
            start = end;
        }
    }
    units
}

/// Traces of the blocks of each unit joined into one (a mega-block's critical path).
pub fn unit_traces(traces: &[BlockTrace], units: &[std::ops::Range<usize>]) -> Vec<BlockTrace> {
    units
        .iter()
        .map(|u| BlockTrace {
            tx_nanos: traces[u.clone()]
                .iter()
                .flat_map(|t| t.tx_nanos.iter().copied())
                .collect(),
        })
        .collect()
}

/// Bound on the speedup of a sequence of blocks (executed one after another) on `threads`
/// workers over their 1-worker time: `Σ total / Σ max(total/T, longest)`.
pub fn critical_path_bound(blocks: &[BlockTrace], threads: usize) -> f64 {
    let total: f64 = blocks.iter().map(|b| b.total() as f64).sum();
    let bound: f64 = blocks.iter().map(|b| b.bound(threads)).sum();
    if bound > 0.0 {
        total / bound
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mega_units_never_join_blocks_that_are_not_consecutive() {
        assert_eq!(mega_units(&[1, 2, 3, 4, 5], 2), vec![0..2, 2..4, 4..5]);
        assert_eq!(mega_units(&[1, 2, 7, 8, 9], 10), vec![0..2, 2..5]);
        assert_eq!(mega_units(&[4, 9], 1), vec![0..1, 1..2]);
        assert!(mega_units(&[], 3).is_empty());
        let traces = vec![
            BlockTrace {
                tx_nanos: vec![1, 2],
            },
            BlockTrace { tx_nanos: vec![3] },
        ];
        let joined = unit_traces(&traces, &mega_units(&[10, 11], 2));
        assert_eq!(joined.len(), 1);
        assert_eq!(joined[0].tx_nanos, vec![1, 2, 3]);
    }

    #[test]
    fn bound_is_limited_by_threads_then_by_longest_tx() {
        let even = BlockTrace {
            tx_nanos: vec![10; 8],
        };
        assert_eq!(even.bound(1), 80.0);
        assert_eq!(even.bound(4), 20.0);
        assert_eq!(even.bound(16), 10.0); // longest tx dominates
        assert_eq!(critical_path_bound(std::slice::from_ref(&even), 4), 4.0);
        assert_eq!(critical_path_bound(&[even], 16), 8.0);

        let skewed = BlockTrace {
            tx_nanos: vec![70, 10, 10, 10],
        };
        // 100 units of work, one tx of 70: never better than 100/70.
        assert!((critical_path_bound(&[skewed], 64) - 100.0 / 70.0).abs() < 1e-9);
    }

    #[test]
    fn blocks_add_up() {
        let a = BlockTrace {
            tx_nanos: vec![50, 50],
        };
        let b = BlockTrace {
            tx_nanos: vec![100],
        };
        // a: 200/2 → max(50,50)=50; b: 100 → max(50,100)=100. total 200 / 150.
        assert!((critical_path_bound(&[a, b], 2) - 200.0 / 150.0).abs() < 1e-9);
    }
}
