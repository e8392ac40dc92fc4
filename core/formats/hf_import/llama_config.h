#pragma once

// The hyperparameters of a Hugging Face checkpoint of one of the families, read
// from its config.json with transformers' defaults for the keys it leaves out.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/formats/family/model_family.h"
#include "core/formats/hf_import/hf_rope_scaling.h"
#include "core/runtime/dtype.h"

namespace baton::hf {

struct LlamaConfig {
  std::string architecture;             // the model class, one of a family's hf_classes
  const ModelFamily* family = nullptr;  // the family it converts to (core/formats/family)
  bool multimodal = false;              // the text model of an image-text checkpoint
  // What the family's descriptor adds (its defaults where config.json has no value); unset for
  // a family without them.
  std::optional<double> attn_softcap, final_softcap;
  std::optional<double> attention_scale;  // 1/sqrt(query_pre_attn_scalar)
  std::optional<int32_t> sliding_window;
  // The windowed layers' own rotary base (Gemma 3's rope_local_base_freq).
  std::optional<double> swa_rope_theta;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;  // num_key_value_heads, else num_attention_heads
  int32_t head_dim = 0;   // head_dim, else hidden_size / num_attention_heads
  bool explicit_head_dim = false;
  // max_position_embeddings, or sliding_window when that is smaller (Mistral, Phi-3)
  int32_t context_length = 2048;
  int32_t vocab_size = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  int32_t n_rot = 0;  // head_dim × partial_rotary_factor
  HfRopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  // torch_dtype, the type the checkpoint was saved in: F32, F16 or BF16 (F16 when absent or
  // another type).
  DType saved_dtype = DType::kF16;
  // A list of EOS ids keeps its first.
  std::optional<int64_t> bos_token_id, eos_token_id, pad_token_id;
};

// Throws Error(kIo) when the file cannot be read; Error(kUnsupported) naming the architecture
// (and the supported ones) or a rope_scaling type the family cannot take;
// Error(kInvalidModel) naming the key for a missing, mistyped or inconsistent value (heads that
// do not divide the hidden size or each other, an odd head size).
LlamaConfig read_llama_config(const std::filesystem::path& config_json);

}  // namespace baton::hf
