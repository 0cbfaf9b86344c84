//! Header integrity and input hygiene on the bundled sample: each edit a hostile or damaged
//! input could carry is refused at load time, naming the block and the field.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{Address, B256};
use gigagas_data::{integrity, BlockInput, DataSource, Dataset};
use std::path::Path;

fn sample() -> Dataset {
    gigagas_data::load(&DataSource::embedded().unwrap()).unwrap()
}

/// Writes the embedded sample's files into `dir` (a data set directory).
fn unpack_to(dir: &Path) {
    let DataSource::Archive { files, .. } = DataSource::embedded().unwrap() else {
        unreachable!()
    };
    for (rel, bytes) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

fn err(block: &BlockInput) -> String {
    integrity::check_block(block).unwrap_err().to_string()
}

#[test]
fn every_bundled_block_passes() {
    let data = sample();
    assert_eq!(data.blocks.len(), 50);
    for b in &data.blocks {
        integrity::check_block(b).unwrap();
    }
}

#[test]
fn an_edited_header_field_breaks_the_hash() {
    let data = sample();
    let mut b = data.blocks[10].clone();
    b.header.beneficiary = Address::repeat_byte(0x42);
    let e = err(&b);
    assert!(
        e.contains("header fields hash to") && e.contains(&format!("block {}", b.number())),
        "{e}"
    );
    let mut b = data.blocks[10].clone();
    b.header.state_root = B256::repeat_byte(1);
    assert!(err(&b).contains("header fields hash to"));
}

#[test]
fn a_removed_transaction_breaks_the_transactions_root() {
    let data = sample();
    let mut b = data
        .blocks
        .iter()
        .find(|b| b.transactions.len() > 3)
        .unwrap()
        .clone();
    b.transactions.remove(1);
    // Even with a header re-hashed by whoever removed it, the root no longer matches.
    b.hash = b.header.hash_slow();
    let e = err(&b);
    assert!(e.contains("transactionsRoot"), "{e}");
}

#[test]
fn a_dropped_withdrawal_breaks_the_withdrawals_root() {
    let data = sample();
    let mut b = data
        .blocks
        .iter()
        .find(|b| !b.withdrawals.is_empty())
        .expect("a Shanghai+ block")
        .clone();
    b.withdrawals.pop();
    let e = err(&b);
    assert!(e.contains("withdrawalsRoot"), "{e}");
}

#[test]
fn ommers_hash_must_match_an_empty_ommer_list() {
    let data = sample();
    let mut b = data
        .blocks
        .iter()
        .find(|b| b.ommers.is_empty())
        .unwrap()
        .clone();
    b.header.ommers_hash = B256::repeat_byte(7);
    b.hash = b.header.hash_slow();
    assert!(err(&b).contains("ommersHash"));
}

#[test]
fn a_broken_parent_link_is_refused() {
    let data = sample();
    let i = data
        .blocks
        .windows(2)
        .position(|w| w[1].number() == w[0].number() + 1)
        .expect("the sample has consecutive blocks");
    let mut blocks = data.blocks[i..i + 2].to_vec();
    blocks[1].header.parent_hash = B256::repeat_byte(9);
    blocks[1].hash = blocks[1].header.hash_slow();
    let known = Default::default();
    let e = integrity::check_links(&blocks, &known)
        .unwrap_err()
        .to_string();
    assert!(e.contains("parentHash"), "{e}");
    integrity::check_links(&data.blocks[i..i + 2], &known).unwrap();
}

#[test]
fn a_non_canonical_block_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    unpack_to(dir.path());
    let n = sample().blocks[0].number();
    std::fs::create_dir_all(dir.path().join(format!("blocks/0{n}"))).unwrap();
    let e = gigagas_data::load(&DataSource::open(dir.path()).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("blocks/0{n}")) && e.contains("canonical"),
        "{e}"
    );
}

#[test]
fn a_string_nonce_must_be_hex() {
    let dir = tempfile::tempdir().unwrap();
    unpack_to(dir.path());
    let n = sample().blocks[0].number();
    let rel = dir.path().join(format!("blocks/{n}/pre_state.json"));
    let mut pre: serde_json::Value = serde_json::from_slice(&std::fs::read(&rel).unwrap()).unwrap();
    let first = pre.as_object_mut().unwrap().values_mut().next().unwrap();
    first["nonce"] = serde_json::Value::String("12".into());
    std::fs::write(&rel, serde_json::to_vec(&pre).unwrap()).unwrap();
    let e = gigagas_data::load(&DataSource::open(dir.path()).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("0x-prefixed"), "{e}");
}

#[test]
fn a_fifo_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo is needed for this test");
    let e = gigagas_data::read_bounded(&fifo).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
}

#[test]
fn packed_archives_carry_content_hashes_that_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    unpack_to(&data_dir);
    let numbers: Vec<u64> = sample()
        .blocks
        .iter()
        .take(3)
        .map(BlockInput::number)
        .collect();
    let archive = dir.path().join("s.tar.zst");
    gigagas_data::pack_sample(&data_dir, &numbers, &archive, 3).unwrap();
    let loaded = gigagas_data::load(&DataSource::open(&archive).unwrap()).unwrap();
    assert_eq!(loaded.blocks.len(), 3);

    // One member altered and re-packed without updating the manifest: refused by content hash.
    // (An opened archive is unpacked to disk, not held: its members are read back here.)
    let mut files: std::collections::BTreeMap<String, Vec<u8>> = {
        let tar = zstd::decode_all(&std::fs::read(&archive).unwrap()[..]).unwrap();
        let mut reader = tar::Archive::new(&tar[..]);
        reader
            .entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut e, &mut bytes).unwrap();
                (e.path().unwrap().to_string_lossy().into_owned(), bytes)
            })
            .collect()
    };
    let rel = format!("blocks/{}/pre_state.json", numbers[0]);
    let bytes = files.get_mut(&rel).unwrap();
    let at = bytes.iter().position(|b| b.is_ascii_digit()).unwrap();
    bytes[at] = if bytes[at] == b'1' { b'2' } else { b'1' };
    let mut builder = tar::Builder::new(Vec::new());
    for (rel, bytes) in &files {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        builder.append_data(&mut h, rel, &bytes[..]).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let altered = dir.path().join("altered.tar.zst");
    std::fs::write(&altered, zstd::encode_all(&tar[..], 3).unwrap()).unwrap();
    let e = DataSource::open(&altered).unwrap_err().to_string();
    assert!(e.contains(&rel) && e.contains("content hash"), "{e}");

    // Bytes overwritten inside the compressed file: refused (zstd checksum or content hash).
    let mut raw = std::fs::read(&archive).unwrap();
    let mid = raw.len() / 2;
    raw[mid..mid + 8].copy_from_slice(b"XXXXXXXX");
    let damaged = dir.path().join("damaged.tar.zst");
    std::fs::write(&damaged, raw).unwrap();
    assert!(DataSource::open(&damaged).is_err());

    // An archive without a manifest (packed by an older gigagas, or by hand) is refused.
    files.remove(gigagas_data::ARCHIVE_MANIFEST);
    let mut builder = tar::Builder::new(Vec::new());
    for (rel, bytes) in &files {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        builder.append_data(&mut h, rel, &bytes[..]).unwrap();
    }
    let bare = dir.path().join("bare.tar.zst");
    std::fs::write(
        &bare,
        zstd::encode_all(&builder.into_inner().unwrap()[..], 3).unwrap(),
    )
    .unwrap();
    let e = DataSource::open(&bare).unwrap_err().to_string();
    assert!(e.contains("MANIFEST"), "{e}");
}

/// The repository's own `data/mainnet-sample.tar.zst` (which predates the manifest) opens as
/// `--data`: it is byte for byte the sample compiled in. The same bytes with one byte changed
/// are an archive without a manifest again, refused: the exception is that one file only.
#[test]
fn the_repositorys_sample_opens_and_an_altered_copy_does_not() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mainnet-sample.tar.zst");
    let loaded = gigagas_data::load(&DataSource::open(&path).unwrap()).unwrap();
    assert_eq!(loaded.blocks.len(), sample().blocks.len());
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(gigagas_data::is_embedded_sample(&bytes));
    let dir = tempfile::tempdir().unwrap();
    // The last byte is the zstd frame's checksum: the frame still decodes up to it.
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let altered = dir.path().join("sample.tar.zst");
    std::fs::write(&altered, &bytes).unwrap();
    assert!(!gigagas_data::is_embedded_sample(&bytes));
    let e = DataSource::open(&altered).unwrap_err().to_string();
    assert!(!e.is_empty());
}
