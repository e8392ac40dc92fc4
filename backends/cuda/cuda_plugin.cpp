// The plugin's entry point and probe. The CUDA runtime is linked statically, so this library
// loads on any host and a missing driver or device shows up here, as a probe result, instead
// of as a dlopen failure; cuBLAS is linked as a shared library, so loading the plugin needs
// libcublas.so.13 and libcublasLt.so.13 (CUDA 13) on the library path.

#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/gpu/gpu_runtime.h"
#include "core/backend_plugin_abi.h"

namespace baton::cuda {
namespace {

// The oldest GPU generation the kernels are built for (CMAKE_CUDA_ARCHITECTURES 80;90, with
// PTX that newer GPUs compile at load).
constexpr int kMinComputeMajor = 8;

}  // namespace

BackendStatus probe() {
  int count = 0;
  const gpuError_t error = gpuGetDeviceCount(&count);
  if (error != gpuSuccess) {
    return {false, std::string("no usable CUDA device: ") + gpuGetErrorString(error) +
                       " (driver not installed?)"};
  }
  if (count == 0) return {false, "no usable CUDA device: the driver reports none"};
  gpuDeviceProp_t props{};
  if (const gpuError_t e = gpuGetDeviceProperties(&props, 0); e != gpuSuccess) {
    return {false, std::string("cannot query CUDA device 0: ") + gpuGetErrorString(e)};
  }
  const std::string name = std::string(props.name) + " (compute capability " +
                           std::to_string(props.major) + "." + std::to_string(props.minor) + ")";
  if (props.major < kMinComputeMajor) {
    return {false, name + " is older than this build's kernels, which need compute capability " +
                       std::to_string(kMinComputeMajor) + ".0 or newer"};
  }
  return {true, name + (count > 1 ? ", device 0 of " + std::to_string(count) : "")};
}

}  // namespace baton::cuda

extern "C" const baton::BackendPluginInfo* baton_backend_plugin_entry(uint32_t) {
  static const baton::BackendPluginInfo info{baton::kBackendAbiVersion, "cuda",
                                             "NVIDIA GPUs: CUDA kernels and cuBLAS",
                                             &baton::cuda::probe, &baton::cuda::create};
  return &info;
}
