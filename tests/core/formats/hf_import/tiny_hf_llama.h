#pragma once

// A tiny random-weight Hugging Face Llama checkpoint directory (config.json,
// tokenizer_config.json, a SentencePiece tokenizer.model trained here, model.safetensors in HF
// layout) and a naive double-precision forward pass over its weights as transformers' Llama
// computes it: RMSNorm, rotate_half RoPE, GQA attention with a causal mask, SwiGLU; or as its
// Gemma2 does: scaled embeddings, (1 + weight) norms before and after attention and the
// feed-forward, query_pre_attn_scalar, soft-capped scores and logits, a sliding window on even
// layers, GeGLU.

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/core/formats/hf_import/safetensors_writer.h"

namespace baton::testing {

struct TinyHfSpec {
  int hidden = 64, layers = 2, heads = 4, kv_heads = 2, ffn = 96;
  int extra_vocab = 0;  // embedding rows past the SentencePiece pieces (config vocab_size)
  bool tied = false;    // tie_word_embeddings: no lm_head.weight
  double rope_theta = 10000.0, rms_eps = 1e-5;
  bool qwen2 = false;  // Qwen2ForCausalLM: q, k and v projections with biases
  // Phi3ForCausalLM: q, k, v stored fused as qkv_proj and gate, up as gate_up_proj, in the
  // order transformers' Phi3 slices them; a sliding window (of 128) below max_position_embeddings.
  bool phi3 = false;
  // With phi3: rope_scaling of type longrope with original_max_position_embeddings 8, so the
  // test's ten-token prompts use the long factors, in transformers and in Baton alike.
  bool long_rope = false;
  // Gemma2ForCausalLM, with a head size (24) that is not hidden / heads, tied embeddings and a
  // SentencePiece model without the dummy "▁" prefix, as Gemma's
  bool gemma2 = false;
  // Gemma3ForCausalLM: Gemma 2's layout (no soft-caps) with q/k norms per head, five windowed
  // layers to one global, the windowed ones rotating with rope_local_base_freq.
  bool gemma3 = false;
  // With gemma3: a Gemma3ForConditionalGeneration checkpoint, the text model's settings in
  // text_config (those equal to transformers' defaults left out) and its tensors under
  // model.language_model, beside a vision tower's.
  bool multimodal = false;
  bool qwen3 = false;    // Qwen3ForCausalLM: q/k RMS norms over each head, head_dim 24
  bool olmo2 = false;    // Olmo2ForCausalLM: no pre-norms, post-norms, q/k norms over all heads
  bool smollm3 = false;  // SmolLM3ForCausalLM: no rotation on every fourth layer
  // rope_scaling of Llama 3.1 (llama3, factor 8 from an original context of 16) or YaRN (factor
  // 4 from 64), and Phi-4-mini's partial_rotary_factor (one half here).
  bool llama3_rope = false, yarn = false, partial_rotary = false;
};

// Gemma 3's local layers' rotary base and window, small enough to matter in ten tokens.
struct TinyGemma3 {
  static constexpr double kLocalBase = 100.0;
  static constexpr int kWindow = 3;
};

// Gemma 2 settings small enough to matter in a ten-token test.
struct TinyGemma2 {
  static constexpr int kHeadDim = 24, kWindow = 4;
  static constexpr double kQueryScalar = 20.0, kAttnSoftcap = 3.0, kFinalSoftcap = 5.0;
};

// Trains a byte-fallback BPE SentencePiece model as Llama's is configured (no normalization,
// a dummy space prefix, whitespace kept) on generated sentences; writes dir/tokenizer.model.
inline void train_sentencepiece(const std::filesystem::path& dir, uint32_t seed,
                                bool dummy_prefix = true) {
  const char* words[] = {"the",  "cat",    "sat",  "on",   "a",      "mat",   "and",
                         "dog",  "ran",    "to",   "big",  "red",    "house", "in",
                         "tree", "little", "girl", "saw",  "bird",   "happy", "sun",
                         "day",  "played", "with", "ball", "friend", "jumped"};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, std::size(words) - 1);
  const std::filesystem::path corpus = dir / "corpus.txt";
  {
    std::ofstream out(corpus);
    for (int line = 0; line < 400; ++line) {
      for (int w = 0; w < 8; ++w) out << (w ? " " : "") << words[pick(rng)];
      out << ". Tom has " << line << " apples!\n";
    }
  }
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + corpus.string() + " --model_prefix=" + (dir / "tokenizer").string() +
      " --vocab_size=400 --model_type=bpe --byte_fallback=true --character_coverage=1.0"
      " --normalization_rule_name=identity --remove_extra_whitespaces=false"
      " --add_dummy_prefix=" +
      std::string(dummy_prefix ? "true" : "false") + " --split_digits=true --minloglevel=2");
  std::filesystem::remove(corpus);
  std::filesystem::remove(dir / "tokenizer.vocab");
  if (!status.ok()) throw std::runtime_error("sentencepiece training failed: " + status.ToString());
}

class TinyHfLlama {
 public:
  TinyHfLlama(const std::filesystem::path& dir, const TinyHfSpec& spec, uint32_t seed)
      : spec_(spec), rng_(seed) {
    train_sentencepiece(dir, seed, !spec.gemma2);
    sentencepiece::SentencePieceProcessor sp;
    if (!sp.Load((dir / "tokenizer.model").string()).ok()) {
      throw std::runtime_error("cannot load the trained tokenizer.model");
    }
    vocab_ = sp.GetPieceSize() + spec.extra_vocab;
    write_config(dir / "config.json");
    std::ofstream(dir / "tokenizer_config.json")
        << nlohmann::json{{"add_bos_token", true}, {"add_eos_token", false}}.dump();
    make_weights();
    std::vector<SafetensorsEntry> entries;
    for (const auto& [name, w] : stored_weights()) {
      entries.push_back(f32_entry(name, w.shape, w.values));
    }
    write_safetensors(dir / "model.safetensors", entries);
  }

  int vocab_size() const { return vocab_; }

  // The logits at every position of `tokens`.
  std::vector<std::vector<double>> logits(const std::vector<int32_t>& tokens) const {
    const int n = static_cast<int>(tokens.size()), hd = head_dim();
    std::vector<Vec> x(n);
    for (int t = 0; t < n; ++t) x[t] = row("model.embed_tokens.weight", tokens[t]);
    if (spec_.gemma2 || spec_.gemma3) return gemma_logits(std::move(x));
    for (int l = 0; l < spec_.layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      // SmolLM3 leaves every fourth layer unrotated.
      const bool rotary = !spec_.smollm3 || (l + 1) % 4 != 0;
      std::vector<Vec> q(n), k(n), v(n);
      for (int t = 0; t < n; ++t) {
        const Vec h = spec_.olmo2 ? x[t] : rms_norm(x[t], p + "input_layernorm.weight");
        q[t] = qk_norm(linear(p + "self_attn.q_proj", h), p + "self_attn.q_norm.weight");
        k[t] = qk_norm(linear(p + "self_attn.k_proj", h), p + "self_attn.k_norm.weight");
        if (rotary) {
          q[t] = rotate_half_rope(q[t], t);
          k[t] = rotate_half_rope(k[t], t);
        }
        v[t] = linear(p + "self_attn.v_proj", h);
      }
      for (int t = 0; t < n; ++t) {
        Vec attn(spec_.heads * hd, 0.0);
        for (int h = 0; h < spec_.heads; ++h) {
          const int kvh = h / (spec_.heads / spec_.kv_heads);
          Vec weights(t + 1);
          double max_score = -INFINITY, total = 0;
          for (int s = 0; s <= t; ++s) {
            double dot = 0;
            for (int d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[s][kvh * hd + d];
            weights[s] = dot / std::sqrt(double(hd));
            max_score = std::max(max_score, weights[s]);
          }
          for (double& s : weights) total += s = std::exp(s - max_score);
          for (int s = 0; s <= t; ++s) {
            for (int d = 0; d < hd; ++d) {
              attn[h * hd + d] += weights[s] / total * v[s][kvh * hd + d];
            }
          }
        }
        Vec o = linear(p + "self_attn.o_proj", attn);
        // OLMo 2 norms each block's output where the others norm its input.
        if (spec_.olmo2) o = rms_norm(o, p + "post_attention_layernorm.weight");
        add_to(x[t], o);
        const Vec h = spec_.olmo2 ? x[t] : rms_norm(x[t], p + "post_attention_layernorm.weight");
        const Vec gate = linear(p + "mlp.gate_proj", h);
        Vec act = linear(p + "mlp.up_proj", h);
        for (size_t i = 0; i < act.size(); ++i) act[i] *= gate[i] / (1.0 + std::exp(-gate[i]));
        Vec down = linear(p + "mlp.down_proj", act);
        if (spec_.olmo2) down = rms_norm(down, p + "post_feedforward_layernorm.weight");
        add_to(x[t], down);
      }
    }
    std::vector<Vec> out(n);
    const std::string head = spec_.tied ? "model.embed_tokens" : "lm_head";
    for (int t = 0; t < n; ++t) out[t] = linear(head, rms_norm(x[t], "model.norm.weight"));
    return out;
  }

 private:
  using Vec = std::vector<double>;
  struct Weight {
    std::vector<int64_t> shape;
    std::vector<float> values;
  };

  int head_dim() const {
    return spec_.gemma2 || spec_.gemma3 || spec_.qwen3 ? TinyGemma2::kHeadDim
                                                       : spec_.hidden / spec_.heads;
  }
  int rotary_dim() const { return spec_.partial_rotary ? head_dim() / 2 : head_dim(); }

  // Qwen3's and Gemma 3's RMS norm over each head of a projection, OLMo 2's over all of it;
  // none for the others.
  Vec qk_norm(Vec x, const std::string& weight) const {
    if (!weights_.contains(weight)) return x;
    const size_t size = weights_.at(weight).values.size();
    const double offset = spec_.gemma3 ? 1.0 : 0.0;
    for (size_t first = 0; first < x.size(); first += size) {
      const Vec part = rms_norm(Vec(x.begin() + first, x.begin() + first + size), weight, offset);
      std::copy(part.begin(), part.end(), x.begin() + first);
    }
    return x;
  }

  // transformers' Gemma2Model and Gemma3TextModel from the embedding rows on.
  std::vector<Vec> gemma_logits(std::vector<Vec> x) const {
    using G = TinyGemma2;
    const int n = static_cast<int>(x.size()), hd = head_dim();
    for (Vec& v : x) {
      for (double& e : v) e *= std::sqrt(double(spec_.hidden));
    }
    for (int l = 0; l < spec_.layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      std::vector<Vec> q(n), k(n), v(n);
      for (int t = 0; t < n; ++t) {
        const Vec h = gemma_norm(x[t], p + "input_layernorm.weight");
        q[t] = qk_norm(linear(p + "self_attn.q_proj", h), p + "self_attn.q_norm.weight");
        k[t] = qk_norm(linear(p + "self_attn.k_proj", h), p + "self_attn.k_norm.weight");
        q[t] = rotate_half_rope(q[t], t, local(l));
        k[t] = rotate_half_rope(k[t], t, local(l));
        v[t] = linear(p + "self_attn.v_proj", h);
      }
      for (int t = 0; t < n; ++t) {
        const int window = spec_.gemma3 ? TinyGemma3::kWindow : G::kWindow;
        const bool windowed = spec_.gemma3 ? local(l) : l % 2 == 0;
        const int first = windowed ? std::max(0, t - window + 1) : 0;
        Vec attn(spec_.heads * hd, 0.0);
        for (int h = 0; h < spec_.heads; ++h) {
          const int kvh = h / (spec_.heads / spec_.kv_heads);
          Vec weights(t + 1, 0.0);
          double max_score = -INFINITY, total = 0;
          for (int s = first; s <= t; ++s) {
            double dot = 0;
            for (int d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[s][kvh * hd + d];
            weights[s] = dot / std::sqrt(G::kQueryScalar);
            if (spec_.gemma2)
              weights[s] = G::kAttnSoftcap * std::tanh(weights[s] / G::kAttnSoftcap);
            max_score = std::max(max_score, weights[s]);
          }
          for (int s = first; s <= t; ++s) total += weights[s] = std::exp(weights[s] - max_score);
          for (int s = first; s <= t; ++s) {
            for (int d = 0; d < hd; ++d) {
              attn[h * hd + d] += weights[s] / total * v[s][kvh * hd + d];
            }
          }
        }
        add_to(x[t], gemma_norm(linear(p + "self_attn.o_proj", attn),
                                p + "post_attention_layernorm.weight"));
        const Vec h = gemma_norm(x[t], p + "pre_feedforward_layernorm.weight");
        const Vec gate = linear(p + "mlp.gate_proj", h);
        Vec act = linear(p + "mlp.up_proj", h);
        for (size_t i = 0; i < act.size(); ++i) act[i] *= gelu_tanh(gate[i]);
        add_to(x[t], gemma_norm(linear(p + "mlp.down_proj", act),
                                p + "post_feedforward_layernorm.weight"));
      }
    }
    std::vector<Vec> out(n);
    for (int t = 0; t < n; ++t) {
      out[t] = linear("model.embed_tokens", gemma_norm(x[t], "model.norm.weight"));
      for (double& logit : out[t]) {
        if (spec_.gemma2) logit = G::kFinalSoftcap * std::tanh(logit / G::kFinalSoftcap);
      }
    }
    return out;
  }

  // Gemma 3's local layers: five of every six.
  bool local(int layer) const { return spec_.gemma3 && (layer + 1) % 6 != 0; }

  static double gelu_tanh(double x) {
    const double pi = std::acos(-1.0);
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
  }

  // Gemma's RMSNorm scales by 1 + weight.
  Vec gemma_norm(const Vec& x, const std::string& weight) const { return rms_norm(x, weight, 1.0); }

  // The checkpoint's tensors: the forward pass's own, with Phi-3's projections fused.
  std::map<std::string, Weight> stored_weights() const {
    if (spec_.multimodal) {
      std::map<std::string, Weight> stored;
      for (const auto& [name, w] : weights_) {
        stored["model.language_model." + name.substr(std::string("model.").size())] = w;
      }
      stored["model.vision_tower.patch_embedding.weight"] = Weight{{4, 3}, std::vector<float>(12)};
      stored["model.multi_modal_projector.norm.weight"] = Weight{{4}, std::vector<float>(4)};
      return stored;
    }
    if (!spec_.phi3) return weights_;
    std::map<std::string, Weight> stored = weights_;
    const auto fuse = [&](const std::string& fused, const std::vector<std::string>& parts) {
      Weight w{{0, weights_.at(parts[0]).shape[1]}, {}};
      for (const std::string& part : parts) {
        const Weight& p = weights_.at(part);
        w.shape[0] += p.shape[0];
        w.values.insert(w.values.end(), p.values.begin(), p.values.end());
        stored.erase(part);
      }
      stored[fused] = std::move(w);
    };
    for (int l = 0; l < spec_.layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      fuse(p + "self_attn.qkv_proj.weight",
           {p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
            p + "self_attn.v_proj.weight"});
      fuse(p + "mlp.gate_up_proj.weight", {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"});
    }
    return stored;
  }

  void write_config(const std::filesystem::path& path) const {
    const auto [architecture, model_type] =
        spec_.qwen2     ? std::pair{"Qwen2ForCausalLM", "qwen2"}
        : spec_.phi3    ? std::pair{"Phi3ForCausalLM", "phi3"}
        : spec_.gemma2  ? std::pair{"Gemma2ForCausalLM", "gemma2"}
        : spec_.gemma3  ? std::pair{"Gemma3ForCausalLM", "gemma3_text"}
        : spec_.qwen3   ? std::pair{"Qwen3ForCausalLM", "qwen3"}
        : spec_.olmo2   ? std::pair{"Olmo2ForCausalLM", "olmo2"}
        : spec_.smollm3 ? std::pair{"SmolLM3ForCausalLM", "smollm3"}
                        : std::pair{"LlamaForCausalLM", "llama"};
    nlohmann::json config = {{"architectures", {architecture}},
                             {"model_type", model_type},
                             {"hidden_size", spec_.hidden},
                             {"intermediate_size", spec_.ffn},
                             {"num_hidden_layers", spec_.layers},
                             {"num_attention_heads", spec_.heads},
                             {"num_key_value_heads", spec_.kv_heads},
                             {"max_position_embeddings", 256},
                             {"rms_norm_eps", spec_.rms_eps},
                             {"rope_theta", spec_.rope_theta},
                             {"rope_scaling", nullptr},
                             {"vocab_size", vocab_},
                             {"tie_word_embeddings", spec_.tied},
                             {"bos_token_id", 1},
                             {"eos_token_id", 2},
                             {"torch_dtype", "float32"}};
    if (spec_.phi3) config["sliding_window"] = 128;
    if (spec_.long_rope) {
      std::vector<double> short_factors, long_factors;
      for (int i = 0; i < rotary_dim() / 2; ++i) {
        short_factors.push_back(long_rope_factor(false, i));
        long_factors.push_back(long_rope_factor(true, i));
      }
      config["rope_scaling"] = {
          {"type", "longrope"}, {"short_factor", short_factors}, {"long_factor", long_factors}};
      config["original_max_position_embeddings"] = kLongRopeOriginal;
    }
    if (spec_.llama3_rope) {
      config["rope_scaling"] = {{"rope_type", "llama3"},
                                {"factor", 8.0},
                                {"low_freq_factor", 1.0},
                                {"high_freq_factor", 4.0},
                                {"original_max_position_embeddings", kLlama3Original}};
    }
    if (spec_.yarn) {
      config["rope_scaling"] = {
          {"type", "yarn"}, {"factor", kYarnFactor}, {"original_max_position_embeddings", 64}};
    }
    if (spec_.partial_rotary) config["partial_rotary_factor"] = 0.5;
    if (spec_.qwen3) config["head_dim"] = TinyGemma2::kHeadDim;
    if (spec_.smollm3) {
      std::vector<int> no_rope_layers;
      for (int l = 0; l < spec_.layers; ++l) no_rope_layers.push_back((l + 1) % 4 != 0);
      config["no_rope_layers"] = no_rope_layers;
    }
    if (spec_.gemma3) {
      config["head_dim"] = TinyGemma2::kHeadDim;
      config["sliding_window"] = TinyGemma3::kWindow;
      config["sliding_window_pattern"] = 6;
      config["rope_local_base_freq"] = TinyGemma3::kLocalBase;
      config["query_pre_attn_scalar"] = TinyGemma2::kQueryScalar;
      config["final_logit_softcapping"] = nullptr;
      config["attn_logit_softcapping"] = nullptr;
      config["hidden_activation"] = "gelu_pytorch_tanh";
      config.erase("tie_word_embeddings");
    }
    if (spec_.gemma2) {
      config["head_dim"] = TinyGemma2::kHeadDim;
      config["sliding_window"] = TinyGemma2::kWindow;
      config["query_pre_attn_scalar"] = TinyGemma2::kQueryScalar;
      config["attn_logit_softcapping"] = TinyGemma2::kAttnSoftcap;
      config["final_logit_softcapping"] = TinyGemma2::kFinalSoftcap;
      config["hidden_activation"] = "gelu_pytorch_tanh";
      config.erase("tie_word_embeddings");  // Gemma2Config ties them by default
    }
    if (spec_.multimodal) {
      // What transformers' Gemma3TextConfig defaults to is left out, as published configs do.
      config.erase("final_logit_softcapping");
      config.erase("attn_logit_softcapping");
      config.erase("sliding_window_pattern");
      config.erase("hidden_activation");
      config = {{"architectures", {"Gemma3ForConditionalGeneration"}},
                {"model_type", "gemma3"},
                {"torch_dtype", config["torch_dtype"]},
                {"text_config", config},
                {"vision_config", {{"model_type", "siglip_vision_model"}}}};
      config["text_config"].erase("architectures");
      config["text_config"].erase("torch_dtype");
    }
    std::ofstream(path) << config.dump(2);
  }

  void add(const std::string& name, std::vector<int64_t> shape, double scale, double offset = 0) {
    std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> values(n);
    for (float& v : values) v = static_cast<float>(offset) + normal(rng_);
    weights_[name] = Weight{std::move(shape), std::move(values)};
  }

  void make_weights() {
    const int64_t e = spec_.hidden, q = spec_.heads * head_dim(), kv = spec_.kv_heads * head_dim();
    const double in_scale = 1.5 / std::sqrt(double(e));
    const bool gemma = spec_.gemma2 || spec_.gemma3;
    // Gemma's norm weights are offsets from 1.
    const double norm_offset = gemma ? 0.0 : 1.0;
    add("model.embed_tokens.weight", {vocab_, e}, gemma ? in_scale : 1.0);
    add("model.norm.weight", {e}, 0.2, norm_offset);
    if (!spec_.tied && !gemma) add("lm_head.weight", {vocab_, e}, in_scale);
    for (int l = 0; l < spec_.layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      if (!spec_.olmo2) add(p + "input_layernorm.weight", {e}, 0.2, norm_offset);
      add(p + "self_attn.q_proj.weight", {q, e}, in_scale);
      add(p + "self_attn.k_proj.weight", {kv, e}, in_scale);
      if (spec_.qwen3 || spec_.gemma3) {
        add(p + "self_attn.q_norm.weight", {head_dim()}, 0.2, norm_offset);
        add(p + "self_attn.k_norm.weight", {head_dim()}, 0.2, norm_offset);
      }
      if (spec_.olmo2) {
        add(p + "self_attn.q_norm.weight", {q}, 0.2, 1.0);
        add(p + "self_attn.k_norm.weight", {kv}, 0.2, 1.0);
      }
      add(p + "self_attn.v_proj.weight", {kv, e}, in_scale);
      if (spec_.qwen2) {
        add(p + "self_attn.q_proj.bias", {q}, 0.5);
        add(p + "self_attn.k_proj.bias", {kv}, 0.5);
        add(p + "self_attn.v_proj.bias", {kv}, 0.5);
      }
      add(p + "self_attn.o_proj.weight", {e, q}, 1.0 / std::sqrt(double(q)));
      add(p + "post_attention_layernorm.weight", {e}, 0.2, norm_offset);
      if (gemma) add(p + "pre_feedforward_layernorm.weight", {e}, 0.2);
      if (gemma || spec_.olmo2) {
        add(p + "post_feedforward_layernorm.weight", {e}, 0.2, gemma ? 0.0 : 1.0);
      }
      add(p + "mlp.gate_proj.weight", {spec_.ffn, e}, in_scale);
      add(p + "mlp.up_proj.weight", {spec_.ffn, e}, in_scale);
      add(p + "mlp.down_proj.weight", {e, spec_.ffn}, 1.0 / std::sqrt(double(spec_.ffn)));
    }
  }

  Vec row(const std::string& name, int64_t r) const {
    const Weight& w = weights_.at(name);
    const auto begin = w.values.begin() + r * w.shape[1];
    return Vec(begin, begin + w.shape[1]);
  }

  // y = W x (+ b when the layer has a bias) for W [rows, cols], PyTorch's nn.Linear.
  Vec linear(const std::string& layer, const Vec& x) const {
    const Weight& w = weights_.at(layer + ".weight");
    const auto bias = weights_.find(layer + ".bias");
    Vec y(w.shape[0], 0.0);
    if (bias != weights_.end()) y.assign(bias->second.values.begin(), bias->second.values.end());
    for (int64_t r = 0; r < w.shape[0]; ++r) {
      for (int64_t c = 0; c < w.shape[1]; ++c) y[r] += double(w.values[r * w.shape[1] + c]) * x[c];
    }
    return y;
  }

  Vec rms_norm(const Vec& x, const std::string& weight, double offset = 0.0) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / x.size() + spec_.rms_eps);
    const Weight& w = weights_.at(weight);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * (offset + w.values[i]);
    return y;
  }

  static constexpr int kLongRopeOriginal = 8;

  // Short factors near 1, long ones growing with the pair; exact in float.
  static double long_rope_factor(bool long_set, int pair) {
    return long_set ? 1.0 + 0.75 * pair : 1.0 + 0.125 * (pair % 3);
  }

  static constexpr int kLlama3Original = 16;
  static constexpr double kYarnFactor = 4.0;

  // transformers' _compute_llama3_parameters: each pair's frequency kept, divided by the factor
  // or, between the two wavelengths, a blend of both.
  double llama3_divisor(double inv_freq) const {
    const double wavelength = 2 * std::acos(-1.0) / inv_freq;
    if (wavelength < kLlama3Original / 4.0) return 1.0;
    if (wavelength > kLlama3Original / 1.0) return 8.0;
    const double smooth = (kLlama3Original / wavelength - 1.0) / (4.0 - 1.0);
    return 1.0 / ((1 - smooth) / 8.0 + smooth);
  }

  // transformers' _compute_yarn_parameters (beta_fast 32, beta_slow 1): interpolated
  // frequencies for the pairs past the correction range, the original ones before it, a linear
  // blend within; cos and sin scaled by 0.1 ln(factor) + 1.
  double yarn_inv_freq(int pair, int dim) const {
    const auto correction = [&](double rotations) {
      return dim * std::log(64 / (rotations * 2 * std::acos(-1.0))) /
             (2 * std::log(spec_.rope_theta));
    };
    const double low = std::max(0.0, std::floor(correction(32))),
                 high = std::min(dim - 1.0, std::ceil(correction(1)));
    const double ramp = std::clamp((pair - low) / std::max(high - low, 0.001), 0.0, 1.0);
    const double extrapolated = std::pow(spec_.rope_theta, -2.0 * pair / dim);
    return extrapolated / kYarnFactor * ramp + extrapolated * (1 - ramp);
  }

  // transformers' apply_rotary_pos_emb: x * cos + rotate_half(x) * sin over each head's first
  // rotary_dim dimensions, dimension i paired with i + rotary_dim/2. Phi-3's longrope divides
  // each pair's frequency by its factor (the long set past the original context) and scales cos
  // and sin by sqrt(1 + ln(max positions / original) / ln(original)); llama3 and YaRN as above;
  // Gemma 3's local layers use their own base, unscaled.
  Vec rotate_half_rope(Vec x, int pos, bool local = false) const {
    const int hd = head_dim(), dim = rotary_dim(), half = dim / 2;
    const double magnitude = spec_.long_rope
                                 ? std::sqrt(1 + std::log(256.0 / kLongRopeOriginal) /
                                                     std::log(double(kLongRopeOriginal)))
                             : spec_.yarn ? 0.1 * std::log(kYarnFactor) + 1
                                          : 1.0;
    const double base = local ? TinyGemma3::kLocalBase : spec_.rope_theta;
    for (size_t h = 0; h < x.size() / hd; ++h) {
      for (int i = 0; i < half; ++i) {
        const double inv_freq = std::pow(base, -2.0 * i / dim);
        double angle = pos * (spec_.yarn ? yarn_inv_freq(i, dim) : inv_freq);
        if (spec_.llama3_rope) angle /= llama3_divisor(inv_freq);
        if (spec_.long_rope) angle /= long_rope_factor(true, i);
        double& a = x[h * hd + i];
        double& b = x[h * hd + i + half];
        const double x0 = a, x1 = b;
        a = magnitude * (x0 * std::cos(angle) - x1 * std::sin(angle));
        b = magnitude * (x1 * std::cos(angle) + x0 * std::sin(angle));
      }
    }
    return x;
  }

  static void add_to(Vec& x, const Vec& y) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  }

  TinyHfSpec spec_;
  std::mt19937 rng_;
  int64_t vocab_ = 0;
  std::map<std::string, Weight> weights_;
};

}  // namespace baton::testing
