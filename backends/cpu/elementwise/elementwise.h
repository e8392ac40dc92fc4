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
  // LoRA's update for a tile of up to kLoraTileTokens tokens of one adapter, x[t], y[t] and o[t]
  // being token t's rows. Shrink: s[t * r + j] = a[j * k ...] · x[t] over k elements, for j < r.
  // Expand: o[t] = y[t] + sum over j < r of s[t * r + j] * bt[j * m ...] (B transposed), over m
  // elements. A token's results are the same bits whatever tile it is in.
  void (*lora_shrink)(const float* a, int64_t r, int64_t k, const float* const* x, int tokens,
                      float* s);
  void (*lora_expand)(const float* bt, int64_t r, int64_t m, const float* s, const float* const* y,
                      float* const* o, int tokens);
  // The same two with a and bt in IEEE f16 (LoRA slots kept in half precision), widened as they
  // are loaded.
  void (*lora_shrink_f16)(const uint16_t* a, int64_t r, int64_t k, const float* const* x,
                          int tokens, float* s);
  void (*lora_expand_f16)(const uint16_t* bt, int64_t r, int64_t m, const float* s,
                          const float* const* y, float* const* o, int tokens);
};

// The most tokens one call of lora_shrink / lora_expand takes.
constexpr int kLoraTileTokens = 4;

const RowKernels& row_kernels();

extern const RowKernels kRowKernelsGeneric;
extern const RowKernels kRowKernelsAvx2;
extern const RowKernels kRowKernelsAvx512;

}  // namespace baton::cpu
