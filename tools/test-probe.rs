//! Build-time probe for tests that need inputs outside the repository (the shared data sets
//! and geth's `evm`), included by the `build.rs` of every crate that has such tests.
//!
//! Each probe declares a `cfg` and sets it when the input is there, so those tests carry
//! `#[cfg_attr(not(cfg), ignore = "needs …")]`: `cargo test` then counts them as *ignored*,
//! with the reason, instead of printing `ok` for a test that returned early. Under `CI` an
//! absent input is a build error: CI must run everything.
//!
//! When the input is absent the probe reruns only when one of the environment variables that
//! locate it changes; after adding the input later, `touch` the crate's `build.rs` (or run
//! `cargo clean -p CRATE`) so the probe looks again.

use std::path::PathBuf;

fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}

fn found(cfg: &str, path: &std::path::Path, what: &str) {
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    println!("cargo::rerun-if-env-changed=CI");
    if path.exists() {
        println!("cargo::rustc-cfg={cfg}");
        println!("cargo::rerun-if-changed={}", path.display());
    } else if in_ci() {
        panic!(
            "CI: {what} not found at {}: tests that need it cannot be skipped in CI",
            path.display()
        );
    }
    // Absent outside CI: no build warning. These build scripts also run for the main
    // command, where a warning about test inputs means nothing; `cargo test` prints each
    // ignored test's reason (`needs …`) where it matters.
}

/// Sets `cfg` when `$GIGAGAS_SHARED_DATA/<sub>` (default `../shared/data/<sub>` beside the
/// repository) exists.
#[allow(dead_code)]
pub fn shared_data(cfg: &str, sub: &str) {
    println!("cargo::rerun-if-env-changed=GIGAGAS_SHARED_DATA");
    let root = std::env::var_os("GIGAGAS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    found(cfg, &root.join(sub), &format!("shared data {sub}"));
}

/// Sets `cfg` when geth's pinned `evm` is installed: `$GIGAGAS_GETH_EVM`, else
/// `$GIGAGAS_TOOLS/geth-v1.17.10/evm` (default `~/.cache/gigagas/…`), as
/// `scripts/install-geth-evm.sh` puts it.
#[allow(dead_code)]
pub fn geth_evm(cfg: &str) {
    geth_tool(
        cfg,
        "GIGAGAS_GETH_EVM",
        "evm",
        "geth evm v1.17.10 (scripts/install-geth-evm.sh)",
    );
}

/// Sets `cfg` when geth's pinned `geth` (the dev node) is installed: `$GIGAGAS_GETH`, else
/// `$GIGAGAS_TOOLS/geth-v1.17.10/geth` (default `~/.cache/gigagas/…`), as
/// `scripts/install-geth.sh` puts it.
#[allow(dead_code)]
pub fn geth(cfg: &str) {
    geth_tool(
        cfg,
        "GIGAGAS_GETH",
        "geth",
        "geth v1.17.10 (scripts/install-geth.sh)",
    );
}

/// Sets `cfg` when `gigagas-geth-init` (`tools/geth-init`, built beside geth by
/// `scripts/install-geth.sh`) is installed: `$GIGAGAS_GETH_INIT`, else
/// `$GIGAGAS_TOOLS/geth-v1.17.10/gigagas-geth-init`.
#[allow(dead_code)]
pub fn geth_init(cfg: &str) {
    geth_tool(
        cfg,
        "GIGAGAS_GETH_INIT",
        "gigagas-geth-init",
        "gigagas-geth-init (scripts/install-geth.sh)",
    );
}

/// One binary of go-ethereum v1.17.10: `$override_var`, else
/// `$GIGAGAS_TOOLS/geth-v1.17.10/<binary>` (default `~/.cache/gigagas`).
#[allow(dead_code)]
fn geth_tool(cfg: &str, override_var: &str, binary: &str, what: &str) {
    for var in [override_var, "GIGAGAS_TOOLS", "HOME"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let path = std::env::var_os(override_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("GIGAGAS_TOOLS")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gigagas"))
                })
                .unwrap_or_else(|| PathBuf::from(".cache/gigagas"))
                .join("geth-v1.17.10")
                .join(binary)
        });
    found(cfg, &path, what);
}

/// Sets `cfg` when this build may mount a tmpfs (for the store's full-disk test): the
/// `mount` and `umount` programs exist and the process has `CAP_SYS_ADMIN` (bit 21 of
/// `CapEff` in `/proc/self/status`; root in a normal container has it). Nothing is
/// mounted here: the probe only reads, so building the main command never touches the
/// machine's mounts. The test itself fails (never passes silently) if the mount then fails.
#[allow(dead_code)]
pub fn can_mount_tmpfs(cfg: &str) {
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=USER");
    let has_program = |name: &str| {
        ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
            .iter()
            .any(|dir| std::path::Path::new(dir).join(name).exists())
    };
    let cap_sys_admin = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("CapEff:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 21) != 0);
    if cap_sys_admin && has_program("mount") && has_program("umount") {
        println!("cargo::rustc-cfg={cfg}");
    } else if in_ci() {
        panic!(
            "CI: cannot mount a tmpfs (needs mount, umount and CAP_SYS_ADMIN, i.e. root): \
             the store's full-disk test cannot be skipped in CI"
        );
    }
}
