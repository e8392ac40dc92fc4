#pragma once

#include <memory>
#include <vector>

#include "models/shard_layout.h"
#include "models/step_graph.h"
#include "models/weight_loader.h"

namespace baton {

// The weights of a Llama-style decoder: vocabulary tables and pre-norm layers.
struct DecoderWeights {
  EmbeddingWeights embeddings;
  std::vector<DecoderLayerWeights> layers;
};

// Layer `i`'s norms and separate q/k/v/output and gate/up/down matrices under llama.cpp's
// names (blk.<i>.attn_q.weight, ...), checked against the whole model's shapes (`config`) and cut
// as `layout` says; no biases.
DecoderLayerWeights load_decoder_layer(const WeightLoader& load, const ModelConfig& config,
                                       const ShardLayout& layout, int32_t i);

// Llama, Qwen2, Phi-3: each family's file reads its own tensor layout into DecoderWeights, and
// the step is the same chain of StepGraph::decoder_layer blocks between embedding and logits.
// `weights.layers` holds the shard's layers; `config` is the shard's (ShardLayout::local).
std::unique_ptr<Model> make_decoder_model(Backend& backend, ModelConfig config,
                                          DecoderWeights weights, const ModelShard& shard = {});

}  // namespace baton
