// Q8_0 / Q4_0 / int8 / int4 matmul: picks the ISA's kernels, quantizes x once, and hands threads
// disjoint ranges of weight rows, read from Q4_0 / Q8_0's repacked panels on AVX-512 and AVX2
// (when the backend prepacks) and otherwise in place from the (memory-mapped) GGUF data.
//
// Which thread computes a column never changes its value: each kernel computes an output with
// the same instruction sequence wherever its range starts, so 1 and N threads agree bit for bit.

#include <omp.h>

#include <algorithm>

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul.h"
#include "backends/cpu/matmul/panel_weights.h"
#include "backends/cpu/matmul/quantized.h"
#include "backends/cpu/stealing_split.h"

namespace baton::cpu {
namespace {

struct Kernels {
  QuantizeRowFn quantize_row;
  QuantizedKernelFn kernel;
  int64_t chunk;  // weight rows per unit of parallel work
};

Kernels choose_kernels(Isa isa, int64_t n) {
  if (isa == Isa::kAvx512) {
    if (n <= kGemvMaxRows) return {avx512::quantize_row, avx512::gemv, kGemvChunk};
    return {avx512::quantize_row, avx512::gemm, avx512::kGemmPanel};
  }
  return {avx2::quantize_row, avx2::matmul, kGemvChunk};
}

}  // namespace

void matmul_quantized(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  const Isa isa = active_isa();
  if (isa == Isa::kGeneric) return matmul_generic(ctx, x, w, out);

  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const std::byte* panels = ctx.panels ? ctx.panels->find_or_add(w, ctx.threads) : nullptr;
  const auto panel_matmul = isa == Isa::kAvx512 ? avx512::panel_matmul : avx2::panel_matmul;
  const Kernels kernels = choose_kernels(isa, n);
  const int32_t offset = weight_offset(w.dtype());
  QuantizedRows xq(n, k);
  const float* xp = x.data<float>();
  const std::byte* wp = w.materialize();
  const size_t w_stride = w.row_bytes();
  float* op = out.data<float>();
  const int64_t chunk = panels ? kPanelRows : kernels.chunk;
  StealingSplit split((m + chunk - 1) / chunk, ctx.threads);
#pragma omp parallel num_threads(ctx.threads)
  {
#pragma omp for
    for (int64_t r = 0; r < n; ++r) {
      kernels.quantize_row(xp + r * k, k, offset, xq.qs.get() + r * k, xq.d.get() + r * xq.blocks,
                           xq.corr.get() + r * xq.blocks);
    }
    const int thread = omp_get_thread_num();
    for (int64_t c; (c = split.next(thread)) >= 0;) {
      if (panels) {
        panel_matmul(w.dtype(), panels, c, c + 1, xq, op, m);
        continue;
      }
      const int64_t first = c * chunk, last = std::min(m, first + chunk);
      kernels.kernel(w.dtype(), wp, w_stride, first, last, xq, op, m);
    }
  }
}

}  // namespace baton::cpu
