#include "core/formats/hf_import/llama_tensors.h"

#include <map>
#include <string_view>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"

namespace baton::hf {
namespace {

constexpr std::string_view kOutputSource = "lm_head.weight";

std::vector<TensorMapping> expected_tensors(const LlamaConfig& c) {
  const int64_t embd = c.hidden_size, ff = c.intermediate_size, vocab = c.vocab_size;
  const int64_t q = int64_t{c.n_head} * c.head_dim, kv = int64_t{c.n_head_kv} * c.head_dim;
  const bool gemma2 = c.gemma2.has_value();
  const auto norm = [&](const std::string& source, const std::string& name) {
    return TensorMapping{.source = source, .name = name, .shape = {embd}, .add_one = gemma2};
  };
  std::vector<TensorMapping> t = {
      {"model.embed_tokens.weight", "token_embd.weight", {vocab, embd}}};
  for (int32_t i = 0; i < c.n_layer; ++i) {
    const std::string hf = "model.layers." + std::to_string(i) + ".";
    const std::string gg = "blk." + std::to_string(i) + ".";
    t.push_back(norm(hf + "input_layernorm.weight", gg + "attn_norm.weight"));
    // GGUF qwen2 keeps transformers' rotary layout; llama wants the rows interleaved.
    const bool interleave = c.gguf_architecture == "llama";
    const bool phi3 = c.gguf_architecture == "phi3";
    if (phi3) {
      // Kept fused: transformers' Phi3Attention slices qkv_proj's output as [q | k | v], as
      // llama.cpp's phi3 slices attn_qkv's.
      t.push_back({hf + "self_attn.qkv_proj.weight", gg + "attn_qkv.weight", {q + 2 * kv, embd}});
    } else {
      t.push_back({hf + "self_attn.q_proj.weight", gg + "attn_q.weight", {q, embd}, interleave});
      t.push_back({hf + "self_attn.k_proj.weight", gg + "attn_k.weight", {kv, embd}, interleave});
      t.push_back({hf + "self_attn.v_proj.weight", gg + "attn_v.weight", {kv, embd}});
    }
    if (c.gguf_architecture == "qwen2") {
      t.push_back({hf + "self_attn.q_proj.bias", gg + "attn_q.bias", {q}});
      t.push_back({hf + "self_attn.k_proj.bias", gg + "attn_k.bias", {kv}});
      t.push_back({hf + "self_attn.v_proj.bias", gg + "attn_v.bias", {kv}});
    }
    t.push_back({hf + "self_attn.o_proj.weight", gg + "attn_output.weight", {embd, q}});
    if (gemma2) {
      // Gemma 2 norms after attention and around the feed-forward.
      t.push_back(norm(hf + "post_attention_layernorm.weight", gg + "post_attention_norm.weight"));
      t.push_back(norm(hf + "pre_feedforward_layernorm.weight", gg + "ffn_norm.weight"));
      t.push_back(norm(hf + "post_feedforward_layernorm.weight", gg + "post_ffw_norm.weight"));
    } else {
      t.push_back(norm(hf + "post_attention_layernorm.weight", gg + "ffn_norm.weight"));
    }
    if (phi3) {
      // [gate | up], as Phi3MLP and llama.cpp's phi3 both split it.
      t.push_back({hf + "mlp.gate_up_proj.weight", gg + "ffn_up.weight", {2 * ff, embd}});
    } else {
      t.push_back({hf + "mlp.gate_proj.weight", gg + "ffn_gate.weight", {ff, embd}});
      t.push_back({hf + "mlp.up_proj.weight", gg + "ffn_up.weight", {ff, embd}});
    }
    t.push_back({hf + "mlp.down_proj.weight", gg + "ffn_down.weight", {embd, ff}});
  }
  t.push_back(norm("model.norm.weight", "output_norm.weight"));
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
