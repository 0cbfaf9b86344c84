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
#[derive(Debug, Default)]
pub struct Recoverer {
    /// The GPU, when one was opened.
    gpu: Option<gpu::Device>,
}

impl Recoverer {
    /// Recovery on the CPU.
    pub fn cpu() -> Self {
        Self { gpu: None }
    }

    /// Opens `backend`: `gpu` without a GPU that answers is an error naming what is
    /// missing; `auto` falls back to the CPU (say so with [`Self::describe`]).
    pub fn open(backend: RecoveryBackend) -> Result<Self, String> {
        match backend {
            RecoveryBackend::Cpu => Ok(Self::cpu()),
            RecoveryBackend::Gpu => gpu::Device::open()
                .map(|d| Self { gpu: Some(d) })
                .map_err(|why| format!("no GPU to recover senders on: {why}")),
            RecoveryBackend::Auto => Ok(Self {
                gpu: gpu::Device::open().ok(),
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

    /// Every transaction's sender, checked against the block file's; on the GPU, any
    /// signature it cannot recover or recovers to another sender is recovered again on the
    /// CPU, whose error (naming block, transaction and field) or answer is authoritative.
    pub fn recover(&self, input: &BlockInput) -> Result<Vec<Address>, ExecError> {
        match &self.gpu {
            Some(d) => d.recover(input),
            None => recover_senders(input),
        }
    }
}

/// The GPU backend (no GPU support is built into this version: every open says so).
mod gpu {
    use super::*;

    /// An opened GPU.
    #[derive(Debug)]
    pub(super) struct Device {
        name: String,
    }

    impl Device {
        pub(super) fn open() -> Result<Self, String> {
            Err("this build has no GPU support".into())
        }

        pub(super) fn name(&self) -> &str {
            &self.name
        }

        pub(super) fn recover(&self, input: &BlockInput) -> Result<Vec<Address>, ExecError> {
            recover_senders(input)
        }
    }
}
