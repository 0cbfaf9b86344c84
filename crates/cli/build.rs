//! Marks the tests that need inputs outside the repository (see `tools/test-probe.rs`), and
//! records the commit and build profile for `gigagas --version`.

#[path = "../../tools/test-probe.rs"]
mod probe;

fn main() {
    probe::geth("gigagas_geth");
    version();
}

/// `GIGAGAS_COMMIT` (the short commit hash of HEAD, or `unknown` outside a git checkout),
/// `GIGAGAS_DIRTY` (`true` when the sources differ from it, `false`, or `unknown`),
/// `GIGAGAS_RUSTC` (`rustc --version`) and `GIGAGAS_PROFILE` (`release`, `debug`) for
/// `--version` and every result's provenance; rebuilt when HEAD moves or a source changes.
fn version() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo::rustc-env=GIGAGAS_COMMIT={commit}");
    // Uncommitted changes (tracked or untracked, not ignored) to what the binary is built
    // from: every crate's src/, build.rs and Cargo.toml, tools/, data/, the workspace's
    // Cargo.toml and Cargo.lock (not tests or docs, so editing those rebuilds nothing);
    // `unknown` without git. Re-checked whenever one of them changes.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources: Vec<String> = ["tools", "data", "Cargo.toml", "Cargo.lock"]
        .map(String::from)
        .to_vec();
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        let mut names: Vec<String> = crates
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            for part in ["src", "build.rs", "Cargo.toml"] {
                sources.push(format!("crates/{name}/{part}"));
            }
        }
    }
    let dirty = if commit == "unknown" {
        "unknown"
    } else {
        let mut status = vec!["-C", "../..", "status", "--porcelain", "--"];
        status.extend(sources.iter().map(String::as_str));
        // `git` drops empty output: Some(..) means something is listed.
        match std::process::Command::new("git").args(&status).output() {
            Ok(o) if o.status.success() => {
                if o.stdout.iter().any(|b| !b.is_ascii_whitespace()) {
                    "true"
                } else {
                    "false"
                }
            }
            _ => "unknown",
        }
    };
    println!("cargo::rustc-env=GIGAGAS_DIRTY={dirty}");
    for source in &sources {
        let path = root.join(source);
        if path.exists() {
            println!("cargo::rerun-if-changed={}", path.display());
        }
    }
    let rustc = std::env::var_os("RUSTC")
        .and_then(|rustc| {
            std::process::Command::new(rustc)
                .arg("--version")
                .output()
                .ok()
        })
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo::rustc-env=GIGAGAS_RUSTC={rustc}");
    // The profile's own name (`release`, `profiling`, `debug`): cargo's
    // PROFILE says only release or debug, OUT_DIR is target/<profile>/build/<pkg>/out.
    let profile = std::env::var_os("OUT_DIR")
        .and_then(|out| {
            std::path::Path::new(&out)
                .ancestors()
                .nth(3)
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .or_else(|| std::env::var("PROFILE").ok())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo::rustc-env=GIGAGAS_PROFILE={profile}");
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let git_dir = std::path::Path::new(&git_dir);
        println!("cargo::rerun-if-changed={}", git_dir.join("HEAD").display());
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!(
                "cargo::rerun-if-changed={}",
                git_dir.join(head_ref).display()
            );
        }
        println!(
            "cargo::rerun-if-changed={}",
            git_dir.join("packed-refs").display()
        );
    }
}
