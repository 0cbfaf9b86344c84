//! An archive bomb: 1 GiB of junk members (zeros, a few hundred KiB compressed) before a real
//! data set, or listed with their right hashes, must not be held in memory. Tests in their
//! own binary, one at a time, so that the process's peak resident size (`VmHWM`) measures
//! each load alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use std::io::{Read, Write};

/// Appends a member of `size` bytes read from `data` (a zero stream or a slice) to `builder`.
fn append(builder: &mut tar::Builder<impl Write>, name: &str, size: u64, data: impl Read) {
    let mut h = tar::Header::new_gnu();
    h.set_mode(0o644);
    h.set_size(size);
    h.set_cksum();
    builder.append_data(&mut h, name, data).unwrap();
}

/// Peak resident set size of this process, bytes (Linux `/proc/self/status`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One test at a time: the peak resident size is the process's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn junk_members_before_the_data_are_streamed_not_held() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.tar.zst");
    {
        let file = std::fs::File::create(&path).unwrap();
        let encoder = zstd::stream::Encoder::new(file, 1).unwrap().auto_finish();
        let mut builder = tar::Builder::new(encoder);
        for i in 0..4 {
            let size = 256u64 << 20;
            append(
                &mut builder,
                &format!("junk/{i}"),
                size,
                std::io::repeat(0).take(size),
            );
        }
        // The real data and, last (as older packs wrote it), a manifest listing only it.
        let manifest =
            b"0000000000000000000000000000000000000000000000000000000000000000  bytecodes.json\n";
        for (name, bytes) in [
            ("bytecodes.json", &b"{}"[..]),
            ("MANIFEST.sha256", &manifest[..]),
        ] {
            append(&mut builder, name, bytes.len() as u64, bytes);
        }
        builder.into_inner().unwrap().flush().unwrap();
    }
    assert!(std::fs::metadata(&path).unwrap().len() < 8 << 20);
    let before = peak_rss();
    let e = gigagas_data::DataSource::open(&path)
        .unwrap_err()
        .to_string();
    assert!(e.contains("junk/0") && e.contains("not listed"), "{e}");
    if let (Some(before), Some(after)) = (before, peak_rss()) {
        // 1 GiB of members went through; at most a few buffers may stay.
        assert!(
            after.saturating_sub(before) < 128 << 20,
            "peak RSS grew by {} MiB",
            (after - before) >> 20
        );
    }
}

/// The hostile trial's case: a small archive whose manifest lists 1 GiB of members with their
/// right hashes. They are unpacked to disk while hashed; none is held in memory.
#[test]
fn listed_members_with_their_right_hashes_are_not_held() {
    use sha2::Digest;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let size = 256u64 << 20;
    let zeros = {
        let mut h = sha2::Sha256::new();
        std::io::copy(&mut std::io::repeat(0).take(size), &mut h).unwrap();
        alloy_primitives::hex::encode(h.finalize())
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("listed.tar.zst");
    {
        let file = std::fs::File::create(&path).unwrap();
        let encoder = zstd::stream::Encoder::new(file, 1).unwrap().auto_finish();
        let mut builder = tar::Builder::new(encoder);
        let manifest: String = (0..4).map(|i| format!("{zeros}  junk/{i}\n")).collect();
        append(
            &mut builder,
            "MANIFEST.sha256",
            manifest.len() as u64,
            manifest.as_bytes(),
        );
        for i in 0..4 {
            append(
                &mut builder,
                &format!("junk/{i}"),
                size,
                std::io::repeat(0).take(size),
            );
        }
        builder.into_inner().unwrap().flush().unwrap();
    }
    assert!(std::fs::metadata(&path).unwrap().len() < 8 << 20);
    let before = peak_rss();
    let source = gigagas_data::DataSource::open(&path).unwrap();
    assert_eq!(source.held_bytes(), 0);
    let after = peak_rss();
    let e = gigagas_data::load(&source).unwrap_err().to_string();
    assert!(e.contains("junk/0") && e.contains("does not read"), "{e}");
    if let (Some(before), Some(after)) = (before, after) {
        // 1 GiB of listed members went through; at most a few buffers may stay.
        assert!(
            after.saturating_sub(before) < 128 << 20,
            "peak RSS grew by {} MiB",
            (after - before) >> 20
        );
    }
}
