// The per-pair rotary frequencies every backend's rope kernel uses, computed once here so that
// the reference, the CPU and the GPU kernels rotate by the same angles.

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/runtime/op.h"

namespace baton {
namespace {

// The pair index whose rotation count over `context` positions is `rotations` (YaRN's
// correction dimension), as ggml_rope_yarn_corr_dim computes it.
double yarn_correction_dim(const RopeParams& p, double rotations) {
  return p.n_rot * std::log(p.yarn_original_context / (rotations * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(static_cast<double>(p.freq_base)));
}

}  // namespace

std::vector<double> rope_inv_freq(const RopeParams& p) {
  const int half = p.n_rot / 2;
  std::vector<double> inv_freq(static_cast<size_t>(half));
  // Pairs below `low` keep their unscaled frequency, pairs above `high` are fully scaled.
  double low = 0, high = 0;
  if (p.yarn_ext_factor != 0.0f) {
    low = std::max(0.0, std::floor(yarn_correction_dim(p, p.yarn_beta_fast)));
    high = std::min(p.n_rot - 1.0, std::ceil(yarn_correction_dim(p, p.yarn_beta_slow)));
  }
  for (int i = 0; i < half; ++i) {
    double extrapolated = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
    if (!p.freq_factors.empty()) extrapolated /= p.freq_factors[i];
    const double interpolated = p.freq_scale * extrapolated;
    double mix = 0;
    if (p.yarn_ext_factor != 0.0f) {
      const double ramp = (i - low) / std::max(0.001, high - low);
      mix = (1.0 - std::clamp(ramp, 0.0, 1.0)) * p.yarn_ext_factor;
    }
    inv_freq[i] = interpolated * (1.0 - mix) + extrapolated * mix;
  }
  return inv_freq;
}

double rope_magnitude(const RopeParams& p) {
  double magnitude = p.attn_factor;
  if (p.yarn_ext_factor != 0.0f) magnitude *= 1.0 + 0.1 * std::log(1.0 / p.freq_scale);
  return magnitude;
}

}  // namespace baton
