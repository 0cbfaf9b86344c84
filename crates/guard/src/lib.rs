//! Bounded, escaped dealings with the outside world.
//!
//! - [`text`]: strings that came from an input (a node's error text, a tar header, a result
//!   file's fields, a file name, a child's stderr) made safe for where they are shown: the
//!   terminal (control characters escaped), a markdown table cell, a CSV field.
//! - [`child`]: a child process (geth, evm, revme, gigagas itself) run with a deadline, killed
//!   with its whole process group when it passes, its output held up to a bound, and an error
//!   that says what was waited for and ends with the escaped tail of its stderr.
//! - [`file`]: an input file opened only when it is a regular file (never a FIFO or device).
//! - [`fault`]: a `SIGBUS` (a write to a mapped store file on a full disk) reported in words
//!   with its own exit status instead of a silent death.
//! - [`interrupt`]: on `SIGINT`, `SIGTERM` or `SIGHUP`, the registered child process groups
//!   killed and temporary paths removed before the process exits.
//!
//! Invariant: nothing here trusts the bytes it is given; every wait ends, every buffer is
//! bounded.

#![warn(missing_docs)]

pub mod child;
pub mod fault;
pub mod file;
pub mod interrupt;
pub mod text;
