#pragma once

#include "core/formats/gguf/gguf_file.h"
#include "models/model.h"

namespace baton {

// Reads `<arch>.*` hyperparameters, including rope scaling, from GGUF metadata, and for an
// architecture of core/formats/family the keys its descriptor names (soft caps, sliding windows,
// attention scale) with the family's defaults.
ModelConfig read_model_config(const gguf::GgufFile& file);

}  // namespace baton
