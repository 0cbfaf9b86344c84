// The kernel's NVRTC branch (__CUDACC_RTC__) checked as C++ on a machine without CUDA: the CUDA
// keywords become nothing, the built-in thread indices plain structs. Only syntax and types are
// checked here (tests/host_kernel.rs: `nvrtc_branch_is_valid_cxx`); NVRTC itself compiles the
// text on the GPU machine.
#define __CUDACC_RTC__ 1
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __constant__
#define __global__
#define __launch_bounds__(x)
#define __restrict__
struct gg_dim3 {
    unsigned x, y, z;
};
static gg_dim3 blockIdx, blockDim, threadIdx;
#include "../src/kernel/recover.cu"
