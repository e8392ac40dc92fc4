// Paged KV-cache write and causal attention with grouped K/V heads (MHA, GQA, MQA).
//
// Caches are [n_blocks, block_size, kv_heads, head_dim] in f32 or f16; every K/V row is found
// through the sequence's block table. Attention runs one (token, head) pair per work item, so
// a batch mixing long prefills and single-token decodes balances with a dynamic schedule.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <omp.h>

#include "backends/cpu/cpu_dequantize.h"
#include "backends/cpu/cpu_kernels.h"
#include "core/half.h"

namespace baton::cpu {
namespace {

// A cache row as floats: f32 rows are used in place, f16 rows are converted into `tmp`.
const float* load_row(const float* src, int64_t, float*) {
  return src;
}
const float* load_row(const uint16_t* src, int64_t n, float* tmp) {
  const float* table = fp16_table();
  for (int64_t i = 0; i < n; ++i) tmp[i] = table[src[i]];
  return tmp;
}

void store_row(float* dst, const float* src, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
void store_row(uint16_t* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

template <typename T>
void kv_write_typed(const Context& ctx, const Tensor& k, const Tensor& v, const Tensor& k_cache,
                    const Tensor& v_cache, const PagedBatch& batch) {
  const int64_t n = k.dim(0), row_elems = k.dim(1) * k.dim(2);
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = cache_row(batch, batch.token_seq[t], batch.token_pos[t]);
    store_row(k_cache.data<T>() + row * row_elems, k.data<float>() + t * row_elems, row_elems);
    store_row(v_cache.data<T>() + row * row_elems, v.data<float>() + t * row_elems, row_elems);
  }
}

template <typename T>
void attention_typed(const Context& ctx, const Tensor& q, const Tensor& k_cache,
                     const Tensor& v_cache, const AttentionParams& params, const Tensor& out) {
  const PagedBatch& batch = *params.batch;
  const int64_t n = q.dim(0), heads = q.dim(1), head_dim = q.dim(2);
  const int64_t kv_heads = k_cache.dim(2), group = heads / kv_heads;
  const int64_t max_len =
      n ? *std::max_element(batch.token_pos.begin(), batch.token_pos.end()) + 1 : 0;
  // Per thread: the scores of one (token, head) pair, then one converted cache row.
  const int64_t scratch_per_thread = max_len + head_dim;
  std::vector<float> scratch(static_cast<size_t>(scratch_per_thread * ctx.threads));
  const T* kc = k_cache.data<T>();
  const T* vc = v_cache.data<T>();

#pragma omp parallel for collapse(2) num_threads(ctx.threads) schedule(dynamic)
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      float* scores = scratch.data() + omp_get_thread_num() * scratch_per_thread;
      float* row_tmp = scores + max_len;
      const int32_t seq = batch.token_seq[t], pos = batch.token_pos[t];
      const int64_t kv_head = h / group;
      const float* qh = q.data<float>() + (t * heads + h) * head_dim;
      float max_score = -INFINITY;
      for (int32_t j = 0; j <= pos; ++j) {
        const int64_t offset = (cache_row(batch, seq, j) * kv_heads + kv_head) * head_dim;
        const float* kr = load_row(kc + offset, head_dim, row_tmp);
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int64_t i = 0; i < head_dim; ++i) dot += qh[i] * kr[i];
        scores[j] = dot * params.scale;
        max_score = std::max(max_score, scores[j]);
      }
      float total = 0.0f;
      for (int32_t j = 0; j <= pos; ++j) total += (scores[j] = std::exp(scores[j] - max_score));
      float* o = out.data<float>() + (t * heads + h) * head_dim;
      std::fill(o, o + head_dim, 0.0f);
      for (int32_t j = 0; j <= pos; ++j) {
        const int64_t offset = (cache_row(batch, seq, j) * kv_heads + kv_head) * head_dim;
        const float* vr = load_row(vc + offset, head_dim, row_tmp);
        const float weight = scores[j];
        for (int64_t i = 0; i < head_dim; ++i) o[i] += weight * vr[i];
      }
      const float inv_total = 1.0f / total;
      for (int64_t i = 0; i < head_dim; ++i) o[i] *= inv_total;
    }
  }
}

}  // namespace

void kv_write(const Context& ctx, const Tensor& k, const Tensor& v, const Tensor& k_cache,
              const Tensor& v_cache, const PagedBatch& batch) {
  validate_paged_batch(batch, k.dim(0), k_cache.dim(0), k_cache.dim(1));
  if (k_cache.dtype() == DType::kF16) {
    kv_write_typed<uint16_t>(ctx, k, v, k_cache, v_cache, batch);
  } else {
    kv_write_typed<float>(ctx, k, v, k_cache, v_cache, batch);
  }
}

void attention(const Context& ctx, const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
               const AttentionParams& params, const Tensor& out) {
  validate_paged_batch(*params.batch, q.dim(0), k_cache.dim(0), k_cache.dim(1));
  if (k_cache.dtype() == DType::kF16) {
    attention_typed<uint16_t>(ctx, q, k_cache, v_cache, params, out);
  } else {
    attention_typed<float>(ctx, q, k_cache, v_cache, params, out);
  }
}

}  // namespace baton::cpu
