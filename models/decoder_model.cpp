#include "models/decoder_model.h"

namespace baton {
namespace {

class DecoderModel final : public Model {
 public:
  DecoderModel(Backend& backend, ModelConfig config, DecoderWeights weights)
      : backend_(backend), config_(std::move(config)), weights_(std::move(weights)) {}

  const ModelConfig& config() const override { return config_; }

  Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const override {
    StepGraph g(graph, backend_, config_, input, kv);
    const EmbeddingWeights& e = weights_.embeddings;
    Tensor x = g.embed(e.token_embd, "token_embd");
    for (int32_t layer = 0; layer < config_.n_layer; ++layer) {
      x = g.decoder_layer(x, weights_.layers[layer], layer);
    }
    return g.logits(x, e.output_norm, e.output);
  }

 private:
  Backend& backend_;
  ModelConfig config_;
  DecoderWeights weights_;
};

}  // namespace

std::unique_ptr<Model> make_decoder_model(Backend& backend, ModelConfig config,
                                          DecoderWeights weights) {
  return std::make_unique<DecoderModel>(backend, std::move(config), std::move(weights));
}

}  // namespace baton
