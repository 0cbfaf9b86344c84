//! Where a result came from: the build that measured it (version, commit, whether the
//! working tree had uncommitted changes, build profile, rustc) and the host (CPU model, cores,
//! memory, kernel). Recorded in every result file (`provenance`), shown by `report`, and
//! checked by `compare`: two results from different builds or machines are said to be so
//! before the verdict.
//!
//! The build facts are known only to the binary (its `build.rs` captures them), so the binary
//! registers them once at start ([`Build::register`]); a library user that does not reads
//! `unknown`. The host facts are read from `/proc` when the result is made.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// What `unknown` fields hold (no git, no `/proc`, or a binary that did not register).
pub const UNKNOWN: &str = "unknown";

static BUILD: OnceLock<Build> = OnceLock::new();

/// The build that produced a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// gigagas version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// Short commit hash of HEAD at build time, or `unknown` (no git, or not a checkout).
    pub commit: String,
    /// Whether tracked sources differed from that commit at build time; `None` when unknown.
    #[serde(default)]
    pub dirty: Option<bool>,
    /// Cargo profile (`release`, `profiling`, `debug`).
    pub profile: String,
    /// `rustc --version` of the compiler that built it.
    pub rustc: String,
}

impl Default for Build {
    fn default() -> Self {
        Self {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: UNKNOWN.to_owned(),
            dirty: None,
            profile: UNKNOWN.to_owned(),
            rustc: UNKNOWN.to_owned(),
        }
    }
}

impl Build {
    /// Records this process's build (called once by the binary, before any result is made);
    /// a second call is ignored.
    pub fn register(build: Build) {
        let _ = BUILD.set(build);
    }

    /// The registered build, or one with every field `unknown`.
    pub fn current() -> Build {
        BUILD.get().cloned().unwrap_or_default()
    }

    /// `0.1.0 (commit abc123+dirty, release, rustc 1.92.0)`.
    pub fn summary(&self) -> String {
        format!(
            "{} (commit {}{}, {} build, {})",
            self.version,
            self.commit,
            match self.dirty {
                Some(true) => "+dirty",
                Some(false) => "",
                None => "?",
            },
            self.profile,
            self.rustc
        )
    }
}

/// The machine that produced a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// CPU model (`/proc/cpuinfo` `model name`), or `unknown`.
    pub cpu_model: String,
    /// Logical cores available to the process.
    pub cores: usize,
    /// Physical memory in bytes (`/proc/meminfo` `MemTotal`), where readable.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// Kernel release (`/proc/sys/kernel/osrelease`), or `unknown`.
    pub kernel: String,
    /// Operating system and architecture (`linux x86_64`).
    pub os: String,
}

impl Host {
    /// Reads the host's facts now.
    pub fn capture() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Self {
            cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| UNKNOWN.to_owned()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: mem_total(&meminfo),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_owned())
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| UNKNOWN.to_owned()),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }

    /// `AMD EPYC 7B13, 2 cores, 23.5 GiB, kernel 6.1.0`.
    pub fn summary(&self) -> String {
        format!(
            "{}, {} cores, {}, kernel {} ({})",
            self.cpu_model,
            self.cores,
            self.memory_bytes.map_or_else(
                || "memory unknown".to_owned(),
                |b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
            ),
            self.kernel,
            self.os
        )
    }
}

/// The first `model name` (x86), `Model`, `Hardware` or `cpu model` line of `/proc/cpuinfo`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware", "cpu model", "uarch"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
            })
        })
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") | None => n.checked_mul(1024),
        _ => None,
    }
}

/// The build and host behind a result (JSON `provenance`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The build.
    pub build: Build,
    /// The machine.
    pub host: Host,
}

impl Provenance {
    /// This process's registered [`Build`] and the host read now.
    pub fn capture() -> Self {
        Self {
            build: Build::current(),
            host: Host::capture(),
        }
    }

    /// The two-line summary for terminals and reports.
    pub fn summary(&self) -> String {
        format!(
            "build: gigagas {}\nhost: {}",
            self.build.summary(),
            self.host.summary()
        )
    }

    /// What differs between the builds and machines of two results, one line each (commit,
    /// dirty tree, profile, rustc; CPU model, cores, memory, kernel). Empty when nothing
    /// recorded differs. `unknown` on either side counts as a difference of its own
    /// ("cannot tell").
    pub fn differences(&self, other: &Self) -> Vec<String> {
        let mut out = Vec::new();
        let mut field = |what: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{what}: A {a}, B {b}"));
            } else if a == UNKNOWN {
                out.push(format!("{what}: unknown on both sides (cannot tell)"));
            }
        };
        let (a, b) = (&self.build, &other.build);
        field("commit", a.commit.clone(), b.commit.clone());
        let dirty = |d: Option<bool>| match d {
            Some(true) => "uncommitted changes".to_owned(),
            Some(false) => "clean".to_owned(),
            None => UNKNOWN.to_owned(),
        };
        // A dirty tree on both sides may hold different changes: say so even when equal.
        if a.dirty == Some(true) && b.dirty == Some(true) {
            field(
                "working tree",
                "uncommitted changes".into(),
                "uncommitted changes (possibly different ones)".into(),
            );
        } else {
            field("working tree", dirty(a.dirty), dirty(b.dirty));
        }
        field("build profile", a.profile.clone(), b.profile.clone());
        field("rustc", a.rustc.clone(), b.rustc.clone());
        let (a, b) = (&self.host, &other.host);
        field("CPU model", a.cpu_model.clone(), b.cpu_model.clone());
        field("cores", a.cores.to_string(), b.cores.to_string());
        // Memory differs by a few MiB between boots of the same machine (reserved regions).
        let gib = |m: Option<u64>| {
            m.map_or_else(
                || UNKNOWN.to_owned(),
                |b| format!("{:.0} GiB", b as f64 / (1u64 << 30) as f64),
            )
        };
        field("memory", gib(a.memory_bytes), gib(b.memory_bytes));
        field("kernel", a.kernel.clone(), b.kernel.clone());
        out
    }
}

/// The provenance difference of two results for `compare`: `None` when both record the same
/// build and machine, else one paragraph naming what differs (results written before
/// provenance was recorded are said to be unknown).
pub fn mismatch(a: Option<&Provenance>, b: Option<&Provenance>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let diffs = a.differences(b);
            (!diffs.is_empty()).then(|| {
                format!(
                    "the two sides differ in build or machine ({}): part of any difference may come from that, not from the change measured",
                    diffs.join("; ")
                )
            })
        }
        (None, None) => Some(
            "neither side records its build or machine (results from before provenance was recorded): cannot tell whether they are comparable".to_owned(),
        ),
        (Some(_), None) => Some(
            "B does not record its build or machine (a result from before provenance was recorded): cannot tell whether the sides are comparable".to_owned(),
        ),
        (None, Some(_)) => Some(
            "A does not record its build or machine (a result from before provenance was recorded): cannot tell whether the sides are comparable".to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_and_meminfo_parse() {
        let cpu = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(cpu).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor : 0\n"), None);
        assert_eq!(
            mem_total("MemTotal:       24684096 kB\nMemFree: 1 kB\n"),
            Some(24_684_096 * 1024)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn differences_name_what_differs() {
        let a = Provenance {
            build: Build {
                version: "0.1.0".into(),
                commit: "abc".into(),
                dirty: Some(false),
                profile: "release".into(),
                rustc: "rustc 1.92.0".into(),
            },
            host: Host {
                cpu_model: "X".into(),
                cores: 2,
                memory_bytes: Some(8 << 30),
                kernel: "6.1".into(),
                os: "linux x86_64".into(),
            },
        };
        assert!(a.differences(&a).is_empty());
        assert_eq!(mismatch(Some(&a), Some(&a)), None);
        let mut b = a.clone();
        b.build.commit = "def".into();
        b.host.cores = 16;
        let d = a.differences(&b);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].contains("commit: A abc, B def"), "{d:?}");
        assert!(d[1].contains("cores: A 2, B 16"), "{d:?}");
        let m = mismatch(Some(&a), Some(&b)).unwrap();
        assert!(m.contains("commit") && m.contains("cores"), "{m}");
        assert!(mismatch(Some(&a), None)
            .unwrap()
            .contains("B does not record"));
        let mut dirty = a.clone();
        dirty.build.dirty = Some(true);
        assert_eq!(dirty.differences(&dirty).len(), 1);
        assert!(a.summary().contains("commit abc,"), "{}", a.summary());
        assert!(dirty.summary().contains("commit abc+dirty"));
    }

    #[test]
    fn an_unregistered_build_is_unknown_and_the_host_is_read() {
        let p = Provenance::capture();
        assert_eq!(p.build.version, env!("CARGO_PKG_VERSION"));
        assert!(p.host.cores >= 1);
        let json = serde_json::to_string(&p).unwrap();
        let back: Provenance = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }
}
