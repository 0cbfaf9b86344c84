//! The kernel text compiled as plain C for the host, against independent references: its
//! field and scalar arithmetic against `U256`'s modular arithmetic, its keccak against
//! alloy's, and whole recoveries against libsecp256k1 on 100,000 random signatures plus the
//! adversarial ones. Zero differences allowed.

use alloy_primitives::{keccak256, Address, U256};
use gigagas_gpu::host::ops;
use gigagas_gpu::suite::{self, N, P};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Values where carries and reductions are most likely to go wrong, below `m`.
fn edges(m: U256) -> Vec<U256> {
    let one = U256::from(1u8);
    let mut v = vec![
        U256::ZERO,
        one,
        U256::from(2u8),
        U256::from(977u32),
        U256::from(0x1_0000_03D1u64),
        m - one,
        m - U256::from(2u8),
        m >> 1,
        (m >> 1) + one,
        U256::from(u32::MAX),
        U256::from(u64::MAX),
        U256::from(u128::MAX),
        (one << 255) % m,
        (U256::MAX >> 32) % m,
        m - U256::from(u64::MAX),
    ];
    for k in [32usize, 64, 96, 128, 160, 192, 224] {
        v.push(((one << k) - one) % m);
        v.push((one << k) % m);
        v.push(m - (one << k) % m);
    }
    v.retain(|x| *x < m);
    v
}

fn random_below(rng: &mut StdRng, m: U256) -> U256 {
    loop {
        let v = U256::from_be_bytes(rng.random::<[u8; 32]>());
        if v < m {
            return v;
        }
    }
}

/// Operands: every pair of edge values, then random pairs, some of them with limbs all ones
/// or all zeros.
fn operand_pairs(m: U256, random: usize) -> Vec<(U256, U256)> {
    let e = edges(m);
    let mut pairs: Vec<(U256, U256)> = e
        .iter()
        .flat_map(|a| e.iter().map(move |b| (*a, *b)))
        .collect();
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..random {
        let mut a = random_below(&mut rng, m);
        let b = random_below(&mut rng, m);
        if rng.random_bool(0.2) {
            // saturate some 32-bit limbs, the carry chains' worst case
            let mut limbs = a.into_limbs();
            for l in limbs.iter_mut() {
                if rng.random_bool(0.5) {
                    *l |= 0xFFFF_FFFF << (32 * rng.random_range(0..2));
                }
            }
            a = U256::from_limbs(limbs) % m;
        }
        pairs.push((a, b));
    }
    pairs
}

#[test]
fn field_arithmetic_matches_u256() {
    for (a, b) in operand_pairs(P, 20_000) {
        assert_eq!(ops::fe_mul(&a, &b), a.mul_mod(b, P), "fe_mul {a:#x} {b:#x}");
        assert_eq!(ops::fe_add(&a, &b), a.add_mod(b, P), "fe_add {a:#x} {b:#x}");
        let sub = if a >= b { a - b } else { P - (b - a) };
        assert_eq!(ops::fe_sub(&a, &b), sub, "fe_sub {a:#x} {b:#x}");
    }
    for a in edges(P)
        .into_iter()
        .chain(operand_pairs(P, 300).into_iter().map(|p| p.0))
    {
        let inv = ops::fe_inv(&a);
        if a.is_zero() {
            assert!(inv.is_zero());
        } else {
            assert_eq!(inv.mul_mod(a, P), U256::from(1u8), "fe_inv {a:#x}");
        }
        let (root, ok) = ops::fe_sqrt(&a);
        let want = a.pow_mod((P + U256::from(1u8)) >> 2, P);
        assert_eq!(root, want, "fe_sqrt {a:#x}");
        assert_eq!(ok, root.mul_mod(root, P) == a, "fe_sqrt flag {a:#x}");
    }
}

#[test]
fn scalar_arithmetic_matches_u256() {
    for (a, b) in operand_pairs(N, 20_000) {
        assert_eq!(ops::sc_mul(&a, &b), a.mul_mod(b, N), "sc_mul {a:#x} {b:#x}");
    }
    for a in edges(N)
        .into_iter()
        .chain(operand_pairs(N, 300).into_iter().map(|p| p.0))
    {
        if a.is_zero() {
            continue;
        }
        assert_eq!(
            ops::sc_inv(&a).mul_mod(a, N),
            U256::from(1u8),
            "sc_inv {a:#x}"
        );
    }
}

#[test]
fn glv_split_and_both_point_multiplications() {
    use alloy_primitives::uint;
    let lambda = uint!(0x5363AD4CC05C30E0A5261C028812645A122E22EA20816678DF02967C1B23BD72_U256);
    let beta = uint!(0x7AE96A2B657C07106E64479EAC3434E99CF0497512F58995C1396C28719501EE_U256);
    assert_eq!(lambda.pow_mod(U256::from(3u8), N), U256::from(1u8));
    assert_eq!(beta.pow_mod(U256::from(3u8), P), U256::from(1u8));
    let half = U256::from(1u8) << 128;
    let mut ks = edges(N);
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..20_000 {
        ks.push(random_below(&mut rng, N));
    }
    for k in &ks {
        let (k1, k2) = ops::split_lambda(k);
        assert!(k1 < N && k2 < N);
        assert_eq!(k1.add_mod(k2.mul_mod(lambda, N), N), *k, "split {k:#x}");
        assert!(
            k1.min(N - k1) < half && k2.min(N - k2) < half,
            "split bound {k:#x}"
        );
    }
    // λ·G = (β·Gx, Gy), and the GLV path (lincomb with u1 = 0) equals the plain one.
    let gx = uint!(0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798_U256);
    let gy = uint!(0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8_U256);
    assert_eq!(
        ops::mul_point_plain(&lambda, &gx, &gy),
        (gx.mul_mod(beta, P), gy)
    );
    for k in ks.iter().take(500).filter(|k| !k.is_zero()) {
        let glv = ops::lincomb(&U256::ZERO, k, &gx, &gy).unwrap();
        assert_eq!(glv, Some(ops::mul_point_plain(k, &gx, &gy)), "k {k:#x}");
    }
}

#[test]
fn keccak_matches_alloy() {
    let mut rng = StdRng::seed_from_u64(3);
    let mut values = edges(P);
    values.push(U256::MAX);
    for _ in 0..2_000 {
        values.push(U256::from_be_bytes(rng.random::<[u8; 32]>()));
    }
    for pair in values.windows(2) {
        let (x, y) = (pair[0], pair[1]);
        let mut buf = [0u8; 64];
        buf[..32].copy_from_slice(&x.to_be_bytes::<32>());
        buf[32..].copy_from_slice(&y.to_be_bytes::<32>());
        let want = Address::from_slice(&keccak256(buf)[12..]);
        assert_eq!(ops::keccak_address(&x, &y), want);
    }
}

#[test]
fn linear_combination_matches_libsecp256k1() {
    use secp256k1::{PublicKey, Scalar, SecretKey, SECP256K1};
    let mut rng = StdRng::seed_from_u64(11);
    let g = |k: U256| -> Option<PublicKey> {
        SecretKey::from_byte_array(&k.to_be_bytes::<32>())
            .ok()
            .map(|sk| PublicKey::from_secret_key(SECP256K1, &sk))
    };
    let xy = |p: &PublicKey| {
        let s = p.serialize_uncompressed();
        (
            U256::from_be_slice(&s[1..33]),
            U256::from_be_slice(&s[33..]),
        )
    };
    let one = U256::from(1u8);
    let mut cases: Vec<(U256, U256, U256)> = Vec::new(); // (u1, u2, k) with P = k·G
    for _ in 0..300 {
        let k = random_below(&mut rng, N).max(one);
        let u1 = random_below(&mut rng, N);
        let u2 = random_below(&mut rng, N);
        cases.push((u1, u2, k));
        // u1 + u2·k = 0 (infinity) and u1 = u2·k (the final sum doubles)
        let t = u2.mul_mod(k, N);
        cases.push(((N - t) % N, u2, k));
        cases.push((t, u2, k));
        // small and edge scalars: window digits 0 and 255, u = n - 1
        cases.push((N - one, N - one, k));
        cases.push((U256::ZERO, one, k));
        cases.push((U256::from(0xFFu8), U256::ZERO, k));
        cases.push(((U256::MAX >> 8) % N, U256::from(15u8), k));
    }
    // P = G itself, so table entries and the window sums meet P's multiples.
    for _ in 0..50 {
        let u1 = random_below(&mut rng, N);
        cases.push((u1, N - u1, one));
        cases.push((u1, u1, one));
        cases.push((U256::from(1u8) << 8, U256::from(256u32), one));
    }
    for (u1, u2, k) in cases {
        let p = g(k).unwrap();
        let (px, py) = xy(&p);
        let got = ops::lincomb(&u1, &u2, &px, &py).unwrap();
        // libsecp256k1: (u1 + u2·k)·G
        let total = u1.add_mod(u2.mul_mod(k, N), N);
        let want = g(total).map(|q| xy(&q));
        assert_eq!(got, want, "u1 {u1:#x} u2 {u2:#x} k {k:#x}");
        // and the same through libsecp256k1's own point arithmetic where it can
        if let (Some(a), false) = (g(u1), u2.is_zero()) {
            let b = p
                .mul_tweak(
                    SECP256K1,
                    &Scalar::from_be_bytes(u2.to_be_bytes::<32>()).unwrap(),
                )
                .unwrap();
            assert_eq!(a.combine(&b).ok().map(|q| xy(&q)), want);
        }
    }
}

/// The bar: at least 100,000 random signatures plus the adversarial ones, zero
/// differences from libsecp256k1.
#[test]
fn recovery_matches_libsecp256k1() {
    let cases = suite::suite(100_000, 2026);
    let t = std::time::Instant::now();
    let got = gigagas_gpu::host::recover(&suite::inputs(&cases)).unwrap();
    let host_s = t.elapsed().as_secs_f64();
    let report = suite::compare("host build of the kernel", &cases, &got, host_s);
    eprintln!(
        "{} signatures ({} recovered, {} rejected by libsecp256k1): {} differences; kernel on the host {:.2} s, libsecp256k1 {:.2} s",
        report.total, report.recovered, report.rejected, report.differences, report.backend_s, report.reference_s
    );
    for c in &report.classes {
        eprintln!(
            "  {:<28} {:>7} signatures, {:>7} recovered, {} differences",
            c.class, c.total, c.recovered, c.differences
        );
    }
    assert!(report.total >= 100_000);
    assert_eq!(report.differences, 0, "{:#?}", report.examples);
    // every class exercised on both sides where it should be
    assert!(report.recovered > 40_000 && report.rejected > 10_000);
}

/// The text NVRTC compiles (the `__CUDACC_RTC__` branch) is valid C++17: checked with the
/// host's C++ compiler and the CUDA keywords stubbed out (tests/nvrtc_stub.cpp).
#[test]
#[cfg_attr(not(gigagas_cxx), ignore = "needs a C++ compiler (c++ or $CXX)")]
fn nvrtc_branch_is_valid_cxx() {
    #[cfg(gigagas_cxx)]
    {
        let stub = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/nvrtc_stub.cpp");
        let out = std::process::Command::new(env!("GIGAGAS_CXX"))
            .args([
                "-std=c++17",
                "-fsyntax-only",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-Wno-unknown-pragmas",
                stub,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
