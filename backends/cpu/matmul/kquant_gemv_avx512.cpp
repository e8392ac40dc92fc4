// AVX-512 VNNI: the decode GEMV over K-quant weights (kquant.h).
//
// Decode is bound by reading the weights, so each super-block is loaded once and used for
// every row of x. Per chunk of 64 elements one vpdpbusd gives 16 int32 lanes of 4 elements,
// lanes 4g .. 4g + 3 belonging to group 4c + g; they are scaled lane-wise by s * d_x, and the
// offsets enter once per super-block as 16 lanes of o times x's group sums. The horizontal sum
// happens once per output.

#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "backends/cpu/matmul/kquant.h"
#include "backends/cpu/matmul/kquant_decode_avx512.h"

namespace baton::cpu::avx512 {
namespace {

constexpr int kMaxX = 4;  // x rows per tile
// Software prefetch this far ahead in each weight row, as in the Q8_0 / Q4_0 GEMV.
constexpr int kPrefetchBytes = 1024;

// Lane l of chunk c takes group 4c + l / 4's scale and block 2c + l / 8's d_x.
template <int kC>
__m512i group_lanes() {
  return _mm512_set_epi32(4 * kC + 3, 4 * kC + 3, 4 * kC + 3, 4 * kC + 3, 4 * kC + 2, 4 * kC + 2,
                          4 * kC + 2, 4 * kC + 2, 4 * kC + 1, 4 * kC + 1, 4 * kC + 1, 4 * kC + 1,
                          4 * kC, 4 * kC, 4 * kC, 4 * kC);
}
template <int kC>
__m512i block_lanes() {
  return _mm512_set_epi32(2 * kC + 1, 2 * kC + 1, 2 * kC + 1, 2 * kC + 1, 2 * kC + 1, 2 * kC + 1,
                          2 * kC + 1, 2 * kC + 1, 2 * kC, 2 * kC, 2 * kC, 2 * kC, 2 * kC, 2 * kC,
                          2 * kC, 2 * kC);
}

// Accumulators per output: a tile of one or two outputs would wait on one fma chain (4 cycles
// a chunk), so chunks alternate between two; larger tiles have chains enough.
template <int kX, int kWr>
constexpr int kAccumulators = (kX * kWr <= 2) ? 2 : 1;

// Adds chunk kC of super-block b of the tile's weight rows times the x rows to acc.
template <typename Dec, int kC, int kX, int kWr, int kAcc>
[[gnu::always_inline]] inline void gemv_chunk(const typename Dec::Block* const (&blocks)[kWr],
                                              const __m512 (&s)[kWr], const int8_t* const (&xq)[kX],
                                              const __m512 (&dx)[kX],
                                              __m512 (&acc)[kX][kWr][kAcc]) {
  __m512i u[kWr];
  __m512 lane_s[kWr];
#pragma GCC unroll 4
  for (int j = 0; j < kWr; ++j) {
    u[j] = Dec::template codes<kC>(*blocks[j]);
    lane_s[j] = _mm512_permutexvar_ps(group_lanes<kC>(), s[j]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < kX; ++i) {
    const __m512i x = _mm512_loadu_si512(xq[i] + 64 * kC);
    const __m512 lane_dx = _mm512_permutexvar_ps(block_lanes<kC>(), dx[i]);
#pragma GCC unroll 4
    for (int j = 0; j < kWr; ++j) {
      const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[j], x);
      __m512& a = acc[i][j][kC % kAcc];
      a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(lane_s[j], lane_dx), a);
    }
  }
}

// One tile: kX rows of x (from x0) against kWr weight rows (from j0), over the whole row.
template <typename Dec, int kX, int kWr>
void gemv_tile(const std::byte* w, size_t w_stride, int64_t j0, const KQuantRows& x, int64_t x0,
               float* out, int64_t m) {
  using Block = typename Dec::Block;
  constexpr int kAcc = kAccumulators<kX, kWr>;
  const int64_t n_super = x.q.k / kQK_K;
  __m512 acc[kX][kWr][kAcc];
  for (auto& row : acc) {
    for (auto& chains : row) {
      for (__m512& a : chains) a = _mm512_setzero_ps();
    }
  }
  const Block* rows[kWr];
  for (int j = 0; j < kWr; ++j) {
    rows[j] = reinterpret_cast<const Block*>(w + static_cast<size_t>(j0 + j) * w_stride);
  }
  for (int64_t b = 0; b < n_super; ++b) {
    const Block* blocks[kWr];
    __m512 s[kWr], o[kWr];
#pragma GCC unroll 4
    for (int j = 0; j < kWr; ++j) {
      blocks[j] = rows[j] + b;
      const auto* ahead = reinterpret_cast<const char*>(blocks[j]) + kPrefetchBytes;
      for (size_t line = 0; line < sizeof(Block); line += 64) {
        _mm_prefetch(ahead + line, _MM_HINT_T0);
      }
      Dec::scales(*blocks[j], s[j], o[j]);
    }
    const int8_t* xq[kX];
    __m512 dx[kX];
#pragma GCC unroll 4
    for (int i = 0; i < kX; ++i) {
      const int64_t r = x0 + i;
      xq[i] = x.q.qs_row(r) + b * kQK_K;
      // The super-block's 8 d_x in lanes 0..7.
      dx[i] = _mm512_castps256_ps512(_mm256_loadu_ps(x.q.d_row(r) + b * (kQK_K / kQuantBlock)));
      const __m512 sums = _mm512_loadu_ps(x.sums_row(r) + b * kGroupsPerSuperBlock);
#pragma GCC unroll 4
      for (int j = 0; j < kWr; ++j) acc[i][j][0] = _mm512_fmadd_ps(o[j], sums, acc[i][j][0]);
    }
    [&]<int... kC>(std::integer_sequence<int, kC...>) {
      (gemv_chunk<Dec, kC, kX, kWr, kAcc>(blocks, s, xq, dx, acc), ...);
    }
    (std::make_integer_sequence<int, kQK_K / 64>{});
  }
  for (int i = 0; i < kX; ++i) {
    for (int j = 0; j < kWr; ++j) {
      __m512 sum = acc[i][j][0];
      for (int a = 1; a < kAcc; ++a) sum = _mm512_add_ps(sum, acc[i][j][a]);
      out[(x0 + i) * m + j0 + j] = _mm512_reduce_add_ps(sum);
    }
  }
}

template <typename Dec, int kWr>
void gemv_rows(const std::byte* w, size_t w_stride, int64_t j0, const KQuantRows& x, float* out,
               int64_t m) {
  for (int64_t x0 = 0; x0 < x.q.n; x0 += kMaxX) {
    switch (std::min<int64_t>(kMaxX, x.q.n - x0)) {
      case 1:
        gemv_tile<Dec, 1, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 2:
        gemv_tile<Dec, 2, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 3:
        gemv_tile<Dec, 3, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      default:
        gemv_tile<Dec, 4, kWr>(w, w_stride, j0, x, x0, out, m);
    }
  }
}

}  // namespace

// One weight row at a time for a single row of x (streams best, as for Q8_0 / Q4_0); with
// several rows of x, 4 weight rows share each x row's loads.
void kquant_gemv(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                 const KQuantRows& x, float* out, int64_t m) {
  with_kquant_decoder(dtype, [&](auto decoder) {
    using Dec = decltype(decoder);
    int64_t j = first;
    if (x.q.n > 1) {
      for (; j + 4 <= last; j += 4) gemv_rows<Dec, 4>(w, w_stride, j, x, out, m);
    }
    for (; j < last; ++j) gemv_rows<Dec, 1>(w, w_stride, j, x, out, m);
  });
}

}  // namespace baton::cpu::avx512
