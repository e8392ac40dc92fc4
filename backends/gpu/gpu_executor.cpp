// Runs a graph's nodes on the backend's stream, one kernel launch (or a few) per node. Shapes were
// checked when the graph was built and dtypes by supports_node(); the paged batches' device
// copies and the rope tables come from StepMetadata.

#include <string>
#include <variant>
#include <vector>

#include "backends/gpu/gpu_context.h"
#include "backends/gpu/kernels/kernels.h"
#include "baton/error.h"
#include "core/runtime/comm/communicator.h"

namespace baton::gpu {

WeightType weight_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return WeightType::kF32;
    case DType::kF16:
      return WeightType::kF16;
    case DType::kBF16:
      return WeightType::kBF16;
    case DType::kQ8_0:
      return WeightType::kQ8_0;
    case DType::kQ4_0:
      return WeightType::kQ4_0;
    default:  // supports_node() lets no other weight dtype through
      throw Error(ErrorCategory::kInternal,
                  "no GPU kernel for weights of " + std::string(to_string(dtype)));
  }
}

namespace {

CacheType cache_type(const Tensor& cache) {
  return cache.dtype() == DType::kF16 ? CacheType::kF16 : CacheType::kF32;
}

// The device address of an f32 tensor (never dereferenced on the host).
float* f32(const Tensor& t) {
  return t.data<float>();
}

void rope(const Context& ctx, const Node& node, const NodeMetadata& meta) {
  const Tensor& x = node.inputs[0];
  const RopeParams& p = std::get<RopeParams>(node.params);
  const RopeArgs args{
      x.dim(0),           x.dim(1),         x.dim(2), p.n_rot, p.mode == RopeMode::kNeox,
      meta.rope_inv_freq, rope_magnitude(p)};
  rope(f32(x), node.inputs[1].data<int32_t>(), f32(node.output), args, ctx.stream);
}

void kv_write(const Context& ctx, const Node& node, const NodeMetadata& meta) {
  const Tensor& k = node.inputs[0];
  kv_write(cache_type(node.inputs[2]), f32(k), f32(node.inputs[1]), node.inputs[2].materialize(),
           node.inputs[3].materialize(), k.dim(0), k.dim(1) * k.dim(2), meta.paged, ctx.stream);
}

// On the device through the vendor's collectives where the backend joined the group (NCCL);
// otherwise staged through the host: the stream drains, the group sums on the host over MPI,
// the result goes back (ROCm, as RCCL is not packaged here, and the simulator).
void all_reduce(const Context& ctx, const Node& node) {
  const size_t n = static_cast<size_t>(node.output.numel());
  Communicator& group = *std::get<CollectiveParams>(node.params).group;
  if (ctx.collectives &&
      ctx.collectives->all_reduce(f32(node.inputs[0]), f32(node.output), n, group, ctx.stream)) {
    return;
  }
  std::vector<float> host(n);
  GPU_CHECK(gpuMemcpyAsync(host.data(), f32(node.inputs[0]), n * sizeof(float),
                           gpuMemcpyDeviceToHost, ctx.stream));
  GPU_CHECK(gpuStreamSynchronize(ctx.stream));
  group.all_reduce_sum(host);
  GPU_CHECK(gpuMemcpyAsync(f32(node.output), host.data(), n * sizeof(float), gpuMemcpyHostToDevice,
                           ctx.stream));
  GPU_CHECK(gpuStreamSynchronize(ctx.stream));
}

void attention(const Context& ctx, const Node& node, const NodeMetadata& meta) {
  const Tensor &q = node.inputs[0], &k_cache = node.inputs[1], &v_cache = node.inputs[2];
  const AttentionShape shape{static_cast<int32_t>(q.dim(1)), static_cast<int32_t>(k_cache.dim(2)),
                             static_cast<int32_t>(q.dim(2)),
                             std::get<AttentionParams>(node.params).scale, cache_type(k_cache)};
  const AttentionPlan& plan = meta.attention;
  attention_prefill(f32(q), k_cache.materialize(), v_cache.materialize(), f32(node.output), shape,
                    meta.paged, plan.tiles, plan.n_tiles, ctx.stream);
  const int64_t scratch_floats =
      attention_decode_scratch(shape, plan.n_decode, plan.decode_max_len);
  std::shared_ptr<Buffer> scratch;
  if (scratch_floats > 0) {
    scratch = ctx.allocator.allocate(static_cast<size_t>(scratch_floats) * sizeof(float));
  }
  attention_decode(f32(q), k_cache.materialize(), v_cache.materialize(), f32(node.output), shape,
                   meta.paged, plan.decode_tokens, plan.n_decode, plan.decode_max_len,
                   scratch ? reinterpret_cast<float*>(scratch->data()) : nullptr, ctx.stream);
}

// Quantized weights with few rows of x (decode) take the dequantizing GEMV, which reads each
// weight once; every other product goes to the backend's GEMM.
void matmul(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  if (n == 0 || m == 0) return;
  if (k == 0) {  // an empty sum: a GEMM would leave out untouched
    GPU_CHECK(gpuMemsetAsync(out.materialize(), 0, out.nbytes(), ctx.stream));
    return;
  }
  const WeightType type = weight_type(w.dtype());
  if ((type == WeightType::kQ8_0 || type == WeightType::kQ4_0) && n <= kGemvMaxRows) {
    quantized_gemv(type, w.materialize(), f32(x), f32(out), n, k, m, ctx.stream);
    return;
  }
  ctx.gemm.multiply(type, w.materialize(), f32(x), f32(out), n, k, m);
}

void run_node(const Context& ctx, const Node& node, size_t index, const NodeMetadata& meta) {
  const std::vector<Tensor>& in = node.inputs;
  const IndexError index_error{ctx.error_slot, static_cast<int32_t>(index)};
  switch (node.op) {
    case OpKind::kEmbedding:
      return embedding(weight_type(in[0].dtype()), in[0].materialize(), in[0].dim(0),
                       static_cast<int64_t>(in[0].row_bytes()), in[0].dim(1), in[1].data<int32_t>(),
                       in[1].dim(0), f32(node.output), index_error, ctx.stream);
    case OpKind::kMatMul:
      return matmul(ctx, in[0], in[1], node.output);
    case OpKind::kRmsNorm:
      return rms_norm(f32(in[0]), f32(in[1]), f32(node.output), in[0].rows(), in[0].row_length(),
                      std::get<NormParams>(node.params).eps, ctx.stream);
    case OpKind::kRope:
      return rope(ctx, node, meta);
    case OpKind::kKvWrite:
      return kv_write(ctx, node, meta);
    case OpKind::kAttention:
      return attention(ctx, node, meta);
    case OpKind::kSwiGlu:
      return swiglu(f32(in[0]), f32(in[1]), f32(node.output), in[0].numel(), ctx.stream);
    case OpKind::kAdd: {
      const bool broadcast = in[1].shape() != in[0].shape();
      return add(f32(in[0]), f32(in[1]), f32(node.output), in[0].numel(),
                 broadcast ? in[0].row_length() : in[0].numel(), ctx.stream);
    }
    case OpKind::kSoftmax:
      return softmax(f32(in[0]), f32(node.output), in[0].rows(), in[0].row_length(), ctx.stream);
    case OpKind::kArgmax:
      return argmax(f32(in[0]), node.output.data<int32_t>(), in[0].rows(), in[0].row_length(),
                    ctx.stream);
    case OpKind::kGetRows:
      return get_rows(f32(in[0]), in[0].dim(0), in[0].dim(1), in[1].data<int32_t>(), in[1].dim(0),
                      f32(node.output), index_error, ctx.stream);
    case OpKind::kAllReduce:
      return all_reduce(ctx, node);
    case OpKind::kLora:
      return lora(f32(in[0]), f32(in[1]), in[2].materialize(), in[3].materialize(),
                  in[2].dtype() == DType::kF16, in[4].data<int32_t>(), f32(node.output),
                  {.tokens = in[1].dim(0),
                   .k = in[1].dim(1),
                   .m = in[0].dim(1),
                   .rank = in[2].dim(1),
                   .n_slots = in[2].dim(0)},
                  index_error, ctx.stream);
    case OpKind::kGeGlu:
    case OpKind::kScale:
    case OpKind::kSoftcap:
      // supports_node refuses them before a step runs; reaching here is a broken invariant.
      throw Error(ErrorCategory::kInternal, "no GPU kernel for this op");
  }
}

}  // namespace

void run_nodes(const Context& ctx, std::span<const Node> nodes, const StepMetadata& meta) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    // A step none of whose tokens needs logits has empty logit nodes; a kernel launched over zero
    // rows would be an invalid grid.
    if (nodes[i].output.defined() && nodes[i].output.numel() == 0) continue;
    try {
      run_node(ctx, nodes[i], i, meta[i]);
    } catch (const Error& e) {
      throw Error(e.category(), "node '" + nodes[i].name + "' (" +
                                    std::string(to_string(nodes[i].op)) + "): " + e.what());
    }
  }
}

}  // namespace baton::gpu
