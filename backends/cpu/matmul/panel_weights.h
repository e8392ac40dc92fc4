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

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/tensor.h"

namespace baton::cpu {

constexpr int64_t kPanelRows = 32;

// Bytes of one panel block: 32 fp16 scales and the quants of 32 rows x 32 elements.
constexpr size_t panel_block_bytes(DType dtype) {
  return 64 + (dtype == DType::kQ4_0 ? 512 : 1024);
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
