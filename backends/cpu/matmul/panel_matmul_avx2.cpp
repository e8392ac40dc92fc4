// AVX2 matmul over Q4_0 / Q8_0 weights repacked into panels of 32 rows (matmul/panel_weights.h),
// for any number of rows of x: the same panels the AVX-512 kernel reads, seen as ymm.
//
// A zmm of the panel layout is two ymm, so a ymm lane is one weight row and the panel's 32 rows
// are four column groups of 8. ymm 4t + g of a Q4_0 block holds bytes 4t .. 4t+3 of group g's
// rows (low nibbles elements 4t .., high nibbles 16 + 4t ..); ymm 4t + g of a Q8_0 block holds
// its elements 4t .. 4t+3 as w + 128. x's 4 bytes are broadcast, so lanes are output columns
// and no horizontal sums are needed.
//
// Without VNNI the dot is maddubs (unsigned weight bytes times signed x bytes into int16 pairs)
// then madd by ones into int32:
//   - Q4_0: a pair is at most 2 * 15 * 127 = 3810, so a block's 8 maddubs add up in int16
//     (at most 30480) and one madd per block widens them;
//   - Q8_0: w + 128 would overflow the pair, so w's sign moves onto x (|w| * sign(x, w), at most
//     2 * 128 * 127 per pair) and every maddubs is widened before it is added.
// Each block's int32 dot is scaled as the AVX-512 kernel does (fma(dot, d_w * d_x, acc)), so an
// output's bits do not depend on the tile shape: a row of x gets the same result alone or in a
// batch, and the same as on AVX-512.

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/matmul/panel_weights.h"
#include "backends/cpu/matmul/quantized.h"
#include "backends/cpu/simd/simd_avx2.h"

namespace baton::cpu::avx2 {
namespace {

constexpr int kGroups = 4;          // column groups of 8 weight rows per panel
constexpr int kGroupRows = 8;       // weight rows per ymm
constexpr int kTileRows = 8;        // rows of x per prefill tile, one column group wide
constexpr int kHalfTileRows = 4;    // the tile for 4 to 7 rows left over
constexpr int kPrefetchBlocks = 4;  // panel blocks prefetched ahead by a panel's first tile

inline __m256i broadcast_four(const int8_t* p) {
  int32_t four;
  std::memcpy(&four, p, sizeof(four));
  return _mm256_set1_epi32(four);
}

// GCC reassociates a long integer sum into a tree whose products are all live at once, and
// spills them in 16 ymm registers; an empty asm that "changes" the running sum keeps each
// product's add in program order.
inline void keep_in_order(__m256i& sum) {
  asm("" : "+x"(sum));
}

inline const __m256i* group_quants(const std::byte* block, int t, int g) {
  return reinterpret_cast<const __m256i*>(block + 64) + kGroups * t + g;
}

// sums[r] = the int32 dots of one block of x rows r0 .. r0 + kRows - 1 (quants at xq[r]) with
// column group g's 8 weight rows; each weight vector is loaded and unpacked once for all rows.
template <bool kNibbles, int kRows>
[[gnu::always_inline]] inline void block_dots(const std::byte* block, const int8_t* const* xq,
                                              int g, __m256i (&sums)[kRows]) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (kNibbles) {
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    __m256i pairs[kRows];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) pairs[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) {
      const __m256i q = _mm256_load_si256(group_quants(block, t, g));
      const __m256i lo = _mm256_and_si256(q, nibble);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        pairs[r] =
            _mm256_add_epi16(pairs[r], _mm256_maddubs_epi16(lo, broadcast_four(xq[r] + 4 * t)));
        pairs[r] = _mm256_add_epi16(pairs[r],
                                    _mm256_maddubs_epi16(hi, broadcast_four(xq[r] + 16 + 4 * t)));
        keep_in_order(pairs[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) sums[r] = _mm256_madd_epi16(pairs[r], ones);
  } else {
    const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) sums[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) {
      const __m256i w = _mm256_xor_si256(_mm256_load_si256(group_quants(block, t, g)), bias);
      const __m256i magnitude = _mm256_abs_epi8(w);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const __m256i xs = _mm256_sign_epi8(broadcast_four(xq[r] + 4 * t), w);
        sums[r] =
            _mm256_add_epi32(sums[r], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, xs), ones));
        keep_in_order(sums[r]);
      }
    }
  }
}

// kRows rows of x from r0 by kCols column groups from g0, over every block of one panel. Every
// loop over rows and groups is unrolled, so a block's int16 and int32 sums live in registers; an
// 8-row tile leaves some float accumulators on the stack, which costs a load and a store per
// block against 64 maddubs.
template <bool kNibbles, int kRows, int kCols>
void panel_tile(const std::byte* panel, const QuantizedRows& x, int64_t r0, int g0, bool prefetch,
                float* out, int64_t m, int64_t j0, int cols) {
  constexpr size_t kBlockBytes = panel_block_bytes(kNibbles ? DType::kQ4_0 : DType::kQ8_0);
  const int8_t* qs[kRows];
  const float* dx[kRows];
  const int32_t* corr[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    qs[r] = x.qs_row(r0 + r);
    dx[r] = x.d_row(r0 + r);
    corr[r] = x.corr_row(r0 + r);
  }
  __m256 acc[kRows][kCols];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  const int64_t blocks = x.blocks;
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = panel + b * kBlockBytes;
    if (prefetch) {
      const char* ahead = reinterpret_cast<const char*>(block + kPrefetchBlocks * kBlockBytes);
      for (size_t line = 0; line < kBlockBytes; line += 64) _mm_prefetch(ahead + line, _MM_HINT_T0);
    }
    const int8_t* xq[kRows];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) xq[r] = qs[r] + b * kQuantBlock;
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      const int g = g0 + c;
      __m256i dots[kRows];
      block_dots<kNibbles, kRows>(block, xq, g, dots);
      const __m256 dw =
          _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(block) + g));
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        // Q4_0's codes are w + 8: corr = -8 * sum(x quants) takes the offset back out.
        if constexpr (kNibbles) dots[r] = _mm256_add_epi32(dots[r], _mm256_set1_epi32(corr[r][b]));
        const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(dx[r][b]));
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[r]), d, acc[r][c]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    float* o = out + (r0 + r) * m + j0;
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      const int first = (g0 + c) * kGroupRows;
      const int n = std::min(kGroupRows, cols - first);
      if (n == kGroupRows) {
        _mm256_storeu_ps(o + first, acc[r][c]);
      } else if (n > 0) {
        SimdAvx2::store_partial(o + first, acc[r][c], n);
      }
    }
  }
}

// kRows rows of x from r0 by each column group in turn, so the rows stay in L1 across the
// panel's groups.
template <bool kNibbles, int kRows>
void group_tiles(const std::byte* panel, const QuantizedRows& x, int64_t r0, bool prefetch,
                 float* out, int64_t m, int64_t j0, int cols) {
  const int groups = (cols + kGroupRows - 1) / kGroupRows;
  for (int g = 0; g < groups; ++g) {
    panel_tile<kNibbles, kRows, 1>(panel, x, r0, g, prefetch && g == 0, out, m, j0, cols);
  }
}

// One panel against every row of x, in tiles of kTileRows rows by one column group: each weight
// vector is unpacked once for eight rows, and the panel stays in L2 across tiles. Four to seven
// rows left over take one tile of four. One row left over (decode) takes all four groups per
// tile, sharing each x load; two or three take one.
template <bool kNibbles>
void panel_rows(const std::byte* panel, const QuantizedRows& x, float* out, int64_t m, int64_t j0,
                int cols) {
  int64_t r0 = 0;
  for (; r0 + kTileRows <= x.n; r0 += kTileRows) {
    group_tiles<kNibbles, kTileRows>(panel, x, r0, r0 == 0, out, m, j0, cols);
  }
  if (x.n - r0 >= kHalfTileRows) {
    group_tiles<kNibbles, kHalfTileRows>(panel, x, r0, r0 == 0, out, m, j0, cols);
    r0 += kHalfTileRows;
  }
  const bool prefetch = r0 == 0;
  switch (x.n - r0) {
    case 1:
      return panel_tile<kNibbles, 1, kGroups>(panel, x, r0, 0, prefetch, out, m, j0, cols);
    case 2:
      return group_tiles<kNibbles, 2>(panel, x, r0, prefetch, out, m, j0, cols);
    case 3:
      return group_tiles<kNibbles, 3>(panel, x, r0, prefetch, out, m, j0, cols);
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

}  // namespace baton::cpu::avx2
