//! The one clock every stage span of a run is read from.

use super::StageSpan;
use std::time::Instant;

/// The clock every span is read from: ns since the run started.
pub(super) struct Clock(Instant);

impl Clock {
    /// A clock starting now.
    pub(super) fn start() -> Self {
        Self(Instant::now())
    }

    /// ns since the start.
    pub(super) fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }

    /// Runs `f`, returning its result and its span.
    pub(super) fn time<T>(&self, f: impl FnOnce() -> T) -> (T, StageSpan) {
        let start_ns = self.now();
        let out = f();
        (
            out,
            StageSpan {
                start_ns,
                end_ns: self.now(),
            },
        )
    }

    /// Runs `f` on the thread budget, timed from the moment one of its threads takes it up
    /// (a stage's span is its work, not its wait for a free thread).
    pub(super) fn on<T: Send>(
        &self,
        budget: &rayon::ThreadPool,
        f: impl FnOnce() -> T + Send,
    ) -> (T, StageSpan) {
        budget.install(|| self.time(f))
    }
}
