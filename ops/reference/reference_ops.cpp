// run_node: dispatches one graph node to its reference kernel.

#include <string>
#include <variant>

#include "baton/error.h"
#include "ops/reference.h"

namespace baton::reference {
namespace {

template <typename P>
const P& params_of(const Node& node) {
  const P* p = std::get_if<P>(&node.params);
  if (!p) throw Error(ErrorCategory::kInvalidArgument, "parameters of the wrong kind");
  return *p;
}

void require_inputs(const Node& node, size_t count) {
  if (node.inputs.size() != count) {
    throw Error(
        ErrorCategory::kInvalidArgument,
        "expects " + std::to_string(count) + " inputs, got " + std::to_string(node.inputs.size()));
  }
}

void dispatch(const Node& node) {
  const std::vector<Tensor>& in = node.inputs;
  switch (node.op) {
    case OpKind::kEmbedding:
      require_inputs(node, 2);
      return embedding(in[0], in[1], node.output);
    case OpKind::kMatMul:
      require_inputs(node, 2);
      return matmul(in[0], in[1], node.output);
    case OpKind::kRmsNorm:
      require_inputs(node, 2);
      return rms_norm(in[0], in[1], params_of<NormParams>(node).eps, node.output);
    case OpKind::kRope:
      require_inputs(node, 2);
      return rope(in[0], in[1], params_of<RopeParams>(node), node.output);
    case OpKind::kKvWrite: {
      require_inputs(node, 4);
      const AttentionParams& p = params_of<AttentionParams>(node);
      if (!p.batch) throw Error(ErrorCategory::kInvalidArgument, "needs a paged batch");
      return kv_write(in[0], in[1], in[2], in[3], *p.batch);
    }
    case OpKind::kAttention:
      require_inputs(node, 3);
      return attention(in[0], in[1], in[2], params_of<AttentionParams>(node), node.output);
    case OpKind::kSwiGlu:
      require_inputs(node, 2);
      return swiglu(in[0], in[1], node.output);
    case OpKind::kGeGlu:
      require_inputs(node, 2);
      return geglu(in[0], in[1], node.output);
    case OpKind::kScale:
      require_inputs(node, 1);
      return scale(in[0], params_of<ScalarParams>(node).value, node.output);
    case OpKind::kSoftcap:
      require_inputs(node, 1);
      return softcap(in[0], params_of<ScalarParams>(node).value, node.output);
    case OpKind::kAdd:
      require_inputs(node, 2);
      return add(in[0], in[1], node.output);
    case OpKind::kSoftmax:
      require_inputs(node, 1);
      return softmax(in[0], node.output);
    case OpKind::kArgmax:
      require_inputs(node, 1);
      return argmax(in[0], node.output);
    case OpKind::kGetRows:
      require_inputs(node, 2);
      return get_rows(in[0], in[1], node.output);
    case OpKind::kAllReduce: {
      require_inputs(node, 1);
      Communicator* group = params_of<CollectiveParams>(node).group;
      if (!group) throw Error(ErrorCategory::kInvalidArgument, "needs a communicator");
      return all_reduce(in[0], *group, node.output);
    }
    case OpKind::kLora:
      require_inputs(node, 5);
      return lora(in[0], in[1], in[2], in[3], in[4], node.output);
  }
  throw Error(ErrorCategory::kUnsupported, "unknown op");
}

}  // namespace

void run_node(const Node& node) {
  try {
    dispatch(node);
  } catch (const Error& e) {
    throw Error(e.category(),
                "node '" + node.name + "' (" + std::string(to_string(node.op)) + "): " + e.what());
  }
}

}  // namespace baton::reference
