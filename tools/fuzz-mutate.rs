//! Byte-level mutation of real inputs for the parser fuzz tests (included with `#[path]` by
//! each crate's `tests/fuzz.rs`). A mutation list is drawn by proptest, so failures shrink and
//! the case count follows `PROPTEST_CASES` (CI: the default of each test; `scripts/fuzz.sh`:
//! many more).

use proptest::prelude::*;

/// One edit of a byte string.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Set the byte at (position mod len) to a value.
    Set(usize, u8),
    /// Flip one bit.
    Flip(usize, u8),
    /// Insert a byte.
    Insert(usize, u8),
    /// Delete a run of up to 16 bytes.
    Delete(usize, u8),
    /// Cut everything after a position.
    Truncate(usize),
    /// Copy a run of up to 64 bytes to another position (duplicates structure: keys, lists).
    Splice(usize, usize, u8),
    /// Overwrite with an "interesting" token (JSON / RLP edge values).
    Token(usize, u8),
}

const TOKENS: &[&[u8]] = &[
    b"0x",
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"null",
    b"-1",
    b"1e400",
    b"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    b"18446744073709551616",
    b"\xc0",
    b"\xf8\xff",
    b"\xb9\xff\xff",
    b"\xff\xff\xff\xff",
    b"\"0x\"",
    b"true",
    b"[]",
    b"{}",
];

/// Up to `max` random edits.
pub fn edits(max: usize) -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
        (any::<usize>(), 0u8..8).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), 1u8..16).prop_map(|(p, n)| Edit::Delete(p, n)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), any::<usize>(), 1u8..64).prop_map(|(a, b, n)| Edit::Splice(a, b, n)),
        (any::<usize>(), 0..TOKENS.len() as u8).prop_map(|(p, t)| Edit::Token(p, t)),
    ];
    prop::collection::vec(edit, 1..=max)
}

/// `input` with `edits` applied.
pub fn apply(input: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = input.to_vec();
    for e in edits {
        let len = out.len().max(1);
        match *e {
            Edit::Set(p, b) if !out.is_empty() => out[p % len] = b,
            Edit::Flip(p, bit) if !out.is_empty() => out[p % len] ^= 1 << bit,
            Edit::Insert(p, b) => out.insert(p % (out.len() + 1), b),
            Edit::Delete(p, n) if !out.is_empty() => {
                let at = p % len;
                let end = (at + n as usize).min(out.len());
                out.drain(at..end);
            }
            Edit::Truncate(p) => out.truncate(p % (out.len() + 1)),
            Edit::Splice(a, b, n) if !out.is_empty() => {
                let from = a % len;
                let end = (from + n as usize).min(out.len());
                let run = out[from..end].to_vec();
                let at = b % (out.len() + 1);
                out.splice(at..at, run);
            }
            Edit::Token(p, t) => {
                let at = p % (out.len() + 1);
                let token = TOKENS[t as usize % TOKENS.len()];
                let end = (at + token.len()).min(out.len());
                out.splice(at..end, token.iter().copied());
            }
            _ => {}
        }
    }
    out
}

/// Structure-aware variant for JSON inputs: the `pick`-th string or number leaf (modulo their
/// count) has `edits` applied to its text, so the document stays valid JSON and the parser
/// behind the JSON layer (hex fields, RLP strings, numbers) is what gets exercised. `None` if
/// `input` is not JSON.
#[allow(dead_code)]
pub fn apply_to_json_leaf(input: &[u8], pick: usize, edits: &[Edit]) -> Option<Vec<u8>> {
    use serde_json::Value;
    fn count(v: &Value) -> usize {
        match v {
            Value::Object(m) => m.values().map(count).sum(),
            Value::Array(a) => a.iter().map(count).sum(),
            Value::String(_) | Value::Number(_) => 1,
            _ => 0,
        }
    }
    /// Mutates the `n`-th leaf below `v`; returns how many leaves `v` holds when `n` is beyond.
    fn visit(v: &mut Value, n: &mut usize, edits: &[Edit]) -> bool {
        match v {
            Value::Object(m) => m.values_mut().any(|v| visit(v, n, edits)),
            Value::Array(a) => a.iter_mut().any(|v| visit(v, n, edits)),
            Value::String(_) | Value::Number(_) if *n > 0 => {
                *n -= 1;
                false
            }
            Value::String(s) => {
                *s = String::from_utf8_lossy(&apply(s.as_bytes(), edits)).into_owned();
                true
            }
            Value::Number(num) => {
                let text =
                    String::from_utf8_lossy(&apply(num.to_string().as_bytes(), edits)).into_owned();
                *v = match serde_json::from_str::<serde_json::Number>(&text) {
                    Ok(num) => Value::Number(num),
                    Err(_) => Value::String(text),
                };
                true
            }
            _ => false,
        }
    }
    let mut doc: Value = serde_json::from_slice(input).ok()?;
    let total = count(&doc);
    if total > 0 {
        let mut n = pick % total;
        visit(&mut doc, &mut n, edits);
    }
    serde_json::to_vec(&doc).ok()
}

/// The case count: `PROPTEST_CASES` when set (`scripts/fuzz.sh`), else `default` (CI).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
