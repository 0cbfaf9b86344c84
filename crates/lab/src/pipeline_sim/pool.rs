//! The overlapped pipeline on one pool of threads, simulated as a fluid of jobs.
//!
//! Each block's stages are jobs with the engine's dependencies (recover in order; the reads
//! and the roots on one thread, after the last block's commit unless the state overlays;
//! execute after its senders and the last execution, at most [`VERIFY_QUEUE`] blocks ahead of
//! verification, and on disk after its state, read ahead on that thread after the last
//! block's roots; verify after its execution; the write after its verification and root, in
//! order). A job on the pool has serial and
//! parallel work (its [`Fit`]): while it has parallel work it takes every thread it can
//! get, then one. Threads are shared as rayon shares them: a running job keeps the threads
//! it has until it ends (a worker loop holds its thread for the whole unit; the pieces of a
//! join are stolen only by idle threads), a thread that comes free first takes the oldest
//! job waiting to start, then joins running jobs that want more. Reads from the store and
//! recovery on a GPU take no thread of the budget; on a GPU the blocks of one launch get
//! their senders together, when the launch ends.

use super::Fit;

/// Executed blocks that may wait for verification: the engine's own
/// (`gigagas_engine::VERIFY_QUEUE`, checked equal by the CLI's tests). Block b executes once
/// block b-1's results are queued, so once verification took block b-1-Q: after block b-2-Q
/// was verified.
pub const VERIFY_QUEUE: usize = 4;

/// The stages as the simulation orders them within a block.
const STAGES: [&str; 6] = ["recover", "prefetch", "root", "execute", "verify", "write"];
const RECOVER: usize = 0;
const PREFETCH: usize = 1;
const ROOT: usize = 2;
const EXECUTE: usize = 3;
const VERIFY: usize = 4;
const WRITE: usize = 5;

/// What the simulated engine does beyond the stage times.
#[derive(Debug, Clone, Default)]
pub(super) struct Policy {
    /// Senders recovered on a GPU (off the budget, by launch).
    pub(super) gpu: bool,
    /// The GPU's launches: each a run of consecutive block indices whose senders arrive
    /// together (empty: one block per launch).
    pub(super) launches: Vec<std::ops::Range<usize>>,
    /// Whether the next block's reads and roots wait for the last block's commit (the state
    /// does not overlay).
    pub(super) waits_for_commit: bool,
    /// Whether a block executes against the state the roots' thread hands it (a store on
    /// disk, read ahead after the last block's roots); in memory it executes against its
    /// own pre-state and waits for nothing of that thread.
    pub(super) executes_on_snapshot: bool,
}

/// One job: a stage of a block.
#[derive(Debug, Clone, Default)]
struct Job {
    serial: f64,
    parallel: f64,
    /// Off the thread budget (a duration, not work).
    off: bool,
    /// Threads it holds now.
    held: usize,
}

impl Job {
    fn left(&self) -> bool {
        self.serial > 1e-9 || self.parallel > 1e-9
    }

    fn demand(&self, threads: usize) -> usize {
        if self.parallel > 1e-9 {
            threads
        } else {
            1
        }
    }
}

/// The jobs job `(stage, block)` waits for.
fn deps(stage: usize, b: usize, policy: &Policy, launch_end: &[usize]) -> Vec<(usize, usize)> {
    let mut d = Vec::with_capacity(4);
    let prev = b.checked_sub(1);
    match stage {
        RECOVER => d.extend(prev.map(|p| (RECOVER, p))),
        PREFETCH | ROOT => {
            if let Some(p) = prev {
                d.extend([(ROOT, p), (PREFETCH, p)]);
                if policy.waits_for_commit {
                    d.push((WRITE, p));
                }
            }
        }
        EXECUTE => {
            d.push((RECOVER, launch_end[b]));
            if policy.executes_on_snapshot {
                d.push((PREFETCH, b));
            }
            d.extend(prev.map(|p| (EXECUTE, p)));
            d.extend(b.checked_sub(VERIFY_QUEUE + 2).map(|v| (VERIFY, v)));
        }
        VERIFY => {
            d.push((EXECUTE, b));
            d.extend(prev.map(|p| (VERIFY, p)));
        }
        _ => {
            d.extend([(VERIFY, b), (ROOT, b)]);
            d.extend(prev.map(|p| (WRITE, p)));
        }
    }
    d
}

/// The wall time of the overlapped pipeline over `fits` (one per block) at `threads`, ns.
pub(super) fn makespan(fits: &[Fit], threads: usize, policy: &Policy) -> f64 {
    let n = fits.len();
    let t = threads.max(1);
    let tf = t as f64;
    // The last block of each block's launch (its senders arrive with that block's).
    let mut launch_end: Vec<usize> = (0..n).collect();
    if policy.gpu {
        for l in &policy.launches {
            for b in l.clone().filter(|&b| b < n) {
                launch_end[b] = l.end.min(n) - 1;
            }
        }
    }
    let mut jobs: Vec<[Job; STAGES.len()]> = fits
        .iter()
        .map(|f| {
            std::array::from_fn(|s| {
                let (serial, parallel) = f.0.get(STAGES[s]).copied().unwrap_or((0.0, 0.0));
                let off = s == PREFETCH || (s == RECOVER && policy.gpu);
                match (off, s) {
                    (true, _) => Job {
                        serial: serial + parallel / tf,
                        off,
                        ..Job::default()
                    },
                    (false, WRITE) => Job {
                        serial: serial + parallel,
                        ..Job::default()
                    },
                    _ => Job {
                        serial,
                        parallel,
                        ..Job::default()
                    },
                }
            })
        })
        .collect();
    // A launch's recovery is timed as one span shared by its blocks: it ends with its last.
    for b in 0..n {
        let end = launch_end[b];
        if end != b {
            let moved = std::mem::take(&mut jobs[b][RECOVER].serial);
            jobs[end][RECOVER].serial += moved;
        }
    }
    let mut done: Vec<[bool; STAGES.len()]> = vec![[false; STAGES.len()]; n];
    // Every stage waits for its own previous block: per stage, the next block to start is
    // the only candidate (each pass looks at six jobs, not at every block's).
    let mut next = [0usize; STAGES.len()];
    // Jobs by (stage, block): running (holding threads, or off the budget), and waiting for
    // a first thread in the order they became ready.
    let mut running: Vec<(usize, usize)> = Vec::new();
    let mut queue: std::collections::VecDeque<(usize, usize)> = std::collections::VecDeque::new();
    let mut now = 0.0f64;
    let mut left = n * STAGES.len();
    while left > 0 {
        // Jobs whose dependencies are done start (empty ones end at once), in block order.
        // Jobs that become ready at the same moment queue in block order, then stage order.
        let mut ready = Vec::new();
        let mut moved = true;
        while moved {
            moved = false;
            for s in 0..STAGES.len() {
                let b = next[s];
                if b >= n
                    || !deps(s, b, policy, &launch_end)
                        .iter()
                        .all(|&(ds, db)| done[db][ds])
                {
                    continue;
                }
                next[s] += 1;
                moved = true;
                if jobs[b][s].left() {
                    ready.push((s, b));
                } else {
                    done[b][s] = true;
                    left -= 1;
                }
            }
        }
        ready.sort_unstable_by_key(|&(s, b)| (b, s));
        for (s, b) in ready {
            if jobs[b][s].off {
                running.push((s, b));
            } else {
                queue.push_back((s, b));
            }
        }
        if left == 0 {
            break;
        }
        // Threads: a job past its parallel work keeps one; free ones go to the oldest job
        // waiting to start, then one at a time to running jobs that want more.
        for &(s, b) in &running {
            let j = &mut jobs[b][s];
            j.held = j.held.min(j.demand(t));
        }
        let mut free = t.saturating_sub(running.iter().map(|&(s, b)| jobs[b][s].held).sum());
        while free > 0 {
            if let Some((s, b)) = queue.pop_front() {
                jobs[b][s].held = 1;
                running.push((s, b));
                free -= 1;
                continue;
            }
            let mut gave = false;
            for &(s, b) in &running {
                let j = &mut jobs[b][s];
                if free > 0 && !j.off && j.held < j.demand(t) {
                    j.held += 1;
                    free -= 1;
                    gave = true;
                }
            }
            if !gave {
                break;
            }
        }
        // The next job to end, and every job's progress until then.
        let step = |j: &Job| match (j.off, j.held) {
            (true, _) => j.serial,
            (false, 0) => f64::INFINITY,
            (false, h) if j.parallel > 1e-9 => j.parallel / h as f64,
            _ => j.serial,
        };
        let Some((first, dt)) = running
            .iter()
            .map(|&(s, b)| ((s, b), step(&jobs[b][s])))
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .filter(|(_, dt)| dt.is_finite())
        else {
            // Nothing can run: the dependencies above never leave a job waiting on itself,
            // so this is unreachable; stop rather than loop.
            break;
        };
        now += dt;
        running.retain(|&(s, b)| {
            let j = &mut jobs[b][s];
            // The job that sets the step ends its phase exactly (no rounding left over: a
            // span of 10^18 ns minus its own step need not be 0 in floating point).
            let ends = (s, b) == first;
            if j.off {
                j.serial = if ends { 0.0 } else { j.serial - dt };
            } else if j.held > 0 {
                if j.parallel > 1e-9 {
                    j.parallel = if ends {
                        0.0
                    } else {
                        (j.parallel - j.held as f64 * dt).max(0.0)
                    };
                } else {
                    j.serial = if ends { 0.0 } else { (j.serial - dt).max(0.0) };
                }
            }
            if j.left() {
                return true;
            }
            j.held = 0;
            done[b][s] = true;
            left -= 1;
            false
        });
    }
    now
}

/// The GPU's launches as a measured overlapped row shows them: consecutive blocks whose
/// recover spans abut (one launch's span is shared out among its blocks).
pub(super) fn launches_of(row: &crate::PipelineReport) -> Vec<std::ops::Range<usize>> {
    let mut launches: Vec<std::ops::Range<usize>> = Vec::new();
    let mut last_end = None;
    for (b, block) in row.timeline.iter().enumerate() {
        let span = block.stages.get("recover").copied();
        match (launches.last_mut(), span, last_end) {
            (Some(l), Some([start, _]), Some(end)) if start == end && l.end == b => l.end = b + 1,
            _ => launches.push(b..b + 1),
        }
        last_end = span.map(|[_, end]| end);
    }
    launches
}
