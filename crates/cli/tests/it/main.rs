//! The binary's integration tests, one test binary (each file of its own was linked again
//! with the whole dependency graph: one binary builds in a fraction of the time). Each module
//! drives the built `gigagas` (`CARGO_BIN_EXE_gigagas`) as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

mod cli;
mod db_cli;
mod dev_node;
mod fetch_cli;
mod hostile;
mod peers_cli;
