#pragma once

// The Backend every GPU plugin is: device memory from a caching allocator, one stream for every
// kernel and copy, the kernels of backends/gpu/kernels, and a Gemm for products of many rows.
// The CUDA and ROCm plugins differ only in their probe, their device's description and their
// Gemm; the vendor's runtime is the one gpu_runtime.h is compiled for.

#include <functional>
#include <memory>
#include <string>

#include "backends/gpu/device_allocator.h"
#include "backends/gpu/device_collectives.h"
#include "backends/gpu/gemm.h"
#include "backends/gpu/gpu_runtime.h"
#include "core/runtime/backend.h"

namespace baton::gpu {

struct GpuBackendSpec {
  std::string name;  // "cuda", "rocm": the backend's name and its buffers' device()
  // DeviceInfo's description of device 0: "NVIDIA H200, compute capability 9.0, 132 SMs".
  std::function<std::string(const gpuDeviceProp_t&)> describe;
  // The vendor's GEMM on the backend's stream, with scratch memory from `allocator`.
  std::function<std::unique_ptr<Gemm>(gpuStream_t stream,
                                      std::shared_ptr<DeviceAllocator> allocator)>
      make_gemm;
  // The vendor's device collectives; empty where there are none (all-reduces are then staged
  // through the host).
  std::function<std::unique_ptr<DeviceCollectives>()> make_collectives;
};

// A backend on one device of the runtime (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES pick which
// GPUs it sees): device 0 in a single process; under mpirun or srun, the rank's local index
// modulo the device count, so the ranks on one host use one GPU each. BATON_GPU_GEMM=tiled
// replaces the spec's GEMM by the tiled kernel; BATON_GPU_COLLECTIVES=host stages all-reduces
// through the host even where the spec has device collectives. Throws Error(kBackend) when the
// device cannot be set up, Error(kInvalidArgument) for another value of either variable.
std::unique_ptr<Backend> make_gpu_backend(const GpuBackendSpec& spec);

}  // namespace baton::gpu
