//! The differential crate's integration tests, one binary (each test file of its own would link the
//! whole engine again: one binary builds in a fraction of the time).

mod eip7928;
mod engine;
mod generated;
mod geth;
