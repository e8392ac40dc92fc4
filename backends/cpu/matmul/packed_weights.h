#pragma once

// Prefill GEMM for float weights through oneDNN, on copies of the weights reordered once (at
// import_tensor) into the layout oneDNN's matmul prefers; on plain row-major weights it is
// several times slower. The copies are keyed by the weight's data pointer, owned by one backend
// instance, and reached from kernels through Context::packed.
//
// F16 and BF16 weights are packed for the best GEMM oneDNN has on this host (asked of oneDNN, see
// packed_gemm_dtype):
//   - bf16 (AVX-512 BF16, AMX): a bf16 copy, x rounded to bf16 per call, fp32 accumulation and
//     output. F16 weights lose their 3 low mantissa bits, and each product carries up to ~2^-8
//     relative error from each rounding;
//   - f32 (AVX2 and AVX-512 without BF16, where oneDNN's bf16 matmul is its reference kernel):
//     an f32 copy, widened exactly, twice the size of the file's weights; the GEMM is fp32.
// F32 weights are not packed (see packed_weights.cpp).
//
// oneDNN runs on OpenMP with the caller's thread count; a GEMM may split its reduction
// differently for other thread counts, so results with 1 and N threads can differ in the last
// bits (the GEMV kernels agree bit for bit).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/runtime/tensor.h"

namespace baton::cpu {

// The element type of the packed copy and GEMM for an F16 or BF16 weight [m, k] on this host:
// kBF16, kF32, or nullopt where oneDNN has only its reference kernel (then nothing is packed).
std::optional<DType> packed_gemm_dtype(int64_t m, int64_t k);

class PackedWeights {
 public:
  // Copies add up to at most `budget_bytes`; past it a weight stays on the GEMV, so a model whose
  // copies do not fit beside it still loads (an f32 copy is twice an F16 file's bytes). The CPU
  // backend gives half of the physical memory.
  explicit PackedWeights(size_t budget_bytes = SIZE_MAX);
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  // Packs a 2-D F16 or BF16 host tensor with `threads` OpenMP threads, on a thread of its own
  // (run_on_passing_thread); returns false and keeps nothing for other tensors, where
  // packed_gemm_dtype is nullopt, and past the budget.
  bool add(const Tensor& w, int threads);
  // out[n, m] = x[n, k] · w[m, k]ᵀ from w's packed copy; false (out untouched) when w has none
  // or x has fewer rows than gemm_min_rows (matmul_float.h) of the copy's precision.
  bool matmul(const Tensor& x, const Tensor& w, const Tensor& out, int threads) const;

  // Bytes held by packed copies (the second copy of the weights in memory).
  size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::cpu
