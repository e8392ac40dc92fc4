#pragma once

// SmolLM3: Llama whose every fourth layer takes no rotary embedding (NoPE).

#include "core/formats/family/llama.h"
#include "core/formats/family/model_family.h"

namespace baton::families {

inline constexpr HfModelClass kSmolLm3Classes[] = {{"SmolLM3ForCausalLM"}};

inline constexpr FamilyShape kSmolLm3Shapes[] = {
    {"smollm3-3b", 2048, 36, 16, 4, 128, 11008, 128256, 65536, 5000000.0f, 1e-6f, true},
};

inline constexpr ModelFamily kSmolLm3{.gguf_arch = "smollm3",
                                      .summary = "no rotation on every 4th layer",
                                      .hf_classes = kSmolLm3Classes,
                                      .layer = kLlamaLayer,
                                      .interleave_rotary = true,
                                      .no_rope_period = 4,
                                      .hf_tied_by_default = true,
                                      .tied_by_default = true,
                                      .shapes = kSmolLm3Shapes};

}  // namespace baton::families
