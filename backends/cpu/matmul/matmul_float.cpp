// Float-weight matmul: picks oneDNN's GEMM on a packed copy for many rows of x, else the GEMV
// kernel of the active ISA level.

#include "backends/cpu/matmul/matmul_float.h"

#include <optional>

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul.h"
#include "backends/cpu/matmul/packed_weights.h"

namespace baton::cpu {

void matmul_float(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  if (ctx.packed && ctx.packed->matmul(x, w, out, ctx.threads)) return;
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512::float_gemv(ctx, x, w, out);
    case Isa::kAvx2:
      return avx2::float_gemv(ctx, x, w, out);
    case Isa::kGeneric:
      return matmul_generic(ctx, x, w, out);
  }
}

std::string describe_float_matmul_path(DType dtype, bool prepacked) {
  const std::string decode =
      std::string(to_string(active_isa())) + " GEMV on the weights as loaded";
  if (dtype == DType::kF32) return decode + " at every batch size (batch-invariant)";
  if (dtype == DType::kF8Row) return decode + " (E4M3 widened exactly to f32) at every batch size";
  if (!prepacked) return decode + " at every batch size";
  // What oneDNN picks for a TinyLlama-sized FFN weight; add() asks again for each weight's shape.
  const std::optional<DType> gemm = packed_gemm_dtype(5632, 2048);
  if (!gemm) return decode + " at every batch size (oneDNN has only reference GEMMs here)";
  const std::string from =
      decode + "; from " + std::to_string(gemm_min_rows(*gemm)) + " rows of x, ";
  if (*gemm == DType::kBF16) {
    return from + "oneDNN bf16 GEMM (x" + (dtype == DType::kF16 ? " and w" : "") +
           " rounded to bf16) on a prepacked bf16 copy";
  }
  return from +
         "oneDNN f32 GEMM on a prepacked f32 copy (widened exactly, twice the file's bytes; "
         "oneDNN has only a reference bf16 kernel here)";
}

}  // namespace baton::cpu
