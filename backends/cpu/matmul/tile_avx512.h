#pragma once

// What the AVX-512 VNNI GEMM kernels share: the intrinsics, and the store of a tile of kRows
// rows of x by 32 output columns held in two zmm per row. Include only from sources built with
// the avx512 flags.

// GCC 12 warns that the undefined-vector idiom inside its own AVX-512 intrinsics is used
// uninitialized (GCC bug 105593); the warning is about the header, not about callers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__  // clang has no such warning, and warns that it does not know the name
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

namespace baton::cpu::avx512 {

// out[(r0 + r) * m + j0 + c] = acc[r][c / 16] lane c % 16, for r < kRows and c < cols (<= 32).
template <int kRows>
inline void store_tile(const __m512 (&acc)[kRows][2], float* out, int64_t m, int64_t r0, int64_t j0,
                       int cols) {
  const __mmask16 m0 = cols >= 16 ? 0xffff : (1u << cols) - 1;
  const __mmask16 m1 = cols >= 32 ? 0xffff : cols > 16 ? (1u << (cols - 16)) - 1 : 0;
  for (int r = 0; r < kRows; ++r) {
    float* o = out + (r0 + r) * m + j0;
    _mm512_mask_storeu_ps(o, m0, acc[r][0]);
    _mm512_mask_storeu_ps(o + 16, m1, acc[r][1]);
  }
}

}  // namespace baton::cpu::avx512
