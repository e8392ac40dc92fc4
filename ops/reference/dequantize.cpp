#include <string>

#include "baton/error.h"
#include "core/fp8.h"
#include "core/half.h"
#include "ops/reference.h"
#include "ops/reference/dequantize_blocks.h"

namespace baton::reference {

void dequantize_row(const Tensor& t, int64_t row, float* out) {
  if (!t.defined() || !t.buffer()->is_host()) {
    throw Error(ErrorCategory::kInvalidArgument, "dequantize_row needs a host tensor");
  }
  if (row < 0 || row >= t.rows()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "row " + std::to_string(row) + " out of range for " + to_string(t.shape()));
  }
  const int64_t n = t.row_length();
  const std::byte* src = t.materialize() + t.row_bytes() * static_cast<size_t>(row);
  switch (t.dtype()) {
    case DType::kF32: {
      const auto* p = reinterpret_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) out[i] = p[i];
      return;
    }
    case DType::kF16: {
      const auto* p = reinterpret_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) out[i] = fp16_to_fp32(p[i]);
      return;
    }
    case DType::kF8E4M3: {
      const auto* p = reinterpret_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) out[i] = fp8_e4m3_to_fp32(p[i]);
      return;
    }
    case DType::kBF16: {
      const auto* p = reinterpret_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(p[i]);
      return;
    }
    case DType::kQ8_0: {
      const auto* blocks = reinterpret_cast<const BlockQ8_0*>(src);
      for (int64_t i = 0; i < n; ++i) {
        const BlockQ8_0& b = blocks[i / kQK8_0];
        out[i] = fp16_to_fp32(b.d) * static_cast<float>(b.qs[i % kQK8_0]);
      }
      return;
    }
    case DType::kQ4_0: {
      const auto* blocks = reinterpret_cast<const BlockQ4_0*>(src);
      constexpr int64_t kHalf = kQK4_0 / 2;
      for (int64_t i = 0; i < n; ++i) {
        const BlockQ4_0& b = blocks[i / kQK4_0];
        const int64_t j = i % kQK4_0;
        const int q = j < kHalf ? (b.qs[j] & 0x0f) : (b.qs[j - kHalf] >> 4);
        out[i] = fp16_to_fp32(b.d) * static_cast<float>(q - 8);
      }
      return;
    }
    case DType::kQ4_1:
      return dequantize_q4_1(src, n, out);
    case DType::kQ5_0:
      return dequantize_q5_0(src, n, out);
    case DType::kQ5_1:
      return dequantize_q5_1(src, n, out);
    case DType::kQ2_K:
      return dequantize_q2_k(src, n, out);
    case DType::kQ3_K:
      return dequantize_q3_k(src, n, out);
    case DType::kQ4_K:
      return dequantize_q4_k(src, n, out);
    case DType::kQ5_K:
      return dequantize_q5_k(src, n, out);
    case DType::kQ6_K:
      return dequantize_q6_k(src, n, out);
    case DType::kI8Row:
    case DType::kI8Scaled:
      return dequantize_int8(src, n, out);
    case DType::kF8Row:
      return dequantize_fp8(src, n, out);
    case DType::kI4G32:
    case DType::kI4G128:
      return dequantize_int4(t.dtype(), src, n, out);
    default:
      throw Error(ErrorCategory::kUnsupported,
                  "cannot dequantize dtype " + std::string(to_string(t.dtype())));
  }
}

}  // namespace baton::reference
