// Reference paged KV-cache write and causal attention with grouped K/V heads.

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/runtime/quantize/quantize.h"
#include "ops/reference.h"
#include "ops/reference/checks.h"

namespace baton::reference {

using detail::require;
using detail::require_input;
using detail::require_rank;
using detail::require_shape;

namespace {

void require_caches(const Tensor& k_cache, const Tensor& v_cache, int64_t kv_heads,
                    int64_t head_dim, std::string_view op) {
  const std::string what(op);
  require_rank(k_cache, 4, what + " k_cache");
  require_shape(v_cache, k_cache.shape(), what + " v_cache");
  const DType dtype = k_cache.dtype();
  require(is_kv_cache_dtype(dtype), what + " caches must be " + kv_cache_dtype_names() + ", got " +
                                        std::string(to_string(dtype)));
  require(dtype != DType::kQ8_0 || head_dim % kQK8_0 == 0,
          what + " q8_0 caches need a head size that is a multiple of 32, got " +
              std::to_string(head_dim));
  require_input(k_cache, k_cache.dtype(), what + " k_cache");
  require_input(v_cache, k_cache.dtype(), what + " v_cache");
  require(k_cache.dim(2) == kv_heads && k_cache.dim(3) == head_dim,
          what + " caches " + to_string(k_cache.shape()) + " do not hold " +
              std::to_string(kv_heads) + " heads of " + std::to_string(head_dim));
}

// The caches seen as one row per (cache row, kv head), which dequantize_row can read.
Tensor head_rows(const Tensor& cache) {
  return cache.reshape({cache.dim(0) * cache.dim(1) * cache.dim(2), cache.dim(3)});
}

// Encodes `head_dim` values as head row `index` of the cache.
void store_head(const Tensor& cache, int64_t index, const float* values, int64_t head_dim) {
  const size_t row_bytes = baton::row_bytes(cache.dtype(), head_dim);
  quantize_row(cache.dtype(), values, cache.materialize() + static_cast<size_t>(index) * row_bytes,
               head_dim);
}

}  // namespace

void kv_write(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
              const PagedBatch& batch) {
  require_input(k, DType::kF32, "kv_write k");
  require_rank(k, 3, "kv_write k");
  require_input(v, DType::kF32, "kv_write v");
  require_shape(v, k.shape(), "kv_write v");
  const int64_t n = k.dim(0), kv_heads = k.dim(1), head_dim = k.dim(2);
  require_caches(k_cache, v_cache, kv_heads, head_dim, "kv_write");
  validate_paged_batch(batch, n, k_cache.dim(0), k_cache.dim(1));
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = cache_row(batch, batch.token_seq[t], batch.token_pos[t]);
    for (int64_t h = 0; h < kv_heads; ++h) {
      const int64_t source = (t * kv_heads + h) * head_dim;
      store_head(k_cache, row * kv_heads + h, k.data<float>() + source, head_dim);
      store_head(v_cache, row * kv_heads + h, v.data<float>() + source, head_dim);
    }
  }
}

void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
               const AttentionParams& params, const Tensor& out) {
  require_input(q, DType::kF32, "attention q");
  require_rank(q, 3, "attention q");
  require_input(out, DType::kF32, "attention output");
  require_shape(out, q.shape(), "attention output");
  require(params.batch != nullptr, "attention needs a paged batch");
  const int64_t n = q.dim(0), heads = q.dim(1), head_dim = q.dim(2);
  require(k_cache.rank() == 4 && k_cache.dim(2) > 0 && heads % k_cache.dim(2) == 0,
          "attention query heads " + std::to_string(heads) +
              " are not a multiple of the caches' kv heads, cache shape " +
              to_string(k_cache.shape()));
  const int64_t kv_heads = k_cache.dim(2);
  require_caches(k_cache, v_cache, kv_heads, head_dim, "attention");
  const PagedBatch& batch = *params.batch;
  validate_paged_batch(batch, n, k_cache.dim(0), k_cache.dim(1));

  const Tensor k_rows = head_rows(k_cache), v_rows = head_rows(v_cache);
  const int64_t group = heads / kv_heads;
  std::vector<float> kv(static_cast<size_t>(head_dim));
  std::vector<double> scores, acc(static_cast<size_t>(head_dim));
  for (int64_t t = 0; t < n; ++t) {
    const int32_t seq = batch.token_seq[t], pos = batch.token_pos[t];
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t kv_head = h / group;
      const float* qh = q.data<float>() + (t * heads + h) * head_dim;
      const int32_t first = first_attended(params.window, pos);
      scores.assign(static_cast<size_t>(pos - first) + 1, 0.0);
      for (int32_t j = first; j <= pos; ++j) {
        dequantize_row(k_rows, cache_row(batch, seq, j) * kv_heads + kv_head, kv.data());
        double dot = 0.0;
        for (int64_t i = 0; i < head_dim; ++i) dot += static_cast<double>(qh[i]) * kv[i];
        double score = dot * params.scale;
        if (params.softcap > 0.0f) score = params.softcap * std::tanh(score / params.softcap);
        scores[j - first] = score;
      }
      const double max_score = *std::max_element(scores.begin(), scores.end());
      double total = 0.0;
      for (double& s : scores) total += (s = std::exp(s - max_score));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int32_t j = first; j <= pos; ++j) {
        dequantize_row(v_rows, cache_row(batch, seq, j) * kv_heads + kv_head, kv.data());
        for (int64_t i = 0; i < head_dim; ++i) acc[i] += scores[j - first] / total * kv[i];
      }
      float* o = out.data<float>() + (t * heads + h) * head_dim;
      for (int64_t i = 0; i < head_dim; ++i) o[i] = static_cast<float>(acc[i]);
    }
  }
}

}  // namespace baton::reference
