// AVX-512 VNNI: activation quantization and the decode GEMV over Q8_0 / Q4_0 / Q5_0 weights and
// Baton's int8 (per row) and int4 (groups of 32 or 128) weights.
//
// Decode is bound by reading the weights, so each weight byte is loaded once and used for every
// row of x. A zmm holds two blocks: vpdpbusd gives 8 int32 lanes per block, which are scaled by
// d_w * d_x lane-wise and summed horizontally only once per output.

// GCC 12 warns that the undefined-vector idiom inside its own AVX-512 intrinsics is used
// uninitialized (GCC bug 105593); the warning is about the header, not about callers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__  // clang has no such warning, and warns that it does not know the name
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstring>

#include "backends/cpu/matmul/quantized.h"

namespace baton::cpu::avx512 {
namespace {

constexpr int kMaxX = 4;  // x rows per tile
// Software prefetch this far ahead in each weight row: with several rows streaming at once it
// measured ~15-20% faster than leaving it to the hardware prefetcher.
constexpr int kPrefetchBytes = 1024;

// Types whose blocks are 32 elements, so a row can end in a lone block (a tail); int4 rows are
// whole chunks of 64.
template <DType kType>
constexpr bool kBlocksOf32 = kType != DType::kI4G32&& kType != DType::kI4G128;

// One or two weight blocks as an unsigned vpdpbusd operand with lane-wise scales; `tail` means
// only block b exists, and its partner lanes read as zero.
struct WeightPair {
  __m512i u8;     // nibble types: codes (w + 8); signed types: |w|
  __mmask64 neg;  // signed types: quants whose sign moves onto x
  __m512 d;       // d_w, 8 lanes per block (int8: unused, its row scale is applied at the end)
  __m512 m;       // Q4_1 / Q5_1: the blocks' minimums, 8 lanes per block
};

// Lane l of a block pair belongs to block l / 8. A function, not a global: a static initialiser
// in this file would run AVX-512 code on every CPU.
inline __m512i pair_lanes() {
  return _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
}

// Both blocks' fp16 scales, 8 lanes each.
inline __m512 pair_scales(uint16_t d0, uint16_t d1) {
  return _mm512_cvtph_ps(_mm256_set_m128i(_mm_set1_epi16(static_cast<short>(d1)),
                                          _mm_set1_epi16(static_cast<short>(d0))));
}

// Signed quants of one or two blocks: magnitudes and signs.
inline void signed_pair(__m512i q, WeightPair& wp) {
  wp.u8 = _mm512_abs_epi8(q);
  wp.neg = _mm512_movepi8_mask(q);
}

// Blocks b and b + 1 (only b when kTail) of the weight row starting at `row`.
template <DType kType, bool kTail>
[[gnu::always_inline]] inline WeightPair load_pair(const std::byte* row, int64_t b) {
  WeightPair wp;
  wp.neg = 0;
  wp.d = _mm512_setzero_ps();
  wp.m = _mm512_setzero_ps();
  if constexpr (is_legacy_block(kType)) {
    // [qs_b, qs_b, qs_b1, qs_b1] by 128-bit lanes; the high nibbles come from shifting the
    // second copy of each, so elements 0..31 of each block land in order. The fifth bits of
    // Q5_0 / Q5_1 (bit i of qh for element i) then serve as lane masks.
    const auto* blk = reinterpret_cast<const LegacyBlock<kType>*>(row) + b;
    const __m256i q0 =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->qs)));
    __m256i q1 = _mm256_setzero_si256();
    if constexpr (!kTail) {
      q1 =
          _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk[1].qs)));
    }
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
    q = _mm512_mask_srli_epi16(q, 0xff00ff00, q, 4);
    wp.u8 = _mm512_and_si512(q, _mm512_set1_epi8(0x0f));
    if constexpr (has_fifth_bit(kType)) {
      uint32_t high0 = 0, high1 = 0;
      std::memcpy(&high0, blk->qh, sizeof(high0));
      if constexpr (!kTail) std::memcpy(&high1, blk[1].qh, sizeof(high1));
      const __mmask64 high = static_cast<__mmask64>(high1) << 32 | high0;
      wp.u8 = _mm512_mask_add_epi8(wp.u8, high, wp.u8, _mm512_set1_epi8(16));
    }
    wp.d = pair_scales(blk->d, kTail ? 0 : blk[1].d);
    if constexpr (has_block_minimum(kType)) wp.m = pair_scales(blk->m, kTail ? 0 : blk[1].m);
  } else if constexpr (kType == DType::kQ8_0) {
    const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
    __m512i q =
        _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qs)));
    if constexpr (!kTail) {
      q = _mm512_inserti64x4(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[1].qs)), 1);
    }
    signed_pair(q, wp);
    wp.d = pair_scales(blk->d, kTail ? 0 : blk[1].d);
  } else if constexpr (kType == DType::kI8Row) {
    const std::byte* qs = row + sizeof(float) + b * kQuantBlock;
    signed_pair(
        kTail ? _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)))
              : _mm512_loadu_si512(qs),
        wp);
  } else {
    // int4 rows have whole chunks of 64 elements, so b is even and never a tail: the pair is
    // one chunk, its 32 bytes' low nibbles then high nibbles in element order.
    static_assert(!kTail);
    const Int4Place place = int4_place(kType, row, b);
    __m512i q =
        _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(place.chunk)));
    q = _mm512_mask_srli_epi16(q, 0xffff0000, q, 4);
    wp.u8 = _mm512_and_si512(q, _mm512_set1_epi8(0x0f));
    if constexpr (kType == DType::kI4G32) {
      wp.d = pair_scales(place.scale[0], place.scale[1]);
    } else {
      wp.d = _mm512_set1_ps(_cvtsh_ss(*place.scale));
    }
  }
  return wp;
}

// Adds blocks b and b + 1 (only b when kTail) of the tile's weight rows times x rows to acc.
template <DType kType, bool kTail, int kX, int kWr>
[[gnu::always_inline]] inline void gemv_step(const std::byte* const (&rows)[kWr], int64_t b,
                                             const QuantizedRows& x, int64_t x0,
                                             __m512 (&acc)[kX][kWr]) {
  // Bytes of one 32-element block, for the prefetch distance along the row.
  constexpr size_t kBlockBytes =
      kType == DType::kQ4_0    ? sizeof(BlockQ4_0)
      : kType == DType::kQ5_0  ? sizeof(BlockQ5_0)
      : kType == DType::kQ4_1  ? sizeof(BlockQ4_1)
      : kType == DType::kQ5_1  ? sizeof(BlockQ5_1)
      : kType == DType::kQ8_0  ? sizeof(BlockQ8_0)
      : kType == DType::kI8Row ? kQuantBlock
                               : int4_block_bytes(kType) * kQuantBlock / int4_block_size(kType);
  WeightPair wt[kWr];
#pragma GCC unroll 4
  for (int j = 0; j < kWr; ++j) {
    _mm_prefetch(reinterpret_cast<const char*>(rows[j] + b * kBlockBytes) + kPrefetchBytes,
                 _MM_HINT_T0);
    wt[j] = load_pair<kType, kTail>(rows[j], b);
  }
#pragma GCC unroll 4
  for (int i = 0; i < kX; ++i) {
    const int64_t r = x0 + i;
    const int8_t* xr = x.qs_row(r) + b * kQuantBlock;
    const __m512i xq =
        kTail ? _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr)))
              : _mm512_loadu_si512(xr);
    // Both blocks' d_x (and nibble corrections) sit side by side: one 8-byte load, one permute
    // spreads them to their lanes.
    const float* xd = x.d_row(r) + b;
    const __m128 d_pair =
        kTail ? _mm_load_ss(xd) : _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(xd)));
    const __m512 dx = _mm512_permutexvar_ps(pair_lanes(), _mm512_castps128_ps512(d_pair));
    __m512i init = _mm512_setzero_si512();
    __m512 sums = _mm512_setzero_ps();  // Q4_1 / Q5_1: d_x * sum of x quants at lanes 0 and 8
    if constexpr (has_unsigned_codes(kType)) {
      const int32_t* c = x.corr_row(r) + b;
      const __m128i c_pair =
          kTail ? _mm_cvtsi32_si128(c[0]) : _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c));
      const __m512i spread =
          _mm512_maskz_permutexvar_epi32(0x0101, pair_lanes(), _mm512_castsi128_si512(c_pair));
      if constexpr (has_block_minimum(kType)) {
        sums = _mm512_mul_ps(_mm512_cvtepi32_ps(spread), dx);
      } else {
        init = spread;
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < kWr; ++j) {
      const __m512i xs = has_unsigned_codes(kType)
                             ? xq
                             : _mm512_mask_sub_epi8(xq, wt[j].neg, _mm512_setzero_si512(), xq);
      const __m512i dot = _mm512_dpbusd_epi32(init, wt[j].u8, xs);
      const __m512 scale = kType == DType::kI8Row ? dx : _mm512_mul_ps(wt[j].d, dx);
      acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[i][j]);
      if constexpr (has_block_minimum(kType)) acc[i][j] = _mm512_fmadd_ps(wt[j].m, sums, acc[i][j]);
    }
  }
}

// The per-row scale that int8 rows apply once per output; 1 for the block types.
template <DType kType>
inline float row_scale(const std::byte* row) {
  float scale = 1.0f;
  if constexpr (kType == DType::kI8Row) std::memcpy(&scale, row, sizeof(scale));
  return scale;
}

// One tile: kX rows of x (from x0) against kWr weight rows (from j0), over the whole row.
template <DType kType, int kX, int kWr>
void gemv_tile(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, int64_t x0,
               float* out, int64_t m) {
  const int64_t nb = x.blocks;
  __m512 acc[kX][kWr];
  for (auto& row : acc) {
    for (__m512& a : row) a = _mm512_setzero_ps();
  }
  const std::byte* rows[kWr];
  for (int j = 0; j < kWr; ++j) rows[j] = w + static_cast<size_t>(j0 + j) * w_stride;

  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) gemv_step<kType, false>(rows, b, x, x0, acc);
  if constexpr (kBlocksOf32<kType>) {
    if (b < nb) gemv_step<kType, true>(rows, b, x, x0, acc);
  }
  for (int i = 0; i < kX; ++i) {
    for (int j = 0; j < kWr; ++j) {
      out[(x0 + i) * m + j0 + j] = _mm512_reduce_add_ps(acc[i][j]) * row_scale<kType>(rows[j]);
    }
  }
}

template <DType kType, int kWr>
void gemv_rows(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, float* out,
               int64_t m) {
  for (int64_t x0 = 0; x0 < x.n; x0 += kMaxX) {
    switch (std::min<int64_t>(kMaxX, x.n - x0)) {
      case 1:
        gemv_tile<kType, 1, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 2:
        gemv_tile<kType, 2, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 3:
        gemv_tile<kType, 3, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      default:
        gemv_tile<kType, 4, kWr>(w, w_stride, j0, x, x0, out, m);
    }
  }
}

// One weight row at a time streams best for a single row of x (2 or 4 rows side by side measured
// 40-50% slower in whole-model decode); with several rows of x the kernel is compute-bound, and
// 4 weight rows share each x row's per-block setup.
template <DType kType>
void gemv_range(const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                const QuantizedRows& x, float* out, int64_t m) {
  int64_t j = first;
  if (x.n > 1) {
    for (; j + 4 <= last; j += 4) gemv_rows<kType, 4>(w, w_stride, j, x, out, m);
  }
  for (; j < last; ++j) gemv_rows<kType, 1>(w, w_stride, j, x, out, m);
}

}  // namespace

void quantize_row(const float* x, int64_t k, int32_t offset, int8_t* qs, float* d, int32_t* corr) {
  for (int64_t b = 0; b < k / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    const __m512 lo = _mm512_loadu_ps(xb), hi = _mm512_loadu_ps(xb + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(lo), _mm512_abs_ps(hi)));
    const __m512 scale = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    const __m512i qlo = _mm512_cvtps_epi32(_mm512_mul_ps(lo, scale));
    const __m512i qhi = _mm512_cvtps_epi32(_mm512_mul_ps(hi, scale));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + b * kQuantBlock), _mm512_cvtepi32_epi8(qlo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + b * kQuantBlock + 16),
                     _mm512_cvtepi32_epi8(qhi));
    d[b] = amax / 127.0f;
    corr[b] = -offset * _mm512_reduce_add_epi32(_mm512_add_epi32(qlo, qhi));
  }
}

void gemv(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
          const QuantizedRows& x, float* out, int64_t m) {
  with_quantized_type(dtype,
                      [&](auto type) { gemv_range<type()>(w, w_stride, first, last, x, out, m); });
}

}  // namespace baton::cpu::avx512
