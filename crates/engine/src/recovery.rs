//! Sender recovery, the pipeline's first stage: where it runs ([`RecoveryBackend`], a run
//! spec setting) and the [`Recoverer`] that does it for a block.
//!
//! The CPU path is `gigagas_exec::recover_senders` (libsecp256k1 on the thread budget). The
//! GPU path is asked for here and refused by name where no GPU answers; `auto` takes the GPU
//! when one answers and says which it used.

use alloy_primitives::Address;
use gigagas_data::BlockInput;
use gigagas_exec::{recover_senders, ExecError};

/// Where senders are recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum RecoveryBackend {
    /// libsecp256k1 on the run's CPU thread budget.
    #[default]
    Cpu,
    /// The GPU (refused where none answers).
    Gpu,
    /// The GPU when one answers, else the CPU.
    Auto,
}

impl RecoveryBackend {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
            Self::Auto => "auto",
        }
    }
}

impl std::fmt::Display for RecoveryBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for RecoveryBackend {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            "auto" => Ok(Self::Auto),
            _ => Err(format!(
                "unknown sender recovery backend {s:?} (expected cpu, gpu or auto)"
            )),
        }
    }
}

/// Recovers a block's senders on the backend a run opened.
#[derive(Default)]
pub struct Recoverer {
    /// The GPU, when one was opened.
    gpu: Option<gpu::Device>,
    /// Whether a GPU failure (out of memory, a launch error, a lost device) falls back to the
    /// CPU (`auto`) instead of stopping the run (`gpu`).
    fallback: bool,
}

impl std::fmt::Debug for Recoverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Recoverer {
    /// Recovery on the CPU.
    pub fn cpu() -> Self {
        Self {
            gpu: None,
            fallback: false,
        }
    }

    /// Opens `backend`: `gpu` without a GPU that answers is an error naming what is
    /// missing; `auto` falls back to the CPU (say so with [`Self::describe`]).
    pub fn open(backend: RecoveryBackend) -> Result<Self, String> {
        match backend {
            RecoveryBackend::Cpu => Ok(Self::cpu()),
            RecoveryBackend::Gpu => gpu::Device::open()
                .map(|d| Self {
                    gpu: Some(d),
                    fallback: false,
                })
                .map_err(|why| format!("no GPU to recover senders on: {why}")),
            RecoveryBackend::Auto => Ok(Self {
                gpu: gpu::Device::open().ok(),
                fallback: true,
            }),
        }
    }

    /// The backend in use: `cpu` or `gpu`.
    pub fn name(&self) -> &'static str {
        if self.gpu.is_some() {
            "gpu"
        } else {
            "cpu"
        }
    }

    /// What recovers senders, in words (`cpu`, or `gpu (NVIDIA H200)`).
    pub fn describe(&self) -> String {
        match &self.gpu {
            Some(d) => format!("gpu ({})", d.name()),
            None => "cpu".into(),
        }
    }

    /// Whether senders go to a GPU (the pipeline then gathers several blocks per launch).
    pub fn on_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// Every block's senders, in order, with `pool` as the CPU budget: on the CPU each block
    /// in turn on `pool`; on the GPU every block's signatures in one launch (the signing
    /// hashes and the checks on `pool`, the wait for the device on the calling thread, which
    /// sleeps meanwhile). Checked as [`Self::recover`] checks; with `auto`, a GPU failure
    /// falls back to the CPU for all of them.
    /// Also returns the ns it worked: on `pool` from the moment a thread took the work up
    /// (not the wait for one), and on the calling thread for the launch.
    pub fn recover_blocks_timed(
        &self,
        inputs: &[&BlockInput],
        pool: &rayon::ThreadPool,
    ) -> (Result<Vec<Vec<Address>>, ExecError>, u64) {
        let mut busy = 0u64;
        let on_cpu = |busy: &mut u64| {
            inputs
                .iter()
                .map(|input| {
                    let (senders, ns) = on(pool, || recover_senders(input));
                    *busy += ns;
                    senders
                })
                .collect()
        };
        let Some(device) = &self.gpu else {
            let senders = on_cpu(&mut busy);
            return (senders, busy);
        };
        let block = inputs.first().map_or(0, |i| i.number());
        let gpu = device.recover_many(inputs, pool, &mut busy);
        let senders = self.settle(block, gpu, || on_cpu(&mut busy));
        (senders, busy)
    }

    /// Every transaction's sender, checked against the block file's. On the GPU, a
    /// signature the kernel cannot recover, one the fork forbids (high s after Homestead) and
    /// one that recovers to another sender than the file's are recovered again on the CPU,
    /// whose error (naming block, transaction and field) is authoritative; a GPU address the
    /// CPU contradicts is a hard error. With `auto`, a GPU failure falls back to the CPU.
    pub fn recover(&self, input: &BlockInput) -> Result<Vec<Address>, ExecError> {
        let Some(device) = &self.gpu else {
            return recover_senders(input);
        };
        self.settle(input.number(), device.recover(input), || {
            recover_senders(input)
        })
    }
}

impl Recoverer {
    /// A GPU answer for blocks from `block` on, as the run takes it: a GPU failure falls back
    /// to `cpu` under `auto` and stops the run under `gpu`; a block's own error stands.
    fn settle<T>(
        &self,
        block: u64,
        gpu: Result<T, gpu::Failure>,
        cpu: impl FnOnce() -> Result<T, ExecError>,
    ) -> Result<T, ExecError> {
        match gpu {
            Ok(senders) => Ok(senders),
            Err(gpu::Failure::Gpu(why)) if self.fallback => {
                tracing::warn!(
                    block,
                    "GPU sender recovery failed ({why}); recovered on the CPU"
                );
                cpu()
            }
            Err(gpu::Failure::Gpu(why)) => Err(ExecError::Unsupported {
                block,
                what: format!("GPU sender recovery failed: {why}"),
            }),
            Err(gpu::Failure::Block(e)) => Err(e),
        }
    }
}

/// `f` on `pool`, with the ns it ran from the moment a thread of `pool` took it up.
fn on<T: Send>(pool: &rayon::ThreadPool, f: impl FnOnce() -> T + Send) -> (T, u64) {
    pool.install(|| {
        let t = std::time::Instant::now();
        let out = f();
        (out, t.elapsed().as_nanos() as u64)
    })
}

/// The GPU backend: `gigagas_gpu` (the CUDA driver and NVRTC loaded at run time).
mod gpu {
    use super::*;
    use alloy_primitives::U256;
    use gigagas_exec::recover_sender;
    use gigagas_gpu::{GpuRecoverer, SigInput};
    use rayon::prelude::*;
    use revm::primitives::hardfork::SpecId;

    /// secp256k1's group order n, halved: the largest `s` Homestead accepts (EIP-2).
    const HALF_N: U256 = U256::from_be_slice(&[
        0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b,
        0x20, 0xa0,
    ]);

    /// Why a block's recovery on the GPU stopped.
    pub(super) enum Failure {
        /// The GPU failed (out of memory, launch, lost device).
        Gpu(String),
        /// The block is wrong (the CPU path's error).
        Block(ExecError),
    }

    /// An opened GPU.
    pub(super) struct Device(GpuRecoverer);

    impl Device {
        pub(super) fn open() -> Result<Self, String> {
            GpuRecoverer::open().map(Self).map_err(|e| e.to_string())
        }

        pub(super) fn name(&self) -> &str {
            self.0.device_name()
        }

        pub(super) fn recover(&self, input: &BlockInput) -> Result<Vec<Address>, Failure> {
            let sigs = signatures(input);
            let recovered = self.launch(&sigs)?;
            check(input, &sigs, &recovered)
        }

        /// Every block's signatures in one launch: hashes and checks on `pool`; the ns
        /// worked added to `busy`.
        pub(super) fn recover_many(
            &self,
            inputs: &[&BlockInput],
            pool: &rayon::ThreadPool,
            busy: &mut u64,
        ) -> Result<Vec<Vec<Address>>, Failure> {
            let (per_block, ns) = on(pool, || {
                inputs
                    .iter()
                    .map(|input| signatures(input))
                    .collect::<Vec<_>>()
            });
            *busy += ns;
            let all = per_block.concat();
            let t = std::time::Instant::now();
            let recovered = self.launch(&all)?;
            *busy += t.elapsed().as_nanos() as u64;
            let (checked, ns) = on(pool, || {
                let mut at = 0;
                inputs
                    .iter()
                    .zip(&per_block)
                    .map(|(input, sigs)| {
                        let mine = &recovered[at..at + sigs.len()];
                        at += sigs.len();
                        check(input, sigs, mine)
                    })
                    .collect()
            });
            *busy += ns;
            checked
        }

        /// One launch for `sigs`: an address (or no key) for each.
        fn launch(&self, sigs: &[SigInput]) -> Result<Vec<Option<Address>>, Failure> {
            let recovered = self
                .0
                .recover(sigs)
                .map_err(|e| Failure::Gpu(e.to_string()))?;
            if recovered.len() != sigs.len() {
                return Err(Failure::Gpu(format!(
                    "{} addresses for {} signatures",
                    recovered.len(),
                    sigs.len()
                )));
            }
            Ok(recovered)
        }
    }

    /// A block's signing hashes and signatures, on the current thread budget (the hash is a
    /// keccak of the transaction's encoding).
    fn signatures(input: &BlockInput) -> Vec<SigInput> {
        input
            .transactions
            .par_iter()
            .map(|t| {
                let sig = t.envelope.signature();
                SigInput {
                    hash: t.envelope.signature_hash(),
                    r: sig.r(),
                    s: sig.s(),
                    y_parity: sig.v(),
                }
            })
            .collect()
    }

    /// The GPU's answers for a block checked against the block file's senders: a signature the
    /// kernel could not recover, one the fork forbids (high s after Homestead) and one that
    /// recovers to another sender than the file's are recovered again on the CPU, whose error
    /// (naming block, transaction and field) is authoritative; a GPU address the CPU
    /// contradicts is a hard error.
    fn check(
        input: &BlockInput,
        sigs: &[SigInput],
        recovered: &[Option<Address>],
    ) -> Result<Vec<Address>, Failure> {
        let spec = input
            .spec
            .unwrap_or_else(|| gigagas_exec::spec::mainnet_spec(&input.header));
        let homestead = spec.is_enabled_in(SpecId::HOMESTEAD);
        (0..sigs.len())
            .into_par_iter()
            .map(|tx| {
                let claimed = input.transactions[tx].claimed_sender;
                let forbidden = homestead && sigs[tx].s > HALF_N;
                match recovered[tx] {
                    Some(sender) if sender == claimed && !forbidden => Ok(sender),
                    gpu => {
                        // The CPU decides: its error names the block, the transaction and
                        // the field; an answer the GPU contradicts is a GPU fault.
                        let cpu = recover_sender(input, tx, homestead).map_err(Failure::Block)?;
                        match gpu {
                            Some(g) if g != cpu => Err(Failure::Block(ExecError::Sender {
                                block: input.number(),
                                tx,
                                what: format!(
                                    "the GPU recovered {g}, libsecp256k1 {cpu}: a GPU fault"
                                ),
                            })),
                            _ => Ok(cpu),
                        }
                    }
                }
            })
            .collect()
    }
}
