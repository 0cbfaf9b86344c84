//! Where the full shared data sets live (for tests, benches and the conformance runner).

use std::path::PathBuf;

/// `$GIGAGAS_SHARED_DATA/<sub>`, else `../shared/data/<sub>` beside the repository.
///
/// Absent: prints a loud notice and returns `None` so a local test run says what it skipped;
/// when `CI` is set it panics instead, because CI must run the full sets.
pub fn shared_data_dir(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("GIGAGAS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let dir = root.join(sub);
    if dir.exists() {
        return Some(dir);
    }
    let msg = format!(
        "SHARED DATA ABSENT: {} not found (set GIGAGAS_SHARED_DATA); full-set test NOT RUN",
        dir.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("\n*** {msg} ***\n");
    None
}
