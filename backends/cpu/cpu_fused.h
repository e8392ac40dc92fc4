#pragma once

// Kernels that each do the work of two adjacent graph nodes in one pass; cpu::execute uses them
// when the pair allows (see cpu_executor.cpp). Each computes exactly what the two nodes compute
// and writes every tensor the two nodes write.

#include "backends/cpu/cpu_kernels.h"

namespace baton::cpu {

// add(a, b) -> sum, then rms_norm(sum, weight) -> normed: one read of a and b, and the
// normalising pass reads `sum` back while it is still in cache.
void add_rms_norm(const Context& ctx, const Tensor& a, const Tensor& b, const Tensor& weight,
                  float eps, const Tensor& sum, const Tensor& normed);

// rope(k, positions) -> rotated, then kv_write(rotated, v): each token's rotated row goes to
// `rotated` (the graph may read it later) and from there, still in cache, into the KV cache.
void rope_kv_write(const Context& ctx, const Tensor& k, const Tensor& positions,
                   const RopeParams& rope, const Tensor& rotated, const Tensor& v,
                   const Tensor& k_cache, const Tensor& v_cache, const PagedBatch& batch);

}  // namespace baton::cpu
