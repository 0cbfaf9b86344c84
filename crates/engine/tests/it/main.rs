//! The engine crate's integration tests, one binary (each test file of its own would link the
//! whole engine again: one binary builds in a fraction of the time).

mod common;
mod disk;
mod nobal;
mod pipeline;
