//! Compiles the kernel text (`src/kernel/recover.cu`) as plain C for the host, through
//! `src/kernel/host.c`: the tests compare that build with libsecp256k1 and `gigagas gpu check
//! --host` runs it. The GPU build of the same text happens at run time (NVRTC), so nothing of
//! CUDA is needed here.
//!
//! Also finds a C++ compiler for the test that checks the kernel's NVRTC branch as C++
//! (`cfg(gigagas_cxx)`), and marks the device tests: `cfg(gigagas_gpu_device)` is set when this machine shows an
//! NVIDIA device node (`/dev/nvidiactl`) or `GIGAGAS_GPU=1`; without it the tests that need a
//! GPU are reported ignored with their reason. (Unlike the shared-data probes, an absent GPU
//! is no error in CI: CI machines have none.)

fn main() {
    println!("cargo::rerun-if-changed=src/kernel/recover.cu");
    println!("cargo::rerun-if-changed=src/kernel/host.c");
    cc::Build::new()
        .file("src/kernel/host.c")
        .include("src/kernel")
        .opt_level(3)
        .warnings(true)
        .extra_warnings(true)
        .compile("gigagas_gpu_host");

    // A C++ compiler to check the kernel's NVRTC branch as C++ (tests/nvrtc_stub.cpp).
    println!("cargo::rustc-check-cfg=cfg(gigagas_cxx)");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if std::process::Command::new(&cxx)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!("cargo::rustc-cfg=gigagas_cxx");
        println!("cargo::rustc-env=GIGAGAS_CXX={cxx}");
    }

    println!("cargo::rustc-check-cfg=cfg(gigagas_gpu_device)");
    println!("cargo::rerun-if-env-changed=GIGAGAS_GPU");
    let forced = std::env::var("GIGAGAS_GPU").is_ok_and(|v| v == "1");
    if forced || std::path::Path::new("/dev/nvidiactl").exists() {
        println!("cargo::rustc-cfg=gigagas_gpu_device");
    }
}
