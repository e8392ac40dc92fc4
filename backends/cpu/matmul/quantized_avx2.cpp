// AVX2: activation quantization and the Q8_0 / Q4_x / Q5_x / int8 / int4 matmul for machines
// without AVX-512.
//
// One ymm holds one block. maddubs multiplies unsigned weight bytes by signed x bytes into
// int16 pairs (no saturation: |w| <= 128 or codes <= 31, |x| <= 127), madd widens to int32,
// and the 8 lanes are scaled by d_w * d_x and summed horizontally once per output. A tile of kX
// x rows by kW weight rows reuses each loaded block across x rows.

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/matmul/quantized.h"
#include "backends/cpu/simd/simd_avx2.h"

namespace baton::cpu::avx2 {
namespace {

constexpr int kW = 2;     // weight rows per tile
constexpr int kMaxX = 4;  // x rows per tile

inline int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

// Block b (32 elements) of the weight row at `row` as a maddubs operand: unsigned bytes (nibble
// types: w + 8; signed types: |w|, with `sign` holding w so its sign can move onto x) and the
// block's scale.
struct WeightBlock {
  __m256i u, sign;
  float d, m;  // scale, and Q4_1 / Q5_1's minimum
};

// The fifth bits of a Q5 block's 32 codes (bit i of qh for element i) as 16 in each byte.
inline __m256i fifth_bits(const uint8_t (&qh)[4]) {
  int32_t high = 0;
  std::memcpy(&high, qh, sizeof(high));
  // Byte i of the vector takes byte i / 8 of qh, then keeps bit i % 8: 0xff where it is set.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(high),
      _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(16));
}

// A legacy block's 32 nibbles in element order (element i < 16 low nibble of qs[i], element
// i + 16 its high nibble).
inline __m256i legacy_nibbles(const uint8_t (&qs)[16]) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0f));
}

template <DType kType>
[[gnu::always_inline]] inline WeightBlock load_block(const std::byte* row, int64_t b) {
  WeightBlock k{};
  if constexpr (is_legacy_block(kType)) {
    const auto* block = reinterpret_cast<const LegacyBlock<kType>*>(row) + b;
    k.u = legacy_nibbles(block->qs);
    if constexpr (has_fifth_bit(kType)) k.u = _mm256_or_si256(k.u, fifth_bits(block->qh));
    k.d = _cvtsh_ss(block->d);
    if constexpr (has_block_minimum(kType)) k.m = _cvtsh_ss(block->m);
  } else if constexpr (kType == DType::kQ8_0) {
    const auto* block = reinterpret_cast<const BlockQ8_0*>(row) + b;
    k.sign = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block->qs));
    k.u = _mm256_abs_epi8(k.sign);
    k.d = _cvtsh_ss(block->d);
  } else if constexpr (kType == DType::kI8Row) {
    std::memcpy(&k.d, row, sizeof(k.d));
    k.sign =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + sizeof(float) + b * kQuantBlock));
    k.u = _mm256_abs_epi8(k.sign);
  } else {
    const Int4Place place = int4_place(kType, row, b);
    k.d = _cvtsh_ss(*place.scale);
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(place.chunk));
    k.u = _mm256_and_si256(place.high ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0f));
  }
  return k;
}

template <DType kType, int kX, int kWr>
void tile(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, int64_t x0,
          float* out, int64_t m) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[kX][kWr];
  for (auto& row : acc) {
    for (__m256& a : row) a = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < x.blocks; ++b) {
    WeightBlock wb[kWr];
    for (int j = 0; j < kWr; ++j) {
      wb[j] = load_block<kType>(w + static_cast<size_t>(j0 + j) * w_stride, b);
    }
    for (int i = 0; i < kX; ++i) {
      const int64_t r = x0 + i;
      const __m256i xq =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs_row(r) + b * kQuantBlock));
      const float dx = x.d_row(r)[b];
      // Q4_1 / Q5_1: corr is the sum of x's quants, for the minimum term m * d_x * sum.
      const int32_t c = has_unsigned_codes(kType) ? x.corr_row(r)[b] : 0;
      const __m256i corr = _mm256_setr_epi32(has_block_minimum(kType) ? 0 : c, 0, 0, 0, 0, 0, 0, 0);
      for (int j = 0; j < kWr; ++j) {
        const __m256i xs = has_unsigned_codes(kType) ? xq : _mm256_sign_epi8(xq, wb[j].sign);
        __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(wb[j].u, xs), ones);
        if constexpr (has_unsigned_codes(kType)) dot = _mm256_add_epi32(dot, corr);
        acc[i][j] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(wb[j].d * dx), acc[i][j]);
        if constexpr (has_block_minimum(kType)) {
          acc[i][j] = _mm256_add_ps(
              acc[i][j], _mm256_setr_ps(wb[j].m * dx * static_cast<float>(c), 0, 0, 0, 0, 0, 0, 0));
        }
      }
    }
  }
  for (int i = 0; i < kX; ++i) {
    for (int j = 0; j < kWr; ++j) out[(x0 + i) * m + j0 + j] = SimdAvx2::reduce_add(acc[i][j]);
  }
}

template <DType kType, int kWr>
void rows(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, float* out,
          int64_t m) {
  for (int64_t x0 = 0; x0 < x.n; x0 += kMaxX) {
    switch (std::min<int64_t>(kMaxX, x.n - x0)) {
      case 1:
        tile<kType, 1, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 2:
        tile<kType, 2, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 3:
        tile<kType, 3, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      default:
        tile<kType, 4, kWr>(w, w_stride, j0, x, x0, out, m);
    }
  }
}

template <DType kType>
void range(const std::byte* w, size_t w_stride, int64_t first, int64_t last, const QuantizedRows& x,
           float* out, int64_t m) {
  int64_t j = first;
  for (; j + kW <= last; j += kW) rows<kType, kW>(w, w_stride, j, x, out, m);
  for (; j < last; ++j) rows<kType, 1>(w, w_stride, j, x, out, m);
}

}  // namespace

void quantize_row(const float* x, int64_t k, int32_t offset, int8_t* qs, float* d, int32_t* corr) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < k / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    __m256 v[4], amax_v = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(xb + 8 * i);
      amax_v = _mm256_max_ps(amax_v, _mm256_and_ps(v[i], abs_mask));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax_v), _mm256_extractf128_ps(amax_v, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    const float amax = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    const __m256 scale = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], scale));
    // packs interleaves 128-bit lanes; the permute restores element order.
    const __m256i packed =
        _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(qs + b * kQuantBlock),
        _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    d[b] = amax / 127.0f;
    corr[b] = -offset *
              hsum(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
  }
}

void matmul(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
            const QuantizedRows& x, float* out, int64_t m) {
  with_quantized_type(dtype,
                      [&](auto type) { range<type()>(w, w_stride, first, last, x, out, m); });
}

}  // namespace baton::cpu::avx2
