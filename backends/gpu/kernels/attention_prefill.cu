// FlashAttention-style causal attention for runs of query tokens (prefill and prefill chunks).
// A block owns kPrefillRows query rows: a tile of consecutive tokens of one sequence times the
// query heads of one KV head that it handles (GQA by head grouping, so every K/V tile it loads
// serves all of them). It walks the sequence's cache positions in tiles of kKeys rows staged in
// shared memory (through the block table, f16 caches widened to f32), keeps an online softmax
// per row (running max and sum) and accumulates P·V in registers. Nothing of size
// O(context) is ever materialised.

#include "backends/gpu/kernels/device_types.cuh"

namespace baton::gpu {
namespace {

constexpr int kPrefillThreads = 128;
constexpr int kRowThreads = kPrefillThreads / kPrefillRows;  // 8 threads share a query row
constexpr int kAccPerThread = kMaxHeadDim / kRowThreads;     // output dims a thread owns
static_assert(kPrefillThreads % kPrefillRows == 0, "rows split the block evenly");

// Keys per tile: 32 keeps shared memory under 48 KiB for head_dim 128; larger heads take 16.
inline int keys_per_tile(int head_dim) {
  return head_dim <= 128 ? 32 : 16;
}

struct PrefillArgs {
  AttentionShape shape;
  PagedView paged;
  const QueryTile* tiles;
  int32_t heads_per_block;  // query heads of one KV head per block
  int32_t head_chunks;      // blocks per KV head
  int32_t keys;             // keys_per_tile(head_dim)
};

template <typename CacheT>
__global__ void __launch_bounds__(kPrefillThreads)
    prefill_kernel(const float* q, const CacheT* k_cache, const CacheT* v_cache, float* out,
                   PrefillArgs a) {
  GPU_DYNAMIC_SHARED(float, smem);
  const int D = a.shape.head_dim, heads = a.shape.heads, kv_heads = a.shape.kv_heads;
  const int group = heads / kv_heads, stride = D + 1;  // +1: rows fall in different banks
  const int kv_head = blockIdx.y / a.head_chunks;
  const int first_head = kv_head * group + (blockIdx.y % a.head_chunks) * a.heads_per_block;
  const int n_heads = min(a.heads_per_block, (kv_head + 1) * group - first_head);
  const QueryTile tile = a.tiles[blockIdx.x];

  float* qs = smem;                        // [kPrefillRows][stride], pre-scaled
  float* ks = qs + kPrefillRows * stride;  // [keys][stride]
  float* vs = ks + a.keys * stride;        // [keys][D]
  float* ps = vs + a.keys * D;             // [kPrefillRows][keys + 1] scores, then P (+1 as above)
  const int p_stride = a.keys + 1;
  auto* key_rows = reinterpret_cast<int64_t*>(ps + kPrefillRows * p_stride);
  auto* row_pos = reinterpret_cast<int32_t*>(key_rows + a.keys);  // [kPrefillRows], -1 unused

  // Row r is token first_token + r / n_heads, head first_head + r % n_heads.
  const int rows_used = tile.count * n_heads;
  for (int i = threadIdx.x; i < kPrefillRows * D; i += blockDim.x) {
    const int r = i / D, d = i % D;
    const int64_t token = tile.first_token + r / n_heads;
    qs[r * stride + d] = r < rows_used
                             ? q[(token * heads + first_head + r % n_heads) * D + d] * a.shape.scale
                             : 0.0f;
  }
  if (threadIdx.x < kPrefillRows) {
    const int r = threadIdx.x;
    row_pos[r] = r < rows_used ? a.paged.token_pos[tile.first_token + r / n_heads] : -1;
  }

  const int r = threadIdx.x / kRowThreads, sub = threadIdx.x % kRowThreads;
  float acc[kAccPerThread];
#pragma unroll
  for (int i = 0; i < kAccPerThread; ++i) acc[i] = 0.0f;
  float running_max = -INFINITY, running_sum = 0.0f;

  for (int first_key = 0; first_key <= tile.max_pos; first_key += a.keys) {
    const int n_keys = min(a.keys, tile.max_pos + 1 - first_key);
    __syncthreads();  // the previous tile's K, V and P are no longer read
    if (static_cast<int>(threadIdx.x) < n_keys) {
      key_rows[threadIdx.x] =
          (paged_row(a.paged, tile.seq, first_key + threadIdx.x) * kv_heads + kv_head) * D;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n_keys * D; i += blockDim.x) {
      const int c = i / D, d = i % D;
      ks[c * stride + d] = load_cache(k_cache + key_rows[c] + d);
      vs[c * D + d] = load_cache(v_cache + key_rows[c] + d);
    }
    __syncthreads();

    // Scores of row r against this thread's keys c = sub, sub + kRowThreads, ...; keys after
    // the row's position (or past the tile) are masked to -inf.
    const int pos = row_pos[r];
    float tile_max = -INFINITY;
    for (int c = sub; c < a.keys; c += kRowThreads) {
      float s = -INFINITY;
      if (c < n_keys && first_key + c <= pos) {
        s = 0.0f;
        for (int d = 0; d < D; ++d) s += qs[r * stride + d] * ks[c * stride + d];
      }
      ps[r * p_stride + c] = s;
      tile_max = fmaxf(tile_max, s);
    }
    tile_max = warp_reduce_max<kRowThreads>(tile_max);
    const float new_max = fmaxf(running_max, tile_max);
    // A row with no visible key yet (an unused row) keeps max -inf: use 0 to avoid inf - inf.
    const float base = new_max == -INFINITY ? 0.0f : new_max;
    float tile_sum = 0.0f;
    for (int c = sub; c < a.keys; c += kRowThreads) {
      const float p = expf(ps[r * p_stride + c] - base);
      ps[r * p_stride + c] = p;
      tile_sum += p;
    }
    tile_sum = warp_reduce_sum<kRowThreads>(tile_sum);
    const float correction = expf(running_max - base);
    running_sum = running_sum * correction + tile_sum;
    running_max = new_max;
    __syncthreads();  // P of row r was written by the row's threads; all of them read it

#pragma unroll
    for (int i = 0; i < kAccPerThread; ++i) {
      const int d = sub + i * kRowThreads;
      if (d < D) {  // guards, not breaks, so the loops unroll and acc stays in registers
        float sum = acc[i] * correction;
        for (int c = 0; c < n_keys; ++c) sum += ps[r * p_stride + c] * vs[c * D + d];
        acc[i] = sum;
      }
    }
  }

  if (r >= rows_used) return;
  const int64_t token = tile.first_token + r / n_heads;
  float* o = out + (token * heads + first_head + r % n_heads) * D;
#pragma unroll
  for (int i = 0; i < kAccPerThread; ++i) {
    const int d = sub + i * kRowThreads;
    if (d < D) o[d] = acc[i] / running_sum;
  }
}

size_t prefill_smem(int head_dim) {
  const int keys = keys_per_tile(head_dim), stride = head_dim + 1;
  return sizeof(float) *
             (kPrefillRows * stride + keys * stride + keys * head_dim + kPrefillRows * (keys + 1)) +
         sizeof(int64_t) * keys + sizeof(int32_t) * kPrefillRows;
}

// Shared memory above the 48 KiB default needs an opt-in per kernel (head_dim above ~180).
template <typename CacheT>
void allow_smem(size_t bytes) {
  if (bytes > 48 * 1024) {
    GPU_CHECK(gpuFuncSetAttribute(reinterpret_cast<const void*>(&prefill_kernel<CacheT>),
                                  gpuFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  }
}

}  // namespace

void attention_prefill(const float* q, const void* k_cache, const void* v_cache, float* out,
                       const AttentionShape& shape, const PagedView& paged, const QueryTile* tiles,
                       int32_t n_tiles, gpuStream_t stream) {
  if (n_tiles == 0) return;
  const int group = shape.heads / shape.kv_heads;
  PrefillArgs a{
      shape, paged, tiles, prefill_heads_per_block(group), 0, keys_per_tile(shape.head_dim)};
  a.head_chunks = (group + a.heads_per_block - 1) / a.heads_per_block;
  const dim3 grid(static_cast<unsigned int>(n_tiles),
                  static_cast<unsigned int>(shape.kv_heads * a.head_chunks));
  const size_t smem = prefill_smem(shape.head_dim);
  if (shape.cache == CacheType::kF16) {
    allow_smem<gpu_half>(smem);
    launch<&prefill_kernel<gpu_half>>(grid, kPrefillThreads, smem, stream, q,
                                      static_cast<const gpu_half*>(k_cache),
                                      static_cast<const gpu_half*>(v_cache), out, a);
  } else {
    allow_smem<float>(smem);
    launch<&prefill_kernel<float>>(grid, kPrefillThreads, smem, stream, q,
                                   static_cast<const float*>(k_cache),
                                   static_cast<const float*>(v_cache), out, a);
  }
  GPU_CHECK(gpuGetLastError());
}

}  // namespace baton::gpu
