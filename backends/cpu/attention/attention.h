#pragma once

// Paged causal attention, split into a plan (which rows and cache positions each work item
// covers; ISA-independent) and per-ISA kernels that run a plan. The plan depends only on the
// batch, never on the thread count, so every output is computed the same way on any number of
// threads.

#include <cstdint>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace baton::cpu::attn {

// Query tokens per prefill tile: with a KV group of 8 heads a tile has 128 query rows, whose
// scores and accumulators (~40 KiB at head_dim 64) stay in L2 while K/V tiles stream past.
constexpr int64_t kQueryTile = 16;
// Cache positions per K/V tile.
constexpr int64_t kKvTile = 32;
// A lone query token (decode) whose context is longer than this is split into chunks of this
// many positions, each computed on its own and merged, so long contexts spread over threads.
constexpr int64_t kSplitLength = 256;

// One unit of parallel work: the query tokens `tokens[first, first + count)` of one sequence
// (token indices into the batch), all query heads of KV head `kv_head`, against cache positions
// [kv_begin, kv_end) clipped per token to its own position and window. partial < 0 writes the
// normalised output; otherwise the unnormalised state goes to partial slot `partial` for a later
// merge.
struct WorkItem {
  int32_t seq, kv_head;
  int32_t first, count;
  int32_t kv_begin, kv_end;
  int32_t partial;
};

// The partial slots [first, first + count) of one query token and KV head, to be merged.
struct Merge {
  int32_t token, kv_head;
  int32_t first, count;
};

struct Plan {
  std::vector<int32_t> tokens;  // batch token indices grouped by sequence
  std::vector<WorkItem> items;  // longest first, for a dynamic schedule
  std::vector<Merge> merges;
  int32_t partials = 0;
};

// `window` is AttentionParams::window: items start where their tokens' windows start.
Plan make_plan(const PagedBatch& batch, int64_t n_tokens, int64_t kv_heads, int32_t window);

struct Args {
  const float* q;  // [n, heads, head_dim]
  // [n_blocks, block_size, kv_heads, head_dim] of f32, f16, bf16, q8_0, fp8 or int8
  const void* k_cache;
  const void* v_cache;
  DType cache_dtype;
  float* out;  // like q
  int64_t heads, kv_heads, head_dim;
  float scale;
  float softcap;   // > 0: scores become softcap * tanh(score / softcap)
  int32_t window;  // > 0: each token sees only the last `window` positions up to its own
  const PagedBatch* batch;
};

void run_generic(const Context& ctx, const Args& args, const Plan& plan);
void run_avx2(const Context& ctx, const Args& args, const Plan& plan);
void run_avx512(const Context& ctx, const Args& args, const Plan& plan);

}  // namespace baton::cpu::attn
