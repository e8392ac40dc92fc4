#pragma once

// gpusim's device vocabulary: what the kernels of backends/gpu/kernels use of CUDA C++, mapped
// onto the host. gpu_runtime.h includes it in gpusim's kernel pass (BATON_GPUSIM_KERNELS), where
// a plain C++ compiler builds the .cu files; nothing else should include it.
//
// - A launch runs each block's threads as fibers on the stream's host thread (block_runner.cpp):
//   threadIdx and friends name the running fiber's coordinates, __syncthreads() parks the fiber
//   until every thread of its block has arrived, and a warp shuffle parks it until every lane
//   of its warp has posted its value.
// - Shared memory (GPU_SHARED_ARRAY, GPU_DYNAMIC_SHARED in gpu_runtime.h) lives in device
//   memory of the block's own, checked like global memory and uninitialised at block start.
// - The kernel sources are compiled with -fsanitize=kernel-address, whose per-access callbacks
//   (memory_checks.cpp) check every load and store against device memory's shadow.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

#include "backends/gpusim/sim_runtime.h"
#include "core/runtime/half.h"

using dim3 = gpusim::Dim3;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

namespace gpusim {

// Coordinates of the fiber that is running on this host thread; null outside kernels.
struct ThreadCoordinates {
  Dim3 thread_idx, block_idx, block_dim, grid_dim;
};
extern thread_local const ThreadCoordinates* current_thread;

void syncthreads();
// The value of lane `lane ^ lane_mask` (lane_mask < width, a power of two up to the warp's
// lanes), once every lane of the warp has posted its value.
uint64_t warp_exchange_xor(uint64_t bits, int lane_mask, int width);
// The block's next static shared array and its dynamic shared memory. A thread's n-th
// declaration is the block's n-th array, so every thread must declare the same arrays in the
// same order, each once: at the top of the kernel, not in a loop or a helper called twice.
void* shared_array(size_t bytes);
void* dynamic_shared_memory();

struct KernelLaunch {
  Dim3 grid, block;
  size_t shared_bytes;
  Stream stream;
  const void* kernel;
  const char* signature;  // __PRETTY_FUNCTION__ of kernel_signature<Kernel>
};
// Validates the configuration (the error is also the thread's last error) and queues the grid:
// `thread_body` runs one thread, with current_thread set.
Error launch_kernel(const KernelLaunch& launch, std::function<void()> thread_body);

template <auto Kernel>
const char* kernel_signature() {
  return __PRETTY_FUNCTION__;
}

template <auto Kernel, typename... Args>
void enqueue_kernel(Dim3 grid, Dim3 block, size_t shared_bytes, Stream stream,
                    const Args&... args) {
  launch_kernel(KernelLaunch{grid, block, shared_bytes, stream,
                             reinterpret_cast<const void*>(Kernel), kernel_signature<Kernel>()},
                [args...] { Kernel(args...); });
}

template <typename T>
T shfl_xor(T value, int lane_mask, int width) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "one register per lane");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = warp_exchange_xor(bits, lane_mask, width);
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

}  // namespace gpusim

#define threadIdx (::gpusim::current_thread->thread_idx)
#define blockIdx (::gpusim::current_thread->block_idx)
#define blockDim (::gpusim::current_thread->block_dim)
#define gridDim (::gpusim::current_thread->grid_dim)

inline void __syncthreads() {
  gpusim::syncthreads();
}

// Fibers of a block take turns on one host thread and blocks of a grid run one after another,
// so a plain compare-and-swap is atomic here; the builtin keeps it so under any schedule.
inline int atomicCAS(int* address, int compare, int value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}

template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
inline T max(T a, T b) {
  return a < b ? b : a;
}

inline float __half2float(gpusim::Half h) {
  return baton::fp16_to_fp32(h.bits);
}
inline gpusim::Half __float2half_rn(float f) {
  return gpusim::Half{baton::fp32_to_fp16(f)};
}
inline gpusim::Half __ushort_as_half(unsigned short bits) {
  return gpusim::Half{bits};
}
inline float __bfloat162float(gpusim::BFloat16 b) {
  return baton::bf16_to_fp32(b.bits);
}
inline gpusim::BFloat16 __float2bfloat16_rn(float f) {
  return gpusim::BFloat16{baton::fp32_to_bf16(f)};
}
