#pragma once

// The row kernels of elementwise.h written once over a Simd level (backends/cpu/simd/); include
// only from elementwise_{generic,avx2,avx512}.cpp. Tails shorter than a vector use masked loads
// and stores, so every element goes through the same arithmetic.

#include <algorithm>

#include "backends/cpu/elementwise/elementwise.h"
#include "backends/cpu/simd/simd_tanh.h"

namespace baton::cpu {

template <class S>
struct RowKernelsFor {
  using V = typename S::V;
  static constexpr int kW = S::kWidth;

  // Calls f(offset, lanes) over [0, n) in vectors, the last one possibly partial.
  template <class F>
  static void for_vectors(int64_t n, F f) {
    int64_t i = 0;
    for (; i + kW <= n; i += kW) f(i, int64_t{kW});
    if (i < n) f(i, n - i);
  }
  static V load(const float* p, int64_t lanes) {
    return lanes == kW ? S::load(p) : S::load_partial(p, lanes);
  }
  static V load(const uint16_t* p, int64_t lanes) {
    return lanes == kW ? S::load_f16(p) : S::load_f16_partial(p, lanes);
  }
  static void store(float* p, V v, int64_t lanes) {
    if (lanes == kW) {
      S::store(p, v);
    } else {
      S::store_partial(p, v, lanes);
    }
  }

  static void add(const float* a, const float* b, float* o, int64_t n) {
    for_vectors(
        n, [&](int64_t i, int64_t w) { store(o + i, S::add(load(a + i, w), load(b + i, w)), w); });
  }

  static float add_sum_squares(const float* a, const float* b, float* o, int64_t n) {
    V acc = S::zero();
    for_vectors(n, [&](int64_t i, int64_t w) {
      const V x = S::add(load(a + i, w), load(b + i, w));
      store(o + i, x, w);
      acc = S::fmadd(x, x, acc);
    });
    return S::reduce_add(acc);
  }

  static float sum_squares(const float* x, int64_t n) {
    V acc = S::zero();
    for_vectors(n, [&](int64_t i, int64_t w) {
      const V v = load(x + i, w);
      acc = S::fmadd(v, v, acc);
    });
    return S::reduce_add(acc);
  }

  static void scale_mul(const float* x, float s, const float* w, float* o, int64_t n) {
    const V sv = S::set1(s);
    for_vectors(n, [&](int64_t i, int64_t lanes) {
      store(o + i, S::mul(S::mul(load(x + i, lanes), sv), load(w + i, lanes)), lanes);
    });
  }

  static void swiglu(const float* g, const float* u, float* o, int64_t n) {
    const V one = S::set1(1.0f);
    for_vectors(n, [&](int64_t i, int64_t w) {
      const V gv = load(g + i, w);
      const V sigmoid = S::div(one, S::add(one, S::exp(S::sub(S::zero(), gv))));
      store(o + i, S::mul(S::mul(gv, sigmoid), load(u + i, w)), w);
    });
  }

  // GELU in its tanh form, 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))), times u.
  static void geglu(const float* g, const float* u, float* o, int64_t n) {
    const V half = S::set1(0.5f), one = S::set1(1.0f);
    const V sqrt_2_over_pi = S::set1(0.7978845608f), cubic = S::set1(0.044715f);
    for_vectors(n, [&](int64_t i, int64_t w) {
      const V x = load(g + i, w);
      const V inner = S::mul(sqrt_2_over_pi, S::fmadd(S::mul(cubic, x), S::mul(x, x), x));
      const V gelu = S::mul(S::mul(half, x), S::add(one, simd_tanh<S>(inner)));
      store(o + i, S::mul(gelu, load(u + i, w)), w);
    });
  }

  static void scale(const float* x, float s, float* o, int64_t n) {
    const V sv = S::set1(s);
    for_vectors(n, [&](int64_t i, int64_t w) { store(o + i, S::mul(load(x + i, w), sv), w); });
  }

  static void softcap(const float* x, float cap, float* o, int64_t n) {
    const V c = S::set1(cap), inv = S::set1(1.0f / cap);
    for_vectors(n, [&](int64_t i, int64_t w) {
      store(o + i, S::mul(c, simd_tanh<S>(S::mul(load(x + i, w), inv))), w);
    });
  }

  static void softmax(const float* x, float* o, int64_t n) {
    // Masked lanes load as 0, which must not take part in the max or the sum.
    V mv = S::set1(x[0]);
    int64_t full = n / kW * kW;
    for (int64_t i = 0; i < full; i += kW) mv = S::max(mv, S::load(x + i));
    float max_value = S::reduce_max(mv);
    for (int64_t i = full; i < n; ++i) max_value = std::max(max_value, x[i]);
    const V mx = S::set1(max_value);
    // Vocabulary-wide rows (32k to 256k) are summed in fp32 runs of kSumRun vectors whose sums
    // add up in double: one fp32 accumulator per lane drifted to 1.5e-5 relative over 32000
    // scalar (generic) lanes, against the reference's 1e-5.
    constexpr int64_t kSumRun = 64;
    double total = 0.0;
    V sum = S::zero();
    for (int64_t i = 0, run = 0; i < full; i += kW) {
      const V e = S::exp(S::sub(S::load(x + i), mx));
      S::store(o + i, e);
      sum = S::add(sum, e);
      if (++run == kSumRun) {
        total += S::reduce_add(sum);
        sum = S::zero();
        run = 0;
      }
    }
    total += S::reduce_add(sum);
    if (full < n) {
      S::store_partial(o + full, S::exp(S::sub(S::load_partial(x + full, n - full), mx)), n - full);
      for (int64_t i = full; i < n; ++i) total += o[i];
    }
    const V inv = S::set1(static_cast<float>(1.0 / total));
    for_vectors(n, [&](int64_t i, int64_t w) { store(o + i, S::mul(load(o + i, w), inv), w); });
  }

  // Two accumulators keep two fused multiply-adds in flight. T is float or uint16_t (f16).
  template <class T>
  static float dot(const T* a, const float* x, int64_t n) {
    V even = S::zero(), odd = S::zero();
    int64_t i = 0;
    for (; i + 2 * kW <= n; i += 2 * kW) {
      even = S::fmadd(load(a + i, kW), S::load(x + i), even);
      odd = S::fmadd(load(a + i + kW, kW), S::load(x + i + kW), odd);
    }
    for_vectors(n - i, [&](int64_t j, int64_t w) {
      even = S::fmadd(load(a + i + j, w), load(x + i + j, w), even);
    });
    return S::reduce_add(S::add(even, odd));
  }

  template <class T>
  static void add_weighted_rows(const float* y, const float* w, const T* rows, int64_t count,
                                int64_t stride, float* o, int64_t n) {
    for_vectors(n, [&](int64_t i, int64_t lanes) {
      V acc = load(y + i, lanes);
      for (int64_t j = 0; j < count; ++j) {
        acc = S::fmadd(S::set1(w[j]), load(rows + j * stride + i, lanes), acc);
      }
      store(o + i, acc, lanes);
    });
  }

  static constexpr RowKernels table() {
    return {&add,
            &add_sum_squares,
            &sum_squares,
            &scale_mul,
            &swiglu,
            &geglu,
            &scale,
            &softcap,
            &softmax,
            &dot<float>,
            &add_weighted_rows<float>,
            &dot<uint16_t>,
            &add_weighted_rows<uint16_t>};
  }
};

}  // namespace baton::cpu
