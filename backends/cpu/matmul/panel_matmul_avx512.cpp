// AVX-512 VNNI matmul over Q4_0 / Q8_0 weights repacked into panels of 32 rows
// (matmul/panel_weights.h), for any number of rows of x.
//
// A tile is up to kR rows of x by one panel: per block, every zmm of weight quants is unpacked
// once and feeds each x row's vpdpbusd, with x's 4 bytes broadcast; lanes are output columns, so
// the int32 block dots are scaled and summed in fp32 without horizontal sums. An output's value
// is computed by the same instructions whatever the tile's row count, so a row of x gets the
// same result alone or in a batch (greedy decoding does not depend on batching).

#include <algorithm>
#include <cstring>

#include "backends/cpu/matmul/panel_weights.h"
#include "backends/cpu/matmul/quantized.h"
#include "backends/cpu/matmul/tile_avx512.h"

namespace baton::cpu::avx512 {
namespace {

constexpr int kR = 6;  // x rows per tile: 2 * kR int32 and 2 * kR fp32 accumulators in zmm
// Software prefetch this many panel blocks ahead: decode streams one run of memory per thread.
constexpr int kPrefetchBlocks = 4;

inline __m512i broadcast_four(const int8_t* p) {
  int32_t four;
  std::memcpy(&four, p, sizeof(four));
  return _mm512_set1_epi32(four);
}

// kNibbles: Q4_0's panels; otherwise Q8_0's, one code per byte.
template <bool kNibbles, int kRows>
void panel_tile(const std::byte* panel, const QuantizedRows& x, int64_t r0, float* out, int64_t m,
                int64_t j0, int cols) {
  constexpr size_t kBlockBytes = panel_block_bytes(kNibbles ? DType::kQ4_0 : DType::kQ8_0);
  const int64_t nb = x.blocks;
  __m512 acc[kRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();

  for (int64_t b = 0; b < nb; ++b) {
    const std::byte* block = panel + b * kBlockBytes;
    // The first tile of a panel reads it from memory; later tiles find it in cache.
    if (r0 == 0) {
      const char* ahead = reinterpret_cast<const char*>(block + kPrefetchBlocks * kBlockBytes);
      for (size_t line = 0; line < kBlockBytes; line += 64) _mm_prefetch(ahead + line, _MM_HINT_T0);
    }
    const auto* quants = reinterpret_cast<const __m512i*>(block + 64);
    __m512i dot[kRows][2];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      dot[r][0] = dot[r][1] = _mm512_set1_epi32(x.corr_row(r0 + r)[b]);
    }
    if constexpr (kNibbles) {
#pragma GCC unroll 4
      for (int t = 0; t < 4; ++t) {
        const __m512i z0 = _mm512_load_si512(quants + 2 * t);
        const __m512i z1 = _mm512_load_si512(quants + 2 * t + 1);
        const __m512i nibble = _mm512_set1_epi8(0x0f);
        const __m512i lo0 = _mm512_and_si512(z0, nibble), lo1 = _mm512_and_si512(z1, nibble);
        const __m512i hi0 = _mm512_and_si512(_mm512_srli_epi16(z0, 4), nibble);
        const __m512i hi1 = _mm512_and_si512(_mm512_srli_epi16(z1, 4), nibble);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
          const int8_t* xq = x.qs_row(r0 + r) + b * kQuantBlock + 4 * t;
          const __m512i first = broadcast_four(xq), second = broadcast_four(xq + 16);
          dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], lo0, first);
          dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], lo1, first);
          dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], hi0, second);
          dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], hi1, second);
        }
      }
    } else {
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g) {
        const __m512i w0 = _mm512_load_si512(quants + 2 * g);
        const __m512i w1 = _mm512_load_si512(quants + 2 * g + 1);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
          const __m512i four = broadcast_four(x.qs_row(r0 + r) + b * kQuantBlock + 4 * g);
          dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], w0, four);
          dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], w1, four);
        }
      }
    }
    const __m512i scales = _mm512_load_si512(block);
    const __m512 d0 = _mm512_cvtph_ps(_mm512_castsi512_si256(scales));
    const __m512 d1 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(scales, 1));
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 dx = _mm512_set1_ps(x.d_row(r0 + r)[b]);
      acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][0]), _mm512_mul_ps(d0, dx), acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][1]), _mm512_mul_ps(d1, dx), acc[r][1]);
    }
  }
  store_tile<kRows>(acc, out, m, r0, j0, cols);
}

template <bool kNibbles, int kRows>
void panel_tail(int rows, const std::byte* panel, const QuantizedRows& x, int64_t r0, float* out,
                int64_t m, int64_t j0, int cols) {
  if constexpr (kRows > 0) {
    if (rows == kRows) return panel_tile<kNibbles, kRows>(panel, x, r0, out, m, j0, cols);
    panel_tail<kNibbles, kRows - 1>(rows, panel, x, r0, out, m, j0, cols);
  }
}

template <bool kNibbles>
void panel_rows(const std::byte* panel, const QuantizedRows& x, float* out, int64_t m, int64_t j0,
                int cols) {
  int64_t r0 = 0;
  for (; r0 + kR <= x.n; r0 += kR) panel_tile<kNibbles, kR>(panel, x, r0, out, m, j0, cols);
  if (r0 < x.n) {
    panel_tail<kNibbles, kR - 1>(static_cast<int>(x.n - r0), panel, x, r0, out, m, j0, cols);
  }
}

}  // namespace

void panel_matmul(DType dtype, const std::byte* panels, int64_t first, int64_t last,
                  const QuantizedRows& x, float* out, int64_t m) {
  for_each_panel(dtype, panels, first, last, x.blocks, m,
                 [&](auto nibbles, const std::byte* panel, int64_t j0, int cols) {
                   panel_rows<nibbles()>(panel, x, out, m, j0, cols);
                 });
}

}  // namespace baton::cpu::avx512
