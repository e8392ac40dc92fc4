#include "core/formats/hf_import/llama_tensors.h"

#include <map>
#include <string_view>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"

namespace baton::hf {
namespace {

constexpr std::string_view kOutputSource = "lm_head.weight";

std::vector<TensorMapping> expected_tensors(const LlamaConfig& c) {
  const ModelFamily& family = *c.family;
  const int64_t embd = c.hidden_size, vocab = c.vocab_size;
  const FamilySizes sizes{.embd = embd,
                          .ff = c.intermediate_size,
                          .q = int64_t{c.n_head} * c.head_dim,
                          .kv = int64_t{c.n_head_kv} * c.head_dim,
                          .head = c.head_dim};
  const auto norm = [&](const std::string& source, const std::string& name, int64_t rows) {
    return TensorMapping{
        .source = source, .name = name, .shape = {rows}, .add_one = family.norm_plus_one};
  };
  std::vector<TensorMapping> t = {
      {"model.embed_tokens.weight", "token_embd.weight", {vocab, embd}}};
  for (int32_t i = 0; i < c.n_layer; ++i) {
    const std::string hf = "model.layers." + std::to_string(i) + ".";
    const std::string gg = "blk." + std::to_string(i) + ".";
    for (const LayerTensor& tensor : family.layer) {
      if (tensor.optional) continue;
      const std::string source = hf + std::string(tensor.hf), name = gg + std::string(tensor.gguf);
      const int64_t rows = tensor.row_count(sizes);
      switch (tensor.role) {
        case TensorRole::kNorm:
          t.push_back(norm(source, name, rows));
          break;
        case TensorRole::kBias:
          t.push_back({source, name, {rows}});
          break;
        case TensorRole::kMatrix:
          // A fused weight stays fused: the GGUF family splits it as the checkpoint's does.
          t.push_back({.source = source,
                       .name = name,
                       .shape = {rows, sizes.of(tensor.cols)},
                       .interleave_rotary = tensor.rotary && family.interleave_rotary});
          break;
      }
    }
  }
  t.push_back(norm("model.norm.weight", "output_norm.weight", embd));
  t.push_back({std::string(kOutputSource), "output.weight", {vocab, embd}});
  return t;
}

}  // namespace

std::vector<TensorMapping> map_llama_tensors(const LlamaConfig& config,
                                             const CheckpointWeights& weights) {
  const std::vector<TensorMapping> expected = expected_tensors(config);
  std::map<std::string_view, const TensorMapping*> by_source;
  for (const TensorMapping& m : expected) by_source[m.source] = &m;
  for (const std::string& name : weights.names()) {
    if (!by_source.contains(name) && !name.ends_with(".rotary_emb.inv_freq")) {
      throw Error(ErrorCategory::kInvalidModel,
                  "the checkpoint's tensor '" + gguf::printable(name) + "' is not part of a " +
                      config.architecture + " of " + std::to_string(config.n_layer) + " layers");
    }
  }

  std::vector<TensorMapping> mapped;
  for (const TensorMapping& m : expected) {
    const SafetensorsTensor* found = weights.find(m.source);
    if (m.source == kOutputSource && (config.tie_word_embeddings || !found)) continue;
    if (!found) {
      throw Error(ErrorCategory::kInvalidModel, "the checkpoint has no tensor '" + m.source + "'");
    }
    if (found->shape != m.shape) {
      throw Error(ErrorCategory::kInvalidModel,
                  "tensor '" + m.source + "' has shape " + to_string(found->shape) +
                      " but config.json implies " + to_string(m.shape));
    }
    mapped.push_back(m);
  }
  return mapped;
}

}  // namespace baton::hf
