// AVX-512 VNNI: activation quantization and the decode GEMV over Q8_0 / Q4_0 weights.
//
// Decode is bound by reading the weights, so each weight byte is loaded once and used for every
// row of x. A zmm holds two blocks: vpdpbusd gives 8 int32 lanes per block, which are scaled by
// d_w * d_x lane-wise and summed horizontally only once per output.

// GCC 12 warns that the undefined-vector idiom inside its own AVX-512 intrinsics is used
// uninitialized (GCC bug 105593); the warning is about the header, not about callers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>

#include "backends/cpu/matmul/quantized.h"

namespace baton::cpu::avx512 {
namespace {

constexpr int kMaxX = 4;  // x rows per tile
// Software prefetch this far ahead in each weight row: with several rows streaming at once it
// measured ~15-20% faster than leaving it to the hardware prefetcher.
constexpr int kPrefetchBytes = 1024;

// One or two weight blocks as an unsigned vpdpbusd operand with lane-wise scales; `tail` means
// only block b exists, and its partner lanes read as zero.
struct WeightPair {
  __m512i u8;     // Q4_0: nibbles (w + 8); Q8_0: |w|
  __mmask64 neg;  // Q8_0: quants whose sign moves onto x
  __m512 d;       // d_w, 8 lanes per block
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

template <bool kQ4, bool kTail>
[[gnu::always_inline]] inline WeightPair load_pair(const std::byte* p) {
  WeightPair wp;
  if constexpr (kQ4) {
    // [qs_b, qs_b, qs_b1, qs_b1] by 128-bit lanes; the high nibbles come from shifting the
    // second copy of each, so elements 0..31 of each block land in order.
    const auto* b = reinterpret_cast<const BlockQ4_0*>(p);
    const __m256i q0 =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs)));
    __m256i q1 = _mm256_setzero_si256();
    if constexpr (!kTail) {
      q1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[1].qs)));
    }
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
    q = _mm512_mask_srli_epi16(q, 0xff00ff00, q, 4);
    wp.u8 = _mm512_and_si512(q, _mm512_set1_epi8(0x0f));
    wp.neg = 0;
    wp.d = pair_scales(b->d, kTail ? 0 : b[1].d);
  } else {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(p);
    __m512i q = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs)));
    if constexpr (!kTail) {
      q = _mm512_inserti64x4(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[1].qs)), 1);
    }
    wp.u8 = _mm512_abs_epi8(q);
    wp.neg = _mm512_movepi8_mask(q);
    wp.d = pair_scales(b->d, kTail ? 0 : b[1].d);
  }
  return wp;
}

// Adds blocks b and b + 1 (only b when kTail) of the tile's weight rows times x rows to acc.
template <bool kQ4, bool kTail, int kX, int kWr>
[[gnu::always_inline]] inline void gemv_step(const std::byte* const (&rows)[kWr], int64_t b,
                                             const QuantizedRows& x, int64_t x0,
                                             __m512 (&acc)[kX][kWr]) {
  constexpr size_t kBlockBytes = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  WeightPair wt[kWr];
#pragma GCC unroll 4
  for (int j = 0; j < kWr; ++j) {
    _mm_prefetch(reinterpret_cast<const char*>(rows[j] + b * kBlockBytes) + kPrefetchBytes,
                 _MM_HINT_T0);
    wt[j] = load_pair<kQ4, kTail>(rows[j] + b * kBlockBytes);
  }
#pragma GCC unroll 4
  for (int i = 0; i < kX; ++i) {
    const int64_t r = x0 + i;
    const int8_t* xr = x.qs_row(r) + b * kQuantBlock;
    const __m512i xq =
        kTail ? _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr)))
              : _mm512_loadu_si512(xr);
    // Both blocks' d_x (and Q4_0 corrections) sit side by side: one 8-byte load, one permute
    // spreads them to their lanes.
    const float* xd = x.d_row(r) + b;
    const __m128 d_pair =
        kTail ? _mm_load_ss(xd) : _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(xd)));
    const __m512 dx = _mm512_permutexvar_ps(pair_lanes(), _mm512_castps128_ps512(d_pair));
    __m512i init = _mm512_setzero_si512();
    if constexpr (kQ4) {
      const int32_t* c = x.corr_row(r) + b;
      const __m128i c_pair =
          kTail ? _mm_cvtsi32_si128(c[0]) : _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c));
      init = _mm512_maskz_permutexvar_epi32(0x0101, pair_lanes(), _mm512_castsi128_si512(c_pair));
    }
#pragma GCC unroll 4
    for (int j = 0; j < kWr; ++j) {
      const __m512i xs = kQ4 ? xq : _mm512_mask_sub_epi8(xq, wt[j].neg, _mm512_setzero_si512(), xq);
      const __m512i dot = _mm512_dpbusd_epi32(init, wt[j].u8, xs);
      acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(wt[j].d, dx), acc[i][j]);
    }
  }
}

// One tile: kX rows of x (from x0) against kWr weight rows (from j0), over the whole row.
template <bool kQ4, int kX, int kWr>
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
  for (; b + 2 <= nb; b += 2) gemv_step<kQ4, false>(rows, b, x, x0, acc);
  if (b < nb) gemv_step<kQ4, true>(rows, b, x, x0, acc);
  for (int i = 0; i < kX; ++i) {
    for (int j = 0; j < kWr; ++j) out[(x0 + i) * m + j0 + j] = _mm512_reduce_add_ps(acc[i][j]);
  }
}

template <bool kQ4, int kWr>
void gemv_rows(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, float* out,
               int64_t m) {
  for (int64_t x0 = 0; x0 < x.n; x0 += kMaxX) {
    switch (std::min<int64_t>(kMaxX, x.n - x0)) {
      case 1:
        gemv_tile<kQ4, 1, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 2:
        gemv_tile<kQ4, 2, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 3:
        gemv_tile<kQ4, 3, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      default:
        gemv_tile<kQ4, 4, kWr>(w, w_stride, j0, x, x0, out, m);
    }
  }
}

// One weight row at a time streams best for a single row of x (2 or 4 rows side by side measured
// 40-50% slower in whole-model decode); with several rows of x the kernel is compute-bound, and
// 4 weight rows share each x row's per-block setup.
template <bool kQ4>
void gemv_range(const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                const QuantizedRows& x, float* out, int64_t m) {
  int64_t j = first;
  if (x.n > 1) {
    for (; j + 4 <= last; j += 4) gemv_rows<kQ4, 4>(w, w_stride, j, x, out, m);
  }
  for (; j < last; ++j) gemv_rows<kQ4, 1>(w, w_stride, j, x, out, m);
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
  if (dtype == DType::kQ4_0) return gemv_range<true>(w, w_stride, first, last, x, out, m);
  gemv_range<false>(w, w_stride, first, last, x, out, m);
}

}  // namespace baton::cpu::avx512
