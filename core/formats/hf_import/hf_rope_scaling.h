#pragma once

// config.json's "rope_scaling" (transformers' rope_parameters) as GGUF carries it: linear scaling
// and YaRN as "<arch>.rope.scaling.*" keys, Llama 3's frequency rule as the rope_freqs.weight
// tensor, Phi-3's LongRoPE as the rope_factors_short/long tensors, each as llama.cpp's converter
// writes them.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace baton::hf {

// Phi-3's LongRoPE (the 128k-context models): per rotary pair frequency divisors for contexts
// up to the original one and beyond, and the magnitude scaling of the rotation, which
// transformers derives from the two lengths.
struct LongRopeParams {
  std::vector<float> short_factors, long_factors;
  int32_t original_context = 0;
  double attn_factor = 1.0;
};

// YaRN: the factor, the context the model was trained at, and the optional tuning values.
struct YarnParams {
  double factor = 1.0;
  int32_t original_context = 0;
  std::optional<double> ext_factor, attn_factor, beta_fast, beta_slow;
};

struct HfRopeScaling {
  std::optional<double> linear_factor;  // {"type": "linear", "factor": f}
  std::vector<float> llama3_factors;    // per rotary pair divisors; empty unless llama3
  std::optional<YarnParams> yarn;
  std::optional<LongRopeParams> long_rope;  // longrope, or su in older configs
};

// The rotation's sizes and what the family can take.
struct RopeShape {
  int32_t n_rot = 0;  // rotated dimensions of each head
  double rope_theta = 10000.0;
  int32_t context_length = 0;  // max_position_embeddings
  bool long_rope = false;      // the family reads LongRoPE factors
  bool rope_freqs = false;     // the family reads rope_freqs.weight
};

// The rotation's settings of layers of `layer_type` ("full_attention", "sliding_attention"):
// transformers 5 writes them as rope_parameters (with rope_theta inside), keyed by layer type
// where the types differ; older configs write rope_scaling (and rope_theta beside it). Null
// where the config has neither, or none for that layer type.
const nlohmann::json* rope_parameters(const nlohmann::json& config, std::string_view layer_type);

// Throws Error(kUnsupported) naming a type the family cannot take and Error(kInvalidModel)
// naming a missing or malformed value.
HfRopeScaling read_rope_scaling(const nlohmann::json& config, const RopeShape& shape,
                                const std::filesystem::path& file);

}  // namespace baton::hf
