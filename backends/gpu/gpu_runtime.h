#pragma once

// The one place that names the GPU vendor's runtime. Kernels (backends/gpu/kernels) and the
// launch code are written against the gpu* names below, so the CUDA backend compiles them with
// nvcc and a ROCm backend compiles the very same files with hipcc (which defines __HIP__; host
// files that a plain C++ compiler builds for ROCm define BATON_GPU_HIP). Host code includes this
// header too; the device helpers at the end exist only in a device compiler's pass. Everything
// here also builds as C++17.

#include <cstdint>

#if defined(BATON_GPU_HIP) || defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
#define BATON_GPU_IS_HIP 1
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#define BATON_GPU_IS_HIP 0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#if BATON_GPU_IS_HIP
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

#if defined(__CUDACC__) || defined(__HIPCC__)

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

namespace baton::gpu {

constexpr int kWarpSize = BATON_WARP_SIZE;

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
