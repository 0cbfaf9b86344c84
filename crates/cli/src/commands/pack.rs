//! `gigagas pack`: a compressed data set with a SHA-256 manifest.

use crate::common::note;
use crate::output::{Input, Output};
use anyhow::Result;
use clap::Args;
use gigagas_data::DataSource;
use std::path::PathBuf;

#[derive(Args)]
pub struct PackArgs {
    /// Source directory in the mainnet layout.
    #[arg(long)]
    data: PathBuf,
    /// Output archive (.tar.zst); never inside --data.
    #[arg(long)]
    out: PathBuf,
    /// Blocks to include, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    blocks: Option<Vec<u64>>,
    /// zstd level, 1 to 22.
    #[arg(long, default_value_t = 19, value_parser = clap::value_parser!(i32).range(1..=22))]
    level: i32,
}

pub fn exec(args: PackArgs) -> Result<()> {
    let out = Output::new(
        "--out",
        &args.out,
        &Input::all("--data", std::slice::from_ref(&args.data)),
    )?;
    let mut blocks = match args.blocks {
        Some(b) => b,
        None => DataSource::open(&args.data)?.block_numbers()?,
    };
    // A block named twice is packed once (and counted once below).
    let named = blocks.len();
    blocks.sort_unstable();
    blocks.dedup();
    if blocks.len() < named {
        note!(
            "--blocks: {} repeated block number(s) packed once",
            named - blocks.len()
        );
    }
    let mut size = 0;
    let bar = crate::common::spinner(&format!(
        "packing {} blocks (zstd level {})",
        blocks.len(),
        args.level
    ));
    let packed = out.write_via_path(|path| {
        size = gigagas_data::pack_sample(&args.data, &blocks, path, args.level)?;
        Ok(())
    });
    bar.finish_and_clear();
    packed?;
    note!(
        "packed {} blocks into {} ({:.2} MB)",
        blocks.len(),
        args.out.display(),
        size as f64 / 1e6
    );
    Ok(())
}
