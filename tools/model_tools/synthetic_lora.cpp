#include "tools/model_tools/synthetic_lora.h"

#include <map>
#include <random>
#include <span>

#include "core/formats/gguf/gguf_writer.h"
#include "models/lora/lora_adapter.h"

namespace baton {

std::vector<LoraPair> random_lora(const ModelConfig& c, int64_t rank, uint32_t seed, float range_a,
                                  float range_b) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const std::map<std::string, std::string> gguf_kind = {
      {"q", "attn_q"},          {"k", "attn_k"},
      {"v", "attn_v"},          {"attn_output", "attn_output"},
      {"ffn_gate", "ffn_gate"}, {"ffn_up", "ffn_up"},
      {"ffn_down", "ffn_down"}};
  std::vector<LoraPair> pairs;
  for (const auto& [node, shape] : lora_linear_shapes(c)) {
    const size_t dot = node.rfind('.');
    LoraPair p{node.substr(0, dot + 1) + gguf_kind.at(node.substr(dot + 1)) + ".weight",
               {},
               {},
               rank,
               shape[1],
               shape[0]};
    for (int64_t i = 0; i < rank * p.in; ++i) p.a.push_back(range_a * unit(rng));
    for (int64_t i = 0; i < p.out * rank; ++i) p.b.push_back(range_b * unit(rng));
    pairs.push_back(std::move(p));
  }
  return pairs;
}

void write_gguf_lora(const std::filesystem::path& path, const std::string& architecture,
                     const std::vector<LoraPair>& pairs, float alpha) {
  gguf::GgufWriter writer;
  writer.add_string("general.architecture", architecture);
  writer.add_string("general.type", "adapter");
  writer.add_string("adapter.type", "lora");
  writer.add_float32("adapter.lora.alpha", alpha);
  for (const LoraPair& p : pairs) {
    writer.add_tensor(p.weight + ".lora_a", {p.rank, p.in}, DType::kF32,
                      std::as_bytes(std::span(p.a)));
    writer.add_tensor(p.weight + ".lora_b", {p.out, p.rank}, DType::kF32,
                      std::as_bytes(std::span(p.b)));
  }
  writer.write(path);
}

}  // namespace baton
