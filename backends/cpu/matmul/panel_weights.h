#pragma once

// Q4_0 and Q8_0 weights repacked once into panels of 32 weight rows for the panel kernels
// (matmul/panel_matmul_avx512.cpp with VNNI, matmul/panel_matmul_avx2.cpp with maddubs, reading
// each zmm as two ymm of 8 rows), which then serve every number of rows of x: decode, batched
// decode and prefill.
//
// In the GGUF layout each block is one row's 32 quants, so a kernel multiplying several rows of
// x either sums lanes horizontally per block or packs panels on every call. Here a panel block
// holds 32 rows' quants of one 32-element block, 4 bytes per row per zmm lane, so one vpdpbusd
// multiplies 16 weight rows by 4 broadcast bytes of x and lanes are output columns. Per block:
//   - 32 fp16 scales (64 bytes), row j at position j;
//   - Q4_0: 4 x 2 zmm; zmm (t, h) lane l holds bytes 4t .. 4t+3 of row 16h + l's qs, whose low
//     nibbles are elements 4t .. 4t+3 and high nibbles elements 16+4t .. 16+4t+3, unchanged
//     from GGUF (codes w + 8), so the repacked weights are exactly as large as the original;
//   - Q8_0: 8 x 2 zmm; zmm (g, h) lane l holds elements 4g .. 4g+3 of row 16h + l as w + 128.
// Panels are contiguous, block after block, so each thread streams one run of memory.
//
// The copy replaces the mapped original in memory: once packed, the original's pages are given
// back (they stay mapped and read back from the file if another path needs them). Weights are
// repacked at their first matmul, not at import, so a table only the embedding reads is never
// copied.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "core/runtime/tensor.h"

namespace baton::cpu {

constexpr int64_t kPanelRows = 32;

// Bytes of one panel block: 32 fp16 scales and the quants of 32 rows x 32 elements.
constexpr size_t panel_block_bytes(DType dtype) {
  return 64 + (dtype == DType::kQ4_0 ? 512 : 1024);
}

// The walk every level's panel kernel shares: calls rows(nibbles, panel, j0, cols) for panels
// [first, last) of a Q4_0 (nibbles: std::true_type) or Q8_0 (std::false_type) weight with m rows
// and `blocks` blocks per row; the panel holds weight rows [j0, j0 + cols).
template <typename Rows>
void for_each_panel(DType dtype, const std::byte* panels, int64_t first, int64_t last,
                    int64_t blocks, int64_t m, Rows&& rows) {
  const auto walk = [&](auto nibbles) {
    const size_t panel_bytes = static_cast<size_t>(blocks) * panel_block_bytes(dtype);
    for (int64_t p = first; p < last; ++p) {
      const int64_t j0 = p * kPanelRows;
      rows(nibbles, panels + p * panel_bytes, j0,
           static_cast<int>(std::min<int64_t>(kPanelRows, m - j0)));
    }
  };
  if (dtype == DType::kQ4_0) return walk(std::true_type{});
  walk(std::false_type{});
}

class PanelWeights {
 public:
  PanelWeights();
  ~PanelWeights();
  PanelWeights(const PanelWeights&) = delete;
  PanelWeights& operator=(const PanelWeights&) = delete;

  // w's panels (panel p, block b at (p * blocks + b) * panel_block_bytes), repacking w with
  // `threads` OpenMP threads the first time; null for anything but a 2-D Q4_0 or Q8_0 host
  // tensor. Only the AVX-512 and AVX2 kernels read panels: call it when they run.
  const std::byte* find_or_add(const Tensor& w, int threads);

  size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::cpu
