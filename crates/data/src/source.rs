//! Where data sets come from: a directory on disk or the compressed sample compiled into the
//! binary. Both are read through the same relative paths.

use crate::DataError;
use std::{
    collections::BTreeMap,
    io::Read,
    path::{Path, PathBuf},
};

/// The bundled default data set: the mainnet blocks in the `../shared/data/mainnet` layout,
/// packed as a zstd-compressed tar (see `data/README.md` for how it is produced).
pub static EMBEDDED_SAMPLE: &[u8] = include_bytes!("../../../data/mainnet-sample.tar.zst");

/// Largest input file read (bytes): a larger file, or an endless one such as a device, is an
/// error naming it, never an unbounded allocation. The largest shipped file is ~40 MB.
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// Largest total size of an unpacked archive held in memory (bytes).
pub const MAX_ARCHIVE_BYTES: u64 = 8 << 30;
/// The archive member listing the SHA-256 of every other member (`<hex>  <path>` per line),
/// written by `gigagas pack` and checked on load.
pub const ARCHIVE_MANIFEST: &str = "MANIFEST.sha256";

fn too_large(path: PathBuf, size: u64) -> DataError {
    DataError::Invalid {
        path,
        what: format!(
            "{size} bytes or more, above the input limit of {MAX_FILE_BYTES} bytes per file"
        ),
    }
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`]; a FIFO, device or directory is refused
/// (reading one could block or never end).
pub fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind};
    // Refuse before opening: opening a FIFO for reading blocks until a writer appears.
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or directory is not read)",
        ));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Should the path be swapped for a FIFO after the check, opening still does not block.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(0o4000); // O_NONBLOCK
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or directory is not read)",
        ));
    }
    let mut buf = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::new(
            ErrorKind::FileTooLarge,
            format!("larger than the input limit of {MAX_FILE_BYTES} bytes per file"),
        ));
    }
    Ok(buf)
}

/// A data set root: files are addressed by paths relative to it.
#[derive(Debug)]
pub enum DataSource {
    /// A directory in the mainnet layout.
    Dir(PathBuf),
    /// An unpacked archive held in memory (the embedded sample or a `.tar.zst` file).
    Archive {
        /// Name shown in messages.
        name: PathBuf,
        /// Relative path → file contents.
        files: BTreeMap<String, Vec<u8>>,
    },
}

impl DataSource {
    /// Opens a directory, or a `.tar.zst` archive when `path` is a file.
    pub fn open(path: &Path) -> Result<Self, DataError> {
        if path.is_file() {
            let bytes = read_bounded(path).map_err(|source| DataError::Io {
                path: path.to_owned(),
                source,
            })?;
            let source = Self::from_archive(path.to_owned(), &bytes)?;
            source.check_manifest(true)?;
            return Ok(source);
        }
        if !path.is_dir() {
            return Err(DataError::Io {
                path: path.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
            });
        }
        Ok(Self::Dir(path.to_owned()))
    }

    /// The data set compiled into the binary.
    pub fn embedded() -> Result<Self, DataError> {
        let source =
            Self::from_archive(PathBuf::from("<embedded mainnet sample>"), EMBEDDED_SAMPLE)?;
        source.check_manifest(false)?;
        Ok(source)
    }

    /// Checks every member against the archive's [`ARCHIVE_MANIFEST`]: each listed file
    /// present with its SHA-256, no unlisted file. Without a manifest: an error when
    /// `required`, else nothing to check. Directories have nothing to check.
    pub fn check_manifest(&self, required: bool) -> Result<(), DataError> {
        use sha2::{Digest, Sha256};
        let Self::Archive { name, files } = self else {
            return Ok(());
        };
        let bad = |what: String| DataError::Invalid {
            path: name.clone(),
            what,
        };
        let Some(manifest) = files.get(ARCHIVE_MANIFEST) else {
            return if required {
                Err(bad(format!(
                    "archive has no {ARCHIVE_MANIFEST} (content hashes); re-pack it with `gigagas pack`"
                )))
            } else {
                Ok(())
            };
        };
        let manifest = std::str::from_utf8(manifest)
            .map_err(|_| bad(format!("{ARCHIVE_MANIFEST} is not UTF-8")))?;
        let mut listed = 0usize;
        for (line_no, line) in manifest.lines().enumerate() {
            let (hex, rel) = line.split_once("  ").ok_or_else(|| {
                bad(format!(
                    "{ARCHIVE_MANIFEST} line {}: expected `<sha256>  <path>`",
                    line_no + 1
                ))
            })?;
            let bytes = files
                .get(rel)
                .ok_or_else(|| bad(format!("{rel}: listed in {ARCHIVE_MANIFEST} but missing")))?;
            let actual = alloy_primitives::hex::encode(Sha256::digest(bytes));
            if actual != hex {
                return Err(bad(format!(
                    "{rel}: content hash {actual} but {ARCHIVE_MANIFEST} says {hex} (the archive was altered or damaged)"
                )));
            }
            listed += 1;
        }
        if listed + 1 != files.len() {
            let unlisted: Vec<&String> = files
                .keys()
                .filter(|k| {
                    *k != ARCHIVE_MANIFEST
                        && !manifest.lines().any(|l| l.ends_with(&format!("  {k}")))
                })
                .take(3)
                .collect();
            return Err(bad(format!(
                "members not listed in {ARCHIVE_MANIFEST}: {unlisted:?}"
            )));
        }
        Ok(())
    }

    /// Unpacks a zstd-compressed tar archive into memory (each member at most
    /// [`MAX_FILE_BYTES`], all together at most [`MAX_ARCHIVE_BYTES`]).
    pub fn from_archive(name: PathBuf, compressed: &[u8]) -> Result<Self, DataError> {
        let archive_err = |source| DataError::Archive {
            path: name.clone(),
            source,
        };
        let decoder = zstd::stream::read::Decoder::new(compressed).map_err(archive_err)?;
        let mut archive = tar::Archive::new(decoder);
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        for entry in archive.entries().map_err(archive_err)? {
            let mut entry = entry.map_err(archive_err)?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry.path().map_err(archive_err)?;
            let key = path.to_string_lossy().trim_start_matches("./").to_owned();
            let size = entry.size();
            if size > MAX_FILE_BYTES {
                return Err(too_large(name.join(&key), size));
            }
            total += size;
            if total > MAX_ARCHIVE_BYTES {
                return Err(DataError::Invalid {
                    path: name.clone(),
                    what: format!("unpacks to more than {MAX_ARCHIVE_BYTES} bytes"),
                });
            }
            let mut buf = Vec::with_capacity(size as usize);
            (&mut entry)
                .take(MAX_FILE_BYTES + 1)
                .read_to_end(&mut buf)
                .map_err(archive_err)?;
            if files.insert(key.clone(), buf).is_some() {
                return Err(DataError::Invalid {
                    path: name.join(&key),
                    what: "appears twice in the archive".into(),
                });
            }
        }
        Ok(Self::Archive { name, files })
    }

    /// Path of `rel` for messages.
    pub fn display_path(&self, rel: &str) -> PathBuf {
        match self {
            Self::Dir(root) => root.join(rel),
            Self::Archive { name, .. } => name.join(rel),
        }
    }

    /// Reads one file; `Ok(None)` when it does not exist.
    pub fn read_optional(&self, rel: &str) -> Result<Option<Vec<u8>>, DataError> {
        match self {
            Self::Dir(root) => match read_bounded(&root.join(rel)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(source) => Err(DataError::Io {
                    path: root.join(rel),
                    source,
                }),
            },
            Self::Archive { files, .. } => Ok(files.get(rel).cloned()),
        }
    }

    /// Reads one file that must exist.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, DataError> {
        self.read_optional(rel)?.ok_or_else(|| DataError::Io {
            path: self.display_path(rel),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "file not found"),
        })
    }

    /// Block numbers present under `blocks/`, ascending.
    pub fn block_numbers(&self) -> Result<Vec<u64>, DataError> {
        let names: Vec<String> = match self {
            Self::Dir(root) => {
                let dir = root.join("blocks");
                let entries = std::fs::read_dir(&dir).map_err(|source| DataError::Io {
                    path: dir.clone(),
                    source,
                })?;
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| !name.starts_with('.'))
                    .collect()
            }
            Self::Archive { files, .. } => files
                .keys()
                .filter_map(|k| k.strip_prefix("blocks/"))
                .filter_map(|k| k.split_once('/').map(|(n, _)| n.to_owned()))
                .collect(),
        };
        let mut numbers = Vec::with_capacity(names.len());
        for name in names {
            // Only canonical decimal names: `09068998` beside `9068998` would otherwise be
            // the same block read once and the other silently ignored.
            let number: Option<u64> = name.parse().ok();
            match number {
                Some(n) if n.to_string() == name => numbers.push(n),
                _ => {
                    return Err(DataError::Invalid {
                        path: self.display_path(&format!("blocks/{name}")),
                        what: "not a block directory: names under blocks/ must be block \
                               numbers in canonical decimal (no sign, no leading zeros)"
                            .into(),
                    })
                }
            }
        }
        numbers.sort_unstable();
        numbers.dedup();
        if numbers.is_empty() {
            return Err(DataError::NoBlocks {
                path: self.display_path(""),
            });
        }
        Ok(numbers)
    }
}
