//! Shared helpers for tests on real data (each test binary uses a subset).
#![allow(dead_code)]

use gigagas_data::{DataSource, Dataset};
use std::path::PathBuf;

/// The bundled sample (always available).
pub fn embedded() -> Dataset {
    gigagas_data::load(&DataSource::embedded().expect("embedded sample unpacks"))
        .expect("embedded sample loads")
}

/// The full shared mainnet set: `$GIGAGAS_SHARED_DATA/mainnet` or `../shared/data/mainnet`
/// beside the repository. Absent: says so loudly, and fails when `CI` is set.
pub fn shared_mainnet() -> Option<Dataset> {
    let root = std::env::var_os("GIGAGAS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let dir = root.join("mainnet");
    if !dir.is_dir() {
        let msg = format!(
            "SHARED DATA ABSENT: {} not found (set GIGAGAS_SHARED_DATA); full-set test NOT RUN",
            dir.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("\n*** {msg} ***\n");
        return None;
    }
    Some(
        gigagas_data::load(&DataSource::open(&dir).expect("open shared data"))
            .expect("load shared data"),
    )
}
