//! The precomputed table of G the kernel reads for u1·G: 32 windows × 256 entries (entry 0
//! unused, zeros), entry `d` of window `w` = d·2^(8w)·G in affine coordinates (x\[8\], y\[8\],
//! little-endian 32-bit limbs). Built on the host once per process with libsecp256k1 (an
//! independent implementation of the curve, so the kernel's table cannot share its bugs).

use secp256k1::{PublicKey, SecretKey, SECP256K1};
use std::sync::OnceLock;

/// Windows of 8 bits.
pub(crate) const WINDOWS: usize = 32;
/// Words per affine entry.
pub(crate) const ENTRY_WORDS: usize = 16;
/// Words in the table.
pub(crate) const TABLE_WORDS: usize = WINDOWS * 256 * ENTRY_WORDS;

/// The table (built on first use; about 0.2 s of one core).
pub(crate) fn g_table() -> Result<&'static [u32], String> {
    static TABLE: OnceLock<Result<Vec<u32>, String>> = OnceLock::new();
    match TABLE.get_or_init(build) {
        Ok(t) => Ok(t.as_slice()),
        Err(e) => Err(e.clone()),
    }
}

fn build() -> Result<Vec<u32>, String> {
    let mut table = vec![0u32; TABLE_WORDS];
    for w in 0..WINDOWS {
        for d in 1..256usize {
            // d << 8w as a 32-byte big-endian scalar: byte 31 - w is d (< n for every w, d).
            let mut k = [0u8; 32];
            k[31 - w] = d as u8;
            let sk = SecretKey::from_byte_array(&k).map_err(|e| format!("G table: {e}"))?;
            let pk = PublicKey::from_secret_key(SECP256K1, &sk).serialize_uncompressed();
            let at = (w * 256 + d) * ENTRY_WORDS;
            for (half, bytes) in [&pk[1..33], &pk[33..65]].into_iter().enumerate() {
                for j in 0..8 {
                    let b = 28 - 4 * j;
                    table[at + half * 8 + j] =
                        u32::from_be_bytes([bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3]]);
                }
            }
        }
    }
    Ok(table)
}
