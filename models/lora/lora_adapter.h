#pragma once

// A LoRA adapter (Hu et al. 2021) in the form the step graph applies it: for each linear node it
// adapts (StepGraph::linear's names: "blk.3.q", "blk.3.ffn_down"), a [r, in] and b [out, r] in f32
// on the host, with the adapter's scale folded into b, so that the node computes
// W x + b (a x). Readers map their files' tensor names and fused weights onto these nodes.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "baton/lora_options.h"
#include "core/runtime/tensor.h"
#include "models/model.h"

namespace baton {

struct LoraTarget {
  Tensor a;  // [r, in] f32
  Tensor b;  // [out, r] f32, times the scale
};

struct LoraAdapter {
  std::string name;
  std::filesystem::path source;
  float user_scale = 1.0f;  // read_lora_adapter's, so that the file can be read again alike
  std::map<std::string, LoraTarget> targets;  // by linear node name

  // The largest rank over the targets.
  int32_t rank() const;
};

// The linear nodes of a model of `config` an adapter may adapt, with their [out, in] shapes: for
// each layer q, k, v, attn_output, ffn_gate, ffn_up and ffn_down.
std::map<std::string, Shape> lora_linear_shapes(const ModelConfig& config);

// Reads a LoRA adapter for a base model of `base`: a llama.cpp GGUF adapter (general.type =
// adapter) or a PEFT directory (adapter_config.json and adapter_model.safetensors). The scale is
// alpha / r (alpha / sqrt(r) for rsLoRA) times `user_scale`; a GGUF adapter without an alpha is
// scaled by `user_scale` alone, as llama.cpp does. Throws Error(kInvalidArgument) naming the
// tensor or setting when the adapter does not fit the base (architecture, shapes, a tensor that is
// not a linear layer, the embeddings or the output layer), Error(kInvalidModel) for a corrupt
// file, Error(kIo) when it cannot be read.
LoraAdapter read_lora_adapter(const std::filesystem::path& path, const ModelConfig& base,
                              float user_scale = 1.0f);
// The same for an adapter as served: read from options.path at options.scale and named.
std::shared_ptr<const LoraAdapter> read_lora_adapter(const LoraOptions& options,
                                                     const ModelConfig& base);

}  // namespace baton
