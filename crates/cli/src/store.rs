//! The on-disk state store as the commands use it: creating one from a data set's genesis
//! or first pre-state (with a progress bar), the genesis record a store keeps, and the
//! `--state` flag. `db init` and `run --state disk` share it; the engine resumes a store
//! once it exists (`gigagas_engine::open`).

use crate::common::note;
use crate::output::{Input, OutputDir};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use gigagas_data::{BlockInput, Dataset};
use gigagas_store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::Path, time::Instant};

/// Where a command keeps the state (`--state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum StateArg {
    /// In memory (the node store is built from the first pre-state before timing).
    #[default]
    Memory,
    /// On disk, in an MDBX store: for `run` the one in --db (created from the first block's
    /// pre-state when absent, resumed from its head otherwise), for `bench` and
    /// `conformance` a temporary one; each block is written in one transaction.
    Disk,
}

/// Whether `path` names a symbolic link, also when written with a trailing `/` or `.` (with
/// which the lookup would resolve the link before looking at it).
fn is_symlink(path: &Path) -> bool {
    let bare: std::path::PathBuf = path.components().collect();
    std::fs::symlink_metadata(bare).is_ok_and(|m| m.file_type().is_symlink())
}

pub(crate) fn refuse_symlink(flag: &str, path: &Path) -> Result<()> {
    if is_symlink(path) {
        bail!(
            "{flag} {}: is a symbolic link; refusing to write a store through it",
            path.display()
        );
    }
    Ok(())
}

pub(crate) fn load(data: &Path) -> Result<Dataset> {
    let source = gigagas_data::DataSource::open(data)
        .with_context(|| format!("--data {}", data.display()))?;
    gigagas_data::load(&source).with_context(|| format!("--data {}", data.display()))
}

/// The first block, whose pre-state must be complete.
pub(crate) fn first_complete<'a>(dataset: &'a Dataset, data: &Path) -> Result<&'a BlockInput> {
    let Some(first) = dataset.blocks.first() else {
        bail!("--data {}: no blocks", data.display());
    };
    if !first.complete_state {
        bail!(
            "--data {}: block {} has a partial pre-state (the accounts its transactions touch, not the whole world state); a store needs a complete state such as a generated chain's genesis",
            data.display(),
            first.number()
        );
    }
    Ok(first)
}

/// A bar of `len` slots with slots/s and the time left.
pub(crate) fn slot_bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:>12} [{bar:40}] {human_pos}/{human_len} slots, {per_sec} {elapsed_precise} (eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_owned());
    bar
}

pub(crate) const GIB: f64 = (1u64 << 30) as f64;

/// Refuses a store that cannot fit: the estimate against the free space of the file system
/// that will hold `out` (statvfs), both printed.
pub(crate) fn check_disk(flag: &str, out: &Path, slots: u64, accounts: u64) -> Result<()> {
    let estimate = gigagas_store::estimate_store_bytes(slots, accounts);
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let free = gigagas_store::free_bytes(parent)
        .with_context(|| format!("{flag} {}: free space", out.display()))?;
    note!(
        "{flag} {}: {slots} slots, store estimated at {:.2} GiB ({} B a slot), {:.2} GiB free",
        out.display(),
        estimate as f64 / GIB,
        gigagas_store::STORE_BYTES_PER_SLOT,
        free as f64 / GIB
    );
    if estimate > free {
        bail!(
            "{flag} {}: a store of {slots} slots needs about {:.2} GiB ({} B a slot), but its file system has {:.2} GiB free; free space or generate the chain with fewer --slots",
            out.display(),
            estimate as f64 / GIB,
            gigagas_store::STORE_BYTES_PER_SLOT,
            free as f64 / GIB
        );
    }
    Ok(())
}

/// The genesis of the generated chain in `data`, streamed into a new store at `out` in
/// memory bounded independently of its slots (`Store::load_genesis`); the computed root must
/// give the chain's genesis hash. `None` when `data` is not a generated chain.
pub(crate) fn init_genesis(flag: &str, out: &Path, data: &Path) -> Result<Option<String>> {
    let source = gigagas_data::DataSource::open(data)
        .with_context(|| format!("--data {}", data.display()))?;
    if source
        .read_optional(gigagas_data::chain::CHAIN_META)
        .with_context(|| format!("--data {}", data.display()))?
        .is_none()
    {
        return Ok(None);
    }
    let (meta, spec) = gigagas_data::chain::read_meta(&source)
        .with_context(|| format!("--data {}", data.display()))?;
    let slots = gigagas_store::genesis_slots(&meta.alloc, &meta.storage_fill);
    let accounts =
        meta.alloc.len() as u64 + meta.storage_fill.iter().map(|f| f.accounts).sum::<u64>();
    refuse_symlink(flag, out)?;
    let target =
        OutputDir::new_without_force(flag, out, &Input::all("--data", [&data.to_owned()]))?;
    check_disk(flag, out, slots, accounts)?;
    let mut summary = String::new();
    target.write_with(|dir| {
        let t0 = Instant::now();
        let store: Store = Store::create(dir)?;
        let bar = slot_bar(slots, "genesis");
        // A bar draws only on a terminal; elsewhere (CI, a log file) a line every few
        // seconds says the work goes on.
        let beat = (!std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
            gigagas_data::progress::Heartbeat::start(
                format!("{flag} {}: streaming the genesis", out.display()),
                slots,
                "slots",
            )
        });
        let head = store.load_genesis(
            &meta.alloc,
            &meta.storage_fill,
            0,
            meta.genesis_hash,
            &gigagas_store::GenesisOptions::default(),
            &|done| {
                bar.set_position(done);
                if let Some(beat) = &beat {
                    beat.set(done);
                }
            },
        );
        drop(beat);
        bar.finish_and_clear();
        let head = head?;
        let header_root = match meta.stored_genesis_header().map_err(anyhow::Error::msg)? {
            Some(header) => header.state_root,
            None => {
                let header = gigagas_gen::builder::genesis_header(
                    spec,
                    meta.block_gas,
                    meta.seed,
                    head.state_root,
                );
                if header.hash_slow() == meta.genesis_hash {
                    head.state_root
                } else {
                    bail!(
                        "--data {}: the genesis state streamed from chain.json has root {}, whose genesis header does not hash to the chain's genesis_hash {}; no store written",
                        data.display(),
                        head.state_root,
                        meta.genesis_hash
                    );
                }
            }
        };
        if header_root != head.state_root {
            bail!(
                "--data {}: the genesis state streamed from chain.json has root {}, the genesis header says {}; no store written",
                data.display(),
                head.state_root,
                header_root
            );
        }
        if let Some(alloc_digest) = gigagas_data::chain::genesis_alloc_digest(&meta) {
            store.record_genesis_alloc(gigagas_data::chain::KnownGenesis {
                alloc_digest,
                state_root: head.state_root,
            })?;
        }
        let secs = t0.elapsed().as_secs_f64();
        summary = format!(
            "block {} ({}), state root {} = genesis header's, {accounts} accounts, {slots} slots, streamed in {secs:.2} s ({:.0} slots/s), {:.1} MiB",
            head.number,
            head.hash,
            head.state_root,
            slots as f64 / secs.max(1e-9),
            store.size_bytes()? as f64 / (1 << 20) as f64
        );
        Ok(())
    })?;
    Ok(Some(summary))
}

/// Creates the store at `out` (validated as an output directory) from `first`'s pre-state,
/// in a temporary directory beside it renamed into place at the end.
pub(crate) fn init_store(
    flag: &str,
    out: &Path,
    data: &Path,
    first: &BlockInput,
) -> Result<String> {
    refuse_symlink(flag, out)?;
    let target =
        OutputDir::new_without_force(flag, out, &Input::all("--data", [&data.to_owned()]))?;
    let mut summary = String::new();
    target.write_with(|dir| {
        let t0 = Instant::now();
        let store: Store = Store::create(dir)?;
        let head = store.load(
            &first.pre_state,
            first.number().saturating_sub(1),
            first.header.parent_hash,
        )?;
        if let Some(chain) = gigagas_store::ChainIdentity::of_block(first) {
            store.record_chain(chain)?;
        }
        let secs = t0.elapsed().as_secs_f64();
        summary = format!(
            "block {} ({}), state root {}, {} accounts, loaded in {:.2} s, {:.1} MiB",
            head.number,
            head.hash,
            head.state_root,
            first.pre_state.len(),
            secs,
            store.size_bytes()? as f64 / (1 << 20) as f64
        );
        Ok(())
    })?;
    Ok(summary)
}

/// The genesis allocation the store at `db` was built from, when it is `data`'s (same
/// [`gigagas_data::chain::genesis_alloc_digest`]): loading `data` then need not hash it again.
/// `None` when `db` is a symbolic link (the run refuses it), when either is absent or
/// unreadable, and when the record is missing or malformed: the load then hashes the
/// allocation as it would without a store.
pub fn known_genesis(db: &Path, data: &Path) -> Option<gigagas_data::chain::KnownGenesis> {
    if is_symlink(db) || !std::fs::read_dir(db).is_ok_and(|mut d| d.next().is_some()) {
        return None;
    }
    // A reader of one record: the run opens the store itself (and settles a trie journal or
    // lagging tries there, for the run that goes on from them).
    let store: Store = Store::open_unrecovered(db, true).ok()?;
    let known = store.genesis_alloc().ok()??;
    drop(store);
    let source = gigagas_data::DataSource::open(data).ok()?;
    let (meta, _) = gigagas_data::chain::read_meta(&source).ok()?;
    (gigagas_data::chain::genesis_alloc_digest(&meta) == Some(known.alloc_digest)).then_some(known)
}

/// Creates the store at `db` for a run when there is none there yet: from the genesis of the
/// generated chain in `data`, else from the first block's pre-state of `dataset`.
pub fn create_for_run(db: &Path, data: Option<&Path>, dataset: &Dataset) -> Result<()> {
    refuse_symlink("--db", db)?;
    if gigagas_engine::open::store_exists(db) {
        return Ok(());
    }
    let Some(data) = data else {
        bail!(
            "--db {}: no store there, and --state disk builds one only from --data (a generated chain)",
            db.display()
        );
    };
    let summary = match init_genesis("--db", db, data)? {
        Some(summary) => summary,
        None => init_store("--db", db, data, first_complete(dataset, data)?)?,
    };
    note!("{}: store created at {summary}", db.display());
    Ok(())
}
