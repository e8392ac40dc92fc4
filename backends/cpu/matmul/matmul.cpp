#include "backends/cpu/matmul/matmul.h"

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/kquant.h"
#include "backends/cpu/matmul/matmul_float.h"
#include "backends/cpu/matmul/quantized.h"

namespace baton::cpu {

bool is_weight_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kI8Row:
    case DType::kI4G32:
    case DType::kI4G128:
    case DType::kF8Row:
      return true;
    default:
      return false;
  }
}

void matmul(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  switch (w.dtype()) {
    case DType::kQ8_0:
    case DType::kQ4_0:
    // Q4_1, Q5_0, Q5_1: what K-quant files fall back to for rows that are not whole 256s.
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kI8Row:
    case DType::kI4G32:
    case DType::kI4G128:
      return matmul_quantized(ctx, x, w, out);
    default:
      if (is_kquant(w.dtype())) return matmul_kquant(ctx, x, w, out);
      return matmul_float(ctx, x, w, out);
  }
}

std::string describe_matmul_path(DType dtype, bool prepacked) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kF8Row:
      return describe_float_matmul_path(dtype, prepacked);
    default:
      break;
  }
  const Isa isa = active_isa();
  if (isa == Isa::kGeneric) return "generic kernel, weights dequantized to f32";
  const std::string quantized = "x quantized to int8 blocks; ";
  if (prepacked && (dtype == DType::kQ4_0 || dtype == DType::kQ8_0)) {
    return quantized + (isa == Isa::kAvx512 ? "AVX-512 VNNI" : "AVX2 maddubs") +
           " kernel for any rows of x on panels of 32 weight rows, repacked at first use in "
           "place of the file's blocks";
  }
  const bool kquant = is_kquant(dtype);
  const bool rows = dtype == DType::kI8Row || dtype == DType::kI4G32 || dtype == DType::kI4G128;
  const std::string layout = kquant ? "super-blocks" : rows ? "rows" : "blocks";
  if (isa == Isa::kAvx2)
    return quantized + "AVX2 maddubs kernel, on the file's " + layout + " in place";
  return quantized + "AVX-512 VNNI GEMV up to " + std::to_string(kGemvMaxRows) +
         " rows of x, VNNI GEMM" + (kquant ? " on unpacked panels of 32 weight rows" : "") +
         " above, on the file's " + layout + " in place";
}

std::string describe_matmul_paths(bool prepacked) {
  std::string out;
  for (DType dtype :
       {DType::kF32, DType::kF16, DType::kBF16, DType::kF8Row, DType::kQ8_0, DType::kQ4_0,
        DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kI8Row, DType::kI4G32, DType::kI4G128,
        DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    out += std::string(to_string(dtype)) + " weights: " + describe_matmul_path(dtype, prepacked) +
           "\n";
  }
  return out;
}

}  // namespace baton::cpu
