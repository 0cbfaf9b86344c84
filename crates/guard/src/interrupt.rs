//! What a signal that ends the process leaves behind: none of our temporary files, and none
//! of our child processes still running.
//!
//! Without this, `SIGINT` (Ctrl-C), `SIGTERM` or `SIGHUP` ended the process at once: a
//! `gigagas peers` run left its temporary export (a 10M-slot `genesis.json` is 1.5 GB) and a
//! peer's data directory (gigabytes) in the temporary directory, and the peer itself (geth,
//! started in a process group of its own by [`crate::child`]) kept running, orphaned.
//!
//! [`install`] (once, early in `main`) starts a thread that waits for those signals
//! (`signal-hook`: the handler only writes to a pipe). On the first one it marks the process
//! as ending, kills every registered child process group, removes every registered temporary
//! path, says in one line what it did (waiting at most 2 s for stderr) and exits with 128 +
//! the signal's number (130 for `SIGINT`), as the default action's status reads in a shell. A
//! second signal meanwhile exits at once.
//!
//! Registering, spawning a child ([`spawn_in_group`]), making a [`TempDir`] and committing an
//! output ([`commit`]: the rename of its `.partial` onto its name) all run under the
//! registry's lock, and the mark is set under it: each happens wholly before the cleanup
//! (which then sees it) or not at all. A thread that reaches one after the mark waits for the
//! end of the process instead, as does `main` before it exits on its own ([`settle`]) and
//! [`crate::child::run`] when its child exits: so nothing is started, made or committed after
//! the cleanup began, a child the cleanup killed is never reported as a failure, and an error
//! the cleanup caused cannot replace the signal's status. A registration lasts as long as the
//! value it returns. `SIGKILL` cannot be caught: what it leaves is named by the temporary
//! directories' prefixes (`gigagas-`).
//!
//! Stores are not touched: a store interrupted mid-block is crash-safe (it opens at its last
//! whole block, as after `kill -9`).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Mutex, OnceLock,
    },
};

/// What is undone on a terminating signal, by registration id.
#[derive(Default)]
struct Registry {
    paths: BTreeMap<u64, PathBuf>,
    groups: BTreeMap<u64, i32>,
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Set by the signal thread, under the registry's lock, before it undoes anything: the
/// process is ending by a signal.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a terminating signal arrived and the process is ending by it.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Waits for the end of the process: the signal thread exits it.
fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// Returns at once, unless a terminating signal is being handled: then this thread waits for
/// the signal thread to end the process (its status, not this thread's). Call before `main`
/// exits on its own: an error the signal's cleanup caused (a file removed under a writer)
/// must not replace the signal's status, nor a normal exit cut the cleanup short.
pub fn settle() {
    if interrupted() {
        park_forever();
    }
}

/// Runs `f` on the registry under its lock, unless a terminating signal is being handled:
/// then this thread waits for the end of the process instead. The signal thread sets
/// [`INTERRUPTED`] under the same lock, so `f` runs either wholly before the cleanup (which
/// then sees what `f` did) or not at all: nothing is spawned, made or committed after it.
fn with_registry<T>(f: impl FnOnce(&mut Registry, u64) -> T) -> T {
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    if interrupted() {
        drop(r);
        park_forever();
    }
    f(&mut r, NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// A registration: undone (unregistered) when dropped.
#[must_use = "the registration ends when this value is dropped"]
#[derive(Debug)]
pub struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
        r.paths.remove(&self.0);
        r.groups.remove(&self.0);
    }
}

/// Registers `path` (a temporary file or directory this process made) to be removed if a
/// terminating signal ends the process while the returned value lives. Made after the signal
/// (the process is ending), it waits for the end instead.
pub fn remove_on_interrupt(path: &Path) -> Registration {
    with_registry(|r, id| {
        r.paths.insert(id, path.to_owned());
        Registration(id)
    })
}

/// Makes a temporary file or directory with `make` and registers the path `path` gives it
/// ([`remove_on_interrupt`]) in one step under the registry's lock: never made after a
/// signal's cleanup began (this thread then waits for the end of the process), nor left
/// unregistered.
pub fn make_registered<T>(
    make: impl FnOnce() -> std::io::Result<T>,
    path: impl FnOnce(&T) -> PathBuf,
) -> std::io::Result<(T, Registration)> {
    with_registry(|r, id| {
        let made = make()?;
        r.paths.insert(id, path(&made));
        Ok((made, Registration(id)))
    })
}

/// [`make_registered`] for the temporary directory `builder` makes in `parent` (an output's
/// `.partial` or `.old` beside it).
pub fn temp_dir_in(
    builder: &tempfile::Builder<'_, '_>,
    parent: &Path,
) -> std::io::Result<(tempfile::TempDir, Registration)> {
    make_registered(|| builder.tempdir_in(parent), |d| d.path().to_owned())
}

/// Spawns `cmd` (set to start a process group of its own) and registers its group to be
/// killed (`SIGKILL`) if a terminating signal ends the process while the returned value lives.
/// Both happen under the registry's lock: a child is never started after the signal's cleanup
/// began (this thread then waits for the end of the process), nor started unregistered.
pub fn spawn_in_group(
    cmd: &mut std::process::Command,
) -> std::io::Result<(std::process::Child, Registration)> {
    with_registry(|r, id| {
        let child = cmd.spawn()?;
        // Group ids below 2 are never signalled (never the whole session, never init).
        if let Ok(pgid) = i32::try_from(child.id()) {
            if pgid > 1 {
                r.groups.insert(id, pgid);
            }
        }
        Ok((child, Registration(id)))
    })
}

/// Runs `commit`, the step that makes an output final (a rename of its `.partial` onto its
/// name), under the registry's lock: never at the same time as a signal's cleanup, so an
/// output is either committed whole before it or left as it was. After the signal this thread
/// waits for the end of the process instead.
pub fn commit<T>(commit: impl FnOnce() -> T) -> T {
    with_registry(|_, _| {
        COMMITTING.store(true, Ordering::SeqCst);
        let done = commit();
        COMMITTING.store(false, Ordering::SeqCst);
        // A second signal that came during the commit ends the process now that the output
        // is whole.
        let second = SECOND.load(Ordering::SeqCst);
        if second != 0 {
            // SAFETY: _exit(2) ends the process; nothing is passed.
            unsafe { libc::_exit(exit_status(second)) }
        }
        done
    })
}

/// Whether a [`commit`] is running: a second signal then waits for its end.
static COMMITTING: AtomicBool = AtomicBool::new(false);
/// A second signal that came during a [`commit`] (0: none).
static SECOND: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// A temporary directory in the system's temporary directory, its name starting with
/// `prefix`: removed when dropped, and by a terminating signal while it lives
/// ([`remove_on_interrupt`]).
#[derive(Debug)]
pub struct TempDir {
    dir: tempfile::TempDir,
    _registration: Registration,
}

impl TempDir {
    /// Creates it.
    pub fn new(prefix: &str) -> std::io::Result<Self> {
        let (dir, _registration) = make_registered(
            || tempfile::Builder::new().prefix(prefix).tempdir(),
            |d| d.path().to_owned(),
        )?;
        Ok(Self { dir, _registration })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Removes it now, returning the error a drop would ignore.
    pub fn close(self) -> std::io::Result<()> {
        self.dir.close()
    }
}

/// The exit status after terminating signal `signal`: 128 + its number, as a shell shows a
/// process the signal's default action ended.
pub fn exit_status(signal: i32) -> i32 {
    128 + signal
}

/// Kills the registered child groups and removes the registered paths; returns what it did
/// as one line (the signal named by `name`).
pub fn undo(name: &str) -> String {
    take().undo(name)
}

/// Marks the process as ending and takes everything out of the registry, under its lock:
/// whatever registers, spawns or commits after this waits for the end of the process instead
/// ([`with_registry`]).
fn take() -> Registry {
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    INTERRUPTED.store(true, Ordering::SeqCst);
    std::mem::take(&mut *r)
}

impl Registry {
    /// Removes what of the registered paths exists again (a writer that had not yet reached a
    /// commit point may have made a directory anew after the first pass); silent.
    fn sweep(&self) {
        for path in self.paths.values() {
            if let Ok(m) = std::fs::symlink_metadata(path) {
                let _ = if m.is_dir() {
                    std::fs::remove_dir_all(path)
                } else {
                    std::fs::remove_file(path)
                };
            }
        }
    }

    fn undo(&self, name: &str) -> String {
        let mut killed = 0;
        #[cfg(unix)]
        for pgid in self.groups.values() {
            // SAFETY: kill(2) with a negative pid signals the group; no memory is passed.
            if unsafe { libc::kill(-pgid, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        let mut removed = Vec::new();
        let mut failed = Vec::new();
        for path in self.paths.values() {
            let remove = || match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
                Ok(_) => std::fs::remove_file(path),
                Err(e) => Err(e),
            };
            if std::fs::symlink_metadata(path).is_err() {
                continue;
            }
            // A writer still filling a directory can make "not empty" once: try again.
            let result = remove().or_else(|_| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                remove()
            });
            match result {
                // Removed meanwhile by its owner's own cleanup: gone either way.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    removed.push(path.display().to_string())
                }
                Ok(()) => removed.push(path.display().to_string()),
                Err(e) => failed.push(format!("{}: {e}", path.display())),
            }
        }
        let mut line = format!("interrupted by {name}");
        if killed > 0 {
            line += &format!("; killed {killed} child process group(s)");
        }
        if !removed.is_empty() {
            line += &format!("; removed {}", removed.join(", "));
        }
        if !failed.is_empty() {
            line += &format!("; could not remove {}", failed.join(", "));
        }
        crate::text::printable(&line).into_owned()
    }
}

/// How long the signal thread waits for its line to reach stderr (a full pipe nobody reads)
/// before it exits anyway.
const LINE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Starts the thread that, on `SIGINT`, `SIGTERM` or `SIGHUP`, [`undo`]es what is registered,
/// writes its line to stderr (waiting at most [`LINE_WAIT`]) and exits with [`exit_status`].
/// A second such signal while that runs exits at once with its own status. Call once, early
/// in `main`; a second call does nothing. A no-op off Unix.
pub fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        use std::sync::Arc;
        static INSTALLED: OnceLock<()> = OnceLock::new();
        if INSTALLED.get().is_some() {
            return Ok(());
        }
        const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];
        let ending = Arc::new(AtomicBool::new(false));
        for signal in SIGNALS {
            let ending = Arc::clone(&ending);
            // SAFETY: the action only reads and stores atomics and calls _exit(2), all
            // async-signal-safe. Only once `ending` is set (the first signal is being
            // handled): at once, or at the end of a running `commit`.
            unsafe {
                signal_hook::low_level::register(signal, move || {
                    if ending.load(Ordering::SeqCst) {
                        if COMMITTING.load(Ordering::SeqCst) {
                            SECOND.store(signal, Ordering::SeqCst);
                        } else {
                            libc::_exit(exit_status(signal));
                        }
                    }
                })?;
            }
        }
        let mut signals = signal_hook::iterator::Signals::new(SIGNALS)?;
        let _ = INSTALLED.set(());
        std::thread::Builder::new()
            .name("gigagas-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    ending.store(true, Ordering::SeqCst);
                    let name = match signal {
                        SIGINT => "SIGINT",
                        SIGTERM => "SIGTERM",
                        _ => "SIGHUP",
                    };
                    let taken = take();
                    let line = taken.undo(name);
                    // A closed stderr, or a full pipe nobody reads, must not stop the exit.
                    let (tx, rx) = std::sync::mpsc::channel();
                    let _ = std::thread::Builder::new().spawn(move || {
                        let _ = std::io::Write::write_all(
                            &mut std::io::stderr(),
                            format!("{line}\n").as_bytes(),
                        );
                        let _ = tx.send(());
                    });
                    let _ = rx.recv_timeout(LINE_WAIT);
                    // Again, last thing: what a writer made anew meanwhile goes too.
                    taken.sweep();
                    // SAFETY: _exit(2) ends the process without running exit handlers or
                    // flushing buffers, none of which may block it (a full stdout pipe).
                    unsafe { libc::_exit(exit_status(signal)) }
                }
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // A registry of its own: the process's one may hold other tests' children.
    #[test]
    fn undo_removes_what_is_registered_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (kept, gone, file) = (
            dir.path().join("kept"),
            dir.path().join("gone"),
            dir.path().join("f"),
        );
        std::fs::create_dir(&kept).unwrap();
        std::fs::create_dir_all(gone.join("inner")).unwrap();
        std::fs::write(gone.join("inner/file"), b"x").unwrap();
        std::fs::write(&file, b"x").unwrap();
        let mut r = Registry::default();
        r.paths.insert(1, gone.clone());
        r.paths.insert(2, file.clone());
        r.paths.insert(3, dir.path().join("never made"));
        let line = r.undo("SIGTEST");
        assert!(!gone.exists() && !file.exists() && kept.exists(), "{line}");
        assert!(
            line.starts_with("interrupted by SIGTEST; removed "),
            "{line}"
        );
        assert!(
            !line.contains("never made") && !line.contains("could not"),
            "{line}"
        );
        assert_eq!(
            Registry::default().undo("SIGTEST"),
            "interrupted by SIGTEST"
        );
        assert_eq!(exit_status(2), 130);
    }

    #[test]
    fn a_dropped_registration_leaves_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        let reg = remove_on_interrupt(dir.path());
        let id = reg.0;
        {
            let r = registry().lock().unwrap();
            assert_eq!(r.paths.get(&id).map(PathBuf::as_path), Some(dir.path()));
        }
        drop(reg);
        assert!(!registry().lock().unwrap().paths.contains_key(&id));
    }
}
