// The CUDA plugin: its probe, its backend (backends/gpu's GpuBackend with cuBLAS as its GEMM)
// and its entry point. The CUDA runtime is linked statically, so this library loads on any host
// and a missing driver or device shows up here, as a probe result, instead of as a dlopen
// failure; cuBLAS is linked as a shared library, so loading the plugin needs libcublas.so.13
// and libcublasLt.so.13 (CUDA 13) on the library path.

#include <string>

#include "backends/cuda/cublas_gemm.h"
#include "backends/cuda/nccl_collectives.h"
#include "backends/gpu/gpu_backend.h"
#include "backends/gpu/gpu_probe.h"
#include "core/runtime/backend_plugin_abi.h"

namespace baton::cuda {
namespace {

// The oldest GPU generation the kernels are built for (CMAKE_CUDA_ARCHITECTURES 80;90, with
// PTX that newer GPUs compile at load).
constexpr int kMinComputeMajor = 8;

BackendStatus probe() {
  return gpu::probe_first_device("CUDA", "driver not installed?", [](const gpuDeviceProp_t& props) {
    gpu::DeviceVerdict verdict{std::string(props.name) + " (compute capability " +
                               std::to_string(props.major) + "." + std::to_string(props.minor) +
                               ")"};
    if (props.major < kMinComputeMajor) {
      verdict.refusal = "is older than this build's kernels, which need compute capability " +
                        std::to_string(kMinComputeMajor) + ".0 or newer";
    }
    return verdict;
  });
}

std::unique_ptr<Backend> create(const BackendOptions&) {
  return gpu::make_gpu_backend(gpu::GpuBackendSpec{
      .name = "cuda",
      .describe =
          [](const gpuDeviceProp_t& props) {
            return std::string(props.name) + ", compute capability " + std::to_string(props.major) +
                   "." + std::to_string(props.minor) + ", " +
                   std::to_string(props.multiProcessorCount) + " SMs";
          },
      .make_gemm = &make_cublas_gemm,
      .make_collectives = &make_nccl_collectives});
}

}  // namespace
}  // namespace baton::cuda

extern "C" const baton::BackendPluginInfo* baton_backend_plugin_entry(uint32_t) {
  static const baton::BackendPluginInfo info{baton::kBackendAbiVersion, "cuda",
                                             "NVIDIA GPUs: CUDA kernels and cuBLAS",
                                             &baton::cuda::probe, &baton::cuda::create};
  return &info;
}
