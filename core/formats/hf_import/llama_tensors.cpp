#include "core/formats/hf_import/llama_tensors.h"

#include <map>
#include <string_view>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"

namespace baton::hf {
namespace {

// Where the text model's tensors are: "model." in a causal LM; a multimodal checkpoint keeps them
// under language_model ("language_model.model." before transformers 4.52, "model.language_model."
// since), its lm_head as "language_model.lm_head." or "lm_head.".
struct TextPrefixes {
  std::string model = "model.";
  std::string output = "lm_head.weight";
};

TextPrefixes text_prefixes(const LlamaConfig& c, const CheckpointWeights& weights) {
  if (!c.multimodal) return {};
  if (weights.find("language_model.model.embed_tokens.weight")) {
    return {"language_model.model.", "language_model.lm_head.weight"};
  }
  return {"model.language_model.", "lm_head.weight"};
}

// The vision tower's and the projector's tensors, which a text model leaves out.
bool vision_tensor(const LlamaConfig& c, std::string_view name) {
  if (!c.multimodal) return false;
  for (std::string_view prefix : {"vision_tower.", "multi_modal_projector.", "model.vision_tower.",
                                  "model.multi_modal_projector."}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<TensorMapping> expected_tensors(const LlamaConfig& c, const TextPrefixes& prefixes) {
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
      {prefixes.model + "embed_tokens.weight", "token_embd.weight", {vocab, embd}}};
  for (int32_t i = 0; i < c.n_layer; ++i) {
    const std::string hf = prefixes.model + "layers." + std::to_string(i) + ".";
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
  t.push_back(norm(prefixes.model + "norm.weight", "output_norm.weight", embd));
  t.push_back({prefixes.output, "output.weight", {vocab, embd}});
  return t;
}

}  // namespace

std::vector<TensorMapping> map_llama_tensors(const LlamaConfig& config,
                                             const CheckpointWeights& weights) {
  const TextPrefixes prefixes = text_prefixes(config, weights);
  const std::vector<TensorMapping> expected = expected_tensors(config, prefixes);
  std::map<std::string_view, const TensorMapping*> by_source;
  for (const TensorMapping& m : expected) by_source[m.source] = &m;
  for (const std::string& name : weights.names()) {
    if (!by_source.contains(name) && !name.ends_with(".rotary_emb.inv_freq") &&
        !vision_tensor(config, name)) {
      throw Error(ErrorCategory::kInvalidModel,
                  "the checkpoint's tensor '" + gguf::printable(name) + "' is not part of a " +
                      config.architecture + " of " + std::to_string(config.n_layer) + " layers");
    }
  }

  std::vector<TensorMapping> mapped;
  for (const TensorMapping& m : expected) {
    const SafetensorsTensor* found = weights.find(m.source);
    if (m.source == prefixes.output && (config.tie_word_embeddings || !found)) continue;
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
