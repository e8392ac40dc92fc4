// Float-weight matmul: picks oneDNN's GEMM on a packed copy for many rows of x, else the GEMV
// kernel of the active ISA level.

#include "backends/cpu/matmul/matmul_float.h"

#include <utility>

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul.h"
#include "backends/cpu/matmul/packed_weights.h"

namespace baton::cpu {

void matmul_float(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  if (x.dim(0) >= kGemmMinRows && ctx.packed && ctx.packed->matmul(x, w, out, ctx.threads)) return;
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512::float_gemv(ctx, x, w, out);
    case Isa::kAvx2:
      return avx2::float_gemv(ctx, x, w, out);
    case Isa::kGeneric:
      return matmul_generic(ctx, x, w, out);
  }
}

std::string describe_float_matmul_paths(bool prepacked) {
  const std::string decode =
      std::string(to_string(active_isa())) + " GEMV on the weights as loaded";
  const std::pair<const char*, const char*> kPaths[] = {{"f16", "bf16 (x and w rounded to bf16)"},
                                                        {"bf16", "bf16 (x rounded to bf16)"}};
  std::string out = "f32 weights: " + decode + " at every batch size (batch-invariant)\n";
  out += "fp8 weights: " + decode + " (E4M3 widened exactly to f32) at every batch size\n";
  for (const auto& [dtype, gemm] : kPaths) {
    out += std::string(dtype) + " weights: " + decode;
    if (prepacked) {
      out += "; from " + std::to_string(kGemmMinRows) + " rows of x, oneDNN " + gemm +
             " GEMM on a prepacked copy";
    }
    out += "\n";
  }
  return out;
}

}  // namespace baton::cpu
