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

  // LoRA's shrink for up to kLoraTileTokens tokens of one adapter: s[t * r + j] = a[j * k ...] ·
  // x[t]. Every (token, row) pair sums in two accumulators, even and odd vectors, folded at the
  // end: the same order whatever the tile, so a token's result does not depend on the tokens
  // beside it. A tile of several tokens widens each load of a once for all of them; a lone token
  // takes four rows at a time instead, so that eight multiply-adds are still in flight.
  template <class T>
  static void lora_shrink(const T* a, int64_t r, int64_t k, const float* const* x, int tokens,
                          float* s) {
    switch (tokens) {
      case 1:
        return shrink_rows<1, 4>(a, r, k, x, s);
      case 2:
        return shrink_rows<2, 2>(a, r, k, x, s);
      case 3:
        return shrink_rows<3, 1>(a, r, k, x, s);
      default:
        return shrink_rows<4, 1>(a, r, k, x, s);
    }
  }
  template <int kTokens, int kRows, class T>
  static void shrink_rows(const T* a, int64_t r, int64_t k, const float* const* x, float* s) {
    int64_t j = 0;
    for (; j + kRows <= r; j += kRows) shrink_block<kTokens, kRows>(a, r, k, x, s, j);
    for (; j < r; ++j) shrink_block<kTokens, 1>(a, r, k, x, s, j);
  }
  template <int kTokens, int kRows, class T>
  static void shrink_block(const T* a, int64_t r, int64_t k, const float* const* x, float* s,
                           int64_t j0) {
    V even[kTokens][kRows], odd[kTokens][kRows];
    for (int t = 0; t < kTokens; ++t) {
      for (int j = 0; j < kRows; ++j) even[t][j] = odd[t][j] = S::zero();
    }
    const T* rows = a + j0 * k;
    int64_t i = 0;
    for (; i + 2 * kW <= k; i += 2 * kW) {
      for (int j = 0; j < kRows; ++j) {
        const V a0 = load(rows + j * k + i, kW), a1 = load(rows + j * k + i + kW, kW);
        for (int t = 0; t < kTokens; ++t) {
          even[t][j] = S::fmadd(a0, S::load(x[t] + i), even[t][j]);
          odd[t][j] = S::fmadd(a1, S::load(x[t] + i + kW), odd[t][j]);
        }
      }
    }
    for_vectors(k - i, [&](int64_t v, int64_t w) {
      for (int j = 0; j < kRows; ++j) {
        const V av = load(rows + j * k + i + v, w);
        for (int t = 0; t < kTokens; ++t) {
          even[t][j] = S::fmadd(av, load(x[t] + i + v, w), even[t][j]);
        }
      }
    });
    for (int t = 0; t < kTokens; ++t) {
      for (int j = 0; j < kRows; ++j)
        s[t * r + j0 + j] = S::reduce_add(S::add(even[t][j], odd[t][j]));
    }
  }

  // LoRA's expansion for the same tile: o[t] = y[t] + sum over j < r of s[t * r + j] * bt[j * m
  // ...], each output summed in the order of j whatever the tile. Several tokens share each load
  // of bt; a lone token takes four vectors of its output at a time, so that four chains of
  // multiply-adds are in flight rather than one.
  template <class T>
  static void lora_expand(const T* bt, int64_t r, int64_t m, const float* s, const float* const* y,
                          float* const* o, int tokens) {
    switch (tokens) {
      case 1:
        return expand_tile<1, 4>(bt, r, m, s, y, o);
      case 2:
        return expand_tile<2, 2>(bt, r, m, s, y, o);
      case 3:
        return expand_tile<3, 1>(bt, r, m, s, y, o);
      default:
        return expand_tile<4, 1>(bt, r, m, s, y, o);
    }
  }
  template <int kTokens, int kVectors, class T>
  static void expand_tile(const T* bt, int64_t r, int64_t m, const float* s, const float* const* y,
                          float* const* o) {
    int64_t i = 0;
    for (; i + kVectors * kW <= m; i += kVectors * kW) {
      V acc[kTokens][kVectors];
      for (int t = 0; t < kTokens; ++t) {
        for (int v = 0; v < kVectors; ++v) acc[t][v] = S::load(y[t] + i + v * kW);
      }
      for (int64_t j = 0; j < r; ++j) {
        for (int v = 0; v < kVectors; ++v) {
          const V b = load(bt + j * m + i + v * kW, kW);
          for (int t = 0; t < kTokens; ++t) {
            acc[t][v] = S::fmadd(S::set1(s[t * r + j]), b, acc[t][v]);
          }
        }
      }
      for (int t = 0; t < kTokens; ++t) {
        for (int v = 0; v < kVectors; ++v) S::store(o[t] + i + v * kW, acc[t][v]);
      }
    }
    for_vectors(m - i, [&](int64_t v, int64_t lanes) {
      V acc[kTokens];
      for (int t = 0; t < kTokens; ++t) acc[t] = load(y[t] + i + v, lanes);
      for (int64_t j = 0; j < r; ++j) {
        const V b = load(bt + j * m + i + v, lanes);
        for (int t = 0; t < kTokens; ++t) acc[t] = S::fmadd(S::set1(s[t * r + j]), b, acc[t]);
      }
      for (int t = 0; t < kTokens; ++t) store(o[t] + i + v, acc[t], lanes);
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
            &lora_shrink<float>,
            &lora_expand<float>,
            &lora_shrink<uint16_t>,
            &lora_expand<uint16_t>};
  }
};

}  // namespace baton::cpu
