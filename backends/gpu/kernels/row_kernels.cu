// Row-wise kernels: embedding and get_rows (gathers), the LoRA update, rms_norm, softmax, argmax.
// Reductions run one thread block per row in f32; the reference sums in double, so results agree to
// a few f32 ulps per element.

#include <cstdint>

#include "backends/gpu/kernels/device_types.cuh"

namespace baton::gpu {
namespace {

constexpr int kRowThreads = 256;  // a multiple of every warp size
constexpr int kMaxWarps = kRowThreads / 32;

template <WeightType type>
__global__ void embedding_kernel(const uint8_t* table, int64_t table_rows, int64_t row_bytes,
                                 int64_t dim, const int32_t* ids, float* out, IndexError error) {
  const int64_t i = blockIdx.x;
  const int32_t id = ids[i];
  const bool valid = id >= 0 && id < table_rows;
  if (!valid && blockIdx.y == 0 && threadIdx.x == 0) report_index_error(error, id, i);
  const void* row = table + (valid ? id : 0) * row_bytes;
  for (int64_t c = blockIdx.y * blockDim.x + threadIdx.x; c < dim;
       c += static_cast<int64_t>(gridDim.y) * blockDim.x) {
    out[i * dim + c] = valid ? load_weight<type>(row, c) : 0.0f;
  }
}

__global__ void get_rows_kernel(const float* x, int64_t x_rows, int64_t dim, const int32_t* rows,
                                float* out, IndexError error) {
  const int64_t i = blockIdx.x;
  const int32_t r = rows[i];
  const bool valid = r >= 0 && r < x_rows;
  if (!valid && blockIdx.y == 0 && threadIdx.x == 0) report_index_error(error, r, i);
  for (int64_t c = blockIdx.y * blockDim.x + threadIdx.x; c < dim;
       c += static_cast<int64_t>(gridDim.y) * blockDim.x) {
    out[i * dim + c] = valid ? x[r * dim + c] : 0.0f;
  }
}

// LoRA's update (kernels.h says when which form runs): a block takes `tile` consecutive tokens,
// kLoraTile (SGMV-style, Punica's segmented kernel) or 1 (BGMV-style), and works through the
// runs among them that share a slot, as a prompt's tokens do, so that a run reads each element
// of a[s] and bt[s] once rather than once per token. Warp w reduces the dot products of ranks w, w
// + warps, ... with shuffles (no block barrier per rank); then each thread writes output features
// of every token of the run (adjacent threads read adjacent features of bt's rows). Branches on a
// run's length are uniform over the block, as barriers and shuffles need. T, the slots' element
// type, is float or gpu_half.
template <class T>
__global__ void lora_kernel(const float* y, const float* x, const T* a, const T* bt,
                            const int32_t* slots, float* out, LoraArgs args, int tile,
                            IndexError error) {
  GPU_SHARED_ARRAY(float, shrunk, [kLoraTile][kMaxLoraRank]);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * tile;
  const int count = args.tokens - first < tile ? static_cast<int>(args.tokens - first) : tile;
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  for (int begin = 0; begin < count;) {
    const int32_t s = slots[first + begin];
    int end = begin + 1;
    while (end < count && slots[first + end] == s) ++end;
    const int length = end - begin;
    const float* ys = y + (first + begin) * args.m;
    const float* xs = x + (first + begin) * args.k;
    float* os = out + (first + begin) * args.m;
    const bool valid = s >= -1 && s < args.n_slots;
    if (!valid && threadIdx.x == 0) report_index_error(error, s, first + begin);
    if (!valid || s < 0) {
      for (int64_t i = threadIdx.x; i < length * args.m; i += blockDim.x) os[i] = ys[i];
      begin = end;
      continue;
    }
    const T* as = a + s * args.rank * args.k;
    for (int64_t j = warp; j < args.rank; j += warps) {
      float partial[kLoraTile] = {};
      for (int64_t c = lane; c < args.k; c += kWarpSize) {
        const float w = load_cache(as + j * args.k + c);
#pragma unroll
        for (int t = 0; t < kLoraTile; ++t) {
          if (t < length) partial[t] += w * xs[t * args.k + c];
        }
      }
#pragma unroll
      for (int t = 0; t < kLoraTile; ++t) {
        if (t < length) {
          const float sum = warp_reduce_sum(partial[t]);
          if (lane == 0) shrunk[t][j] = sum;
        }
      }
    }
    __syncthreads();
    const T* bs = bt + s * args.rank * args.m;
    for (int64_t o = threadIdx.x; o < args.m; o += blockDim.x) {
      float sum[kLoraTile];
#pragma unroll
      for (int t = 0; t < kLoraTile; ++t) sum[t] = t < length ? ys[t * args.m + o] : 0.0f;
      for (int64_t j = 0; j < args.rank; ++j) {
        const float b = load_cache(bs + j * args.m + o);
#pragma unroll
        for (int t = 0; t < kLoraTile; ++t) {
          if (t < length) sum[t] += b * shrunk[t][j];
        }
      }
#pragma unroll
      for (int t = 0; t < kLoraTile; ++t) {
        if (t < length) os[t * args.m + o] = sum[t];
      }
    }
    __syncthreads();  // the next run rewrites shrunk
    begin = end;
  }
}

__global__ void rms_norm_kernel(const float* x, const float* weight, float* out, int64_t dim,
                                float eps) {
  GPU_SHARED_ARRAY(float, scratch, [kMaxWarps * 2]);
  const float* in = x + blockIdx.x * dim;
  float* o = out + blockIdx.x * dim;
  float sum_sq = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) sum_sq += in[i] * in[i];
  sum_sq = block_reduce_sum(sum_sq, scratch);
  const float inv_rms = 1.0f / sqrtf(sum_sq / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) o[i] = in[i] * inv_rms * weight[i];
}

__global__ void softmax_kernel(const float* x, float* out, int64_t dim) {
  GPU_SHARED_ARRAY(float, scratch, [kMaxWarps * 2]);
  const float* in = x + blockIdx.x * dim;
  float* o = out + blockIdx.x * dim;
  float max_value = -INFINITY;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) max_value = fmaxf(max_value, in[i]);
  max_value = block_reduce_max(max_value, scratch);
  float total = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) total += expf(in[i] - max_value);
  total = block_reduce_sum(total, scratch);
  const float inv_total = 1.0f / total;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    o[i] = expf(in[i] - max_value) * inv_total;
}

// (value, index) pairs ordered as the reference's scan picks: the larger value, and on a tie
// the smaller index, so the first maximum wins whatever order threads visit elements in.
__device__ inline bool better(float v, int32_t i, float best_v, int32_t best_i) {
  return v > best_v || (v == best_v && i < best_i);
}

__global__ void argmax_kernel(const float* x, int32_t* out, int64_t dim) {
  GPU_SHARED_ARRAY(float, best_values, [kMaxWarps]);
  GPU_SHARED_ARRAY(int32_t, best_indices, [kMaxWarps]);
  const float* in = x + blockIdx.x * dim;
  float best_v = -INFINITY;
  int32_t best_i = INT32_MAX;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    if (better(in[i], static_cast<int32_t>(i), best_v, best_i)) {
      best_v = in[i];
      best_i = static_cast<int32_t>(i);
    }
  }
  for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
    const float v = GPU_SHFL_XOR(best_v, offset, kWarpSize);
    const int32_t i = GPU_SHFL_XOR(best_i, offset, kWarpSize);
    if (better(v, i, best_v, best_i)) {
      best_v = v;
      best_i = i;
    }
  }
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  if (lane == 0) {
    best_values[warp] = best_v;
    best_indices[warp] = best_i;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < static_cast<int>(blockDim.x) / kWarpSize; ++w) {
    if (better(best_values[w], best_indices[w], best_v, best_i)) {
      best_v = best_values[w];
      best_i = best_indices[w];
    }
  }
  // Only a row of NaNs has no candidate (NaN compares false); the reference keeps element 0.
  out[blockIdx.x] = best_i == INT32_MAX ? 0 : best_i;
}

// Gathered rows along x (which allows 2^31 - 1 blocks); up to 64 blocks along y cover a row.
dim3 gather_grid(int64_t n, int64_t dim) {
  const int64_t blocks = (dim + kRowThreads - 1) / kRowThreads;
  return dim3(static_cast<unsigned int>(n),
              static_cast<unsigned int>(blocks < 64 ? (blocks > 0 ? blocks : 1) : 64));
}

}  // namespace

void lora(const float* y, const float* x, const void* a, const void* bt, bool half_slots,
          const int32_t* slots, float* out, const LoraArgs& args, IndexError error,
          gpuStream_t stream) {
  if (args.tokens == 0) return;
  const int tile = args.tokens >= kLoraTiledFrom ? kLoraTile : 1;
  const dim3 grid(static_cast<unsigned int>((args.tokens + tile - 1) / tile));
  if (half_slots) {
    launch<&lora_kernel<gpu_half>>(grid, kRowThreads, 0, stream, y, x,
                                   static_cast<const gpu_half*>(a),
                                   static_cast<const gpu_half*>(bt), slots, out, args, tile, error);
  } else {
    launch<&lora_kernel<float>>(grid, kRowThreads, 0, stream, y, x, static_cast<const float*>(a),
                                static_cast<const float*>(bt), slots, out, args, tile, error);
  }
  GPU_CHECK(gpuGetLastError());
}

void embedding(WeightType type, const void* table, int64_t table_rows, int64_t row_bytes,
               int64_t dim, const int32_t* ids, int64_t n, float* out, IndexError error,
               gpuStream_t stream) {
  if (n == 0) return;
  const dim3 grid = gather_grid(n, dim);
  const auto* bytes = static_cast<const uint8_t*>(table);
  switch (type) {
    case WeightType::kF32:
      launch<&embedding_kernel<WeightType::kF32>>(grid, kRowThreads, 0, stream, bytes, table_rows,
                                                  row_bytes, dim, ids, out, error);
      break;
    case WeightType::kF16:
      launch<&embedding_kernel<WeightType::kF16>>(grid, kRowThreads, 0, stream, bytes, table_rows,
                                                  row_bytes, dim, ids, out, error);
      break;
    case WeightType::kBF16:
      launch<&embedding_kernel<WeightType::kBF16>>(grid, kRowThreads, 0, stream, bytes, table_rows,
                                                   row_bytes, dim, ids, out, error);
      break;
    case WeightType::kQ8_0:
      launch<&embedding_kernel<WeightType::kQ8_0>>(grid, kRowThreads, 0, stream, bytes, table_rows,
                                                   row_bytes, dim, ids, out, error);
      break;
    case WeightType::kQ4_0:
      launch<&embedding_kernel<WeightType::kQ4_0>>(grid, kRowThreads, 0, stream, bytes, table_rows,
                                                   row_bytes, dim, ids, out, error);
      break;
  }
  GPU_CHECK(gpuGetLastError());
}

void get_rows(const float* x, int64_t x_rows, int64_t dim, const int32_t* rows, int64_t n,
              float* out, IndexError error, gpuStream_t stream) {
  if (n == 0) return;
  launch<&get_rows_kernel>(gather_grid(n, dim), kRowThreads, 0, stream, x, x_rows, dim, rows, out,
                           error);
  GPU_CHECK(gpuGetLastError());
}

void rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t dim, float eps,
              gpuStream_t stream) {
  if (rows == 0) return;
  launch<&rms_norm_kernel>(static_cast<unsigned int>(rows), kRowThreads, 0, stream, x, weight, out,
                           dim, eps);
  GPU_CHECK(gpuGetLastError());
}

void softmax(const float* x, float* out, int64_t rows, int64_t dim, gpuStream_t stream) {
  if (rows == 0) return;
  launch<&softmax_kernel>(static_cast<unsigned int>(rows), kRowThreads, 0, stream, x, out, dim);
  GPU_CHECK(gpuGetLastError());
}

void argmax(const float* x, int32_t* out, int64_t rows, int64_t dim, gpuStream_t stream) {
  if (rows == 0) return;
  launch<&argmax_kernel>(static_cast<unsigned int>(rows), kRowThreads, 0, stream, x, out, dim);
  GPU_CHECK(gpuGetLastError());
}

}  // namespace baton::gpu
