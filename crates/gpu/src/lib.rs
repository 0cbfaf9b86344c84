//! Ethereum sender recovery on an NVIDIA GPU.
//!
//! A batched secp256k1 public-key recovery kernel in CUDA C ([`KERNEL_SOURCE`], embedded with
//! `include_str!`) is compiled at run time with NVRTC and launched through `cudarc`, which loads
//! the CUDA driver (`libcuda`) and NVRTC (`libnvrtc`) dynamically: the crate builds and tests on
//! machines with no CUDA at all, where [`GpuRecoverer::open`] returns [`GpuError::NoDevice`]
//! naming what is missing (never a panic).
//!
//! One GPU thread recovers one signature: r⁻¹ mod n, the square root that decompresses R from
//! r and the y-parity, u1·G + u2·R (a precomputed table of G uploaded once at `open`, Jacobian
//! coordinates, a 4-bit window for R), one field inversion per thread for the affine result
//! (no batched inversion across threads), and keccak-256 of the 64-byte public key to the
//! address — all on the GPU. Signature-class rules (high s after Homestead, v, chain ids) stay
//! with the caller; the kernel answers `None` where libsecp256k1's recovery fails: r or s zero
//! or ≥ n, r not the x of a curve point, the result at infinity. The caller then runs its CPU
//! path for the exact error.
//!
//! The same kernel text compiles as plain C for the host ([`host`]); the tests compare that
//! build with libsecp256k1 ([`cpu`]) on random and adversarial signatures ([`suite`]), and the
//! device suite runs the real GPU against it (`gigagas gpu check`). [`bench`] measures
//! recoveries per second on the GPU and the CPU.
//!
//! ```no_run
//! # use gigagas_gpu::{GpuRecoverer, SigInput};
//! # fn f(sigs: &[SigInput]) -> Result<(), gigagas_gpu::GpuError> {
//! let gpu = GpuRecoverer::open()?; // GpuError::NoDevice on a machine without a GPU
//! let senders = gpu.recover(sigs)?; // None: run the CPU path for its exact error
//! # Ok(()) }
//! ```

use alloy_primitives::{Address, B256, U256};

pub mod bench;
pub mod cpu;
mod device;
pub mod host;
pub mod suite;
mod table;

pub use device::{GpuRecoverer, MAX_LAUNCH};

/// The kernel's CUDA C source, compiled at run time by NVRTC (and as plain C by build.rs).
pub const KERNEL_SOURCE: &str = include_str!("kernel/recover.cu");

/// 32-bit words per signature in the kernel's input: z\[8\], r\[8\], s\[8\], parity.
pub(crate) const IN_WORDS: usize = 25;
/// 32-bit words per result: status, then the address's 20 bytes.
pub(crate) const OUT_WORDS: usize = 6;

/// One signature to recover: the transaction's signing hash (what was signed), r, s, y-parity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SigInput {
    /// The signing hash (the message digest that was signed).
    pub hash: B256,
    /// The signature's r.
    pub r: U256,
    /// The signature's s.
    pub s: U256,
    /// The y-parity of the point R (Ethereum's recovery id: `v - 27`, `v - 35 - 2·chain_id`, or
    /// the typed transaction's `yParity`).
    pub y_parity: bool,
}

/// Where one batch's time went, in nanoseconds (each phase waited for to its end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GpuTiming {
    /// Packing the signatures into the kernel's layout and reading the results back (host).
    pub host_ns: u64,
    /// Copying the signatures to the GPU.
    pub transfer_in_ns: u64,
    /// The kernel, launch to completion.
    pub kernel_ns: u64,
    /// Copying the results back.
    pub transfer_out_ns: u64,
}

impl GpuTiming {
    /// Everything: host packing, both transfers and the kernel.
    pub fn total_ns(&self) -> u64 {
        self.host_ns + self.transfer_in_ns + self.kernel_ns + self.transfer_out_ns
    }

    fn add(&mut self, other: &GpuTiming) {
        self.host_ns += other.host_ns;
        self.transfer_in_ns += other.transfer_in_ns;
        self.kernel_ns += other.kernel_ns;
        self.transfer_out_ns += other.transfer_out_ns;
    }
}

/// Why the GPU could not recover.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No usable GPU: the CUDA driver library or NVRTC cannot be loaded, or no device answers.
    /// The text says which.
    #[error("no GPU: {0}")]
    NoDevice(String),
    /// NVRTC could not compile the kernel, or the driver could not load it.
    #[error("GPU kernel compilation failed: {0}")]
    Compile(String),
    /// A kernel launch or a transfer failed (a lost device, a launch error).
    #[error("GPU launch failed: {0}")]
    Launch(String),
    /// The GPU has not enough memory for the batch or the table.
    #[error("GPU out of memory: {0}")]
    OutOfMemory(String),
    /// The CUDA library misbehaved (a panic inside the bindings, a poisoned lock).
    #[error("GPU library failure: {0}")]
    Library(String),
}

/// The kernel's input words for `sigs` (z, r, s as little-endian 32-bit limbs, then parity).
pub(crate) fn pack(sigs: &[SigInput], words: &mut Vec<u32>) {
    words.clear();
    words.reserve(sigs.len() * IN_WORDS);
    for sig in sigs {
        let h = sig.hash.0;
        for j in 0..8 {
            let k = 28 - 4 * j;
            words.push(u32::from_be_bytes([h[k], h[k + 1], h[k + 2], h[k + 3]]));
        }
        for v in [&sig.r, &sig.s] {
            for limb in v.as_limbs() {
                words.push(*limb as u32);
                words.push((*limb >> 32) as u32);
            }
        }
        words.push(u32::from(sig.y_parity));
    }
}

/// The addresses in the kernel's output words (`None` where its status is 0).
pub(crate) fn unpack(words: &[u32], out: &mut Vec<Option<Address>>) {
    for res in words.chunks_exact(OUT_WORDS) {
        if res[0] != 1 {
            out.push(None);
            continue;
        }
        let mut a = [0u8; 20];
        for (k, w) in res[1..].iter().enumerate() {
            a[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
        }
        out.push(Some(Address::from(a)));
    }
}

/// 8 little-endian 32-bit limbs of `v` (the kernel's number layout).
pub(crate) fn limbs(v: &U256) -> [u32; 8] {
    let mut out = [0u32; 8];
    for (i, limb) in v.as_limbs().iter().enumerate() {
        out[2 * i] = *limb as u32;
        out[2 * i + 1] = (*limb >> 32) as u32;
    }
    out
}

/// The number of 8 little-endian 32-bit limbs.
pub(crate) fn from_limbs(l: &[u32; 8]) -> U256 {
    let mut out = [0u64; 4];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u64::from(l[2 * i]) | (u64::from(l[2 * i + 1]) << 32);
    }
    U256::from_limbs(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_layout() {
        let mut h = [0u8; 32];
        h[31] = 1;
        h[0] = 0xAB;
        let sig = SigInput {
            hash: B256::from(h),
            r: U256::from(2u8),
            s: U256::MAX,
            y_parity: true,
        };
        let mut w = Vec::new();
        pack(&[sig], &mut w);
        assert_eq!(w.len(), IN_WORDS);
        assert_eq!(w[0], 1);
        assert_eq!(w[7], 0xAB00_0000);
        assert_eq!(w[8], 2);
        assert!(w[16..24].iter().all(|x| *x == u32::MAX));
        assert_eq!(w[24], 1);
        assert_eq!(from_limbs(&limbs(&U256::MAX)), U256::MAX);
    }

    #[test]
    fn unpack_layout() {
        let mut out = Vec::new();
        unpack(
            &[0, 9, 9, 9, 9, 9, 1, 0x0403_0201, 0, 0, 0, 0xFF00_0000],
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], None);
        let a = out[1].unwrap();
        assert_eq!(&a[..4], &[1, 2, 3, 4]);
        assert_eq!(a[19], 0xFF);
    }
}
