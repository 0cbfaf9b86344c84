//! Where the peer binaries are: the gigagas tool cache (`$GIGAGAS_TOOLS`, default
//! `~/.cache/gigagas`), as the install scripts put them, or an explicit environment variable.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

/// How long `BIN --version` may take (the start-floor measurement).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// go-ethereum release the peers are pinned to.
pub const GETH_VERSION: &str = "1.17.10";
/// revme release the peers are pinned to.
pub const REVME_VERSION: &str = "43.0.3";

/// The tool cache: `$GIGAGAS_TOOLS`, else `~/.cache/gigagas`.
pub fn tool_dir() -> PathBuf {
    std::env::var_os("GIGAGAS_TOOLS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gigagas")))
        .unwrap_or_else(|| PathBuf::from(".cache/gigagas"))
}

fn from_env_or(var: &str, default: PathBuf) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or(default)
}

/// geth's `evm` (`$GIGAGAS_GETH_EVM`, else `<tools>/geth-v1.17.10/evm`,
/// `scripts/install-geth-evm.sh`).
pub fn evm_path() -> PathBuf {
    from_env_or(
        "GIGAGAS_GETH_EVM",
        tool_dir().join(format!("geth-v{GETH_VERSION}/evm")),
    )
}

/// `geth` (`$GIGAGAS_GETH`, else `<tools>/geth-v1.17.10/geth`, `scripts/install-geth.sh`).
pub fn geth_path() -> PathBuf {
    from_env_or(
        "GIGAGAS_GETH",
        tool_dir().join(format!("geth-v{GETH_VERSION}/geth")),
    )
}

/// `gigagas-geth-init` (`$GIGAGAS_GETH_INIT`, else `<tools>/geth-v1.17.10/gigagas-geth-init`,
/// built from `tools/geth-init` by `scripts/install-geth.sh`): a genesis written into a geth
/// data directory in bounded memory, for allocations `geth init` cannot hold.
pub fn geth_init_path() -> PathBuf {
    from_env_or(
        "GIGAGAS_GETH_INIT",
        tool_dir().join(format!("geth-v{GETH_VERSION}/gigagas-geth-init")),
    )
}

/// `revme` (`$GIGAGAS_REVME`, else `<tools>/revme-43.0.3/bin/revme`,
/// `scripts/install-revme.sh`).
pub fn revme_path() -> PathBuf {
    from_env_or(
        "GIGAGAS_REVME",
        tool_dir().join(format!("revme-{REVME_VERSION}/bin/revme")),
    )
}

/// The arguments that make `bin` print something and exit 0 without work: `--version`, or
/// `--help` for `revme` (which has no `--version`).
pub fn idle_args(bin: &Path) -> &'static [&'static str] {
    if bin.file_name().is_some_and(|n| n == "revme") {
        &["--help"]
    } else {
        &["--version"]
    }
}

/// The version of `bin`: the first non-empty line of `BIN --version`; for `revme` (no
/// `--version`) the version cargo recorded in the install root's `.crates.toml`. `None` when
/// the binary is missing or does not answer.
pub fn version(bin: &Path) -> Option<String> {
    if !bin.is_file() {
        return None;
    }
    let answer = |arg: &str| {
        gigagas_guard::child::run(
            Command::new(bin).arg(arg),
            "the version of a peer",
            &gigagas_guard::child::Limits::new(VERSION_TIMEOUT, "the built-in version-query limit"),
        )
        .ok()
        .filter(|done| done.status.success())
    };
    if bin.file_name().is_some_and(|n| n == "revme") {
        answer("--help")?;
        let record = bin.parent()?.parent()?.join(".crates.toml");
        let recorded = std::fs::read_to_string(record).ok().and_then(|text| {
            text.split('"')
                .find(|s| s.starts_with("revme "))
                .and_then(|s| s.split_whitespace().nth(1))
                .map(|v| format!("revme {v}"))
        });
        return Some(recorded.unwrap_or_else(|| "revme (version not recorded)".into()));
    }
    let text = answer("--version")?.text();
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| gigagas_guard::text::printable(l).into_owned())
}
