// K-quant matmul: picks the ISA's kernels, quantizes x once (with its group sums), and hands
// threads disjoint ranges of weight rows read in place from the (memory-mapped) GGUF data.
//
// As in matmul_quantized.cpp, each kernel computes an output with the same instruction sequence
// wherever its range starts, so 1 and N threads agree bit for bit.

#include <omp.h>

#include <algorithm>

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/kquant.h"
#include "backends/cpu/matmul/matmul.h"
#include "backends/cpu/stealing_split.h"

namespace baton::cpu {
namespace {

struct Kernels {
  QuantizeRowFn quantize_row;
  KQuantKernelFn kernel;
  int64_t chunk;  // weight rows per unit of parallel work
};

Kernels choose_kernels(Isa isa, int64_t n) {
  if (isa == Isa::kAvx512) {
    if (n <= kGemvMaxRows) return {avx512::quantize_row, avx512::kquant_gemv, kGemvChunk};
    return {avx512::quantize_row, avx512::kquant_gemm, avx512::kKQuantPanel};
  }
  return {avx2::quantize_row, avx2::kquant_matmul, kGemvChunk};
}

// d_x * Σ q for each group of x row r.
void group_sums(KQuantRows& x, int64_t r) {
  const int8_t* q = x.q.qs_row(r);
  const float* d = x.q.d_row(r);
  float* sums = x.group_sums.get() + r * x.groups;
  for (int64_t g = 0; g < x.groups; ++g) {
    int32_t sum = 0;
    for (int64_t i = 0; i < kGroup; ++i) sum += q[g * kGroup + i];
    sums[g] = d[g * kGroup / kQuantBlock] * static_cast<float>(sum);
  }
}

}  // namespace

bool is_kquant(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return true;
    default:
      return false;
  }
}

void matmul_kquant(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  const Isa isa = active_isa();
  if (isa == Isa::kGeneric) return matmul_generic(ctx, x, w, out);

  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const Kernels kernels = choose_kernels(isa, n);
  KQuantRows xq(n, k);
  const float* xp = x.data<float>();
  const std::byte* wp = w.materialize();
  const size_t w_stride = w.row_bytes();
  float* op = out.data<float>();
  StealingSplit split((m + kernels.chunk - 1) / kernels.chunk, ctx.threads);
#pragma omp parallel num_threads(ctx.threads)
  {
#pragma omp for
    for (int64_t r = 0; r < n; ++r) {
      // Offset 0: the offsets are applied through group_sums, not through corr.
      kernels.quantize_row(xp + r * k, k, 0, xq.q.qs.get() + r * k, xq.q.d.get() + r * xq.q.blocks,
                           xq.q.corr.get() + r * xq.q.blocks);
      group_sums(xq, r);
    }
    const int thread = omp_get_thread_num();
    for (int64_t c; (c = split.next(thread)) >= 0;) {
      const int64_t first = c * kernels.chunk, last = std::min(m, first + kernels.chunk);
      kernels.kernel(w.dtype(), wp, w_stride, first, last, xq, op, m);
    }
  }
}

}  // namespace baton::cpu
