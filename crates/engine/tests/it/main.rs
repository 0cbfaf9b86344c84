//! The engine crate's integration tests, one binary (each test file of its own would link the
//! whole engine again: one binary builds in a fraction of the time).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

mod common;
mod disk;
mod early_root;
mod nobal;
mod pipeline;
mod spec;
