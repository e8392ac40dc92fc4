#pragma once

// What a model needs, counted from its GGUF file: the bytes of its weights in each type Baton
// can quantize them to (exactly as `baton quantize` would write them), the bytes of K and V per
// token in each KV cache type, and the work of a token.

#include <cstdint>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/dtype.h"
#include "models/model_config.h"

namespace baton {

struct WeightChoice {
  std::string name;  // "as stored", or a `baton quantize --type` preset
  DType type;        // the type of most matrices
  uint64_t bytes = 0;
  // What one decode step reads: every tensor but token_embd, of which it reads one row, unless
  // token_embd doubles as the output projection.
  uint64_t decode_bytes = 0;
};

struct KvChoice {
  DType dtype;
  uint64_t bytes_per_token = 0;  // K and V of every layer
};

struct ModelFootprint {
  std::string name;
  ModelConfig config;
  int64_t n_params = 0;
  // Multiply-adds per prompt token through the layers' matrices (attention's own left out).
  int64_t prefill_params = 0;
  std::vector<WeightChoice> weights;  // the file as it is first, then each preset that applies
  std::vector<KvChoice> kv;           // every KV cache type the model's head size allows
};

ModelFootprint model_footprint(const gguf::GgufFile& file);

// The footprint of a shape `baton synth` knows by name (synthetic_shape_names()), with f16
// weights as stored, as checkpoints are published: counted from a file of that layout whose
// tensors are holes, written to the temporary directory and removed again. Throws
// Error(kInvalidArgument) listing the known shapes for any other name.
ModelFootprint shape_footprint(const std::string& shape_name);

}  // namespace baton
