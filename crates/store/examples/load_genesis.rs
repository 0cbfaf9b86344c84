//! Measures `Store::load_genesis` and `Store::verify_streaming` on one account of N filled
//! slots (the `sstore-bloated` layout) without generating a chain, for sizes `gen` cannot
//! reach in memory:
//!
//! ```text
//! /usr/bin/time -v cargo run --release -p gigagas-store --example load_genesis -- 75000000 /path/DBDIR
//! ```
//!
//! Prints the root, the time, slots/s and the store's size; then verifies the store streaming.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{address, Address, Bytes, B256};
use gigagas_data::chain::StorageFill;
use gigagas_store::{GenesisOptions, Store};
use std::{collections::BTreeMap, path::PathBuf, process::ExitCode, time::Instant};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(slots), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: load_genesis SLOTS DBDIR (DBDIR must not exist)");
        return ExitCode::from(2);
    };
    let Ok(slots) = slots.parse::<u64>() else {
        eprintln!("SLOTS: not a number: {slots}");
        return ExitCode::from(2);
    };
    match run(slots, PathBuf::from(dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(slots: u64, dir: PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let fills = [StorageFill {
        address: address!("0x00000000000000000000000000000000c0ffee00"),
        accounts: 1,
        slots,
        period: 4,
        nonce: 1,
        code: Bytes::from_static(&[0x60, 0x00, 0x54, 0x00]),
    }];
    let alloc: BTreeMap<Address, _> = BTreeMap::new();
    let estimate = gigagas_store::estimate_store_bytes(slots, 1);
    let free = gigagas_store::free_bytes(dir.parent().unwrap_or(&dir))?;
    eprintln!(
        "{slots} slots: store estimated at {:.2} GiB, {:.2} GiB free",
        estimate as f64 / (1u64 << 30) as f64,
        free as f64 / (1u64 << 30) as f64
    );
    if estimate > free {
        return Err("not enough free disk space".into());
    }
    let store: Store = Store::create(&dir)?;
    let t0 = Instant::now();
    let last = std::cell::Cell::new(Instant::now());
    let head = store.load_genesis(
        &alloc,
        &fills,
        0,
        B256::ZERO,
        &GenesisOptions::default(),
        &|done| {
            if last.get().elapsed().as_secs() >= 30 {
                last.set(Instant::now());
                eprintln!(
                    "  {done} slots, {:.0} s, {:.0} slots/s",
                    t0.elapsed().as_secs_f64(),
                    done as f64 / t0.elapsed().as_secs_f64()
                );
            }
        },
    )?;
    let load = t0.elapsed().as_secs_f64();
    println!(
        "load_genesis: {slots} slots, root {}, {load:.1} s ({:.0} slots/s), store {:.3} GiB ({:.1} B a slot)",
        head.state_root,
        slots as f64 / load,
        store.size_bytes()? as f64 / (1u64 << 30) as f64,
        store.size_bytes()? as f64 / slots as f64
    );
    let t1 = Instant::now();
    let v = store.verify_streaming(&|_| {})?;
    println!(
        "verify_streaming: root {} ({}), {} slots, {} nodes, {:.1} s",
        v.computed_root,
        if v.ok() {
            "= head, nodes equal"
        } else {
            "MISMATCH"
        },
        v.counts.slots,
        v.counts.nodes,
        t1.elapsed().as_secs_f64()
    );
    if !v.ok() {
        return Err(format!("verification failed: {:?}", v.node_difference).into());
    }
    Ok(())
}
