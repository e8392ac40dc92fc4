#include "backends/cpu/matmul/matmul.h"

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/kquant.h"
#include "backends/cpu/matmul/matmul_float.h"

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

std::string describe_matmul_paths(bool prepacked) {
  std::string quantized, kquant;
  switch (active_isa()) {
    case Isa::kAvx512:
      quantized =
          "x quantized to int8 blocks; AVX-512 VNNI GEMV up to 8 rows of x, VNNI GEMM above";
      kquant =
          "x quantized to int8 blocks; AVX-512 VNNI GEMV up to 8 rows of x, VNNI GEMM on "
          "unpacked panels of 32 weight rows above";
      break;
    case Isa::kAvx2:
      quantized = "x quantized to int8 blocks; AVX2 maddubs kernel";
      kquant = quantized;
      break;
    case Isa::kGeneric:
      quantized = "generic kernel, weights dequantized to f32";
      kquant = quantized;
      break;
  }
  const char* panel_kernel = active_isa() == Isa::kAvx512 ? "AVX-512 VNNI" : "AVX2 maddubs";
  const std::string panels =
      active_isa() != Isa::kGeneric && prepacked
          ? std::string("q8_0, q4_0 weights: x quantized to int8 blocks; ") + panel_kernel +
                " kernel for any rows of x on panels of 32 weight rows, repacked at first use "
                "in place of the file's blocks\n"
          : "";
  const std::string legacy = panels.empty() ? "q8_0, q4_0, q4_1, q5_0, q5_1" : "q4_1, q5_0, q5_1";
  return describe_float_matmul_paths(prepacked) + panels + legacy + " weights: " + quantized +
         ", on the file's blocks in place\n" + "int8, int4_g32, int4_g128 weights: " + quantized +
         ", on the file's rows in place\n" + "q2_K, q3_K, q4_K, q5_K, q6_K weights: " + kquant +
         ", on the file's super-blocks in place\n";
}

}  // namespace baton::cpu
