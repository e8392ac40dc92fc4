#include "backends/cpu/matmul/matmul.h"

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

}  // namespace baton::cpu
