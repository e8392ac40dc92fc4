// AVX-512 VNNI: the prefill GEMM over K-quant weights (kquant.h).
//
// As the Q8_0 / Q4_0 GEMM (quantized_gemm_avx512.cpp): a panel of kKQuantPanel weight rows is
// unpacked to a transient, thread-local buffer (the weights themselves stay in place): per run
// of kRun elements sharing one scale and offset (the decoder's kScaleRun: 32 for Q4_K / Q5_K,
// else 16), kRun / 4 steps of 4 unsigned codes per column, each step as 32 columns x 4 bytes in
// two zmm, then the run's scales and offsets for the 32 columns. One vpdpbusd multiplies 16
// weight rows by 4 broadcast bytes of one x row, lanes are output columns, and a tile of kR x
// rows x 32 columns keeps its int32 run dots and fp32 sums in registers.

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/matmul/kquant.h"
#include "backends/cpu/matmul/kquant_decode_avx512.h"
#include "backends/cpu/matmul/tile_avx512.h"

namespace baton::cpu::avx512 {
namespace {

constexpr int kR = 6;  // x rows per tile: 2 * kR int32 and 2 * kR fp32 accumulators fit in zmm
static_assert(kKQuantPanel == 32, "the tile holds two zmm of 16 columns");

// Columns 0..15 and 16..31 of the panel.
struct CodePair {
  __m512i lo, hi;
};
struct FloatPair {
  __m512 lo, hi;
};
struct Panel {
  std::vector<CodePair> u;   // per run, kRun / 4 steps of 4 codes per column
  std::vector<FloatPair> s;  // per run, the columns' scales
  std::vector<FloatPair> o;  // per run, the columns' offsets

  void reserve(int64_t runs, int steps) {
    if (u.size() < static_cast<size_t>(runs * steps)) u.resize(runs * steps);
    if (s.size() < static_cast<size_t>(runs)) {
      s.resize(runs);
      o.resize(runs);
    }
  }
};

// Unpacks weight rows [0, rows) of the panel; missing rows read as zero codes, scales and
// offsets.
template <typename Dec>
void unpack_panel(const std::byte* w, size_t w_stride, int rows, int64_t n_super, Panel& panel) {
  using Block = typename Dec::Block;
  constexpr int kRun = Dec::kScaleRun, kSteps = kRun / 4, kRuns = kQK_K / kRun;
  for (int64_t b = 0; b < n_super; ++b) {
    alignas(64) uint8_t codes[kKQuantPanel][kQK_K];
    alignas(64) float scales[kRuns][kKQuantPanel];
    alignas(64) float offsets[kRuns][kKQuantPanel];
    for (int j = 0; j < kKQuantPanel; ++j) {
      alignas(64) float s[kGroupsPerSuperBlock] = {}, o[kGroupsPerSuperBlock] = {};
      if (j < rows) {
        const Block& block =
            reinterpret_cast<const Block*>(w + static_cast<size_t>(j) * w_stride)[b];
        __m512 sv, ov;
        Dec::scales(block, sv, ov);
        _mm512_store_ps(s, sv);
        _mm512_store_ps(o, ov);
        auto* dst = reinterpret_cast<__m512i*>(codes[j]);
        _mm512_store_si512(dst, Dec::template codes<0>(block));
        _mm512_store_si512(dst + 1, Dec::template codes<1>(block));
        _mm512_store_si512(dst + 2, Dec::template codes<2>(block));
        _mm512_store_si512(dst + 3, Dec::template codes<3>(block));
      } else {
        std::memset(codes[j], 0, sizeof(codes[j]));
      }
      for (int g = 0; g < kRuns; ++g) {
        scales[g][j] = s[g * kRun / kGroup];
        offsets[g][j] = o[g * kRun / kGroup];
      }
    }
    for (int g = 0; g < kRuns; ++g) {
      const int64_t run = b * kRuns + g;
      auto* dst = reinterpret_cast<uint32_t*>(panel.u.data() + run * kSteps);
      for (int t = 0; t < kSteps; ++t) {
        for (int j = 0; j < kKQuantPanel; ++j) {
          std::memcpy(dst + t * kKQuantPanel + j, codes[j] + g * kRun + 4 * t, 4);
        }
      }
      panel.s[run] = {_mm512_load_ps(scales[g]), _mm512_load_ps(scales[g] + 16)};
      panel.o[run] = {_mm512_load_ps(offsets[g]), _mm512_load_ps(offsets[g] + 16)};
    }
  }
}

// out[(r0 + r) * m + j0 + c] for r < kRows, c < cols.
template <int kRun, int kRows>
void gemm_tile(const KQuantRows& x, int64_t r0, const Panel& panel, float* out, int64_t m,
               int64_t j0, int cols) {
  constexpr int kSteps = kRun / 4;
  const int64_t runs = x.q.k / kRun, k = x.q.k, blocks = x.q.blocks, groups = x.groups;
  const int8_t* xq = x.q.qs_row(r0);
  const float* xd = x.q.d_row(r0);
  const float* xs = x.sums_row(r0);
  __m512 acc[kRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();

  for (int64_t g = 0; g < runs; ++g) {
    __m512i dot[kRows][2];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) dot[r][0] = dot[r][1] = _mm512_setzero_si512();
    const CodePair* u = panel.u.data() + g * kSteps;
#pragma GCC unroll 8
    for (int t = 0; t < kSteps; ++t) {
      const __m512i w0 = u[t].lo, w1 = u[t].hi;
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        int32_t four;
        std::memcpy(&four, xq + r * k + g * kRun + 4 * t, sizeof(four));
        const __m512i xv = _mm512_set1_epi32(four);
        dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], w0, xv);
        dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], w1, xv);
      }
    }
    const FloatPair s = panel.s[g], o = panel.o[g];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 dx = _mm512_set1_ps(xd[r * blocks + g * kRun / kQuantBlock]);
      // x's sum over the run: one or two of its groups of 16.
      const float* run_sums = xs + r * groups + g * kRun / kGroup;
      const __m512 sums = _mm512_set1_ps(kRun == kGroup ? run_sums[0] : run_sums[0] + run_sums[1]);
      acc[r][0] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][0]), _mm512_mul_ps(s.lo, dx), acc[r][0]);
      acc[r][1] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][1]), _mm512_mul_ps(s.hi, dx), acc[r][1]);
      acc[r][0] = _mm512_fmadd_ps(o.lo, sums, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(o.hi, sums, acc[r][1]);
    }
  }
  store_tile<kRows>(acc, out, m, r0, j0, cols);
}

template <int kRun, int kRows>
void gemm_tail(int rows, const KQuantRows& x, int64_t r0, const Panel& panel, float* out, int64_t m,
               int64_t j0, int cols) {
  if constexpr (kRows > 0) {
    if (rows == kRows) return gemm_tile<kRun, kRows>(x, r0, panel, out, m, j0, cols);
    gemm_tail<kRun, kRows - 1>(rows, x, r0, panel, out, m, j0, cols);
  }
}

}  // namespace

void kquant_gemm(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                 const KQuantRows& x, float* out, int64_t m) {
  thread_local Panel panel;
  with_kquant_decoder(dtype, [&](auto decoder) {
    using Dec = decltype(decoder);
    constexpr int kRun = Dec::kScaleRun;
    panel.reserve(x.q.k / kRun, kRun / 4);
    for (int64_t j0 = first; j0 < last; j0 += kKQuantPanel) {
      const int cols = static_cast<int>(std::min<int64_t>(kKQuantPanel, last - j0));
      unpack_panel<Dec>(w + static_cast<size_t>(j0) * w_stride, w_stride, cols, x.q.k / kQK_K,
                        panel);
      int64_t r0 = 0;
      for (; r0 + kR <= x.q.n; r0 += kR) gemm_tile<kRun, kR>(x, r0, panel, out, m, j0, cols);
      if (r0 < x.q.n) {
        gemm_tail<kRun, kR - 1>(static_cast<int>(x.q.n - r0), x, r0, panel, out, m, j0, cols);
      }
    }
  });
}

}  // namespace baton::cpu::avx512
