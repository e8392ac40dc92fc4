// The ROCm plugin: its probe, its backend (backends/gpu's GpuBackend with the tiled kernel as its
// GEMM, since ROCm 5.2 ships no BLAS) and its entry point. libamdhip64 is a shared library
// (Debian ships no static one), so loading the plugin needs libamdhip64.so.5; on a host without
// the amdgpu driver or /dev/kfd the plugin loads and its probe says so.

#include <string>
#include <string_view>

#include "backends/gpu/gpu_backend.h"
#include "backends/gpu/gpu_probe.h"
#include "core/runtime/backend_plugin_abi.h"

namespace baton::rocm {
namespace {

// The architectures hipcc built the kernels for, comma-separated (from CMake's
// BATON_ROCM_ARCHITECTURES). A device of another architecture would fail every launch with
// "invalid device function", so the probe refuses it up front.
constexpr std::string_view kArchitectures = BATON_ROCM_ARCHITECTURES;

// "gfx90a" of "gfx90a:sramecc+:xnack-": code built for the bare architecture runs under every
// setting of its features.
std::string_view base_arch(const char* gcn_arch_name) {
  const std::string_view arch(gcn_arch_name);
  return arch.substr(0, arch.find(':'));
}

bool built_for(std::string_view arch) {
  for (std::string_view rest = kArchitectures; !rest.empty();) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == arch) return true;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return false;
}

BackendStatus probe() {
  return gpu::probe_first_device(
      "ROCm", "amdgpu driver / /dev/kfd missing?", [](const gpuDeviceProp_t& props) {
        const std::string arch(base_arch(props.gcnArchName));
        gpu::DeviceVerdict verdict{std::string(props.name) + " (" + arch + ")"};
        if (!built_for(arch)) {
          verdict.refusal = "is not among the architectures this build's kernels are for (" +
                            std::string(kArchitectures) +
                            "); rebuild with -DBATON_ROCM_ARCHITECTURES=" + arch;
        }
        return verdict;
      });
}

std::unique_ptr<Backend> create(const BackendOptions&) {
  return gpu::make_gpu_backend(gpu::GpuBackendSpec{
      .name = "rocm",
      .describe =
          [](const gpuDeviceProp_t& props) {
            return std::string(props.name) + " (" + std::string(base_arch(props.gcnArchName)) +
                   "), " + std::to_string(props.multiProcessorCount) + " CUs";
          },
      .make_gemm =
          [](gpuStream_t stream, std::shared_ptr<gpu::DeviceAllocator>) {
            return gpu::make_tiled_gemm(stream);
          }});
}

}  // namespace
}  // namespace baton::rocm

extern "C" const baton::BackendPluginInfo* baton_backend_plugin_entry(uint32_t) {
  static const baton::BackendPluginInfo info{baton::kBackendAbiVersion, "rocm",
                                             "AMD GPUs: HIP kernels and a tiled GEMM",
                                             &baton::rocm::probe, &baton::rocm::create};
  return &info;
}
