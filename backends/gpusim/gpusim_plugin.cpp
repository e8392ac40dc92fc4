// The gpusim plugin: backends/gpu's GpuBackend, built from the same host code and kernels as
// the CUDA and ROCm plugins, running on the host simulator, with a host GEMM in cuBLAS's place.
// It is always usable and slow: it exists to execute the GPU code where no GPU is.

#include <string>

#include "backends/gpu/gpu_backend.h"
#include "backends/gpusim/host_gemm.h"
#include "core/runtime/backend_plugin_abi.h"

namespace gpusim {

int warp_size() {
  return BATON_GPUSIM_WARP_SIZE;
}

namespace {

#define GPUSIM_STRINGIFY2(x) #x
#define GPUSIM_STRINGIFY(x) GPUSIM_STRINGIFY2(x)
constexpr const char* kName = GPUSIM_STRINGIFY(BATON_GPUSIM_NAME);

baton::BackendStatus probe() {
  return {true, std::to_string(warp_size()) +
                    "-lane warps, every kernel access checked; tests logic, not speed"};
}

std::unique_ptr<baton::Backend> create(const baton::BackendOptions&) {
  return baton::gpu::make_gpu_backend(baton::gpu::GpuBackendSpec{
      .name = kName,
      .describe = [](const gpuDeviceProp_t& props) { return std::string(props.name); },
      .make_gemm =
          [](gpuStream_t stream, std::shared_ptr<baton::gpu::DeviceAllocator> allocator) {
            return make_host_gemm(stream, std::move(allocator));
          }});
}

}  // namespace
}  // namespace gpusim

extern "C" const baton::BackendPluginInfo* baton_backend_plugin_entry(uint32_t) {
  static const baton::BackendPluginInfo info{
      baton::kBackendAbiVersion, gpusim::kName,
      "host simulator of the GPU backend: its CUDA/HIP kernels on the CPU, for tests (slow)",
      &gpusim::probe, &gpusim::create};
  return &info;
}
