# Sourced by the scripts run on the lent GPU machine (scripts/device-gpu.sh,
# scripts/device-ab.sh): puts NVRTC and the driver library on the loader's path. They are on
# it already, or in the CUDA toolkit, the driver's mount, or the Python wheels
# (nvidia-cuda-nvrtc); cudarc dlopens libnvrtc.so.13 / libnvrtc.so and libcuda.so.1 by name.
cuda_extra=""
for cuda_dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [[ -d $cuda_dir ]] && cuda_extra="$cuda_extra:$cuda_dir"
done
while IFS= read -r cuda_lib; do cuda_extra="$cuda_extra:$(dirname "$cuda_lib")"; done < <(
  timeout 10 find /usr/local /opt -xdev \( -name 'libnvrtc.so.1[0-9]' -o -name 'libnvrtc.so' \) 2>/dev/null | head -5)
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}${cuda_extra}"
unset cuda_extra cuda_dir cuda_lib
