// The float-weight GEMV at the AVX-512 level: F16 widened with vcvtph2ps, BF16 by a 16-bit
// shift, FP8 E4M3 by moving its bits into fp32's fields, all exact (except E4M3's NaN codes,
// which only NaN weights produce and which read as +-480), so every product is an fp32 FMA of
// the stored weight.

#include <immintrin.h>

#include "backends/cpu/matmul/float_gemv.h"
#include "backends/cpu/matmul/matmul_float.h"
#include "backends/cpu/simd/simd_avx512.h"

namespace baton::cpu::avx512 {
namespace {

using Simd = SimdAvx512;

struct F32Loader {
  using T = float;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 load_partial(const float* p, int64_t n) { return Simd::load_partial(p, n); }
};

struct F16Loader {
  using T = uint16_t;
  static __m512 load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_partial(const uint16_t* p, int64_t n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(Simd::mask(n), p));
  }
};

struct BF16Loader {
  using T = uint16_t;
  static __m512 widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 load(const uint16_t* p) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_partial(const uint16_t* p, int64_t n) {
    return widen(_mm256_maskz_loadu_epi16(Simd::mask(n), p));
  }
};

// E4M3 -> fp32: the 7 magnitude bits shifted under fp32's exponent field give the value times
// 2^-120 (exponent bias 127 instead of 7; subnormals become fp32 subnormals with the same
// factor), which one exact multiply by 2^120 undoes.
struct Fp8Loader {
  using T = uint8_t;
  static constexpr bool kScaledRows = true;
  static __m512 widen(__m128i bytes) {
    const __m512i b = _mm512_cvtepu8_epi32(bytes);
    const __m512i magnitude = _mm512_slli_epi32(_mm512_and_si512(b, _mm512_set1_epi32(0x7f)), 20);
    const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(b, _mm512_set1_epi32(0x80)), 24);
    return _mm512_mul_ps(_mm512_castsi512_ps(_mm512_or_si512(magnitude, sign)),
                         _mm512_set1_ps(0x1p120f));
  }
  static __m512 load(const uint8_t* p) {
    return widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m512 load_partial(const uint8_t* p, int64_t n) {
    return widen(_mm_maskz_loadu_epi8(Simd::mask(n), p));
  }
};

// The blocked shape: 4 weight rows by 2 rows of x, 16 accumulators and 8 weight vectors in the
// 32 registers.
template <typename Loader>
using Kernel = FloatGemv<Simd, Loader, 4, 2>;

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

}  // namespace baton::cpu::avx512
