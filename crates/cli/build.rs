//! Marks the tests that need inputs outside the repository (see `tools/test-probe.rs`).

#[path = "../../tools/test-probe.rs"]
mod probe;

fn main() {
    probe::geth("gigagas_geth");
}
