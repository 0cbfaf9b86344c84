//! The GPU side: opening the device (dynamic loading guarded), compiling the kernel with
//! NVRTC, uploading the G table, and running batches.

use crate::{
    pack, table, unpack, GpuError, GpuTiming, SigInput, IN_WORDS, KERNEL_SOURCE, OUT_WORDS,
};
use alloy_primitives::Address;
use cudarc::driver::sys::CUresult;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Signatures per kernel launch at most: a larger call is split, so device memory stays
/// bounded (about 124 MiB of buffers at this size).
pub const MAX_LAUNCH: usize = 1 << 20;

/// Threads per block (the kernel's `__launch_bounds__`).
const BLOCK: u32 = 128;

/// A GPU ready to recover senders: the kernel compiled and loaded, the table of G on the
/// device. `Send + Sync`; calls from several threads take turns on the device.
pub struct GpuRecoverer {
    name: String,
    compute_capability: (i32, i32),
    state: Mutex<State>,
}

/// Everything that touches the device, behind the lock.
struct State {
    stream: Arc<CudaStream>,
    func: CudaFunction,
    table: CudaSlice<u32>,
    /// Input and output buffers, grown to the largest launch so far (≤ MAX_LAUNCH).
    buffers: Option<(CudaSlice<u32>, CudaSlice<u32>, usize)>,
    /// Host staging of the packed input and the raw output.
    input: Vec<u32>,
    output: Vec<u32>,
    /// The driver context, kept alive for the stream and buffers.
    _ctx: Arc<CudaContext>,
}

fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<GpuRecoverer>();
}

/// What `f` returns, or `GpuError::Library` when the CUDA bindings panic inside it (cudarc
/// panics on a missing library or symbol).
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, GpuError>) -> Result<T, GpuError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(GpuError::Library(format!("{what}: {msg}")))
        }
    }
}

fn is_oom(e: &DriverError) -> bool {
    e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY
}

fn launch_err(what: &str, e: DriverError) -> GpuError {
    if is_oom(&e) {
        GpuError::OutOfMemory(format!("{what}: {e}"))
    } else {
        GpuError::Launch(format!("{what}: {e}"))
    }
}

/// NVRTC's name for the virtual architecture of compute capability `cc` (PTX for it, which
/// the driver compiles for the device at load time), for the versions NVRTC 13 knows.
fn arch(cc: (i32, i32)) -> Option<&'static str> {
    Some(match cc {
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 7) => "compute_87",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (10, 3) => "compute_103",
        (11, 0) => "compute_110",
        (12, 0) => "compute_120",
        (12, 1) => "compute_121",
        _ => return None,
    })
}

impl GpuRecoverer {
    /// Opens GPU 0: loads the CUDA driver and NVRTC, compiles the kernel for the device, and
    /// uploads the table of G. [`GpuError::NoDevice`] says which piece is missing when the
    /// libraries cannot be loaded or no device answers; nothing here panics.
    pub fn open() -> Result<Self, GpuError> {
        // Checked first: cudarc panics when it has to load a library that is not there.
        // SAFETY: these only try to dlopen the candidate library names.
        let driver = catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() });
        if !matches!(driver, Ok(true)) {
            return Err(GpuError::NoDevice(
                "the CUDA driver library (libcuda.so.1) cannot be loaded: no NVIDIA driver on \
                 this machine, or it is not on the library path"
                    .into(),
            ));
        }
        let nvrtc = catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() });
        if !matches!(nvrtc, Ok(true)) {
            return Err(GpuError::NoDevice(
                "NVRTC (libnvrtc.so, CUDA's run-time compiler) cannot be loaded: install the \
                 CUDA toolkit's NVRTC or put its lib directory on LD_LIBRARY_PATH"
                    .into(),
            ));
        }
        guarded("opening the GPU", Self::open_inner)
    }

    fn open_inner() -> Result<Self, GpuError> {
        let count = CudaContext::device_count()
            .map_err(|e| GpuError::NoDevice(format!("the CUDA driver answers {e}")))?;
        if count < 1 {
            return Err(GpuError::NoDevice(
                "the CUDA driver loads but reports no device".into(),
            ));
        }
        let ctx = CudaContext::new(0)
            .map_err(|e| GpuError::NoDevice(format!("CUDA device 0 cannot be opened: {e}")))?;
        // The thread that waits for a launch sleeps instead of spinning (the driver's default
        // spins while it has more cores than GPUs): in a pipeline that core belongs to the
        // stages beside it. A scheduling preference only: a driver that refuses it still
        // recovers the same addresses.
        let _ = ctx.set_blocking_synchronize();
        let name = ctx
            .name()
            .map_err(|e| GpuError::NoDevice(format!("CUDA device 0 has no name: {e}")))?;
        let cc = ctx
            .compute_capability()
            .map_err(|e| GpuError::NoDevice(format!("{name}: no compute capability: {e}")))?;
        // One stream, used under the lock: no cross-stream events are needed.
        // SAFETY: every buffer of this context is used on `stream` alone.
        unsafe { ctx.disable_event_tracking() };
        let opts = cudarc::nvrtc::CompileOptions {
            arch: arch(cc),
            options: vec!["--std=c++17".into()],
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(KERNEL_SOURCE, opts).map_err(|e| {
            GpuError::Compile(match e {
                cudarc::nvrtc::CompileError::CompileError { nvrtc, log, .. } => {
                    format!("NVRTC {nvrtc:?}: {}", log.to_string_lossy())
                }
                other => format!("NVRTC: {other}"),
            })
        })?;
        let module = ctx
            .load_module(ptx)
            .map_err(|e| GpuError::Compile(format!("the driver cannot load the kernel: {e}")))?;
        let func = module
            .load_function("gg_recover")
            .map_err(|e| GpuError::Compile(format!("kernel gg_recover not found: {e}")))?;
        // The per-thread stack holds the point tables (about 2 KiB): raise the context's stack
        // limit when the kernel's local memory exceeds it (the driver usually does this by
        // itself for a call graph without recursion; this makes it explicit).
        if let (Ok(local), Ok(limit)) = (
            func.local_size_bytes(),
            ctx.get_limit(cudarc::driver::sys::CUlimit::CU_LIMIT_STACK_SIZE),
        ) {
            let need = usize::try_from(local).unwrap_or(0) + 1024;
            if need > limit {
                ctx.set_limit(cudarc::driver::sys::CUlimit::CU_LIMIT_STACK_SIZE, need)
                    .map_err(|e| launch_err("raising the stack limit", e))?;
            }
        }
        let stream = ctx.default_stream();
        let host_table = table::g_table().map_err(GpuError::Library)?;
        let table = stream
            .clone_htod(host_table)
            .map_err(|e| launch_err("uploading the table of G", e))?;
        stream
            .synchronize()
            .map_err(|e| launch_err("uploading the table of G", e))?;
        Ok(GpuRecoverer {
            name,
            compute_capability: cc,
            state: Mutex::new(State {
                stream,
                func,
                table,
                buffers: None,
                input: Vec::new(),
                output: Vec::new(),
                _ctx: ctx,
            }),
        })
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// The device's compute capability (major, minor), e.g. (9, 0) for Hopper.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The sender address of each signature, in order: `None` where no key exists (r or s zero
    /// or ≥ n, r not the x of a curve point, the result at infinity), so the caller runs its
    /// CPU path for the exact error. Any number of signatures (split into launches of at most
    /// [`MAX_LAUNCH`]).
    pub fn recover(&self, sigs: &[SigInput]) -> Result<Vec<Option<Address>>, GpuError> {
        self.recover_timed(sigs).map(|(out, _)| out)
    }

    /// [`recover`](Self::recover), with where the time went (summed over the launches).
    pub fn recover_timed(
        &self,
        sigs: &[SigInput],
    ) -> Result<(Vec<Option<Address>>, GpuTiming), GpuError> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| GpuError::Library("the GPU state lock is poisoned".into()))?;
        let state = &mut *state;
        let mut out = Vec::with_capacity(sigs.len());
        let mut timing = GpuTiming::default();
        for chunk in sigs.chunks(MAX_LAUNCH) {
            let t = guarded("recovering on the GPU", || state.launch(chunk, &mut out))?;
            timing.add(&t);
        }
        Ok((out, timing))
    }
}

impl State {
    /// One launch: pack, copy in, run, copy out, unpack into `out`.
    fn launch(
        &mut self,
        sigs: &[SigInput],
        out: &mut Vec<Option<Address>>,
    ) -> Result<GpuTiming, GpuError> {
        let n = sigs.len();
        let mut timing = GpuTiming::default();
        if n == 0 {
            return Ok(timing);
        }
        let t0 = Instant::now();
        pack(sigs, &mut self.input);
        self.output.clear();
        self.output.resize(n * OUT_WORDS, 0);
        timing.host_ns = t0.elapsed().as_nanos() as u64;

        let have = self.buffers.as_ref().map_or(0, |b| b.2);
        if have < n {
            self.buffers = None; // free the smaller ones first
            let cap = n.next_power_of_two().min(crate::device::MAX_LAUNCH).max(n);
            // SAFETY: both buffers are written (input by the copy, output by the kernel)
            // before anything reads them.
            let inb = unsafe { self.stream.alloc::<u32>(cap * IN_WORDS) }
                .map_err(|e| launch_err("allocating the input buffer", e))?;
            let outb = unsafe { self.stream.alloc::<u32>(cap * OUT_WORDS) }
                .map_err(|e| launch_err("allocating the output buffer", e))?;
            self.buffers = Some((inb, outb, cap));
        }
        let Some((inb, outb, _)) = self.buffers.as_mut() else {
            return Err(GpuError::Library("no device buffers".into()));
        };

        let t1 = Instant::now();
        {
            let mut dst = inb.slice_mut(0..n * IN_WORDS);
            self.stream
                .memcpy_htod(self.input.as_slice(), &mut dst)
                .map_err(|e| launch_err("copying the signatures to the GPU", e))?;
        }
        self.stream
            .synchronize()
            .map_err(|e| launch_err("copying the signatures to the GPU", e))?;
        timing.transfer_in_ns = t1.elapsed().as_nanos() as u64;

        let t2 = Instant::now();
        let count = n as u32;
        let cfg = LaunchConfig {
            grid_dim: (count.div_ceil(BLOCK), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = self.stream.launch_builder(&self.func);
        builder.arg(&*inb);
        builder.arg(&mut *outb);
        builder.arg(&self.table);
        builder.arg(&count);
        // SAFETY: gg_recover(const u32 *in, u32 *out, const u32 *gtable, u32 n) reads n·25
        // words of `in`, writes n·6 of `out` and reads the whole table, all of which the
        // buffers hold (their capacity is ≥ n).
        unsafe { builder.launch(cfg) }.map_err(|e| launch_err("launching gg_recover", e))?;
        self.stream
            .synchronize()
            .map_err(|e| launch_err("running gg_recover", e))?;
        timing.kernel_ns = t2.elapsed().as_nanos() as u64;

        let t3 = Instant::now();
        {
            let src = outb.slice(0..n * OUT_WORDS);
            self.stream
                .memcpy_dtoh(&src, self.output.as_mut_slice())
                .map_err(|e| launch_err("copying the results from the GPU", e))?;
        }
        self.stream
            .synchronize()
            .map_err(|e| launch_err("copying the results from the GPU", e))?;
        timing.transfer_out_ns = t3.elapsed().as_nanos() as u64;

        let t4 = Instant::now();
        unpack(&self.output, out);
        timing.host_ns += t4.elapsed().as_nanos() as u64;
        Ok(timing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names() {
        assert_eq!(arch((9, 0)), Some("compute_90"));
        assert_eq!(arch((6, 1)), None);
    }
}
