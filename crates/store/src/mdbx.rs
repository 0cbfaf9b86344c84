//! The MDBX backend (`signet-libmdbx`, which builds libmdbx from source with a C compiler).
//!
//! Reads: MDBX read transactions are per thread, and a `TxSync` serializes its users on one
//! mutex, so a read view opens one read transaction per reading thread on one MVCC snapshot
//! (`begin_ro_sync_multi`) and each rayon worker uses its own (by
//! `rayon::current_thread_index`): parallel root walks do not contend. Writes: one
//! `RwTxSync`, committed once per block. The environment is opened in MDBX's durable mode (a
//! commit that returned is on disk; a crash before it leaves the previous commit) by every
//! process; a run whose `--sync` batches flushes switches its own commits to SafeNoSync and
//! flushes with `Backend::sync` (a system crash then leaves the last flushed commit).

use crate::{
    kv::{Backend, Entry, KvRead, KvWrite, Table, Visit},
    Error,
};
use signet_libmdbx::{
    tx::aliases::{RoTxSync, RwTxSync},
    Database, DatabaseFlags, Environment, EnvironmentFlags, Geometry, MdbxError, ReadError,
    WriteFlags,
};
use std::{borrow::Cow, path::Path};

/// Largest size the map may grow to (address space only; the file grows in steps).
const MAX_MAP_BYTES: usize = 1 << 42;
/// Growth step of the data file.
const GROWTH_STEP: isize = 256 << 20;
/// Freed dirty pages MDBX keeps for the next write transaction instead of returning them to
/// the allocator (`MDBX_opt_dp_reserve_limit`; MDBX's default is 1,024). A hot-account block
/// dirties ~35k pages; with the default each commit freed them and the next block faulted
/// them back in (malloc, page zeroing: 12% of a warm 10M-slot run's CPU). At 65,536 pages
/// (256 MiB at this store's 4 KiB pages, the OS page size MDBX takes by default) the write
/// stage took 13–30% less time (docs/results/hot-account-10gb-2core.md, "The dirty-page
/// reserve").
const DIRTY_PAGE_RESERVE: u64 = 65_536;
/// Unsynced bytes after which MDBX makes a commit durable on its own (`MDBX_opt_sync_bytes`),
/// in the no-sync mode a batched `--sync` uses. Without a threshold MDBX answers a write
/// transaction that finds no reusable page (pages freed since the last durable commit are
/// not reusable) and a full data file by syncing *inside* that transaction instead of growing
/// the file: on the seed's block at 2M slots, 4 such syncs of 40–160 ms each in 6 blocks
/// (`strace -f -e fdatasync`), in the write stage, whatever `--sync every-N` asked. With one,
/// the file grows (one `GROWTH_STEP` at a time) until the policy's own sync, or this many
/// unsynced bytes, makes the freed pages reusable; 1 GiB is several blocks of the densest
/// writes measured (a hot-account block dirties ~140 MB), so the policy decides.
const AUTOSYNC_BYTES: usize = 1 << 30;

/// What an MDBX error means for a user of the store, in words: the named cases (disk full,
/// map full, corrupted, wrong version, read-only, permission) say what to do; an operating
/// system error code is shown as the system's message, never as a bare number.
pub fn describe(e: &MdbxError) -> String {
    match e {
        MdbxError::MapFull => format!(
            "the store is full: it reached the size of its memory map ({} GiB, or half the address-space limit `ulimit -v` sets; MDBX map full)",
            MAX_MAP_BYTES >> 30
        ),
        MdbxError::UnableExtendMapSize | MdbxError::TooLarge => {
            "the store cannot grow its memory map (address space or file size limit)".into()
        }
        MdbxError::TxnFull => {
            "one write transaction is too large for the store (MDBX transaction full)".into()
        }
        MdbxError::Corrupted | MdbxError::PageNotFound | MdbxError::Invalid | MdbxError::Panic => {
            format!(
                "the store is corrupted ({e}); rebuild it (`gigagas db init`) or restore a copy"
            )
        }
        MdbxError::BadSignature | MdbxError::Problem => format!(
            "the store is corrupted or was modified outside gigagas ({e}); rebuild it"
        ),
        MdbxError::VersionMismatch | MdbxError::Incompatible => format!(
            "the store was written by an incompatible MDBX version or with other settings ({e}); rebuild it with this gigagas"
        ),
        MdbxError::WannaRecovery => {
            "the store needs recovery but was opened read-only; open it writable once".into()
        }
        MdbxError::Access | MdbxError::Permission => {
            "permission denied: the store's files cannot be opened for writing".into()
        }
        MdbxError::Busy => "the store is locked by another writer".into(),
        MdbxError::ReadersFull => "too many readers on the store at once".into(),
        MdbxError::BotchedTransaction => {
            "a write transaction failed inside MDBX and was aborted; nothing of it was written"
                .into()
        }
        MdbxError::Other(code) => os_error(*code),
        other => other.to_string(),
    }
}

/// An operating system error code in words: disk full, read-only, ... (libmdbx passes the
/// system's `errno` through).
fn os_error(code: i32) -> String {
    let io = std::io::Error::from_raw_os_error(code);
    let what = match io.kind() {
        std::io::ErrorKind::StorageFull => {
            "disk full: no space left on the store's file system; free space and run again \
             (the store stays at its last whole block)"
        }
        std::io::ErrorKind::ReadOnlyFilesystem => "the store's file system is read-only",
        std::io::ErrorKind::QuotaExceeded => "disk quota exceeded on the store's file system",
        std::io::ErrorKind::PermissionDenied => "permission denied",
        std::io::ErrorKind::IsADirectory => "a directory stands where a store file should be",
        std::io::ErrorKind::NotADirectory => "a path component of the store is not a directory",
        std::io::ErrorKind::NotFound => "a store file is missing",
        _ => "",
    };
    if what.is_empty() {
        io.to_string()
    } else {
        format!("{what} ({io})")
    }
}

fn mdbx_err(op: &str, table: Option<Table>, e: MdbxError) -> Error {
    let e = describe(&e);
    Error::Backend(match table {
        Some(t) => format!("mdbx {op} on table {}: {e}", t.name()),
        None => format!("mdbx {op}: {e}"),
    })
}

fn read_err(op: &str, table: Table, e: ReadError) -> Error {
    match e {
        ReadError::Mdbx(m) => mdbx_err(op, Some(table), m),
        other => Error::Backend(format!("mdbx {op} on table {}: {other}", table.name())),
    }
}

/// An MDBX environment holding the store's tables.
#[derive(Debug)]
pub struct Mdbx {
    env: Environment,
    path: std::path::PathBuf,
}

/// One table's B-tree as MDBX counts it (`mdbx_dbi_stat`): what a cold lookup walks through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableStat {
    /// The table.
    pub table: Table,
    /// Height of its B-tree (branch levels plus the leaf level).
    pub depth: u32,
    /// Branch (internal) pages.
    pub branch_pages: usize,
    /// Leaf pages.
    pub leaf_pages: usize,
    /// Overflow pages (values larger than a page).
    pub overflow_pages: usize,
    /// Entries.
    pub entries: usize,
}

impl Mdbx {
    /// Every table's B-tree shape, from one read transaction.
    pub fn table_stats(&self) -> Result<Vec<TableStat>, Error> {
        let txns = self
            .env
            .begin_ro_sync_multi(1)
            .map_err(|e| mdbx_err("begin read", None, e))?;
        let txn = &txns[0];
        Table::ALL
            .iter()
            .map(|&table| {
                let db = txn
                    .open_db(Some(table.name()))
                    .map_err(|e| mdbx_err("open table", Some(table), e))?;
                let stat = txn
                    .db_stat(&db)
                    .map_err(|e| mdbx_err("table stat", Some(table), e))?;
                Ok(TableStat {
                    table,
                    depth: stat.depth(),
                    branch_pages: stat.branch_pages(),
                    leaf_pages: stat.leaf_pages(),
                    overflow_pages: stat.overflow_pages(),
                    entries: stat.entries(),
                })
            })
            .collect()
    }
}

/// A read snapshot: one read transaction per reading thread, all on one snapshot.
#[derive(Debug)]
pub struct MdbxRead {
    txns: Vec<RoTxSync>,
    dbs: Vec<Database>,
}

/// The write transaction.
#[derive(Debug)]
pub struct MdbxWrite {
    txn: RwTxSync,
    dbs: Vec<Database>,
}

/// A process-wide number per reading thread, so that threads reading one snapshot at once
/// (rayon's and the execution workers') mostly use different transactions: each transaction
/// serialises its readers behind a lock.
fn reader_slot() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local!(static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed));
    SLOT.with(|s| *s)
}

impl MdbxRead {
    fn txn(&self) -> &RoTxSync {
        let i = rayon::current_thread_index().map_or_else(reader_slot, |i| i + 1);
        &self.txns[i % self.txns.len()]
    }
}

macro_rules! reads {
    ($ty:ty) => {
        impl KvRead for $ty {
            fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
                let txn = self.txn();
                txn.get::<Vec<u8>>(self.dbs[table.index()].dbi(), key)
                    .map_err(|e| read_err("get", table, e))
            }

            fn seek(&self, table: Table, key: &[u8]) -> Result<Option<Entry>, Error> {
                let txn = self.txn();
                let mut cursor = txn
                    .cursor(self.dbs[table.index()])
                    .map_err(|e| mdbx_err("cursor", Some(table), e))?;
                cursor
                    .set_range::<Vec<u8>, Vec<u8>>(key)
                    .map_err(|e| read_err("seek", table, e))
            }

            fn scan(&self, table: Table, from: &[u8], f: Visit<'_>) -> Result<(), Error> {
                let txn = self.txn();
                let mut cursor = txn
                    .cursor(self.dbs[table.index()])
                    .map_err(|e| mdbx_err("cursor", Some(table), e))?;
                let mut item = cursor
                    .set_range::<Cow<'_, [u8]>, Cow<'_, [u8]>>(from)
                    .map_err(|e| read_err("seek", table, e))?;
                while let Some((k, v)) = item {
                    if !f(&k, &v)? {
                        break;
                    }
                    item = cursor
                        .next::<Cow<'_, [u8]>, Cow<'_, [u8]>>()
                        .map_err(|e| read_err("next", table, e))?;
                }
                Ok(())
            }
        }
    };
}

reads!(MdbxRead);
reads!(MdbxWrite);

impl MdbxWrite {
    fn txn(&self) -> &RwTxSync {
        &self.txn
    }
}

impl KvWrite for MdbxWrite {
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.txn
            .put(self.dbs[table.index()], key, value, WriteFlags::empty())
            .map_err(|e| mdbx_err("put", Some(table), e))
    }

    fn append(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.txn
            .append(self.dbs[table.index()], key, value)
            .map_err(|e| match e {
                MdbxError::KeyMismatch => Error::Backend(format!(
                    "mdbx append on table {}: key {} does not sort after the table's last key",
                    table.name(),
                    crate::codec::hex(key)
                )),
                e => mdbx_err("append", Some(table), e),
            })
    }

    fn delete(&self, table: Table, key: &[u8]) -> Result<(), Error> {
        self.txn
            .del(self.dbs[table.index()], key, None)
            .map(|_| ())
            .map_err(|e| mdbx_err("delete", Some(table), e))
    }

    fn delete_prefix(&self, table: Table, prefix: &[u8]) -> Result<(), Error> {
        let mut cursor = self
            .txn
            .cursor(self.dbs[table.index()])
            .map_err(|e| mdbx_err("cursor", Some(table), e))?;
        let mut item = cursor
            .set_range::<Vec<u8>, ()>(prefix)
            .map_err(|e| read_err("seek", table, e))?;
        while let Some((key, ())) = item {
            if !key.starts_with(prefix) {
                break;
            }
            cursor
                .del()
                .map_err(|e| mdbx_err("delete", Some(table), e))?;
            // After a delete the cursor stands on the next entry.
            item = cursor
                .get_current::<Vec<u8>, ()>()
                .map_err(|e| read_err("current", table, e))?;
        }
        Ok(())
    }

    /// Through one cursor: MDBX looks for each next key from the cursor's page first, so
    /// keys in order mostly skip the descent from the root.
    fn write_sorted(
        &self,
        table: Table,
        entries: crate::kv::SortedWrites<'_>,
    ) -> Result<(), Error> {
        let mut cursor = self
            .txn
            .cursor(self.dbs[table.index()])
            .map_err(|e| mdbx_err("cursor", Some(table), e))?;
        for (key, value) in entries {
            match value {
                Some(v) => cursor
                    .put(key, v, WriteFlags::empty())
                    .map_err(|e| mdbx_err("put", Some(table), e))?,
                None => {
                    if cursor
                        .set::<()>(key)
                        .map_err(|e| read_err("seek", table, e))?
                        .is_some()
                    {
                        cursor
                            .del()
                            .map_err(|e| mdbx_err("delete", Some(table), e))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn commit(self) -> Result<(), Error> {
        commit(self.txn).map_err(|e| mdbx_err("commit", None, e))
    }
}

/// Commits `txn`. signet-libmdbx aborts a transaction whose commit failed when its last handle
/// drops, and panics on that abort's `BadTxn` (MDBX has already ended the transaction): on a
/// full disk a failed commit became `called Result::unwrap() on an Err value: BadTxn`. A
/// second handle is kept and, on failure, forgotten, so that the abort never runs on the
/// ended transaction (a few bytes leak once, on the error path); on success it drops as a
/// committed transaction, which does nothing.
fn commit(txn: RwTxSync) -> Result<(), MdbxError> {
    let keep = txn.clone();
    match txn.commit() {
        Ok(()) => Ok(()),
        Err(e) => {
            std::mem::forget(keep);
            Err(e)
        }
    }
}

impl Mdbx {
    /// `madvise(advice)` on every mapping of this store's data file that this process has,
    /// as `/proc/self/maps` lists them.
    #[cfg(target_os = "linux")]
    fn advise(&self, advice: libc::c_int) -> Result<(), Error> {
        let file = self.path.join("mdbx.dat");
        let file = std::fs::canonicalize(&file).unwrap_or(file);
        let maps = "/proc/self/maps";
        let text = std::fs::read_to_string(maps).map_err(|source| Error::Io {
            path: maps.into(),
            source,
        })?;
        for line in text.lines() {
            // "start-end perms offset dev inode path"
            let mut fields = line.splitn(6, ' ');
            let (Some(range), Some(path)) = (fields.next(), fields.nth(4)) else {
                continue;
            };
            if Path::new(path.trim_start()) != file {
                continue;
            }
            let Some((start, end)) = range.split_once('-') else {
                continue;
            };
            let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            ) else {
                continue;
            };
            // SAFETY: [start, end) is a whole mapping of this process's own data file, as the
            // kernel lists it; the advice given (DONTNEED on a shared read-only file mapping,
            // SEQUENTIAL) changes no byte a reader sees.
            let rc = unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    end.saturating_sub(start),
                    advice,
                )
            };
            if rc != 0 {
                return Err(Error::Io {
                    path: file,
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        Ok(())
    }
}

/// The memory map's size limit for the store in `path`: [`MAX_MAP_BYTES`] of address space,
/// or half of what the process's address-space limit (`ulimit -v`, `RLIMIT_AS`) allows when
/// that is less (the rest is the process's own: heap, thread stacks, code). A limit that leaves
/// the map less than the data file plus one growth step is refused with the numbers.
fn map_bytes(path: &Path) -> Result<usize, Error> {
    let mut limit = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    if rc != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
        return Ok(MAX_MAP_BYTES);
    }
    let step = GROWTH_STEP as u64;
    let allowed = (limit.rlim_cur / 2) / step * step;
    let file = std::fs::metadata(path.join("mdbx.dat")).map_or(0, |m| m.len());
    let needed = file.div_ceil(step) * step + step;
    if allowed < needed {
        return Err(Error::Backend(format!(
            "{}: the store's memory map needs at least {:.2} GiB of address space (its data file is {:.2} GiB, plus one {} MiB growth step), and the address-space limit (ulimit -v) of {:.2} GiB leaves it {:.2} GiB (half the limit; the rest is the process's own): raise the limit to at least {:.2} GiB",
            path.display(),
            needed as f64 / GIB,
            file as f64 / GIB,
            step >> 20,
            limit.rlim_cur as f64 / GIB,
            allowed as f64 / GIB,
            (2 * needed) as f64 / GIB,
        )));
    }
    Ok((allowed as usize).min(MAX_MAP_BYTES))
}

const GIB: f64 = (1u64 << 30) as f64;

/// The error of an environment that did not open, in words: the reservation of `map_bytes` of
/// address space named when the system refused it.
fn open_err(e: MdbxError, map_bytes: usize) -> Error {
    match e {
        MdbxError::Other(11) | MdbxError::Busy => Error::Backend(
            "mdbx open: the store is already open in this process, or locked by another".into(),
        ),
        MdbxError::Other(code) if code == libc::ENOMEM => Error::Backend(format!(
            "mdbx open: reserving {:.0} GiB of address space for the store's memory map failed ({}); an address-space limit (ulimit -v) or overcommit policy refuses it",
            map_bytes as f64 / GIB,
            os_error(code)
        )),
        e => mdbx_err("open", None, e),
    }
}

/// MDBX's data-file stamp: the 56-bit magic and the data format version, as every meta page
/// carries it (`MDBX_MAGIC << 8 | MDBX_DATA_VERSION`, libmdbx 0.13).
const MDBX_STAMP: u64 = (0x0059_659D_BDEF_4C11 << 8) | 3;
/// Where a meta page's fields lie (libmdbx 0.13's `page_t` header of 20 bytes, then
/// `meta_t`, packed to 4 bytes): the stamp, the committing transaction id (written twice, at
/// the start and the end: they differ while the meta is being rewritten), the first
/// unallocated page (`geometry.first_unallocated`) and the page size. Native byte order, as
/// MDBX writes them.
const META_STAMP: usize = 20;
const META_TXNID_A: usize = 28;
const META_USED_PAGES: usize = 56;
const META_PAGE_SIZE: usize = 64;
const META_SIGN: usize = 188;
const META_TXNID_B: usize = 196;
const META_BYTES: usize = 204;

/// One meta page as the preflight reads it: its transaction id, the pages it uses, and
/// whether it is steady (flushed: its signature is above MDBX's `DATASIGN_WEAK`).
struct Meta {
    txnid: u64,
    used_pages: u64,
    steady: bool,
}

/// Checks `path`'s `mdbx.dat` before MDBX opens it: a writable MDBX open re-initialises a
/// file without a valid meta page as a new, empty database, and resizes (or rolls back) one
/// shorter than its pages, so a truncated or foreign file is refused here, unchanged. The
/// meta judged is the one MDBX would take: the newest valid one (right stamp, both copies of
/// its transaction id equal: not torn), or, when that one is weak (written, not flushed: a
/// system crash may have lost it) and does not fit, the newest steady one. The page size
/// comes from the first valid meta. The metas are read before the length, and a shortfall is
/// read again once, so a writer growing the file meanwhile is not taken for a truncation.
/// (MDBX's read-only open would check this too, but it maps the size the file recorded,
/// which an address-space limit may refuse; this reads a few hundred bytes.)
fn preflight(path: &Path) -> Result<(), Error> {
    let not_a_store = |why: String| Error::NotAStore {
        path: path.to_owned(),
        why,
    };
    let dat = path.join("mdbx.dat");
    let io = |source| Error::Io {
        path: dat.clone(),
        source,
    };
    let file = std::fs::File::open(&dat).map_err(io)?;
    let mut attempt = 0;
    loop {
        let metas = read_metas(&file).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let Some((page_bytes, metas)) = metas else {
            return Err(not_a_store(format!(
                "mdbx.dat ({len} bytes) holds no valid MDBX meta page (truncated, or not an MDBX file)"
            )));
        };
        let fits = |m: &Meta| m.used_pages.saturating_mul(page_bytes) <= len;
        let newest = metas.iter().max_by_key(|m| m.txnid);
        let judged = match newest {
            Some(m) if !m.steady && !fits(m) => metas
                .iter()
                .filter(|m| m.steady)
                .max_by_key(|m| m.txnid)
                .or(newest),
            other => other,
        };
        let Some(judged) = judged else {
            return Err(not_a_store("mdbx.dat holds no valid MDBX meta page".into()));
        };
        if fits(judged) {
            return Ok(());
        }
        attempt += 1;
        if attempt == 2 {
            return Err(not_a_store(format!(
                "mdbx.dat is {len} bytes, but its current meta page (transaction {}) uses {} pages of {page_bytes} bytes ({} bytes): the file was truncated",
                judged.txnid,
                judged.used_pages,
                judged.used_pages.saturating_mul(page_bytes)
            )));
        }
    }
}

/// The valid meta pages of an MDBX data file and its page size (that of the first valid
/// meta); `None` when none is valid.
fn read_metas(file: &std::fs::File) -> std::io::Result<Option<(u64, Vec<Meta>)>> {
    use std::os::unix::fs::FileExt;
    let read = |offset: u64| -> std::io::Result<Option<[u8; META_BYTES]>> {
        let mut page = [0u8; META_BYTES];
        match file.read_exact_at(&mut page, offset) {
            Ok(()) => Ok(Some(page)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    };
    let u32_at = |p: &[u8; META_BYTES], at: usize| {
        u32::from_ne_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
    };
    let u64_at = |p: &[u8; META_BYTES], at: usize| {
        u64::from(u32_at(p, at)) | (u64::from(u32_at(p, at + 4)) << 32)
    };
    let stamp_of = |p: &[u8; META_BYTES]| {
        // The stamp is one native 64-bit word; read as two halves in native order.
        if cfg!(target_endian = "little") {
            u64_at(p, META_STAMP)
        } else {
            (u64::from(u32_at(p, META_STAMP)) << 32) | u64::from(u32_at(p, META_STAMP + 4))
        }
    };
    let valid = |p: &[u8; META_BYTES]| {
        stamp_of(p) == MDBX_STAMP && u64_at(p, META_TXNID_A) == u64_at(p, META_TXNID_B)
    };
    // The page size is not known before a meta is read: meta 0 is at offset 0; metas 1 and 2
    // follow at the page size any valid meta names.
    let mut page_bytes = None;
    let mut candidates = vec![read(0)?];
    for size in (8..=16).map(|k| 1u64 << k) {
        if let Some(p) = read(size)?.filter(valid) {
            if u64::from(u32_at(&p, META_PAGE_SIZE)) == size {
                page_bytes = Some(size);
                break;
            }
        }
    }
    if let Some(Some(p)) = candidates.first().filter(|p| p.is_some_and(|p| valid(&p))) {
        page_bytes = page_bytes.or(Some(u64::from(u32_at(p, META_PAGE_SIZE))));
    }
    let Some(page_bytes) = page_bytes.filter(|b| b.is_power_of_two() && (256..=65_536).contains(b))
    else {
        return Ok(None);
    };
    candidates.push(read(page_bytes)?);
    candidates.push(read(2 * page_bytes)?);
    let metas: Vec<Meta> = candidates
        .into_iter()
        .flatten()
        .filter(|p| valid(p) && u64::from(u32_at(p, META_PAGE_SIZE)) == page_bytes)
        .map(|p| Meta {
            txnid: u64_at(&p, META_TXNID_A),
            used_pages: u64::from(u32_at(&p, META_USED_PAGES)),
            steady: u64_at(&p, META_SIGN) > 1,
        })
        .collect();
    Ok((!metas.is_empty()).then_some((page_bytes, metas)))
}

/// Read transactions open at once in one environment. A pipelined run at `T` threads holds
/// up to `5T + 37`: the snapshot a block executes against (`2T + 2` plus 16 prefetch
/// readers), the next block's, queued while it executes (the overlay), and the root's
/// (`T + 1`); at `--threads 1024` (the most `run` takes) that is 5,157. MDBX allows 32,767;
/// each slot is 64 bytes of the lock file.
const MAX_READERS: u64 = 8192;

impl Backend for Mdbx {
    type Read = MdbxRead;
    type Write = MdbxWrite;

    fn open(path: &Path, create: bool, durable: bool) -> Result<Self, Error> {
        let map_bytes = map_bytes(path)?;
        if !create {
            preflight(path)?;
        }
        let env = Environment::builder()
            .set_max_dbs(Table::ALL.len() + 1)
            .set_dp_reserve_limit(DIRTY_PAGE_RESERVE)
            .set_sync_bytes(AUTOSYNC_BYTES)
            .set_max_readers(MAX_READERS)
            // No OS read-ahead on the map: a trie walk reads scattered pages, and read-ahead
            // turned each cold page fault into a large sequential read (a cold 10M-slot block
            // read the whole 1.4 GiB file: docs/results/hot-account-2core.md).
            .set_flags(EnvironmentFlags {
                no_rdahead: true,
                ..EnvironmentFlags::default()
            })
            .set_geometry(Geometry {
                size: Some(0..map_bytes),
                growth_step: Some(GROWTH_STEP),
                ..Default::default()
            })
            .open(path)
            .map_err(|e| open_err(e, map_bytes))?;
        let txn = env
            .begin_rw_sync()
            .map_err(|e| mdbx_err("begin write", None, e))?;
        for table in Table::ALL {
            let opened = if create {
                txn.create_db(Some(table.name()), DatabaseFlags::empty())
            } else {
                txn.open_db(Some(table.name()))
            };
            opened.map_err(|e| match e {
                MdbxError::NotFound => Error::Backend(format!(
                    "table {} is missing: not a gigagas store",
                    table.name()
                )),
                e => mdbx_err("open table", Some(table), e),
            })?;
        }
        commit(txn).map_err(|e| mdbx_err("commit", None, e))?;
        if !durable {
            // The environment is opened durable, as every other process opens it (MDBX
            // refuses to open one environment with different sync modes at once: a `db
            // verify` beside a run), then this process's commits are made SafeNoSync: written,
            // not flushed, until `sync`; a system crash rolls back to the last synced commit,
            // a process crash keeps them all (MDBX checks the boot id).
            // SAFETY: the pointer is this open environment's, used only inside the closure;
            // SAFE_NOSYNC is one of the flags MDBX lets an open environment change.
            let rc = env.with_raw_env_ptr(|p| unsafe {
                signet_libmdbx::ffi::mdbx_env_set_flags(
                    p,
                    signet_libmdbx::ffi::MDBX_SAFE_NOSYNC,
                    true,
                )
            });
            if rc != 0 {
                return Err(Error::Backend(format!(
                    "mdbx: setting the no-sync mode failed with code {rc}"
                )));
            }
        }
        Ok(Self {
            env,
            path: path.to_owned(),
        })
    }

    fn sync_task(&self) -> Box<dyn FnOnce() -> Result<(), Error> + Send + 'static> {
        // The environment is reference-counted and thread-safe: the task keeps it open.
        let env = self.env.clone();
        Box::new(move || {
            env.sync(true)
                .map(|_| ())
                .map_err(|e| mdbx_err("sync", None, e))
        })
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` over the whole data file: the kernel queues
    /// the dirty pages the commits wrote (in the no-sync mode they sit in the page cache until
    /// the policy's `fdatasync`) and the task returns once they are queued, without waiting
    /// for the device: RocksDB's `bytes_per_sync`. A no-sync commit's pages are not rewritten
    /// before the next sync (MDBX reuses a freed page only once the commit that freed it is
    /// durable), so none is written twice.
    #[cfg(target_os = "linux")]
    fn writeback_task(&self) -> Option<Box<dyn FnOnce() -> Result<(), Error> + Send + 'static>> {
        let env = self.env.clone();
        let file = self.path.join("mdbx.dat");
        Some(Box::new(move || {
            let mut fd: libc::c_int = -1;
            // SAFETY: the pointer is this open environment's (the task holds it open);
            // `mdbx_env_get_fd` only writes the data file's descriptor.
            let rc = env
                .with_raw_env_ptr(|p| unsafe { signet_libmdbx::ffi::mdbx_env_get_fd(p, &mut fd) });
            if rc != 0 || fd < 0 {
                return Err(Error::Backend(format!(
                    "mdbx: the data file's descriptor is unavailable (code {rc})"
                )));
            }
            // SAFETY: a plain system call on a descriptor the environment holds open.
            if unsafe { libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE) } == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                // A file system that cannot start writes early: only a hint is lost, the
                // policy's sync still writes everything.
                Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::ESPIPE) => Ok(()),
                // The device failing (EIO), or no space or memory: the run is told now (the
                // sync would fail the same way).
                _ => Err(Error::Io {
                    path: file,
                    source: e,
                }),
            }
        }))
    }

    fn read(&self, threads: usize) -> Result<MdbxRead, Error> {
        let txns = self
            .env
            .begin_ro_sync_multi(threads.max(1))
            .map_err(|e| mdbx_err("begin read", None, e))?;
        let dbs = Table::ALL
            .iter()
            .map(|t| {
                txns[0]
                    .open_db(Some(t.name()))
                    .map_err(|e| mdbx_err("open table", Some(*t), e))
            })
            .collect::<Result<_, _>>()?;
        Ok(MdbxRead { txns, dbs })
    }

    fn write(&self) -> Result<MdbxWrite, Error> {
        let txn = self
            .env
            .begin_rw_sync()
            .map_err(|e| mdbx_err("begin write", None, e))?;
        let dbs = Table::ALL
            .iter()
            .map(|t| {
                txn.open_db(Some(t.name()))
                    .map_err(|e| mdbx_err("open table", Some(*t), e))
            })
            .collect::<Result<_, _>>()?;
        Ok(MdbxWrite { txn, dbs })
    }

    /// `madvise(MADV_DONTNEED)` on every mapping of the data file ([`Mdbx::advise`]). The map
    /// is shared and read-only (no `WRITEMAP`), so this only unmaps clean page-cache pages:
    /// any pointer into the map stays valid, and the next access faults the same bytes back in.
    #[cfg(target_os = "linux")]
    fn release_resident(&self) -> Result<(), Error> {
        self.advise(libc::MADV_DONTNEED)
    }

    /// `madvise(MADV_SEQUENTIAL)` on the data file's mappings ([`Mdbx::advise`]), replacing
    /// the `MADV_RANDOM` the store is opened with (`no_rdahead`): the kernel reads ahead
    /// of each fault.
    #[cfg(target_os = "linux")]
    fn advise_sequential(&self) -> Result<(), Error> {
        self.advise(libc::MADV_SEQUENTIAL)
    }

    fn pages_written(&self) -> Option<u64> {
        let ops = self.env.info().ok()?.page_ops();
        Some(ops.newly.saturating_add(ops.cow))
    }

    fn page_bytes(&self) -> u64 {
        self.env.stat().map_or(4096, |s| u64::from(s.page_size()))
    }

    fn size_bytes(&self) -> Result<u64, Error> {
        let file = self.path.join("mdbx.dat");
        // Allocated blocks: the file is sparse up to its growth step.
        std::fs::metadata(&file)
            .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
            .map_err(|e| Error::Io {
                path: file,
                source: e,
            })
    }
}
