//! Marks the tests that need inputs outside the repository (see `tools/test-probe.rs`), and
//! records the commit and build profile for `gigagas --version`.

#[path = "../../tools/test-probe.rs"]
mod probe;

fn main() {
    probe::geth("gigagas_geth");
    version();
}

/// `GIGAGAS_COMMIT` (the short commit hash of HEAD, or `unknown` outside a git checkout) and
/// `GIGAGAS_PROFILE` (`release`, `debug`) for `--version`; rebuilt when HEAD moves.
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
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
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
