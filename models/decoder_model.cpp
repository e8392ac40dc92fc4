#include <cmath>
#include <map>
#include <vector>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "models/model.h"
#include "models/model_config.h"
#include "models/rope_factors.h"
#include "models/shard_layout.h"
#include "models/step_graph.h"
#include "models/weight_loader.h"

// The decoder every family of core/formats/family is built as: token embeddings (scaled where
// the family says), the shard's layers as StepGraph::decoder_layer blocks over the tensors the
// family's layer table lists, then the final norm and the vocabulary projection. Shapes are
// checked against the file's hyperparameters, fused weights are split into their parts' row
// ranges (views, no copy), and a tensor-parallel shard takes its slice of each weight
// (ShardLayout).

namespace baton {
namespace {

class DecoderModel final : public Model {
 public:
  DecoderModel(Backend& backend, ModelConfig config, const ModelFamily& family,
               EmbeddingWeights embeddings, std::vector<DecoderLayerWeights> layers,
               ModelShard shard)
      : backend_(backend),
        config_(std::move(config)),
        activation_(family.activation == FamilyActivation::kGelu ? GateActivation::kGelu
                                                                 : GateActivation::kSilu),
        scale_embeddings_(family.scale_embeddings),
        embeddings_(std::move(embeddings)),
        layers_(std::move(layers)),
        shard_(shard) {}

  const ModelConfig& config() const override { return config_; }
  const ModelShard& shard() const override { return shard_; }

  Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const override {
    StepGraph g(graph, backend_, config_, input, kv, shard_);
    Tensor x = input.hidden ? *input.hidden : embed(g);
    for (int32_t layer = shard_.first_layer; layer < shard_.layer_end(config_.n_layer); ++layer) {
      x = g.decoder_layer(x, layers_[static_cast<size_t>(layer - shard_.first_layer)], activation_,
                          layer);
    }
    return shard_.last_stage(config_.n_layer)
               ? g.logits(x, embeddings_.output_norm, embeddings_.output)
               : x;
  }

 private:
  Tensor embed(StepGraph& g) const {
    const Tensor x = g.embed(embeddings_.token_embd, "token_embd");
    if (!scale_embeddings_) return x;
    return g.scale(x, std::sqrt(static_cast<float>(config_.n_embd)), "token_embd_scaled");
  }

  Backend& backend_;
  ModelConfig config_;
  GateActivation activation_;
  bool scale_embeddings_;
  EmbeddingWeights embeddings_;
  std::vector<DecoderLayerWeights> layers_;
  ModelShard shard_;
};

// The slice of a weight or bias that the shard holds: norms are whole on every rank; any other
// node must say how it is cut, or a bias would be added once per rank.
std::optional<WeightSlice> node_slice(std::string_view node, TensorRole role,
                                      const ShardLayout& layout) {
  if (role == TensorRole::kNorm) return std::nullopt;
  if (node == "q" || node == "q_bias") return layout.q_rows;
  if (node == "k" || node == "v" || node == "k_bias" || node == "v_bias") return layout.kv_rows;
  if (node == "attn_output") return layout.attn_columns;
  if (node == "ffn_gate" || node == "ffn_up") return layout.ffn_rows;
  if (node == "ffn_down") return layout.ffn_columns;
  throw Error(ErrorCategory::kInternal,
              "the decoder does not know how to split node '" + std::string(node) + "'");
}

// Layer `i`'s tensors as the family's table lists them, by the node each feeds.
class LayerTensors {
 public:
  LayerTensors(const WeightLoader& load, const ModelFamily& family, const ModelConfig& c,
               const ShardLayout& layout, int32_t i)
      : arch_(c.architecture) {
    const std::string prefix = "blk." + std::to_string(i) + ".";
    const FamilySizes sizes{.embd = c.n_embd,
                            .ff = c.n_ff,
                            .q = int64_t{c.n_head} * c.head_dim,
                            .kv = int64_t{c.n_head_kv} * c.head_dim,
                            .head = c.head_dim};
    for (const LayerTensor& t : family.layer) {
      const std::string name = prefix + std::string(t.gguf);
      if (t.optional && !load.file().find_tensor(name)) continue;
      const int64_t rows = t.row_count(sizes);
      if (t.role != TensorRole::kMatrix) {
        put(t.node, load.get_f32(name, {rows}, node_slice(t.node, t.role, layout)));
        continue;
      }
      const Shape shape = {rows, sizes.of(t.cols)};
      if (t.fused.empty()) {
        put(t.node, load.get(name, shape, node_slice(t.node, t.role, layout)));
        continue;
      }
      int64_t first = 0;
      for (const FusedPart& part : t.fused) {
        const int64_t count = sizes.of(part.rows);
        put(part.node,
            load.get_rows(name, shape, first, count, node_slice(part.node, t.role, layout)));
        first += count;
      }
    }
  }

  Tensor take(std::string_view node) {
    std::optional<Tensor> t = find(node);
    if (!t) missing_node(node);
    return *t;
  }

  std::optional<Tensor> find(std::string_view node) {
    const auto it = tensors_.find(node);
    if (it == tensors_.end()) return std::nullopt;
    Tensor t = it->second;
    tensors_.erase(it);
    return t;
  }

  // Every tensor the table lists feeds the graph: a node this loader does not know is a table
  // error, not a weight to drop silently.
  void check_all_taken() const {
    if (!tensors_.empty()) {
      throw Error(ErrorCategory::kInternal, "the " + arch_ + " family's layer table names node '" +
                                                std::string(tensors_.begin()->first) +
                                                "', which the decoder does not use");
    }
  }

 private:
  void put(std::string_view node, Tensor t) {
    if (!tensors_.emplace(node, std::move(t)).second) {
      throw Error(ErrorCategory::kInternal, "the " + arch_ + " family's layer table feeds node '" +
                                                std::string(node) + "' twice");
    }
  }

  [[noreturn]] void missing_node(std::string_view node) const {
    throw Error(ErrorCategory::kInternal,
                "the " + arch_ + " family's layer table has no node '" + std::string(node) + "'");
  }

  std::string arch_;
  std::map<std::string_view, Tensor> tensors_;
};

DecoderLayerWeights load_layer(const WeightLoader& load, const ModelFamily& family,
                               const ModelConfig& c, const ShardLayout& layout, int32_t i) {
  LayerTensors t(load, family, c, layout, i);
  DecoderLayerWeights w;
  w.attn_norm = t.find("attn_norm");
  w.attn = {.wq = t.take("q"),
            .wk = t.take("k"),
            .wv = t.take("v"),
            .wo = t.take("attn_output"),
            .bq = t.find("q_bias"),
            .bk = t.find("k_bias"),
            .bv = t.find("v_bias"),
            .q_norm = t.find("q_norm"),
            .k_norm = t.find("k_norm")};
  w.attn_post_norm = t.find("attn_post_norm");
  w.ffn_norm = t.find("ffn_norm");
  w.ffn = {.gate = t.take("ffn_gate"), .up = t.take("ffn_up"), .down = t.take("ffn_down")};
  w.ffn_post_norm = t.find("ffn_post_norm");
  t.check_all_taken();
  return w;
}

}  // namespace

std::unique_ptr<Model> load_model(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard) {
  const std::string arch = file.get_string("general.architecture");
  const ModelFamily* family = find_model_family(arch);
  // llama.cpp writes a multimodal model's vision tower (Gemma 3's, ...) as a file of its own.
  if (arch == "clip") {
    throw Error(ErrorCategory::kUnsupported,
                file.path().filename().string() +
                    " is a vision projector (mmproj, architecture 'clip'); Baton runs the text "
                    "model: pass the model's own GGUF file");
  }
  if (!family) {
    throw Error(ErrorCategory::kUnsupported, file.path().filename().string() +
                                                 ": unknown model architecture '" + arch +
                                                 "' (supported: " + model_family_names() + ")");
  }
  // A norm over the whole q or k projection needs all of it, which no tensor-parallel rank has.
  for (const LayerTensor& t : family->layer) {
    if (shard.tp_size > 1 && t.role == TensorRole::kNorm &&
        (t.rows == FamilyDim::kQ || t.rows == FamilyDim::kKv)) {
      throw Error(ErrorCategory::kUnsupported,
                  arch +
                      " normalises the whole q and k projections, which tensor parallelism "
                      "splits over ranks (use pipeline or data parallelism)");
    }
  }
  ModelConfig config = read_model_config(file);
  const WeightLoader load(file, backend);
  read_rope_factors(load, *family, config);
  config.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
  const ShardLayout layout = shard_layout(config, shard);
  EmbeddingWeights embeddings = load.embeddings(config.n_vocab, config.n_embd, layout.vocab_rows);
  std::vector<DecoderLayerWeights> layers;
  for (int32_t i = shard.first_layer; i < shard.layer_end(config.n_layer); ++i) {
    layers.push_back(load_layer(load, *family, config, layout, i));
  }
  return std::make_unique<DecoderModel>(backend, layout.local, *family, std::move(embeddings),
                                        std::move(layers), shard);
}

}  // namespace baton
