#pragma once

// AVX-512 vectors of 16 floats. Include only from sources built with the avx512 flags
// (baton_cpu_isa_sources). Every Simd level offers the same static interface, so a kernel is
// written once as a template over it:
//   V, kWidth; zero, set1, load, store, load_partial/store_partial (the first n < kWidth lanes;
//   the rest read as 0), add, sub, mul, div, max, fmadd(a, b, c) = a * b + c, reduce_add,
//   reduce_max, exp, f16_to_f32, load_f16/load_f16_partial (IEEE halves widened to a vector).

#include <immintrin.h>

#include <cstdint>

#include "backends/cpu/simd/simd_exp.h"

// GCC 12 reports the undefined-vector idiom inside its own AVX-512 intrinsics as uninitialized
// (GCC bug 105593) wherever they are inlined, so the warning is off for the sources that
// include this header, which are only the avx512 kernel files.
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__  // clang has no such warning, and warns that it does not know the name
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace baton::cpu {

struct SimdAvx512 {
  using V = __m512;
  static constexpr int kWidth = 16;

  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static __mmask16 mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static V load_partial(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_partial(float* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static V load_f16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static V load_f16_partial(const uint16_t* p, int64_t n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask(n), p));
  }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static float reduce_add(V v) { return _mm512_reduce_add_ps(v); }
  static float reduce_max(V v) { return _mm512_reduce_max_ps(v); }

  static V exp(V x) {
    using namespace exp_constants;
    const __mmask16 underflow = _mm512_cmp_ps_mask(x, set1(kMin), _CMP_LT_OQ);
    x = _mm512_min_ps(x, set1(kMax));
    const V n = _mm512_roundscale_ps(_mm512_mul_ps(x, set1(kLog2e)), _MM_FROUND_TO_NEAREST_INT);
    V r = _mm512_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, set1(kLn2Lo), r);
    V p = set1(kP0);
    for (float c : {kP1, kP2, kP3, kP4, kP5}) p = _mm512_fmadd_ps(p, r, set1(c));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, set1(1.0f)));
    const __m512i scale =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mul_ps(static_cast<__mmask16>(~underflow), p, _mm512_castsi512_ps(scale));
  }

  static void f16_to_f32(const uint16_t* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + kWidth <= n; i += kWidth) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
    }
    if (i < n) {
      const __m256i h = _mm256_maskz_loadu_epi16(mask(n - i), src + i);
      _mm512_mask_storeu_ps(dst + i, mask(n - i), _mm512_cvtph_ps(h));
    }
  }
};

}  // namespace baton::cpu
