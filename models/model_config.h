#pragma once

#include "core/gguf/gguf_file.h"
#include "models/model.h"

namespace baton {

// Reads `<arch>.*` hyperparameters, including rope scaling, from GGUF metadata.
ModelConfig read_model_config(const gguf::GgufFile& file);

}  // namespace baton
