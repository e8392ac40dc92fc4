// Maps an adapted base weight onto the step graph's linear nodes, splitting fused weights.

#include <utility>
#include <vector>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "models/lora/lora_readers.h"
#include "ops/reference.h"

namespace baton::lora {
namespace {

[[noreturn]] void reject(const std::string& source, const std::string& tensor,
                         const std::string& why) {
  throw Error(ErrorCategory::kInvalidArgument,
              "the LoRA adapter " + source + " does not fit the model: " + tensor + " " + why);
}

}  // namespace

std::vector<NodeRows> linear_nodes_of(const std::string& weight, const ModelConfig& c) {
  const size_t dot = weight.rfind('.');
  if (!weight.starts_with("blk.") || dot == std::string::npos) return {};
  const std::string layer = weight.substr(0, dot + 1);  // "blk.3."
  const std::string kind = weight.substr(dot + 1);
  const int64_t q = int64_t{c.n_head} * c.head_dim, kv = int64_t{c.n_head_kv} * c.head_dim;
  // A weight the base's family fuses feeds one node per part, in row order.
  if (const ModelFamily* family = find_model_family(c.architecture)) {
    const FamilySizes sizes{.embd = c.n_embd, .ff = c.n_ff, .q = q, .kv = kv, .head = c.head_dim};
    for (const LayerTensor& tensor : family->layer) {
      if (tensor.fused.empty() || tensor.gguf != kind + ".weight") continue;
      std::vector<NodeRows> parts;
      int64_t first = 0;
      for (const FusedPart& part : tensor.fused) {
        parts.push_back({layer + std::string(part.node), first, sizes.of(part.rows)});
        first += sizes.of(part.rows);
      }
      return parts;
    }
  }
  // An adapter may fuse q, k and v whatever the base does.
  if (kind == "attn_qkv") {
    return {{layer + "q", 0, q}, {layer + "k", q, kv}, {layer + "v", q + kv, kv}};
  }
  // Each single weight's node and its output rows (lora_linear_shapes' first dimension).
  const std::map<std::string, std::pair<std::string, int64_t>> nodes = {
      {"attn_q", {"q", q}},
      {"attn_k", {"k", kv}},
      {"attn_v", {"v", kv}},
      {"attn_output", {"attn_output", c.n_embd}},
      {"ffn_gate", {"ffn_gate", c.n_ff}},
      {"ffn_up", {"ffn_up", c.n_ff}},
      {"ffn_down", {"ffn_down", c.n_embd}}};
  const auto it = nodes.find(kind);
  if (it == nodes.end()) return {};
  return {{layer + it->second.first, 0, it->second.second}};
}

Tensor to_f32(const Tensor& t, float scale) {
  Tensor out = Tensor::host(DType::kF32, t.shape());
  const int64_t cols = t.row_length();
  float* o = out.data<float>();
  for (int64_t row = 0; row < t.rows(); ++row) {
    reference::dequantize_row(t, row, o + row * cols);
    for (int64_t c = 0; c < cols; ++c) o[row * cols + c] *= scale;
  }
  return out;
}

TargetBuilder::TargetBuilder(const ModelConfig& base, std::string source)
    : base_(base), shapes_(lora_linear_shapes(base)) {
  adapter_.source = std::move(source);
}

void TargetBuilder::add(const std::string& weight, const std::string& tensor, const Tensor& a,
                        const Tensor& b, float scale) {
  const std::string& source = adapter_.source.native();
  if (weight == "token_embd" || weight == "output" || weight == "output_norm") {
    reject(source, tensor,
           "adapts the embeddings or the output layer, which LoRA serving leaves "
           "to the base model");
  }
  const std::vector<NodeRows> nodes = linear_nodes_of(weight, base_);
  if (nodes.empty()) {
    reject(source, tensor, "is not a linear layer of a " + base_.architecture + " model");
  }
  const auto shape = shapes_.find(nodes.front().node);
  if (shape == shapes_.end()) {
    reject(source, tensor,
           "names a layer the " + std::to_string(base_.n_layer) + "-layer model does not have");
  }
  const int64_t out = nodes.back().first + nodes.back().count, in = shape->second[1];
  if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != in || b.dim(0) != out || b.dim(1) != a.dim(0) ||
      a.dim(0) < 1) {
    reject(source, tensor,
           "has lora_a " + to_string(a.shape()) + " and lora_b " + to_string(b.shape()) +
               "; the base weight needs [r, " + std::to_string(in) + "] and [" +
               std::to_string(out) + ", r]");
  }
  const Tensor a32 = to_f32(a);
  const Tensor b32 = to_f32(b, scale);
  for (const NodeRows& n : nodes) {
    if (adapter_.targets.contains(n.node)) reject(source, tensor, "adapts a layer twice");
    adapter_.targets[n.node] = {a32, b32.slice_rows(n.first, n.count)};
  }
}

}  // namespace baton::lora
