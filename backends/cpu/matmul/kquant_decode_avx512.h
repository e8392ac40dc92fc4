#pragma once

// AVX-512 decoders of the K-quant super-blocks into the form of kquant.h: per super-block a
// scale s and an offset o for each of its 16 groups (lane g of a zmm), and the unsigned codes u
// of elements 64c .. 64c + 63 (chunk c = 0..3) in element order, one byte each. kScaleRun says
// how many elements share one (s, o): 32 for Q4_K / Q5_K, 16 otherwise. Include only from
// sources built with the avx512 flags.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/runtime/dtype.h"

// GCC 12 reports the undefined-vector idiom inside its own AVX-512 intrinsics as uninitialized
// (GCC bug 105593) wherever they are inlined; this header is included only by avx512 kernels.
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__  // clang has no such warning, and warns that it does not know the name
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace baton::cpu::avx512 {

// Bytes [p, p + 32) in both halves of a zmm.
inline __m512i broadcast32(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// v's lower 32 bytes shifted right by kLo bits and its upper 32 bytes by kHi bits, within
// 16-bit lanes (callers mask off what crosses a byte), then masked to `mask`.
template <int kLo, int kHi>
inline __m512i split_shift(__m512i v, uint8_t mask) {
  v = _mm512_srli_epi16(v, kLo);
  if constexpr (kHi != kLo) v = _mm512_mask_srli_epi16(v, 0xffff0000u, v, kHi - kLo);
  return _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(mask)));
}

// Chunk c's codes plus `high` where the element's bit is set in `bits`, the 32-byte high-bit
// array of Q3_K and Q5_K: bit 2c of bits[i] for element 64c + i, bit 2c + 1 for 64c + 32 + i.
// One bit test and one masked add, where shifting the bits into place takes four operations.
template <int kC>
inline __m512i add_high_bit(__m512i codes, const uint8_t* bits, uint8_t high) {
  const __m512i which =
      _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * kC))),
                         _mm256_set1_epi8(static_cast<char>(1 << (2 * kC + 1))), 1);
  const __mmask64 set = _mm512_test_epi8_mask(broadcast32(bits), which);
  return _mm512_mask_add_epi8(codes, set, codes, _mm512_set1_epi8(static_cast<char>(high)));
}

// Lanes g of a zmm from 16 signed or unsigned bytes.
inline __m512 bytes_to_ps(__m128i b, bool is_signed) {
  return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b));
}

inline float half(uint16_t h) {
  return _cvtsh_ss(h);
}

struct Q2KDecoder {
  static constexpr int kScaleRun = 16;
  using Block = BlockQ2_K;
  static void scales(const Block& b, __m512& s, __m512& o) {
    const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    const __m128i low = _mm_and_si128(sm, _mm_set1_epi8(15));
    const __m128i high = _mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(15));
    s = _mm512_mul_ps(_mm512_set1_ps(half(b.d)), bytes_to_ps(low, false));
    o = _mm512_mul_ps(_mm512_set1_ps(-half(b.dmin)), bytes_to_ps(high, false));
  }
  // Chunk c = 2h + p: bit pairs 2p and 2p + 1 of qs[32h ..].
  template <int kC>
  static __m512i codes(const Block& b) {
    constexpr int kP = kC % 2;
    return split_shift<4 * kP, 4 * kP + 2>(broadcast32(b.qs + 32 * (kC / 2)), 3);
  }
};

struct Q3KDecoder {
  static constexpr int kScaleRun = 16;
  using Block = BlockQ3_K;
  // The 16 six-bit scales as bytes: low nibbles from bytes 0..7, top bits from bytes 8..11
  // (core/runtime/dtype.h), four scales per 32-bit word.
  static void scales(const Block& b, __m512& s, __m512& o) {
    uint32_t a[3];
    std::memcpy(a, b.scales, sizeof(a));
    const uint32_t kLow = 0x0f0f0f0f, kTop = 0x30303030;
    const __m128i codes =
        _mm_set_epi32(static_cast<int>(((a[1] >> 4) & kLow) | ((a[2] >> 2) & kTop)),
                      static_cast<int>(((a[0] >> 4) & kLow) | (a[2] & kTop)),
                      static_cast<int>((a[1] & kLow) | ((a[2] << 2) & kTop)),
                      static_cast<int>((a[0] & kLow) | ((a[2] << 4) & kTop)));
    const __m512 signed_scale = _mm512_sub_ps(bytes_to_ps(codes, false), _mm512_set1_ps(32.0f));
    s = _mm512_mul_ps(_mm512_set1_ps(half(b.d)), signed_scale);
    o = _mm512_mul_ps(_mm512_set1_ps(-4.0f), s);
  }
  // Q2_K's bit pairs plus the third bit: bits 2c and 2c + 1 of hmask.
  template <int kC>
  static __m512i codes(const Block& b) {
    constexpr int kP = kC % 2;
    const __m512i low = split_shift<4 * kP, 4 * kP + 2>(broadcast32(b.qs + 32 * (kC / 2)), 3);
    return add_high_bit<kC>(low, b.hmask, 4);
  }
};

// Q4_K and Q5_K: 8 scales and 8 mins of 6 bits (core/runtime/dtype.h), one pair per two groups.
// Shuffles put each output byte's low bits (bytes 0..3 scales 0..3, 4..7 scales 4..7, 8..11
// mins 0..3, 12..15 mins 4..7) and, for 4..7 and 12..15, its top two bits into place.
template <typename Block>
inline void k4_scales(const Block& b, __m512& s, __m512& o) {
  // The 12 packed bytes and 4 more of the block, which the shuffles ignore.
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
  const __m128i low =
      _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i top =
      _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i low_bits =
      _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0);
  const __m128i high_nibbles = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15);
  const __m128i codes =
      _mm_or_si128(_mm_or_si128(_mm_and_si128(low, low_bits),
                                _mm_and_si128(_mm_srli_epi16(low, 4), high_nibbles)),
                   _mm_and_si128(_mm_srli_epi16(top, 2), _mm_set1_epi8(0x30)));
  // d and dmin sit side by side: lanes 0..7 d, 8..15 dmin.
  uint32_t d_dmin;
  std::memcpy(&d_dmin, &b.d, sizeof(d_dmin));
  const __m512 scale = _mm512_permutexvar_ps(
      _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
      _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_dmin)))));
  const __m512 both = _mm512_mul_ps(bytes_to_ps(codes, false), scale);
  s = _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0), both);
  o = _mm512_sub_ps(
      _mm512_setzero_ps(),
      _mm512_permutexvar_ps(
          _mm512_set_epi32(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8), both));
}

// Chunk c: sub-blocks 2c and 2c + 1, the low and high nibbles of qs[32c ..].
template <int kC>
inline __m512i k4_nibbles(const uint8_t* qs) {
  return split_shift<0, 4>(broadcast32(qs + 32 * kC), 15);
}

struct Q4KDecoder {
  static constexpr int kScaleRun = 32;
  using Block = BlockQ4_K;
  static void scales(const Block& b, __m512& s, __m512& o) { k4_scales(b, s, o); }
  template <int kC>
  static __m512i codes(const Block& b) {
    return k4_nibbles<kC>(b.qs);
  }
};

struct Q5KDecoder {
  static constexpr int kScaleRun = 32;
  using Block = BlockQ5_K;
  static void scales(const Block& b, __m512& s, __m512& o) { k4_scales(b, s, o); }
  // The fifth bit of sub-block s is bit s of qh.
  template <int kC>
  static __m512i codes(const Block& b) {
    return add_high_bit<kC>(k4_nibbles<kC>(b.qs), b.qh, 16);
  }
};

struct Q6KDecoder {
  static constexpr int kScaleRun = 16;
  using Block = BlockQ6_K;
  static void scales(const Block& b, __m512& s, __m512& o) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    s = _mm512_mul_ps(_mm512_set1_ps(half(b.d)), bytes_to_ps(sc, true));
    o = _mm512_mul_ps(_mm512_set1_ps(-32.0f), s);
  }
  // Chunk c = 2h + p: nibble p of ql[64h .. 64h + 63], and bit pairs 2p, 2p + 1 of qh[32h ..].
  template <int kC>
  static __m512i codes(const Block& b) {
    constexpr int kH = kC / 2, kP = kC % 2;
    const __m512i ql = _mm512_loadu_si512(b.ql + 64 * kH);
    const __m512i low = split_shift<4 * kP, 4 * kP>(ql, 15);
    const __m512i high = split_shift<4 * kP, 4 * kP + 2>(broadcast32(b.qh + 32 * kH), 3);
    return _mm512_or_si512(low, _mm512_slli_epi16(high, 4));
  }
};

// Calls f(Decoder{}) with the decoder of a K-quant dtype (kquant.h's is_kquant).
template <typename F>
void with_kquant_decoder(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kQ2_K:
      return f(Q2KDecoder{});
    case DType::kQ3_K:
      return f(Q3KDecoder{});
    case DType::kQ4_K:
      return f(Q4KDecoder{});
    case DType::kQ5_K:
      return f(Q5KDecoder{});
    default:
      return f(Q6KDecoder{});
  }
}

}  // namespace baton::cpu::avx512
