#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <variant>
#include <vector>

namespace baton {

class Communicator;

// The operations a model step is built from. Each has a reference kernel in ops/reference.h,
// which defines its semantics; backends implement the ones they report in Backend::supports.
enum class OpKind {
  // table [vocab, dim] of any weight dtype, ids [n] i32 -> [n, dim] f32
  kEmbedding,
  // x [n, k] f32, w [m, k] f32/f16/bf16/q8_0/q4_0 -> [n, m] f32 = x times w transposed
  kMatMul,
  // x [n, d] f32, weight [d] f32 -> [n, d] f32
  kRmsNorm,
  // x [n, heads, head_dim] f32, positions [n] i32 -> like x
  kRope,
  // k, v [n, kv_heads, head_dim] f32, k_cache, v_cache -> writes the caches, no output
  kKvWrite,
  // q [n, heads, head_dim] f32, k_cache, v_cache -> like q
  kAttention,
  // gate, up [n, f] f32 -> [n, f] = silu(gate) * up
  kSwiGlu,
  // a [n, d] f32, b [n, d] or [d] f32 (broadcast over rows) -> [n, d]
  kAdd,
  // x [n, d] f32 -> [n, d], per row
  kSoftmax,
  // x [n, d] f32 -> [n] i32, per row, the first maximum
  kArgmax,
  // x [n, d] f32, rows [m] i32 -> [m, d]
  kGetRows,
  // gate, up [n, f] f32 -> [n, f] = gelu(gate) * up, GELU in its tanh form (Gemma's GeGLU)
  kGeGlu,
  // x f32 -> like x, times ScalarParams::value
  kScale,
  // x f32 -> like x, c * tanh(x / c) with c = ScalarParams::value (Gemma 2's logit soft-capping)
  kSoftcap,
  // x f32 -> like x, summed element-wise over the ranks of CollectiveParams::group (the
  // all-reduce after a tensor-parallel row-split matmul); every rank runs the same node
  kAllReduce,
  // y [n, m] f32, x [n, k] f32, a [slots, r, k] f32, bt [slots, r, m] f32, slot [n] i32 ->
  // [n, m]: y plus, for each token t with slot[t] = s >= 0, bt[s]ᵀ · (a[s] · x[t]), LoRA's
  // low-rank update B A x with B stored transposed, so that the expansion adds whole rows (the
  // adapter's scale is folded into bt); tokens with slot -1 keep y
  kLora,
};

std::string_view to_string(OpKind op);

struct NormParams {
  float eps = 1e-5f;
};

struct ScalarParams {
  float value = 1.0f;
};

// "normal" rotates adjacent pairs (x[2i], x[2i+1]) as in the original Llama; "neox" rotates
// (x[i], x[i + n_rot/2]) as in GPT-NeoX, Qwen2 and Phi-3.
enum class RopeMode { kNormal, kNeox };

struct RopeParams {
  int n_rot = 0;  // leading dimensions of each head that are rotated (<= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // linear position scaling: angle = pos * freq_scale * base^(-2i/n_rot)
  RopeMode mode = RopeMode::kNormal;
  // Optional per-pair frequency divisors (Llama 3.1 "rope_freqs"), n_rot/2 values; empty if none.
  std::vector<float> freq_factors;
};

// Where each token of a token-flattened batch lives in the paged KV cache. Caches are
// [n_blocks, block_size, kv_heads, head_dim]; the token at position p of sequence s is cache row
// block_tables[s][p / block_size] * block_size + p % block_size.
struct PagedBatch {
  int block_size = 16;
  std::vector<int32_t> token_seq;                  // per token: index into block_tables
  std::vector<int32_t> token_pos;                  // per token: absolute position in its sequence
  std::vector<std::vector<int32_t>> block_tables;  // per sequence: block ids in order
};

// Cache row of position `pos` of sequence `seq` (both already checked by validate_paged_batch).
inline int64_t cache_row(const PagedBatch& batch, int32_t seq, int32_t pos) {
  return static_cast<int64_t>(batch.block_tables[seq][pos / batch.block_size]) * batch.block_size +
         pos % batch.block_size;
}

// Throws Error naming the first bad value unless `batch` describes n_tokens tokens whose
// positions and block ids fit a cache of n_blocks blocks of block_size rows. Kernels call it
// before touching a cache, because a bad table would otherwise read or write out of bounds.
void validate_paged_batch(const PagedBatch& batch, int64_t n_tokens, int64_t n_blocks,
                          int64_t block_size);

struct AttentionParams {
  float scale = 1.0f;  // applied to q·k before softmax, usually 1/sqrt(head_dim)
  // When > 0, each score s becomes softcap * tanh(s / softcap) before the softmax (Gemma 2).
  float softcap = 0.0f;
  // Causal: a token at position p attends to its sequence's cache positions 0..p, or, when
  // window > 0, to the last `window` of them, p - window + 1..p (sliding-window attention).
  int32_t window = 0;
  std::shared_ptr<const PagedBatch> batch;
};

// The first cache position a token at `pos` attends to.
inline int32_t first_attended(int32_t window, int32_t pos) {
  return window > 0 && pos >= window ? pos - window + 1 : 0;
}

// The ranks a collective node runs over; the model that built the graph keeps it alive.
struct CollectiveParams {
  Communicator* group = nullptr;
};

using OpParams = std::variant<std::monostate, NormParams, RopeParams, AttentionParams, ScalarParams,
                              CollectiveParams>;

}  // namespace baton
