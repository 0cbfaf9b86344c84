//! Hostile inputs, one class each: archive members that are junk, too large, unlisted,
//! outside the archive or not files; manifests in other spellings; storage fills that would
//! not fit in memory; genesis files that are devices. Each is refused with an error naming
//! the input, the limit and the setting that raises it, before anything large is held.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use gigagas_data::{ArchiveLimits, DataSource, ARCHIVE_MANIFEST};
use sha2::{Digest, Sha256};
use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
};

/// One archive member: path and content (a reader, so that large members are streamed).
enum Member {
    File(String, Vec<u8>),
    Zeros(String, u64),
    Symlink(String, String),
    Dir(String),
}

/// Writes a zstd-compressed tar of `members` in order, streaming (never holds a large one).
fn archive(path: &Path, members: &[Member]) {
    let file = std::fs::File::create(path).unwrap();
    let encoder = zstd::stream::Encoder::new(file, 1).unwrap().auto_finish();
    let mut builder = tar::Builder::new(encoder);
    for m in members {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        match m {
            Member::File(name, bytes) => {
                h.set_size(bytes.len() as u64);
                h.set_cksum();
                builder.append_data(&mut h, name, &bytes[..]).unwrap();
            }
            Member::Zeros(name, size) => {
                h.set_size(*size);
                h.set_cksum();
                builder
                    .append_data(&mut h, name, std::io::repeat(0).take(*size))
                    .unwrap();
            }
            Member::Symlink(name, target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                builder.append_link(&mut h, name, target).unwrap();
            }
            Member::Dir(name) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                h.set_cksum();
                builder.append_data(&mut h, name, std::io::empty()).unwrap();
            }
        }
    }
    builder.into_inner().unwrap().flush().unwrap();
}

/// Writes a raw tar header whose name is `name` byte for byte (the `tar` crate refuses to
/// write absolute and `..` paths, as a hostile tool would not).
fn raw_member(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut h = tar::Header::new_old();
    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    h.set_mode(0o644);
    h.set_size(bytes.len() as u64);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(bytes);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

/// The small real data set: two sample blocks and their shared files.
fn real_files() -> Vec<(String, Vec<u8>)> {
    let DataSource::Archive { files, .. } = DataSource::embedded().unwrap() else {
        unreachable!()
    };
    let keep = ["blocks/46147/", "blocks/19910734/"];
    files
        .into_iter()
        .filter(|(k, _)| !k.starts_with("blocks/") || keep.iter().any(|p| k.starts_with(p)))
        .collect()
}

fn manifest_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    files
        .iter()
        .map(|(k, v)| {
            format!(
                "{}  {k}\n",
                alloy_primitives::hex::encode(Sha256::digest(v))
            )
        })
        .collect::<String>()
        .into_bytes()
}

fn real_members(manifest: Vec<u8>) -> Vec<Member> {
    let mut members = vec![Member::File(ARCHIVE_MANIFEST.into(), manifest)];
    members.extend(real_files().into_iter().map(|(k, v)| Member::File(k, v)));
    members
}

fn small_limits() -> ArchiveLimits {
    ArchiveLimits {
        member_bytes: 64 << 20,
        total_bytes: 128 << 20,
        members: 1000,
    }
}

fn open_with(path: &Path, limits: &ArchiveLimits) -> Result<DataSource, String> {
    let bytes = std::fs::read(path).unwrap();
    DataSource::from_archive_checked(path.to_owned(), &bytes, limits).map_err(|e| e.to_string())
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.tar.zst");
    (dir, path)
}

#[test]
fn a_well_formed_archive_loads_manifest_first_or_last() {
    let (_d, path) = tmp();
    let files = real_files();
    let manifest = manifest_of(&files);
    archive(&path, &real_members(manifest.clone()));
    let source = DataSource::open(&path).unwrap();
    assert_eq!(gigagas_data::load(&source).unwrap().blocks.len(), 2);

    // Manifest last (older packs): checked in a first pass, held in a second.
    let mut members: Vec<Member> = files.into_iter().map(|(k, v)| Member::File(k, v)).collect();
    members.push(Member::File(ARCHIVE_MANIFEST.into(), manifest));
    archive(&path, &members);
    let source = DataSource::open(&path).unwrap();
    assert_eq!(gigagas_data::load(&source).unwrap().blocks.len(), 2);
}

#[test]
fn an_unlisted_junk_member_is_refused_by_name_unread_or_hashed_not_held() {
    let (_d, path) = tmp();
    let files = real_files();
    let manifest = manifest_of(&files);
    // Manifest first: the junk member is refused from its header, before its content.
    let mut members = real_members(manifest.clone());
    members.insert(1, Member::Zeros("junk/0".into(), 32 << 20));
    archive(&path, &members);
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("\"junk/0\"") && e.contains("not listed") && e.contains(ARCHIVE_MANIFEST),
        "{e}"
    );

    // Manifest last: hashed while streamed (never held), then refused by name.
    let mut members: Vec<Member> = vec![
        Member::Zeros("junk/0".into(), 32 << 20),
        Member::Zeros("junk/1".into(), 32 << 20),
    ];
    members.extend(files.into_iter().map(|(k, v)| Member::File(k, v)));
    members.push(Member::File(ARCHIVE_MANIFEST.into(), manifest));
    archive(&path, &members);
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(e.contains("junk/") && e.contains("not listed"), "{e}");
}

#[test]
fn members_over_the_per_member_or_total_budget_are_refused_naming_limit_and_setting() {
    let (_d, path) = tmp();
    let mut members = vec![Member::Zeros("big".into(), (64 << 20) + 1)];
    members.extend(real_members(manifest_of(&real_files())));
    archive(&path, &members);
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("big")
            && e.contains(&(64u64 << 20).to_string())
            && e.contains(gigagas_data::MAX_FILE_BYTES_ENV),
        "{e}"
    );

    // Many members each within the limit, together over the archive's budget.
    let members: Vec<Member> = (0..3)
        .map(|i| Member::Zeros(format!("junk/{i}"), 60 << 20))
        .collect();
    archive(&path, &members);
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("junk/2")
            && e.contains(&(128u64 << 20).to_string())
            && e.contains(gigagas_data::MAX_ARCHIVE_BYTES_ENV),
        "{e}"
    );

    // Too many members.
    let limits = ArchiveLimits {
        members: 3,
        ..small_limits()
    };
    archive(&path, &real_members(manifest_of(&real_files())));
    let e = open_with(&path, &limits).unwrap_err();
    assert!(e.contains("more than 3 members"), "{e}");
}

#[test]
fn absolute_dotdot_and_link_members_are_refused_by_name() {
    let (_d, path) = tmp();
    for name in ["/etc/evil", "../evil", "blocks/../../evil"] {
        let mut tar = raw_member(name, b"x");
        tar.extend(vec![0u8; 1024]);
        std::fs::write(&path, zstd::encode_all(&tar[..], 1).unwrap()).unwrap();
        let e = open_with(&path, &small_limits()).unwrap_err();
        assert!(e.contains(name) && e.contains("refused"), "{name}: {e}");
    }
    let mut members = real_members(manifest_of(&real_files()));
    members.push(Member::Symlink(
        "blocks/1/block.json".into(),
        "/etc/passwd".into(),
    ));
    archive(&path, &members);
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("blocks/1/block.json") && e.contains("symbolic link"),
        "{e}"
    );
    // A directory member is fine.
    let mut members = real_members(manifest_of(&real_files()));
    members.insert(1, Member::Dir("blocks/".into()));
    archive(&path, &members);
    assert!(open_with(&path, &small_limits()).is_ok());
}

#[test]
fn manifest_spellings_upper_case_hex_and_binary_mode_are_accepted_and_errors_are_precise() {
    let (_d, path) = tmp();
    let files = real_files();
    let upper = String::from_utf8(manifest_of(&files)).unwrap();
    let upper: String = upper
        .lines()
        .map(|l| {
            let (h, p) = l.split_once("  ").unwrap();
            format!("{}  {p}\n", h.to_uppercase())
        })
        .collect();
    archive(&path, &real_members(upper.clone().into_bytes()));
    assert!(open_with(&path, &small_limits()).is_ok());
    let binary = upper.replace("  ", " *");
    archive(&path, &real_members(binary.into_bytes()));
    assert!(open_with(&path, &small_limits()).is_ok());

    let cases = [
        (
            upper.replacen(|c: char| c.is_ascii_hexdigit(), "G", 1),
            "not hexadecimal",
        ),
        (upper[1..].to_owned(), "63 characters"),
        (format!("{upper}{upper}"), "listed twice"),
        (upper.replacen("  ", " ", 1), "line 1: expected"),
        (format!("{}  ../x\n{upper}", "0".repeat(64)), "`..`"),
    ];
    for (manifest, want) in cases {
        archive(&path, &real_members(manifest.into_bytes()));
        let e = open_with(&path, &small_limits()).unwrap_err();
        assert!(
            e.contains(want) && !e.contains("altered or damaged"),
            "{want}: {e}"
        );
    }
}

/// The real blocks of [`real_files`] written as a mainnet-layout directory under `dir`.
fn real_data_dir(dir: &std::path::Path) -> std::path::PathBuf {
    let data = dir.join("data");
    for (rel, bytes) in real_files() {
        let p = data.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    data
}

#[test]
fn pack_with_a_repeated_block_writes_an_archive_its_loader_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let data = real_data_dir(dir.path());
    let out = dir.path().join("p.tar.zst");
    gigagas_data::pack_sample(&data, &[46147, 46147, 19910734, 46147], &out, 1).unwrap();
    let loaded = gigagas_data::load(&DataSource::open(&out).unwrap()).unwrap();
    let numbers: Vec<u64> = loaded.blocks.iter().map(|b| b.number()).collect();
    assert_eq!(numbers, [46147, 19910734]);
}

/// A failed write is called one: packing onto a full device names the output and says it
/// could not be written (it used to say "cannot read").
#[test]
fn a_failed_write_is_named_as_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let data = real_data_dir(dir.path());
    let e = gigagas_data::pack_sample(&data, &[46147], std::path::Path::new("/dev/full"), 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/full: cannot write (the packed archive)") && !e.contains("cannot read"),
        "{e}"
    );
}

#[test]
fn a_storage_fill_too_large_for_memory_is_refused_before_expanding() {
    // The loader keeps a fill as its rule; expanding it (an export to another client) is
    // bounded before anything is allocated.
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chain");
    let mut meta: gigagas_data::chain::ChainMeta =
        serde_json::from_slice(&std::fs::read(fixture.join("chain.json")).unwrap()).unwrap();
    meta.storage_fill = vec![gigagas_data::chain::StorageFill {
        address: alloy_primitives::address!("0x00000000000000000000000000000000f1110000"),
        accounts: 1,
        slots: 100_000_000,
        period: 7,
        nonce: 1,
        code: Default::default(),
    }];
    let e = meta.full_alloc().unwrap_err();
    assert!(
        e.contains("100000000 slots")
            && e.contains("GiB")
            && e.contains(gigagas_data::chain::MAX_FILL_MEMORY_ENV),
        "{e}"
    );
}

#[test]
fn fill_memory_is_estimated_from_counts_and_checked_against_the_limit() {
    use gigagas_data::chain::{check_fill_memory, fill_memory_bytes, StorageFill};
    let fill = |accounts, slots| StorageFill {
        address: alloy_primitives::Address::repeat_byte(0x11),
        accounts,
        slots,
        period: 3,
        nonce: 1,
        code: Default::default(),
    };
    // At least the 64 bytes of each (key, value) per slot, per copy.
    let one = fill_memory_bytes(&[fill(1, 1_000_000)], 1);
    assert!((64 * 1_000_000..=200 * 1_000_000).contains(&one), "{one}");
    assert_eq!(fill_memory_bytes(&[fill(1, 1_000_000)], 3), 3 * one);
    let split = fill_memory_bytes(&[fill(10, 1_000_000)], 1);
    assert!(
        (64 * 1_000_000..=200 * 1_000_000).contains(&split),
        "{split}"
    );
    assert!(check_fill_memory(&[fill(1, 1_000_000)], 2, 1 << 30).is_ok());
    let e = check_fill_memory(&[fill(1, 1_000_000)], 2, 1 << 20).unwrap_err();
    assert!(
        e.contains("1000000 slots") && e.contains("2 in-memory copies"),
        "{e}"
    );
}

#[test]
fn a_genesis_that_is_a_device_or_too_large_is_refused_unread() {
    let e = gigagas_data::geth_genesis::read_geth_genesis(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("genesis.json");
    std::fs::write(&big, vec![b' '; 4096]).unwrap();
    let e = gigagas_data::read_limited(&big, 1024, "GIGAGAS_TEST_LIMIT").unwrap_err();
    assert!(
        e.to_string().contains("1024") && e.to_string().contains("GIGAGAS_TEST_LIMIT"),
        "{e}"
    );
}

/// Class: listed is not bounded. Members the manifest lists with their right hashes are
/// unpacked to a private directory while hashed, never held in memory (whatever their size
/// within the limits); a listed member no loader reads is then refused by name.
#[test]
fn listed_members_are_unpacked_to_disk_not_held_and_unread_ones_are_refused() {
    let (_d, path) = tmp();
    let size = 30u64 << 20;
    let zeros_hash = {
        let mut h = Sha256::new();
        std::io::copy(&mut std::io::repeat(0).take(size), &mut h).unwrap();
        alloy_primitives::hex::encode(h.finalize())
    };
    let mut manifest = manifest_of(&real_files());
    for i in 0..3 {
        manifest.extend(format!("{zeros_hash}  junk/{i}\n").into_bytes());
    }
    let mut members = real_members(manifest);
    for i in 0..3 {
        members.push(Member::Zeros(format!("junk/{i}"), size));
    }
    archive(&path, &members);
    let source = open_with(&path, &small_limits()).unwrap();
    assert_eq!(source.held_bytes(), 0, "nothing of the archive is held");
    let DataSource::Unpacked { dir, .. } = &source else {
        panic!("an untrusted archive is unpacked to disk: {source:?}")
    };
    let unpacked = dir.path().to_owned();
    assert_eq!(
        std::fs::metadata(unpacked.join("junk/2")).unwrap().len(),
        size
    );
    let e = gigagas_data::load(&source).unwrap_err().to_string();
    assert!(
        e.contains("junk/0") && e.contains("does not read") && e.contains("refused"),
        "{e}"
    );
    drop(source);
    assert!(!unpacked.exists(), "the unpacked directory is removed");

    // The same data without the junk loads from the unpacked files.
    archive(&path, &real_members(manifest_of(&real_files())));
    let source = open_with(&path, &small_limits()).unwrap();
    assert_eq!(source.held_bytes(), 0);
    assert_eq!(gigagas_data::load(&source).unwrap().blocks.len(), 2);
}

/// Class: parts of an archive ignored without a word. Bytes or a second zstd frame after
/// the first, data after the tar's end marker: each refused naming what it is.
#[test]
fn anything_after_the_archive_is_refused_not_ignored() {
    let (_d, path) = tmp();
    archive(&path, &real_members(manifest_of(&real_files())));
    let good = std::fs::read(&path).unwrap();
    assert!(open_with(&path, &small_limits()).is_ok());

    let mut two_frames = good.clone();
    two_frames.extend(zstd::encode_all(&b"hidden"[..], 1).unwrap());
    std::fs::write(&path, &two_frames).unwrap();
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("second zstd frame") && e.contains("bytes after the end"),
        "{e}"
    );

    let mut trailing = good;
    trailing.extend(b"trailing junk");
    std::fs::write(&path, &trailing).unwrap();
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("13 bytes after the end") && e.contains("trailing bytes"),
        "{e}"
    );

    // Inside the frame, after the tar's two zero blocks: a hidden member.
    let mut tar = raw_member(ARCHIVE_MANIFEST, b"");
    tar.extend(vec![0u8; 1024]);
    tar.extend(raw_member("hidden", b"x"));
    std::fs::write(&path, zstd::encode_all(&tar[..], 1).unwrap()).unwrap();
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(e.contains("after the end of the tar archive"), "{e}");

    // Zero padding (tar's record size) is fine.
    let mut tar = raw_member(ARCHIVE_MANIFEST, b"");
    tar.extend(vec![0u8; 10240 - 512]);
    std::fs::write(&path, zstd::encode_all(&tar[..], 1).unwrap()).unwrap();
    assert!(open_with(&path, &small_limits()).is_ok());
}

/// A zstd window above the decoder's limit is named as such, not as a corrupt archive.
#[test]
fn a_zstd_window_over_the_decoders_limit_is_named() {
    let (_d, path) = tmp();
    let mut tar = raw_member(ARCHIVE_MANIFEST, b"");
    tar.extend(vec![0u8; 1024]);
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    encoder.window_log(30).unwrap();
    encoder.long_distance_matching(true).unwrap();
    encoder.write_all(&tar).unwrap();
    std::fs::write(&path, encoder.finish().unwrap()).unwrap();
    let e = open_with(&path, &small_limits()).unwrap_err();
    assert!(
        e.contains("window of 1073741824 bytes")
            && e.contains("limit of 134217728 bytes")
            && !e.contains("corrupt"),
        "{e}"
    );
}

/// A generated chain beside mainnet-layout blocks: one would be ignored, so both are named.
#[test]
fn a_chain_beside_mainnet_blocks_is_refused_naming_both_layouts() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chain");
    let mut files = real_files();
    for f in ["chain.json", "blocks.rlp"] {
        files.push((f.to_owned(), std::fs::read(fixture.join(f)).unwrap()));
    }
    let (_d, path) = tmp();
    let mut members = vec![Member::File(ARCHIVE_MANIFEST.into(), manifest_of(&files))];
    members.extend(
        files
            .iter()
            .map(|(k, v)| Member::File(k.clone(), v.clone())),
    );
    archive(&path, &members);
    let source = open_with(&path, &small_limits()).unwrap();
    let e = gigagas_data::load(&source).unwrap_err().to_string();
    assert!(
        e.contains("chain.json") && e.contains("blocks/<n>/block.json") && e.contains("both"),
        "{e}"
    );
    // The same in a directory.
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in &files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let e = gigagas_data::load(&DataSource::open(dir.path()).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("chain.json") && e.contains("both"), "{e}");
}

/// A zeroed entry of `block_hashes.json` (no block hashes to zero) is refused naming it.
#[test]
fn a_zeroed_block_hash_is_refused() {
    let mut files = real_files();
    let (_, hashes) = files
        .iter_mut()
        .find(|(k, _)| k == "block_hashes.json")
        .expect("the sample has block_hashes.json");
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(hashes).unwrap();
    let key = map.keys().next().unwrap().clone();
    map.insert(key.clone(), format!("0x{}", "0".repeat(64)).into());
    *hashes = serde_json::to_vec(&map).unwrap();
    let e = gigagas_data::load(&DataSource::Archive {
        name: "zeroed".into(),
        files: files.into_iter().collect(),
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("block_hashes.json")
            && e.contains(&format!("block {key}"))
            && e.contains("all zeros"),
        "{e}"
    );
}

/// A FIFO where a data set is expected is named as a FIFO (opening it would block), and a
/// missing path as missing.
#[test]
fn a_fifo_given_as_a_data_set_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = DataSource::open(&fifo).unwrap_err().to_string();
        assert!(e.contains("is a FIFO, not a directory"), "{e}");
    }
    let e = DataSource::open(&dir.path().join("absent"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("absent") && e.contains("no such directory or archive file"),
        "{e}"
    );
}

/// `/proc` fields are read in bytes, and a missing file or key is `None`, never a panic.
#[test]
fn proc_fields_are_read_in_bytes_or_none() {
    use gigagas_data::chain::proc_kib_field;
    if std::path::Path::new("/proc/self/status").exists() {
        let rss = proc_kib_field("/proc/self/status", "VmRSS").unwrap();
        assert!(rss > 0 && rss.is_multiple_of(1024), "{rss}");
        // A key that is a prefix of another is not taken for it.
        assert_eq!(proc_kib_field("/proc/self/status", "VmRS"), None);
    }
    assert_eq!(proc_kib_field("/nonexistent", "VmRSS"), None);
    assert_eq!(proc_kib_field("/proc/self/status", "NoSuchKey"), None);
}
