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
/// Raised with the environment setting [`MAX_FILE_BYTES_ENV`].
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// Environment setting that raises [`MAX_FILE_BYTES`] (bytes; also the per-member limit of an
/// archive).
pub const MAX_FILE_BYTES_ENV: &str = "GIGAGAS_MAX_FILE_BYTES";
/// Largest total size of an unpacked archive (bytes): what is held in memory, and what is
/// decompressed while its members are checked. Raised with [`MAX_ARCHIVE_BYTES_ENV`].
pub const MAX_ARCHIVE_BYTES: u64 = 8 << 30;
/// Environment setting that raises [`MAX_ARCHIVE_BYTES`] (bytes).
pub const MAX_ARCHIVE_BYTES_ENV: &str = "GIGAGAS_MAX_ARCHIVE_BYTES";
/// Most members (files and directories) an archive may have.
pub const MAX_ARCHIVE_MEMBERS: u64 = 1 << 20;
/// Largest [`ARCHIVE_MANIFEST`] (bytes): about 100 bytes per listed member.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;
/// The archive member listing the SHA-256 of every other member (`<hex>  <path>` per line),
/// written by `gigagas pack` (first, so that a loader can refuse an unlisted member before
/// reading it) and checked on load.
pub const ARCHIVE_MANIFEST: &str = "MANIFEST.sha256";

/// A limit in bytes: `default`, or the value of the environment setting `env` when it is set
/// to a whole number (an unparsable value is an error naming the setting).
pub fn limit_from_env(env: &str, default: u64) -> Result<u64, DataError> {
    match std::env::var(env) {
        Err(_) => Ok(default),
        Ok(v) => v.trim().parse().map_err(|_| DataError::Invalid {
            path: PathBuf::from(format!("${env}")),
            what: format!("{v:?} is not a whole number of bytes"),
        }),
    }
}

fn too_large(path: PathBuf, size: u64, limit: u64) -> DataError {
    DataError::Invalid {
        path,
        what: format!(
            "{size} bytes or more, above the input limit of {limit} bytes per file \
             (raise it with the environment setting {MAX_FILE_BYTES_ENV}=BYTES)"
        ),
    }
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`]; a FIFO, device or directory is refused
/// (reading one could block or never end).
pub fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    read_limited(path, MAX_FILE_BYTES, MAX_FILE_BYTES_ENV)
}

/// Reads a regular file of at most `default` bytes, or the value of the environment setting
/// `env` when set; a FIFO, device or directory is refused unread (reading one could block or
/// never end), a larger file is refused naming the limit and the setting.
pub fn read_limited(path: &Path, default: u64, env: &str) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind};
    let limit = limit_from_env(env, default)
        .map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))?;
    let (file, meta) = gigagas_guard::file::open_regular(path).map_err(|e| match e {
        gigagas_guard::file::OpenError::Io(e) => e,
        e => Error::new(ErrorKind::InvalidInput, e.to_string()),
    })?;
    if meta.len() > limit {
        return Err(Error::new(
            ErrorKind::FileTooLarge,
            format!(
                "{} bytes, larger than the input limit of {limit} bytes per file (raise it with \
                 the environment setting {env}=BYTES)",
                meta.len()
            ),
        ));
    }
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::FileTooLarge,
            format!(
                "larger than the input limit of {limit} bytes per file (raise it with the \
                 environment setting {env}=BYTES)"
            ),
        ));
    }
    Ok(buf)
}

/// A data set root: files are addressed by paths relative to it.
#[derive(Debug)]
pub enum DataSource {
    /// A directory in the mainnet layout.
    Dir(PathBuf),
    /// An unpacked archive held in memory (the embedded sample, a trusted archive).
    Archive {
        /// Name shown in messages.
        name: PathBuf,
        /// Relative path → file contents.
        files: BTreeMap<String, Vec<u8>>,
    },
    /// An untrusted `.tar.zst` archive unpacked into a private temporary directory, each
    /// member hashed while it was written: nothing of it is held in memory, its files are
    /// read one at a time as a loader asks for them.
    Unpacked {
        /// Name shown in messages.
        name: PathBuf,
        /// The directory the members were written to (removed when dropped).
        dir: UnpackedDir,
        /// Relative path → size of every member.
        members: BTreeMap<String, u64>,
    },
}

/// A private temporary directory (mode 0700 on Unix, under [`std::env::temp_dir`], i.e.
/// `TMPDIR`) holding an unpacked archive; removed with its contents when dropped.
#[derive(Debug)]
pub struct UnpackedDir(PathBuf);

impl UnpackedDir {
    fn create() -> Result<Self, DataError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let path = base.join(format!(
                "gigagas-archive-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            match builder.create(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(DataError::Io { path, source }),
            }
        }
    }

    /// Where the members are.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for UnpackedDir {
    fn drop(&mut self) {
        // Best effort: a directory that cannot be removed is left for the system's cleaner.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What is at `path` in words, for a path that is neither a regular file nor a directory:
/// `a FIFO`, `a character device`, …; `None` when nothing is there.
fn kind_of(path: &Path) -> Option<&'static str> {
    std::fs::metadata(path)
        .ok()
        .map(|m| gigagas_guard::file::kind(&m))
}

impl DataSource {
    /// Opens a directory, or a `.tar.zst` archive when `path` is a file. An archive must carry
    /// an [`ARCHIVE_MANIFEST`]; every member is checked against it while it is streamed (see
    /// [`Self::from_archive_checked`]). The one exception is the repository's own
    /// `data/mainnet-sample.tar.zst` (it predates the manifest): a file byte for byte equal to
    /// the sample compiled into this binary ([`EMBEDDED_SAMPLE`]) is that trusted sample.
    pub fn open(path: &Path) -> Result<Self, DataError> {
        if path.is_file() {
            let bytes = read_bounded(path).map_err(|source| DataError::Io {
                path: path.to_owned(),
                source,
            })?;
            if is_embedded_sample(&bytes) {
                return Self::from_archive(path.to_owned(), EMBEDDED_SAMPLE);
            }
            return Self::from_archive_checked(
                path.to_owned(),
                &bytes,
                &ArchiveLimits::from_env()?,
            );
        }
        match kind_of(path) {
            Some("a directory") => Ok(Self::Dir(path.to_owned())),
            None => Err(DataError::Io {
                path: path.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such directory or archive file (a data set is a directory or a .tar.zst file)",
                ),
            }),
            Some(kind) => Err(DataError::Invalid {
                path: path.to_owned(),
                what: format!("is {kind}, not a directory or a .tar.zst archive file; not read"),
            }),
        }
    }

    /// The data set compiled into the binary.
    pub fn embedded() -> Result<Self, DataError> {
        Self::from_archive(PathBuf::from("<embedded mainnet sample>"), EMBEDDED_SAMPLE)
    }

    /// Checks every member held against the archive's [`ARCHIVE_MANIFEST`]: each listed file
    /// present with its SHA-256, no unlisted file. Without a manifest: an error when
    /// `required`, else nothing to check. Directories have nothing to check.
    pub fn check_manifest(&self, required: bool) -> Result<(), DataError> {
        use sha2::{Digest, Sha256};
        let Self::Archive { name, files } = self else {
            return Ok(());
        };
        let Some(text) = files.get(ARCHIVE_MANIFEST) else {
            return if required {
                Err(no_manifest(name))
            } else {
                Ok(())
            };
        };
        let manifest = Manifest::parse(name, text)?;
        for (rel, expected) in &manifest.0 {
            let bytes = files
                .get(rel)
                .ok_or_else(|| listed_but_missing(name, rel))?;
            manifest_check(name, rel, expected, Sha256::digest(bytes).into())?;
        }
        if let Some(rel) = files
            .keys()
            .find(|k| *k != ARCHIVE_MANIFEST && !manifest.0.contains_key(*k))
        {
            return Err(unlisted(name, rel));
        }
        Ok(())
    }

    /// Unpacks a trusted zstd-compressed tar archive (the embedded sample) into memory in one
    /// pass, under the default [`ArchiveLimits`]; its manifest, when it has one, is checked.
    pub fn from_archive(name: PathBuf, compressed: &[u8]) -> Result<Self, DataError> {
        let limits = ArchiveLimits::default();
        let mut files = BTreeMap::new();
        stream_members(&name, compressed, &limits, &mut |key, _, entry| {
            let bytes = read_member(&name, key, entry, &limits)?;
            files.insert(key.to_owned(), bytes);
            Ok(())
        })?;
        let source = Self::Archive { name, files };
        source.check_manifest(false)?;
        Ok(source)
    }

    /// Unpacks an untrusted zstd-compressed tar archive that must carry an
    /// [`ARCHIVE_MANIFEST`] into a private temporary directory ([`UnpackedDir`]), streaming
    /// its members: none is held in memory (whatever their number and size within the
    /// `limits`), nothing unlisted or altered is kept.
    ///
    /// - Manifest first (as `gigagas pack` writes it): one pass; an unlisted member is refused
    ///   by name before its content is read, a listed one is hashed while it is written.
    /// - Manifest elsewhere: a first pass hashes every member without keeping it and checks
    ///   the manifest; a second pass writes the (now verified) members, hashing them again.
    ///
    /// Every member is a regular file or a directory under a relative path without `..`;
    /// anything else (an absolute path, `..`, a link, a device) is refused by name.
    pub fn from_archive_checked(
        name: PathBuf,
        compressed: &[u8],
        limits: &ArchiveLimits,
    ) -> Result<Self, DataError> {
        let dir = UnpackedDir::create()?;
        let mut manifest: Option<Manifest> = None;
        let mut first = true;
        let mut manifest_first = false;
        let mut hashes: BTreeMap<String, [u8; 32]> = BTreeMap::new();
        let mut members: BTreeMap<String, u64> = BTreeMap::new();
        stream_members(&name, compressed, limits, &mut |key, size, entry| {
            let is_first = std::mem::replace(&mut first, false);
            if key == ARCHIVE_MANIFEST {
                if size > MAX_MANIFEST_BYTES {
                    return Err(DataError::Invalid {
                        path: name.join(key),
                        what: format!(
                            "{size} bytes, above the limit of {MAX_MANIFEST_BYTES} bytes for a manifest"
                        ),
                    });
                }
                let text = read_member(&name, key, entry, limits)?;
                manifest = Some(Manifest::parse(&name, &text)?);
                manifest_first = is_first;
                if manifest_first {
                    write_file(&name, &dir, key, &text)?;
                    members.insert(key.to_owned(), size);
                }
                return Ok(());
            }
            match (&manifest, manifest_first) {
                (Some(m), true) => {
                    let expected = m.0.get(key).ok_or_else(|| unlisted(&name, key))?;
                    let actual = copy_member(&name, key, size, entry, Some(&dir))?;
                    manifest_check(&name, key, expected, actual)?;
                    members.insert(key.to_owned(), size);
                }
                _ => {
                    // Manifest not seen yet: hash without keeping.
                    hashes.insert(key.to_owned(), copy_member(&name, key, size, entry, None)?);
                }
            }
            Ok(())
        })?;
        let manifest = manifest.ok_or_else(|| no_manifest(&name))?;
        if manifest_first {
            if let Some(rel) = manifest.0.keys().find(|k| !members.contains_key(*k)) {
                return Err(listed_but_missing(&name, rel));
            }
            return Ok(Self::Unpacked { name, dir, members });
        }
        // Manifest after some members: check what the first pass hashed, then keep.
        if let Some(rel) = hashes.keys().find(|k| !manifest.0.contains_key(*k)) {
            return Err(unlisted(&name, rel));
        }
        for (rel, expected) in &manifest.0 {
            let actual = hashes
                .get(rel)
                .ok_or_else(|| listed_but_missing(&name, rel))?;
            manifest_check(&name, rel, expected, *actual)?;
        }
        stream_members(&name, compressed, limits, &mut |key, size, entry| {
            if key == ARCHIVE_MANIFEST {
                let text = read_member(&name, key, entry, limits)?;
                write_file(&name, &dir, key, &text)?;
            } else {
                let actual = copy_member(&name, key, size, entry, Some(&dir))?;
                if hashes.get(key) != Some(&actual) {
                    return Err(DataError::Invalid {
                        path: name.join(key),
                        what: "changed between two reads of the archive".into(),
                    });
                }
            }
            members.insert(key.to_owned(), size);
            Ok(())
        })?;
        Ok(Self::Unpacked { name, dir, members })
    }

    /// Bytes of the data set held in memory: the members of an in-memory archive; 0 for a
    /// directory or an unpacked archive (read from disk one file at a time).
    pub fn held_bytes(&self) -> u64 {
        match self {
            Self::Archive { files, .. } => files.values().map(|v| v.len() as u64).sum(),
            Self::Dir(_) | Self::Unpacked { .. } => 0,
        }
    }

    /// Paths of every file of an archive (relative, `/`-separated), ascending; `None` for a
    /// directory.
    pub fn member_names(&self) -> Option<Vec<&str>> {
        match self {
            Self::Dir(_) => None,
            Self::Archive { files, .. } => Some(files.keys().map(String::as_str).collect()),
            Self::Unpacked { members, .. } => Some(members.keys().map(String::as_str).collect()),
        }
    }

    /// Path of `rel` for messages.
    pub fn display_path(&self, rel: &str) -> PathBuf {
        match self {
            Self::Dir(root) => root.join(rel),
            Self::Archive { name, .. } | Self::Unpacked { name, .. } => name.join(rel),
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
            Self::Unpacked { name, dir, members } => {
                if !members.contains_key(rel) {
                    return Ok(None);
                }
                // Written by this process into its private directory, within the limits.
                std::fs::read(dir.path().join(rel))
                    .map(Some)
                    .map_err(|source| DataError::Io {
                        path: name.join(rel),
                        source,
                    })
            }
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
            Self::Archive { .. } | Self::Unpacked { .. } => self
                .member_names()
                .unwrap_or_default()
                .into_iter()
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

/// Size and count limits on an archive's members, checked before anything is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// Largest member (bytes): [`MAX_FILE_BYTES`] by default.
    pub member_bytes: u64,
    /// Largest sum of all members' sizes (bytes): [`MAX_ARCHIVE_BYTES`] by default.
    pub total_bytes: u64,
    /// Most members: [`MAX_ARCHIVE_MEMBERS`].
    pub members: u64,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        Self {
            member_bytes: MAX_FILE_BYTES,
            total_bytes: MAX_ARCHIVE_BYTES,
            members: MAX_ARCHIVE_MEMBERS,
        }
    }
}

impl ArchiveLimits {
    /// The defaults, raised by the environment settings [`MAX_FILE_BYTES_ENV`] and
    /// [`MAX_ARCHIVE_BYTES_ENV`] where they are set.
    pub fn from_env() -> Result<Self, DataError> {
        Ok(Self {
            member_bytes: limit_from_env(MAX_FILE_BYTES_ENV, MAX_FILE_BYTES)?,
            total_bytes: limit_from_env(MAX_ARCHIVE_BYTES_ENV, MAX_ARCHIVE_BYTES)?,
            members: MAX_ARCHIVE_MEMBERS,
        })
    }
}

/// The parsed [`ARCHIVE_MANIFEST`]: relative path → SHA-256.
struct Manifest(BTreeMap<String, [u8; 32]>);

impl Manifest {
    /// Parses `<64 hex digits>  <path>` lines (`sha256sum`'s format; ` *<path>`, its binary
    /// mode, too; hex digits in either case). Errors name the line and what is wrong.
    fn parse(name: &Path, bytes: &[u8]) -> Result<Self, DataError> {
        let bad = |what: String| DataError::Invalid {
            path: name.join(ARCHIVE_MANIFEST),
            what,
        };
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8".into()))?;
        let mut listed = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let (hex, rel) = line
                .split_once("  ")
                .or_else(|| line.split_once(" *"))
                .ok_or_else(|| {
                    bad(format!(
                        "line {n}: expected `<sha256 in 64 hex digits>  <path>`, found {:?}",
                        truncate(line)
                    ))
                })?;
            let mut hash = [0u8; 32];
            if hex.len() != 64 {
                return Err(bad(format!(
                    "line {n}: the hash {:?} has {} characters, a SHA-256 has 64 hex digits",
                    truncate(hex),
                    hex.len()
                )));
            }
            alloy_primitives::hex::decode_to_slice(hex, &mut hash).map_err(|_| {
                bad(format!(
                    "line {n}: the hash {:?} is not hexadecimal (digits 0-9, a-f or A-F)",
                    truncate(hex)
                ))
            })?;
            let key = member_key(Path::new(rel))
                .map_err(|why| bad(format!("line {n}: path {:?}: {why}", truncate(rel))))?;
            if key == ARCHIVE_MANIFEST {
                return Err(bad(format!("line {n}: the manifest lists itself")));
            }
            if listed.insert(key.clone(), hash).is_some() {
                return Err(bad(format!("line {n}: {key:?} is listed twice")));
            }
        }
        Ok(Self(listed))
    }
}

/// At most 120 characters of `s`, for messages.
fn truncate(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn manifest_check(
    name: &Path,
    rel: &str,
    expected: &[u8; 32],
    actual: [u8; 32],
) -> Result<(), DataError> {
    if &actual == expected {
        return Ok(());
    }
    Err(DataError::Invalid {
        path: name.join(rel),
        what: format!(
            "content hash {} but {ARCHIVE_MANIFEST} says {} (the archive was altered or damaged)",
            alloy_primitives::hex::encode(actual),
            alloy_primitives::hex::encode(expected)
        ),
    })
}

/// Whether `bytes` are the sample compiled into this binary, byte for byte (its SHA-256 is
/// [`embedded_sample_sha256`]).
pub fn is_embedded_sample(bytes: &[u8]) -> bool {
    bytes.len() == EMBEDDED_SAMPLE.len() && bytes == EMBEDDED_SAMPLE
}

/// The SHA-256 of [`EMBEDDED_SAMPLE`] in hex, for messages and result files.
pub fn embedded_sample_sha256() -> String {
    use sha2::{Digest, Sha256};
    alloy_primitives::hex::encode(Sha256::digest(EMBEDDED_SAMPLE))
}

fn no_manifest(name: &Path) -> DataError {
    DataError::Invalid {
        path: name.to_owned(),
        what: format!(
            "archive has no {ARCHIVE_MANIFEST} (content hashes); re-pack it with `gigagas pack` \
             (the bundled sample needs no --data; a copy of it is accepted only when it is byte \
             for byte the one compiled into this binary, SHA-256 {})",
            embedded_sample_sha256()
        ),
    }
}

fn unlisted(name: &Path, rel: &str) -> DataError {
    DataError::Invalid {
        path: name.to_owned(),
        what: format!("member {rel:?} is not listed in {ARCHIVE_MANIFEST}; refused"),
    }
}

fn listed_but_missing(name: &Path, rel: &str) -> DataError {
    DataError::Invalid {
        path: name.to_owned(),
        what: format!("{rel:?} is listed in {ARCHIVE_MANIFEST} but not in the archive"),
    }
}

fn truncated(name: &Path, rel: &str, size: u64, got: u64) -> DataError {
    DataError::Archive {
        path: name.join(rel),
        source: std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the member header says {size} bytes, the archive holds {got}"),
        ),
    }
}

/// The key of a member path: its normal components joined by `/` (`./` dropped). An absolute
/// path, `..` or a name that is not UTF-8 is refused: such a member would be written outside
/// the data set by `tar -x`, and is never silently dropped.
fn member_key(path: &Path) -> Result<String, &'static str> {
    use std::path::Component;
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str().ok_or("the name is not UTF-8")?),
            Component::CurDir => {}
            Component::ParentDir => return Err("contains `..` (a path outside the archive)"),
            Component::RootDir | Component::Prefix(_) => {
                return Err("is absolute (a path outside the archive)")
            }
        }
    }
    Ok(parts.join("/"))
}

/// Streams the members of a zstd-compressed tar, checking each header before its content is
/// read: a regular file or a directory (skipped), a relative path without `..`, a size within
/// `limits.member_bytes`, the sizes' sum within `limits.total_bytes`, at most
/// `limits.members` members, no path twice. `visit(key, size, content)` gets each file.
/// What [`stream_members`] calls per file: key, declared size, content.
type MemberVisit<'a> = &'a mut dyn FnMut(&str, u64, &mut dyn Read) -> Result<(), DataError>;

fn stream_members(
    name: &Path,
    compressed: &[u8],
    limits: &ArchiveLimits,
    visit: MemberVisit<'_>,
) -> Result<(), DataError> {
    use tar::EntryType;
    let archive_err = |source| DataError::Archive {
        path: name.to_owned(),
        source,
    };
    check_zstd_window(name, compressed)?;
    // One frame: what follows it is refused below, never silently skipped or decoded.
    let decoder = zstd::stream::read::Decoder::with_buffer(compressed)
        .map_err(archive_err)?
        .single_frame();
    let mut archive = tar::Archive::new(decoder);
    let mut seen = std::collections::BTreeSet::new();
    let (mut total, mut count) = (0u64, 0u64);
    for entry in archive.entries().map_err(archive_err)? {
        let mut entry = entry.map_err(archive_err)?;
        count += 1;
        if count > limits.members {
            return Err(DataError::Invalid {
                path: name.to_owned(),
                what: format!("more than {} members", limits.members),
            });
        }
        let raw_path = entry.path().map_err(archive_err)?.into_owned();
        let shown = format!("{:?}", raw_path.to_string_lossy());
        let kind = entry.header().entry_type();
        match kind {
            EntryType::XGlobalHeader | EntryType::XHeader => continue,
            EntryType::Directory => {
                member_key(&raw_path).map_err(|why| DataError::Invalid {
                    path: name.to_owned(),
                    what: format!("member {shown} {why}; refused"),
                })?;
                continue;
            }
            k if k.is_file() => {}
            other => {
                return Err(DataError::Invalid {
                    path: name.to_owned(),
                    what: format!(
                        "member {shown} is a {} entry; an archive may hold only regular files and directories",
                        entry_kind(other)
                    ),
                })
            }
        }
        let key = member_key(&raw_path).map_err(|why| DataError::Invalid {
            path: name.to_owned(),
            what: format!("member {shown} {why}; refused"),
        })?;
        if key.is_empty() {
            return Err(DataError::Invalid {
                path: name.to_owned(),
                what: format!("member {shown} is a file without a name"),
            });
        }
        let size = entry.size();
        if size > limits.member_bytes {
            return Err(DataError::Invalid {
                path: name.join(&key),
                what: format!(
                    "archive member of {size} bytes, above the limit of {} bytes per member \
                     (raise it with the environment setting {MAX_FILE_BYTES_ENV}=BYTES); refused unread",
                    limits.member_bytes
                ),
            });
        }
        total = total.saturating_add(size);
        if total > limits.total_bytes {
            return Err(DataError::Invalid {
                path: name.join(&key),
                what: format!(
                    "the archive's members up to this one hold {total} bytes, above the limit of \
                     {} bytes per archive (raise it with the environment setting \
                     {MAX_ARCHIVE_BYTES_ENV}=BYTES); refused unread",
                    limits.total_bytes
                ),
            });
        }
        if !seen.insert(key.clone()) {
            return Err(DataError::Invalid {
                path: name.join(&key),
                what: "appears twice in the archive".into(),
            });
        }
        visit(&key, size, &mut entry)?;
    }
    // After the tar's end marker: only zero padding, then nothing after the zstd frame.
    let mut decoder = archive.into_inner();
    let mut padding = 0u64;
    let mut buf = [0u8; 8192];
    loop {
        let n = decoder.read(&mut buf).map_err(archive_err)?;
        if n == 0 {
            break;
        }
        if let Some(at) = buf[..n].iter().position(|&b| b != 0) {
            return Err(DataError::Invalid {
                path: name.to_owned(),
                what: format!(
                    "data after the end of the tar archive (a non-zero byte {} bytes past its \
                     end marker); refused rather than ignored",
                    padding + at as u64
                ),
            });
        }
        padding += n as u64;
        if padding > MAX_TAR_PADDING {
            return Err(DataError::Invalid {
                path: name.to_owned(),
                what: format!(
                    "more than {MAX_TAR_PADDING} bytes of padding after the end of the tar \
                     archive; refused rather than ignored"
                ),
            });
        }
    }
    let rest = decoder.finish();
    if !rest.is_empty() {
        return Err(DataError::Invalid {
            path: name.to_owned(),
            what: format!(
                "{} bytes after the end of the archive's zstd frame ({}); refused rather than \
                 ignored (an archive is one zstd frame, as `gigagas pack` writes it)",
                rest.len(),
                if rest.starts_with(&ZSTD_MAGIC) {
                    "a second zstd frame"
                } else {
                    "trailing bytes"
                }
            ),
        });
    }
    Ok(())
}

/// Most zero bytes accepted after a tar archive's end marker (tar pads to its record size,
/// 10 KiB by default; 1 MiB covers a blocking factor of 2048).
const MAX_TAR_PADDING: u64 = 1 << 20;

/// The magic number that starts a zstd frame (little-endian 0xFD2FB528).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Largest zstd window the decoder accepts: 2^27 bytes (zstd's default limit for decoding;
/// `gigagas pack` compresses with that window).
const MAX_ZSTD_WINDOW_LOG: u32 = 27;

/// The window size a zstd frame header declares (RFC 8878, 3.1.1.1), `None` when `bytes`
/// does not start with a complete zstd frame header (the decoder then names the defect).
fn zstd_window_size(bytes: &[u8]) -> Option<u64> {
    if bytes.get(..4)? != ZSTD_MAGIC {
        return None;
    }
    let descriptor = *bytes.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let w = *bytes.get(5)?;
        let log = 10 + u32::from(w >> 3);
        let base = 1u64 << log;
        return Some(base + (base / 8) * u64::from(w & 7));
    }
    // Single segment: the window is the frame content size.
    let dict_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let at = 5 + dict_bytes;
    match descriptor >> 6 {
        0 => bytes.get(at).map(|&b| u64::from(b)),
        1 => Some(u64::from(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?)) + 256),
        2 => Some(u64::from(u32::from_le_bytes(
            bytes.get(at..at + 4)?.try_into().ok()?,
        ))),
        _ => Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?)),
    }
}

/// Refuses a frame whose window is above what the decoder accepts, naming both sizes (the
/// decoder's own message, "Frame requires too much memory", would read as a corrupt file).
fn check_zstd_window(name: &Path, compressed: &[u8]) -> Result<(), DataError> {
    let limit = 1u64 << MAX_ZSTD_WINDOW_LOG;
    match zstd_window_size(compressed) {
        Some(window) if window > limit => Err(DataError::Invalid {
            path: name.to_owned(),
            what: format!(
                "the zstd frame needs a window of {window} bytes, above this decoder's limit of \
                 {limit} bytes (2^{MAX_ZSTD_WINDOW_LOG}); re-compress it with a window of at most \
                 2^{MAX_ZSTD_WINDOW_LOG} (`zstd --long={MAX_ZSTD_WINDOW_LOG}`, or `gigagas pack`)"
            ),
        }),
        _ => Ok(()),
    }
}

fn entry_kind(kind: tar::EntryType) -> &'static str {
    use tar::EntryType as E;
    match kind {
        E::Symlink => "symbolic link",
        E::Link => "hard link",
        E::Char => "character device",
        E::Block => "block device",
        E::Fifo => "FIFO",
        E::GNUSparse => "sparse file",
        _ => "special",
    }
}

/// Reads one member of declared `size` (already checked against the limits) whole.
fn read_member(
    name: &Path,
    key: &str,
    entry: &mut dyn Read,
    limits: &ArchiveLimits,
) -> Result<Vec<u8>, DataError> {
    let mut buf = Vec::new();
    entry
        .take(limits.member_bytes.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|source| DataError::Archive {
            path: name.join(key),
            source,
        })?;
    if buf.len() as u64 > limits.member_bytes {
        return Err(too_large(
            name.join(key),
            buf.len() as u64,
            limits.member_bytes,
        ));
    }
    Ok(buf)
}

/// Copies the `size` bytes of one member (already checked against the limits), hashing them,
/// into `dir` under `key` when given (else only hashes): never holds more than a buffer.
fn copy_member(
    name: &Path,
    key: &str,
    size: u64,
    entry: &mut dyn Read,
    dir: Option<&UnpackedDir>,
) -> Result<[u8; 32], DataError> {
    use sha2::{Digest, Sha256};
    use std::io::Write;
    struct Tee<W> {
        hasher: Sha256,
        out: Option<W>,
    }
    impl<W: Write> Write for Tee<W> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = match &mut self.out {
                Some(out) => out.write(buf)?,
                None => buf.len(),
            };
            self.hasher.update(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.out.as_mut().map_or(Ok(()), Write::flush)
        }
    }
    let out = match dir {
        Some(dir) => Some(std::io::BufWriter::new(create_file(name, dir, key)?)),
        None => None,
    };
    let mut tee = Tee {
        hasher: Sha256::new(),
        out,
    };
    let copied =
        std::io::copy(&mut entry.take(size), &mut tee).map_err(|source| DataError::Archive {
            path: name.join(key),
            source,
        })?;
    if copied != size {
        return Err(truncated(name, key, size, copied));
    }
    if let Some(out) = tee.out.take() {
        out.into_inner().map_err(|e| DataError::Write {
            path: dir.map_or_else(|| name.join(key), |d| d.path().join(key)),
            what: format!("unpacking member {key} of {} (TMPDIR)", name.display()),
            source: e.into_error(),
        })?;
    }
    Ok(tee.hasher.finalize().into())
}

/// Creates the file for member `key` in `dir` (and its parent directories); a path that
/// already exists (a member both a file and a directory) is an error naming it.
fn create_file(name: &Path, dir: &UnpackedDir, key: &str) -> Result<std::fs::File, DataError> {
    let path = dir.path().join(key);
    let io = |source| DataError::Write {
        path: path.clone(),
        what: format!("unpacking member {key} of {} (TMPDIR)", name.display()),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::File::create_new(&path).map_err(io)
}

/// Writes a small member already read (the manifest) into `dir`.
fn write_file(name: &Path, dir: &UnpackedDir, key: &str, bytes: &[u8]) -> Result<(), DataError> {
    use std::io::Write;
    create_file(name, dir, key)?
        .write_all(bytes)
        .map_err(|source| DataError::Write {
            path: dir.path().join(key),
            what: format!("unpacking member {key} of {} (TMPDIR)", name.display()),
            source,
        })
}
