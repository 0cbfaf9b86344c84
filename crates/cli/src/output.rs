//! The one home of everything the command line writes: result files (`--json`, `--out`),
//! generated chains (`gen --out DIR`) and archives (`pack --out`).
//!
//! Rules (each refused case is an error naming the flag, before any work starts):
//! - `-` and `/dev/stdout` are the process's stdout (`/dev/stderr` its stderr), written
//!   through its own descriptor.
//! - A symlink is resolved and written through: the temporary file is created beside the
//!   *resolved* target and renamed onto it, so the link stays a link.
//! - An existing character device or FIFO (`/dev/null`, a named pipe) is written in place
//!   (appending), never replaced; so is an existing file reached through `/proc` (a
//!   `/proc/self/fd/N` link names an open descriptor). A directory, socket or block device
//!   is refused.
//! - An output that is also an input (same resolved path, same device and inode, or inside
//!   an input directory) is refused naming both.
//! - The target's directory must exist, be a directory and be writable (checked by creating
//!   and removing a probe file).
//! - Files are written to a uniquely named temporary file in the target's directory and
//!   renamed into place; the temporary file is removed on every failure path.

use crate::term::note;
use anyhow::{bail, Context, Result};
use std::{
    fs,
    io::Write,
    os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt},
    path::{Path, PathBuf},
};

/// An input of a command, so that no output can overwrite it.
#[derive(Debug, Clone)]
pub struct Input {
    /// How the user named it (`--data`, `FILE`, …).
    flag: String,
    /// As given.
    shown: PathBuf,
    /// Canonical path (every link resolved).
    canonical: PathBuf,
    /// Device and inode.
    id: (u64, u64),
    is_dir: bool,
}

impl Input {
    /// An input path; `None` when it does not exist (its reader reports that).
    pub fn new(flag: &str, path: &Path) -> Option<Self> {
        let canonical = fs::canonicalize(path).ok()?;
        let meta = fs::metadata(&canonical).ok()?;
        Some(Self {
            flag: flag.to_owned(),
            shown: path.to_owned(),
            canonical,
            id: (meta.dev(), meta.ino()),
            is_dir: meta.is_dir(),
        })
    }

    /// Every existing path of `paths`, all under one flag name.
    pub fn all<'a>(flag: &str, paths: impl IntoIterator<Item = &'a PathBuf>) -> Vec<Self> {
        paths
            .into_iter()
            .filter_map(|p| Self::new(flag, p))
            .collect()
    }

    fn describe(&self) -> String {
        format!("{} {}", self.flag, self.shown.display())
    }
}

/// Where a validated output goes.
#[derive(Debug, Clone)]
enum Target {
    /// `-`, `/dev/stdout` (descriptor 1) or `/dev/stderr` (descriptor 2): written through
    /// the process's own descriptor, at its current offset.
    Descriptor(i32),
    /// A character device, FIFO or `/proc` descriptor link: opened and written in place.
    Direct(PathBuf),
    /// A regular file (existing or not) at this resolved path: temporary file + rename.
    File(PathBuf),
}

/// An output file, validated before the work starts.
#[derive(Debug, Clone)]
pub struct Output {
    flag: String,
    shown: PathBuf,
    target: Target,
}

/// Most links followed when resolving an output path.
const MAX_LINKS: usize = 40;

/// The path `path` finally names after following every symlink, with its directory
/// canonical; the final component need not exist. `via_proc` is set when a link leads
/// through `/proc`.
fn resolve(flag: &str, path: &Path) -> Result<(PathBuf, bool)> {
    let mut current = std::path::absolute(path)
        .with_context(|| format!("{flag} {}: not a usable path", path.display()))?;
    let mut via_proc = false;
    for _ in 0..MAX_LINKS {
        let name = match current.file_name() {
            Some(name) if !current.ends_with("..") => name.to_owned(),
            _ => bail!("{flag} {}: not a file name", path.display()),
        };
        let parent = current.parent().unwrap_or(Path::new("/"));
        let parent = match fs::canonicalize(parent) {
            Ok(p) => p,
            Err(e) => bail!(
                "{flag} {}: its directory {} does not exist or cannot be read ({e})",
                path.display(),
                parent.display()
            ),
        };
        if !parent.is_dir() {
            bail!(
                "{flag} {}: {} is not a directory",
                path.display(),
                parent.display()
            );
        }
        via_proc |= parent.starts_with("/proc");
        let joined = parent.join(&name);
        match fs::symlink_metadata(&joined) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&joined)
                    .with_context(|| format!("{flag} {}: reading the link", path.display()))?;
                current = if link.is_absolute() {
                    link
                } else {
                    parent.join(link)
                };
            }
            _ => return Ok((joined, via_proc)),
        }
    }
    bail!(
        "{flag} {}: more than {MAX_LINKS} symbolic links",
        path.display()
    )
}

/// Creates and removes a temporary file in `dir`: proves the final write can happen there.
fn probe(flag: &str, shown: &Path, dir: &Path) -> Result<()> {
    tempfile::Builder::new()
        .prefix(".gigagas-probe.")
        .tempfile_in(dir)
        .map(drop)
        .with_context(|| {
            format!(
                "{flag} {}: cannot create files in {}",
                shown.display(),
                dir.display()
            )
        })
}

/// Refuses an output `resolved` (which may not exist yet) that is one of `inputs` or lies
/// inside an input directory.
fn check_not_input(
    flag: &str,
    shown: &Path,
    resolved: &Path,
    existing: Option<&fs::Metadata>,
    inputs: &[Input],
) -> Result<()> {
    for input in inputs {
        let same_file = existing.is_some_and(|m| (m.dev(), m.ino()) == input.id);
        let same_path = resolved == input.canonical;
        let inside = input.is_dir && resolved.starts_with(&input.canonical);
        if same_file || same_path || inside {
            let how = if inside && !same_path && !same_file {
                "lies inside the input"
            } else {
                "is the input"
            };
            bail!(
                "{flag} {} {how} {}; refusing to overwrite an input",
                shown.display(),
                input.describe()
            );
        }
    }
    Ok(())
}

impl Output {
    /// Validates `path` as the output of `flag` of a command reading `inputs`.
    pub fn new(flag: &str, path: &Path, inputs: &[Input]) -> Result<Self> {
        let out = |target| Self {
            flag: flag.to_owned(),
            shown: path.to_owned(),
            target,
        };
        if path.as_os_str() == "-" {
            return Ok(out(Target::Descriptor(1)));
        }
        for (names, fd) in [
            (["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"], 1),
            (["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"], 2),
        ] {
            if names.iter().any(|n| path == Path::new(n)) {
                return Ok(out(Target::Descriptor(fd)));
            }
        }
        if path.as_os_str().is_empty() {
            bail!("{flag}: empty path");
        }
        // `stat` follows every link, including the /proc descriptor links that a path
        // resolution by name cannot follow (`pipe:[…]`).
        if let Ok(meta) = fs::metadata(path) {
            let kind = meta.file_type();
            if kind.is_char_device() || kind.is_fifo() {
                // Still never an input (`report FIFO --out FIFO` would read its own output).
                check_not_input(flag, path, path, Some(&meta), inputs)?;
                return Ok(out(Target::Direct(path.to_owned())));
            }
            if kind.is_dir() {
                bail!("{flag} {}: is a directory", path.display());
            }
            if kind.is_socket() || kind.is_block_device() {
                bail!(
                    "{flag} {}: is a {}, not a file; refusing to replace it",
                    path.display(),
                    if kind.is_socket() {
                        "socket"
                    } else {
                        "block device"
                    }
                );
            }
        }
        let (resolved, via_proc) = resolve(flag, path)?;
        let existing = fs::metadata(&resolved).ok();
        if via_proc && existing.is_some() {
            // An open descriptor (`/dev/fd/3` onto a file): write it in place; replacing the
            // file would leave the descriptor on an unlinked one.
            check_not_input(flag, path, &resolved, existing.as_ref(), inputs)?;
            return Ok(out(Target::Direct(path.to_owned())));
        }
        if existing.as_ref().is_some_and(|m| !m.is_file()) {
            bail!(
                "{flag} {}: {} is not a regular file; refusing to replace it",
                path.display(),
                resolved.display()
            );
        }
        check_not_input(flag, path, &resolved, existing.as_ref(), inputs)?;
        probe(flag, path, parent_and_name(flag, path, &resolved)?.0)?;
        Ok(out(Target::File(resolved)))
    }

    /// Whether this output is the terminal's standard output (so human-readable text should
    /// go to stderr instead).
    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Descriptor(1))
    }

    /// Writes `bytes` to the output.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        self.write_with(|file| file.write_all(bytes).map_err(Into::into))
    }

    /// Writes the output with `fill`, which writes the path it is given (a temporary file
    /// beside the target, renamed into place afterwards; the device or FIFO itself; or
    /// `/dev/stdout`), for writers that only take a path.
    pub fn write_via_path(&self, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let context = || format!("{} {}: writing", self.flag, self.shown.display());
        match &self.target {
            Target::Descriptor(fd) => fill(&PathBuf::from(format!("/dev/fd/{fd}")))
                .map_err(|e| closed_stdout_is_quiet(*fd, e))
                .with_context(context),
            Target::Direct(path) => fill(path).with_context(context),
            Target::File(resolved) => self.replace(resolved, |tmp| fill(tmp.path())),
        }
    }

    /// Writes the output with `fill`, which writes into the (temporary) file it is given.
    pub fn write_with(&self, fill: impl FnOnce(&mut fs::File) -> Result<()>) -> Result<()> {
        let context = || format!("{} {}: writing", self.flag, self.shown.display());
        match &self.target {
            &Target::Descriptor(fd) => {
                // Through a duplicate of the descriptor, so `fill` gets a `File` like
                // everywhere else.
                let mut file = descriptor_file(fd).with_context(context)?;
                fill(&mut file)
                    .and_then(|()| file.flush().map_err(Into::into))
                    .map_err(|e| closed_stdout_is_quiet(fd, e))
                    .with_context(context)?;
            }
            Target::Direct(path) => {
                let mut file = fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .with_context(context)?;
                fill(&mut file).with_context(context)?;
                file.flush().with_context(context)?;
            }
            Target::File(resolved) => {
                self.replace(resolved, |tmp| fill(tmp.as_file_mut()))?;
            }
        }
        Ok(())
    }

    /// Fills a fresh temporary file beside `resolved` and renames it onto `resolved`. The
    /// temporary file is removed on every failure (dropping it removes it).
    fn replace(
        &self,
        resolved: &Path,
        fill: impl FnOnce(&mut tempfile::NamedTempFile) -> Result<()>,
    ) -> Result<()> {
        let context = || format!("{} {}: writing", self.flag, self.shown.display());
        let (dir, name) = parent_and_name(&self.flag, &self.shown, resolved)?;
        // A signal that ends the process removes it (once persisted, its path is gone).
        let (mut tmp, _partial) = gigagas_guard::interrupt::make_registered(
            || {
                tempfile::Builder::new()
                    .prefix(&format!(".{name}."))
                    .suffix(".partial")
                    .permissions(fs::Permissions::from_mode(0o666))
                    .tempfile_in(dir)
            },
            |t| t.path().to_owned(),
        )
        .with_context(context)?;
        if let Ok(meta) = fs::metadata(resolved) {
            // Replacing a file keeps its permissions.
            tmp.as_file()
                .set_permissions(meta.permissions())
                .with_context(context)?;
        }
        fill(&mut tmp).with_context(context)?;
        tmp.as_file_mut().flush().with_context(context)?;
        tmp.as_file().sync_all().with_context(context)?;
        // Never at the same time as a signal's cleanup (which removes the `.partial`).
        gigagas_guard::interrupt::commit(|| tmp.persist(resolved))
            .map_err(|e| e.error)
            .with_context(context)?;
        note!("wrote {}", self.shown.display());
        Ok(())
    }
}

/// A duplicate of descriptor 1 (stdout) or 2 (stderr) as a `File`, after flushing what the
/// process wrote to it so far.
fn descriptor_file(fd: i32) -> std::io::Result<fs::File> {
    use std::os::fd::AsFd;
    let owned = if fd == 2 {
        std::io::stderr().flush()?;
        std::io::stderr().as_fd().try_clone_to_owned()?
    } else {
        std::io::stdout().flush()?;
        std::io::stdout().as_fd().try_clone_to_owned()?
    };
    Ok(fs::File::from(owned))
}

/// An output directory of `gen`: validated up front, filled in a fresh temporary directory
/// beside it and renamed into place at the end.
#[derive(Debug)]
pub struct OutputDir {
    flag: String,
    shown: PathBuf,
    resolved: PathBuf,
    force: bool,
    /// Whether the command has `--force` (errors advise it only then).
    has_force: bool,
}

/// What a refusal to replace a non-empty directory advises.
fn replace_hint(has_force: bool) -> &'static str {
    if has_force {
        "pass --force to replace it"
    } else {
        "this command never replaces one: name a new or empty directory"
    }
}

/// What a directory holds; empty when it does not exist.
fn entries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .map(|it| {
            it.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

impl OutputDir {
    /// Validates `path`: a new or empty directory (any directory with `force`), whose parent
    /// exists and is writable, and which is none of `inputs`. For a command with `--force`;
    /// one without uses [`OutputDir::new_without_force`].
    pub fn new(flag: &str, path: &Path, force: bool, inputs: &[Input]) -> Result<Self> {
        Self::validated(flag, path, force, true, inputs)
    }

    /// [`OutputDir::new`] for a command that has no `--force`: a non-empty directory is
    /// refused without advising a flag the command lacks.
    pub fn new_without_force(flag: &str, path: &Path, inputs: &[Input]) -> Result<Self> {
        Self::validated(flag, path, false, false, inputs)
    }

    fn validated(
        flag: &str,
        path: &Path,
        force: bool,
        has_force: bool,
        inputs: &[Input],
    ) -> Result<Self> {
        if path.as_os_str().is_empty() {
            bail!("{flag}: empty path");
        }
        let (resolved, _) = resolve(flag, path)?;
        let existing = fs::metadata(&resolved).ok();
        if let Some(meta) = &existing {
            if !meta.is_dir() {
                bail!(
                    "{flag} {}: exists and is not a directory; refusing to replace it",
                    path.display()
                );
            }
            if let Ok(cwd) = std::env::current_dir().and_then(fs::canonicalize) {
                if force && cwd.starts_with(&resolved) {
                    bail!(
                        "{flag} {}: contains the current directory; refusing to replace it",
                        path.display()
                    );
                }
            }
            let mut inside = entries(&resolved);
            if !inside.is_empty() && !force {
                inside.sort();
                bail!(
                    "{flag} {}: directory is not empty ({} entries: {}{}); {}",
                    path.display(),
                    inside.len(),
                    inside
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                    if inside.len() > 3 { ", …" } else { "" },
                    replace_hint(has_force)
                );
            }
        }
        check_not_input(flag, path, &resolved, existing.as_ref(), inputs)?;
        probe(flag, path, parent_and_name(flag, path, &resolved)?.0)?;
        Ok(Self {
            flag: flag.to_owned(),
            shown: path.to_owned(),
            resolved,
            force,
            has_force,
        })
    }

    /// Fills a fresh temporary directory beside the target with `fill`, then renames it into
    /// place (replacing an old directory only with `force`, and only once the new one is
    /// complete). On any failure the temporary directory is removed and the target is left as
    /// it was.
    pub fn write_with(&self, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let context = || format!("{} {}: writing", self.flag, self.shown.display());
        let (parent, name) = parent_and_name(&self.flag, &self.shown, &self.resolved)?;
        // A signal that ends the process removes it (once renamed into place, its path is
        // gone).
        let (fresh, _partial) = gigagas_guard::interrupt::temp_dir_in(
            tempfile::Builder::new()
                .prefix(&format!(".{name}."))
                .suffix(".partial")
                .permissions(fs::Permissions::from_mode(0o777)),
            parent,
        )
        .with_context(context)?;
        fill(fresh.path()).with_context(context)?;
        let old = fs::metadata(&self.resolved).ok();
        match old {
            Some(meta) if !meta.is_dir() => bail!(
                "{} {}: became something other than a directory while generating; left as it is",
                self.flag,
                self.shown.display()
            ),
            Some(_) if !entries(&self.resolved).is_empty() => {
                if !self.force {
                    bail!(
                        "{} {}: became non-empty while generating; left as it is ({})",
                        self.flag,
                        self.shown.display(),
                        replace_hint(self.has_force)
                    );
                }
                // Move the old directory aside, the new one in, then delete the old one.
                // A signal's cleanup removes what is aside: the empty placeholder before the
                // swap, the replaced directory after it (the new one is complete and in place).
                let (aside, _aside) = gigagas_guard::interrupt::temp_dir_in(
                    tempfile::Builder::new()
                        .prefix(&format!(".{name}."))
                        .suffix(".old"),
                    parent,
                )
                .with_context(context)?;
                let aside_path = aside.path().to_owned();
                // The placeholder directory is replaced by the old directory (rename onto an
                // empty directory), then removed with it when `aside` drops. Both renames are
                // one commit point: never at the same time as a signal's cleanup.
                gigagas_guard::interrupt::commit(|| {
                    fs::rename(&self.resolved, &aside_path)?;
                    fs::rename(fresh.path(), &self.resolved).inspect_err(|_| {
                        let _ = fs::rename(&aside_path, &self.resolved);
                    })
                })
                .with_context(context)?;
                let _ = fresh.keep();
                drop(aside);
            }
            _ => {
                // New, or an empty directory (which rename replaces).
                gigagas_guard::interrupt::commit(|| fs::rename(fresh.path(), &self.resolved))
                    .with_context(context)?;
                let _ = fresh.keep();
            }
        }
        Ok(())
    }
}

/// A closed stdout (`gigagas report FILE --out - | head`) ends the process quietly with status
/// 141, as everywhere else ([`crate::term::stdout_failed`]); any other error is returned.
fn closed_stdout_is_quiet(fd: i32, e: anyhow::Error) -> anyhow::Error {
    if fd == 1 {
        if let Some(io) = e
            .chain()
            .find_map(|c| c.downcast_ref::<std::io::Error>())
            .filter(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            crate::term::stdout_failed(io);
        }
    }
    e
}

/// The parent directory and file name of a resolved output path; an error naming the flag
/// when it has none (a root such as `/`, which no output can replace).
fn parent_and_name<'a>(flag: &str, shown: &Path, resolved: &'a Path) -> Result<(&'a Path, String)> {
    match (resolved.parent(), resolved.file_name()) {
        (Some(dir), Some(name)) => Ok((dir, name.to_string_lossy().into_owned())),
        _ => bail!(
            "{flag} {}: resolves to {}, which has no parent directory and file name to write",
            shown.display(),
            resolved.display()
        ),
    }
}
