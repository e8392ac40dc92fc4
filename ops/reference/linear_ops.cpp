// Reference matmul and the row-gathering ops (embedding, get_rows).

#include <vector>

#include "ops/reference.h"
#include "ops/reference/checks.h"

namespace baton::reference {

using detail::require;
using detail::require_input;
using detail::require_rank;
using detail::require_shape;

void matmul(const Tensor& x, const Tensor& w, const Tensor& out) {
  require_input(x, DType::kF32, "matmul x");
  require_rank(x, 2, "matmul x");
  require_rank(w, 2, "matmul weight");
  require(w.dim(1) == x.dim(1),
          "matmul weight " + to_string(w.shape()) + " does not match x " + to_string(x.shape()));
  require_input(out, DType::kF32, "matmul output");
  require_shape(out, {x.dim(0), w.dim(0)}, "matmul output");
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const float* xs = x.data<float>();
  float* o = out.data<float>();
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t j = 0; j < m; ++j) {
    dequantize_row(w, j, row.data());
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int64_t c = 0; c < k; ++c) sum += static_cast<double>(xs[i * k + c]) * row[c];
      o[i * m + j] = static_cast<float>(sum);
    }
  }
}

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out) {
  require_rank(table, 2, "embedding table");
  require_input(ids, DType::kI32, "embedding ids");
  require_rank(ids, 1, "embedding ids");
  require_input(out, DType::kF32, "embedding output");
  require_shape(out, {ids.dim(0), table.dim(1)}, "embedding output");
  const int32_t* id = ids.data<int32_t>();
  for (int64_t i = 0; i < ids.dim(0); ++i) {
    require(id[i] >= 0 && id[i] < table.dim(0),
            "embedding id " + std::to_string(id[i]) + " at index " + std::to_string(i) +
                " is outside the table's " + std::to_string(table.dim(0)) + " rows");
    dequantize_row(table, id[i], out.data<float>() + i * table.dim(1));
  }
}

void get_rows(const Tensor& x, const Tensor& rows, const Tensor& out) {
  require_input(x, DType::kF32, "get_rows x");
  require_rank(x, 2, "get_rows x");
  require_input(rows, DType::kI32, "get_rows rows");
  require_rank(rows, 1, "get_rows rows");
  require_input(out, DType::kF32, "get_rows output");
  require_shape(out, {rows.dim(0), x.dim(1)}, "get_rows output");
  const int64_t d = x.dim(1);
  const int32_t* r = rows.data<int32_t>();
  for (int64_t i = 0; i < rows.dim(0); ++i) {
    require(r[i] >= 0 && r[i] < x.dim(0), "get_rows row " + std::to_string(r[i]) + " at index " +
                                              std::to_string(i) + " is outside x's " +
                                              std::to_string(x.dim(0)) + " rows");
    for (int64_t c = 0; c < d; ++c) out.data<float>()[i * d + c] = x.data<float>()[r[i] * d + c];
  }
}

}  // namespace baton::reference
