//! Walks fixture paths and runs every test in them.

use crate::{
    chain::{run_test, Mode, TestResult},
    fixture::{parse_file, parse_test},
    summary::{Outcome, Status, Summary},
};
use gigagas_exec::WorkerPool;
use rayon::prelude::*;
use std::{
    path::{Path, PathBuf},
    time::Instant,
};

/// How to run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Paths to import each block through.
    pub mode: Mode,
    /// Worker threads of the parallel path.
    pub threads: usize,
    /// BAL mutants per kind to try on every valid block (0: none).
    pub mutations: usize,
    /// Also take every imported block's state transition through the on-disk store and
    /// check its incremental root ([`crate::disk`]).
    pub disk: bool,
}

/// Every `.json` file under `paths` (files as given, directories recursively), sorted.
pub fn collect_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut seen_dirs = std::collections::HashSet::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files, &mut seen_dirs)?;
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} does not exist", path.display()),
            ));
        }
    }
    // One file reached by several paths (symlinks) is one file.
    let mut unique = std::collections::BTreeMap::new();
    for file in files {
        let key = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        unique.entry(key).or_insert(file);
    }
    let mut files: Vec<PathBuf> = unique.into_values().collect();
    files.sort();
    if files.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no *.json test files under {paths:?}"),
        ));
    }
    Ok(files)
}

/// Collects `*.json` below `dir`; each directory is entered once by its canonical path, so a
/// symlink loop ends instead of counting the same files again and again.
fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, files, seen)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// Directory label of a fixture file: its parent path below `BlockchainTests/` (or the
/// parent directory's name).
fn dir_label(file: &Path) -> String {
    let parent = file.parent().unwrap_or(Path::new(""));
    let parts: Vec<String> = parent
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.iter().rposition(|p| p == "BlockchainTests") {
        Some(i) if i + 1 < parts.len() => parts[i + 1..].join("/"),
        _ => parts.last().cloned().unwrap_or_default(),
    }
}

/// Runs one file's tests.
fn run_file(file: &Path, options: RunOptions, pool: &WorkerPool) -> Vec<Outcome> {
    let dir = dir_label(file);
    let label = |test: &str, fork: &str, status, reason: String, detail: String| Outcome {
        file: file.display().to_string(),
        dir: dir.clone(),
        test: test.to_owned(),
        fork: fork.to_owned(),
        status,
        reason,
        detail,
        mutants: Default::default(),
        store_blocks: 0,
        exceptions_matched: 0,
        exceptions_waived: 0,
        exceptions_unmapped: Vec::new(),
    };
    let whole_file = |reason: &str, detail: String| {
        vec![label(
            "<file>",
            "?",
            Status::Failed,
            reason.to_owned(),
            detail,
        )]
    };
    // Regular files only, bounded: a FIFO or device named *.json is refused, not read.
    let text = match gigagas_data::read_bounded(file).and_then(|b| {
        String::from_utf8(b)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
    }) {
        Ok(t) => t,
        Err(e) => return whole_file("unreadable file", e.to_string()),
    };
    let tests = match parse_file(&text) {
        Ok(t) if t.is_empty() => {
            return whole_file("no tests", "the file holds no test (`{}`)".into())
        }
        Ok(t) => t,
        Err(e) => return whole_file("invalid JSON", e.to_string()),
    };
    tests
        .into_iter()
        .map(|(name, value)| {
            let fork = value
                .get("network")
                .and_then(|n| n.as_str())
                .unwrap_or("?")
                .to_owned();
            let test = match parse_test(value) {
                Ok(t) => t,
                Err(e) => {
                    return label(
                        &name,
                        &fork,
                        Status::Failed,
                        "invalid test".into(),
                        e.to_string(),
                    )
                }
            };
            // A panic inside the engine is a failure of this test, not of the run.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_test(
                    &test,
                    options.mode,
                    options.mutations,
                    options.disk,
                    pool,
                    file,
                )
            }))
            .unwrap_or_else(|panic| TestResult::Failed {
                category: "panic".into(),
                detail: panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default(),
            });
            match result {
                TestResult::Passed {
                    mutants,
                    store_blocks,
                    exceptions_matched,
                    exceptions_waived,
                    exceptions_unmapped,
                    ..
                } => Outcome {
                    exceptions_matched,
                    exceptions_waived,
                    exceptions_unmapped,
                    mutants: mutants
                        .into_iter()
                        .map(|(k, n)| (k.name().to_owned(), n))
                        .collect(),
                    store_blocks,
                    ..label(&name, &fork, Status::Passed, String::new(), String::new())
                },
                TestResult::Failed { category, detail } => {
                    label(&name, &fork, Status::Failed, category, detail)
                }
                TestResult::Skipped(why) => {
                    label(&name, &fork, Status::Skipped, why, String::new())
                }
            }
        })
        .collect()
}

/// Runs every test of `files` (files in parallel); `progress` is called once per file.
/// Unmapped expected exceptions are reported, not failed ([`run_files_with`]).
pub fn run_files(files: &[PathBuf], options: RunOptions, progress: &(dyn Fn() + Sync)) -> Summary {
    run_files_with(files, options, false, progress)
}

/// [`run_files`]; with `strict_exceptions`, a test with a rejection the exception mapping
/// cannot judge fails ([`crate::summary::UNMAPPED`]).
pub fn run_files_with(
    files: &[PathBuf],
    options: RunOptions,
    strict_exceptions: bool,
    progress: &(dyn Fn() + Sync),
) -> Summary {
    let start = Instant::now();
    let pool = WorkerPool::new(options.threads);
    // Files run on their own pool, with the workers' large stacks (the sequential path runs
    // on these threads).
    // Spawning threads fails only when the system refuses new threads (resource exhaustion,
    // before any input is read); no input can cause it. TODO(issue 29): a fallible
    // constructor once every caller (bench, engine, cli run) can propagate the error.
    #[allow(clippy::expect_used)]
    let files_pool = rayon::ThreadPoolBuilder::new()
        .stack_size(gigagas_exec::WORKER_STACK_BYTES)
        .thread_name(|i| format!("gigagas-conformance-{i}"))
        .build()
        .expect("thread pool");
    let outcomes: Vec<Outcome> = files_pool.install(|| {
        files
            .par_iter()
            .flat_map_iter(|file| {
                let out = run_file(file, options, &pool);
                progress();
                out
            })
            .collect()
    });
    let mode = serde_json::to_value(options.mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let outcomes = if strict_exceptions {
        Summary::strict_exceptions(outcomes)
    } else {
        outcomes
    };
    let mut summary = Summary::new(&mode, outcomes, start.elapsed().as_secs_f64());
    summary.exceptions.strict = strict_exceptions;
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_labels_are_relative_to_blockchain_tests() {
        assert_eq!(
            dir_label(Path::new(
                "/x/BlockchainTests/GeneralStateTests/stFoo/a.json"
            )),
            "GeneralStateTests/stFoo"
        );
        assert_eq!(dir_label(Path::new("fixtures/a.json")), "fixtures");
    }
}
