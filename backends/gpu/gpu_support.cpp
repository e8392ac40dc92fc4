// Which nodes a GPU backend runs: the ops of core/runtime/op.h with the dtypes its kernels take, on
// tensors in its own memory. Anything else is reported up front, naming the node, rather than
// failing inside a kernel.

#include <variant>

#include "backends/gpu/gpu_context.h"
#include "backends/gpu/kernels/kernels.h"

namespace baton::gpu {
namespace {

bool is_f32(const Tensor& t) {
  return t.dtype() == DType::kF32;
}
bool is_i32(const Tensor& t) {
  return t.dtype() == DType::kI32;
}
bool is_weight(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ8_0:
    case DType::kQ4_0:
      return t.rank() == 2;
    default:
      return false;
  }
}
bool is_cache_pair(const Tensor& k, const Tensor& v) {
  return (k.dtype() == DType::kF32 || k.dtype() == DType::kF16) && v.dtype() == k.dtype() &&
         k.rank() == 4 && v.shape() == k.shape();
}
bool has_batch(const Node& node) {
  const auto* p = std::get_if<AttentionParams>(&node.params);
  return p != nullptr && p->batch != nullptr;
}
// Gemma 2's soft-capped and sliding-window attention have no GPU kernels yet.
bool is_plain_attention(const Node& node) {
  const auto* p = std::get_if<AttentionParams>(&node.params);
  return p != nullptr && p->softcap == 0.0f && p->window == 0;
}

bool supports_dtypes(const Node& node) {
  if (!matches_schema(node)) return false;
  const std::vector<Tensor>& in = node.inputs;
  switch (node.op) {
    case OpKind::kEmbedding:
      return is_weight(in[0]) && is_i32(in[1]);
    case OpKind::kMatMul:
      return is_f32(in[0]) && in[0].rank() == 2 && is_weight(in[1]);
    case OpKind::kRmsNorm:
      return is_f32(in[0]) && is_f32(in[1]);
    case OpKind::kRope:
      return is_f32(in[0]) && in[0].rank() == 3 && is_i32(in[1]);
    case OpKind::kKvWrite:
      return is_f32(in[0]) && is_f32(in[1]) && in[0].rank() == 3 &&
             in[1].shape() == in[0].shape() && is_cache_pair(in[2], in[3]) &&
             in[2].dim(2) == in[0].dim(1) && in[2].dim(3) == in[0].dim(2) && has_batch(node);
    case OpKind::kAttention:
      // The kernels keep a head's output in registers: head_dim up to kMaxHeadDim.
      return is_f32(in[0]) && in[0].rank() == 3 && is_cache_pair(in[1], in[2]) &&
             in[1].dim(3) == in[0].dim(2) && in[1].dim(2) > 0 && in[0].dim(1) % in[1].dim(2) == 0 &&
             in[0].dim(2) <= kMaxHeadDim && has_batch(node) && is_plain_attention(node);
    case OpKind::kSwiGlu:
    case OpKind::kAdd:
      return is_f32(in[0]) && is_f32(in[1]);
    case OpKind::kSoftmax:
    case OpKind::kArgmax:
      return is_f32(in[0]) && in[0].row_length() > 0;
    case OpKind::kGetRows:
      return is_f32(in[0]) && in[0].rank() == 2 && is_i32(in[1]);
    case OpKind::kAllReduce: {
      const auto* collective = std::get_if<CollectiveParams>(&node.params);
      return is_f32(in[0]) && collective && collective->group;
    }
    case OpKind::kLora:
      return is_f32(in[0]) && is_f32(in[1]) && is_lora_slot_dtype(in[2].dtype()) &&
             in[3].dtype() == in[2].dtype() && is_i32(in[4]) && in[2].dim(1) <= kMaxLoraRank;
    case OpKind::kGeGlu:  // Gemma 2's ops: no GPU kernels yet
    case OpKind::kScale:
    case OpKind::kSoftcap:
      return false;
  }
  return false;
}

bool on_device(const Tensor& t, std::string_view device) {
  return t.defined() && t.buffer()->device() == device;
}

}  // namespace

bool supports_node(const Node& node, std::string_view device) {
  for (const Tensor& t : node.inputs) {
    if (!on_device(t, device)) return false;
  }
  if (node.op != OpKind::kKvWrite && !on_device(node.output, device)) return false;
  return supports_dtypes(node);
}

std::string describe_inputs(const Node& node, std::string_view device) {
  std::string out;
  for (const Tensor& t : node.inputs) {
    out += (out.empty() ? "" : ", ") + std::string(to_string(t.dtype())) + " " +
           to_string(t.shape()) +
           (on_device(t, device) ? "" : " (not " + std::string(device) + " memory)");
  }
  return out;
}

}  // namespace baton::gpu
