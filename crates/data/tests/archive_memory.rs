//! An archive bomb: 1 GiB of junk members (zeros, a few hundred KiB compressed) before a real
//! data set must not be held in memory. One test in its own binary, so that the process's
//! peak resident size (`VmHWM`) measures this load alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use std::io::{Read, Write};

/// Peak resident set size of this process, bytes (Linux `/proc/self/status`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn junk_members_before_the_data_are_streamed_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.tar.zst");
    {
        let file = std::fs::File::create(&path).unwrap();
        let encoder = zstd::stream::Encoder::new(file, 1).unwrap().auto_finish();
        let mut builder = tar::Builder::new(encoder);
        for i in 0..4 {
            let size = 256u64 << 20;
            let mut h = tar::Header::new_gnu();
            h.set_mode(0o644);
            h.set_size(size);
            h.set_cksum();
            builder
                .append_data(&mut h, format!("junk/{i}"), std::io::repeat(0).take(size))
                .unwrap();
        }
        // The real data and, last (as older packs wrote it), a manifest listing only it.
        let manifest =
            b"0000000000000000000000000000000000000000000000000000000000000000  bytecodes.json\n";
        for (name, bytes) in [
            ("bytecodes.json", &b"{}"[..]),
            ("MANIFEST.sha256", &manifest[..]),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_mode(0o644);
            h.set_size(bytes.len() as u64);
            h.set_cksum();
            builder.append_data(&mut h, name, bytes).unwrap();
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
