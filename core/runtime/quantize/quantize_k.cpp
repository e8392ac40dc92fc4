// f32 -> K-quants. Each sub-block gets the scale (and min) that least-squares fits it best among
// a few candidate ranges; the super-block's fp16 d (and dmin) map the largest of those onto the
// top integer code; finally every element is rounded to the nearest value the stored scales
// give its sub-block.

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/runtime/half.h"
#include "core/runtime/quantize/quantize.h"
#include "core/runtime/quantize/quantize_detail.h"

namespace baton {
namespace {

using detail::check_blocks;
using detail::nearest;
using detail::nearest_code;

// Candidate ranges per sub-block: the full range, then narrower ones that clip outliers in
// exchange for a finer step.
constexpr int kCandidates = 6;
constexpr float kNarrowing = 0.05f;

// value = scale * q - min with q in [0, qmax] and min >= 0 (the K-quants' "type 1").
struct Affine {
  float scale = 0.0f, min = 0.0f;
};

Affine fit_affine(const float* x, int n, int qmax) {
  float lo = 0.0f, hi = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (hi <= lo) return {0.0f, -lo};
  double sum_x = 0.0, sum_xx = 0.0;
  for (int i = 0; i < n; ++i) {
    sum_x += x[i];
    sum_xx += double{x[i]} * x[i];
  }
  const float center = 0.5f * (hi + lo), half = 0.5f * (hi - lo);
  Affine best{(hi - lo) / static_cast<float>(qmax), -lo};
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = 0; c < kCandidates; ++c) {
    const float f = 1.0f - kNarrowing * static_cast<float>(c);
    const float c_lo = std::min(0.0f, center - half * f), c_hi = center + half * f;
    const float inv = static_cast<float>(qmax) / (c_hi - c_lo);
    double sq = 0.0, sqq = 0.0, sqx = 0.0;
    for (int i = 0; i < n; ++i) {
      const double q = nearest((x[i] - c_lo) * inv, 0, qmax);
      sq += q;
      sqq += q * q;
      sqx += q * x[i];
    }
    // Least squares for x ~ s * q + o given the codes, with o <= 0 (o is -min).
    double s = 0.0, o = 0.0;
    const double det = n * sqq - sq * sq;
    if (det > 0.0) {
      s = (n * sqx - sq * sum_x) / det;
      o = (sqq * sum_x - sq * sqx) / det;
    }
    if (det <= 0.0 || o > 0.0) {
      o = 0.0;
      s = sqq > 0.0 ? sqx / sqq : 0.0;
    }
    if (s <= 0.0) continue;
    const double err =
        sum_xx - 2 * s * sqx - 2 * o * sum_x + s * s * sqq + 2 * s * o * sq + n * o * o;
    if (err < best_err) {
      best_err = err;
      best = {static_cast<float>(s), static_cast<float>(-o)};
    }
  }
  return best;
}

// value = scale * q with q in [-qneg, qpos] (the K-quants' "type 0"); the scale takes the sign
// that sends the element of largest magnitude to -qneg, the side with one more level.
float fit_symmetric(const float* x, int n, int qneg, int qpos) {
  float extreme = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  }
  if (extreme == 0.0f) return 0.0f;
  double best_err = std::numeric_limits<double>::infinity(), best = 0.0;
  for (int c = 0; c < kCandidates; ++c) {
    const float inv = static_cast<float>(-qneg) / (extreme * (1.0f - kNarrowing * c));
    double sqq = 0.0, sqx = 0.0;
    for (int i = 0; i < n; ++i) {
      const double q = nearest(x[i] * inv, -qneg, qpos);
      sqq += q * q;
      sqx += q * x[i];
    }
    if (sqq == 0.0) continue;
    const double err = -sqx * sqx / sqq;  // sum x^2 - (q.x)^2 / (q.q), less the constant sum x^2
    if (err < best_err) {
      best_err = err;
      best = sqx / sqq;
    }
  }
  return static_cast<float>(best);
}

// A super-block scale stored as fp16 so that `largest` maps to code `top`, and its decoded value.
float super_scale(float largest, int top, uint16_t& stored) {
  stored = fp32_to_fp16(largest / static_cast<float>(top));
  return fp16_to_fp32(stored);
}

// The code for a sub-block scale against a super-block scale d, in [lo, hi].
int scale_code(float value, float d, int lo, int hi) {
  return d != 0.0f ? nearest(value / d, lo, hi) : 0;
}

// Type-1 super-blocks (Q2_K, Q4_K, Q5_K): codes of each sub-block's scale and min on the grids
// of d and dmin; calls put(element, code) with each element's quant in [0, qmax].
template <int kSub, int kCount, typename Put>
void quantize_type_one(const float* v, int qmax, int top, uint16_t& d16, uint16_t& dmin16,
                       uint8_t (&scale)[kCount], uint8_t (&min)[kCount], Put put) {
  Affine fits[kCount];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < kCount; ++s) {
    fits[s] = fit_affine(v + s * kSub, kSub, qmax);
    max_scale = std::max(max_scale, fits[s].scale);
    max_min = std::max(max_min, fits[s].min);
  }
  const float d = super_scale(max_scale, top, d16), dmin = super_scale(max_min, top, dmin16);
  for (int s = 0; s < kCount; ++s) {
    scale[s] = static_cast<uint8_t>(scale_code(fits[s].scale, d, 0, top));
    min[s] = static_cast<uint8_t>(scale_code(fits[s].min, dmin, 0, top));
    // The decoders' own fp32 products, so the rounding below sees the values they produce.
    const float step = d * static_cast<float>(scale[s]);
    const float offset = dmin * static_cast<float>(min[s]);
    for (int i = 0; i < kSub; ++i) {
      put(s * kSub + i, nearest_code(v[s * kSub + i], step, offset, 0, qmax));
    }
  }
}

// Type-0 super-blocks (Q3_K, Q6_K): signed scale codes in [-top, top - 1] on the grid of d, and
// each element's quant in [-qneg, qneg - 1].
template <int kSub, int kCount, typename Put>
void quantize_type_zero(const float* v, int qneg, int top, uint16_t& d16, int (&scale)[kCount],
                        Put put) {
  float fits[kCount];
  float extreme = 0.0f;
  for (int s = 0; s < kCount; ++s) {
    fits[s] = fit_symmetric(v + s * kSub, kSub, qneg, qneg - 1);
    if (std::fabs(fits[s]) > std::fabs(extreme)) extreme = fits[s];
  }
  // As within a sub-block: the largest scale maps to -top, which has the extra level.
  const float d = super_scale(extreme, -top, d16);
  for (int s = 0; s < kCount; ++s) {
    scale[s] = scale_code(fits[s], d, -top, top - 1);
    const float step = d * static_cast<float>(scale[s]);
    for (int i = 0; i < kSub; ++i) {
      put(s * kSub + i, nearest_code(v[s * kSub + i], step, 0.0f, -qneg, qneg - 1));
    }
  }
}

}  // namespace

void quantize_row_q2_k(const float* x, BlockQ2_K* out, int64_t n) {
  check_blocks(n, kQK_K, "q2_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    BlockQ2_K& block = out[b];
    std::fill(std::begin(block.qs), std::end(block.qs), 0);
    uint8_t scale[16], min[16];
    quantize_type_one<16>(x + b * kQK_K, 3, 15, block.d, block.dmin, scale, min, [&](int e, int q) {
      block.qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>(q << (2 * ((e % 128) / 32)));
    });
    for (int s = 0; s < 16; ++s) block.scales[s] = static_cast<uint8_t>(scale[s] | min[s] << 4);
  }
}

void quantize_row_q3_k(const float* x, BlockQ3_K* out, int64_t n) {
  check_blocks(n, kQK_K, "q3_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    BlockQ3_K& block = out[b];
    std::fill(std::begin(block.qs), std::end(block.qs), 0);
    std::fill(std::begin(block.hmask), std::end(block.hmask), 0);
    int scale[16];
    quantize_type_zero<16>(x + b * kQK_K, 4, 32, block.d, scale, [&](int e, int q) {
      const int u = q + 4;  // 0..7
      block.qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>((u & 3) << (2 * ((e % 128) / 32)));
      block.hmask[e % 32] |= static_cast<uint8_t>((u >> 2) << (e / 32));
    });
    int8_t codes[16];
    for (int s = 0; s < 16; ++s) codes[s] = static_cast<int8_t>(scale[s]);
    pack_q3_k_scales(codes, block.scales);
  }
}

void quantize_row_q4_k(const float* x, BlockQ4_K* out, int64_t n) {
  check_blocks(n, kQK_K, "q4_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    BlockQ4_K& block = out[b];
    std::fill(std::begin(block.qs), std::end(block.qs), 0);
    KScalesMins sm;
    quantize_type_one<32>(
        x + b * kQK_K, 15, 63, block.d, block.dmin, sm.scale, sm.min, [&](int e, int q) {
          const int s = e / 32;
          block.qs[32 * (s / 2) + e % 32] |= static_cast<uint8_t>(q << (4 * (s % 2)));
        });
    pack_q4_k_scales(sm, block.scales);
  }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* out, int64_t n) {
  check_blocks(n, kQK_K, "q5_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    BlockQ5_K& block = out[b];
    std::fill(std::begin(block.qs), std::end(block.qs), 0);
    std::fill(std::begin(block.qh), std::end(block.qh), 0);
    KScalesMins sm;
    quantize_type_one<32>(
        x + b * kQK_K, 31, 63, block.d, block.dmin, sm.scale, sm.min, [&](int e, int q) {
          const int s = e / 32;
          block.qs[32 * (s / 2) + e % 32] |= static_cast<uint8_t>((q & 15) << (4 * (s % 2)));
          block.qh[e % 32] |= static_cast<uint8_t>((q >> 4) << s);
        });
    pack_q4_k_scales(sm, block.scales);
  }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* out, int64_t n) {
  check_blocks(n, kQK_K, "q6_K");
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    BlockQ6_K& block = out[b];
    std::fill(std::begin(block.ql), std::end(block.ql), 0);
    std::fill(std::begin(block.qh), std::end(block.qh), 0);
    int scale[16];
    quantize_type_zero<16>(x + b * kQK_K, 32, 128, block.d, scale, [&](int e, int q) {
      const int u = q + 32, h = e / 128, j = e % 128;  // u: 0..63
      block.ql[64 * h + j % 64] |= static_cast<uint8_t>((u & 15) << (j < 64 ? 0 : 4));
      block.qh[32 * h + j % 32] |= static_cast<uint8_t>((u >> 4) << (2 * (j / 32)));
    });
    for (int s = 0; s < 16; ++s) block.scales[s] = static_cast<int8_t>(scale[s]);
  }
}

}  // namespace baton
