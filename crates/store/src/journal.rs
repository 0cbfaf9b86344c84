//! The trie buffer journaled at the end of a run (geth's path database journals its node
//! buffer on shutdown): instead of writing the buffered trie nodes into the trie tables —
//! one transaction that copies a page of the B-tree for nearly every node, tens of
//! thousands of pages for a few blocks of a hot account — the buffer is written as one
//! sequential file beside the store ([`TRIE_JOURNAL`]), made durable, and the tries stay at
//! the block they were at (`trie_head`). The next run on the store takes the journal as its
//! trie buffer and goes on ([`Store::open_resuming`]); any other opener writes it into the
//! trie tables first ([`Store::open_with`]), so every reader sees a whole store.
//!
//! The journal names the block its nodes bring the tries to (the store's head when written)
//! and the block the tries were at. It is taken only while both still hold; a journal that
//! no longer matches the store (a block committed after it, a flush, a crash that rolled
//! the store back), or that does not decode, is removed and the tries are rebuilt from the
//! flat state as after any crash between flushes ([`Store::recover_trie`]): the flat state
//! is the truth, the journal only saves that work. The file is written under a temporary
//! name and renamed, not synced (a cache, never state): a process crash leaves the old
//! journal, the new one or none, and a system crash may leave a truncated or garbled one; a
//! CRC-32C over every byte before it ends the file, so a flipped bit or a lost write anywhere
//! is an unreadable journal (removed, the tries rebuilt), never a wrong node taken as a right
//! one (the nodes are trusted as written: the next block's root reads them).

use crate::{codec, kv::Backend, Error, Head, Store, TrieBuffer};
use crc::{Crc, Digest, Table as CrcTable, CRC_32_ISCSI};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

/// The journal's file name in the store's directory.
pub const TRIE_JOURNAL: &str = "trie.journal";
/// The name it is written under before the rename.
pub const TRIE_JOURNAL_TMP: &str = "trie.journal.tmp";
/// The first bytes of a journal (the format's version in its last two).
const MAGIC: &[u8; 8] = b"gg-trj02";
/// The journal's checksum (CRC-32C, 16-byte tables: ~GB/s, a few ms for a 20 MB journal).
pub(crate) static CRC: Crc<u32, CrcTable<16>> = Crc::<u32, CrcTable<16>>::new(&CRC_32_ISCSI);

/// A writer or reader that checksums every byte passing through it.
struct Summed<T> {
    inner: T,
    digest: Digest<'static, u32, CrcTable<16>>,
}

impl<T> Summed<T> {
    fn new(inner: T) -> Self {
        Self {
            inner,
            digest: CRC.digest(),
        }
    }
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.digest.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<R: Read> Read for Summed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.digest.update(&buf[..n]);
        Ok(n)
    }
}
const END: u8 = 0;
const WIPE: u8 = 1;
const PUT: u8 = 2;
const DELETE: u8 = 3;
/// Longest key and value a record may give (a trie node's key is at most 65 bytes, its
/// value at most ~550): a longer one is damage, refused before anything is allocated.
const MAX_KEY: usize = 1 << 10;
const MAX_VALUE: usize = 1 << 16;

/// What writing or reading a journal found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct JournalStats {
    /// The block the journal's nodes bring the tries to.
    pub through: u64,
    /// The block the trie tables are at (the journal continues them).
    pub base: u64,
    /// Blocks whose trie nodes it holds.
    pub blocks: u64,
    /// Nodes written or deleted, and storage tries wiped.
    pub entries: u64,
    /// The file's size, bytes.
    pub file_bytes: u64,
    /// Memory the buffer takes (estimated, as the trie buffer's bound counts it).
    pub buffer_bytes: u64,
    /// Time taken to write or read it, ns.
    pub ns: u64,
}

/// A journal taken as a run's trie buffer, and what reading it took.
pub type Resumed = (TrieBuffer, JournalStats);

/// A journal that does not decode: why, for the message that precedes the rebuild.
struct Unreadable(String);

impl From<std::io::Error> for Unreadable {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            return Unreadable("it ends early: truncated".into());
        }
        Unreadable(e.to_string())
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

fn write_bytes(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(&(bytes.len() as u32).to_le_bytes())?;
    w.write_all(bytes)
}

fn read_u8(r: &mut impl Read) -> Result<u8, Unreadable> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}

fn read_u64(r: &mut impl Read) -> Result<u64, Unreadable> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_bytes(r: &mut impl Read, max: usize, what: &str) -> Result<Vec<u8>, Unreadable> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    let len = u32::from_le_bytes(b) as usize;
    if len > max {
        return Err(Unreadable(format!(
            "a {what} of {len} bytes (at most {max})"
        )));
    }
    let mut out = vec![0u8; len];
    r.read_exact(&mut out)?;
    Ok(out)
}

fn read_head(r: &mut impl Read) -> Result<Head, Unreadable> {
    let bytes = read_bytes(r, 72, "head record")?;
    codec::decode_head(&bytes).map_err(|e| Unreadable(e.to_string()))
}

/// A journal's header: the blocks it joins.
struct Header {
    through: Head,
    base: Head,
    blocks: u64,
    buffer_bytes: u64,
}

fn read_header(r: &mut impl Read) -> Result<Header, Unreadable> {
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(Unreadable(format!(
            "it starts with {:?}, not {:?} (another format)",
            String::from_utf8_lossy(&magic),
            String::from_utf8_lossy(MAGIC)
        )));
    }
    let header = Header {
        through: read_head(r)?,
        base: read_head(r)?,
        blocks: read_u64(r)?,
        buffer_bytes: read_u64(r)?,
    };
    // The buffer holds the blocks after the tries' block, through its own: one each.
    if header.through.number.checked_sub(header.base.number) != Some(header.blocks)
        || header.blocks == 0
    {
        return Err(Unreadable(format!(
            "it says {} blocks from block {} to block {}",
            header.blocks, header.base.number, header.through.number
        )));
    }
    Ok(header)
}

/// The records after the header, into a buffer at `header.through`.
fn read_records(r: &mut impl Read, header: &Header) -> Result<(TrieBuffer, u64), Unreadable> {
    let mut diff = crate::KvDiff::default();
    let mut entries = 0u64;
    loop {
        let tag = read_u8(r)?;
        if tag == END {
            break;
        }
        let table = match read_u8(r)? {
            i if (i as usize) < TrieBuffer::TABLES.len() => TrieBuffer::TABLES[i as usize],
            i => return Err(Unreadable(format!("a record for table {i}"))),
        };
        let key = read_bytes(r, MAX_KEY, "key")?;
        match tag {
            WIPE => diff.delete_prefix(table, &key),
            PUT => diff.put(table, &key, &read_bytes(r, MAX_VALUE, "value")?),
            DELETE => diff.delete(table, &key),
            t => return Err(Unreadable(format!("a record of kind {t}"))),
        }
        entries += 1;
    }
    let recorded = read_u64(r)?;
    if recorded != entries {
        return Err(Unreadable(format!(
            "{entries} records, its trailer says {recorded}"
        )));
    }
    let buffer = TrieBuffer::resumed(diff, header.through, header.blocks);
    if buffer.bytes() as u64 != header.buffer_bytes {
        return Err(Unreadable(format!(
            "its records take {} bytes as a buffer, its header says {}",
            buffer.bytes(),
            header.buffer_bytes
        )));
    }
    Ok((buffer, entries))
}

/// The checksum after everything it covers, then nothing.
fn read_checksum<R: Read>(mut r: Summed<R>) -> Result<(), Unreadable> {
    let computed = r.digest.finalize();
    let mut b = [0u8; 4];
    r.inner.read_exact(&mut b)?;
    let recorded = u32::from_le_bytes(b);
    if recorded != computed {
        return Err(Unreadable(format!(
            "checksum {recorded:08x}, its bytes give {computed:08x}: damaged"
        )));
    }
    if r.inner.read(&mut [0u8; 1])? != 0 {
        return Err(Unreadable("bytes after its checksum".into()));
    }
    Ok(())
}

/// Writes `buffer` as a journal over tries at block `base` into `w` (flushed): the header,
/// the wipes, the nodes in key order, the end, the count and the checksum. Returns the
/// writer and the records written.
fn write_journal<W: Write>(w: W, buffer: &TrieBuffer, base: Head) -> std::io::Result<(W, u64)> {
    let through = buffer
        .through()
        .ok_or_else(|| std::io::Error::other("an empty trie buffer has no journal"))?;
    let mut w = Summed::new(w);
    w.write_all(MAGIC)?;
    write_bytes(&mut w, &codec::encode_head(&through))?;
    write_bytes(&mut w, &codec::encode_head(&base))?;
    w.write_all(&buffer.blocks().to_le_bytes())?;
    w.write_all(&(buffer.trie_bytes() as u64).to_le_bytes())?;
    let mut entries = 0u64;
    for (i, table) in TrieBuffer::TABLES.iter().enumerate() {
        for prefix in buffer.diff().wiped(*table) {
            w.write_all(&[WIPE, i as u8])?;
            write_bytes(&mut w, prefix)?;
            entries += 1;
        }
    }
    for (i, table) in TrieBuffer::TABLES.iter().enumerate() {
        for (key, value) in buffer.diff().entries(*table) {
            w.write_all(&[if value.is_some() { PUT } else { DELETE }, i as u8])?;
            write_bytes(&mut w, key)?;
            if let Some(v) = value {
                write_bytes(&mut w, v)?;
            }
            entries += 1;
        }
    }
    w.write_all(&[END])?;
    w.write_all(&entries.to_le_bytes())?;
    let sum = w.digest.clone().finalize();
    w.inner.write_all(&sum.to_le_bytes())?;
    w.inner.flush()?;
    Ok((w.inner, entries))
}

/// Everything after the header: the records into a buffer, then the checksum.
fn read_rest<R: Read>(mut r: Summed<R>, header: &Header) -> Result<(TrieBuffer, u64), Unreadable> {
    let read = read_records(&mut r, header)?;
    read_checksum(r)?;
    Ok(read)
}

/// Removes a file of the journal's, if it is there.
pub(crate) fn remove_file(path: &Path) -> Result<(), Error> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(path)(e)),
        _ => Ok(()),
    }
}

impl<B: Backend> Store<B> {
    /// Writes `buffer` (the blocks committed with [`Self::commit_block_flat`] since the last
    /// flush, the last of them the store's head) as the store's journal, written but not
    /// synced (a cache the flat state can rebuild: see the body); the trie tables are not
    /// touched. An empty buffer writes nothing. A buffer
    /// that does not end at the head, or a store whose tries are at the head, is an error.
    pub fn journal_trie(&self, buffer: &TrieBuffer) -> Result<JournalStats, Error> {
        let Some(through) = buffer.through() else {
            return Ok(JournalStats::default());
        };
        let t0 = Instant::now();
        let (base, head) = match (self.trie_lag()?, buffer.flat_base()) {
            // Flat writes held too (the write-ahead log holds them durably): the store's
            // head is where they start, and the log's replay brings it to the buffer's end.
            (lag, Some(flat)) => {
                let head = self.require_head()?;
                if head != flat {
                    return Err(Error::Backend(format!(
                        "{}: the buffer's flat writes start after block {}, but the store's head is block {}",
                        self.path.display(),
                        flat.number,
                        head.number
                    )));
                }
                (lag.map_or(head, |(t, _)| t), through)
            }
            (Some(lag), None) => lag,
            (None, None) => {
                return Err(Error::Backend(format!(
                    "{}: its tries are at its head: there is no trie buffer to journal",
                    self.path.display()
                )))
            }
        };
        if head != through || base.number >= through.number {
            return Err(Error::Backend(format!(
                "{}: the trie buffer holds blocks up to {}, but the store's tries are at block {} and its head at block {}: it does not continue them",
                self.path.display(),
                through.number,
                base.number,
                head.number
            )));
        }
        let tmp = self.path.join(TRIE_JOURNAL_TMP);
        // Created anew (O_EXCL): never through a link or file someone put there.
        remove_file(&tmp)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io(&tmp))?;
        let written = write_journal(BufWriter::with_capacity(1 << 20, file), buffer, base);
        // A failed write (a full disk) leaves no journal: the tries are rebuilt on open.
        let (file, entries) = match written
            .and_then(|(w, entries)| Ok((w.into_inner().map_err(|e| e.into_error())?, entries)))
        {
            Ok(done) => done,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(io(&tmp)(e));
            }
        };
        let file_bytes = file.metadata().map_err(io(&tmp))?.len();
        // Not synced: the journal is a cache of nodes the flat state rebuilds, never state.
        // A system crash before the OS writes it out leaves no journal, a truncated one or
        // one whose checksum fails: each is removed on open and the tries rebuilt, exactly as
        // after a crash without a journal. A process crash loses nothing (the page cache
        // keeps what was written). Syncing it made the end of a run wait for ~20 MB more
        // writes beside the flat state's own last sync.
        drop(file);
        let path = self.path.join(TRIE_JOURNAL);
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(JournalStats {
            through: through.number,
            base: base.number,
            blocks: buffer.blocks(),
            entries,
            file_bytes,
            buffer_bytes: buffer.trie_bytes() as u64,
            ns: t0.elapsed().as_nanos() as u64,
        })
    }

    /// Settles the store's journal, if it has one: taken as a trie buffer (and left until the
    /// store moves on) when it continues the store's tries and its buffer takes at most
    /// `keep` bytes; written into
    /// the trie tables (durably) when it continues them but is larger, or `keep` is 0;
    /// removed when it does not continue them or does not decode (the tries are then rebuilt
    /// by [`Self::recover_trie`]). `progress` is told what happens.
    pub(crate) fn settle_journal(
        &self,
        keep: u64,
        progress: &dyn Fn(&str),
    ) -> Result<Option<Resumed>, Error> {
        let path = self.path.join(TRIE_JOURNAL);
        remove_file(&self.path.join(TRIE_JOURNAL_TMP))?;
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let remove = || remove_file(&path);
        let t0 = Instant::now();
        let file_bytes = file.metadata().map_err(io(&path))?.len();
        let mut r = Summed::new(BufReader::with_capacity(1 << 20, file));
        // A journal that does not decode: said, removed, and the tries rebuilt.
        let unreadable = |Unreadable(why)| {
            progress(&format!(
                "{}: unreadable ({why}): removed; the tries are rebuilt from the state",
                path.display()
            ));
            remove()
        };
        let header = match read_header(&mut r) {
            Ok(h) => h,
            Err(e) => return unreadable(e).map(|()| None),
        };
        let lag = self.trie_lag()?;
        if lag != Some((header.base, header.through)) {
            // Written before the store moved on (or rolled back): its work is done or lost.
            // Same numbers with other hashes: another chain's journal, or a damaged header.
            let same_numbers = lag.is_some_and(|(t, h)| {
                t.number == header.base.number && h.number == header.through.number
            });
            progress(&format!(
                "{}: it takes the tries from block {} to block {}, but the store's tries are at {} and its state at block {}{}; removed",
                path.display(),
                header.base.number,
                header.through.number,
                lag.map_or(String::from("its head"), |(t, _)| format!("block {}", t.number)),
                self.require_head()?.number,
                if same_numbers {
                    ": the same numbers, but its blocks' hashes or roots are not the store's (another chain's journal, or a damaged one)"
                } else {
                    ": it no longer continues them"
                }
            ));
            remove()?;
            return Ok(None);
        }
        let (buffer, entries) = match read_rest(r, &header) {
            Ok(b) => b,
            Err(e) => return unreadable(e).map(|()| None),
        };
        let stats = JournalStats {
            through: header.through.number,
            base: header.base.number,
            blocks: header.blocks,
            entries,
            file_bytes,
            buffer_bytes: buffer.bytes() as u64,
            ns: t0.elapsed().as_nanos() as u64,
        };
        if keep > 0 && (buffer.bytes() as u64) <= keep {
            // Left in place: it stays valid until the taker commits a block (the head moves
            // on and the next open removes it), so a run that stops before that loses nothing.
            return Ok(Some((buffer, stats)));
        }
        progress(&format!(
            "{}: its trie nodes are at block {}, its state at block {}: writing the {} nodes of {} blocks the last run journaled into the trie tables",
            self.path.display(),
            header.base.number,
            header.through.number,
            entries,
            header.blocks
        ));
        self.flush_trie(&buffer)?;
        // Durable before the journal goes (a store opened with batched syncs).
        self.sync().map_err(|e| crate::at(&self.path, e))?;
        remove()?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::Table;

    fn head(n: u64) -> Head {
        Head {
            number: n,
            hash: alloy_primitives::B256::repeat_byte(n as u8),
            state_root: alloy_primitives::B256::repeat_byte(0xa0 | n as u8),
        }
    }

    /// A journal's bytes as `journal_trie` writes them (without a store).
    fn encode(buffer: &TrieBuffer, base: Head) -> Vec<u8> {
        write_journal(Vec::new(), buffer, base).unwrap().0
    }

    fn decode(bytes: &[u8]) -> Result<TrieBuffer, String> {
        let mut r = Summed::new(bytes);
        let h = read_header(&mut r).map_err(|e| e.0)?;
        read_rest(r, &h).map(|(b, _)| b).map_err(|e| e.0)
    }

    fn sample() -> TrieBuffer {
        let mut a = crate::KvDiff::default();
        a.put(Table::StorageTrie, &[7; 33], &[1, 2, 3]);
        a.put(Table::AccountTrie, &[1, 2], &[9; 40]);
        a.delete(Table::AccountTrie, &[1, 3]);
        let mut b = crate::KvDiff::default();
        b.delete_prefix(Table::StorageTrie, &[8; 32]);
        b.put(Table::StorageTrie, &[8; 34], &[5]);
        let mut buffer = TrieBuffer::default();
        buffer.merge(&a, head(5));
        buffer.merge(&b, head(6));
        buffer
    }

    #[test]
    fn every_flipped_bit_is_refused() {
        let bytes = encode(&sample(), head(4));
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                assert!(
                    decode(&flipped).is_err(),
                    "byte {at} bit {bit} flipped decoded"
                );
            }
        }
    }

    #[test]
    fn a_journal_reads_back_as_the_buffer_it_was_written_from() {
        let buffer = sample();
        let back = decode(&encode(&buffer, head(4))).unwrap();
        assert_eq!(back.diff(), buffer.diff());
        assert_eq!(back.through(), buffer.through());
        assert_eq!(back.blocks(), 2);
        assert_eq!(back.bytes(), buffer.bytes());
    }

    #[test]
    fn every_truncation_and_a_wrong_trailer_are_refused() {
        let bytes = encode(&sample(), head(4));
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut} decoded");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(decode(&extra).unwrap_err().contains("after its checksum"));
        let mut count = bytes.clone();
        let n = count.len();
        count[n - 12] ^= 1;
        assert!(decode(&count).unwrap_err().contains("trailer says"));
        let mut sum = bytes.clone();
        sum[n - 1] ^= 1;
        assert!(decode(&sum).unwrap_err().contains("damaged"));
        assert!(decode(&bytes[..n - 2]).unwrap_err().contains("truncated"));
        let mut magic = bytes;
        magic[0] = b'x';
        assert!(decode(&magic).unwrap_err().contains("another format"));
    }

    #[test]
    fn absurd_lengths_are_refused_before_allocating() {
        let mut bytes = encode(&sample(), head(4));
        // The first record's key length (after magic, two heads, two u64s, tag, table): the
        // length is refused before the checksum is reached.
        let at = 8 + (4 + 72) * 2 + 16 + 2;
        bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&bytes).unwrap_err().contains("at most"));
    }
}
