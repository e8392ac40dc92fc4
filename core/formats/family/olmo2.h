#pragma once

// OLMo 2: no pre-norms; RMS norms of the attention's and the feed-forward's output before each
// residual add, and of q and k over the whole projection before the rotation. OLMo 3 files (the
// same architecture name) add a sliding window on three layers of four, whose layers rotate
// without the global layers' scaling.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kOlmo2Classes[] = {{"Olmo2ForCausalLM"}};

inline constexpr LayerTensor kOlmo2Layer[] = {kAttnQ,        spanning(kAttnQNorm, FamilyDim::kQ),
                                              kAttnK,        spanning(kAttnKNorm, FamilyDim::kKv),
                                              kAttnV,        kAttnOutput,
                                              kAttnPostNorm, kFfnGate,
                                              kFfnUp,        kFfnDown,
                                              kFfnPostNorm};

inline constexpr FamilyShape kOlmo2Shapes[] = {
    {"olmo2-1b", 2048, 16, 16, 16, 128, 8192, 100352, 4096, 500000.0f, 1e-6f, false},
};

inline constexpr ModelFamily kOlmo2{.gguf_arch = "olmo2",
                                    .summary = "post-norms only, q/k norms",
                                    .hf_classes = kOlmo2Classes,
                                    .layer = kOlmo2Layer,
                                    .sliding_window_period = 4,
                                    .swa_rope_unscaled = true,
                                    .shapes = kOlmo2Shapes};

}  // namespace baton::families
