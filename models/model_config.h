#pragma once

#include "core/formats/gguf/gguf_file.h"
#include "models/model.h"

namespace baton {

// Reads `<arch>.*` hyperparameters, including rope scaling, from GGUF metadata.
ModelConfig read_model_config(const gguf::GgufFile& file);

}  // namespace baton
