//! What cold reads that keep the index leave cached of a store's data file: the pass before
//! the first block, then the pass between blocks, each with the pages found cached after it
//! (`mincore`). The store must not be open elsewhere.
//!
//! ```sh
//! cargo run --release -p gigagas-store --example index_cache -- /path/DBDIR
//! ```

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: index_cache DBDIR");
        std::process::exit(2);
    };
    let file = gigagas_store::index_cache::data_file(std::path::Path::new(&dir));
    let report =
        |what: &str, r: Result<gigagas_store::index_cache::IndexPages, gigagas_store::Error>| {
            match r {
                Ok(p) => println!(
                    "{what}: {} pages, {} kept, {} found cached",
                    p.pages, p.kept, p.cached
                ),
                Err(e) => {
                    eprintln!("{what}: {e}");
                    std::process::exit(1);
                }
            }
        };
    let t = std::time::Instant::now();
    report(
        "scan",
        gigagas_store::index_cache::keep_index_only(&file, 4096),
    );
    println!("  ({:.1} s)", t.elapsed().as_secs_f64());
    report(
        "between blocks",
        gigagas_store::index_cache::drop_all_but_index(&file, 4096),
    );
    report(
        "again",
        gigagas_store::index_cache::drop_all_but_index(&file, 4096),
    );
}
