// Row gathers: embedding (decoding any weight dtype) and get_rows (f32).

#include <cstring>
#include <string>

#include "backends/cpu/cpu_dequantize.h"
#include "backends/cpu/cpu_kernels.h"
#include "baton/error.h"

namespace baton::cpu {
namespace {

// Indices are checked before the parallel loop: an exception must not leave an OpenMP region.
void check_indices(const Tensor& indices, int64_t limit, const char* what) {
  const int32_t* p = indices.data<int32_t>();
  for (int64_t i = 0; i < indices.dim(0); ++i) {
    if (p[i] < 0 || p[i] >= limit) {
      throw Error(ErrorCategory::kInvalidArgument,
                  std::string(what) + " " + std::to_string(p[i]) + " at index " +
                      std::to_string(i) + " is outside the " + std::to_string(limit) + " rows");
    }
  }
}

}  // namespace

void embedding(const Context& ctx, const Tensor& table, const Tensor& ids, const Tensor& out) {
  check_indices(ids, table.dim(0), "embedding id");
  const int64_t n = ids.dim(0), dim = table.dim(1);
  const size_t row_bytes = table.row_bytes();
  const int32_t* id = ids.data<int32_t>();
  with_row_decoder(table.dtype(), [&](auto row) {
    using Row = decltype(row);
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      decode_row<Row>(table.materialize() + row_bytes * static_cast<size_t>(id[i]), dim,
                      out.data<float>() + i * dim);
    }
  });
}

void get_rows(const Context& ctx, const Tensor& x, const Tensor& rows, const Tensor& out) {
  check_indices(rows, x.dim(0), "get_rows row");
  const int64_t m = rows.dim(0), d = x.dim(1);
  const int32_t* r = rows.data<int32_t>();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    std::memcpy(out.data<float>() + i * d, x.data<float>() + r[i] * d,
                static_cast<size_t>(d) * sizeof(float));
  }
}

}  // namespace baton::cpu
