//! `cargo run --release -p gigagas-differential --example eip7928_suite [-- geth] [filter]`:
//! the EIP-7928 suite's table (the CLI's `gigagas differential --suite eip7928` is the same).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let with_geth = args.first().is_some_and(|a| a == "geth");
    let filter = args.iter().find(|a| *a != "geth").cloned();
    let evm = with_geth.then(|| gigagas_differential::geth::evm_binary(false).expect("evm"));
    let report = gigagas_differential::suite::run(evm.as_deref(), 2, filter.as_deref());
    print!("{}", gigagas_differential::suite::table(&report));
    if let Ok(path) = std::env::var("SUITE_JSON") {
        std::fs::write(path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    }
}
