// Element-wise and row-wise ops: swiglu, add, softmax, argmax.

#include <cmath>

#include "backends/cpu/cpu_kernels.h"

namespace baton::cpu {

void swiglu(const Context& ctx, const Tensor& gate, const Tensor& up, const Tensor& out) {
  const int64_t n = gate.numel();
  const float* g = gate.data<float>();
  const float* u = up.data<float>();
  float* o = out.data<float>();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) o[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

void add(const Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t d = a.row_length(), rows = a.rows();
  // b is either a's shape or one row broadcast over all of a's rows.
  const int64_t b_row_stride = b.shape() == a.shape() ? d : 0;
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a.data<float>() + r * d;
    const float* y = b.data<float>() + r * b_row_stride;
    float* o = out.data<float>() + r * d;
    for (int64_t i = 0; i < d; ++i) o[i] = x[i] + y[i];
  }
}

void softmax(const Context& ctx, const Tensor& x, const Tensor& out) {
  const int64_t d = x.row_length(), rows = x.rows();
#pragma omp parallel for num_threads(ctx.threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data<float>() + r * d;
    float* o = out.data<float>() + r * d;
    float max_value = in[0];
    for (int64_t i = 1; i < d; ++i) max_value = std::fmax(max_value, in[i]);
    float total = 0.0f;
    for (int64_t i = 0; i < d; ++i) total += (o[i] = std::exp(in[i] - max_value));
    const float inv_total = 1.0f / total;
    for (int64_t i = 0; i < d; ++i) o[i] *= inv_total;
  }
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
