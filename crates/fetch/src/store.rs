//! The output directory: its marker, the shared files, atomic writes.

use crate::{rpc::Client, Failure, FetchError};
use alloy_primitives::{Bytes, B256};
use serde::{Deserialize, Serialize};
use std::{
    collections::BTreeMap,
    fs,
    io::Write,
    path::{Path, PathBuf},
};

/// The marker that says a directory was written by `gigagas fetch`.
pub const MARKER: &str = "fetch.json";
/// Its format tag.
pub const MARKER_FORMAT: &str = "gigagas.fetch/1";
pub(crate) const BYTECODES: &str = "bytecodes.json";
pub(crate) const BLOCK_HASHES: &str = "block_hashes.json";
/// Largest shared file read back (`bytecodes.json` of a long range can be large).
const MAX_SHARED_BYTES: u64 = 4 << 30;

/// `fetch.json`: where the data came from and which ranges were asked for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Marker {
    pub format: String,
    /// `eth_chainId` of the node; a later run must talk to the same chain.
    pub chain_id: u64,
    /// `host[:port]` of every node fetched from (never the path or query: API keys live
    /// there).
    pub hosts: Vec<String>,
    /// Ranges asked for, `[from, to]` inclusive, merged and sorted.
    pub ranges: Vec<[u64; 2]>,
    /// The fork the blocks run under (`--fork`, a revm fork name such as `Osaka`), which the
    /// loader then uses instead of the mainnet schedule. Required for a chain other than
    /// mainnet (chain id 1), whose fork schedule the loader cannot know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<String>,
}

impl Marker {
    /// The marker after this run asks for `from..=to` from `host`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn next(
        previous: Option<&Marker>,
        out: &Path,
        chain_id: u64,
        fork: Option<&str>,
        host: &str,
        from: u64,
        to: u64,
    ) -> Result<Self, FetchError> {
        let mut marker = match previous {
            Some(m) if m.chain_id != chain_id => {
                return Err(FetchError::Out {
                    path: out.to_owned(),
                    what: format!(
                        "holds chain {} (see {MARKER}) but the node serves chain {chain_id}; use another --out",
                        m.chain_id
                    ),
                })
            }
            Some(Marker { fork: Some(had), .. }) if fork.is_some_and(|f| f != had) => {
                return Err(FetchError::Out {
                    path: out.to_owned(),
                    what: format!(
                        "holds blocks fetched with --fork {had} (see {MARKER}), not --fork {}; use another --out",
                        fork.unwrap_or_default()
                    ),
                })
            }
            Some(Marker { fork: None, .. }) if fork.is_some() => {
                return Err(FetchError::Out {
                    path: out.to_owned(),
                    what: format!(
                        "holds blocks fetched without --fork (the mainnet schedule; see {MARKER}); use another --out for --fork {}",
                        fork.unwrap_or_default()
                    ),
                })
            }
            Some(m) => m.clone(),
            None => Marker {
                format: MARKER_FORMAT.into(),
                chain_id,
                hosts: Vec::new(),
                ranges: Vec::new(),
                fork: fork.map(str::to_owned),
            },
        };
        if chain_id != 1 && marker.fork.is_none() {
            return Err(FetchError::Flag {
                flag: "--fork",
                what: format!(
                    "the node serves chain {chain_id}, not mainnet: name the fork its blocks run under (a geth --dev node: --fork Osaka), since the mainnet schedule applies to chain 1 only"
                ),
            });
        }
        if !marker.hosts.iter().any(|h| h == host) {
            marker.hosts.push(host.to_owned());
        }
        marker.ranges.push([from, to]);
        marker.ranges.sort_unstable();
        let mut merged: Vec<[u64; 2]> = Vec::new();
        for r in marker.ranges {
            match merged.last_mut() {
                Some(last) if r[0] <= last[1].saturating_add(1) => last[1] = last[1].max(r[1]),
                _ => merged.push(r),
            }
        }
        marker.ranges = merged;
        Ok(marker)
    }
}

fn out_err(out: &Path, what: impl Into<String>) -> FetchError {
    FetchError::Out {
        path: out.to_owned(),
        what: what.into(),
    }
}

/// Validates `out`: missing (its parent must exist; it is created), empty, or written by an
/// earlier fetch (then its marker is returned). Anything else is refused.
pub(crate) fn open_out(out: &Path) -> Result<Option<Marker>, FetchError> {
    if out.as_os_str().is_empty() {
        return Err(out_err(out, "empty path"));
    }
    match fs::metadata(out) {
        Err(_) => {
            let parent = match out.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            if !parent.is_dir() {
                return Err(out_err(
                    out,
                    format!(
                        "its parent {} is not an existing directory",
                        parent.display()
                    ),
                ));
            }
            fs::create_dir(out).map_err(|e| out_err(out, format!("cannot create it: {e}")))?;
            Ok(None)
        }
        Ok(meta) if !meta.is_dir() => Err(out_err(out, "exists and is not a directory")),
        Ok(_) => {
            let mut names: Vec<String> = fs::read_dir(out)
                .map_err(|e| out_err(out, format!("cannot read it: {e}")))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if names.is_empty() {
                return Ok(None);
            }
            let marker_path = out.join(MARKER);
            if !names.iter().any(|n| n == MARKER) {
                names.sort();
                let what = if names.iter().any(|n| n == "chain.json") {
                    "holds a generated chain (chain.json), not a fetched data set".to_owned()
                } else {
                    format!(
                        "is not empty and has no {MARKER}, so `gigagas fetch` did not write it ({} entries: {}{}); give a new or empty directory",
                        names.len(),
                        names.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
                        if names.len() > 3 { ", …" } else { "" }
                    )
                };
                return Err(out_err(out, what));
            }
            let bytes = gigagas_data::read_bounded(&marker_path).map_err(|e| FetchError::Io {
                path: marker_path.clone(),
                source: e,
            })?;
            let marker: Marker = serde_json::from_slice(&bytes)
                .map_err(|e| out_err(out, format!("{MARKER} is not a fetch marker ({e})")))?;
            if marker.format != MARKER_FORMAT {
                return Err(out_err(
                    out,
                    format!(
                        "{MARKER} has format {:?}, this build writes {MARKER_FORMAT:?}",
                        marker.format
                    ),
                ));
            }
            Ok(Some(marker))
        }
    }
}

/// `eth_chainId` of the node.
pub(crate) fn chain_id(client: &Client) -> Result<u64, FetchError> {
    const METHOD: &str = "eth_chainId";
    // The first call of a run: a short deadline, so that a node that never answers is named
    // in seconds.
    let raw = client.probe(METHOD, serde_json::json!([]))?;
    let parsed = serde_json::from_str::<String>(raw.get())
        .ok()
        .and_then(|s| u64::from_str_radix(s.strip_prefix("0x")?, 16).ok());
    parsed.ok_or_else(|| FetchError::Rpc {
        block: None,
        method: METHOD.into(),
        host: client.host.clone(),
        what: Failure::Nonsense(format!(
            "{} is not a 0x-hex chain id",
            crate::rpc::snippet(raw.get().as_bytes())
        )),
    })
}

/// Writes `value` as JSON into a temporary file beside `path` and renames it onto `path`.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), FetchError> {
    let io = |source| FetchError::Io {
        path: path.to_owned(),
        source,
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io(std::io::Error::other(
            "no parent directory and file name to write",
        )));
    };
    let name = name.to_string_lossy();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(io)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        serde_json::to_writer(&mut w, value)
            .map_err(std::io::Error::from)
            .map_err(io)?;
        w.flush().map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Removes the hidden `.N.*.partial` / `.N.*.old` directories a killed run left in `blocks/`
/// (only names this crate creates).
pub(crate) fn remove_stale_partials(blocks: &Path) {
    let Ok(entries) = fs::read_dir(blocks) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.starts_with('.')
            && (name.ends_with(".partial") || name.ends_with(".old"))
            && name[1..]
                .split('.')
                .next()
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if ours && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn read_shared<T: serde::de::DeserializeOwned + Default>(
    out: &Path,
    rel: &str,
) -> Result<T, FetchError> {
    let path = out.join(rel);
    // A regular file within the limit (a FIFO or device there is refused unread).
    let bytes =
        match gigagas_data::read_limited(&path, MAX_SHARED_BYTES, gigagas_data::MAX_FILE_BYTES_ENV)
        {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(T::default()),
            Err(source) => return Err(FetchError::Io { path, source }),
        };
    serde_json::from_slice(&bytes).map_err(|e| {
        out_err(
            out,
            format!("{rel} from an earlier run does not parse ({e}); remove it to fetch afresh"),
        )
    })
}

pub(crate) fn read_codes(out: &Path) -> Result<BTreeMap<B256, Bytes>, FetchError> {
    read_shared(out, BYTECODES)
}

pub(crate) fn read_hashes(out: &Path) -> Result<BTreeMap<u64, B256>, FetchError> {
    read_shared(out, BLOCK_HASHES)
}
