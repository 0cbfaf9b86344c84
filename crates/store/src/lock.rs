//! The store directory's own files: what may be in it, and the locks processes take on it.
//!
//! - A store never follows a symbolic link it did not create: the directory itself and every
//!   file the store or MDBX opens in it (`mdbx.dat`, `mdbx.lck`, the lock files) must be what
//!   they claim, checked before MDBX opens anything (a symlinked `mdbx.dat` would otherwise
//!   let a read-only `db verify` truncate or overwrite the file it points to), and the lock
//!   files are opened with `O_NOFOLLOW`.
//! - One process writes a store at a time: [`WriterLock`] (`writer.lock`, an exclusive
//!   `flock` released however the process ends) is taken by every open that may write, and a
//!   second writer is refused naming the process that holds it. Readers beside a writer
//!   ([`crate::Store::open_unrecovered`]) take no lock.

use crate::Error;
use std::{
    fs::File,
    path::{Path, PathBuf},
};

/// The file a process that may write the store locks (`flock`), with its process id in it.
pub const WRITER_LOCK: &str = "writer.lock";

/// The files a store directory may hold; none of them may be a symbolic link.
pub(crate) const STORE_FILES: [&str; 9] = [
    "mdbx.dat",
    "mdbx.lck",
    crate::persist::TRIE_LOCK,
    WRITER_LOCK,
    crate::journal::TRIE_JOURNAL,
    crate::journal::TRIE_JOURNAL_TMP,
    crate::wal::WAL_FILE,
    crate::wal::WAL_TMP,
    crate::wal::WAL_OLD,
];

/// Refuses a store directory that is a symbolic link, or whose store files are symbolic links
/// or anything but regular files. Absent files are fine (MDBX or the locks create them).
pub(crate) fn check_files(dir: &Path) -> Result<(), Error> {
    let refuse = |why: String| Error::NotAStore {
        path: dir.to_owned(),
        why,
    };
    // Without a trailing `/` or `.`: `link/` would resolve the link before the check.
    let bare: PathBuf = dir.components().collect();
    if std::fs::symlink_metadata(&bare).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refuse(
            "the directory is a symbolic link (a store never follows one it did not create: name the real directory)".into(),
        ));
    }
    for name in STORE_FILES {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)
                    .map(|t| format!(" to {}", t.display()))
                    .unwrap_or_default();
                return Err(refuse(format!(
                    "{name} is a symbolic link{target}: a store never follows one it did not create, and opening it would write through it"
                )));
            }
            Ok(m) if !m.is_file() => {
                return Err(refuse(format!(
                    "{name} is not a regular file ({})",
                    gigagas_guard::file::kind(&m)
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(Error::Io { path, source }),
        }
    }
    Ok(())
}

/// Opens (creating it) the lock file `name` in `dir` and takes its exclusive `flock` without
/// waiting: `Ok(None)` when another process holds it. Never follows a symbolic link.
#[cfg(unix)]
pub(crate) fn lock_file(dir: &Path, name: &str) -> Result<Option<File>, Error> {
    use std::os::{fd::AsRawFd, unix::fs::OpenOptionsExt};
    let path = dir.join(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
    // SAFETY: a valid open descriptor; flock has no memory effects.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(Some(file));
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(None)
    } else {
        Err(Error::Io { path, source: e })
    }
}

/// No process locks off Unix: a store is used by one process at a time there.
#[cfg(not(unix))]
pub(crate) fn lock_file(_: &Path, _: &str) -> Result<Option<File>, Error> {
    Ok(None)
}

/// The exclusive right to write one store, held by the process that opened it for writing
/// until the store is dropped (or the process ends, however it ends).
#[derive(Debug)]
pub struct WriterLock {
    _file: Option<File>,
}

impl WriterLock {
    /// Takes the writer lock of the store in `dir`, writing this process's id into the file;
    /// another process holding it is an error naming its process id.
    pub(crate) fn take(dir: &Path) -> Result<Self, Error> {
        match lock_file(dir, WRITER_LOCK)? {
            Some(mut file) => {
                record_pid(&mut file, &dir.join(WRITER_LOCK))?;
                Ok(Self { _file: Some(file) })
            }
            None if cfg!(unix) => {
                let holder = holder(&dir.join(WRITER_LOCK));
                if holder == format!("process {}", std::process::id()) {
                    // MDBX allows one environment per file in a process, and so does this.
                    return Err(Error::Backend(format!(
                        "{}: this process already has the store open",
                        dir.display()
                    )));
                }
                Err(Error::Busy {
                    path: dir.to_owned(),
                    holder,
                })
            }
            None => Ok(Self { _file: None }),
        }
    }
}

/// Writes this process's id into the held lock file (for the refusal another process prints).
fn record_pid(file: &mut File, path: &Path) -> Result<(), Error> {
    use std::io::{Seek, Write};
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    writeln!(file, "{}", std::process::id()).map_err(io)
}

/// Who holds the lock file at `path`, in words ("process 1234"), from the id its holder wrote
/// (read at most 32 bytes, never through a symbolic link).
fn holder(path: &PathBuf) -> String {
    use std::io::Read;
    let mut text = String::new();
    let pid = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| File::open(path).ok())
        .and_then(|f| f.take(32).read_to_string(&mut text).ok())
        .and_then(|_| text.trim().parse::<u32>().ok());
    match pid {
        Some(pid) => format!("process {pid}"),
        None => "another process".into(),
    }
}
