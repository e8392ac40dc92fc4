#pragma once

// The CPU backend's kernels, one source file per op family. Callers (CpuBackend::execute) have
// already checked dtypes with supports() and shapes through the Graph builder; kernels check
// only data-dependent indices (ids, rows, block tables), before their parallel loops.

#include "core/runtime/graph.h"
#include "core/runtime/op.h"
#include "core/runtime/tensor.h"

namespace baton::cpu {

class PackedWeights;
class PanelWeights;

struct Context {
  int threads = 1;  // OpenMP threads for every parallel loop
  // The backend's prepacked float weights for the prefill GEMM (matmul/packed_weights.h); null
  // when prepacking is off.
  const PackedWeights* packed = nullptr;
  // Its Q4_0 / Q8_0 weights repacked for the AVX-512 panel kernel at their first matmul
  // (matmul/panel_weights.h); null when prepacking is off.
  PanelWeights* panels = nullptr;
};

// Runs the graph's nodes in order (after the backend has checked supports() for each); errors
// name the node. Adjacent nodes may be fused into one pass where that saves a trip over memory.
// When the graph declares its outputs, every other node output is discarded (its pooled memory
// reused) after its last reader.
void execute(const Context& ctx, const Graph& graph);

// Weight dtypes that matmul and embedding decode (see cpu_dequantize.h).
bool is_weight_dtype(DType dtype);

void matmul(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
void embedding(const Context& ctx, const Tensor& table, const Tensor& ids, const Tensor& out);
void get_rows(const Context& ctx, const Tensor& x, const Tensor& rows, const Tensor& out);
// x summed over the ranks of `group` into out: a copy, then the communicator's in-place sum.
void all_reduce(const Tensor& x, Communicator& group, const Tensor& out);

void rms_norm(const Context& ctx, const Tensor& x, const Tensor& weight, float eps,
              const Tensor& out);
void rope(const Context& ctx, const Tensor& x, const Tensor& positions, const RopeParams& params,
          const Tensor& out);

void kv_write(const Context& ctx, const Tensor& k, const Tensor& v, const Tensor& k_cache,
              const Tensor& v_cache, const PagedBatch& batch);
void attention(const Context& ctx, const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
               const AttentionParams& params, const Tensor& out);

void swiglu(const Context& ctx, const Tensor& gate, const Tensor& up, const Tensor& out);
void geglu(const Context& ctx, const Tensor& gate, const Tensor& up, const Tensor& out);
void scale(const Context& ctx, const Tensor& x, float factor, const Tensor& out);
void softcap(const Context& ctx, const Tensor& x, float cap, const Tensor& out);
void add(const Context& ctx, const Tensor& a, const Tensor& b, const Tensor& out);
void softmax(const Context& ctx, const Tensor& x, const Tensor& out);
void argmax(const Context& ctx, const Tensor& x, const Tensor& out);
// y plus each token's update from the LoRA adapter in its slot (OpKind::kLora).
void lora(const Context& ctx, const Tensor& y, const Tensor& x, const Tensor& a, const Tensor& bt,
          const Tensor& slots, const Tensor& out);

}  // namespace baton::cpu
