// AVX2: activation quantization and the Q8_0 / Q4_0 matmul for machines without AVX-512.
//
// One ymm holds one block. maddubs multiplies unsigned weight bytes by signed x bytes into
// int16 pairs (no saturation: |w| <= 128 or nibbles <= 15, |x| <= 127), madd widens to int32,
// and the 8 lanes are scaled by d_w * d_x and summed horizontally once per output. A tile of kX
// x rows by kW weight rows reuses each loaded block across x rows.

#include <immintrin.h>

#include <algorithm>

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

template <bool kQ4, int kX, int kWr>
void tile(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, int64_t x0,
          float* out, int64_t m) {
  constexpr size_t kBlockBytes = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[kX][kWr];
  for (auto& row : acc) {
    for (__m256& a : row) a = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < x.blocks; ++b) {
    __m256i u[kWr], sign[kWr];  // Q8_0 moves the sign of w onto x, as maddubs needs w >= 0
    float dw[kWr];
    for (int j = 0; j < kWr; ++j) {
      const std::byte* p = w + static_cast<size_t>(j0 + j) * w_stride + b * kBlockBytes;
      if constexpr (kQ4) {
        const auto* block = reinterpret_cast<const BlockQ4_0*>(p);
        const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block->qs));
        u[j] =
            _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(qs, 4), qs), _mm256_set1_epi8(0x0f));
        dw[j] = _cvtsh_ss(block->d);
      } else {
        const auto* block = reinterpret_cast<const BlockQ8_0*>(p);
        sign[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block->qs));
        u[j] = _mm256_abs_epi8(sign[j]);
        dw[j] = _cvtsh_ss(block->d);
      }
    }
    for (int i = 0; i < kX; ++i) {
      const int64_t r = x0 + i;
      const __m256i xq =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs_row(r) + b * kQuantBlock));
      const float dx = x.d_row(r)[b];
      const __m256i corr = _mm256_setr_epi32(kQ4 ? x.corr_row(r)[b] : 0, 0, 0, 0, 0, 0, 0, 0);
      for (int j = 0; j < kWr; ++j) {
        const __m256i xs = kQ4 ? xq : _mm256_sign_epi8(xq, sign[j]);
        __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(u[j], xs), ones);
        if constexpr (kQ4) dot = _mm256_add_epi32(dot, corr);
        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(dw[j] * dx), acc[i][j]);
      }
    }
  }
  for (int i = 0; i < kX; ++i) {
    for (int j = 0; j < kWr; ++j) out[(x0 + i) * m + j0 + j] = SimdAvx2::reduce_add(acc[i][j]);
  }
}

template <bool kQ4, int kWr>
void rows(const std::byte* w, size_t w_stride, int64_t j0, const QuantizedRows& x, float* out,
          int64_t m) {
  for (int64_t x0 = 0; x0 < x.n; x0 += kMaxX) {
    switch (std::min<int64_t>(kMaxX, x.n - x0)) {
      case 1:
        tile<kQ4, 1, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 2:
        tile<kQ4, 2, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      case 3:
        tile<kQ4, 3, kWr>(w, w_stride, j0, x, x0, out, m);
        break;
      default:
        tile<kQ4, 4, kWr>(w, w_stride, j0, x, x0, out, m);
    }
  }
}

template <bool kQ4>
void range(const std::byte* w, size_t w_stride, int64_t first, int64_t last, const QuantizedRows& x,
           float* out, int64_t m) {
  int64_t j = first;
  for (; j + kW <= last; j += kW) rows<kQ4, kW>(w, w_stride, j, x, out, m);
  for (; j < last; ++j) rows<kQ4, 1>(w, w_stride, j, x, out, m);
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
  if (dtype == DType::kQ4_0) return range<true>(w, w_stride, first, last, x, out, m);
  range<false>(w, w_stride, first, last, x, out, m);
}

}  // namespace baton::cpu::avx2
