// AVX2: the K-quant matmul (kquant.h) for machines without AVX-512, any number of rows of x.
//
// One ymm holds the codes of 32 elements (chunk c of a super-block). maddubs multiplies them by
// x's signed bytes into int16 pairs (no saturation: u <= 63, |q| <= 127), madd widens to 8 int32
// lanes of 4 elements, lanes 4h .. 4h + 3 belonging to group 2c + h; they are scaled lane-wise by
// s * d_x, and the offsets enter once per super-block as o times x's group sums. A tile of kX x
// rows by kW weight rows reuses each decoded chunk across x rows.

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "backends/cpu/matmul/kquant.h"
#include "backends/cpu/simd/simd_avx2.h"

namespace baton::cpu::avx2 {
namespace {

constexpr int kW = 2;     // weight rows per tile
constexpr int kMaxX = 4;  // x rows per tile

// A super-block's group scales and offsets.
struct GroupScales {
  alignas(32) float s[kGroupsPerSuperBlock];
  alignas(32) float o[kGroupsPerSuperBlock];
};

__m256i load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Bytes of p shifted right by kShift within 16-bit lanes, masked to `mask` (what crosses from
// the neighbouring byte is masked off).
template <int kShift>
__m256i shifted(const uint8_t* p, uint8_t mask) {
  return _mm256_and_si256(_mm256_srli_epi16(load32(p), kShift),
                          _mm256_set1_epi8(static_cast<char>(mask)));
}

// 16 bytes as 16 floats times `mult`, written to out.
void bytes_to_ps(__m128i bytes, bool is_signed, float mult, float* out) {
  const __m128i upper = _mm_srli_si128(bytes, 8);
  const __m256i lo = is_signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
  const __m256i hi = is_signed ? _mm256_cvtepi8_epi32(upper) : _mm256_cvtepu8_epi32(upper);
  const __m256 m = _mm256_set1_ps(mult);
  _mm256_store_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(lo), m));
  _mm256_store_ps(out + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(hi), m));
}

void scaled(const float* in, float mult, float* out) {
  for (int g = 0; g < kGroupsPerSuperBlock; g += 8) {
    _mm256_store_ps(out + g, _mm256_mul_ps(_mm256_load_ps(in + g), _mm256_set1_ps(mult)));
  }
}

struct Q2KDecoder {
  using Block = BlockQ2_K;
  static void scales(const Block& b, GroupScales& gs) {
    const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    bytes_to_ps(_mm_and_si128(sm, _mm_set1_epi8(15)), false, _cvtsh_ss(b.d), gs.s);
    bytes_to_ps(_mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(15)), false, -_cvtsh_ss(b.dmin),
                gs.o);
  }
  // Chunk c: bit pair c % 4 of qs[32 * (c / 4) ..].
  template <int kC>
  static __m256i codes(const Block& b) {
    return shifted<2 * (kC % 4)>(b.qs + 32 * (kC / 4), 3);
  }
};

struct Q3KDecoder {
  using Block = BlockQ3_K;
  static void scales(const Block& b, GroupScales& gs) {
    int8_t sc[16];
    unpack_q3_k_scales(b.scales, sc);
    bytes_to_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)), true, _cvtsh_ss(b.d), gs.s);
    scaled(gs.s, -4.0f, gs.o);
  }
  // Q2_K's bit pairs plus the third bit, bit c of hmask.
  template <int kC>
  static __m256i codes(const Block& b) {
    const __m256i high = shifted<kC>(b.hmask, 1);
    return _mm256_or_si256(shifted<2 * (kC % 4)>(b.qs + 32 * (kC / 4), 3),
                           _mm256_slli_epi16(high, 2));
  }
};

// Q4_K and Q5_K: one scale and min per two groups.
void k4_scales(const uint8_t (&packed)[12], uint16_t d, uint16_t dmin, GroupScales& gs) {
  const KScalesMins sm = unpack_q4_k_scales(packed);
  const __m256 scale = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(
                                         reinterpret_cast<const __m128i*>(sm.scale)))),
                                     _mm256_set1_ps(_cvtsh_ss(d)));
  const __m256 min = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                                       _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm.min)))),
                                   _mm256_set1_ps(-_cvtsh_ss(dmin)));
  const __m256i first = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256i second = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
  _mm256_store_ps(gs.s, _mm256_permutevar8x32_ps(scale, first));
  _mm256_store_ps(gs.s + 8, _mm256_permutevar8x32_ps(scale, second));
  _mm256_store_ps(gs.o, _mm256_permutevar8x32_ps(min, first));
  _mm256_store_ps(gs.o + 8, _mm256_permutevar8x32_ps(min, second));
}

struct Q4KDecoder {
  using Block = BlockQ4_K;
  static void scales(const Block& b, GroupScales& gs) { k4_scales(b.scales, b.d, b.dmin, gs); }
  // Chunk c is sub-block c: nibble c % 2 of qs[32 * (c / 2) ..].
  template <int kC>
  static __m256i codes(const Block& b) {
    return shifted<4 * (kC % 2)>(b.qs + 32 * (kC / 2), 15);
  }
};

struct Q5KDecoder {
  using Block = BlockQ5_K;
  static void scales(const Block& b, GroupScales& gs) { k4_scales(b.scales, b.d, b.dmin, gs); }
  // Q4_K's nibbles plus the fifth bit, bit c of qh.
  template <int kC>
  static __m256i codes(const Block& b) {
    const __m256i high = shifted<kC>(b.qh, 1);
    return _mm256_or_si256(shifted<4 * (kC % 2)>(b.qs + 32 * (kC / 2), 15),
                           _mm256_slli_epi16(high, 4));
  }
};

struct Q6KDecoder {
  using Block = BlockQ6_K;
  static void scales(const Block& b, GroupScales& gs) {
    bytes_to_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), true, _cvtsh_ss(b.d),
                gs.s);
    scaled(gs.s, -32.0f, gs.o);
  }
  // Chunk c = 4h + t: nibble t / 2 of ql[64h + 32 (t % 2) ..], bit pair t of qh[32h ..].
  template <int kC>
  static __m256i codes(const Block& b) {
    constexpr int kH = kC / 4, kT = kC % 4;
    const __m256i low = shifted<4 * (kT / 2)>(b.ql + 64 * kH + 32 * (kT % 2), 15);
    const __m256i high = shifted<2 * kT>(b.qh + 32 * kH, 3);
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
  }
};

// Adds chunk kC of the tile's current super-blocks times the x rows to acc.
template <typename Dec, int kC, int kX, int kWr>
[[gnu::always_inline]] inline void chunk(const typename Dec::Block* const (&blocks)[kWr],
                                         const GroupScales (&gs)[kWr],
                                         const int8_t* const (&xq)[kX],
                                         const float* const (&xd)[kX], __m256 (&acc)[kX][kWr]) {
  // Lane l takes group 2 kC + l / 4, within the half of s that holds it.
  const __m256i lanes =
      _mm256_setr_epi32(2 * (kC % 4), 2 * (kC % 4), 2 * (kC % 4), 2 * (kC % 4), 2 * (kC % 4) + 1,
                        2 * (kC % 4) + 1, 2 * (kC % 4) + 1, 2 * (kC % 4) + 1);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i u[kWr];
  __m256 lane_s[kWr];
  for (int j = 0; j < kWr; ++j) {
    u[j] = Dec::template codes<kC>(*blocks[j]);
    lane_s[j] = _mm256_permutevar8x32_ps(_mm256_load_ps(gs[j].s + 8 * (kC / 4)), lanes);
  }
  for (int i = 0; i < kX; ++i) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[i] + 32 * kC));
    const __m256 dx = _mm256_broadcast_ss(xd[i] + kC);
    for (int j = 0; j < kWr; ++j) {
      const __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(u[j], x), ones);
      acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(lane_s[j], dx), acc[i][j]);
    }
  }
}

template <typename Dec, int kX, int kWr>
void tile(const std::byte* w, size_t w_stride, int64_t j0, const KQuantRows& x, int64_t x0,
          float* out, int64_t m) {
  using Block = typename Dec::Block;
  __m256 acc[kX][kWr];
  for (auto& row : acc) {
    for (__m256& a : row) a = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < x.q.k / kQK_K; ++b) {
    const Block* blocks[kWr];
    GroupScales gs[kWr];
    for (int j = 0; j < kWr; ++j) {
      blocks[j] = reinterpret_cast<const Block*>(w + static_cast<size_t>(j0 + j) * w_stride) + b;
      Dec::scales(*blocks[j], gs[j]);
    }
    const int8_t* xq[kX];
    const float* xd[kX];
    for (int i = 0; i < kX; ++i) {
      const int64_t r = x0 + i;
      xq[i] = x.q.qs_row(r) + b * kQK_K;
      xd[i] = x.q.d_row(r) + b * (kQK_K / kQuantBlock);
      const float* sums = x.sums_row(r) + b * kGroupsPerSuperBlock;
      for (int j = 0; j < kWr; ++j) {
        acc[i][j] = _mm256_fmadd_ps(_mm256_load_ps(gs[j].o), _mm256_loadu_ps(sums), acc[i][j]);
        acc[i][j] =
            _mm256_fmadd_ps(_mm256_load_ps(gs[j].o + 8), _mm256_loadu_ps(sums + 8), acc[i][j]);
      }
    }
    [&]<int... kC>(std::integer_sequence<int, kC...>) {
      (chunk<Dec, kC>(blocks, gs, xq, xd, acc), ...);
    }
    (std::make_integer_sequence<int, kQK_K / 32>{});
  }
  for (int i = 0; i < kX; ++i) {
    for (int j = 0; j < kWr; ++j) out[(x0 + i) * m + j0 + j] = SimdAvx2::reduce_add(acc[i][j]);
  }
}

template <typename Dec, int kWr>
void rows(const std::byte* w, size_t w_stride, int64_t j0, const KQuantRows& x, float* out,
          int64_t m) {
  for (int64_t x0 = 0; x0 < x.q.n; x0 += kMaxX) {
    switch (std::min<int64_t>(kMaxX, x.q.n - x0)) {
      case 1:
        tile<Dec, 1, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 2:
        tile<Dec, 2, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 3:
        tile<Dec, 3, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      default:
        tile<Dec, 4, kWr>(w, w_stride, j0, x, x0, out, m);
    }
  }
}

template <typename Dec>
void range(const std::byte* w, size_t w_stride, int64_t first, int64_t last, const KQuantRows& x,
           float* out, int64_t m) {
  int64_t j = first;
  for (; j + kW <= last; j += kW) rows<Dec, kW>(w, w_stride, j, x, out, m);
  for (; j < last; ++j) rows<Dec, 1>(w, w_stride, j, x, out, m);
}

}  // namespace

void kquant_matmul(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                   const KQuantRows& x, float* out, int64_t m) {
  switch (dtype) {
    case DType::kQ2_K:
      return range<Q2KDecoder>(w, w_stride, first, last, x, out, m);
    case DType::kQ3_K:
      return range<Q3KDecoder>(w, w_stride, first, last, x, out, m);
    case DType::kQ4_K:
      return range<Q4KDecoder>(w, w_stride, first, last, x, out, m);
    case DType::kQ5_K:
      return range<Q5KDecoder>(w, w_stride, first, last, x, out, m);
    default:
      return range<Q6KDecoder>(w, w_stride, first, last, x, out, m);
  }
}

}  // namespace baton::cpu::avx2
