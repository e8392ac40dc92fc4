// rms_norm and rotary position embedding, and their fused forms with the neighbouring residual
// add and KV-cache write.

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_fused.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/elementwise/elementwise.h"
#include "backends/cpu/kv_store.h"
#include "core/runtime/quantize/quantize.h"

namespace baton::cpu {
namespace {

float inv_rms(float sum_sq, int64_t d, float eps) {
  return 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
}

// Per-token cos/sin of each rotated pair, one table per token shared by all of its heads.
// Angles are formed in double: pos * freq in float loses ~1e-4 rad at positions in the
// thousands.
class RopeAngles {
 public:
  RopeAngles(const Context& ctx, const RopeParams& params, const int32_t* pos, int64_t n)
      : half_(params.n_rot / 2), cos_sin_(static_cast<size_t>(n * half_ * 2)) {
    const std::vector<double> inv_freq = rope_inv_freq(params);
    const double magnitude = rope_magnitude(params);
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
    for (int64_t t = 0; t < n; ++t) {
      for (int i = 0; i < half_; ++i) {
        const double theta = pos[t] * inv_freq[i];
        cos_sin_[(t * half_ + i) * 2] = static_cast<float>(magnitude * std::cos(theta));
        cos_sin_[(t * half_ + i) * 2 + 1] = static_cast<float>(magnitude * std::sin(theta));
      }
    }
  }

  // Rotates one head of token t from `in` to `o` (head_dim elements). Each pair is read before
  // it is written, so `o` may be `in`.
  void rotate(const RopeParams& params, int64_t t, const float* in, float* o,
              int64_t head_dim) const {
    // Normal mode pairs element 2i with 2i+1; NeoX pairs i with i + n_rot/2.
    const int stride = params.mode == RopeMode::kNormal ? 2 : 1;
    const int offset = params.mode == RopeMode::kNormal ? 1 : half_;
    const float* cs = cos_sin_.data() + t * half_ * 2;
    for (int i = 0; i < half_; ++i) {
      const int a = i * stride, b = a + offset;
      const float x0 = in[a], x1 = in[b], c = cs[2 * i], s = cs[2 * i + 1];
      o[a] = x0 * c - x1 * s;
      o[b] = x0 * s + x1 * c;
    }
    for (int64_t i = params.n_rot; i < head_dim; ++i) o[i] = in[i];
  }

 private:
  int half_;
  std::vector<float> cos_sin_;
};

void rope_kv_write_rows(const Context& ctx, const Tensor& k, const RopeAngles& angles,
                        const RopeParams& rope, const Tensor& rotated, const Tensor& v,
                        const Tensor& k_cache, const Tensor& v_cache, const PagedBatch& batch) {
  const int64_t n = k.dim(0), kv_heads = k.dim(1), head_dim = k.dim(2);
  const int64_t row_elems = kv_heads * head_dim;
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t t = 0; t < n; ++t) {
    const int64_t row = cache_row(batch, batch.token_seq[t], batch.token_pos[t]);
    const float* kt = k.data<float>() + t * row_elems;
    float* rt = rotated.data<float>() + t * row_elems;
    for (int64_t h = 0; h < kv_heads; ++h)
      angles.rotate(rope, t, kt + h * head_dim, rt + h * head_dim, head_dim);
    write_cache_row(k_cache, row, rt);
    write_cache_row(v_cache, row, v.data<float>() + t * row_elems);
  }
}

}  // namespace

void rms_norm(const Context& ctx, const Tensor& x, const Tensor& weight, float eps,
              const Tensor& out) {
  const RowKernels& k = row_kernels();
  const int64_t d = x.row_length(), rows = x.rows();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data<float>() + r * d;
    k.scale_mul(in, inv_rms(k.sum_squares(in, d), d, eps), weight.data<float>(),
                out.data<float>() + r * d, d);
  }
}

void add_rms_norm(const Context& ctx, const Tensor& a, const Tensor& b, const Tensor& weight,
                  float eps, const Tensor& sum, const Tensor& normed) {
  const RowKernels& k = row_kernels();
  const int64_t d = a.row_length(), rows = a.rows();
  const int64_t b_row_stride = b.shape() == a.shape() ? d : 0;
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* s = sum.data<float>() + r * d;
    const float sum_sq =
        k.add_sum_squares(a.data<float>() + r * d, b.data<float>() + r * b_row_stride, s, d);
    k.scale_mul(s, inv_rms(sum_sq, d, eps), weight.data<float>(), normed.data<float>() + r * d, d);
  }
}

void rope(const Context& ctx, const Tensor& x, const Tensor& positions, const RopeParams& params,
          const Tensor& out) {
  const int64_t n = x.dim(0), heads = x.dim(1), head_dim = x.dim(2);
  const RopeAngles angles(ctx, params, positions.data<int32_t>(), n);
#pragma omp parallel for collapse(2) num_threads(ctx.threads) schedule(static)
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t offset = (t * heads + h) * head_dim;
      angles.rotate(params, t, x.data<float>() + offset, out.data<float>() + offset, head_dim);
    }
  }
}

void rope_kv_write(const Context& ctx, const Tensor& k, const Tensor& positions,
                   const RopeParams& rope, const Tensor& rotated, const Tensor& v,
                   const Tensor& k_cache, const Tensor& v_cache, const PagedBatch& batch) {
  validate_paged_batch(batch, k.dim(0), k_cache.dim(0), k_cache.dim(1));
  const RopeAngles angles(ctx, rope, positions.data<int32_t>(), k.dim(0));
  rope_kv_write_rows(ctx, k, angles, rope, rotated, v, k_cache, v_cache, batch);
}

}  // namespace baton::cpu
