//! The GPU itself. Without one (no CUDA driver, no NVRTC, no device) `open` must return
//! `GpuError::NoDevice` naming what is missing, never panic; with one, the device suite:
//! over a million random and adversarial signatures through the real kernel, every address
//! equal to libsecp256k1's, and batch shapes around the launch size.
//!
//! The device tests are reported ignored where the build saw no NVIDIA device
//! (`cfg(gigagas_gpu_device)`, set by build.rs from `/dev/nvidiactl` or `GIGAGAS_GPU=1`). The
//! same suite runs from the release binary: `gigagas gpu check --signatures 1000000`
//! (scripts/device-gpu.sh).

use gigagas_gpu::{suite, GpuError, GpuRecoverer};

#[test]
fn open_never_panics() {
    let opened = std::panic::catch_unwind(GpuRecoverer::open);
    let Ok(result) = opened else {
        panic!("GpuRecoverer::open panicked");
    };
    match result {
        Ok(gpu) => eprintln!("GPU present: {}", gpu.device_name()),
        Err(GpuError::NoDevice(why)) => {
            eprintln!("no GPU: {why}");
            assert!(!why.is_empty());
        }
        Err(other) => {
            // A machine with a driver but a broken toolkit: an error, not a panic, is all
            // this test asks for.
            eprintln!("GPU present but unusable: {other}");
        }
    }
}

#[test]
#[cfg_attr(gigagas_gpu_device, ignore = "this machine has an NVIDIA device")]
fn no_gpu_is_no_device() {
    match GpuRecoverer::open() {
        Err(GpuError::NoDevice(why)) => {
            assert!(
                why.contains("libcuda") || why.contains("NVRTC") || why.contains("device"),
                "{why}"
            );
            // and the message the CLI shows says so
            let shown = GpuError::NoDevice(why).to_string();
            assert!(shown.starts_with("no GPU: "), "{shown}");
        }
        Err(other) => panic!("expected NoDevice, got {other}"),
        Ok(gpu) => panic!(
            "no device node here, yet a GPU opened: {}",
            gpu.device_name()
        ),
    }
}

fn gpu() -> GpuRecoverer {
    match GpuRecoverer::open() {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    }
}

#[test]
#[cfg_attr(
    not(gigagas_gpu_device),
    ignore = "needs an NVIDIA GPU (CUDA driver + NVRTC); on a GPU machine: gigagas gpu check --signatures 1000000 (scripts/device-gpu.sh)"
)]
fn gpu_matches_libsecp256k1_on_over_a_million_signatures() {
    let g = gpu();
    // 1,100,000 random: more than one launch (MAX_LAUNCH = 2^20), so the split is exercised.
    let cases = suite::suite(1_100_000, 2026);
    let t = std::time::Instant::now();
    let got = g.recover(&suite::inputs(&cases)).unwrap();
    let report = suite::compare(g.device_name(), &cases, &got, t.elapsed().as_secs_f64());
    eprintln!(
        "{}: {} signatures, {} recovered, {} differences, {:.3} s",
        report.backend, report.total, report.recovered, report.differences, report.backend_s
    );
    assert!(report.total >= 1_000_000);
    assert_eq!(report.differences, 0, "{:#?}", report.examples);
}

#[test]
#[cfg_attr(
    not(gigagas_gpu_device),
    ignore = "needs an NVIDIA GPU (CUDA driver + NVRTC)"
)]
fn gpu_batch_shapes() {
    let g = gpu();
    assert!(g.recover(&[]).unwrap().is_empty());
    let cases = suite::suite(3_000, 7);
    let inputs = suite::inputs(&cases);
    let want = gigagas_gpu::cpu::recover(&inputs);
    for n in [1usize, 2, 127, 128, 129, 1000, inputs.len()] {
        let (got, timing) = g.recover_timed(&inputs[..n]).unwrap();
        assert_eq!(got, want[..n], "batch of {n}");
        assert!(timing.kernel_ns > 0);
    }
    // calls from several threads take turns
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert_eq!(g.recover(&inputs).unwrap(), want));
        }
    });
}
