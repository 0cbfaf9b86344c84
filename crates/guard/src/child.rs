//! Child processes with a deadline and bounded output.
//!
//! [`run`] starts a command in a process group of its own, with stdin closed and stdout and
//! stderr each read by a thread that keeps at most a bounded head and a short tail. A thread
//! waits for the exit and stamps its time, so the wall time is the process's own (spawn to
//! exit), not a polling interval. When the deadline passes first, the whole process group is
//! killed (a script's children too, so nothing is left holding the pipes) and the error says
//! what was waited for, how long, the setting that raises the limit, and the escaped tail of
//! the child's stderr. A child that exits while something it started keeps its pipes open is
//! not waited for beyond a short grace: its output is then marked incomplete. While it runs,
//! a line on stderr says every [`Limits::heartbeat`] what is waited for, for how long so far
//! and the deadline (terminal or not), so that a hung child is never waited for silently.

use crate::text;
use std::{
    io::Read,
    process::{Command, ExitStatus, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

/// Bytes of a stream's end always kept (for the error's tail), beyond the bounded head.
const TAIL_BYTES: usize = 16 * 1024;

/// How long the output of an exited child is waited for (its own children may hold the pipes).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// How often a running child is reported on stderr by default.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// Lines and characters of stderr an error quotes.
const QUOTED_LINES: usize = 6;
const QUOTED_CHARS: usize = 600;

/// The bounds of one child run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall time from spawn until the child must have exited.
    pub timeout: Duration,
    /// Bytes of stdout kept (the rest is read and dropped; [`Finished::stdout_complete`]
    /// says whether anything was).
    pub max_stdout: usize,
    /// Bytes of stderr kept.
    pub max_stderr: usize,
    /// The flag or setting that changes `timeout`, named by the error when it passes.
    pub setting: &'static str,
    /// How often a line on stderr says that the child is still waited for (what, how long
    /// so far, the deadline and its setting); [`HEARTBEAT`] by default.
    pub heartbeat: Duration,
}

impl Limits {
    /// `timeout`, changed by `setting`, 64 MiB of each stream, a heartbeat every
    /// [`HEARTBEAT`].
    pub fn new(timeout: Duration, setting: &'static str) -> Self {
        Self {
            timeout,
            max_stdout: 64 << 20,
            max_stderr: 64 << 20,
            setting,
            heartbeat: HEARTBEAT,
        }
    }
}

/// A child that exited before its deadline.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// The first [`Limits::max_stdout`] bytes of stdout.
    pub stdout: Vec<u8>,
    /// The first [`Limits::max_stderr`] bytes of stderr.
    pub stderr: Vec<u8>,
    /// Whether `stdout` is all the child wrote (not cut at the limit, pipe closed).
    pub stdout_complete: bool,
    /// Whether `stderr` is all the child wrote.
    pub stderr_complete: bool,
    stderr_end: Vec<u8>,
}

impl Finished {
    /// The last lines of stderr (the stream's real end even when the kept head was cut),
    /// escaped and bounded: what an error message quotes.
    pub fn stderr_tail(&self) -> String {
        text::tail(
            &String::from_utf8_lossy(&self.stderr_end),
            QUOTED_LINES,
            QUOTED_CHARS,
        )
    }

    /// stdout then stderr, as (lossy) text: for peers that log their verdict to either.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned() + &String::from_utf8_lossy(&self.stderr)
    }
}

/// Why a child run produced no [`Finished`].
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The program could not be started.
    #[error("{what}: cannot start {program}: {source}")]
    Spawn {
        /// What the child was run for.
        what: String,
        /// The program.
        program: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The deadline passed: the child and its process group were killed.
    #[error(
        "{what}: {program} did not exit within {} s (the limit, set by {setting}), killed; its \
         stderr ended: {}",
        timeout.as_secs_f64(),
        if stderr_tail.is_empty() { "(nothing)" } else { stderr_tail.as_str() }
    )]
    TimedOut {
        /// What the child was run for.
        what: String,
        /// The program.
        program: String,
        /// The limit that passed.
        timeout: Duration,
        /// The flag or setting that changes it.
        setting: &'static str,
        /// The escaped end of its stderr.
        stderr_tail: String,
    },
    /// Waiting for the child failed.
    #[error("{what}: waiting for {program}: {source}")]
    Wait {
        /// What the child was run for.
        what: String,
        /// The program.
        program: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// What a reader thread kept of one stream.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    end: Vec<u8>,
    cut: bool,
}

fn read_bounded(mut stream: impl Read, max: usize) -> Capture {
    let mut capture = Capture::default();
    let mut buf = [0u8; 8192];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => {
                capture.cut = true;
                break;
            }
        };
        let chunk = &buf[..n];
        let room = max.saturating_sub(capture.head.len());
        capture.head.extend_from_slice(&chunk[..room.min(n)]);
        if room < n {
            capture.cut = true;
        }
        capture.end.extend_from_slice(chunk);
        if capture.end.len() > 2 * TAIL_BYTES {
            let drop = capture.end.len() - TAIL_BYTES;
            capture.end.drain(..drop);
        }
    }
    if capture.end.len() > TAIL_BYTES {
        let drop = capture.end.len() - TAIL_BYTES;
        capture.end.drain(..drop);
    }
    capture
}

/// Sends SIGKILL to the process group `pid` leads (the child was started as its leader).
fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers and has no memory effects; the group's leader has
    // not been reaped yet (its waiter thread has not returned), so the id is still ours.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Runs `cmd` to its exit within `limits`; `what` says what it is waited for ("geth evm
/// blocktest on DIR/blocktest.json"). stdin is closed; stdout and stderr are captured. Every
/// [`Limits::heartbeat`] of waiting, a line on stderr names what is waited for, the time so
/// far and the deadline ([`waiting_line`]).
pub fn run(cmd: &mut Command, what: &str, limits: &Limits) -> Result<Finished, ChildError> {
    run_reporting(cmd, what, limits, &mut |line| eprintln!("{line}"))
}

/// The heartbeat line of a child still running after `elapsed`.
pub fn waiting_line(
    what: &str,
    program: &str,
    pid: u32,
    elapsed: Duration,
    limits: &Limits,
) -> String {
    format!(
        "waiting on {what} ({program}, pid {pid}): {:.0} s so far; killed at {} s (the limit, set by {})",
        elapsed.as_secs_f64(),
        limits.timeout.as_secs_f64(),
        limits.setting
    )
}

/// [`run`], giving each heartbeat line to `report` instead of stderr.
pub fn run_reporting(
    cmd: &mut Command,
    what: &str,
    limits: &Limits,
    report: &mut dyn FnMut(&str),
) -> Result<Finished, ChildError> {
    let program = text::printable(&cmd.get_program().to_string_lossy()).into_owned();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let start = Instant::now();
    // Killed with its group if a signal ends this process while it runs; never started
    // after one.
    let (mut child, _group) =
        crate::interrupt::spawn_in_group(cmd).map_err(|source| ChildError::Spawn {
            what: what.to_owned(),
            program: program.clone(),
            source,
        })?;
    let pid = child.id();
    let (out_tx, out_rx) = mpsc::channel::<(usize, Capture)>();
    let mut readers = 0;
    if let Some(stdout) = child.stdout.take() {
        let (tx, max) = (out_tx.clone(), limits.max_stdout);
        thread::spawn(move || tx.send((0, read_bounded(stdout, max))));
        readers += 1;
    }
    if let Some(stderr) = child.stderr.take() {
        let (tx, max) = (out_tx.clone(), limits.max_stderr);
        thread::spawn(move || tx.send((1, read_bounded(stderr, max))));
        readers += 1;
    }
    drop(out_tx);
    let (exit_tx, exit_rx) = mpsc::channel();
    thread::spawn(move || {
        let status = child.wait();
        let _ = exit_tx.send((status, Instant::now()));
    });
    let collect = |grace: Duration| {
        let mut streams: [Option<Capture>; 2] = [None, None];
        let until = Instant::now() + grace;
        for _ in 0..readers {
            let left = until.saturating_duration_since(Instant::now());
            match out_rx.recv_timeout(left) {
                Ok((i, capture)) => streams[i] = Some(capture),
                Err(_) => break,
            }
        }
        streams
    };
    let deadline = start + limits.timeout;
    let beat = limits.heartbeat.max(Duration::from_millis(10));
    let exited = loop {
        let now = Instant::now();
        let left = deadline.saturating_duration_since(now);
        match exit_rx.recv_timeout(left.min(beat)) {
            Ok(exit) => break Some(exit),
            Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => break None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                report(&waiting_line(what, &program, pid, start.elapsed(), limits));
            }
        }
    };
    // A child a signal's cleanup killed is no result: the process is ending by the signal.
    crate::interrupt::settle();
    match exited.ok_or(()) {
        Ok((status, end)) => {
            let status = status.map_err(|source| ChildError::Wait {
                what: what.to_owned(),
                program: program.clone(),
                source,
            })?;
            let [out, err] = collect(PIPE_GRACE);
            let complete = |c: &Option<Capture>| c.as_ref().is_some_and(|c| !c.cut);
            let (stdout_complete, stderr_complete) = (complete(&out), complete(&err));
            let out = out.unwrap_or_default();
            let err = err.unwrap_or_default();
            Ok(Finished {
                status,
                wall: end.duration_since(start),
                stdout: out.head,
                stderr: err.head,
                stdout_complete,
                stderr_complete,
                stderr_end: err.end,
            })
        }
        Err(_) => {
            kill_group(pid);
            // The waiter reaps the killed child; its pipes close with the group.
            let _ = exit_rx.recv_timeout(PIPE_GRACE);
            let [_, err] = collect(PIPE_GRACE);
            let stderr_tail = err.map_or_else(String::new, |c| {
                text::tail(&String::from_utf8_lossy(&c.end), QUOTED_LINES, QUOTED_CHARS)
            });
            Err(ChildError::TimedOut {
                what: what.to_owned(),
                program,
                timeout: limits.timeout,
                setting: limits.setting,
                stderr_tail,
            })
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn limits(ms: u64) -> Limits {
        Limits {
            timeout: Duration::from_millis(ms),
            max_stdout: 1024,
            max_stderr: 1024,
            setting: "--test-timeout",
            heartbeat: HEARTBEAT,
        }
    }

    #[test]
    fn a_child_that_exits_gives_its_output_and_status() {
        let done = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            "a test script",
            &limits(60_000),
        )
        .unwrap();
        assert_eq!(done.status.code(), Some(3));
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.stderr, b"err\n");
        assert!(done.stdout_complete && done.stderr_complete);
        assert_eq!(done.stderr_tail(), "err");
    }

    /// A script that hangs (and whose own child, `sleep`, holds the pipes) is killed at the
    /// deadline with its whole group; the error names what was waited for and quotes its
    /// stderr, escaped.
    #[test]
    fn a_hanging_child_is_killed_at_its_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hang.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\necho 'starting \x1b[31mred' >&2\nsleep 1000\necho never\n",
        )
        .unwrap();
        // 2 s: the shell must have started and written its line before the deadline, also on
        // a loaded machine (at 300 ms it once had not, and the tail was empty).
        let err = run(
            Command::new("sh").arg(&script),
            "the hanging peer on blocks.json",
            &limits(2_000),
        )
        .unwrap_err();
        let ChildError::TimedOut {
            ref stderr_tail, ..
        } = err
        else {
            panic!("{err}")
        };
        assert_eq!(stderr_tail, "starting \\u{1b}[31mred");
        let message = err.to_string();
        assert!(
            message.contains("the hanging peer on blocks.json"),
            "{message}"
        );
        assert!(message.contains("--test-timeout"), "{message}");
        assert!(!message.contains('\u{1b}'), "{message}");
    }

    /// A child that does not answer is reported while it is waited for: one line per
    /// heartbeat naming what is waited for, the time so far and the deadline with its
    /// setting; then it is killed at the deadline, which the error names.
    #[test]
    fn a_silent_child_is_reported_every_heartbeat_until_its_deadline() {
        let mut lines = Vec::new();
        let limits = Limits {
            heartbeat: Duration::from_millis(100),
            ..limits(1_050)
        };
        let err = run_reporting(
            Command::new("sleep").arg("1000"),
            "a peer that never answers",
            &limits,
            &mut |line| lines.push(line.to_owned()),
        )
        .unwrap_err();
        assert!(matches!(err, ChildError::TimedOut { .. }), "{err}");
        let message = err.to_string();
        assert!(message.contains("within 1.05 s"), "{message}");
        assert!(message.contains("--test-timeout"), "{message}");
        // About 10 heartbeats; fewer when a loaded machine delays the waiting thread.
        assert!((3..=11).contains(&lines.len()), "{lines:#?}");
        for line in &lines {
            assert!(
                line.starts_with("waiting on a peer that never answers (sleep, pid "),
                "{line}"
            );
            assert!(
                line.contains("killed at 1.05 s (the limit, set by --test-timeout)"),
                "{line}"
            );
        }
        // A child that exits before the first heartbeat is not reported.
        let mut quiet = Vec::new();
        run_reporting(
            Command::new("true").arg("x"),
            "a quick child",
            &Limits {
                heartbeat: Duration::from_secs(5),
                ..limits
            },
            &mut |line| quiet.push(line.to_owned()),
        )
        .unwrap();
        assert!(quiet.is_empty(), "{quiet:?}");
        // The real line, as `run` prints it.
        let line = waiting_line(
            "geth evm blocktest on x.json",
            "evm",
            7,
            Duration::from_secs(20),
            &Limits::new(Duration::from_secs(600), "gigagas peers --timeout"),
        );
        assert_eq!(line, "waiting on geth evm blocktest on x.json (evm, pid 7): 20 s so far; killed at 600 s (the limit, set by gigagas peers --timeout)");
    }

    #[test]
    fn output_beyond_the_limit_is_dropped_and_marked() {
        let done = run(
            Command::new("sh").args(["-c", "head -c 100000 /dev/zero; echo last >&2"]),
            "a chatty script",
            &limits(60_000),
        )
        .unwrap();
        assert_eq!(done.stdout.len(), 1024);
        assert!(!done.stdout_complete);
        assert!(done.stderr_complete);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error_naming_it() {
        let err = run(
            &mut Command::new("/nonexistent/gigagas-peer"),
            "a peer",
            &limits(1000),
        )
        .unwrap_err();
        assert!(matches!(err, ChildError::Spawn { .. }));
        assert!(err.to_string().contains("/nonexistent/gigagas-peer"));
    }
}
