//! Where the full shared data sets live (for tests, benches and the conformance runner).

use std::path::PathBuf;

/// `$GIGAGAS_SHARED_DATA/<sub>`, else `../shared/data/<sub>` beside the repository.
///
/// Tests that need it are marked ignored at build time when it is absent (each test crate's
/// `build.rs`, `tools/test-probe.rs`), so a test that runs expects it: absent now, it panics
/// naming the path.
pub fn shared_data_dir(sub: &str) -> PathBuf {
    let root = std::env::var_os("GIGAGAS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let dir = root.join(sub);
    assert!(
        dir.exists(),
        "shared data {} not found (set GIGAGAS_SHARED_DATA); it was present when the test was built",
        dir.display()
    );
    dir
}
