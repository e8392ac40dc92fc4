#pragma once

// The one place that names the GPU vendor's runtime. Kernels (backends/gpu/kernels) and the
// launch code are written against the gpu* names below, so the CUDA backend compiles them with
// nvcc, a ROCm backend compiles the very same files with hipcc (which defines __HIP__; host
// files that a plain C++ compiler builds for ROCm define BATON_GPU_HIP), and gpusim, the host
// simulator (backends/gpusim), compiles them with the host's C++ compiler under BATON_GPU_SIM.
// Host code includes this header too; the device helpers at the end exist only in a kernel
// pass (a device compiler's, or gpusim's BATON_GPUSIM_KERNELS). Everything here also builds as
// C++17.

#include <cstddef>
#include <cstdint>

#if defined(BATON_GPU_SIM)
#define BATON_GPU_IS_HIP 0
#define BATON_GPU_IS_SIM 1
#include "backends/gpusim/sim_runtime.h"
#elif defined(BATON_GPU_HIP) || defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
#define BATON_GPU_IS_HIP 1
#define BATON_GPU_IS_SIM 0
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#define BATON_GPU_IS_HIP 0
#define BATON_GPU_IS_SIM 0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#if BATON_GPU_IS_SIM
using gpuError_t = gpusim::Error;
using gpuStream_t = gpusim::Stream;
using gpuEvent_t = gpusim::Event;
using gpuDeviceProp_t = gpusim::DeviceProp;
using gpu_half = gpusim::Half;
using gpu_bf16 = gpusim::BFloat16;
#define gpuSuccess gpusim::kSuccess
#define gpuGetErrorString gpusim::get_error_string
#define gpuGetLastError gpusim::get_last_error
#define gpuGetDeviceCount gpusim::get_device_count
#define gpuGetDeviceProperties gpusim::get_device_properties
#define gpuSetDevice gpusim::set_device
#define gpuDeviceSynchronize gpusim::device_synchronize
#define gpuMalloc gpusim::malloc
#define gpuFree gpusim::free
#define gpuMallocHost gpusim::malloc_host
#define gpuFreeHost gpusim::free_host
#define gpuMemcpyAsync gpusim::memcpy_async
#define gpuMemsetAsync gpusim::memset_async
#define gpuMemcpyHostToDevice gpusim::kMemcpyHostToDevice
#define gpuMemcpyDeviceToHost gpusim::kMemcpyDeviceToHost
#define gpuStreamCreateWithFlags gpusim::stream_create_with_flags
#define gpuStreamNonBlocking gpusim::kStreamNonBlocking
#define gpuStreamDestroy gpusim::stream_destroy
#define gpuStreamSynchronize gpusim::stream_synchronize
#define gpuEventCreateWithFlags gpusim::event_create_with_flags
#define gpuEventDisableTiming gpusim::kEventDisableTiming
#define gpuEventDestroy gpusim::event_destroy
#define gpuEventRecord gpusim::event_record
#define gpuEventSynchronize gpusim::event_synchronize
#define gpuFuncSetAttribute gpusim::func_set_attribute
#define gpuFuncAttributeMaxDynamicSharedMemorySize gpusim::kFuncAttributeMaxDynamicSharedMemorySize
#elif BATON_GPU_IS_HIP
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp_t = hipDeviceProp_t;
using gpu_half = __half;
using gpu_bf16 = hip_bfloat16;
#define gpuSuccess hipSuccess
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuSetDevice hipSetDevice
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuFuncSetAttribute hipFuncSetAttribute
#define gpuFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#else
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp_t = cudaDeviceProp;
using gpu_half = __half;
using gpu_bf16 = __nv_bfloat16;
#define gpuSuccess cudaSuccess
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuSetDevice cudaSetDevice
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuFuncSetAttribute cudaFuncSetAttribute
#define gpuFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#endif

namespace baton::gpu {

// Throws baton::Error(kBackend) naming the failed call, its source line and the runtime's
// message (defined in gpu_error.cpp, so this header needs no C++20 Baton headers).
[[noreturn]] void throw_gpu_error(gpuError_t error, const char* call, const char* file, int line);

}  // namespace baton::gpu

// Runs a runtime call on the host and throws on failure. After a kernel launch,
// GPU_CHECK(gpuGetLastError()) reports a bad launch configuration at the launch site.
#define GPU_CHECK(call)                                                           \
  do {                                                                            \
    const gpuError_t gpu_check_error_ = (call);                                   \
    if (gpu_check_error_ != gpuSuccess) {                                         \
      ::baton::gpu::throw_gpu_error(gpu_check_error_, #call, __FILE__, __LINE__); \
    }                                                                             \
  } while (0)

// Runs a call whose failure nobody can report (destructors, cleanup at exit); a failure must not
// stay this thread's last error either, or the next launch check would blame its kernel.
#define GPU_IGNORE(call)                               \
  do {                                                 \
    if ((call) != gpuSuccess) (void)gpuGetLastError(); \
  } while (0)

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(BATON_GPUSIM_KERNELS)

#if BATON_GPU_IS_SIM
#include "backends/gpusim/sim_device.h"
// The lanes of a simulated warp: 32 (CUDA's) or 64 (CDNA's), fixed per build of the simulator.
#define BATON_WARP_SIZE BATON_GPUSIM_WARP_SIZE
#define GPU_SHFL_XOR(value, lane_mask, width) ::gpusim::shfl_xor((value), (lane_mask), (width))
// Shared memory is the block's own simulated device memory, checked like global memory.
#define GPU_SHARED_ARRAY(type, name, dims) \
  type(&name) dims = *static_cast<type(*) dims>(::gpusim::shared_array(sizeof(type dims)))
#define GPU_DYNAMIC_SHARED(type, name) \
  type* const name = static_cast<type*>(::gpusim::dynamic_shared_memory())
#else
// `type name dims` in the block's shared memory (dims: "[16][65]"), declared once at the top of
// a kernel (gpusim matches declarations by their order); the dynamic shared memory sized by the
// launch, as an array of `type`.
#define GPU_SHARED_ARRAY(type, name, dims) __shared__ type name dims
#define GPU_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
// Lanes that execute in lock step: 32 on NVIDIA; 64 on CDNA (MI-series) and 32 on RDNA, which
// hipcc reports per target in __AMDGCN_WAVEFRONT_SIZE during the device pass.
#if BATON_GPU_IS_HIP
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define BATON_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define BATON_WARP_SIZE 64
#endif
// HIP (5.2 included) has no *_sync shuffles: a wavefront always runs converged.
#define GPU_SHFL_XOR(value, lane_mask, width) __shfl_xor((value), (lane_mask), (width))
#else
#define BATON_WARP_SIZE 32
#define GPU_SHFL_XOR(value, lane_mask, width) \
  __shfl_xor_sync(0xffffffffu, (value), (lane_mask), (width))
#endif
#endif

namespace baton::gpu {

constexpr int kWarpSize = BATON_WARP_SIZE;

// Queues Kernel(args...) over `grid` blocks of `block` threads with `shared_bytes` of dynamic
// shared memory: Kernel<<<grid, block, shared_bytes, stream>>>(args...) on a GPU. A launcher
// names the kernel as a template argument so that gpusim can name it in its reports.
template <auto Kernel, typename... Args>
void launch(dim3 grid, dim3 block, size_t shared_bytes, gpuStream_t stream, const Args&... args) {
#if BATON_GPU_IS_SIM
  gpusim::enqueue_kernel<Kernel>(grid, block, shared_bytes, stream, args...);
#else
  // clang-format reads a .h file as C++, where <<< >>> is no token.
  // clang-format off
  Kernel<<<grid, block, shared_bytes, stream>>>(args...);
  // clang-format on
#endif
}

// Sum / max over groups of `width` consecutive lanes (a power of two <= kWarpSize); every lane
// of the group gets the result. The default is the whole warp or wavefront.
template <int width = kWarpSize>
__device__ inline float warp_reduce_sum(float value) {
#pragma unroll
  for (int offset = width / 2; offset > 0; offset >>= 1) {
    value += GPU_SHFL_XOR(value, offset, width);
  }
  return value;
}

template <int width = kWarpSize>
__device__ inline float warp_reduce_max(float value) {
#pragma unroll
  for (int offset = width / 2; offset > 0; offset >>= 1) {
    value = fmaxf(value, GPU_SHFL_XOR(value, offset, width));
  }
  return value;
}

// Sum / max over the whole thread block; every thread gets the result. `scratch` is shared
// memory of at least blockDim.x / kWarpSize floats; blockDim.x must be a multiple of kWarpSize.
__device__ inline float block_reduce_sum(float value, float* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  value = warp_reduce_sum(value);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = lane < warps ? scratch[lane] : 0.0f;
  return warp_reduce_sum(value);
}

__device__ inline float block_reduce_max(float value, float* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  value = warp_reduce_max(value);
  __syncthreads();
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = lane < warps ? scratch[lane] : -INFINITY;
  return warp_reduce_max(value);
}

__device__ inline float half_to_float(gpu_half h) {
  return __half2float(h);
}
__device__ inline gpu_half float_to_half(float f) {
  return __float2half_rn(f);
}

#if BATON_GPU_IS_HIP
__device__ inline float bf16_to_float(gpu_bf16 b) {
  return static_cast<float>(b);
}
__device__ inline gpu_bf16 float_to_bf16(float f) {
  return gpu_bf16(f);  // rounds to nearest even
}
#else
__device__ inline float bf16_to_float(gpu_bf16 b) {
  return __bfloat162float(b);
}
__device__ inline gpu_bf16 float_to_bf16(float f) {
  return __float2bfloat16_rn(f);
}
#endif

}  // namespace baton::gpu

#endif  // __CUDACC__ || __HIPCC__
