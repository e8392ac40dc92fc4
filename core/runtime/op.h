#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <variant>
#include <vector>

namespace baton {

class Communicator;

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
  // The rotation's magnitude: cos and sin are multiplied by it (LongRoPE's and YaRN's attention
  // factor, as llama.cpp passes it), so the rotated dimensions of q·k by its square.
  float attn_factor = 1.0f;
  // YaRN (ggml's rope_yarn): when ext_factor is not 0, each pair's angle blends the scaled and
  // the unscaled one by a ramp over the pairs between two correction dimensions (set by
  // beta_fast and beta_slow rotations within original_context), and the magnitude grows by
  // 1 + 0.1 ln(1 / freq_scale).
  float yarn_ext_factor = 0.0f;
  int32_t yarn_original_context = 0;
  float yarn_beta_fast = 32.0f, yarn_beta_slow = 1.0f;
};

// Each rotated pair's angle per unit of position (n_rot/2 values, in double: angles at positions
// in the thousands keep their fp32 accuracy), with scaling, frequency factors and YaRN applied.
std::vector<double> rope_inv_freq(const RopeParams& params);
// What cos and sin are multiplied by.
double rope_magnitude(const RopeParams& params);

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

// The operations a model step is built from, one row each: kind, name, inputs, the parameters
// its node carries (std::monostate: none), and what it computes. Each has a reference kernel in
// ops/reference.h, which defines its semantics; backends implement the ones they report in
// Backend::supports. The enum, names, schema checks and the list a backend must implement come
// from this table, so a new op is a row here plus its builder (core/runtime/graph.h), reference
// kernel and backend kernels, which tests/backends/gpu/op_coverage_test.cpp asks every backend for.
#define BATON_OP_TABLE(X)                                                                        \
  X(kEmbedding, "embedding", 2, std::monostate,                                                  \
    "table [vocab, dim] of any weight dtype, ids [n] i32 -> [n, dim] f32")                       \
  X(kMatMul, "matmul", 2, std::monostate,                                                        \
    "x [n, k] f32, w [m, k] of any weight dtype -> [n, m] f32 = x times w transposed")           \
  X(kRmsNorm, "rms_norm", 2, NormParams, "x [n, d] f32, weight [d] f32 -> [n, d] f32")           \
  X(kRope, "rope", 2, RopeParams, "x [n, heads, head_dim] f32, positions [n] i32 -> like x")     \
  X(kKvWrite, "kv_write", 4, AttentionParams,                                                    \
    "k, v [n, kv_heads, head_dim] f32, k_cache, v_cache -> writes the caches, no output")        \
  X(kAttention, "attention", 3, AttentionParams,                                                 \
    "q [n, heads, head_dim] f32, k_cache, v_cache -> like q, paged through the block tables")    \
  X(kSwiGlu, "swiglu", 2, std::monostate, "gate, up [n, f] f32 -> [n, f] = silu(gate) * up")     \
  X(kAdd, "add", 2, std::monostate,                                                              \
    "a [n, d] f32, b [n, d] or [d] f32 (broadcast over rows) -> [n, d]")                         \
  X(kSoftmax, "softmax", 1, std::monostate, "x [n, d] f32 -> [n, d], per row")                   \
  X(kArgmax, "argmax", 1, std::monostate, "x [n, d] f32 -> [n] i32, per row, the first maximum") \
  X(kGetRows, "get_rows", 2, std::monostate, "x [n, d] f32, rows [m] i32 -> [m, d]")             \
  X(kGeGlu, "geglu", 2, std::monostate,                                                          \
    "gate, up [n, f] f32 -> [n, f] = gelu(gate) * up, GELU in its tanh form (Gemma's GeGLU)")    \
  X(kScale, "scale", 1, ScalarParams, "x f32 -> like x, times ScalarParams::value")              \
  X(kSoftcap, "softcap", 1, ScalarParams,                                                        \
    "x f32 -> like x, c * tanh(x / c) with c = ScalarParams::value (Gemma 2's soft-capping)")    \
  X(kAllReduce, "all_reduce", 1, CollectiveParams,                                               \
    "x f32 -> like x, summed element-wise over the ranks of CollectiveParams::group (after a "   \
    "tensor-parallel row-split matmul); every rank runs the same node")                          \
  X(kLora, "lora", 5, std::monostate,                                                            \
    "y [n, m] f32, x [n, k] f32, a [slots, r, k] f32, bt [slots, r, m] f32, slot [n] i32 -> "    \
    "[n, m]: y plus bt[s]^T (a[s] x[t]) for each token t with slot s >= 0 (LoRA's B A x, the "   \
    "adapter's scale folded into bt); tokens with slot -1 keep y")

enum class OpKind {
#define BATON_OP_KIND(kind, name, inputs, params, summary) kind,
  BATON_OP_TABLE(BATON_OP_KIND)
#undef BATON_OP_KIND
};

// One row of the op table.
struct OpSchema {
  OpKind kind;
  std::string_view name;
  int32_t inputs;
  std::string_view summary;
};

inline constexpr OpSchema kOpSchemas[] = {
#define BATON_OP_SCHEMA(kind, name, inputs, params, summary) {OpKind::kind, name, inputs, summary},
    BATON_OP_TABLE(BATON_OP_SCHEMA)
#undef BATON_OP_SCHEMA
};

const OpSchema& op_schema(OpKind op);
std::string_view to_string(OpKind op);

// Whether `params` is the parameter type of `op`'s row.
bool has_op_params(OpKind op, const OpParams& params);

}  // namespace baton
