#pragma once

#include "core/formats/family/model_family.h"
#include "models/model.h"
#include "models/weight_loader.h"

namespace baton {

// The rotary frequency factors a file may hold, into config.rope and config.long_rope: for a
// family that reads them, rope_freqs.weight (Llama 3's per-pair divisors) and, with LongRoPE, both
// rope_factors_{short,long}.weight with the context length they switch at
// (rope.scaling.original_context_length, else the trained one) and the magnitude scaling
// (rope.scaling.attn_factor). Error(kInvalidModel) for one LongRoPE set without the other or
// values out of range, Error(kUnsupported) for LongRoPE over part of the head.
void read_rope_factors(const WeightLoader& load, const ModelFamily& family, ModelConfig& config);

}  // namespace baton
