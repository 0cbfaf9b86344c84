//! The conformance crate's integration tests, one binary (a test file of its own would be linked
//! again with the whole dependency graph: one binary builds in a fraction of the time).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

mod exceptions;
mod fuzz;
mod runner;
