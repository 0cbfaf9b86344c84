//! Shared helpers for tests on real data (each test binary uses a subset).
#![allow(dead_code)]

use gigagas_data::{DataSource, Dataset};

/// The bundled sample (always available).
pub fn embedded() -> Dataset {
    gigagas_data::load(&DataSource::embedded().expect("embedded sample unpacks"))
        .expect("embedded sample loads")
}

/// The full shared mainnet set (see [`gigagas_data::shared_data_dir`]).
pub fn shared_mainnet() -> Dataset {
    let dir = gigagas_data::shared_data_dir("mainnet");
    gigagas_data::load(&DataSource::open(&dir).expect("open shared data"))
        .expect("load shared data")
}
