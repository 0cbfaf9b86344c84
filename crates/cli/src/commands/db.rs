//! `gigagas db init|verify` and `run --state disk`: the on-disk state store (`gigagas-store`).

use crate::common::out;
use crate::store::{first_complete, init_genesis, init_store, load, refuse_symlink};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use gigagas_store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use std::{
    path::{Path, PathBuf},
    time::Instant,
};

/// `gigagas db ...`.
#[derive(Args)]
pub struct DbArgs {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Subcommand)]
enum DbCommand {
    /// Build a store from a complete state: a generated chain's genesis, streamed from
    /// chain.json in memory bounded independently of its slots (storage_fill slots generated
    /// in hashed-key order, tries built on the fly; the free disk space is checked first), or
    /// the pre-state of the first block of other complete data sets; the head is the first
    /// block's parent.
    Init(InitArgs),
    /// Recompute the state root and every branch node from scratch from the store's account
    /// and storage tables, streaming in key order (memory bounded independently of the
    /// store's size), and compare them with the head record and the stored nodes.
    Verify(VerifyArgs),
}

#[derive(Args)]
struct InitArgs {
    /// A data set with complete pre-states (a generated chain, `gigagas gen --out DIR`).
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// The new store's directory (must not exist or be empty; written beside it and renamed
    /// into place when complete).
    #[arg(long, value_name = "DBDIR")]
    out: PathBuf,
}

#[derive(Args)]
struct VerifyArgs {
    /// The store's directory.
    #[arg(value_name = "DBDIR")]
    db: PathBuf,
}

/// Runs `gigagas db ...`.
pub fn exec(args: DbArgs) -> Result<()> {
    match args.command {
        DbCommand::Init(a) => cmd_init(&a),
        DbCommand::Verify(a) => cmd_verify(&a.db),
    }
}

fn cmd_init(args: &InitArgs) -> Result<()> {
    refuse_symlink("--out", &args.out)?;
    if std::fs::read_dir(&args.out).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "--out {}: directory is not empty; `db init` never replaces a directory: remove it or choose a new one",
            args.out.display()
        );
    }
    if let Some(summary) = init_genesis("--out", &args.out, &args.data)? {
        out!("{}: store created at {summary}", args.out.display());
        return Ok(());
    }
    let dataset = load(&args.data)?;
    let first = first_complete(&dataset, &args.data)?;
    let summary = init_store("--out", &args.out, &args.data, first)?;
    out!("{}: store created at {summary}", args.out.display());
    Ok(())
}

fn cmd_verify(db: &Path) -> Result<()> {
    let t0 = Instant::now();
    let store: Store = Store::open(db)?;
    let bar = ProgressBar::new_spinner();
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>12} {human_pos} slots, {per_sec} {elapsed_precise}")
    {
        bar.set_style(style);
    }
    bar.set_message("verify");
    let v = store.verify_streaming(&|done| bar.set_position(done));
    bar.finish_and_clear();
    let v = v.with_context(|| format!("{}: verifying", db.display()))?;
    if v.computed_root != v.head.state_root {
        bail!(
            "{}: state root mismatch at block {}: the head records {}, recomputed from scratch {}",
            db.display(),
            v.head.number,
            v.head.state_root,
            v.computed_root
        );
    }
    if let Some(d) = &v.node_difference {
        bail!(
            "{}: block {}: root {} matches, but {d}",
            db.display(),
            v.head.number,
            v.head.state_root
        );
    }
    out!(
        "{}: block {} ({}), state root {} = from scratch; {} accounts, {} slots, {} branch nodes = from scratch, {} codes; {:.2} s",
        db.display(),
        v.head.number,
        v.head.hash,
        v.head.state_root,
        v.counts.accounts,
        v.counts.slots,
        v.counts.nodes,
        v.counts.codes,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
