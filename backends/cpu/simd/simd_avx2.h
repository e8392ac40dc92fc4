#pragma once

// AVX2 + FMA + F16C vectors of 8 floats, with the interface described in simd_avx512.h. Include
// only from sources built with the avx2 flags (baton_cpu_isa_sources).

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "backends/cpu/simd/simd_exp.h"

namespace baton::cpu {

struct SimdAvx2 {
  using V = __m256;
  static constexpr int kWidth = 8;

  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // Lanes below n are all-ones: a sliding window over a constant.
  static __m256i mask(int64_t n) {
    static const int32_t bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits + 8 - n));
  }
  static V load_partial(const float* p, int64_t n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store_partial(float* p, V v, int64_t n) { _mm256_maskstore_ps(p, mask(n), v); }
  static V load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // No masked 16-bit load below AVX-512: the tail is copied into a zeroed vector first.
  static V load_f16_partial(const uint16_t* p, int64_t n) {
    alignas(16) uint16_t halves[kWidth] = {};
    std::memcpy(halves, p, static_cast<size_t>(n) * sizeof(uint16_t));
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(halves)));
  }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static float reduce_add(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  static float reduce_max(V v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
  }

  static V exp(V x) {
    using namespace exp_constants;
    const V keep = _mm256_cmp_ps(x, set1(kMin), _CMP_GE_OQ);
    x = _mm256_min_ps(x, set1(kMax));
    const V n = _mm256_round_ps(_mm256_mul_ps(x, set1(kLog2e)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm256_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, set1(kLn2Lo), r);
    V p = set1(kP0);
    for (float c : {kP1, kP2, kP3, kP4, kP5}) p = _mm256_fmadd_ps(p, r, set1(c));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, set1(1.0f)));
    const __m256i scale =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(keep, _mm256_mul_ps(p, _mm256_castsi256_ps(scale)));
  }

  static void f16_to_f32(const uint16_t* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + kWidth <= n; i += kWidth) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
  }
};

}  // namespace baton::cpu
