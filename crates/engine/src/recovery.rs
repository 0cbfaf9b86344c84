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

/// Where a GPU launch's own CPU work runs: the signing hashes before it, the checks after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostWork {
    /// In parallel on the thread budget: the fastest where its threads are free (the first
    /// launch, before anything executes; a back-to-back run).
    Budget,
    /// On the calling thread, which otherwise only waits for the device: never queued behind
    /// the budget's other jobs. On the H200 at 16 threads a launch's hashes and checks on the
    /// budget waited behind whole block executions (a rayon job from outside the pool starts
    /// only when a worker has nothing else): 1,752 signatures took 15–17 ms from start to
    /// end for 4–6 ms of work, and execution waited for them at three launch boundaries,
    /// 17 ms of the mainnet sample's 161 (`docs/results/node-16core-h200-2026-11-28.md`).
    Caller,
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
    /// hashes and the checks where `host` says, the wait for the device on the calling
    /// thread, which sleeps meanwhile). Checked as [`Self::recover`] checks; with `auto`, a
    /// GPU failure falls back to the CPU (on `pool`) for all of them.
    /// Also returns the ns it worked: on `pool` from the moment a thread took the work up
    /// (not the wait for one), and on the calling thread for the launch.
    pub fn recover_blocks_timed(
        &self,
        inputs: &[&BlockInput],
        pool: &rayon::ThreadPool,
        host: HostWork,
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
        let gpu = device.recover_many(
            inputs,
            (host == HostWork::Budget).then_some(pool),
            &mut busy,
        );
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
            let sigs = signatures(input, true);
            let recovered = self.launch(&sigs)?;
            check(input, &sigs, &recovered, true)
        }

        /// Every block's signatures in one launch: hashes and checks on `pool` (`None`: on
        /// the calling thread); the ns worked added to `busy`.
        pub(super) fn recover_many(
            &self,
            inputs: &[&BlockInput],
            pool: Option<&rayon::ThreadPool>,
            busy: &mut u64,
        ) -> Result<Vec<Vec<Address>>, Failure> {
            let parallel = pool.is_some();
            let (per_block, ns) = host(pool, || {
                inputs
                    .iter()
                    .map(|input| signatures(input, parallel))
                    .collect::<Vec<_>>()
            });
            *busy += ns;
            let all = per_block.concat();
            let t = std::time::Instant::now();
            let recovered = self.launch(&all)?;
            *busy += t.elapsed().as_nanos() as u64;
            let (checked, ns) = host(pool, || {
                let mut at = 0;
                inputs
                    .iter()
                    .zip(&per_block)
                    .map(|(input, sigs)| {
                        let mine = &recovered[at..at + sigs.len()];
                        at += sigs.len();
                        check(input, sigs, mine, parallel)
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

    /// `f` on `pool` (timed from the moment a thread took it up), or on the calling thread.
    fn host<T: Send>(pool: Option<&rayon::ThreadPool>, f: impl FnOnce() -> T + Send) -> (T, u64) {
        match pool {
            Some(pool) => on(pool, f),
            None => {
                let t = std::time::Instant::now();
                let out = f();
                (out, t.elapsed().as_nanos() as u64)
            }
        }
    }

    /// `f` over `0..n`, in order: in parallel on the current thread budget, or on this
    /// thread (never on rayon's global pool, which is not the run's budget).
    fn map_range<T: Send>(
        n: usize,
        parallel: bool,
        f: impl Fn(usize) -> T + Sync + Send,
    ) -> Vec<T> {
        if parallel {
            (0..n).into_par_iter().map(f).collect()
        } else {
            (0..n).map(f).collect()
        }
    }

    /// A block's signing hashes and signatures (the hash is a keccak of the transaction's
    /// encoding), in parallel on the current thread budget or on this thread.
    pub(super) fn signatures(input: &BlockInput, parallel: bool) -> Vec<SigInput> {
        let txs = &input.transactions;
        map_range(txs.len(), parallel, |i| {
            let envelope = &txs[i].envelope;
            let sig = envelope.signature();
            SigInput {
                hash: envelope.signature_hash(),
                r: sig.r(),
                s: sig.s(),
                y_parity: sig.v(),
            }
        })
    }

    /// The GPU's answers for a block checked against the block file's senders: a signature the
    /// kernel could not recover, one the fork forbids (high s after Homestead) and one that
    /// recovers to another sender than the file's are recovered again on the CPU, whose error
    /// (naming block, transaction and field) is authoritative; a GPU address the CPU
    /// contradicts is a hard error.
    pub(super) fn check(
        input: &BlockInput,
        sigs: &[SigInput],
        recovered: &[Option<Address>],
        parallel: bool,
    ) -> Result<Vec<Address>, Failure> {
        let spec = input
            .spec
            .unwrap_or_else(|| gigagas_exec::spec::mainnet_spec(&input.header));
        let homestead = spec.is_enabled_in(SpecId::HOMESTEAD);
        map_range(sigs.len(), parallel, |tx| {
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
                            what: format!("the GPU recovered {g}, libsecp256k1 {cpu}: a GPU fault"),
                        })),
                        _ => Ok(cpu),
                    }
                }
            }
        })
        .into_iter()
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::gpu::{check, signatures, Failure};
    use alloy_primitives::Address;

    /// A GPU launch's hashes and checks give the same answers on the calling thread as on
    /// the budget (the later launches' host work moved there), and a wrong answer from the
    /// device is the same hard error naming the block and transaction both ways.
    #[test]
    fn host_work_on_the_caller_equals_the_budget() {
        let sample = gigagas_data::load(&gigagas_data::DataSource::embedded().unwrap()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut checked = 0;
        for input in sample.blocks.iter().filter(|b| !b.transactions.is_empty()) {
            let here = signatures(input, false);
            let there = pool.install(|| signatures(input, true));
            assert_eq!(here, there, "block {}", input.number());
            // The device's answers, as a GPU that agrees with the block file gives them.
            let answers: Vec<Option<Address>> = input
                .transactions
                .iter()
                .map(|t| Some(t.claimed_sender))
                .collect();
            let claimed: Vec<Address> = answers.iter().flatten().copied().collect();
            let ok = |parallel| match check(input, &here, &answers, parallel) {
                Ok(senders) => senders,
                Err(_) => panic!("block {}: a right answer refused", input.number()),
            };
            assert_eq!(ok(false), claimed);
            assert_eq!(pool.install(|| ok(true)), claimed);
            // One wrong address from the device: the CPU decides, and names it a GPU fault.
            let mut wrong = answers.clone();
            let last = wrong.len() - 1;
            wrong[last] = Some(Address::repeat_byte(0x42));
            for parallel in [false, true] {
                let e = match pool.install(|| check(input, &here, &wrong, parallel)) {
                    Err(Failure::Block(e)) => e.to_string(),
                    _ => panic!("block {}: a wrong GPU answer accepted", input.number()),
                };
                assert!(
                    e.contains(&format!("block {}", input.number())) && e.contains("GPU fault"),
                    "{e}"
                );
            }
            checked += 1;
        }
        assert!(checked >= 40, "{checked} blocks with transactions");
    }
}
