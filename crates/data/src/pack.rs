//! Producing the compact, compressed sample that is compiled into the binary.

use crate::{DataError, DataSource};
use alloy_primitives::B256;
use std::{collections::BTreeSet, io::Write, path::Path};

/// Writes the blocks `numbers` of the mainnet-layout directory `source` into a zstd-compressed
/// tar at `out`, keeping only the code the chosen blocks' pre-states refer to. A number given
/// twice is packed once. The [`crate::ARCHIVE_MANIFEST`] is the first member, so that a loader
/// can refuse an unlisted member before reading it. Returns the archive size in bytes.
pub fn pack_sample(
    source: &Path,
    numbers: &[u64],
    out: &Path,
    level: i32,
) -> Result<u64, DataError> {
    let src = DataSource::open(source)?;
    // Each block once, ascending: a repeated number would make two members of one path.
    let numbers: BTreeSet<u64> = numbers.iter().copied().collect();
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let mut code_hashes = BTreeSet::new();
    for n in &numbers {
        for file in ["block.json", "pre_state.json"] {
            let rel = format!("blocks/{n}/{file}");
            let bytes = src.read(&rel)?;
            // An archive is only written from blocks its loader accepts: the block parses
            // (header number, transactions hashing to their stated hashes) before it is packed.
            if file == "block.json" {
                crate::mainnet::parse_block_json(&src.display_path(&rel), *n, &bytes)?;
            }
            if file == "pre_state.json" {
                let accounts: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_slice(&bytes).map_err(|e| DataError::Json {
                        path: src.display_path(&rel),
                        what: "pre-state".into(),
                        source: e,
                    })?;
                code_hashes.extend(
                    accounts
                        .values()
                        .filter_map(|a| a.get("code_hash")?.as_str()?.parse::<B256>().ok()),
                );
            }
            members.push((rel, bytes));
        }
    }
    let codes: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&src.read("bytecodes.json")?).map_err(|e| DataError::Json {
            path: src.display_path("bytecodes.json"),
            what: "bytecodes".into(),
            source: e,
        })?;
    let kept: serde_json::Map<String, serde_json::Value> = codes
        .into_iter()
        .filter(|(h, _)| h.parse::<B256>().is_ok_and(|h| code_hashes.contains(&h)))
        .collect();
    let kept = serde_json::to_vec(&kept).map_err(|e| DataError::Json {
        path: out.to_owned(),
        what: "bytecodes".into(),
        source: e,
    })?;
    members.push(("bytecodes.json".into(), kept));
    if let Some(hashes) = src.read_optional("block_hashes.json")? {
        members.push(("block_hashes.json".into(), hashes));
    }
    let manifest: String = members
        .iter()
        .map(|(rel, bytes)| {
            use sha2::{Digest, Sha256};
            format!(
                "{}  {rel}\n",
                alloy_primitives::hex::encode(Sha256::digest(bytes))
            )
        })
        .collect();
    let mut builder = tar::Builder::new(Vec::new());
    let manifest_member = (
        crate::source::ARCHIVE_MANIFEST.to_owned(),
        manifest.into_bytes(),
    );
    for (rel, bytes) in std::iter::once(&manifest_member).chain(&members) {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        builder
            .append_data(&mut header, rel, &bytes[..])
            .map_err(|source| DataError::Write {
                path: out.to_owned(),
                what: format!("the packed archive, member {rel}"),
                source,
            })?;
    }
    let io_err = |source| DataError::Write {
        path: out.to_owned(),
        what: "the packed archive".into(),
        source,
    };
    let tar = builder.into_inner().map_err(io_err)?;
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), level).map_err(io_err)?;
    encoder.long_distance_matching(true).map_err(io_err)?;
    encoder.include_checksum(true).map_err(io_err)?;
    encoder.window_log(27).map_err(io_err)?;
    encoder.write_all(&tar).map_err(io_err)?;
    let compressed = encoder.finish().map_err(io_err)?;
    std::fs::write(out, &compressed).map_err(io_err)?;
    Ok(compressed.len() as u64)
}
