// The float-weight GEMV at the AVX2 level: F16 widened with F16C, BF16 by a 16-bit shift, FP8
// E4M3 by moving its bits into fp32's fields, all exact (but for E4M3's NaN codes). AVX2 has no
// 16-bit masked load, so row tails go through a zero-padded copy.

#include <immintrin.h>

#include <cstring>

#include "backends/cpu/matmul/float_gemv.h"
#include "backends/cpu/matmul/matmul_float.h"
#include "backends/cpu/simd/simd_avx2.h"

namespace baton::cpu::avx2 {
namespace {

using Simd = SimdAvx2;

struct F32Loader {
  using T = float;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 load_partial(const float* p, int64_t n) { return Simd::load_partial(p, n); }
};

__m128i load_partial_u16(const uint16_t* p, int64_t n) {
  uint16_t padded[Simd::kWidth] = {};
  std::memcpy(padded, p, static_cast<size_t>(n) * sizeof(uint16_t));
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(padded));
}

struct F16Loader {
  using T = uint16_t;
  static __m256 load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256 load_partial(const uint16_t* p, int64_t n) {
    return _mm256_cvtph_ps(load_partial_u16(p, n));
  }
};

struct BF16Loader {
  using T = uint16_t;
  static __m256 widen(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static __m256 load(const uint16_t* p) {
    return widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256 load_partial(const uint16_t* p, int64_t n) { return widen(load_partial_u16(p, n)); }
};

// E4M3 -> fp32 as at the AVX-512 level: magnitude bits under fp32's exponent field, then an
// exact multiply by 2^120.
struct Fp8Loader {
  using T = uint8_t;
  static constexpr bool kScaledRows = true;
  static __m256 widen(__m128i bytes) {
    const __m256i b = _mm256_cvtepu8_epi32(bytes);
    const __m256i magnitude = _mm256_slli_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7f)), 20);
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x80)), 24);
    return _mm256_mul_ps(_mm256_castsi256_ps(_mm256_or_si256(magnitude, sign)),
                         _mm256_set1_ps(0x1p120f));
  }
  static __m256 load(const uint8_t* p) {
    return widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256 load_partial(const uint8_t* p, int64_t n) {
    uint8_t padded[Simd::kWidth] = {};
    std::memcpy(padded, p, static_cast<size_t>(n));
    return widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(padded)));
  }
};

// The blocked shape: 2 weight rows by 2 rows of x, 8 accumulators and 4 weight vectors in the
// 16 registers.
template <typename Loader>
using Kernel = FloatGemv<Simd, Loader, 2, 2>;

}  // namespace

void float_gemv(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  switch (w.dtype()) {
    case DType::kF32:
      return Kernel<F32Loader>::run(x, w, out, ctx.threads);
    case DType::kF16:
      return Kernel<F16Loader>::run(x, w, out, ctx.threads);
    case DType::kF8Row:
      return Kernel<Fp8Loader>::run(x, w, out, ctx.threads);
    default:
      return Kernel<BF16Loader>::run(x, w, out, ctx.threads);
  }
}

}  // namespace baton::cpu::avx2
