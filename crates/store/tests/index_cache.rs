//! Cold reads that keep the B-tree's index cached (`index_cache`): the pass over a real
//! store's data file keeps exactly its branch pages (as MDBX counts them) and the meta pages;
//! the pass over the page cache finds only cached pages, so after a full drop it keeps none.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing
#![cfg(target_os = "linux")] // page-cache control (posix_fadvise, mincore) is Linux-only

use gigagas_store::{
    index_cache::{self, drop_all_but_index, keep_index_only},
    kv::{Backend, KvWrite, Table},
    mdbx::Mdbx,
};
use std::os::fd::AsRawFd;

#[test]
fn a_page_header_is_an_index_page_only_when_it_says_branch_or_meta_at_its_own_number() {
    let header = |flags: u16, pgno: u32| {
        let mut h = [0u8; 20];
        h[10..12].copy_from_slice(&flags.to_le_bytes());
        h[16..20].copy_from_slice(&pgno.to_le_bytes());
        h
    };
    assert!(index_cache::is_index_page(&header(0x01, 7), 7));
    assert!(index_cache::is_index_page(&header(0x08, 1), 1));
    // Other bits beside the kind (MDBX's dirty/spilled marks) do not change it.
    assert!(index_cache::is_index_page(&header(0x01 | 0x4000, 7), 7));
    assert!(!index_cache::is_index_page(&header(0x02, 7), 7), "a leaf");
    assert!(
        !index_cache::is_index_page(&header(0x04, 7), 7),
        "a large page"
    );
    assert!(
        !index_cache::is_index_page(&header(0x03, 7), 7),
        "two kinds at once"
    );
    assert!(
        !index_cache::is_index_page(&header(0x01, 8), 7),
        "another page's number"
    );
    assert!(
        !index_cache::is_index_page(&header(0x01, 7)[..12], 7),
        "cut short"
    );
}

/// Appends `keys` (big-endian numbers as 32-byte keys) to the storage table, every value 32
/// bytes of `byte`.
fn append_slots(txn: &impl KvWrite, keys: std::ops::Range<u64>, byte: u8) {
    for i in keys {
        let mut key = [0u8; 32];
        key[24..].copy_from_slice(&i.to_be_bytes());
        txn.append(Table::Storage, &key, &[byte; 32]).unwrap();
    }
}

#[test]
fn the_passes_keep_the_branch_pages_mdbx_counts() {
    // Under target/ rather than $TMPDIR: a tmpfs ignores POSIX_FADV_DONTNEED.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("db");
    let (branch, page) = {
        let raw = Mdbx::open(&path, true, true).unwrap();
        let txn = raw.write().unwrap();
        append_slots(&txn, 0..200_000, 0xab);
        // Large values (overflow pages, whose continuation pages have no header).
        for i in 0..20u64 {
            txn.put(Table::Code, &i.to_be_bytes(), &vec![0x01; 20_000])
                .unwrap();
        }
        txn.commit().unwrap();
        let branch: usize = raw
            .table_stats()
            .unwrap()
            .iter()
            .map(|t| t.branch_pages)
            .sum();
        (branch as u64, raw.page_bytes() as usize)
    };
    assert!(
        branch > 20,
        "the table has a real index: {branch} branch pages"
    );
    let file = index_cache::data_file(&path);
    let scan = keep_index_only(&file, page).unwrap();
    let len = std::fs::metadata(&file).unwrap().len();
    assert_eq!(scan.pages, len / page as u64);
    // The branch pages of every table, the meta pages, and at most a few branch pages of
    // MDBX's own catalog and free list.
    assert!(
        scan.kept >= branch && scan.kept <= branch + 8,
        "kept {} pages, MDBX counts {branch} branch pages",
        scan.kept
    );
    // After the scan (a sequential read: large folios) only the index is cached.
    assert_eq!(scan.cached, scan.kept, "{scan:?}");
    // Only cached pages are looked at: right after the scan those are the index pages.
    let cached = drop_all_but_index(&file, page).unwrap();
    assert!(
        cached.kept > 0 && cached.kept <= scan.kept,
        "{cached:?} after {scan:?}"
    );
    assert_eq!(cached.cached, cached.kept, "{cached:?} after {scan:?}");
    // Buffered writes (more large folios) and reads of everything: still only the index.
    {
        let raw = Mdbx::open(&path, false, true).unwrap();
        let txn = raw.write().unwrap();
        append_slots(&txn, 200_000..260_000, 0xcd);
        txn.commit().unwrap();
    }
    std::fs::read(&file).unwrap();
    let after = drop_all_but_index(&file, page).unwrap();
    assert!(
        after.kept >= branch,
        "{after:?}: {branch} branch pages before the writes"
    );
    assert_eq!(after.cached, after.kept, "{after:?}");
    // With the whole file's cache dropped, nothing is cached, so nothing is kept (and
    // nothing was read to find out).
    let f = std::fs::File::open(&file).unwrap();
    // SAFETY: a valid descriptor; 0, 0 is the whole file.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0);
    assert_eq!(drop_all_but_index(&file, page).unwrap().kept, 0);
    // A page size that is not one is refused by name.
    let e = keep_index_only(&file, 1000).unwrap_err().to_string();
    assert!(e.contains("page size 1000"), "{e}");
}
