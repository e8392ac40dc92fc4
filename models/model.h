#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/backend.h"
#include "core/runtime/comm/communicator.h"
#include "core/runtime/op.h"

namespace baton {

class LoraSlots;

// Hyperparameters every decoder-only architecture reports, read from GGUF metadata. A model
// loaded as a tensor-parallel shard reports its own rank's n_head, n_head_kv and n_ff (the
// heads and feed-forward rows it holds); n_vocab and n_layer stay the whole model's.
struct ModelConfig {
  std::string architecture;
  int32_t n_vocab = 0;
  int32_t n_ctx_train = 0;
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  int32_t n_ff = 0;
  float rms_eps = 1e-5f;
  RopeParams rope;
  // Multiplies q·k before the softmax; 0 means 1/sqrt(head_dim).
  float attn_scale = 0.0f;
  // Soft-capping (c * tanh(x / c)) of attention scores and of the final logits; 0: none.
  float attn_softcap = 0.0f;
  float final_softcap = 0.0f;
  // Phi-3's LongRoPE: frequency factors for contexts up to original_context (short) and beyond
  // (long), chosen per step by StepInput::context_size as llama.cpp chooses them by its context
  // size (the rotation's magnitude is rope.attn_factor).
  struct LongRope {
    std::vector<float> short_factors, long_factors;
    int32_t original_context = 0;
  };
  std::optional<LongRope> long_rope;
  // Layers i with swa_layers[i] attend only to the last `sliding_window` positions; empty: none.
  int32_t sliding_window = 0;
  std::vector<bool> swa_layers;
  // The rotation of those windowed layers where it differs from `rope` (Gemma 3's local base).
  std::optional<RopeParams> swa_rope;
  // Layers i with nope_layers[i] take no rotary embedding (SmolLM3); empty: every layer does.
  std::vector<bool> nope_layers;

  bool windowed(int32_t layer) const {
    return static_cast<size_t>(layer) < swa_layers.size() && swa_layers[layer];
  }
  // The attention window of `layer` (AttentionParams::window): 0 for the whole context.
  int32_t attention_window(int32_t layer) const { return windowed(layer) ? sliding_window : 0; }
  bool rotary(int32_t layer) const {
    return static_cast<size_t>(layer) >= nope_layers.size() || !nope_layers[layer];
  }
};

// The part of a model that one rank of a distributed run holds.
struct ModelShard {
  // Tensor parallelism: this rank's index among the tp_size ranks that split every layer
  // (Megatron-style), and their group, whose all-reduce follows each row-split matmul.
  int32_t tp_rank = 0;
  int32_t tp_size = 1;
  Communicator* tensor_group = nullptr;
  // Pipeline parallelism: the layers [first_layer, end_layer) this rank's stage runs; end_layer
  // 0 means through the last.
  int32_t first_layer = 0;
  int32_t end_layer = 0;

  int32_t layer_end(int32_t n_layer) const { return end_layer > 0 ? end_layer : n_layer; }
  int32_t layer_count(int32_t n_layer) const { return layer_end(n_layer) - first_layer; }
  bool first_stage() const { return first_layer == 0; }
  bool last_stage(int32_t n_layer) const { return layer_end(n_layer) == n_layer; }
};

// One model step's input: the new tokens of every scheduled sequence, flattened, with where each
// lives in the paged KV cache, and which tokens need logits (usually each sequence's last).
struct StepInput {
  std::vector<int32_t> tokens;
  std::shared_ptr<const PagedBatch> layout;
  std::vector<int32_t> logit_rows;
  // The last stage returns the final-normed hidden state of the logit rows [rows, n_embd] (what
  // the vocabulary projection would read) instead of their logits: features for a length
  // predictor (tools/length_head).
  bool output_hidden = false;
  // The most tokens a sequence may hold (the serving context size): picks LongRoPE's factors.
  int32_t context_size = 0;
  // On a pipeline stage after the first: the previous stage's output [tokens, n_embd], which
  // takes the embedding's place.
  std::optional<Tensor> hidden;
  // LoRA adapters: the slots holding them and each token's slot (-1: the base model alone);
  // null when no token of the step uses one.
  struct Lora {
    const LoraSlots* slots = nullptr;
    std::vector<int32_t> token_slots;
  };
  std::shared_ptr<const Lora> lora;
};

// A step's view of the KV cache: one K and one V tensor per layer of the model's shard, each
// [n_blocks, block_size, n_kv_heads, head_dim], which kv_write fills and attention reads through
// the step's block tables. The serving layer owns the cache; a model only sees these tensors.
struct KvTensors {
  std::span<const Tensor> keys;
  std::span<const Tensor> values;
};

// A loaded model: weights placed on a backend, and the recipe for one step's graph.
class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;
  // The part of the model this process holds; the whole model unless loaded as a shard.
  virtual const ModelShard& shard() const {
    static const ModelShard kWhole;
    return kWhole;
  }
  // Appends the step's computation to `graph` and returns its logits tensor
  // [logit_rows.size(), n_vocab] (a tensor-parallel shard: its slice of the vocabulary,
  // vocabulary_slice() wide); writes the new tokens' K/V into `kv`. A pipeline stage before the
  // last returns its hidden state [tokens, n_embd] instead.
  virtual Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const = 0;
};

// Rows [first, first + count) of the output projection that tensor-parallel rank `rank` of
// `size` holds: equal slices of ceil(n_vocab / size) rows, the last one shorter when n_vocab
// does not divide, so every rank's logits can be gathered as equal blocks.
struct VocabularySlice {
  int64_t first = 0, count = 0, stride = 0;  // stride: the padded slice every rank sends
};
VocabularySlice vocabulary_slice(int64_t n_vocab, int32_t rank, int32_t size);

// Reads the config and weights of `file` for `backend`, only `shard`'s part of them, as the
// decoder of models/decoder_model.cpp. Throws Error(kUnsupported) for an architecture no family
// of core/formats/family describes or a split the model cannot take,
// Error(kInvalidModel) naming a missing or misshapen tensor or metadata key.
std::unique_ptr<Model> load_model(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard = {});

}  // namespace baton
