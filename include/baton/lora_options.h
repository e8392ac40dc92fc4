#pragma once

#include <string>

namespace baton {

// A LoRA adapter served beside the base model (docs/lora.md): a llama.cpp GGUF adapter file or a
// PEFT directory, asked for by `name` in GenerationParams::lora, its update scaled by `scale` on
// top of the adapter's own alpha / r.
struct LoraOptions {
  std::string name;
  std::string path;
  float scale = 1.0f;
};

}  // namespace baton
