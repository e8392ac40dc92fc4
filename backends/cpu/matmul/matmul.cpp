#include "backends/cpu/matmul/matmul.h"

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul_float.h"

namespace baton::cpu {

bool is_weight_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ8_0:
    case DType::kQ4_0:
      return true;
    default:
      return false;
  }
}

void matmul(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  if (is_quantized(w.dtype())) return matmul_quantized(ctx, x, w, out);
  return matmul_float(ctx, x, w, out);
}

std::string describe_matmul_paths(bool prepacked) {
  std::string quantized;
  switch (active_isa()) {
    case Isa::kAvx512:
      quantized =
          "x quantized to int8 blocks; AVX-512 VNNI GEMV up to 4 rows of x, VNNI GEMM above";
      break;
    case Isa::kAvx2:
      quantized = "x quantized to int8 blocks; AVX2 maddubs kernel";
      break;
    case Isa::kGeneric:
      quantized = "generic kernel, weights dequantized to f32";
      break;
  }
  return describe_float_matmul_paths(prepacked) + "q8_0, q4_0 weights: " + quantized +
         ", on the file's blocks in place\n";
}

}  // namespace baton::cpu
