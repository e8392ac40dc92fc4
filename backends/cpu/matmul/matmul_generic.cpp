// The portable matmul: out[n, m] = x[n, k] · w[m, k]ᵀ for every weight dtype, fp32
// accumulation, in plain C++ the compiler vectorises for baseline x86-64.
//
// Threads take chunks of output columns (weight rows) dynamically, so a thread slowed by other
// load does not hold up the step; which thread computes a column never changes its value.
// Within a chunk, x is taken kRowBlock rows at a time and every weight row of the chunk is
// decoded once per block, so a quantized weight is decoded n / kRowBlock times rather than n
// times, and the chunk's weight rows stay in cache while the x blocks stream past.

#include <algorithm>

#include "backends/cpu/cpu_dequantize.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/matmul/matmul.h"

namespace baton::cpu {
namespace {

constexpr int kRowBlock = 4;       // x rows sharing one decode of a weight chunk
constexpr int kLanes = 8;          // independent partial sums per dot, so the loop vectorises
constexpr int64_t kColChunk = 16;  // weight rows per unit of parallel work

// out[r * out_stride] = w_row · x[r] for the n_x <= kRowBlock rows x[r] = x + r * k.
template <typename Row>
void row_dot(const std::byte* w_row, const float* x, int n_x, int64_t k, float* out,
             int64_t out_stride) {
  float acc[kRowBlock][kLanes] = {};
  float tmp[kChunk];
  int64_t c = 0;
  for (; c + kChunk <= k; c += kChunk) {
    const float* wc = Row::decode(w_row, c, kChunk, tmp);
    for (int r = 0; r < n_x; ++r) {
      const float* xc = x + r * k + c;
      for (int64_t i = 0; i < kChunk; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) acc[r][l] += wc[i + l] * xc[i + l];
      }
    }
  }
  if (c < k) {  // a partial chunk: only plain dtypes have row lengths that are not whole blocks
    const float* wc = Row::decode(w_row, c, k - c, tmp);
    for (int r = 0; r < n_x; ++r) {
      for (int64_t i = 0; i < k - c; ++i) acc[r][i % kLanes] += wc[i] * x[r * k + c + i];
    }
  }
  for (int r = 0; r < n_x; ++r) {
    float sum = 0.0f;
    for (int l = 0; l < kLanes; ++l) sum += acc[r][l];
    out[r * out_stride] = sum;
  }
}

template <typename Row>
void matmul_rows(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const size_t w_stride = w.row_bytes();
  const std::byte* wp = w.materialize();
  const float* xp = x.data<float>();
  float* op = out.data<float>();
  const int64_t chunks = (m + kColChunk - 1) / kColChunk;
#pragma omp parallel for num_threads(ctx.threads) schedule(dynamic)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t first = chunk * kColChunk, last = std::min(m, first + kColChunk);
    for (int64_t r0 = 0; r0 < n; r0 += kRowBlock) {
      const int n_x = static_cast<int>(std::min<int64_t>(kRowBlock, n - r0));
      for (int64_t j = first; j < last; ++j) {
        row_dot<Row>(wp + w_stride * static_cast<size_t>(j), xp + r0 * k, n_x, k, op + r0 * m + j,
                     m);
      }
    }
  }
}

}  // namespace

void matmul_generic(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  with_row_decoder(w.dtype(), [&](auto row) { matmul_rows<decltype(row)>(ctx, x, w, out); });
}

}  // namespace baton::cpu
