//! Was the machine idle during a timed run? The CPU time that *other* processes used, read
//! from the kernel's counters at the start and the end of the run.
//!
//! The load average (`/proc/loadavg`) is a decaying one-minute mean of runnable tasks: it
//! misses a competitor that started a few seconds before a short run, and on 2 cores one
//! process holding a core at 100% reads about 1.0, below the core count, so no warning came
//! although a 2-thread run then had one core. This module counts instead: the machine's busy
//! CPU time over the run (`/proc/stat`, all CPUs) minus this process's own (`/proc/self/stat`),
//! as a share of all the CPU time the machine had in that interval (wall time × cores).
//!
//! * busy time = `user + nice + system + irq + softirq + steal` of the `cpu` line (`guest` and
//!   `guest_nice` are already inside `user`/`nice`; `idle` and `iowait` are not busy). `steal`
//!   counts: a hypervisor that gives the core to another guest takes it from the run as well.
//! * own time = `utime + stime + cutime + cstime` of this process (children it has waited for
//!   count as its own: `peers` runs the other engines as child processes).
//! * All counters are in clock ticks (`USER_HZ`), the same unit in both files, so no
//!   conversion is needed; one tick is 10 ms on Linux, so a run much shorter than a second
//!   has a coarse figure ([`CpuLoad::total_ticks`] says how many ticks it rests on).
//!
//! [`CpuLoad::busy`] is the verdict: other processes used at least [`BUSY_SHARE`] of the
//! machine. Not Linux (no `/proc`): [`CpuSample::now`] fails and callers record nothing.

use serde::{Deserialize, Serialize};

/// Share of the machine's CPU time (all cores) that other processes may use during a run
/// before it counts as not idle: 10%. On 2 cores that is 0.2 of a core over the run; an idle
/// machine's background (kernel threads, agents) stays near 1%, and one competing process
/// holding a core reads 50%.
pub const BUSY_SHARE: f64 = 0.10;

/// Why the counters could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read (not Linux, or no `/proc`).
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file's text is not what the kernel writes.
    #[error("{path}: {what}")]
    Parse {
        /// The file.
        path: &'static str,
        /// What is wrong.
        what: String,
    },
}

/// The kernel's CPU counters at one moment, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSample {
    /// All CPU time of the machine so far (busy + idle + iowait), all cores.
    pub total: u64,
    /// Busy CPU time of the machine so far, all cores and processes.
    pub busy: u64,
    /// CPU time of this process (and its waited-for children) so far.
    pub own: u64,
}

impl CpuSample {
    /// Reads `/proc/stat` and `/proc/self/stat` now.
    pub fn now() -> Result<Self, LoadError> {
        let read = |path: &'static str| {
            std::fs::read_to_string(path).map_err(|source| LoadError::Read { path, source })
        };
        let stat = read("/proc/stat")?;
        let own = read("/proc/self/stat")?;
        Self::parse(&stat, &own)
    }

    /// Parses the text of `/proc/stat` and of `/proc/<pid>/stat`.
    pub fn parse(proc_stat: &str, self_stat: &str) -> Result<Self, LoadError> {
        let (total, busy) = machine_ticks(proc_stat)?;
        Ok(Self {
            total,
            busy,
            own: own_ticks(self_stat)?,
        })
    }
}

/// `(total, busy)` ticks of the aggregate `cpu` line of `/proc/stat`.
fn machine_ticks(text: &str) -> Result<(u64, u64), LoadError> {
    const PATH: &str = "/proc/stat";
    let bad = |what: String| LoadError::Parse { path: PATH, what };
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))
        .ok_or_else(|| bad("no aggregate `cpu` line".into()))?;
    let fields = line
        .split_whitespace()
        .skip(1)
        .map(|f| {
            f.parse::<u64>()
                .map_err(|_| bad(format!("`{f}` in the `cpu` line is not a tick count")))
        })
        .collect::<Result<Vec<u64>, _>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]; kernels before
    // 2.6.11 wrote fewer, every kernel since at least the first 7.
    if fields.len() < 7 {
        return Err(bad(format!(
            "the `cpu` line has {} counters, expected at least 7",
            fields.len()
        )));
    }
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    let busy = [0, 1, 2, 5, 6, 7]
        .into_iter()
        .try_fold(0u64, |sum, i| sum.checked_add(at(i)));
    let idle = at(3).checked_add(at(4));
    match (busy, idle) {
        (Some(busy), Some(idle)) => busy
            .checked_add(idle)
            .map(|total| (total, busy))
            .ok_or_else(|| bad("tick counts overflow".into())),
        _ => Err(bad("tick counts overflow".into())),
    }
}

/// `utime + stime + cutime + cstime` of a `/proc/<pid>/stat` line.
fn own_ticks(text: &str) -> Result<u64, LoadError> {
    const PATH: &str = "/proc/self/stat";
    let bad = |what: String| LoadError::Parse { path: PATH, what };
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are counted
    // from after the last ')'. There, field 3 (state) is index 0, so utime (field 14) is
    // index 11, stime 12, cutime 13, cstime 14.
    let rest = text
        .rfind(')')
        .map(|i| &text[i + 1..])
        .ok_or_else(|| bad("no `(comm)` field".into()))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let mut sum: u64 = 0;
    for (i, name) in [(11, "utime"), (12, "stime"), (13, "cutime"), (14, "cstime")] {
        let f = fields.get(i).ok_or_else(|| {
            bad(format!(
                "no {name} field (only {} after comm)",
                fields.len()
            ))
        })?;
        // cutime/cstime are signed in the kernel's format; never negative in practice.
        let v: i64 = f
            .parse()
            .map_err(|_| bad(format!("{name} `{f}` is not a tick count")))?;
        sum = sum.saturating_add(v.max(0) as u64);
    }
    Ok(sum)
}

/// Who used the machine between two samples. Recorded in a bench result as
/// `machine.cpu_during_run` (see docs/bench-json.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuLoad {
    /// CPU time other processes used, as a share of all the machine's CPU time in the
    /// interval (0 to 1; 0.5 on 2 cores = one core's worth).
    pub other_share: f64,
    /// CPU time this process used, same scale.
    pub own_share: f64,
    /// The machine's CPU time in the interval, ticks (wall time × cores × `USER_HZ`): what
    /// the shares rest on.
    pub total_ticks: u64,
    /// `other_share >= busy_threshold`: the machine was not idle during the run.
    pub busy: bool,
    /// The threshold the verdict used ([`BUSY_SHARE`] when written).
    pub busy_threshold: f64,
}

impl CpuLoad {
    /// The load between `start` and `end` (`end` taken later); `None` when no tick passed
    /// or a counter went backwards (samples from different machines or boots).
    pub fn between(start: &CpuSample, end: &CpuSample) -> Option<Self> {
        let total = end.total.checked_sub(start.total)?;
        let busy = end.busy.checked_sub(start.busy)?;
        let own = end.own.checked_sub(start.own)?;
        if total == 0 {
            return None;
        }
        // Own time is sampled from another file than the machine's, a tick apart at most:
        // clamp so that rounding never yields a negative share for the others.
        let other = busy.saturating_sub(own);
        let share = |ticks: u64| (ticks as f64 / total as f64).clamp(0.0, 1.0);
        let other_share = share(other);
        Some(Self {
            other_share,
            own_share: share(own),
            total_ticks: total,
            busy: other_share >= BUSY_SHARE,
            busy_threshold: BUSY_SHARE,
        })
    }

    /// Other processes' CPU time in cores' worth (`other_share × cores`).
    pub fn other_cores(&self, cores: usize) -> f64 {
        self.other_share * cores as f64
    }

    /// The warning to print when the run was not idle, naming the share and the threshold;
    /// `None` when it was.
    pub fn warning(&self, cores: usize) -> Option<String> {
        self.busy.then(|| {
            format!(
                "the machine was not idle: other processes used {:.0}% of its CPU time during the timed run ({:.2} of {cores} cores; threshold {:.0}%, /proc/stat): absolute times are low and thread-scaling figures understate; rerun on an idle machine",
                self.other_share * 100.0,
                self.other_cores(cores),
                self.busy_threshold * 100.0
            )
        })
    }
}

/// Measures a timed run: [`LoadMeter::start`] before it, [`LoadMeter::finish`] after.
#[derive(Debug, Clone, Copy)]
pub struct LoadMeter {
    start: Option<CpuSample>,
}

impl LoadMeter {
    /// Samples the counters now (records nothing where `/proc` is unreadable).
    pub fn start() -> Self {
        Self {
            start: CpuSample::now().ok(),
        }
    }

    /// The load since [`Self::start`]; `None` where `/proc` is unreadable or no tick passed.
    pub fn finish(&self) -> Option<CpuLoad> {
        let start = self.start?;
        CpuLoad::between(&start, &CpuSample::now().ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `/proc/stat` with the given aggregate counters (two CPUs' lines after it, which must
    /// be ignored).
    fn stat(c: [u64; 10]) -> String {
        let line: Vec<String> = c.iter().map(u64::to_string).collect();
        format!(
            "cpu  {}\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 9 9 9 9 9 9 9 9 0 0\nintr 12345 0 0\nctxt 999\nbtime 1700000000\n",
            line.join(" ")
        )
    }

    /// A `/proc/self/stat` line whose comm has spaces and a parenthesis.
    fn self_stat(utime: u64, stime: u64, cutime: i64, cstime: i64) -> String {
        format!("4242 (gig a) gas) R 1 4242 4242 0 -1 4194304 2000 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 3 0 100 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0")
    }

    #[test]
    fn parses_the_aggregate_line_and_own_times() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let s = CpuSample::parse(
            &stat([100, 5, 50, 1000, 20, 3, 2, 10, 40, 0]),
            &self_stat(30, 7, 2, 1),
        )
        .unwrap();
        assert_eq!(s.busy, 100 + 5 + 50 + 3 + 2 + 10);
        assert_eq!(s.total, s.busy + 1000 + 20);
        assert_eq!(s.own, 30 + 7 + 2 + 1);
    }

    #[test]
    fn one_competitor_holding_one_of_two_cores_is_busy() {
        // 10 s on 2 cores at 100 Hz: 2000 ticks. This process used 1 core (1000 ticks), one
        // other process the other core (1000 ticks).
        let a = CpuSample::parse(
            &stat([500, 0, 100, 9000, 0, 0, 0, 0, 0, 0]),
            &self_stat(50, 10, 0, 0),
        )
        .unwrap();
        let b = CpuSample::parse(
            &stat([2400, 0, 200, 9000, 0, 0, 0, 0, 0, 0]),
            &self_stat(1000, 60, 0, 0),
        )
        .unwrap();
        let load = CpuLoad::between(&a, &b).unwrap();
        assert_eq!(load.total_ticks, 2000);
        assert!((load.own_share - 0.5).abs() < 1e-9, "{load:?}");
        assert!((load.other_share - 0.5).abs() < 1e-9, "{load:?}");
        assert!((load.other_cores(2) - 1.0).abs() < 1e-9);
        assert!(load.busy);
        let w = load.warning(2).unwrap();
        assert!(
            w.contains("50%") && w.contains("1.00 of 2 cores") && w.contains("10%"),
            "{w}"
        );
    }

    #[test]
    fn an_idle_machine_is_not_busy() {
        // 2000 ticks: this process 1900, everything else 20 (1%), idle 80.
        let a = CpuSample::parse(
            &stat([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            &self_stat(0, 0, 0, 0),
        )
        .unwrap();
        let b = CpuSample::parse(
            &stat([1800, 0, 120, 70, 10, 0, 0, 0, 0, 0]),
            &self_stat(1800, 100, 0, 0),
        )
        .unwrap();
        let load = CpuLoad::between(&a, &b).unwrap();
        assert!((load.other_share - 0.01).abs() < 1e-9, "{load:?}");
        assert!(!load.busy);
        assert_eq!(load.warning(2), None);
    }

    #[test]
    fn the_threshold_is_inclusive_and_steal_counts() {
        // 1000 ticks; others: 100 ticks, all of it stolen by the hypervisor.
        let a = CpuSample::parse(&stat([0; 10]), &self_stat(0, 0, 0, 0)).unwrap();
        let b = CpuSample::parse(
            &stat([400, 0, 0, 500, 0, 0, 0, 100, 0, 0]),
            &self_stat(400, 0, 0, 0),
        )
        .unwrap();
        let load = CpuLoad::between(&a, &b).unwrap();
        assert!((load.other_share - BUSY_SHARE).abs() < 1e-9);
        assert!(load.busy);
    }

    #[test]
    fn waited_children_count_as_own() {
        let a = CpuSample::parse(&stat([0; 10]), &self_stat(0, 0, 0, 0)).unwrap();
        let b = CpuSample::parse(
            &stat([600, 0, 0, 400, 0, 0, 0, 0, 0, 0]),
            &self_stat(100, 0, 500, 0),
        )
        .unwrap();
        let load = CpuLoad::between(&a, &b).unwrap();
        assert_eq!(load.other_share, 0.0);
        assert!(!load.busy);
    }

    #[test]
    fn no_tick_or_counters_going_back_give_nothing() {
        let a = CpuSample::parse(
            &stat([10, 0, 0, 10, 0, 0, 0, 0, 0, 0]),
            &self_stat(5, 0, 0, 0),
        )
        .unwrap();
        assert_eq!(CpuLoad::between(&a, &a), None);
        let earlier = CpuSample::parse(
            &stat([5, 0, 0, 5, 0, 0, 0, 0, 0, 0]),
            &self_stat(1, 0, 0, 0),
        )
        .unwrap();
        assert_eq!(CpuLoad::between(&a, &earlier), None);
    }

    #[test]
    fn own_time_a_tick_ahead_never_makes_a_negative_share() {
        let a = CpuSample::parse(&stat([0; 10]), &self_stat(0, 0, 0, 0)).unwrap();
        let b = CpuSample::parse(
            &stat([100, 0, 0, 100, 0, 0, 0, 0, 0, 0]),
            &self_stat(101, 0, 0, 0),
        )
        .unwrap();
        let load = CpuLoad::between(&a, &b).unwrap();
        assert_eq!(load.other_share, 0.0);
        assert_eq!(load.own_share, 0.505);
    }

    #[test]
    fn malformed_text_is_an_error_naming_the_file() {
        let own = self_stat(1, 1, 0, 0);
        for (text, needle) in [
            ("intr 1 2\n", "no aggregate `cpu` line"),
            ("cpu  1 2 3\n", "3 counters"),
            ("cpu  1 2 x 4 5 6 7 8\n", "`x`"),
            ("cpu  18446744073709551615 1 0 0 0 0 0 0\n", "overflow"),
        ] {
            let e = CpuSample::parse(text, &own).unwrap_err().to_string();
            assert!(e.starts_with("/proc/stat: ") && e.contains(needle), "{e}");
        }
        let good = stat([1; 10]);
        for (text, needle) in [
            ("4242 gigagas R 1", "no `(comm)`"),
            ("4242 (gigagas) R 1 2 3", "no utime"),
            (
                "4242 (x) R 1 4242 4242 0 -1 0 0 0 0 0 u 1 0 0 20",
                "utime `u`",
            ),
        ] {
            let e = CpuSample::parse(&good, text).unwrap_err().to_string();
            assert!(
                e.starts_with("/proc/self/stat: ") && e.contains(needle),
                "{e}"
            );
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn reads_this_machine() {
        let a = CpuSample::now().unwrap();
        let b = CpuSample::now().unwrap();
        assert!(b.total >= a.total && b.busy >= a.busy && b.own >= a.own);
        assert!(a.busy <= a.total);
    }
}
