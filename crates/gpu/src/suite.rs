//! The verification suite: random and adversarial signatures, and the comparison of any
//! recovery (the GPU, the host build of the kernel) with libsecp256k1 ([`crate::cpu`]).
//!
//! Deterministic for a seed, generated in parallel.

use crate::SigInput;
use alloy_primitives::{uint, Address, B256, U256};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use secp256k1::{Message, PublicKey, SecretKey, SECP256K1};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The group order n.
pub const N: U256 = uint!(0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141_U256);
/// The field prime p.
pub const P: U256 = uint!(0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F_U256);

/// One signature of the suite and the class it was made for.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The signature.
    pub sig: SigInput,
    /// What it tests.
    pub class: &'static str,
}

fn case(class: &'static str, hash: U256, r: U256, s: U256, y_parity: bool) -> Case {
    Case {
        sig: SigInput {
            hash: B256::from(hash.to_be_bytes::<32>()),
            r,
            s,
            y_parity,
        },
        class,
    }
}

fn random_u256(rng: &mut StdRng) -> U256 {
    U256::from_be_bytes(rng.random::<[u8; 32]>())
}

/// A random scalar in [1, n) as a secret key.
fn random_key(rng: &mut StdRng) -> (SecretKey, U256) {
    loop {
        let bytes = rng.random::<[u8; 32]>();
        if let Ok(sk) = SecretKey::from_byte_array(&bytes) {
            return (sk, U256::from_be_bytes(bytes));
        }
    }
}

/// x and the parity of y of k·G.
fn point_of(sk: &SecretKey) -> (U256, bool) {
    let ser = PublicKey::from_secret_key(SECP256K1, sk).serialize_uncompressed();
    (U256::from_be_slice(&ser[1..33]), ser[64] & 1 == 1)
}

/// A point with x < n: its key, x, y-parity.
fn random_point(rng: &mut StdRng) -> (U256, U256, bool) {
    loop {
        let (sk, k) = random_key(rng);
        let (x, odd) = point_of(&sk);
        if x < N {
            return (k, x, odd);
        }
    }
}

fn random_scalar(rng: &mut StdRng) -> U256 {
    loop {
        let v = random_u256(rng);
        if !v.is_zero() && v < N {
            return v;
        }
    }
}

/// A real signature of a random hash by a random key (libsecp256k1 signs: low s).
fn signed(rng: &mut StdRng) -> (U256, U256, U256, bool) {
    let (sk, _) = random_key(rng);
    let hash = rng.random::<[u8; 32]>();
    let sig = SECP256K1.sign_ecdsa_recoverable(&Message::from_digest(hash), &sk);
    let (recid, compact) = sig.serialize_compact();
    (
        U256::from_be_bytes(hash),
        U256::from_be_slice(&compact[..32]),
        U256::from_be_slice(&compact[32..]),
        i32::from(recid) & 1 == 1,
    )
}

/// Signature `i` of the random part (the class from `i`, the values from `rng`).
fn random_case(i: usize, rng: &mut StdRng) -> Case {
    match i % 20 {
        // Uniform r, s, z: about half the r are no x of a curve point.
        0..=5 => case(
            "random r,s,z",
            random_u256(rng),
            random_u256(rng),
            random_u256(rng),
            rng.random(),
        ),
        // r the x of a point: always a key.
        6..=13 => {
            let (_, x, _) = random_point(rng);
            case(
                "on-curve r",
                random_u256(rng),
                x,
                random_scalar(rng),
                rng.random(),
            )
        }
        14..=16 => {
            let (z, r, s, odd) = signed(rng);
            case("signed", z, r, s, odd)
        }
        // (r, n - s) with the other parity recovers the same key (EIP-2 forbids it after
        // Homestead; the caller checks that, the recovery accepts it).
        17 => {
            let (z, r, s, odd) = signed(rng);
            case("signed high-s", z, r, N - s, !odd)
        }
        // Small r: r + n < p, the x a recovery id 2/3 would use; Ethereum's ids use x = r.
        18 => {
            let r = U256::from(rng.random::<u128>()).max(U256::from(1u8));
            case(
                "small r (r+n<p)",
                random_u256(rng),
                r,
                random_scalar(rng),
                rng.random(),
            )
        }
        _ => {
            let (_, x, odd) = random_point(rng);
            let edges = [U256::from(1u8), N - U256::from(1u8), U256::from(1u8) << 255];
            let s = if rng.random_bool(0.5) {
                edges[rng.random_range(0..edges.len())]
            } else {
                random_scalar(rng)
            };
            let hashes = [U256::ZERO, U256::MAX, N, N - U256::from(1u8), P];
            let z = hashes[rng.random_range(0..hashes.len())];
            case("edge s/z", z, x, s, odd)
        }
    }
}

/// `n` random signatures of mixed classes (see the source), deterministic for `seed`.
pub fn random(n: usize, seed: u64) -> Vec<Case> {
    const BLOCK: usize = 4096;
    let blocks: Vec<Vec<Case>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut rng =
                StdRng::seed_from_u64(seed ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let end = ((b + 1) * BLOCK).min(n);
            (b * BLOCK..end).map(|i| random_case(i, &mut rng)).collect()
        })
        .collect();
    blocks.into_iter().flatten().collect()
}

/// The adversarial signatures: r and s at and around 0, n and p (each value crossed with
/// hashes 0, all-ones, n and a random one, both parities), x ≥ n on and off the curve,
/// results at infinity and sums that hit the doubling case, u1 = 0 (Q = u2·R, and Q = R).
pub fn adversarial(seed: u64) -> Vec<Case> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0xAD7E_5A41);
    let one = U256::from(1u8);
    let mut out = Vec::new();
    let (_, x_ok, _) = random_point(&mut rng);
    let rs = [
        U256::ZERO,
        one,
        U256::from(7u8),
        x_ok,
        N - one,
        N,
        N + one,
        P - one,
        P,
        U256::MAX,
    ];
    let ss = [
        U256::ZERO,
        one,
        N - one,
        N,
        U256::MAX,
        random_scalar(&mut rng),
    ];
    let zs = [U256::ZERO, U256::MAX, N, random_u256(&mut rng)];
    for r in rs {
        for s in ss {
            for z in zs {
                for parity in [false, true] {
                    out.push(case("adversarial r/s/z", z, r, s, parity));
                }
            }
        }
    }
    // x in [n, p): on the curve or not, r = x is ≥ n and must be refused.
    let mut on = 0;
    let mut x = N;
    while on < 8 && x < P {
        let mut c = [2u8; 33];
        c[1..].copy_from_slice(&x.to_be_bytes::<32>());
        let on_curve = PublicKey::from_slice(&c).is_ok();
        on += usize::from(on_curve);
        for parity in [false, true] {
            out.push(case(
                "r >= n (x in [n,p))",
                random_u256(&mut rng),
                x,
                random_scalar(&mut rng),
                parity,
            ));
        }
        x += one;
    }
    for _ in 0..64 {
        let (k, r, odd) = random_point(&mut rng);
        let s = random_scalar(&mut rng);
        let sk = s.mul_mod(k, N);
        // -z + s·k = 0: Q at infinity.
        out.push(case("infinity (z = s·k)", sk, r, s, odd));
        // the other parity: R' = -R, Q = -2·s·k/r·G, a key.
        out.push(case("z = s·k, other parity", sk, r, s, !odd));
        // u1·G = u2·R: the final sum doubles.
        let neg = if sk.is_zero() { U256::ZERO } else { N - sk };
        out.push(case("doubling (z = -s·k)", neg, r, s, odd));
        // u1 = 0: Q = u2·R; with s = r, u2 = 1 and Q = R.
        out.push(case("u1 = 0 (z = 0)", U256::ZERO, r, s, odd));
        out.push(case("u1 = 0 (z = n)", N, r, s, !odd));
        out.push(case("Q = R (z = 0, s = r)", U256::ZERO, r, r, odd));
    }
    out
}

/// `random(n_random, seed)` followed by `adversarial(seed)`.
pub fn suite(n_random: usize, seed: u64) -> Vec<Case> {
    let mut v = random(n_random, seed);
    v.extend(adversarial(seed));
    v
}

/// The signatures of `cases`.
pub fn inputs(cases: &[Case]) -> Vec<SigInput> {
    cases.iter().map(|c| c.sig).collect()
}

/// One class's counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClassReport {
    /// The class.
    pub class: String,
    /// Signatures.
    pub total: usize,
    /// Recovered by libsecp256k1.
    pub recovered: usize,
    /// Answers that differ from libsecp256k1's.
    pub differences: usize,
}

/// A comparison with libsecp256k1.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CheckReport {
    /// What was compared (e.g. "NVIDIA H200", "host build of the kernel").
    pub backend: String,
    /// Signatures.
    pub total: usize,
    /// Recovered by libsecp256k1 (the rest it rejects).
    pub recovered: usize,
    /// Rejected by libsecp256k1.
    pub rejected: usize,
    /// Answers that differ (an address where libsecp256k1 has none, none where it has one, or
    /// another address).
    pub differences: usize,
    /// The first differences, described.
    pub examples: Vec<String>,
    /// Counts per class.
    pub classes: Vec<ClassReport>,
    /// Seconds the backend took for all signatures (transfers included).
    pub backend_s: f64,
    /// Seconds libsecp256k1 took on the current rayon pool.
    pub reference_s: f64,
}

/// Compares `got` (one answer per case) with libsecp256k1's answers, computed here.
pub fn compare(
    backend: &str,
    cases: &[Case],
    got: &[Option<Address>],
    backend_s: f64,
) -> CheckReport {
    let t = std::time::Instant::now();
    let want = crate::cpu::recover(&inputs(cases));
    let reference_s = t.elapsed().as_secs_f64();
    let mut report = CheckReport {
        backend: backend.to_owned(),
        total: cases.len(),
        backend_s,
        reference_s,
        ..Default::default()
    };
    let mut classes: BTreeMap<&str, ClassReport> = BTreeMap::new();
    for (i, c) in cases.iter().enumerate() {
        let w = want.get(i).copied().flatten();
        let g = got.get(i).copied().flatten();
        let cls = classes.entry(c.class).or_insert_with(|| ClassReport {
            class: c.class.to_owned(),
            ..Default::default()
        });
        cls.total += 1;
        if w.is_some() {
            report.recovered += 1;
            cls.recovered += 1;
        } else {
            report.rejected += 1;
        }
        let same = i < got.len() && w == g;
        if !same {
            report.differences += 1;
            cls.differences += 1;
            if report.examples.len() < 10 {
                report.examples.push(format!(
                    "#{i} ({}): hash {} r {:#x} s {:#x} parity {}: libsecp256k1 {:?}, {backend} {:?}",
                    c.class, c.sig.hash, c.sig.r, c.sig.s, u8::from(c.sig.y_parity), w, g
                ));
            }
        }
    }
    report.classes = classes.into_values().collect();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        let one = U256::from(1u8);
        assert_eq!(P, U256::MAX - (one << 32) - U256::from(977u32) + one);
        assert_eq!(
            N.to_string(),
            "115792089237316195423570985008687907852837564279074904382605163141518161494337"
        );
    }

    #[test]
    fn deterministic_and_mixed() {
        let a = suite(500, 9);
        let b = suite(500, 9);
        assert_eq!(inputs(&a), inputs(&b));
        assert!(a.iter().any(|c| c.class == "r >= n (x in [n,p))"));
        assert!(a.iter().any(|c| c.class == "signed high-s"));
    }
}
