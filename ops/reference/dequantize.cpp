#include <string>

#include "baton/error.h"
#include "ops/reference.h"

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
  const DequantizeRow decode = traits(t.dtype()).dequantize;
  if (decode == nullptr) {
    throw Error(ErrorCategory::kUnsupported,
                "cannot dequantize dtype " + std::string(to_string(t.dtype())));
  }
  decode(src, n, out);
}

}  // namespace baton::reference
