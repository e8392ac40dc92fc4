// The float-weight GEMV at the AVX-512 level: F16 widened with vcvtph2ps, BF16 by a 16-bit
// shift, both exact, so every product is an fp32 FMA of the stored weight.

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
    default:
      return Kernel<BF16Loader>::run(x, w, out, ctx.threads);
  }
}

}  // namespace baton::cpu::avx512
