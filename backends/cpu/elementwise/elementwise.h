#pragma once

// Row kernels of the element-wise ops and of LoRA's update, one table per ISA level; the op
// front ends (cpu_elementwise.cpp, cpu_norm_rope.cpp, cpu_lora.cpp) split rows over threads and
// call through row_kernels(), which picks the table for active_isa().

#include <cstdint>

namespace baton::cpu {

struct RowKernels {
  // o = a + b
  void (*add)(const float* a, const float* b, float* o, int64_t n);
  // o = a + b; returns the sum of o^2 (the residual add that feeds an rms_norm)
  float (*add_sum_squares)(const float* a, const float* b, float* o, int64_t n);
  float (*sum_squares)(const float* x, int64_t n);
  // o = x * s * w (rms_norm's scaling)
  void (*scale_mul)(const float* x, float s, const float* w, float* o, int64_t n);
  // o = g * sigmoid(g) * u
  void (*swiglu)(const float* g, const float* u, float* o, int64_t n);
  // o = gelu(g) * u, GELU in its tanh form
  void (*geglu)(const float* g, const float* u, float* o, int64_t n);
  // o = x * s
  void (*scale)(const float* x, float s, float* o, int64_t n);
  // o = cap * tanh(x / cap)
  void (*softcap)(const float* x, float cap, float* o, int64_t n);
  void (*softmax)(const float* x, float* o, int64_t n);
  // a · x
  float (*dot)(const float* a, const float* x, int64_t n);
  // o = y + sum over j < count of w[j] * rows[j], the rows `stride` elements apart (LoRA's
  // expansion, B transposed times the shrunk values)
  void (*add_weighted_rows)(const float* y, const float* w, const float* rows, int64_t count,
                            int64_t stride, float* o, int64_t n);
  // The same two with a and rows in IEEE f16 (LoRA slots kept in half precision), widened as
  // they are loaded.
  float (*dot_f16)(const uint16_t* a, const float* x, int64_t n);
  void (*add_weighted_rows_f16)(const float* y, const float* w, const uint16_t* rows, int64_t count,
                                int64_t stride, float* o, int64_t n);
};

const RowKernels& row_kernels();

extern const RowKernels kRowKernelsGeneric;
extern const RowKernels kRowKernelsAvx2;
extern const RowKernels kRowKernelsAvx512;

}  // namespace baton::cpu
