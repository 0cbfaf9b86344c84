//! A fault the process cannot return from, turned into a clear error.
//!
//! MDBX maps its files into memory. When a write to a mapped page needs a block the file
//! system no longer has (a full disk or tmpfs: the file was extended sparse, the page is
//! touched later), or a mapped file was truncated under the process, the kernel delivers
//! `SIGBUS`, and the process died with no word (status 135) — measured on a full tmpfs during
//! `run --state disk`. The store is safe (MDBX commits are atomic: it stays at its last
//! whole block), but the user was not told why. [`report_sigbus`] installs a handler that
//! writes one line saying so and exits with [`SIGBUS_EXIT`].

/// Exit status after a `SIGBUS` (74, `EX_IOERR` of sysexits.h: an input/output error).
pub const SIGBUS_EXIT: i32 = 74;

/// What the handler writes to stderr (plain ASCII: a signal handler may only `write`).
pub const SIGBUS_MESSAGE: &str = "error: an I/O error on a memory-mapped file (SIGBUS): most likely the store's file system is full (or a mapped file was truncated by another process). A store is left at its last committed block; free space and run again (db verify checks it)\n";

#[cfg(unix)]
extern "C" fn on_sigbus(_: libc::c_int) {
    let m = SIGBUS_MESSAGE.as_bytes();
    // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffer is a static string.
    unsafe {
        libc::write(2, m.as_ptr().cast(), m.len());
        libc::_exit(SIGBUS_EXIT);
    }
}

/// Installs the `SIGBUS` handler of this module for the whole process (call once, early in
/// `main`). On Linux, Rust's own stack-overflow detection uses `SIGSEGV`, which this leaves
/// alone. A no-op off Unix.
pub fn report_sigbus() -> Result<(), std::io::Error> {
    #[cfg(unix)]
    {
        // SAFETY: a zeroed sigaction is valid (no flags, empty mask set below); the handler
        // is an `extern "C" fn(c_int)` that only calls async-signal-safe functions.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    const CHILD: &str = "GIGAGAS_TEST_SIGBUS_CHILD";

    /// Runs itself as a child that installs the handler and reads a mapped page past the end
    /// of a truncated file (a SIGBUS on Linux, as a mapped write on a full file system is).
    #[test]
    fn a_sigbus_ends_the_process_with_the_message_and_its_status() {
        if std::env::var_os(CHILD).is_some() {
            report_sigbus().unwrap();
            let file = tempfile::tempfile().unwrap();
            file.set_len(4096).unwrap();
            // SAFETY: a fresh shared read-only mapping of a 4 KiB file; the read after the
            // truncation is the fault under test.
            unsafe {
                let page = libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                );
                assert_ne!(page, libc::MAP_FAILED);
                file.set_len(0).unwrap();
                std::ptr::read_volatile(page.cast::<u8>());
            }
            panic!("reading past the end of a truncated mapping raised no SIGBUS");
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "fault::tests::a_sigbus_ends_the_process_with_the_message_and_its_status",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(SIGBUS_EXIT), "{stderr}");
        assert!(stderr.contains(SIGBUS_MESSAGE.trim_end()), "{stderr}");
    }
}
