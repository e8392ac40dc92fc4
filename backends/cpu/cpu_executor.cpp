// Runs a graph's nodes in order on the host.

#include <string>
#include <variant>

#include "backends/cpu/cpu_kernels.h"
#include "baton/error.h"

namespace baton::cpu {
namespace {

void run_node(const Context& ctx, const Node& node) {
  const std::vector<Tensor>& in = node.inputs;
  switch (node.op) {
    case OpKind::kEmbedding:
      return embedding(ctx, in[0], in[1], node.output);
    case OpKind::kMatMul:
      return matmul(ctx, in[0], in[1], node.output);
    case OpKind::kRmsNorm:
      return rms_norm(ctx, in[0], in[1], std::get<NormParams>(node.params).eps, node.output);
    case OpKind::kRope:
      return rope(ctx, in[0], in[1], std::get<RopeParams>(node.params), node.output);
    case OpKind::kKvWrite:
      return kv_write(ctx, in[0], in[1], in[2], in[3],
                      *std::get<AttentionParams>(node.params).batch);
    case OpKind::kAttention:
      return attention(ctx, in[0], in[1], in[2], std::get<AttentionParams>(node.params),
                       node.output);
    case OpKind::kSwiGlu:
      return swiglu(ctx, in[0], in[1], node.output);
    case OpKind::kAdd:
      return add(ctx, in[0], in[1], node.output);
    case OpKind::kSoftmax:
      return softmax(ctx, in[0], node.output);
    case OpKind::kArgmax:
      return argmax(ctx, in[0], node.output);
    case OpKind::kGetRows:
      return get_rows(ctx, in[0], in[1], node.output);
  }
}

}  // namespace

void execute(const Context& ctx, std::span<const Node> nodes) {
  for (const Node& node : nodes) {
    try {
      run_node(ctx, node);
    } catch (const Error& e) {
      throw Error(e.category(), "cpu backend, node '" + node.name + "' (" +
                                    std::string(to_string(node.op)) + "): " + e.what());
    }
  }
}

}  // namespace baton::cpu
