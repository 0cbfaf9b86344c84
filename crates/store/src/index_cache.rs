//! The OS page cache of a store's data file, page by page: cold reads that keep the B-tree's
//! index cached and drop everything else.
//!
//! A node whose state is larger than its memory still holds its B-tree's branch pages: every
//! lookup passes through them, so no cache evicts them (they are 1.6% of a 75M-slot store's
//! 14.5 GiB). Dropping the whole page cache before a block (plain cold reads) makes each
//! lookup also read the branch pages on its path: at 75M slots, 1.42 pages per item read
//! instead of ~1. These functions drop every page but the branch and meta pages.
//!
//! A page's kind is read from MDBX's page header (libmdbx 0.13, `page_t`: `flags` u16 at byte
//! 10, the large-value page count u32 at byte 12, `pgno` u32 at byte 16); a page whose `pgno`
//! is not its own number is taken for data, and the continuation pages of a large value
//! (which have no header) are skipped when its first page is seen. What can stay cached
//! beyond the live index: branch pages freed by earlier commits (their old headers stay until
//! the page is reused), never read by a block.

use crate::Error;
use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::{io::Read, os::fd::AsRawFd};

const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_LARGE: u16 = 0x04;
const P_META: u16 = 0x08;
const KIND: u16 = P_BRANCH | P_LEAF | P_LARGE | P_META;

/// The read unit of [`keep_index_only`]'s pass: 8 MiB.
#[cfg(target_os = "linux")]
const SCAN_CHUNK: usize = 8 << 20;

/// What a pass over a data file's cache did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexPages {
    /// Pages of the file.
    pub pages: u64,
    /// Branch and meta pages left cached.
    pub kept: u64,
    /// Pages `mincore` finds cached after the pass: `kept`, unless the kernel kept more
    /// (then the reads that follow are not all cold).
    pub cached: u64,
}

/// Whether the page numbered `pgno` whose first bytes are `header` is one an index keeps
/// cached: a branch page (or one of the meta pages every transaction reads).
pub fn is_index_page(header: &[u8], pgno: u64) -> bool {
    let (Some(flags), Some(own)) = (header.get(10..12), header.get(16..20)) else {
        return false;
    };
    let flags = u16::from_le_bytes([flags[0], flags[1]]) & KIND;
    let own = u32::from_le_bytes([own[0], own[1], own[2], own[3]]);
    u64::from(own) == pgno && (flags == P_BRANCH || flags == P_META)
}

/// The pages after `pgno` that belong to the large value whose first page `header` is (0 for
/// any other page).
fn large_continuation(header: &[u8], pgno: u64) -> u64 {
    let (Some(flags), Some(count), Some(own)) =
        (header.get(10..12), header.get(12..16), header.get(16..20))
    else {
        return 0;
    };
    let flags = u16::from_le_bytes([flags[0], flags[1]]) & KIND;
    let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]);
    let own = u32::from_le_bytes([own[0], own[1], own[2], own[3]]);
    if flags == P_LARGE && u64::from(own) == pgno {
        u64::from(count.saturating_sub(1))
    } else {
        0
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// `page` if it is a power of two no smaller than the OS page: the page cache is dropped per
/// OS page, so a smaller store page could not be dropped without its neighbours.
#[cfg(target_os = "linux")]
fn page_size(page: usize, path: &Path) -> Result<usize, Error> {
    let os = os_page();
    if page < 512 || !page.is_power_of_two() || page < os {
        return Err(io(path)(std::io::Error::other(format!(
            "page size {page}: not a power of two of at least 512 bytes and of this system's {os}-byte page"
        ))));
    }
    Ok(page)
}

#[cfg(target_os = "linux")]
fn os_page() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

/// Drops the whole file from the page cache, then reads `pgnos` (ascending) back in, page by
/// page with read-ahead off: a partial range cannot drop a large folio (the page cache holds
/// a sequential read and buffered writes in folios of many pages), so the index is re-read
/// into single-page folios instead of the rest being dropped around it.
#[cfg(target_os = "linux")]
fn drop_then_reread(
    file: &std::fs::File,
    path: &Path,
    page: usize,
    pgnos: &[u64],
) -> Result<(), Error> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let fd = file.as_raw_fd();
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io(path)(std::io::Error::from_raw_os_error(rc)));
    }
    // SAFETY: as above; the advice only turns read-ahead off for this descriptor.
    unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM) };
    pgnos.par_chunks(4096).try_for_each(|chunk| {
        let mut buf = vec![0u8; page];
        chunk.iter().try_for_each(|&pgno| {
            file.read_exact_at(&mut buf, pgno * page as u64)
                .map_err(io(path))
        })
    })
}

/// Reads the data file `path` once, front to back, to find its index pages
/// ([`is_index_page`]), then leaves only those in the page cache ([`drop_then_reread`]).
/// Memory: one 8 MiB buffer and 8 bytes per index page; device reads: the whole file once,
/// then the index pages (before a cold run, untimed). `cached` is what `mincore` finds cached
/// afterwards: the index pages only, unless the kernel kept more. The file must not be
/// mapped by this process (close the store first). Linux only; elsewhere an error.
#[cfg(target_os = "linux")]
pub fn keep_index_only(path: &Path, page: usize) -> Result<IndexPages, Error> {
    let page = page_size(page, path)?;
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    file.sync_all().map_err(io(path))?;
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
    let mut buf = vec![0u8; SCAN_CHUNK];
    let mut out = IndexPages::default();
    let mut index = Vec::new();
    let mut skip = 0u64;
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            match file.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io(path)(e)),
            }
        }
        for chunk in buf[..filled].chunks(page) {
            let pgno = out.pages;
            out.pages += 1;
            if skip > 0 {
                skip -= 1;
                continue;
            }
            skip = large_continuation(chunk, pgno);
            if chunk.len() == page && is_index_page(chunk, pgno) {
                index.push(pgno);
            }
        }
        if filled < buf.len() {
            break;
        }
    }
    drop_then_reread(&file, path, page, &index)?;
    out.kept = index.len() as u64;
    out.cached = cached_index_pages(&file, path, page, out.pages)?.1;
    Ok(out)
}

/// Leaves only the index pages ([`is_index_page`]) of the data file `path` that are cached
/// now in the page cache: which pages are cached comes from `mincore` over a temporary
/// read-only map, only those pages' headers are looked at, then the whole file is dropped
/// and those index pages read back ([`drop_then_reread`]). `cached` is what is cached
/// afterwards. The file must not be mapped elsewhere in this process (close the store
/// first): mapped pages stay cached. Linux only; elsewhere an error.
#[cfg(target_os = "linux")]
pub fn drop_all_but_index(path: &Path, page: usize) -> Result<IndexPages, Error> {
    let page = page_size(page, path)?;
    let file = std::fs::File::open(path).map_err(io(path))?;
    file.sync_all().map_err(io(path))?;
    let len = file.metadata().map_err(io(path))?.len();
    let pages = len / page as u64;
    let mut out = IndexPages {
        pages,
        ..IndexPages::default()
    };
    if pages == 0 {
        return Ok(out);
    }
    let (index, _) = cached_index_pages(&file, path, page, pages)?;
    drop_then_reread(&file, path, page, &index)?;
    out.kept = index.len() as u64;
    out.cached = cached_index_pages(&file, path, page, pages)?.1;
    Ok(out)
}

/// The numbers of the index pages of `file` that are in the page cache, ascending, and how
/// many of its pages are in the page cache.
#[cfg(target_os = "linux")]
fn cached_index_pages(
    file: &std::fs::File,
    path: &Path,
    page: usize,
    pages: u64,
) -> Result<(Vec<u64>, u64), Error> {
    let bytes = usize::try_from(pages * page as u64).map_err(|_| {
        io(path)(std::io::Error::other(
            "the data file is larger than the address space",
        ))
    })?;
    // SAFETY: a shared read-only map of `bytes` (whole pages inside the file) of an open
    // descriptor; it is only read, at page headers, and unmapped below.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io(path)(std::io::Error::last_os_error()));
    }
    let unmap = |map: *mut libc::c_void| {
        // SAFETY: the map made above, of `bytes`; nothing refers to it after this.
        unsafe { libc::munmap(map, bytes) };
    };
    // A header read that faults after all (its page evicted since mincore) reads that page
    // alone, not a read-ahead window. SAFETY: advice on the map made above.
    unsafe { libc::madvise(map, bytes, libc::MADV_RANDOM) };
    let os_page = os_page();
    let mut resident = vec![0u8; bytes.div_ceil(os_page)];
    // SAFETY: `map` is page-aligned, `bytes` long, and `resident` has one byte per OS page.
    if unsafe { libc::mincore(map, bytes, resident.as_mut_ptr()) } != 0 {
        let e = std::io::Error::last_os_error();
        unmap(map);
        return Err(io(path)(e));
    }
    let mut kept = Vec::new();
    let mut all = 0;
    let mut skip = 0u64;
    for pgno in 0..pages {
        let first = pgno as usize * page;
        if resident.get(first / os_page).is_none_or(|r| r & 1 == 0) {
            skip = skip.saturating_sub(1);
            continue;
        }
        all += 1;
        if skip > 0 {
            skip -= 1;
            continue;
        }
        // SAFETY: the page is inside the map; it was cached a moment ago (mincore above), so
        // reading its 20-byte header normally touches no device. The map is read-only.
        let header = unsafe { std::slice::from_raw_parts((map as *const u8).add(first), 20) };
        skip = large_continuation(header, pgno);
        if is_index_page(header, pgno) {
            kept.push(pgno);
        }
    }
    unmap(map);
    Ok((kept, all))
}

/// Elsewhere than Linux: an error (there is no page-by-page cache control here).
#[cfg(not(target_os = "linux"))]
pub fn keep_index_only(path: &Path, _page: usize) -> Result<IndexPages, Error> {
    Err(io(path)(std::io::Error::other(
        "cold reads that keep the index use posix_fadvise and mincore, which gigagas does only on Linux",
    )))
}

/// Elsewhere than Linux: an error (there is no page-by-page cache control here).
#[cfg(not(target_os = "linux"))]
pub fn drop_all_but_index(path: &Path, page: usize) -> Result<IndexPages, Error> {
    keep_index_only(path, page)
}

/// The data file of the store in `dir`.
pub fn data_file(dir: &Path) -> PathBuf {
    dir.join("mdbx.dat")
}
