//! Files given as inputs: only a regular file is opened for reading, never a FIFO, device or
//! directory (opening a FIFO blocks until a writer appears; a device may never end).

use std::{fs::File, fs::Metadata, path::Path};

/// What a directory entry is, in words ("a FIFO", "a directory", …); "a regular file" for one.
pub fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        return "a regular file";
    }
    if t.is_dir() {
        return "a directory";
    }
    if t.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "neither a file nor a directory"
}

/// Why [`open_regular`] did not open a file.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The path is not a regular file (it was not opened, or was closed unread).
    #[error("{kind}, not a regular file; not read (a FIFO or device could block or never end)")]
    NotAFile {
        /// What it is, in words ([`kind`]).
        kind: &'static str,
    },
    /// The file system refused.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Opens `path` for reading only if it is a regular file: checked before opening, opened
/// non-blocking (should the path be swapped for a FIFO after the check, opening still does
/// not block) and checked again on the open file. Returns the file and its metadata.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), OpenError> {
    let refuse =
        |meta: &Metadata| (!meta.is_file()).then(|| OpenError::NotAFile { kind: kind(meta) });
    if let Some(e) = refuse(&std::fs::metadata(path)?) {
        return Err(e);
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    match refuse(&meta) {
        Some(e) => Err(e),
        None => Ok((file, meta)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let (_, meta) = open_regular(&file).unwrap();
        assert_eq!(meta.len(), 1);
        let e = open_regular(dir.path()).unwrap_err();
        assert!(
            matches!(
                e,
                OpenError::NotAFile {
                    kind: "a directory"
                }
            ),
            "{e}"
        );
        #[cfg(unix)]
        {
            let e = open_regular(Path::new("/dev/zero")).unwrap_err();
            assert_eq!(e.to_string(), "a character device, not a regular file; not read (a FIFO or device could block or never end)");
        }
        assert!(matches!(
            open_regular(&dir.path().join("missing")),
            Err(OpenError::Io(_))
        ));
    }
}
