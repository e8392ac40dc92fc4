// run_node: dispatches one graph node to its reference kernel.

#include <string>
#include <variant>

#include "baton/error.h"
#include "ops/reference.h"

namespace baton::reference {
namespace {

// The node's parameters, of the type check_node_schema has already checked.
template <typename P>
const P& params_of(const Node& node) {
  return std::get<P>(node.params);
}

void dispatch(const Node& node) {
  check_node_schema(node);
  const std::vector<Tensor>& in = node.inputs;
  switch (node.op) {
    case OpKind::kEmbedding:
      return embedding(in[0], in[1], node.output);
    case OpKind::kMatMul:
      return matmul(in[0], in[1], node.output);
    case OpKind::kRmsNorm:
      return rms_norm(in[0], in[1], params_of<NormParams>(node).eps, node.output);
    case OpKind::kRope:
      return rope(in[0], in[1], params_of<RopeParams>(node), node.output);
    case OpKind::kKvWrite: {
      const AttentionParams& p = params_of<AttentionParams>(node);
      if (!p.batch) throw Error(ErrorCategory::kInvalidArgument, "needs a paged batch");
      return kv_write(in[0], in[1], in[2], in[3], *p.batch);
    }
    case OpKind::kAttention:
      return attention(in[0], in[1], in[2], params_of<AttentionParams>(node), node.output);
    case OpKind::kSwiGlu:
      return swiglu(in[0], in[1], node.output);
    case OpKind::kGeGlu:
      return geglu(in[0], in[1], node.output);
    case OpKind::kScale:
      return scale(in[0], params_of<ScalarParams>(node).value, node.output);
    case OpKind::kSoftcap:
      return softcap(in[0], params_of<ScalarParams>(node).value, node.output);
    case OpKind::kAdd:
      return add(in[0], in[1], node.output);
    case OpKind::kSoftmax:
      return softmax(in[0], node.output);
    case OpKind::kArgmax:
      return argmax(in[0], node.output);
    case OpKind::kGetRows:
      return get_rows(in[0], in[1], node.output);
    case OpKind::kAllReduce: {
      Communicator* group = params_of<CollectiveParams>(node).group;
      if (!group) throw Error(ErrorCategory::kInvalidArgument, "needs a communicator");
      return all_reduce(in[0], *group, node.output);
    }
    case OpKind::kLora:
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
