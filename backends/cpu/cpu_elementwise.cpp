// Element-wise and row-wise ops: swiglu, geglu, scale, softcap, add, softmax, argmax. The
// arithmetic is in the per-ISA row kernels (elementwise/); this file splits the work over threads.

#include <algorithm>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/elementwise/elementwise.h"
#include "backends/cpu/isa/cpu_isa.h"

namespace baton::cpu {
namespace {

// Elements per parallel chunk of the flat ops: large enough to amortise the loop, small enough
// to split a decode step's few thousand elements over threads. A multiple of every vector width.
constexpr int64_t kFlatChunk = 1024;

// Runs `chunk(offset, count)` over [0, n) in kFlatChunk pieces on the context's threads.
template <class Chunk>
void over_flat_chunks(const Context& ctx, int64_t n, Chunk chunk) {
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t i = 0; i < n; i += kFlatChunk) chunk(i, std::min(kFlatChunk, n - i));
}

using GatedRow = void (*)(const float* g, const float* u, float* o, int64_t n);
using ScalarRow = void (*)(const float* x, float s, float* o, int64_t n);

void gated(const Context& ctx, GatedRow row, const Tensor& gate, const Tensor& up,
           const Tensor& out) {
  const float *g = gate.data<float>(), *u = up.data<float>();
  float* o = out.data<float>();
  over_flat_chunks(ctx, gate.numel(), [&](int64_t i, int64_t n) { row(g + i, u + i, o + i, n); });
}

void with_scalar(const Context& ctx, ScalarRow row, const Tensor& x, float s, const Tensor& out) {
  const float* in = x.data<float>();
  float* o = out.data<float>();
  over_flat_chunks(ctx, x.numel(), [&](int64_t i, int64_t n) { row(in + i, s, o + i, n); });
}

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
  gated(ctx, row_kernels().swiglu, gate, up, out);
}

void geglu(const Context& ctx, const Tensor& gate, const Tensor& up, const Tensor& out) {
  gated(ctx, row_kernels().geglu, gate, up, out);
}

void scale(const Context& ctx, const Tensor& x, float factor, const Tensor& out) {
  with_scalar(ctx, row_kernels().scale, x, factor, out);
}

void softcap(const Context& ctx, const Tensor& x, float cap, const Tensor& out) {
  with_scalar(ctx, row_kernels().softcap, x, cap, out);
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
