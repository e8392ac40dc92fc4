#pragma once

// The float-weight matmul kernel for few rows of x (decode), written once over a Simd level
// (backends/cpu/simd/simd_avx512.h) and one weight loader per dtype. Include only from a source
// built with that level's flags, with loaders defined in an unnamed namespace there so each
// level's instantiations stay its own.
//
// Weights are read in place (memory-mapped GGUF data) and converted exactly to fp32 in
// registers. Two shapes of the same loop:
//  - decode (n < kBlockedMinRows): bound by reading the weights. The hardware prefetcher keeps
//    the most reads in flight on one sequential stream per core, so each thread walks its weight
//    rows one after another, each weight vector serving up to 4 rows of x;
//  - more rows (prefill without a packed copy): bound by loads, so a register block of kWRows
//    weight rows by kXRows rows of x shares every load among several FMAs.
//
// Either way each output is summed over k in the same fixed order (two interleaved
// accumulators, then one reduce_add), so its value depends neither on n nor on the thread that
// computed it: 1 and N threads agree bit for bit.

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "backends/cpu/stealing_split.h"
#include "core/runtime/tensor.h"

namespace baton::cpu {

// Loader: `using T` (the stored element), `static Simd::V load(const T*)` and
// `static Simd::V load_partial(const T*, int64_t n)` (lanes from n on read as 0), both exact.
// A loader of rows that start with an f32 scale (FP8 weights) also has `kScaledRows = true`:
// its elements follow the scale, and each output is multiplied by its row's scale at the end.
template <typename Loader>
constexpr bool kScaledRows = requires {
  requires Loader::kScaledRows;
};
template <typename Simd, typename Loader, int kWRows, int kXRows>
struct FloatGemv {
  using V = typename Simd::V;
  using T = typename Loader::T;
  static constexpr int64_t kWidth = Simd::kWidth;
  static constexpr int64_t kStep = 2 * kWidth;  // elements per iteration, one per accumulator
  static constexpr int kStreamXRows = 4;        // rows of x per weight row when streaming
  static constexpr int64_t kBlockedMinRows = 4;
  // Weight rows per unit of parallel work: long sequential streams that stay in L2 while
  // blocks of x pass over them, yet enough units that a thread slowed by other load on the
  // host does not hold up the step.
  static constexpr int64_t kChunkRows = 64;
  // Software prefetch distance along a weight row; rows run on into the next row, which is the
  // next one read.
  static constexpr int64_t kPrefetchBytes = 1024;
  static constexpr int64_t kStepBytes = kStep * static_cast<int64_t>(sizeof(T));

  // out[r * m + j] = x[r] · w[j] for r < NX, j < nw (rows of w past nw repeat the last one).
  template <int NW, int NX>
  static void block(const T* const* w, int nw, const float* x, int64_t k, float* out, int64_t m) {
    V acc[NX][NW][2];
    for (auto& row : acc) {
      for (auto& a : row) a[0] = a[1] = Simd::zero();
    }
    int64_t i = 0;
    for (; i + kStep <= k; i += kStep) {
      V w0[NW], w1[NW];
      for (int j = 0; j < NW; ++j) {
        const auto* ahead = reinterpret_cast<const char*>(w[j] + i) + kPrefetchBytes;
        for (int64_t b = 0; b < kStepBytes; b += 64) __builtin_prefetch(ahead + b);
        w0[j] = Loader::load(w[j] + i);
        w1[j] = Loader::load(w[j] + i + kWidth);
      }
      for (int r = 0; r < NX; ++r) {
        const V x0 = Simd::load(x + r * k + i), x1 = Simd::load(x + r * k + i + kWidth);
        for (int j = 0; j < NW; ++j) {
          acc[r][j][0] = Simd::fmadd(w0[j], x0, acc[r][j][0]);
          acc[r][j][1] = Simd::fmadd(w1[j], x1, acc[r][j][1]);
        }
      }
    }
    for (; i < k; i += kWidth) {
      const int64_t left = k - i;
      V wv[NW];
      for (int j = 0; j < NW; ++j) {
        wv[j] = left >= kWidth ? Loader::load(w[j] + i) : Loader::load_partial(w[j] + i, left);
      }
      for (int r = 0; r < NX; ++r) {
        const float* xr = x + r * k + i;
        const V xv = left >= kWidth ? Simd::load(xr) : Simd::load_partial(xr, left);
        for (int j = 0; j < NW; ++j) acc[r][j][0] = Simd::fmadd(wv[j], xv, acc[r][j][0]);
      }
    }
    for (int r = 0; r < NX; ++r) {
      for (int j = 0; j < nw; ++j) {
        out[r * m + j] = Simd::reduce_add(Simd::add(acc[r][j][0], acc[r][j][1]));
      }
    }
  }

  using BlockFn = void (*)(const T* const*, int, const float*, int64_t, float*, int64_t);
  // table[nx - 1] handles nx rows of x.
  template <int NW, int MaxX>
  static constexpr auto kBlocks = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<BlockFn, MaxX>{&block<NW, static_cast<int>(I) + 1>...};
  }
  (std::make_index_sequence<MaxX>{});

  // The elements of row j of w, whose rows are `stride` bytes apart from `base`.
  static const T* row(const std::byte* base, size_t stride, int64_t j) {
    const std::byte* p = base + static_cast<size_t>(j) * stride;
    return reinterpret_cast<const T*>(kScaledRows<Loader> ? p + sizeof(float) : p);
  }
  static float scale_of(const std::byte* base, size_t stride, int64_t j) {
    float scale;
    std::memcpy(&scale, base + static_cast<size_t>(j) * stride, sizeof(scale));
    return scale;
  }

  // Rows [first, last) of w against every row of x, NW weight rows by up to MaxX rows of x at
  // a time.
  template <int NW, int MaxX>
  static void chunk(const std::byte* w, size_t stride, int64_t first, int64_t last, const float* x,
                    int64_t n, int64_t k, float* out, int64_t m) {
    for (int64_t r0 = 0; r0 < n; r0 += MaxX) {
      const int nx = static_cast<int>(std::min<int64_t>(MaxX, n - r0));
      const BlockFn fn = kBlocks<NW, MaxX>[nx - 1];
      for (int64_t j0 = first; j0 < last; j0 += NW) {
        const int nw = static_cast<int>(std::min<int64_t>(NW, last - j0));
        std::array<const T*, NW> rows;
        for (int j = 0; j < NW; ++j) rows[j] = row(w, stride, j0 + std::min(j, nw - 1));
        fn(rows.data(), nw, x + r0 * k, k, out + r0 * m + j0, m);
        if constexpr (kScaledRows<Loader>) {
          for (int j = 0; j < nw; ++j) {
            const float scale = scale_of(w, stride, j0 + j);
            for (int r = 0; r < nx; ++r) out[(r0 + r) * m + j0 + j] *= scale;
          }
        }
      }
    }
  }

  static void run(const Tensor& x, const Tensor& w, const Tensor& out, int threads) {
    const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
    const std::byte* wp = w.materialize();
    const size_t stride = w.row_bytes();
    const float* xp = x.data<const float>();
    float* op = out.data<float>();
    const bool stream = n < kBlockedMinRows;
    StealingSplit split((m + kChunkRows - 1) / kChunkRows, threads);
#pragma omp parallel num_threads(threads)
    {
      const int thread = omp_get_thread_num();
      for (int64_t c; (c = split.next(thread)) >= 0;) {
        const int64_t first = c * kChunkRows, last = std::min(m, first + kChunkRows);
        if (stream) {
          chunk<1, kStreamXRows>(wp, stride, first, last, xp, n, k, op, m);
        } else {
          chunk<kWRows, kXRows>(wp, stride, first, last, xp, n, k, op, m);
        }
      }
    }
  }
};

}  // namespace baton::cpu
