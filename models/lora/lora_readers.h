#pragma once

// The adapter file formats behind read_lora_adapter, and what they share: mapping an adapted
// base weight onto the step graph's linear nodes.

#include <filesystem>
#include <string>
#include <vector>

#include "models/lora/lora_adapter.h"

namespace baton::lora {

// The linear nodes a base weight feeds, named as the base's GGUF names it without ".weight"
// ("blk.3.attn_q"), with the rows of the weight each takes: one node for most, several for the
// fused "blk.3.attn_qkv" and Phi-3's [gate | up] "blk.3.ffn_up". Empty for a weight that is not
// a decoder layer's linear layer.
struct NodeRows {
  std::string node;
  int64_t first, count;
};
std::vector<NodeRows> linear_nodes_of(const std::string& weight, const ModelConfig& base);

// Collects an adapter's targets, checking each against the base model.
class TargetBuilder {
 public:
  TargetBuilder(const ModelConfig& base, std::string source);

  // One adapted weight, named as the base's GGUF names it without ".weight" ("blk.3.attn_q"; the
  // fused "blk.3.attn_qkv" and Phi-3's [gate | up] "blk.3.ffn_up" are split over their nodes).
  // `a` [r, in] and `b` [out, r] of any float dtype; b is multiplied by `scale`. `tensor` names
  // the adapter's tensor in errors.
  void add(const std::string& weight, const std::string& tensor, const Tensor& a, const Tensor& b,
           float scale);
  LoraAdapter take() { return std::move(adapter_); }

 private:
  const ModelConfig& base_;
  std::map<std::string, Shape> shapes_;
  LoraAdapter adapter_;
};

// A copy of a 2-D tensor of any dtype as f32, times `scale`.
Tensor to_f32(const Tensor& t, float scale = 1.0f);

LoraAdapter read_gguf(const std::filesystem::path& path, const ModelConfig& base, float user_scale);
LoraAdapter read_peft(const std::filesystem::path& dir, const ModelConfig& base, float user_scale);

}  // namespace baton::lora
