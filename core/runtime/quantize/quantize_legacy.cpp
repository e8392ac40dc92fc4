// f32 -> Q4_1, Q5_0, Q5_1: 32-element blocks, each element rounded to the nearest value its
// block can hold with d (and m) as stored in fp16.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/runtime/half.h"
#include "core/runtime/quantize/quantize.h"
#include "core/runtime/quantize/quantize_detail.h"

namespace baton {
namespace {

using detail::check_blocks;
using detail::nearest_code;

// Blocks whose value is d * q + m, q in [0, kMax]: d spans [min, max], m = min.
template <typename Block, int kBits>
void quantize_min_max(const float* x, Block* out, int64_t n, const char* type) {
  constexpr int64_t kQK = 32, kHalf = kQK / 2;
  constexpr int kMax = (1 << kBits) - 1;
  check_blocks(n, kQK, type);
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* v = x + b * kQK;
    const auto [lo, hi] = std::minmax_element(v, v + kQK);
    Block& block = out[b];
    block.d = fp32_to_fp16((*hi - *lo) / kMax);
    block.m = fp32_to_fp16(*lo);
    const float d = fp16_to_fp32(block.d), m = fp16_to_fp32(block.m);
    uint32_t high_bits = 0;
    for (int64_t j = 0; j < kHalf; ++j) {
      const int q0 = nearest_code(v[j], d, -m, 0, kMax);
      const int q1 = nearest_code(v[j + kHalf], d, -m, 0, kMax);
      block.qs[j] = static_cast<uint8_t>((q0 & 15) | (q1 & 15) << 4);
      high_bits |= static_cast<uint32_t>(q0 >> 4) << j | static_cast<uint32_t>(q1 >> 4) << (j + 16);
    }
    if constexpr (kBits == 5) std::memcpy(block.qh, &high_bits, sizeof(high_bits));
  }
}

}  // namespace

void quantize_row_q4_1(const float* x, BlockQ4_1* out, int64_t n) {
  quantize_min_max<BlockQ4_1, 4>(x, out, n, "q4_1");
}

void quantize_row_q5_1(const float* x, BlockQ5_1* out, int64_t n) {
  quantize_min_max<BlockQ5_1, 5>(x, out, n, "q5_1");
}

void quantize_row_q5_0(const float* x, BlockQ5_0* out, int64_t n) {
  check_blocks(n, kQK5_0, "q5_0");
  constexpr int64_t kHalf = kQK5_0 / 2;
  for (int64_t b = 0; b < n / kQK5_0; ++b) {
    const float* v = x + b * kQK5_0;
    // The signed extreme maps to code 0 (value -16 d), one level more than the other side has.
    const float extreme = *std::max_element(
        v, v + kQK5_0, [](float a, float c) { return std::fabs(a) < std::fabs(c); });
    BlockQ5_0& block = out[b];
    block.d = fp32_to_fp16(extreme / -16.0f);
    const float d = fp16_to_fp32(block.d);
    uint32_t high_bits = 0;
    for (int64_t j = 0; j < kHalf; ++j) {
      // value = d * (code - 16): offset 16 * d shifts the codes to 0..31.
      const int q0 = nearest_code(v[j], d, 16.0f * d, 0, 31);
      const int q1 = nearest_code(v[j + kHalf], d, 16.0f * d, 0, 31);
      block.qs[j] = static_cast<uint8_t>((q0 & 15) | (q1 & 15) << 4);
      high_bits |= static_cast<uint32_t>(q0 >> 4) << j | static_cast<uint32_t>(q1 >> 4) << (j + 16);
    }
    std::memcpy(block.qh, &high_bits, sizeof(high_bits));
  }
}

}  // namespace baton
