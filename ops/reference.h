#pragma once

// Plain reference kernels: the definition of each op's result, written for clarity (double
// accumulation, no vectorisation). Backends are tested against these; they run on host tensors.

#include "core/runtime/graph.h"

namespace baton::reference {

// Runs one node of any kind on host tensors.
void run_node(const Node& node);

// Dequantises row `row` of a 2-D tensor of any dtype into `out` (row_length() floats).
void dequantize_row(const Tensor& t, int64_t row, float* out);

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);
void matmul(const Tensor& x, const Tensor& w, const Tensor& out);
void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out);
void rope(const Tensor& x, const Tensor& positions, const RopeParams& params, const Tensor& out);
void kv_write(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
              const PagedBatch& batch);
void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
               const AttentionParams& params, const Tensor& out);
void swiglu(const Tensor& gate, const Tensor& up, const Tensor& out);
void geglu(const Tensor& gate, const Tensor& up, const Tensor& out);
void scale(const Tensor& x, float factor, const Tensor& out);
void softcap(const Tensor& x, float cap, const Tensor& out);
void add(const Tensor& a, const Tensor& b, const Tensor& out);
void softmax(const Tensor& x, const Tensor& out);
void argmax(const Tensor& x, const Tensor& out);
void get_rows(const Tensor& x, const Tensor& rows, const Tensor& out);
// The element-wise sum of every rank's x, in double, added in rank order.
void all_reduce(const Tensor& x, Communicator& group, const Tensor& out);
void lora(const Tensor& y, const Tensor& x, const Tensor& a, const Tensor& bt, const Tensor& slots,
          const Tensor& out);

}  // namespace baton::reference
