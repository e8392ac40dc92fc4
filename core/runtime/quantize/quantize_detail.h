#pragma once

// Helpers shared by the quantizers in ops/quantize*.cpp.

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace baton::detail {

// Throws Error(kInvalidArgument) unless n is a whole number of `block`-element blocks.
void check_blocks(int64_t n, int64_t block, const char* type);

// v rounded to the nearest integer (half to even) and clamped to [lo, hi]; NaN counts as 0.
inline int nearest(float v, int lo, int hi) {
  if (std::isnan(v)) v = 0.0f;
  return std::clamp(static_cast<int>(std::nearbyint(std::clamp(v, -1e9f, 1e9f))), lo, hi);
}

// The code q in [lo, hi] whose value step * q - offset is nearest to x; 0 when step is 0.
inline int nearest_code(float x, float step, float offset, int lo, int hi) {
  return step != 0.0f ? nearest((x + offset) / step, lo, hi) : 0;
}

}  // namespace baton::detail
