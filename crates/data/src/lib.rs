//! Input side of gigagas: every supported data format becomes one in-memory [`Dataset`]
//! of [`BlockInput`]s, each with the immutable [`PreState`] its transactions run against.
//!
//! Architecture invariant: this crate parses and validates inputs; it never executes a
//! transaction. Everything it returns is `Send + Sync` and read-only after loading.

pub mod chain;
mod error;
mod genesis;
pub mod genesis_root;
pub mod geth_genesis;
pub mod integrity;
mod mainnet;
mod model;
mod pack;
mod post;
mod prestate;
pub mod progress;
mod shared;
mod source;

pub use error::DataError;
pub use mainnet::parse_block_json;
pub use model::{BlockInput, Dataset, Transaction};
pub use pack::pack_sample;
pub use post::{lane_of, FinalAccounts, PostState};
pub use prestate::{PreAccount, PreState, PreStateError, SlotFill, FILL_PASS_SLOTS};
pub use shared::shared_data_dir;
pub use source::{
    embedded_sample_sha256, is_embedded_sample, limit_from_env, read_bounded, read_limited,
    ArchiveLimits, DataSource, UnpackedDir, ARCHIVE_MANIFEST, EMBEDDED_SAMPLE, MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_BYTES_ENV, MAX_ARCHIVE_MEMBERS, MAX_FILE_BYTES, MAX_FILE_BYTES_ENV,
    MAX_MANIFEST_BYTES,
};

/// Loads every block of a data set in the mainnet layout
/// (`blocks/<n>/{block,pre_state}.json`, `bytecodes.json`, `block_hashes.json`).
/// A directory holding `chain.json` is a generated chain (`gigagas.chain/1`).
pub fn load(source: &DataSource) -> Result<Dataset, DataError> {
    load_with(source, None)
}

/// [`load`], with the state root of a generated chain's genesis allocation known from a
/// store built from it ([`chain::KnownGenesis`]): that allocation is not hashed again (at
/// 75M rule-filled slots, minutes), the root still checked against the genesis header.
pub fn load_with(
    source: &DataSource,
    known: Option<chain::KnownGenesis>,
) -> Result<Dataset, DataError> {
    let is_chain = source.read_optional(chain::CHAIN_META)?.is_some();
    check_layout(source, is_chain)?;
    if is_chain {
        return chain::load(source, known);
    }
    mainnet::load(source)
}

/// One layout per data set, every part of it read: a generated chain (`chain.json`) beside
/// mainnet-layout blocks (`blocks/`) is refused naming both (one of them would be ignored),
/// and an archive member that neither layout reads is refused by name.
fn check_layout(source: &DataSource, is_chain: bool) -> Result<(), DataError> {
    let has_blocks_dir = match source {
        DataSource::Dir(root) => std::fs::symlink_metadata(root.join("blocks")).is_ok(),
        _ => source
            .member_names()
            .unwrap_or_default()
            .iter()
            .any(|k| k.starts_with("blocks/")),
    };
    if is_chain && has_blocks_dir {
        return Err(DataError::Invalid {
            path: source.display_path(""),
            what: format!(
                "holds both a generated chain ({}, {}) and mainnet-layout blocks \
                 (blocks/<n>/block.json); one would be ignored: keep each in its own directory",
                chain::CHAIN_META,
                chain::CHAIN_BLOCKS
            ),
        });
    }
    let Some(names) = source.member_names() else {
        return Ok(());
    };
    for key in names {
        let known = key == ARCHIVE_MANIFEST
            || if is_chain {
                key == chain::CHAIN_META || key == chain::CHAIN_BLOCKS
            } else {
                mainnet::reads(key)
            };
        if !known {
            return Err(DataError::Invalid {
                path: source.display_path(key),
                what: format!(
                    "archive member that the {} loader does not read; refused rather than \
                     ignored",
                    if is_chain {
                        "generated-chain"
                    } else {
                        "mainnet-layout"
                    }
                ),
            });
        }
    }
    Ok(())
}
