//! Progress of long work inside the loader: a line on stderr every few seconds
//! (`gigagas: <what>: <done> of <total> <unit> (<percent>), <seconds> s`), whether or not
//! stderr is a terminal, so that no input makes a command work for minutes in silence.

use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Condvar, Mutex,
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

/// Work that ends before this prints nothing.
pub const FIRST_LINE_AFTER: Duration = Duration::from_secs(3);
/// Time between two progress lines.
pub const LINE_EVERY: Duration = Duration::from_secs(5);

/// A running progress reporter; stops (and prints nothing more) when dropped.
pub struct Heartbeat {
    done: Arc<AtomicU64>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    /// Starts reporting `what` (`total` `unit`s in all) on stderr: a first line after
    /// [`FIRST_LINE_AFTER`], then one every [`LINE_EVERY`]. If no thread can be started,
    /// the work goes on unreported.
    pub fn start(what: String, total: u64, unit: &'static str) -> Self {
        let done = Arc::new(AtomicU64::new(0));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let (d, s) = (done.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("gigagas-progress".into())
            .spawn(move || {
                let start = Instant::now();
                let mut wait = FIRST_LINE_AFTER;
                loop {
                    let (lock, cvar) = &*s;
                    let Ok(guard) = lock.lock() else { return };
                    let Ok((guard, _)) = cvar.wait_timeout_while(guard, wait, |stopped| !*stopped)
                    else {
                        return;
                    };
                    if *guard {
                        return;
                    }
                    drop(guard);
                    let n = d.load(Ordering::Relaxed).min(total);
                    eprintln!(
                        "gigagas: {what}: {n} of {total} {unit} ({:.0}%), {:.0} s",
                        n as f64 * 100.0 / total.max(1) as f64,
                        start.elapsed().as_secs_f64()
                    );
                    wait = LINE_EVERY;
                }
            })
            .ok();
        Self { done, stop, thread }
    }

    /// Counts `n` more units done.
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// Sets the units done so far to `n`.
    pub fn set(&self, n: u64) {
        self.done.store(n, Ordering::Relaxed);
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.stop;
        if let Ok(mut stopped) = lock.lock() {
            *stopped = true;
        }
        cvar.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
