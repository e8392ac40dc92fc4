// Paged attention for single query tokens (decode). A block takes one token, up to
// kDecodeHeads query heads that share a KV head (so each K/V row is read once for the group),
// and one chunk of kDecodeChunk positions. Long contexts are split over chunks (split-K); each
// chunk writes its unnormalised output with its softmax max and sum, and a merge kernel
// rescales and adds the chunks. A context of one chunk is normalised in place, with no merge.

#include "backends/gpu/kernels/device_types.cuh"

namespace baton::gpu {
namespace {

constexpr int kDecodeThreads = 128;
constexpr int kDecodeHeads = 8;

struct DecodeArgs {
  AttentionShape shape;
  PagedView paged;
  const int32_t* tokens;
  int32_t head_chunks;  // blocks per KV head: ceil(group / kDecodeHeads)
  int32_t splits;       // chunks of the longest context
  float* partial_out;   // [n_tokens, heads, splits, head_dim]
  float* partial_max;   // [n_tokens, heads, splits]
  float* partial_sum;
};

template <typename CacheT>
__global__ void __launch_bounds__(kDecodeThreads)
    decode_kernel(const float* q, const CacheT* k_cache, const CacheT* v_cache, float* out,
                  DecodeArgs a) {
  GPU_DYNAMIC_SHARED(float, smem);
  const int D = a.shape.head_dim, heads = a.shape.heads, kv_heads = a.shape.kv_heads;
  const int group = heads / kv_heads;
  const int kv_head = blockIdx.y / a.head_chunks;
  const int first_head = kv_head * group + (blockIdx.y % a.head_chunks) * kDecodeHeads;
  const int n_heads = min(kDecodeHeads, (kv_head + 1) * group - first_head);
  const int split = blockIdx.z;
  const int32_t token = a.tokens[blockIdx.x];
  const int32_t seq = a.paged.token_seq[token], pos = a.paged.token_pos[token];
  const int begin = split * kDecodeChunk, end = min(pos + 1, begin + kDecodeChunk);

  float* qs = smem;                                     // [kDecodeHeads][D]
  float* scores = qs + kDecodeHeads * D;                // [kDecodeHeads][kDecodeChunk]
  float* stats = scores + kDecodeHeads * kDecodeChunk;  // max and sum per head
  auto* rows = reinterpret_cast<int64_t*>(stats + 2 * kDecodeHeads);  // cache row per key

  const int64_t partial_base = (static_cast<int64_t>(blockIdx.x) * heads + first_head) * a.splits;
  if (begin >= end) {  // this chunk lies beyond the token's position: an empty partial
    for (int i = threadIdx.x; i < n_heads * D; i += blockDim.x) {
      a.partial_out[(partial_base + (i / D) * a.splits + split) * D + i % D] = 0.0f;
    }
    if (static_cast<int>(threadIdx.x) < n_heads) {
      a.partial_max[partial_base + threadIdx.x * a.splits + split] = -INFINITY;
      a.partial_sum[partial_base + threadIdx.x * a.splits + split] = 0.0f;
    }
    return;
  }

  for (int i = threadIdx.x; i < n_heads * D; i += blockDim.x) {
    qs[i] = q[(static_cast<int64_t>(token) * heads + first_head) * D + i] * a.shape.scale;
  }
  for (int j = begin + threadIdx.x; j < end; j += blockDim.x) {
    rows[j - begin] = (paged_row(a.paged, seq, j) * kv_heads + kv_head) * D;
  }
  __syncthreads();

  // Scores: one warp per key, lanes across the head dimension.
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  for (int j = begin + warp; j < end; j += warps) {
    const CacheT* key = k_cache + rows[j - begin];
    float dots[kDecodeHeads] = {};
    for (int d = lane; d < D; d += kWarpSize) {
      const float kd = load_cache(key + d);
#pragma unroll
      for (int h = 0; h < kDecodeHeads; ++h) {
        if (h < n_heads) dots[h] += qs[h * D + d] * kd;
      }
    }
#pragma unroll
    for (int h = 0; h < kDecodeHeads; ++h) {
      if (h < n_heads) {  // a guard, not a break, so the loop unrolls and dots stay in registers
        const float s = warp_reduce_sum(dots[h]);
        if (lane == 0) scores[h * kDecodeChunk + (j - begin)] = s;
      }
    }
  }
  __syncthreads();

  // Softmax over the chunk: one warp per head; scores become exp(s - max).
  const int n_keys = end - begin;
  for (int h = warp; h < n_heads; h += warps) {
    float* s = scores + h * kDecodeChunk;
    float m = -INFINITY;
    for (int j = lane; j < n_keys; j += kWarpSize) m = fmaxf(m, s[j]);
    m = warp_reduce_max(m);
    float total = 0.0f;
    for (int j = lane; j < n_keys; j += kWarpSize) total += (s[j] = expf(s[j] - m));
    total = warp_reduce_sum(total);
    if (lane == 0) {
      stats[2 * h] = m;
      stats[2 * h + 1] = total;
    }
  }
  __syncthreads();

  // Output: threads across (head, dim), consecutive threads reading consecutive V elements.
  for (int i = threadIdx.x; i < n_heads * D; i += blockDim.x) {
    const int h = i / D, d = i % D;
    const float* p = scores + h * kDecodeChunk;
    float acc = 0.0f;
    for (int j = 0; j < n_keys; ++j) acc += p[j] * load_cache(v_cache + rows[j] + d);
    if (a.splits == 1) {
      out[(static_cast<int64_t>(token) * heads + first_head + h) * D + d] = acc / stats[2 * h + 1];
    } else {
      a.partial_out[(partial_base + h * a.splits + split) * D + d] = acc;
      if (d == 0) {
        a.partial_max[partial_base + h * a.splits + split] = stats[2 * h];
        a.partial_sum[partial_base + h * a.splits + split] = stats[2 * h + 1];
      }
    }
  }
}

// One block per (token, head): rescales each chunk by exp(chunk max - overall max).
__global__ void merge_kernel(float* out, DecodeArgs a) {
  const int D = a.shape.head_dim, heads = a.shape.heads;
  const int32_t token = a.tokens[blockIdx.x];
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * heads + blockIdx.y) * a.splits;
  float m = -INFINITY;
  for (int s = 0; s < a.splits; ++s) m = fmaxf(m, a.partial_max[base + s]);
  float total = 0.0f;
  for (int s = 0; s < a.splits; ++s)
    total += a.partial_sum[base + s] * expf(a.partial_max[base + s] - m);
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float acc = 0.0f;
    for (int s = 0; s < a.splits; ++s) {
      acc += a.partial_out[(base + s) * D + d] * expf(a.partial_max[base + s] - m);
    }
    out[(static_cast<int64_t>(token) * heads + blockIdx.y) * D + d] = acc / total;
  }
}

int32_t splits_for(int32_t max_len) {
  return (max_len + kDecodeChunk - 1) / kDecodeChunk;
}

}  // namespace

int64_t attention_decode_scratch(const AttentionShape& shape, int32_t n_tokens, int32_t max_len) {
  const int32_t splits = splits_for(max_len);
  if (splits <= 1) return 0;
  return static_cast<int64_t>(n_tokens) * shape.heads * splits * (shape.head_dim + 2);
}

void attention_decode(const float* q, const void* k_cache, const void* v_cache, float* out,
                      const AttentionShape& shape, const PagedView& paged, const int32_t* tokens,
                      int32_t n_tokens, int32_t max_len, float* scratch, gpuStream_t stream) {
  if (n_tokens == 0) return;
  const int group = shape.heads / shape.kv_heads;
  DecodeArgs a{
      shape,   paged,   tokens, (group + kDecodeHeads - 1) / kDecodeHeads, splits_for(max_len),
      nullptr, nullptr, nullptr};
  if (a.splits > 1) {
    const int64_t rows = static_cast<int64_t>(n_tokens) * shape.heads * a.splits;
    a.partial_out = scratch;
    a.partial_max = scratch + rows * shape.head_dim;
    a.partial_sum = a.partial_max + rows;
  }
  const dim3 grid(static_cast<unsigned int>(n_tokens),
                  static_cast<unsigned int>(shape.kv_heads * a.head_chunks),
                  static_cast<unsigned int>(a.splits));
  const size_t smem = sizeof(float) * (kDecodeHeads * (shape.head_dim + kDecodeChunk + 2)) +
                      sizeof(int64_t) * kDecodeChunk;
  if (shape.cache == CacheType::kF16) {
    launch<&decode_kernel<gpu_half>>(grid, kDecodeThreads, smem, stream, q,
                                     static_cast<const gpu_half*>(k_cache),
                                     static_cast<const gpu_half*>(v_cache), out, a);
  } else {
    launch<&decode_kernel<float>>(grid, kDecodeThreads, smem, stream, q,
                                  static_cast<const float*>(k_cache),
                                  static_cast<const float*>(v_cache), out, a);
  }
  GPU_CHECK(gpuGetLastError());
  if (a.splits > 1) {
    launch<&merge_kernel>(
        dim3(static_cast<unsigned int>(n_tokens), static_cast<unsigned int>(shape.heads)),
        kDecodeThreads, 0, stream, out, a);
    GPU_CHECK(gpuGetLastError());
  }
}

}  // namespace baton::gpu
