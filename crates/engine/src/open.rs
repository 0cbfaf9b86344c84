//! Opening a run's state from its validated spec: the store's resume policy (a store holds a
//! prefix of the data set's chain; the run continues after its head) and the state the
//! pipeline runs against, with the spec's durability, overlay and cold settings.
//!
//! Creating a store that does not exist yet is the front end's (it streams a genesis with a
//! progress display); everything after that is here, so every front end resumes alike.

use crate::disk::DiskRoot;
use crate::spec::ValidState;
use gigagas_data::Dataset;
use gigagas_store::{Head, Store};
use std::path::Path;

/// Where a run on disk starts.
pub enum Resume {
    /// The store already holds the data set's last block: nothing to run.
    Done {
        /// The store's head.
        head: Head,
    },
    /// The store, at the parent of the data set's (trimmed) first block.
    Run {
        /// The state the pipeline runs against.
        state: Box<DiskRoot>,
        /// Blocks of the data set the store already held, dropped from it.
        skipped: usize,
        /// The store's head.
        head: Head,
    },
}

/// Opens the store at `dir` for a run of `dataset` with the disk settings of `state`:
/// checks that the store belongs to the data set's chain, drops the blocks it already holds
/// from `dataset`, and requires its head to be the parent of the next block. Errors name the
/// store's directory and the blocks, never a front end's flags.
pub fn resume_store(state: &ValidState, dataset: &mut Dataset) -> Result<Resume, String> {
    let ValidState::Disk {
        dir,
        sync,
        overlay,
        cold,
        cold_index,
        trie_buffer,
        trie_journal,
        write_group,
        wal,
    } = state
    else {
        return Err("the run's state is in memory: there is no store to open".into());
    };
    let shown = dir.display();
    // The last run's trie journal is taken as this run's trie buffer where it has one (and
    // the journal fits it); otherwise opening writes it into the trie tables.
    let keep = *trie_buffer;
    let (store, journal): (Store, _) = Store::open_resuming(dir, sync.durable_commits(), keep)
        .map_err(|e| format!("store {shown}: {e}"))?;
    let head = store
        .head()
        .map_err(|e| format!("store {shown}: {e}"))?
        .ok_or_else(|| format!("store {shown}: the store holds no state"))?;
    let blocks: Vec<_> = dataset
        .blocks
        .iter()
        .map(|b| (b.number(), b.hash))
        .collect();
    let chain = dataset
        .blocks
        .first()
        .and_then(gigagas_store::ChainIdentity::of_block);
    store
        .check_chain(chain, &blocks)
        .map_err(|e| format!("store {shown}: {e}"))?;
    let done = dataset
        .blocks
        .iter()
        .take_while(|b| b.number() <= head.number)
        .count();
    if let Some(held) = done.checked_sub(1).map(|i| &dataset.blocks[i]) {
        if held.number() == head.number && held.hash != head.hash {
            return Err(format!(
                "store {shown}: the store holds block {} {}, but the data set's block {} is {}",
                head.number,
                head.hash,
                held.number(),
                held.hash
            ));
        }
    }
    dataset.blocks.drain(..done);
    let Some(next) = dataset.blocks.first() else {
        return Ok(Resume::Done { head });
    };
    if next.number() != head.number + 1 || next.header.parent_hash != head.hash {
        return Err(format!(
            "store {shown}: the store holds block {} {}, which is not the parent of the data set's next block {} (parent {})",
            head.number,
            head.hash,
            next.number(),
            next.header.parent_hash
        ));
    }
    let disk = DiskRoot::new(store)
        .with_sync(*sync)?
        .with_trie_buffer(*trie_buffer)?
        .with_trie_journal(*trie_journal)
        .with_write_group(*write_group)?;
    let disk = match journal {
        Some((buffer, stats)) => disk.with_resumed_buffer(buffer, stats)?,
        None => disk,
    };
    let disk = if *cold {
        disk.make_cold(*cold_index)?
    } else {
        disk.with_overlay(*overlay)
    }
    .with_wal(*wal)?;
    Ok(Resume::Run {
        state: Box::new(disk),
        skipped: done,
        head,
    })
}

/// Whether `dir` holds a store already (a directory with anything in it).
pub fn store_exists(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}
