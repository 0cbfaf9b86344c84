//! Cold reads ([`DiskRoot::make_cold`]): between blocks the store is closed, its page cache
//! dropped and the store reopened, so the next block reads its state from the device; with
//! [`ColdIndex::Cached`] the data file's B-tree index stays cached (`gigagas_store::index_cache`).

use super::{drop_file_cache, poisoned, DiskRoot, SyncPolicy};
use gigagas_store::{index_cache, Store};
use std::path::Path;
use std::sync::Arc;

/// What cold reads leave cached of the data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColdIndex {
    /// Nothing: every page a block reads, the B-tree's branch pages included, comes from the
    /// device (a node's first block after a restart).
    #[default]
    Dropped,
    /// The B-tree's branch pages (a node whose state is larger than its memory: every lookup
    /// passes through them, so no cache evicts them); every data page comes from the device.
    Cached,
}

/// A pass over the data file's page cache that keeps its index ([`index_cache`]).
type IndexPass = fn(&Path, usize) -> Result<index_cache::IndexPages, gigagas_store::Error>;

impl DiskRoot {
    /// Cold mode: from now on, and between blocks (after each commit, outside the timed
    /// run), the store is closed (its memory map released), the OS page cache of its files is
    /// dropped ([`drop_file_cache`]), the code cache emptied and the store reopened, so that
    /// the next block reads its state from the device. With [`ColdIndex::Cached`] the data
    /// file's B-tree branch pages stay cached ([`index_cache`]): the whole file is read once
    /// now to cache them, and every other page is dropped between blocks. Needs no
    /// privileges on Linux; elsewhere it is an error (there is no warm fallback under this
    /// name). The pipeline must run back to back.
    pub fn make_cold(self, index: ColdIndex) -> Result<Self, String> {
        if self.sync != SyncPolicy::EveryBlock {
            return Err(format!(
                "cold reads with sync {}: cold mode closes the store after every block, which flushes it untimed; only every-block is measured honestly there",
                self.sync
            ));
        }
        let keep_index = index == ColdIndex::Cached;
        let this = Self {
            cold: true,
            keep_index,
            ..self
        };
        this.evict_with(keep_index.then_some(index_cache::keep_index_only as IndexPass))?;
        Ok(this)
    }

    pub(super) fn evict(&self) -> Result<(), String> {
        self.evict_with(
            self.keep_index
                .then_some(index_cache::drop_all_but_index as IndexPass),
        )
    }

    /// Closes the store, drops its files' page cache (the data file's through `data`, which
    /// keeps its index, when given) and reopens it.
    fn evict_with(&self, data: Option<IndexPass>) -> Result<(), String> {
        // A flush in flight holds the environment open.
        self.wait_flush(&mut *self.writes()?)?;
        let mut store = self.store.write().map_err(poisoned)?;
        let (path, page) = match store.as_ref() {
            Some(s) => (s.path().to_owned(), s.page_bytes()),
            None => {
                return Err("the state store could not be reopened after the last block".to_owned())
            }
        };
        // Closing the environment unmaps the file (every snapshot of it is gone by now: the
        // block's execution and root finished before its commit); mapped pages would stay
        // cached.
        drop(store.take());
        // The store is reopened whatever the drop did, so a failed drop is reported as
        // itself, not as a store that could not be reopened.
        let dropped = match data {
            None => drop_file_cache(&path),
            Some(pass) => {
                let file = index_cache::data_file(&path);
                crate::os::drop_file_cache_except(&path, &file).and_then(|()| {
                    let page = usize::try_from(page).unwrap_or(usize::MAX);
                    let left = pass(&file, page)
                        .map_err(|e| format!("cold reads keeping the index: {e}"))?;
                    // Never a silent warm run: anything cached beyond the index is refused.
                    if left.cached > left.kept {
                        return Err(format!(
                            "cold reads keeping the index: {} pages of {} stayed cached beside its {} index pages, so the next block would not read cold",
                            left.cached - left.kept,
                            file.display(),
                            left.kept
                        ));
                    }
                    Ok(())
                })
            }
        };
        // With a trie buffer the tries lag the flat state on purpose: reopened as they are
        // (their nodes are in the buffer), never rebuilt.
        let reopened = if self.trie_buffer > 0 {
            Store::reopen_buffered(&path)
        } else {
            Store::open(&path)
        }
        .map_err(|e| format!("reopening {}: {e}", path.display()))?;
        *store = Some(Arc::new(reopened));
        *self.codes.write().map_err(poisoned)? = Arc::default();
        dropped
    }
}
