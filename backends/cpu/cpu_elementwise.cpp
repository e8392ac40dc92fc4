// Element-wise and row-wise ops: swiglu, add, softmax, argmax. The arithmetic is in the per-ISA
// row kernels (elementwise/); this file splits the work over threads.

#include <algorithm>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/elementwise/elementwise.h"
#include "backends/cpu/isa/cpu_isa.h"

namespace baton::cpu {
namespace {

// Elements per parallel chunk of the flat ops: large enough to amortise the loop, small enough
// to split a decode step's few thousand elements over threads. A multiple of every vector width.
constexpr int64_t kFlatChunk = 1024;

}  // namespace

const RowKernels& row_kernels() {
  switch (active_isa()) {
    case Isa::kAvx512:
      return kRowKernelsAvx512;
    case Isa::kAvx2:
      return kRowKernelsAvx2;
    case Isa::kGeneric:
      break;
  }
  return kRowKernelsGeneric;
}

void swiglu(const Context& ctx, const Tensor& gate, const Tensor& up, const Tensor& out) {
  const RowKernels& k = row_kernels();
  const int64_t n = gate.numel();
  const float* g = gate.data<float>();
  const float* u = up.data<float>();
  float* o = out.data<float>();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t i = 0; i < n; i += kFlatChunk)
    k.swiglu(g + i, u + i, o + i, std::min(kFlatChunk, n - i));
}

void add(const Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  const RowKernels& k = row_kernels();
  const int64_t d = a.row_length(), rows = a.rows();
  // b is either a's shape or one row broadcast over all of a's rows.
  const int64_t b_row_stride = b.shape() == a.shape() ? d : 0;
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    k.add(a.data<float>() + r * d, b.data<float>() + r * b_row_stride, out.data<float>() + r * d,
          d);
  }
}

void softmax(const Context& ctx, const Tensor& x, const Tensor& out) {
  const RowKernels& k = row_kernels();
  const int64_t d = x.row_length(), rows = x.rows();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    k.softmax(x.data<float>() + r * d, out.data<float>() + r * d, d);
}

void argmax(const Context& ctx, const Tensor& x, const Tensor& out) {
  const int64_t d = x.row_length(), rows = x.rows();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data<float>() + r * d;
    int64_t best = 0;
    for (int64_t i = 1; i < d; ++i) {
      if (in[i] > in[best]) best = i;  // strict: the first of equal maxima wins
    }
    out.data<int32_t>()[r] = static_cast<int32_t>(best);
  }
}

}  // namespace baton::cpu
