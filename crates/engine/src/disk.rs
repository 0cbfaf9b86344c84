//! The on-disk state store (`gigagas-store`) as the pipeline's state: the incremental root's
//! node store, and the state every block executes against.

use crate::root::{DiskSnapshot, IncrementalState, PendingRoot};
use alloy_primitives::B256;
use gigagas_data::BlockInput;
use gigagas_store::{BlockRef, CodeCache, DiskState, Store};
use std::sync::Arc;

/// A store at the parent of the next block to run: [`IncrementalState::compute`] computes a
/// block's root from a read snapshot, [`IncrementalState::commit`] writes it in one
/// transaction, [`IncrementalState::snapshot`] gives execution its pre-state. Analysed code
/// is cached across blocks, except when cold.
#[derive(Debug)]
pub struct DiskRoot {
    /// `None` only while [`Self::evict`] reopens it (and after a failed reopen).
    store: Option<Store>,
    codes: Arc<CodeCache>,
    cold: bool,
}

impl DiskRoot {
    /// The pipeline's state in `store`.
    pub fn new(store: Store) -> Self {
        Self {
            store: Some(store),
            codes: Arc::default(),
            cold: false,
        }
    }

    /// The store (`None` after a failed reopen in cold mode).
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    fn open(&self) -> Result<&Store, String> {
        self.store
            .as_ref()
            .ok_or_else(|| "the state store could not be reopened after the last block".to_owned())
    }

    /// Cold mode: from now on, and between blocks (after each commit, outside the timed
    /// run), the store is closed (its memory map released), the OS page cache of its files is
    /// dropped ([`drop_file_cache`]), the code cache emptied and the store reopened, so that
    /// the next block reads its state from the device. Needs no privileges on Linux;
    /// elsewhere it is an error (there is no warm fallback under this name). The pipeline
    /// must run back to back.
    pub fn make_cold(self) -> Result<Self, String> {
        let mut this = Self { cold: true, ..self };
        this.evict()?;
        Ok(this)
    }

    fn evict(&mut self) -> Result<(), String> {
        let path = self.open()?.path().to_owned();
        // Closing the environment unmaps the file (every snapshot of it is gone by now: the
        // block's execution and root finished before its commit); mapped pages would stay
        // cached.
        drop(self.store.take());
        drop_file_cache(&path)?;
        let store = Store::open(&path).map_err(|e| format!("reopening {}: {e}", path.display()))?;
        self.store = Some(store);
        self.codes = Arc::default();
        Ok(())
    }
}

/// Drops the OS page cache of every regular file in `dir` (`posix_fadvise(DONTNEED)` after an
/// `fsync`; pages still mapped by a process stay cached, so close the store first). Linux
/// only.
pub fn drop_file_cache(dir: &std::path::Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if !path.is_file() {
            continue;
        }
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        file.sync_all()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        fadvise_dontneed(&file)
            .map_err(|e| format!("dropping the page cache of {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn fadvise_dontneed(file: &std::fs::File) -> Result<(), std::io::Error> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

#[cfg(not(target_os = "linux"))]
fn fadvise_dontneed(_: &std::fs::File) -> Result<(), std::io::Error> {
    Err(std::io::Error::other(
        "--cold drops the page cache with posix_fadvise, which gigagas does only on Linux",
    ))
}

/// Bytes this process has caused to be read from storage so far (`read_bytes` of
/// `/proc/self/io`: page-cache misses, memory-mapped reads included); `None` where unreadable.
pub fn io_read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

impl IncrementalState for DiskRoot {
    fn compute(
        &self,
        input: &BlockInput,
        changes: &gigagas_trie::ChangeSet,
    ) -> Result<PendingRoot, String> {
        let block = BlockRef {
            number: input.number(),
            hash: input.hash,
            parent_hash: input.header.parent_hash,
            expected_root: input.complete_state.then_some(input.header.state_root),
        };
        let store = self.open()?;
        store
            .compute_block(block, changes, gigagas_trie::Parallelism::DEFAULT)
            .map(PendingRoot::Disk)
            .map_err(|e| format!("store {}: {e}", store.path().display()))
    }

    fn commit(&mut self, input: &BlockInput, pending: PendingRoot) -> Result<B256, String> {
        let PendingRoot::Disk(pending) = pending else {
            return Err(format!(
                "block {}: an in-memory result given to the disk store",
                input.number()
            ));
        };
        let codes: Vec<_> = input
            .access_list
            .iter()
            .flatten()
            .flat_map(|a| a.code_changes.iter().map(|c| c.new_code.clone()))
            .filter(|c| !c.is_empty())
            .collect();
        let store = self.open()?;
        let root = store
            .commit_block(pending, &codes)
            .map(|head| head.state_root)
            .map_err(|e| format!("store {}: {e}", store.path().display()))?;
        Ok(root)
    }

    fn between_blocks(&mut self) -> Result<(), String> {
        if self.cold {
            self.evict()?;
        }
        Ok(())
    }

    fn needs_between_blocks(&self) -> bool {
        self.cold
    }

    fn snapshot(&self, readers: usize) -> Result<Option<DiskSnapshot>, String> {
        let store = self.open()?;
        let view = store
            .snapshot(readers)
            .map_err(|e| format!("store {}: {e}", store.path().display()))?;
        Ok(Some(DiskState::new(view, self.codes.clone())))
    }
}
