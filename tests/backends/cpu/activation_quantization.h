#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/runtime/tensor.h"

namespace baton::testing {

// Elements per block in which the quantized matmul kernels quantize x to int8.
constexpr int64_t kActivationBlock = 32;

// x as the quantizing kernels see it: per block of 32, scale = 127 / max|x| in fp32, quants
// rounded to nearest even, then dequantized with d = max|x| / 127. Also returns d per block.
inline Tensor quantized_like_kernels(const Tensor& x, std::vector<float>& d) {
  Tensor out = Tensor::host(DType::kF32, x.shape());
  const float* in = x.data<float>();
  float* o = out.data<float>();
  d.clear();
  for (int64_t b = 0; b < x.numel() / kActivationBlock; ++b) {
    const float* block = in + b * kActivationBlock;
    float amax = 0.0f;
    for (int64_t i = 0; i < kActivationBlock; ++i) amax = std::max(amax, std::abs(block[i]));
    const float scale = amax > 0.0f ? 127.0f / amax : 0.0f;
    d.push_back(amax / 127.0f);
    for (int64_t i = 0; i < kActivationBlock; ++i) {
      o[b * kActivationBlock + i] = std::nearbyint(block[i] * scale) * d.back();
    }
  }
  return out;
}

}  // namespace baton::testing
