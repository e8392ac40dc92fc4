// Runs a graph's nodes on the CUDA stream, one kernel launch (or a few) per node. Shapes were
// checked when the graph was built and dtypes by supports_node(); the paged batches' device
// copies and the rope tables come from StepMetadata.

#include <string>
#include <variant>

#include "backends/cuda/cuda_context.h"
#include "backends/gpu/kernels/kernels.h"
#include "baton/error.h"

namespace baton::cuda {
namespace {

gpu::WeightType weight_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return gpu::WeightType::kF32;
    case DType::kF16:
      return gpu::WeightType::kF16;
    case DType::kBF16:
      return gpu::WeightType::kBF16;
    case DType::kQ8_0:
      return gpu::WeightType::kQ8_0;
    case DType::kQ4_0:
      return gpu::WeightType::kQ4_0;
    default:  // supports_node() lets no other weight dtype through
      throw Error(ErrorCategory::kInternal,
                  "no GPU kernel for weights of " + std::string(to_string(dtype)));
  }
}

gpu::CacheType cache_type(const Tensor& cache) {
  return cache.dtype() == DType::kF16 ? gpu::CacheType::kF16 : gpu::CacheType::kF32;
}

// The device address of an f32 tensor (never dereferenced on the host).
float* f32(const Tensor& t) {
  return t.data<float>();
}

void rope(const Context& ctx, const Node& node, const gpu::NodeMetadata& meta) {
  const Tensor& x = node.inputs[0];
  const RopeParams& p = std::get<RopeParams>(node.params);
  const gpu::RopeArgs args{
      x.dim(0), x.dim(1), x.dim(2), p.n_rot, p.mode == RopeMode::kNeox, meta.rope_inv_freq};
  gpu::rope(f32(x), node.inputs[1].data<int32_t>(), f32(node.output), args, ctx.stream);
}

void kv_write(const Context& ctx, const Node& node, const gpu::NodeMetadata& meta) {
  const Tensor& k = node.inputs[0];
  gpu::kv_write(cache_type(node.inputs[2]), f32(k), f32(node.inputs[1]), node.inputs[2].raw(),
                node.inputs[3].raw(), k.dim(0), k.dim(1) * k.dim(2), meta.paged, ctx.stream);
}

void attention(const Context& ctx, const Node& node, const gpu::NodeMetadata& meta) {
  const Tensor &q = node.inputs[0], &k_cache = node.inputs[1], &v_cache = node.inputs[2];
  const gpu::AttentionShape shape{
      static_cast<int32_t>(q.dim(1)), static_cast<int32_t>(k_cache.dim(2)),
      static_cast<int32_t>(q.dim(2)), std::get<AttentionParams>(node.params).scale,
      cache_type(k_cache)};
  const gpu::AttentionPlan& plan = meta.attention;
  gpu::attention_prefill(f32(q), k_cache.raw(), v_cache.raw(), f32(node.output), shape, meta.paged,
                         plan.tiles, plan.n_tiles, ctx.stream);
  const int64_t scratch_floats =
      gpu::attention_decode_scratch(shape, plan.n_decode, plan.decode_max_len);
  std::shared_ptr<Buffer> scratch;
  if (scratch_floats > 0) {
    scratch = ctx.allocator.allocate(static_cast<size_t>(scratch_floats) * sizeof(float));
  }
  gpu::attention_decode(f32(q), k_cache.raw(), v_cache.raw(), f32(node.output), shape, meta.paged,
                        plan.decode_tokens, plan.n_decode, plan.decode_max_len,
                        scratch ? reinterpret_cast<float*>(scratch->data()) : nullptr, ctx.stream);
}

void run_node(const Context& ctx, const Node& node, size_t index, const gpu::NodeMetadata& meta) {
  const std::vector<Tensor>& in = node.inputs;
  const gpu::IndexError index_error{ctx.error_slot, static_cast<int32_t>(index)};
  switch (node.op) {
    case OpKind::kEmbedding:
      return gpu::embedding(weight_type(in[0].dtype()), in[0].raw(), in[0].dim(0),
                            static_cast<int64_t>(in[0].row_bytes()), in[0].dim(1),
                            in[1].data<int32_t>(), in[1].dim(0), f32(node.output), index_error,
                            ctx.stream);
    case OpKind::kMatMul:
      return matmul(ctx, in[0], in[1], node.output);
    case OpKind::kRmsNorm:
      return gpu::rms_norm(f32(in[0]), f32(in[1]), f32(node.output), in[0].rows(),
                           in[0].row_length(), std::get<NormParams>(node.params).eps, ctx.stream);
    case OpKind::kRope:
      return rope(ctx, node, meta);
    case OpKind::kKvWrite:
      return kv_write(ctx, node, meta);
    case OpKind::kAttention:
      return attention(ctx, node, meta);
    case OpKind::kSwiGlu:
      return gpu::swiglu(f32(in[0]), f32(in[1]), f32(node.output), in[0].numel(), ctx.stream);
    case OpKind::kAdd: {
      const bool broadcast = in[1].shape() != in[0].shape();
      return gpu::add(f32(in[0]), f32(in[1]), f32(node.output), in[0].numel(),
                      broadcast ? in[0].row_length() : in[0].numel(), ctx.stream);
    }
    case OpKind::kSoftmax:
      return gpu::softmax(f32(in[0]), f32(node.output), in[0].rows(), in[0].row_length(),
                          ctx.stream);
    case OpKind::kArgmax:
      return gpu::argmax(f32(in[0]), node.output.data<int32_t>(), in[0].rows(), in[0].row_length(),
                         ctx.stream);
    case OpKind::kGetRows:
      return gpu::get_rows(f32(in[0]), in[0].dim(0), in[0].dim(1), in[1].data<int32_t>(),
                           in[1].dim(0), f32(node.output), index_error, ctx.stream);
  }
}

}  // namespace

void run_nodes(const Context& ctx, std::span<const Node> nodes, const gpu::StepMetadata& meta) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    try {
      run_node(ctx, nodes[i], i, meta[i]);
    } catch (const Error& e) {
      throw Error(e.category(), "node '" + nodes[i].name + "' (" +
                                    std::string(to_string(nodes[i].op)) + "): " + e.what());
    }
  }
}

}  // namespace baton::cuda
