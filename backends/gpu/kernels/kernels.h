#pragma once

// Launchers of the GPU kernels, callable from host code of any GPU backend. Arguments are raw
// device pointers and sizes, so this header (and the kernels behind it) depends only on
// gpu_runtime.h and builds as C++17 under nvcc and hipcc. Each launcher enqueues its kernel on
// `stream` and throws baton::Error when the launch fails; none of them synchronises.
// Semantics are those of the reference kernels in ops/reference/.

#include <cstdint>

#include "backends/gpu/gpu_runtime.h"

namespace baton::gpu {

// Element types of weights as the kernels see them (the GGUF block layouts of
// core/runtime/dtype.h).
enum class WeightType { kF32, kF16, kBF16, kQ8_0, kQ4_0 };
// Bytes of a row of k weights of `type` (k a multiple of 32 for the quantized types, whose
// 32-element blocks are 34 and 18 bytes).
inline int64_t weight_row_bytes(WeightType type, int64_t k) {
  switch (type) {
    case WeightType::kF32:
      return 4 * k;
    case WeightType::kF16:
    case WeightType::kBF16:
      return 2 * k;
    case WeightType::kQ8_0:
      return k / 32 * 34;
    case WeightType::kQ4_0:
      return k / 32 * 18;
  }
  return 0;
}

// Element types of KV caches.
enum class CacheType { kF32, kF16 };

// Where a kernel reports the first out-of-range index it meets instead of reading out of
// bounds: slot[0] = tag + 1 (the first reporter wins), slot[1] = the index value, slot[2] = its
// position. The host reads the slot back after the step.
struct IndexError {
  int32_t* slot;
  int32_t tag;
};

// out[i, :] = table[ids[i], :] decoded to f32; `row_bytes` is the table's bytes per row.
void embedding(WeightType type, const void* table, int64_t table_rows, int64_t row_bytes,
               int64_t dim, const int32_t* ids, int64_t n, float* out, IndexError error,
               gpuStream_t stream);
// out[i, :] = x[rows[i], :].
void get_rows(const float* x, int64_t x_rows, int64_t dim, const int32_t* rows, int64_t n,
              float* out, IndexError error, gpuStream_t stream);

// The highest LoRA rank the lora kernel takes (its shrunk values live in shared memory).
constexpr int64_t kMaxLoraRank = 128;
// LoRA's update: out[t] = y[t] + bt[s]ᵀ · (a[s] · x[t]) for s = slots[t] >= 0, y[t] for s = -1;
// a is [n_slots, rank, k], bt [n_slots, rank, m], both f32, or f16 when half_slots. A batch of
// at least kLoraTiledFrom tokens (prompt chunks) runs SGMV-style (Punica's segmented form): a
// thread block per kLoraTile consecutive tokens reads a slot's a and bt once for each run of
// tokens in its tile that use that slot. A smaller one (decodes, whose neighbours often use
// other adapters) runs BGMV-style, a block per token, so that every token has a block of its own.
// The threshold is a guess: no GPU has timed either form yet.
constexpr int kLoraTile = 8;
constexpr int64_t kLoraTiledFrom = 1024;
struct LoraArgs {
  int64_t tokens, k, m, rank, n_slots;
};
void lora(const float* y, const float* x, const void* a, const void* bt, bool half_slots,
          const int32_t* slots, float* out, const LoraArgs& args, IndexError error,
          gpuStream_t stream);

void rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t dim, float eps,
              gpuStream_t stream);
void softmax(const float* x, float* out, int64_t rows, int64_t dim, gpuStream_t stream);
// The first maximum of each row.
void argmax(const float* x, int32_t* out, int64_t rows, int64_t dim, gpuStream_t stream);
// out = silu(gate) * up, element-wise.
void swiglu(const float* gate, const float* up, float* out, int64_t n, gpuStream_t stream);
// out[i] = a[i] + b[i % b_period]; b_period = n when b has a's shape, the row length when b is
// one row broadcast over a's rows.
void add(const float* a, const float* b, float* out, int64_t n, int64_t b_period,
         gpuStream_t stream);

struct RopeArgs {
  int64_t tokens, heads, head_dim;
  int n_rot;
  bool neox;
  // n_rot / 2 angles per unit of position (freq_scale * base^(-2i/n_rot) / freq_factor[i]), in
  // double so that angles at positions in the thousands keep their fp32 accuracy.
  const double* inv_freq;
  double magnitude;  // cos and sin are multiplied by it
};
void rope(const float* x, const int32_t* positions, float* out, const RopeArgs& args,
          gpuStream_t stream);

// x converted for a 16-bit GEMM, rounding to nearest even.
void convert_to_half(const float* x, gpu_half* out, int64_t n, gpuStream_t stream);
void convert_to_bf16(const float* x, gpu_bf16* out, int64_t n, gpuStream_t stream);

// Quantized matmul for few rows of x (decode): out[n, m] = x[n, k] * w[m, k]^T, w Q8_0 or Q4_0,
// weights decoded on the fly. n <= kGemvMaxRows.
constexpr int kGemvMaxRows = 8;
void quantized_gemv(WeightType type, const void* w, const float* x, float* out, int64_t n,
                    int64_t k, int64_t m, gpuStream_t stream);
// Rows [0, rows) of a Q8_0 / Q4_0 matrix of row length k decoded to f16, for a cuBLAS GEMM.
void dequantize_to_half(WeightType type, const void* w, int64_t rows, int64_t k, gpu_half* out,
                        gpuStream_t stream);

// out[n, m] = x[n, k] * w[m, k]^T for weights of any type, fp32 throughout: each weight is
// decoded to f32 (exactly as load_weight decodes it) while its tile is loaded into shared
// memory, so quantized weights need no dequantized copy. The GEMM of GPUs without a vendor
// BLAS (ROCm 5.2); tiled_gemm.cu describes its design and limits.
void tiled_gemm(WeightType type, const void* w, const float* x, float* out, int64_t n, int64_t k,
                int64_t m, gpuStream_t stream);

// The step's tokens as the paged KV cache sees them (PagedBatch on the device): token t is
// sequence token_seq[t] at position token_pos[t], and position p of sequence s lives in cache
// row block_tables[s * table_stride + p / block_size] * block_size + p % block_size.
struct PagedView {
  const int32_t* block_tables;
  int32_t table_stride;
  int32_t block_size;
  const int32_t* token_seq;
  const int32_t* token_pos;
};

// Writes k and v ([tokens, kv_heads * head_dim] f32) into the caches' rows of each token.
void kv_write(CacheType cache, const float* k, const float* v, void* k_cache, void* v_cache,
              int64_t tokens, int64_t row_elems, const PagedView& paged, gpuStream_t stream);

struct AttentionShape {
  int32_t heads, kv_heads, head_dim;  // head_dim <= kMaxHeadDim
  float scale;
  CacheType cache;
};
constexpr int kMaxHeadDim = 256;

// A run of consecutive tokens of one sequence whose queries one prefill block processes.
struct QueryTile {
  int32_t first_token, count, seq, max_pos;
};
// Query heads of one KV head that one prefill block handles together; a tile holds
// kPrefillRows / heads_per_block tokens.
constexpr int kPrefillRows = 16;
inline int prefill_heads_per_block(int group) {
  return group < kPrefillRows ? group : kPrefillRows;
}

// Causal attention of the tiles' queries over their sequences' cache positions 0..pos,
// FlashAttention-style: K/V tiles in shared memory, online softmax, GQA heads of one KV head
// sharing each K/V tile.
void attention_prefill(const float* q, const void* k_cache, const void* v_cache, float* out,
                       const AttentionShape& shape, const PagedView& paged, const QueryTile* tiles,
                       int32_t n_tiles, gpuStream_t stream);

// Keys one decode block reads; longer contexts are split over blocks and merged.
constexpr int kDecodeChunk = 256;
// Floats of scratch attention_decode needs for `n_tokens` tokens of up to `max_len` positions.
int64_t attention_decode_scratch(const AttentionShape& shape, int32_t n_tokens, int32_t max_len);
// Paged attention of single query tokens (decode), split over chunks of kDecodeChunk keys when
// max_len (the longest context among `tokens`) needs more than one; `scratch` holds
// attention_decode_scratch() floats.
void attention_decode(const float* q, const void* k_cache, const void* v_cache, float* out,
                      const AttentionShape& shape, const PagedView& paged, const int32_t* tokens,
                      int32_t n_tokens, int32_t max_len, float* scratch, gpuStream_t stream);

}  // namespace baton::gpu
