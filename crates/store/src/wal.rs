//! The write-ahead log of the flat state (`blocks.wal`): a block's accounts, slots, codes,
//! block hash and head appended as one record, durable under the sync policy, while the
//! store's B-tree is written only when the run's buffer fills (geth's path database keeps
//! its flat-state diffs in memory the same way and journals them). A hot-account block
//! changes ~4,200 slot values, ~0.4 MB; written into the B-tree it copies ~4,000 of the
//! storage table's leaf pages, ~23 MB at 2M slots. With the log, a block writes what it
//! changed, sequentially; the buffer's flush writes many blocks' pages once.
//!
//! The store's own head stays at the buffer's last flush; the log holds every block after
//! it. Any open that may write ([`Store::open_resuming`], so [`Store::open`] too) replays
//! the log into the store first, each record as the block's flat commit
//! ([`Store::commit_blocks_flat`]: its tries are then rebuilt or taken from the trie
//! journal, as after any crash between flushes), syncs the store and removes the log. So
//! every reader sees a whole store at the log's last block, and `db verify` checks it from
//! scratch.
//!
//! Format: a header (magic, the head the log continues, CRC-32C of both), then records,
//! each its payload's length and CRC-32C, then the payload: the block's parent and head, an
//! entry count and the entries (wipes, puts and deletes of the flat tables). A record is
//! appended with one write. Replay stops at the first record cut short or whose checksum
//! fails and drops the rest, saying how many bytes (RocksDB's point-in-time recovery): a
//! process crash leaves at most the last record cut short, a system crash may garble any
//! record after the last sync, and no block after the last sync was acknowledged durable.
//! A damaged header is refused by name: the blocks behind it are state.

use crate::{
    codec,
    journal::CRC,
    kv::{KvRead, Table},
    Error, Head, KvDiff, PendingBlock, Store, FLAT_TABLES,
};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The log's file name in the store's directory.
pub const WAL_FILE: &str = "blocks.wal";
/// The name a new log is written under before the rename.
pub(crate) const WAL_TMP: &str = "blocks.wal.tmp";
/// The log's older segment while a background flush writes its blocks into the store
/// ([`Wal::rotate`]); replayed before [`WAL_FILE`], removed once the flush is durable
/// ([`Store::retire_wal_segment`]).
pub const WAL_OLD: &str = "blocks.wal.1";
/// The log's first bytes (the format's version in the last two).
const MAGIC: &[u8; 8] = b"gg-wal01";
const HEADER_BYTES: usize = 8 + 72 + 4;
/// A record's payload above this is damage (a 1-Ggas block of fresh slots writes ~100 MB):
/// refused before anything is allocated.
const MAX_RECORD: u64 = 1 << 31;
/// Blocks replayed per write transaction.
const REPLAY_BATCH: usize = 64;
const WIPE: u8 = 1;
const PUT: u8 = 2;
const DELETE: u8 = 3;

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// The open log a run appends its blocks to.
#[derive(Debug)]
pub struct Wal {
    file: File,
    path: PathBuf,
    /// The block the last record brings the store to (the header's head before any).
    last: Head,
    /// Bytes in the file (header and whole records).
    len: u64,
    records: u64,
}

/// What one append wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalAppend {
    /// The record's bytes, header included.
    pub bytes: u64,
    /// Entries it holds.
    pub entries: u64,
}

/// What replaying a log into the store did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalReplay {
    /// Blocks written into the store.
    pub blocks: u64,
    /// Records skipped: their blocks were already in the store (a crash after the flush
    /// that wrote them, before the log was reset).
    pub skipped: u64,
    /// Bytes of a last record cut short or garbled, dropped.
    pub torn_bytes: u64,
    /// The file's size.
    pub file_bytes: u64,
    /// Time taken, ns (the store's sync included).
    pub ns: u64,
}

fn encode_header(base: &Head) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&codec::encode_head(base));
    let sum = CRC.checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// One block's record: length, checksum, payload.
fn encode_record(parent: &Head, head: &Head, diff: &KvDiff) -> (Vec<u8>, u64) {
    // One buffer: the record's length and checksum, then the payload, patched in at the end.
    let mut out = Vec::with_capacity(12 + 152 + diff.bytes());
    out.extend_from_slice(&[0u8; 12]);
    out.extend_from_slice(&codec::encode_head(parent));
    out.extend_from_slice(&codec::encode_head(head));
    let count_at = out.len();
    out.extend_from_slice(&[0u8; 8]);
    let mut entries = 0u64;
    for (i, table) in FLAT_TABLES.iter().enumerate() {
        for prefix in diff.wiped(*table) {
            out.extend_from_slice(&[WIPE, i as u8]);
            put_bytes(&mut out, prefix);
            entries += 1;
        }
    }
    for (i, table) in FLAT_TABLES.iter().enumerate() {
        for (key, value) in diff.entries(*table) {
            out.extend_from_slice(&[if value.is_some() { PUT } else { DELETE }, i as u8]);
            put_bytes(&mut out, key);
            if let Some(v) = value {
                put_bytes(&mut out, v);
            }
            entries += 1;
        }
    }
    out[count_at..count_at + 8].copy_from_slice(&entries.to_le_bytes());
    let len = (out.len() - 12) as u64;
    let sum = CRC.checksum(&out[12..]);
    out[..8].copy_from_slice(&len.to_le_bytes());
    out[8..12].copy_from_slice(&sum.to_le_bytes());
    (out, entries)
}

/// A payload whose checksum held but which does not decode: damage, never a torn write
/// (the caller names the file).
fn bad(what: String) -> Error {
    Error::Backend(what)
}

/// Decodes a record's payload (its checksum already checked).
fn decode_record(p: &[u8]) -> Result<(Head, Head, KvDiff), Error> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], Error> {
        let s = p
            .get(at..at + n)
            .ok_or_else(|| bad(format!("a record ends early at byte {at} of {}", p.len())))?;
        at += n;
        Ok(s)
    };
    let parent = codec::decode_head(take(72)?)?;
    let head = codec::decode_head(take(72)?)?;
    let count = u64::from_le_bytes(take(8)?.try_into().unwrap_or_default());
    let mut diff = KvDiff::default();
    for _ in 0..count {
        let tag = take(1)?[0];
        let table = *FLAT_TABLES
            .get(take(1)?[0] as usize)
            .ok_or_else(|| bad("a record names a table that is not a flat one".into()))?;
        let len = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default()) as usize;
        let key = take(len)?.to_vec();
        match tag {
            WIPE => diff.delete_prefix(table, &key),
            DELETE => diff.delete(table, &key),
            PUT => {
                let len = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default()) as usize;
                diff.put(table, &key, take(len)?);
            }
            t => return Err(bad(format!("an entry of kind {t}"))),
        }
    }
    if at != p.len() {
        return Err(bad(format!(
            "{} bytes after a record's {count} entries",
            p.len() - at
        )));
    }
    Ok((parent, head, diff))
}

/// The least payload: two heads and the entry count. A shorter length is a torn tail (a
/// tail of zeros reads as length 0 with checksum 0, which the empty payload's CRC-32C is).
const MIN_RECORD: u64 = 72 + 72 + 8;
/// A payload longer than this has its checksum checked in chunks before it is allocated.
const CHECK_FIRST: u64 = 1 << 20;

/// Reads the next record: `Ok(None)` at the end of the file, `Err(n)` for a record cut
/// short or whose checksum fails (`n`: the bytes from its start to the end of the file).
/// Memory: the payload, allocated only once its checksum held when it is large.
fn read_record<R: Read + std::io::Seek>(r: &mut R, left: u64) -> Result<Option<Vec<u8>>, u64> {
    if left == 0 {
        return Ok(None);
    }
    let mut h = [0u8; 12];
    if left < 12 || r.read_exact(&mut h).is_err() {
        return Err(left);
    }
    let len = u64::from_le_bytes(h[..8].try_into().unwrap_or_default());
    let sum = u32::from_le_bytes(h[8..].try_into().unwrap_or_default());
    if !(MIN_RECORD..=MAX_RECORD).contains(&len) || len > left - 12 {
        return Err(left);
    }
    if len > CHECK_FIRST {
        // A damaged length must not make the reader allocate it: the checksum first.
        let mut digest = CRC.digest();
        let mut chunk = vec![0u8; CHECK_FIRST as usize];
        let mut rest = len;
        while rest > 0 {
            let n = rest.min(CHECK_FIRST) as usize;
            if r.read_exact(&mut chunk[..n]).is_err() {
                return Err(left);
            }
            digest.update(&chunk[..n]);
            rest -= n as u64;
        }
        if digest.finalize() != sum || r.seek(std::io::SeekFrom::Current(-(len as i64))).is_err() {
            return Err(left);
        }
    }
    let mut p = vec![0u8; len as usize];
    if r.read_exact(&mut p).is_err() || CRC.checksum(&p) != sum {
        return Err(left);
    }
    Ok(Some(p))
}

impl Wal {
    /// Creates a new, empty log in `dir` continuing the store at `base` (its head), replacing
    /// the one there: written under a temporary name, synced, renamed into place and the
    /// directory synced, so a crash leaves the old log or the new one.
    pub(crate) fn create(dir: &Path, base: Head) -> Result<Self, Error> {
        let tmp = dir.join(WAL_TMP);
        crate::journal::remove_file(&tmp)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io(&tmp))?;
        let header = encode_header(&base);
        file.write_all(&header).map_err(io(&tmp))?;
        file.sync_data().map_err(io(&tmp))?;
        let path = dir.join(WAL_FILE);
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        sync_dir(dir)?;
        Ok(Self {
            file,
            path,
            last: base,
            len: header.len() as u64,
            records: 0,
        })
    }

    /// Appends `block`'s flat writes as one record. It must follow the last one (its parent
    /// is the log's last head). A failed write is cut off again (the file ends at the last
    /// whole record) and is an error: the block is not in the log.
    pub fn append(&mut self, block: &PendingBlock) -> Result<WalAppend, Error> {
        if block.parent != self.last {
            return Err(Error::Backend(format!(
                "{}: block {} follows block {}, but the log's last block is {}",
                self.path.display(),
                block.head.number,
                block.parent.number,
                self.last.number
            )));
        }
        let (record, entries) = encode_record(&block.parent, &block.head, &block.diff);
        if let Err(e) = self.file.write_all(&record) {
            // A full disk: the record's start may be in the file. Cut back to the last whole
            // one (best effort: replay drops a torn tail anyway).
            let _ = self.file.set_len(self.len);
            let _ = std::io::Seek::seek(&mut self.file, std::io::SeekFrom::Start(self.len));
            return Err(io(&self.path)(e));
        }
        self.len += record.len() as u64;
        self.records += 1;
        self.last = block.head;
        Ok(WalAppend {
            bytes: record.len() as u64,
            entries,
        })
    }

    /// Starts a new segment at the log's last block, keeping the current one as [`WAL_OLD`]
    /// until the flush of its blocks is durable ([`Store::retire_wal_segment`]): the blocks
    /// after it are appended to the new one meanwhile. Refused while an older segment is
    /// still there (one flush at a time). A crash in between leaves the old segment alone,
    /// or both: replay reads them in order.
    pub fn rotate(&mut self) -> Result<(), Error> {
        let dir = self.path.parent().map(Path::to_owned).unwrap_or_default();
        let old = dir.join(WAL_OLD);
        if old.exists() {
            return Err(Error::Backend(format!(
                "{}: the log's older segment is still there: its flush has not been retired",
                old.display()
            )));
        }
        // Its records durable before the newer segment takes the next blocks: a system crash
        // must not leave a gap that the newer segment's synced records lie beyond.
        self.sync()?;
        std::fs::rename(&self.path, &old).map_err(io(&old))?;
        *self = Self::create(&dir, self.last)?;
        Ok(())
    }

    /// The block the log's last record brings the store to.
    pub fn last(&self) -> Head {
        self.last
    }

    /// Records appended since the log was created.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Makes every record appended so far durable.
    pub fn sync(&self) -> Result<(), Error> {
        self.file.sync_data().map_err(io(&self.path))
    }

    /// [`Self::sync`] on its own thread ([`crate::PendingSync::wait`] gives its result); on
    /// this one where no thread can be started.
    pub fn sync_in_background(&self) -> crate::PendingSync {
        let path = self.path.clone();
        match self.file.try_clone() {
            Ok(file) => {
                crate::PendingSync::spawn("wal-sync", move || file.sync_data().map_err(io(&path)))
            }
            Err(e) => crate::PendingSync::done(Err(io(&path)(e))),
        }
    }
}

/// The head the write-ahead log in store directory `dir` brings the store to: its last
/// whole record's (`None`: no log, or no whole record). For a reader beside the run that
/// appends to it (the store's own head stays at the last flush meanwhile); reads the file,
/// never writes.
pub fn wal_head(dir: &Path) -> Result<Option<Head>, Error> {
    // The newer segment's last record, else the older one's (a segment just started).
    match segment_head(&dir.join(WAL_FILE))? {
        Some(head) => Ok(Some(head)),
        None => segment_head(&dir.join(WAL_OLD)),
    }
}

/// [`wal_head`] of one segment.
fn segment_head(path: &Path) -> Result<Option<Head>, Error> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let mut left = file.metadata().map_err(io(path))?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER_BYTES];
    if left < HEADER_BYTES as u64 || r.read_exact(&mut header).is_err() {
        return Ok(None);
    }
    left -= HEADER_BYTES as u64;
    let mut last = None;
    while let Ok(Some(p)) = read_record(&mut r, left) {
        left -= 12 + p.len() as u64;
        last = Some(codec::decode_head(p.get(72..144).unwrap_or_default())?);
    }
    Ok(last)
}

/// Syncs a directory (a rename in it made durable).
fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir))?;
    }
    Ok(())
}

impl<B: crate::kv::Backend> Store<B> {
    /// Removes the log's older segment ([`Wal::rotate`]) once the flush of its blocks is
    /// durable (after [`Self::flush_trie`] and [`Self::sync`]).
    pub fn retire_wal_segment(&self) -> Result<(), Error> {
        crate::journal::remove_file(&self.path.join(WAL_OLD))?;
        sync_dir(&self.path)
    }

    /// Starts a new write-ahead log at the store's head (replacing any: call it only on a
    /// store whose log was replayed, which every writable open does).
    pub fn create_wal(&self) -> Result<Wal, Error> {
        Wal::create(&self.path, self.require_head()?)
    }

    /// Replays the store's write-ahead log, if it has one, into the store (each block's flat
    /// commit; its tries are left to the trie journal or [`Self::recover_trie`]), syncs the
    /// store and removes the log. Records of blocks the store already holds are skipped
    /// (their hashes checked); a last record cut short is dropped and said. A header that
    /// does not decode, a record whose checksum holds but does not decode, or a block that
    /// does not follow the store is an error naming the file: the log holds state.
    pub(crate) fn replay_wal(&self, progress: &dyn Fn(&str)) -> Result<Option<WalReplay>, Error> {
        crate::journal::remove_file(&self.path.join(WAL_TMP))?;
        // The older segment first (a flush of its blocks was running), then the log; both
        // removed only once both replayed (an error leaves them as they are).
        let mut done: Option<WalReplay> = None;
        for name in [WAL_OLD, WAL_FILE] {
            if let Some(r) =
                self.replay_segment(name, done.is_some_and(|d| d.torn_bytes > 0), progress)?
            {
                let d = done.get_or_insert_with(WalReplay::default);
                d.blocks += r.blocks;
                d.skipped += r.skipped;
                d.torn_bytes += r.torn_bytes;
                d.file_bytes += r.file_bytes;
                d.ns += r.ns;
            }
        }
        if done.is_some() {
            // Durable before the log goes (a store opened with batched syncs).
            self.sync()?;
            for name in [WAL_OLD, WAL_FILE] {
                crate::journal::remove_file(&self.path.join(name))?;
            }
            sync_dir(&self.path)?;
        }
        Ok(done)
    }

    /// [`Self::replay_wal`] of one segment.
    /// `after_tear`: the older segment was cut short, so any record here lies beyond a gap.
    fn replay_segment(
        &self,
        name: &str,
        after_tear: bool,
        progress: &dyn Fn(&str),
    ) -> Result<Option<WalReplay>, Error> {
        let path = self.path.join(name);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let t0 = Instant::now();
        let file_bytes = file.metadata().map_err(io(&path))?.len();
        let mut r = BufReader::with_capacity(1 << 20, file);
        let refuse = |why: String| {
            Error::Backend(format!(
                "{}: {why}; the blocks it holds after the store's head cannot be replayed (move it away to open the store at its own head)",
                path.display()
            ))
        };
        let mut header = [0u8; HEADER_BYTES];
        if file_bytes < HEADER_BYTES as u64 || r.read_exact(&mut header).is_err() {
            return Err(refuse(format!(
                "{file_bytes} bytes, shorter than its {HEADER_BYTES}-byte header"
            )));
        }
        let (body, sum) = header.split_at(HEADER_BYTES - 4);
        if &body[..8] != MAGIC || CRC.checksum(body).to_le_bytes() != sum {
            return Err(refuse(
                "its header is not a gigagas log's, or its checksum fails".into(),
            ));
        }
        let base = codec::decode_head(&body[8..])?;
        let mut head = self.require_head()?;
        let mut left = file_bytes - HEADER_BYTES as u64;
        if after_tear && left > 0 {
            return Err(refuse(format!(
                "{WAL_OLD} was cut short before block {}, and this newer segment holds what follows it (the older one was synced before this one started: damage, not a crash)",
                base.number
            )));
        }
        if base.number > head.number && left > 0 {
            return Err(refuse(format!(
                "it continues block {}, but the store's head is block {}",
                base.number, head.number
            )));
        }
        let mut stats = WalReplay {
            file_bytes,
            ..WalReplay::default()
        };
        let mut batch: Vec<PendingBlock> = Vec::new();
        let kv = self.read_kv()?;
        loop {
            let p = match read_record(&mut r, left) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(torn) => {
                    stats.torn_bytes = torn;
                    progress(&format!(
                        "{}: its last {torn} bytes start with a record cut short or garbled (a crash while the log was written after its last sync): dropped from there on",
                        path.display()
                    ));
                    break;
                }
            };
            left -= 12 + p.len() as u64;
            let (parent, block, diff) = decode_record(&p).map_err(|e| {
                refuse(match e {
                    Error::Backend(why) => why,
                    e => e.to_string(),
                })
            })?;
            if block.number <= head.number && stats.blocks == 0 && batch.is_empty() {
                // Written into the store by a flush the log's reset did not follow.
                let stored = kv.get(Table::BlockHashes, &block.number.to_be_bytes())?;
                if stored.as_deref() != Some(block.hash.as_slice()) {
                    return Err(refuse(format!(
                        "its block {} has hash {}, the store's block {} another: another chain's log",
                        block.number, block.hash, block.number
                    )));
                }
                stats.skipped += 1;
                continue;
            }
            if parent != head {
                return Err(refuse(format!(
                    "its block {} follows block {} ({}), but the store is at block {} ({})",
                    block.number, parent.number, parent.hash, head.number, head.hash
                )));
            }
            head = block;
            batch.push(PendingBlock {
                parent,
                head: block,
                diff: Arc::new(diff),
            });
            if batch.len() >= REPLAY_BATCH {
                stats.blocks += batch.len() as u64;
                self.commit_blocks_flat(&std::mem::take(&mut batch))?;
            }
        }
        drop(kv);
        if !batch.is_empty() {
            stats.blocks += batch.len() as u64;
            self.commit_blocks_flat(&batch)?;
        }
        stats.ns = t0.elapsed().as_nanos() as u64;
        if stats.blocks > 0 || stats.skipped > 0 {
            progress(&format!(
                "{}: replayed {} block(s) of the last run's write-ahead log into the store (now at block {}; {} already there) in {:.2} s",
                path.display(),
                stats.blocks,
                head.number,
                stats.skipped,
                stats.ns as f64 / 1e9
            ));
        }
        Ok(Some(stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::B256;

    fn head(n: u64) -> Head {
        Head {
            number: n,
            hash: B256::with_last_byte(n as u8),
            state_root: B256::with_last_byte(100 + n as u8),
        }
    }

    fn sample() -> KvDiff {
        let mut d = KvDiff::default();
        d.put(Table::Accounts, &[1; 32], b"acct");
        d.put(Table::Storage, &[2; 64], &[7]);
        d.delete(Table::Storage, &[3; 64]);
        d.delete_prefix(Table::Storage, &[4; 32]);
        d.put(Table::Meta, b"head", &codec::encode_head(&head(2)));
        d
    }

    #[test]
    fn a_record_reads_back_as_the_block_it_was_written_from() {
        let (rec, entries) = encode_record(&head(1), &head(2), &sample());
        assert_eq!(entries, 5);
        let p = read_record(&mut std::io::Cursor::new(&rec[..]), rec.len() as u64)
            .unwrap()
            .unwrap();
        let (parent, h, diff) = decode_record(&p).unwrap();
        assert_eq!((parent, h), (head(1), head(2)));
        for t in FLAT_TABLES {
            assert_eq!(
                diff.entries(t).collect::<Vec<_>>(),
                sample().entries(t).collect::<Vec<_>>()
            );
            assert_eq!(
                diff.wiped(t).collect::<Vec<_>>(),
                sample().wiped(t).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn every_truncation_and_every_flipped_bit_is_a_torn_record() {
        let (rec, _) = encode_record(&head(1), &head(2), &sample());
        for cut in 0..rec.len() {
            assert_eq!(
                read_record(&mut std::io::Cursor::new(&rec[..cut]), cut as u64),
                if cut == 0 { Ok(None) } else { Err(cut as u64) },
                "cut at {cut}"
            );
        }
        for bit in 0..rec.len() * 8 {
            let mut bad = rec.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let n = bad.len() as u64;
            // A flipped length may still fit the file only if it shrank: then the checksum
            // covers other bytes and fails.
            assert!(
                read_record(&mut std::io::Cursor::new(&bad[..]), n).is_err(),
                "bit {bit} flipped read as a whole record"
            );
        }
    }

    #[test]
    fn an_absurd_length_is_refused_before_allocating() {
        let mut rec = [0u8; 12];
        rec[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            read_record(&mut std::io::Cursor::new(&rec[..]), 1 << 40),
            Err(1 << 40)
        );
        // A length within the bound over a file of zeros (a sparse or zero-filled tail):
        // the checksum, read in chunks, fails before the payload is allocated.
        let mut big = vec![0u8; 12 + (3 << 20)];
        big[..8].copy_from_slice(&(3u64 << 20).to_le_bytes());
        big[8..12].copy_from_slice(&0x1234_5678u32.to_le_bytes());
        let n = big.len() as u64;
        assert_eq!(read_record(&mut std::io::Cursor::new(&big[..]), n), Err(n));
    }

    #[test]
    fn a_tail_of_zeros_is_a_torn_record() {
        // Length 0, checksum 0: the empty payload's CRC-32C is 0, so only the least length
        // tells it from a record.
        for zeros in [12usize, 100, 4096] {
            let tail = vec![0u8; zeros];
            assert_eq!(
                read_record(&mut std::io::Cursor::new(&tail[..]), zeros as u64),
                Err(zeros as u64)
            );
        }
    }
}
