// Reference rms_norm and rotary position embedding.

#include <cmath>

#include "ops/reference.h"
#include "ops/reference/checks.h"

namespace baton::reference {

using detail::require;
using detail::require_input;
using detail::require_rank;
using detail::require_shape;

void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
  require_input(x, DType::kF32, "rms_norm x");
  require_input(weight, DType::kF32, "rms_norm weight");
  require_shape(weight, {x.row_length()}, "rms_norm weight");
  require_input(out, DType::kF32, "rms_norm output");
  require_shape(out, x.shape(), "rms_norm output");
  const int64_t d = x.row_length();
  const float* w = weight.data<float>();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.data<float>() + r * d;
    float* o = out.data<float>() + r * d;
    double sum_sq = 0.0;
    for (int64_t i = 0; i < d; ++i) sum_sq += static_cast<double>(in[i]) * in[i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) o[i] = static_cast<float>(in[i] * inv_rms * w[i]);
  }
}

void rope(const Tensor& x, const Tensor& positions, const RopeParams& params, const Tensor& out) {
  require_input(x, DType::kF32, "rope x");
  require_rank(x, 3, "rope x");
  require_input(positions, DType::kI32, "rope positions");
  require_shape(positions, {x.dim(0)}, "rope positions");
  require_input(out, DType::kF32, "rope output");
  require_shape(out, x.shape(), "rope output");
  const int64_t heads = x.dim(1), head_dim = x.dim(2);
  const int n_rot = params.n_rot;
  require(n_rot > 0 && n_rot % 2 == 0 && n_rot <= head_dim,
          "rope n_rot " + std::to_string(n_rot) + " must be even, positive and at most head_dim " +
              std::to_string(head_dim));
  require(
      params.freq_factors.empty() || params.freq_factors.size() == static_cast<size_t>(n_rot / 2),
      "rope freq_factors must hold n_rot/2 = " + std::to_string(n_rot / 2) + " values, got " +
          std::to_string(params.freq_factors.size()));
  const int half = n_rot / 2;
  const std::vector<double> inv_freq = rope_inv_freq(params);
  const double magnitude = rope_magnitude(params);
  for (int64_t t = 0; t < x.dim(0); ++t) {
    const double pos = positions.data<int32_t>()[t];
    for (int64_t h = 0; h < heads; ++h) {
      const float* in = x.data<float>() + (t * heads + h) * head_dim;
      float* o = out.data<float>() + (t * heads + h) * head_dim;
      for (int64_t i = n_rot; i < head_dim; ++i) o[i] = in[i];
      for (int i = 0; i < half; ++i) {
        const double theta = pos * inv_freq[i];
        const int a = params.mode == RopeMode::kNormal ? 2 * i : i;
        const int b = params.mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
        const double x0 = in[a], x1 = in[b];
        const double c = magnitude * std::cos(theta), s = magnitude * std::sin(theta);
        o[a] = static_cast<float>(x0 * c - x1 * s);
        o[b] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

}  // namespace baton::reference
