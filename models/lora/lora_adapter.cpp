#include "models/lora/lora_adapter.h"

#include <algorithm>

#include "baton/error.h"
#include "models/lora/lora_readers.h"

namespace baton {

int32_t LoraAdapter::rank() const {
  int64_t rank = 0;
  for (const auto& [node, target] : targets) rank = std::max(rank, target.a.dim(0));
  return static_cast<int32_t>(rank);
}

std::map<std::string, Shape> lora_linear_shapes(const ModelConfig& c) {
  const int64_t embd = c.n_embd, ff = c.n_ff;
  const int64_t q = int64_t{c.n_head} * c.head_dim, kv = int64_t{c.n_head_kv} * c.head_dim;
  std::map<std::string, Shape> shapes;
  for (int32_t layer = 0; layer < c.n_layer; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    shapes[p + "q"] = {q, embd};
    shapes[p + "k"] = {kv, embd};
    shapes[p + "v"] = {kv, embd};
    shapes[p + "attn_output"] = {embd, q};
    shapes[p + "ffn_gate"] = {ff, embd};
    shapes[p + "ffn_up"] = {ff, embd};
    shapes[p + "ffn_down"] = {embd, ff};
  }
  return shapes;
}

LoraAdapter read_lora_adapter(const std::filesystem::path& path, const ModelConfig& base,
                              float user_scale) {
  std::error_code error;
  LoraAdapter adapter = std::filesystem::is_directory(path, error)
                            ? lora::read_peft(path, base, user_scale)
                            : lora::read_gguf(path, base, user_scale);
  adapter.source = path;
  adapter.user_scale = user_scale;
  if (adapter.targets.empty()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the LoRA adapter " + path.string() + " adapts no layer");
  }
  return adapter;
}

std::shared_ptr<const LoraAdapter> read_lora_adapter(const LoraOptions& options,
                                                     const ModelConfig& base) {
  auto adapter =
      std::make_shared<LoraAdapter>(read_lora_adapter(options.path, base, options.scale));
  adapter->name = options.name;
  return adapter;
}

}  // namespace baton
