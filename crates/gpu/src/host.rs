//! The kernel text compiled as plain C for the host (build.rs): the GPU's arithmetic, run on
//! the CPU. It exists to verify the kernel without a GPU (the tests compare it with
//! libsecp256k1; `gigagas gpu check --host`), not as a recovery backend: it is several times
//! slower than libsecp256k1.

use crate::{pack, table, unpack, SigInput, IN_WORDS, OUT_WORDS};
use alloy_primitives::{Address, U256};
use rayon::prelude::*;

mod ffi {
    extern "C" {
        pub fn gg_recover_host(input: *const u32, out: *mut u32, gtable: *const u32, n: u32);
        pub fn gg_test_fe_mul(r: *mut u32, a: *const u32, b: *const u32);
        pub fn gg_test_fe_add(r: *mut u32, a: *const u32, b: *const u32);
        pub fn gg_test_fe_sub(r: *mut u32, a: *const u32, b: *const u32);
        pub fn gg_test_fe_inv(r: *mut u32, a: *const u32);
        pub fn gg_test_fe_sqrt(r: *mut u32, a: *const u32) -> i32;
        pub fn gg_test_sc_mul(r: *mut u32, a: *const u32, b: *const u32);
        pub fn gg_test_sc_inv(r: *mut u32, a: *const u32);
        pub fn gg_test_split_lambda(r1: *mut u32, r2: *mut u32, k: *const u32);
        pub fn gg_test_mul_point_plain(
            x: *mut u32,
            y: *mut u32,
            u: *const u32,
            px: *const u32,
            py: *const u32,
        );
        pub fn gg_test_keccak_address(out: *mut u32, x: *const u32, y: *const u32);
        pub fn gg_test_lincomb(
            x: *mut u32,
            y: *mut u32,
            u1: *const u32,
            u2: *const u32,
            px: *const u32,
            py: *const u32,
            gtable: *const u32,
        ) -> i32;
    }
}

/// Signatures per call into C (a rayon task).
const CHUNK: usize = 256;

/// Recovers every signature with the host build of the kernel, in parallel on the current
/// rayon pool. Same answers as [`crate::GpuRecoverer::recover`]. Errors only when the G table
/// cannot be built.
pub fn recover(sigs: &[SigInput]) -> Result<Vec<Option<Address>>, String> {
    let gtable = table::g_table()?;
    let parts: Vec<Vec<Option<Address>>> = sigs
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut input = Vec::new();
            pack(chunk, &mut input);
            let mut out = vec![0u32; chunk.len() * OUT_WORDS];
            debug_assert_eq!(input.len(), chunk.len() * IN_WORDS);
            // SAFETY: `input` holds chunk.len() signatures of IN_WORDS words, `out` room for
            // chunk.len() results of OUT_WORDS words, `gtable` the whole table; the C code
            // reads and writes nothing else (and keeps no pointer).
            unsafe {
                ffi::gg_recover_host(
                    input.as_ptr(),
                    out.as_mut_ptr(),
                    gtable.as_ptr(),
                    chunk.len() as u32,
                )
            };
            let mut res = Vec::with_capacity(chunk.len());
            unpack(&out, &mut res);
            res
        })
        .collect();
    Ok(parts.into_iter().flatten().collect())
}

/// The kernel's arithmetic one operation at a time, for the tests (numbers < 2^256 as
/// `U256`; field operations expect inputs < p, scalar operations inputs < n).
#[doc(hidden)]
pub mod ops {
    use super::*;
    use crate::{from_limbs, limbs};

    fn binary(
        f: unsafe extern "C" fn(*mut u32, *const u32, *const u32),
        a: &U256,
        b: &U256,
    ) -> U256 {
        let (a, b) = (limbs(a), limbs(b));
        let mut r = [0u32; 8];
        // SAFETY: three arrays of 8 words, as the C functions take.
        unsafe { f(r.as_mut_ptr(), a.as_ptr(), b.as_ptr()) };
        from_limbs(&r)
    }

    fn unary(f: unsafe extern "C" fn(*mut u32, *const u32), a: &U256) -> U256 {
        let a = limbs(a);
        let mut r = [0u32; 8];
        // SAFETY: two arrays of 8 words, as the C functions take.
        unsafe { f(r.as_mut_ptr(), a.as_ptr()) };
        from_limbs(&r)
    }

    /// a·b mod p.
    pub fn fe_mul(a: &U256, b: &U256) -> U256 {
        binary(ffi::gg_test_fe_mul, a, b)
    }
    /// a + b mod p.
    pub fn fe_add(a: &U256, b: &U256) -> U256 {
        binary(ffi::gg_test_fe_add, a, b)
    }
    /// a − b mod p.
    pub fn fe_sub(a: &U256, b: &U256) -> U256 {
        binary(ffi::gg_test_fe_sub, a, b)
    }
    /// a⁻¹ mod p (0 for 0).
    pub fn fe_inv(a: &U256) -> U256 {
        unary(ffi::gg_test_fe_inv, a)
    }
    /// a^((p+1)/4) mod p, and whether it squares to a.
    pub fn fe_sqrt(a: &U256) -> (U256, bool) {
        let a = limbs(a);
        let mut r = [0u32; 8];
        // SAFETY: two arrays of 8 words.
        let ok = unsafe { ffi::gg_test_fe_sqrt(r.as_mut_ptr(), a.as_ptr()) };
        (from_limbs(&r), ok == 1)
    }
    /// a·b mod n.
    pub fn sc_mul(a: &U256, b: &U256) -> U256 {
        binary(ffi::gg_test_sc_mul, a, b)
    }
    /// a⁻¹ mod n.
    pub fn sc_inv(a: &U256) -> U256 {
        unary(ffi::gg_test_sc_inv, a)
    }
    /// The GLV split of k: (k1, k2) with k = k1 + k2·λ (mod n).
    pub fn split_lambda(k: &U256) -> (U256, U256) {
        let k = limbs(k);
        let (mut r1, mut r2) = ([0u32; 8], [0u32; 8]);
        // SAFETY: three arrays of 8 words.
        unsafe { ffi::gg_test_split_lambda(r1.as_mut_ptr(), r2.as_mut_ptr(), k.as_ptr()) };
        (from_limbs(&r1), from_limbs(&r2))
    }
    /// u·P without the endomorphism (the fallback path), affine; u·P must not be infinity.
    pub fn mul_point_plain(u: &U256, px: &U256, py: &U256) -> (U256, U256) {
        let (u, px, py) = (limbs(u), limbs(px), limbs(py));
        let (mut x, mut y) = ([0u32; 8], [0u32; 8]);
        // SAFETY: arrays of 8 words.
        unsafe {
            ffi::gg_test_mul_point_plain(
                x.as_mut_ptr(),
                y.as_mut_ptr(),
                u.as_ptr(),
                px.as_ptr(),
                py.as_ptr(),
            )
        };
        (from_limbs(&x), from_limbs(&y))
    }
    /// keccak256(x_be ‖ y_be)\[12..\], the kernel's address step.
    pub fn keccak_address(x: &U256, y: &U256) -> Address {
        let (x, y) = (limbs(x), limbs(y));
        let mut out = [0u32; 5];
        // SAFETY: out has 5 words, x and y 8.
        unsafe { ffi::gg_test_keccak_address(out.as_mut_ptr(), x.as_ptr(), y.as_ptr()) };
        let mut a = [0u8; 20];
        for (k, w) in out.iter().enumerate() {
            a[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
        }
        Address::from(a)
    }
    /// u1·G + u2·P in affine coordinates (P affine, on the curve), `None` at infinity.
    pub fn lincomb(
        u1: &U256,
        u2: &U256,
        px: &U256,
        py: &U256,
    ) -> Result<Option<(U256, U256)>, String> {
        let gtable = table::g_table()?;
        let (u1, u2, px, py) = (limbs(u1), limbs(u2), limbs(px), limbs(py));
        let (mut x, mut y) = ([0u32; 8], [0u32; 8]);
        // SAFETY: arrays of 8 words and the whole table.
        let ok = unsafe {
            ffi::gg_test_lincomb(
                x.as_mut_ptr(),
                y.as_mut_ptr(),
                u1.as_ptr(),
                u2.as_ptr(),
                px.as_ptr(),
                py.as_ptr(),
                gtable.as_ptr(),
            )
        };
        Ok((ok == 1).then(|| (from_limbs(&x), from_limbs(&y))))
    }
}
