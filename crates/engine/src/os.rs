//! What the engine reads from and asks of the operating system: the page cache of a store's
//! files (cold reads), the bytes this process read from storage, this machine's memory.

/// Drops the OS page cache of every regular file in `dir` (`posix_fadvise(DONTNEED)` after an
/// `fsync`; pages still mapped by a process stay cached, so close the store first). Linux
/// only.
pub fn drop_file_cache(dir: &std::path::Path) -> Result<(), String> {
    drop_file_cache_except(dir, std::path::Path::new(""))
}

/// [`drop_file_cache`] for every regular file in `dir` but `except`.
pub fn drop_file_cache_except(
    dir: &std::path::Path,
    except: &std::path::Path,
) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if !path.is_file() || path == except {
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
        "cold reads drop the page cache with posix_fadvise, which gigagas does only on Linux",
    ))
}

/// This machine's memory, bytes (`MemTotal` of `/proc/meminfo`); `None` where unreadable.
pub(crate) fn memory_bytes() -> Option<u64> {
    gigagas_data::chain::proc_kib_field("/proc/meminfo", "MemTotal")
}

/// Bytes this process has caused to be read from storage so far (`read_bytes` of
/// `/proc/self/io`: page-cache misses, memory-mapped reads included); `None` where unreadable.
pub fn io_read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}
