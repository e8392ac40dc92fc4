#pragma once

// `baton lora merge`: bakes LoRA adapters into a copy of their base model, as llama.cpp's
// export-lora does.

#include <filesystem>
#include <vector>

#include "models/lora/lora_adapter.h"

namespace baton {

// Writes `base` with W + b·a of every adapter added to each weight they adapt. Adapted weights
// are written in f32 when the base holds them in f32 and in f16 otherwise (a block-quantized
// weight is not requantized); every other tensor and all metadata are copied as they are.
// Throws Error(kIo) when `output` cannot be written.
void merge_lora(const std::filesystem::path& base, const std::vector<LoraAdapter>& adapters,
                const std::filesystem::path& output);

}  // namespace baton
