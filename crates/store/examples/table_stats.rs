//! Prints the B-tree of every table of a store (`mdbx_dbi_stat`): depth, branch and leaf
//! pages, entries. What a cold lookup walks through: a store's branch pages against its leaf
//! pages say how many pages past the leaf a lookup reads when the page cache holds none of
//! them (`docs/results/node-16core-h200-2026-11-28.md`, pages read per item at 75M slots):
//!
//! ```text
//! cargo run --release -p gigagas-store --example table_stats -- /path/DBDIR
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool: a failure ends it

use gigagas_store::Store;
use std::{path::PathBuf, process::ExitCode};

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: table_stats DBDIR");
        return ExitCode::from(2);
    };
    let path = PathBuf::from(dir);
    // The store's own open: no symbolic link, only a store's files, no writer lock taken
    // (a run may be writing it).
    let store: Store = match Store::open_unrecovered(&path, false) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stats = match store.table_stats() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{:<12} {:>5} {:>13} {:>13} {:>10} {:>14} {:>9}",
        "table", "depth", "branch pages", "leaf pages", "overflow", "entries", "branch %"
    );
    for t in stats {
        println!(
            "{:<12} {:>5} {:>13} {:>13} {:>10} {:>14} {:>8.2}%",
            t.table.name(),
            t.depth,
            t.branch_pages,
            t.leaf_pages,
            t.overflow_pages,
            t.entries,
            100.0 * t.branch_pages as f64 / t.leaf_pages.max(1) as f64
        );
    }
    ExitCode::SUCCESS
}
