//! Human output that never panics: one line (or a piece of one) to stdout or stderr, and what
//! ends the process when stdout fails. `common` re-exports it for the commands; `output`
//! (result files and `-` for stdout) uses it directly, so neither of the two depends on the
//! other through it.

/// Writes one line (or, `newline` false, a piece of one) of human output to stdout or
/// stderr. Output never panics: a closed stdout (`gigagas run | head -1`) ends the process
/// quietly with status 141, as a Unix tool killed by SIGPIPE does (nothing after that point
/// is written: no result file looks complete); any other error writing stdout (a full
/// device) ends it with a clear error on stderr and status 1. Errors writing stderr itself
/// are ignored: there is nowhere left to report them.
pub(crate) fn write_out(to_stderr: bool, newline: bool, text: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if to_stderr {
        let mut err = std::io::stderr().lock();
        let _ = err.write_fmt(text);
        if newline {
            let _ = err.write_all(b"\n");
        }
        return;
    }
    let mut out = std::io::stdout().lock();
    let mut written = out.write_fmt(text);
    if newline {
        written = written.and_then(|()| out.write_all(b"\n"));
    }
    if let Err(e) = written.and_then(|()| out.flush()) {
        drop(out);
        stdout_failed(&e);
    }
}

/// Ends the process after stdout failed (see [`write_out`]).
pub(crate) fn stdout_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    write_out(true, true, format_args!("error: writing to stdout: {e}"));
    std::process::exit(1)
}

/// `println!` that never panics ([`write_out`]).
macro_rules! out_ {
    ($($arg:tt)*) => {
        $crate::term::write_out(false, true, format_args!($($arg)*))
    };
}
pub(crate) use out_ as out;

/// `print!` that never panics ([`write_out`]).
macro_rules! out_raw_ {
    ($($arg:tt)*) => {
        $crate::term::write_out(false, false, format_args!($($arg)*))
    };
}
pub(crate) use out_raw_ as out_raw;

/// `eprintln!` that never panics ([`write_out`]).
macro_rules! note_ {
    ($($arg:tt)*) => {
        $crate::term::write_out(true, true, format_args!($($arg)*))
    };
}
pub(crate) use note_ as note;
