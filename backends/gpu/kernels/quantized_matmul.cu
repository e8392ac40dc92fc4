// Q8_0 / Q4_0 matmul kernels. Decode (few rows of x): a GEMV that reads each weight row once
// and decodes it on the fly, one warp per weight row, each lane a run of 32-element blocks,
// with every row of x (at most kGemvMaxRows) accumulated against the same decoded block.
// Prefill: the weight is decoded to f16 here and multiplied by cuBLAS (cublas_gemm.cpp).

#include "backends/gpu/kernels/device_types.cuh"

namespace baton::gpu {
namespace {

constexpr int kGemvThreads = 128;

// The 32 values of block `b` of a weight row, as scale and integer quants (reads of 2 bytes:
// blocks are 34 or 18 bytes, so their quants are 2-byte but not 4-byte aligned).
template <WeightType type>
__device__ inline float decode_block(const void* row, int64_t b, float (&q)[kQuantBlock]) {
  if constexpr (type == WeightType::kQ8_0) {
    const BlockQ8_0* block = static_cast<const BlockQ8_0*>(row) + b;
    const auto* pairs = reinterpret_cast<const uint16_t*>(block->qs);
#pragma unroll
    for (int i = 0; i < kQuantBlock / 2; ++i) {
      const uint16_t two = pairs[i];
      q[2 * i] = static_cast<float>(static_cast<int8_t>(two & 0xff));
      q[2 * i + 1] = static_cast<float>(static_cast<int8_t>(two >> 8));
    }
    return fp16_bits_to_float(block->d);
  } else {
    const BlockQ4_0* block = static_cast<const BlockQ4_0*>(row) + b;
    const auto* pairs = reinterpret_cast<const uint16_t*>(block->qs);
#pragma unroll
    for (int i = 0; i < kQuantBlock / 4; ++i) {
      const uint16_t two = pairs[i];
      q[2 * i] = static_cast<float>((two & 0x0f) - 8);
      q[2 * i + 1] = static_cast<float>(((two >> 8) & 0x0f) - 8);
      q[2 * i + 16] = static_cast<float>(((two >> 4) & 0x0f) - 8);
      q[2 * i + 17] = static_cast<float>((two >> 12) - 8);
    }
    return fp16_bits_to_float(block->d);
  }
}

template <WeightType type>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_kernel(const uint8_t* w, int64_t row_bytes, const float* x, float* out, int n, int64_t k,
                int64_t m) {
  const int64_t row =
      static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
  if (row >= m) return;  // whole warps leave together; no block-wide barrier follows
  const int lane = threadIdx.x % kWarpSize;
  const void* weights = w + row * row_bytes;
  float acc[kGemvMaxRows] = {};
  for (int64_t b = lane; b < k / kQuantBlock; b += kWarpSize) {
    float q[kQuantBlock];
    const float d = decode_block<type>(weights, b, q);
#pragma unroll
    for (int r = 0; r < kGemvMaxRows; ++r) {
      if (r < n) {  // a guard, not a break, so the loop unrolls and acc stays in registers
        const float* xs = x + r * k + b * kQuantBlock;
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < kQuantBlock; ++i) dot += q[i] * xs[i];
        acc[r] += d * dot;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kGemvMaxRows; ++r) {
    if (r < n) {
      const float sum = warp_reduce_sum(acc[r]);
      if (lane == 0) out[r * m + row] = sum;
    }
  }
}

template <WeightType type>
__global__ void dequantize_kernel(const uint8_t* w, int64_t row_bytes, int64_t rows, int64_t k,
                                  gpu_half* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * k;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = float_to_half(load_weight<type>(w + (i / k) * row_bytes, i % k));
  }
}

}  // namespace

void quantized_gemv(WeightType type, const void* w, const float* x, float* out, int64_t n,
                    int64_t k, int64_t m, gpuStream_t stream) {
  if (n == 0 || m == 0) return;
  const int rows_per_block = kGemvThreads / kWarpSize;
  const auto blocks = static_cast<unsigned int>((m + rows_per_block - 1) / rows_per_block);
  const auto* bytes = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = weight_row_bytes(type, k);
  if (type == WeightType::kQ8_0) {
    launch<&gemv_kernel<WeightType::kQ8_0>>(blocks, kGemvThreads, 0, stream, bytes, row_bytes, x,
                                            out, static_cast<int>(n), k, m);
  } else {
    launch<&gemv_kernel<WeightType::kQ4_0>>(blocks, kGemvThreads, 0, stream, bytes, row_bytes, x,
                                            out, static_cast<int>(n), k, m);
  }
  GPU_CHECK(gpuGetLastError());
}

void dequantize_to_half(WeightType type, const void* w, int64_t rows, int64_t k, gpu_half* out,
                        gpuStream_t stream) {
  if (rows * k == 0) return;
  const auto* bytes = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = weight_row_bytes(type, k);
  if (type == WeightType::kQ8_0) {
    launch<&dequantize_kernel<WeightType::kQ8_0>>(blocks_for(rows * k), kThreads, 0, stream, bytes,
                                                  row_bytes, rows, k, out);
  } else {
    launch<&dequantize_kernel<WeightType::kQ4_0>>(blocks_for(rows * k), kThreads, 0, stream, bytes,
                                                  row_bytes, rows, k, out);
  }
  GPU_CHECK(gpuGetLastError());
}

}  // namespace baton::gpu
