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
            let bytes = std::fs::read(path).map_err(|source| DataError::Io {
                path: path.to_owned(),
                source,
            })?;
            return Self::from_archive(path.to_owned(), &bytes);
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
        Self::from_archive(PathBuf::from("<embedded mainnet sample>"), EMBEDDED_SAMPLE)
    }

    /// Unpacks a zstd-compressed tar archive into memory.
    pub fn from_archive(name: PathBuf, compressed: &[u8]) -> Result<Self, DataError> {
        let archive_err = |source| DataError::Archive {
            path: name.clone(),
            source,
        };
        let decoder = zstd::stream::read::Decoder::new(compressed).map_err(archive_err)?;
        let mut archive = tar::Archive::new(decoder);
        let mut files = BTreeMap::new();
        for entry in archive.entries().map_err(archive_err)? {
            let mut entry = entry.map_err(archive_err)?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry.path().map_err(archive_err)?;
            let key = path.to_string_lossy().trim_start_matches("./").to_owned();
            let mut buf = Vec::with_capacity(entry.size() as usize);
            entry.read_to_end(&mut buf).map_err(archive_err)?;
            files.insert(key, buf);
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
            Self::Dir(root) => match std::fs::read(root.join(rel)) {
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
        let mut numbers: Vec<u64> = match self {
            Self::Dir(root) => {
                let dir = root.join("blocks");
                let entries = std::fs::read_dir(&dir).map_err(|source| DataError::Io {
                    path: dir.clone(),
                    source,
                })?;
                entries
                    .filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
                    .collect()
            }
            Self::Archive { files, .. } => files
                .keys()
                .filter_map(|k| k.strip_prefix("blocks/"))
                .filter_map(|k| k.strip_suffix("/block.json"))
                .filter_map(|n| n.parse().ok())
                .collect(),
        };
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
