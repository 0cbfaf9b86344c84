//! Marks the tests that need what a build may not have (see `tools/test-probe.rs`): the
//! full-disk test mounts a small tmpfs, so it needs root (`CAP_SYS_ADMIN`).

#[path = "../../tools/test-probe.rs"]
mod probe;

fn main() {
    probe::can_mount_tmpfs("gigagas_can_mount");
}
