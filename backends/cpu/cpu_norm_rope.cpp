// rms_norm and rotary position embedding.

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace baton::cpu {

void rms_norm(const Context& ctx, const Tensor& x, const Tensor& weight, float eps,
              const Tensor& out) {
  const int64_t d = x.row_length(), rows = x.rows();
  const float* w = weight.data<float>();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data<float>() + r * d;
    float* o = out.data<float>() + r * d;
    float sum_sq = 0.0f;
#pragma omp simd reduction(+ : sum_sq)
    for (int64_t i = 0; i < d; ++i) sum_sq += in[i] * in[i];
    const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
    for (int64_t i = 0; i < d; ++i) o[i] = in[i] * inv_rms * w[i];
  }
}

void rope(const Context& ctx, const Tensor& x, const Tensor& positions, const RopeParams& params,
          const Tensor& out) {
  const int64_t n = x.dim(0), heads = x.dim(1), head_dim = x.dim(2);
  const int half = params.n_rot / 2;
  // Angles are formed in double: pos * freq in float loses ~1e-4 rad at positions in the
  // thousands. One cos/sin table per token serves all of its heads.
  std::vector<double> inv_freq(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i) {
    inv_freq[i] = params.freq_scale *
                  std::pow(static_cast<double>(params.freq_base), -2.0 * i / params.n_rot);
    if (!params.freq_factors.empty()) inv_freq[i] /= params.freq_factors[i];
  }
  std::vector<float> cos_sin(static_cast<size_t>(n * half * 2));
  const int32_t* pos = positions.data<int32_t>();
#pragma omp parallel num_threads(ctx.threads)
  {
#pragma omp for schedule(static)
    for (int64_t t = 0; t < n; ++t) {
      for (int i = 0; i < half; ++i) {
        const double theta = pos[t] * inv_freq[i];
        cos_sin[(t * half + i) * 2] = static_cast<float>(std::cos(theta));
        cos_sin[(t * half + i) * 2 + 1] = static_cast<float>(std::sin(theta));
      }
    }
    // Normal mode pairs element 2i with 2i+1; NeoX pairs i with i + n_rot/2.
    const int stride = params.mode == RopeMode::kNormal ? 2 : 1;
    const int offset = params.mode == RopeMode::kNormal ? 1 : half;
#pragma omp for collapse(2) schedule(static)
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t h = 0; h < heads; ++h) {
        const float* in = x.data<float>() + (t * heads + h) * head_dim;
        float* o = out.data<float>() + (t * heads + h) * head_dim;
        const float* cs = cos_sin.data() + t * half * 2;
        for (int i = 0; i < half; ++i) {
          const int a = i * stride, b = a + offset;
          const float x0 = in[a], x1 = in[b], c = cs[2 * i], s = cs[2 * i + 1];
          o[a] = x0 * c - x1 * s;
          o[b] = x0 * s + x1 * c;
        }
        for (int64_t i = params.n_rot; i < head_dim; ++i) o[i] = in[i];
      }
    }
  }
}

}  // namespace baton::cpu
