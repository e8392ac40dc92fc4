#pragma once

// The portable SIMD level: one float per "vector". Kernels written over a Simd parameter (see
// simd_avx512.h for the interface) instantiate with this for the kGeneric ISA, and the compiler
// vectorises what it can for baseline x86-64.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cpu/cpu_dequantize.h"

namespace baton::cpu {

struct SimdGeneric {
  using V = float;
  static constexpr int kWidth = 1;

  static V zero() { return 0.0f; }
  static V set1(float x) { return x; }
  static V load(const float* p) { return *p; }
  static void store(float* p, V v) { *p = v; }
  static V load_partial(const float* p, int64_t) { return *p; }
  static void store_partial(float* p, V v, int64_t) { *p = v; }
  static V load_f16(const uint16_t* p) { return fp16_table()[*p]; }
  static V load_f16_partial(const uint16_t* p, int64_t) { return fp16_table()[*p]; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V max(V a, V b) { return std::max(a, b); }
  static V fmadd(V a, V b, V c) { return a * b + c; }
  static float reduce_add(V v) { return v; }
  static float reduce_max(V v) { return v; }
  static V exp(V v) { return std::exp(v); }

  static void f16_to_f32(const uint16_t* src, float* dst, int64_t n) {
    const float* table = fp16_table();
    for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]];
  }
};

}  // namespace baton::cpu
