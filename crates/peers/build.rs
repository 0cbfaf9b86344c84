//! Marks the tests that need inputs outside the repository (see `tools/test-probe.rs`).

#[path = "../../tools/test-probe.rs"]
mod probe;

fn main() {
    probe::geth_evm("gigagas_geth_evm");
    probe::geth("gigagas_geth");
    probe::geth_init("gigagas_geth_init");
}
