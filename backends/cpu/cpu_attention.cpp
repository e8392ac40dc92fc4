// Paged KV-cache write and causal attention with grouped K/V heads (MHA, GQA, MQA).
//
// Caches are [n_blocks, block_size, kv_heads, head_dim] in f32, f16, bf16, q8_0, fp8 or int8; every
// K/V row is found through the sequence's block table. Attention plans its work once
// (attention/attention.h) and runs it with the kernel of the active ISA level.

#include "backends/cpu/attention/attention.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/kv_store.h"
#include "core/runtime/quantize/quantize.h"

namespace baton::cpu {
void kv_write(const Context& ctx, const Tensor& k, const Tensor& v, const Tensor& k_cache,
              const Tensor& v_cache, const PagedBatch& batch) {
  validate_paged_batch(batch, k.dim(0), k_cache.dim(0), k_cache.dim(1));
  const int64_t n = k.dim(0), row_elems = k.dim(1) * k.dim(2);
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = cache_row(batch, batch.token_seq[t], batch.token_pos[t]);
    write_cache_row(k_cache, row, k.data<float>() + t * row_elems);
    write_cache_row(v_cache, row, v.data<float>() + t * row_elems);
  }
}

void attention(const Context& ctx, const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
               const AttentionParams& params, const Tensor& out) {
  const PagedBatch& batch = *params.batch;
  validate_paged_batch(batch, q.dim(0), k_cache.dim(0), k_cache.dim(1));
  const attn::Plan plan = attn::make_plan(batch, q.dim(0), k_cache.dim(2), params.window);
  const attn::Args args{.q = q.data<float>(),
                        .k_cache = k_cache.materialize(),
                        .v_cache = v_cache.materialize(),
                        .cache_dtype = k_cache.dtype(),
                        .out = out.data<float>(),
                        .heads = q.dim(1),
                        .kv_heads = k_cache.dim(2),
                        .head_dim = q.dim(2),
                        .scale = params.scale,
                        .softcap = params.softcap,
                        .window = params.window,
                        .batch = &batch};
  switch (active_isa()) {
    case Isa::kAvx512:
      return attn::run_avx512(ctx, args, plan);
    case Isa::kAvx2:
      return attn::run_avx2(ctx, args, plan);
    case Isa::kGeneric:
      return attn::run_generic(ctx, args, plan);
  }
}

}  // namespace baton::cpu
