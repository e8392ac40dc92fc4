#pragma once

// A tiny random-weight decoder (Llama, Qwen2, Phi-3, Gemma 2, Qwen3, Gemma 3, SmolLM3 or OLMo 2
// layout) written as GGUF, and a
// naive double-precision forward pass over the same weights, written from each family's published
// description, that serves as the reference for whole-model tests.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_writer.h"

namespace baton::testing {

struct TinyModelSpec {
  // "llama" (normal rope), "qwen2" (neox rope, qkv bias), "phi3" (neox rope, q/k/v fused into
  // attn_qkv and gate/up into ffn_up in the file) or "gemma2" (neox rope, embeddings scaled by
  // sqrt(n_embd), post-norms, GeGLU, soft-capping, a sliding window on even layers), "qwen3"
  // (neox rope, q/k norms per head), "gemma3" (Gemma 2 without soft-caps, with q/k norms per
  // head and windowed layers rotating with a base of 100), "smollm3" (llama with no rotation on
  // every fourth layer) or "olmo2" (neox rope, post-norms only, q/k norms over the projection)
  std::string architecture = "llama";
  int n_embd = 32, n_head = 4, n_head_kv = 2, n_ff = 48, n_layer = 2, n_vocab = 300;
  bool tied_output = true;
  float rope_scaling_factor = 1.0f;  // linear scaling; 1 = none
  float rope_freq_base = 10000.0f;
  // gemma2 only: small enough to matter in a few-token test
  float attn_softcap = 3.0f, final_softcap = 5.0f, attn_scale = 0.3f;
  int sliding_window = 4;
  // Windowed layers l: swa_period == 0 || l % swa_period < swa_period - 1 (llama.cpp's rule);
  // written as attention.sliding_window_pattern unless it is the default 2.
  int swa_period = 2;
  // phi3 only, when > 0: LongRoPE factor tensors, switching from the short to the long set past
  // this context (the tests' context is 256), and the rotation's magnitude scaling
  int long_rope_original_context = 0;
  float long_rope_attn_factor = 1.3f;
};

class TinyModel {
 public:
  TinyModel(const TinyModelSpec& spec, uint32_t seed) : spec_(spec), rng_(seed) {
    const int hd = head_dim(), q = spec.n_head * hd, kv = spec.n_head_kv * hd;
    add("token_embd.weight", {spec.n_vocab, spec.n_embd}, 1.0f);
    add("output_norm.weight", {spec.n_embd}, 0.2f, 1.0f);
    if (!spec.tied_output) add("output.weight", {spec.n_vocab, spec.n_embd}, 0.5f);
    for (int l = 0; l < spec.n_layer; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      if (!olmo2()) add(p + "attn_norm.weight", {spec.n_embd}, 0.2f, 1.0f);
      add(p + "attn_q.weight", {q, spec.n_embd}, 0.4f);
      add(p + "attn_k.weight", {kv, spec.n_embd}, 0.4f);
      if (qk_norms()) {
        add(p + "attn_q_norm.weight", {olmo2() ? q : hd}, 0.2f, 1.0f);
        add(p + "attn_k_norm.weight", {olmo2() ? kv : hd}, 0.2f, 1.0f);
      }
      add(p + "attn_v.weight", {kv, spec.n_embd}, 0.4f);
      if (qwen2()) {
        add(p + "attn_q.bias", {q}, 0.3f);
        add(p + "attn_k.bias", {kv}, 0.3f);
        add(p + "attn_v.bias", {kv}, 0.3f);
      }
      add(p + "attn_output.weight", {spec.n_embd, q}, 0.3f);
      if (!olmo2()) add(p + "ffn_norm.weight", {spec.n_embd}, 0.2f, 1.0f);
      add(p + "ffn_gate.weight", {spec.n_ff, spec.n_embd}, 0.4f);
      add(p + "ffn_up.weight", {spec.n_ff, spec.n_embd}, 0.4f);
      add(p + "ffn_down.weight", {spec.n_embd, spec.n_ff}, 0.3f);
      if (gemma() || olmo2()) {
        add(p + "post_attention_norm.weight", {spec.n_embd}, 0.2f, 1.0f);
        add(p + "post_ffw_norm.weight", {spec.n_embd}, 0.2f, 1.0f);
      }
    }
    if (spec.long_rope_original_context > 0) {
      add("rope_factors_short.weight", {hd / 2}, 0.5f, 2.0f);
      add("rope_factors_long.weight", {hd / 2}, 2.0f, 8.0f);
    }
  }

  // Writes the model with a SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, then
  // single-letter pieces "▁a".."▁z" and filler.
  void write(const std::filesystem::path& path, const std::vector<std::string>& skip = {}) const {
    gguf::GgufWriter w;
    const std::string& a = spec_.architecture;
    w.add_string("general.architecture", a);
    w.add_uint32(a + ".context_length", kTestContext);
    w.add_uint32(a + ".embedding_length", spec_.n_embd);
    w.add_uint32(a + ".block_count", spec_.n_layer);
    w.add_uint32(a + ".feed_forward_length", spec_.n_ff);
    w.add_uint32(a + ".attention.head_count", spec_.n_head);
    w.add_uint32(a + ".attention.head_count_kv", spec_.n_head_kv);
    w.add_float32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.add_float32(a + ".rope.freq_base", spec_.rope_freq_base);
    if (gemma2()) {
      w.add_float32(a + ".attn_logit_softcapping", spec_.attn_softcap);
      w.add_float32(a + ".final_logit_softcapping", spec_.final_softcap);
    }
    if (gemma()) {
      w.add_float32(a + ".attention.scale", spec_.attn_scale);
      w.add_uint32(a + ".attention.sliding_window", spec_.sliding_window);
      if (spec_.swa_period != 2 || gemma3())
        w.add_uint32(a + ".attention.sliding_window_pattern", spec_.swa_period);
    }
    if (gemma3()) w.add_float32(a + ".rope.freq_base_swa", kLocalBase);
    if (spec_.long_rope_original_context > 0) {
      w.add_uint32(a + ".rope.scaling.original_context_length", spec_.long_rope_original_context);
      w.add_float32(a + ".rope.scaling.attn_factor", spec_.long_rope_attn_factor);
    }
    if (spec_.rope_scaling_factor != 1.0f) {
      w.add_string(a + ".rope.scaling.type", "linear");
      w.add_float32(a + ".rope.scaling.factor", spec_.rope_scaling_factor);
    }
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      tokens.push_back(name);
      types.push_back(6);
    }
    for (int i = 0; static_cast<int>(tokens.size()) < spec_.n_vocab; ++i) {
      // Appending, not "literal" + std::string: GCC 12 warns falsely (-Wrestrict) on the latter.
      std::string token = i < 26 ? "\xe2\x96\x81" : "x";
      token += i < 26 ? std::string(1, char('a' + i)) : std::to_string(i);
      tokens.push_back(token);
      types.push_back(1);
    }
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_float32_array("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.0f));
    w.add_int32_array("tokenizer.ggml.token_type", types);
    w.add_uint32("tokenizer.ggml.bos_token_id", 1);
    w.add_uint32("tokenizer.ggml.eos_token_id", 2);
    const std::map<std::string, Weight> tensors = phi3() ? fused_phi3_tensors() : tensors_;
    for (const auto& [name, t] : tensors) {
      if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
      w.add_tensor(name, t.shape, DType::kF32, std::as_bytes(std::span<const float>(t.values)));
    }
    w.write(path);
  }

  // Log-probabilities of the token after `tokens`: the log-softmax of the last logits.
  std::vector<double> log_softmax(const std::vector<int32_t>& tokens) const {
    std::vector<double> logits = last_logits(tokens);
    const double max_logit = *std::max_element(logits.begin(), logits.end());
    double total = 0;
    for (double l : logits) total += std::exp(l - max_logit);
    const double log_total = max_logit + std::log(total);
    for (double& l : logits) l -= log_total;
    return logits;
  }

  // Greedy continuation computed from scratch at every step in double precision.
  std::vector<int32_t> greedy(std::vector<int32_t> tokens, int n) const {
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) {
      const std::vector<double> logits = last_logits(tokens);
      const int32_t next =
          static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      out.push_back(next);
      tokens.push_back(next);
    }
    return out;
  }

 private:
  using Vec = std::vector<double>;
  // The trained context written to the file, which LLM uses as its context by default.
  static constexpr int kTestContext = 256;
  struct Weight {
    Shape shape;
    std::vector<float> values;
  };

  bool qwen2() const { return spec_.architecture == "qwen2"; }
  bool phi3() const { return spec_.architecture == "phi3"; }
  bool gemma2() const { return spec_.architecture == "gemma2"; }
  bool gemma3() const { return spec_.architecture == "gemma3"; }
  bool gemma() const { return gemma2() || gemma3(); }
  bool qwen3() const { return spec_.architecture == "qwen3"; }
  bool olmo2() const { return spec_.architecture == "olmo2"; }
  bool smollm3() const { return spec_.architecture == "smollm3"; }
  bool qk_norms() const { return qwen3() || gemma3() || olmo2(); }
  bool neox() const { return qwen2() || phi3() || gemma() || qwen3() || olmo2(); }
  // Gemma 2's and 3's windowed layers: l % period < period - 1 (llama.cpp's rule).
  bool windowed(int layer) const {
    const int period = spec_.swa_period;
    return gemma() && (period == 0 || layer % period < period - 1);
  }
  static constexpr double kLocalBase = 100.0;  // Gemma 3's windowed layers' rope base

  // llama.cpp's phi3 layout: attn_qkv stacks q, k and v rows, ffn_up stacks gate and up rows.
  std::map<std::string, Weight> fused_phi3_tensors() const {
    std::map<std::string, Weight> out = tensors_;
    const auto stack = [&](const std::string& fused, std::initializer_list<std::string> parts) {
      Weight stacked{{0, spec_.n_embd}, {}};
      for (const std::string& part : parts) {
        const Weight& piece = out.at(part);
        stacked.shape[0] += piece.shape[0];
        stacked.values.insert(stacked.values.end(), piece.values.begin(), piece.values.end());
        out.erase(part);
      }
      out[fused] = std::move(stacked);
    };
    for (int l = 0; l < spec_.n_layer; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      stack(p + "attn_qkv.weight", {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"});
      stack(p + "ffn_up.weight", {p + "ffn_gate.weight", p + "ffn_up.weight"});
    }
    return out;
  }
  int head_dim() const { return spec_.n_embd / spec_.n_head; }

  void add(const std::string& name, Shape shape, float scale, float offset = 0.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(n);
    for (float& x : v) x = offset + normal(rng_);
    tensors_[name] = Weight{std::move(shape), std::move(v)};
  }

  const Weight& w(const std::string& name) const { return tensors_.at(name); }

  // y = W x (+ b) for W [rows, cols].
  Vec linear(const std::string& name, const Vec& x, const std::string& bias = "") const {
    const Weight& m = w(name);
    Vec y(m.shape[0], 0.0);
    for (int64_t r = 0; r < m.shape[0]; ++r) {
      for (int64_t c = 0; c < m.shape[1]; ++c) y[r] += double(m.values[r * m.shape[1] + c]) * x[c];
      if (!bias.empty()) y[r] += w(bias).values[r];
    }
    return y;
  }

  Vec rms_norm(const Vec& x, const std::string& weight) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / x.size() + 1e-5);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w(weight).values[i];
    return y;
  }

  // An RMS norm of each head of x (Qwen3, Gemma 3) or of all of it (OLMo 2), as the weight's
  // size says; x as it is where the layer has no such norm.
  Vec qk_norm(Vec x, const std::string& weight) const {
    if (!tensors_.contains(weight)) return x;
    const size_t size = w(weight).values.size();
    for (size_t first = 0; first < x.size(); first += size) {
      Vec part(x.begin() + first, x.begin() + first + size);
      part = rms_norm(part, weight);
      std::copy(part.begin(), part.end(), x.begin() + first);
    }
    return x;
  }

  // LongRoPE as llama.cpp applies it: the long factors when the context (256 in the tests)
  // exceeds the original one, each pair's angle divided by its factor, the rotated values
  // scaled by attn_factor.
  void rope(Vec& x, int heads, int pos, double base) const {
    const int hd = head_dim();
    const bool long_rope = spec_.long_rope_original_context > 0;
    const char* factors = spec_.long_rope_original_context < kTestContext
                              ? "rope_factors_long.weight"
                              : "rope_factors_short.weight";
    const double magnitude = long_rope ? spec_.long_rope_attn_factor : 1.0;
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < hd / 2; ++i) {
        double theta = pos / double(spec_.rope_scaling_factor) * std::pow(base, -2.0 * i / hd);
        if (long_rope) theta /= w(factors).values[i];
        const int a = neox() ? h * hd + i : h * hd + 2 * i;
        const int b = neox() ? h * hd + i + hd / 2 : h * hd + 2 * i + 1;
        const double x0 = x[a], x1 = x[b];
        x[a] = magnitude * (x0 * std::cos(theta) - x1 * std::sin(theta));
        x[b] = magnitude * (x0 * std::sin(theta) + x1 * std::cos(theta));
      }
    }
  }

  std::vector<double> last_logits(const std::vector<int32_t>& tokens) const {
    const int n = static_cast<int>(tokens.size()), hd = head_dim();
    std::vector<Vec> x(n);
    for (int t = 0; t < n; ++t) {
      const auto& e = w("token_embd.weight").values;
      x[t].assign(e.begin() + tokens[t] * spec_.n_embd, e.begin() + (tokens[t] + 1) * spec_.n_embd);
      if (gemma()) {
        for (double& v : x[t]) v *= std::sqrt(double(spec_.n_embd));
      }
    }
    for (int l = 0; l < spec_.n_layer; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      // Gemma 3's windowed layers rotate with a base of their own; SmolLM3's every fourth not.
      const double base = gemma3() && windowed(l) ? kLocalBase : double(spec_.rope_freq_base);
      const bool rotary = !smollm3() || (l + 1) % 4 != 0;
      std::vector<Vec> q(n), k(n), v(n);
      for (int t = 0; t < n; ++t) {
        const Vec h = olmo2() ? x[t] : rms_norm(x[t], p + "attn_norm.weight");
        q[t] = qk_norm(linear(p + "attn_q.weight", h, qwen2() ? p + "attn_q.bias" : ""),
                       p + "attn_q_norm.weight");
        k[t] = qk_norm(linear(p + "attn_k.weight", h, qwen2() ? p + "attn_k.bias" : ""),
                       p + "attn_k_norm.weight");
        v[t] = linear(p + "attn_v.weight", h, qwen2() ? p + "attn_v.bias" : "");
        if (rotary) {
          rope(q[t], spec_.n_head, t, base);
          rope(k[t], spec_.n_head_kv, t, base);
        }
      }
      for (int t = 0; t < n; ++t) {
        Vec attn(spec_.n_head * hd, 0.0);
        for (int h = 0; h < spec_.n_head; ++h) {
          const int kvh = h / (spec_.n_head / spec_.n_head_kv);
          // Gemma: windowed layers see only the last sliding_window positions.
          const int first = windowed(l) ? std::max(0, t - spec_.sliding_window + 1) : 0;
          Vec scores(t + 1, -1e300);
          double max_score = -1e300, total = 0;
          for (int s = first; s <= t; ++s) {
            double dot = 0;
            for (int d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[s][kvh * hd + d];
            scores[s] = gemma() ? dot * spec_.attn_scale : dot / std::sqrt(double(hd));
            if (gemma2())
              scores[s] = spec_.attn_softcap * std::tanh(scores[s] / spec_.attn_softcap);
            max_score = std::max(max_score, scores[s]);
          }
          for (double& s : scores) total += s = std::exp(s - max_score);
          for (int s = 0; s <= t; ++s) {
            for (int d = 0; d < hd; ++d) attn[h * hd + d] += scores[s] / total * v[s][kvh * hd + d];
          }
        }
        Vec o = linear(p + "attn_output.weight", attn);
        if (gemma() || olmo2()) o = rms_norm(o, p + "post_attention_norm.weight");
        for (int i = 0; i < spec_.n_embd; ++i) x[t][i] += o[i];
        const Vec h = olmo2() ? x[t] : rms_norm(x[t], p + "ffn_norm.weight");
        const Vec g = linear(p + "ffn_gate.weight", h), u = linear(p + "ffn_up.weight", h);
        Vec act(spec_.n_ff);
        for (int i = 0; i < spec_.n_ff; ++i) act[i] = (gemma() ? gelu(g[i]) : silu(g[i])) * u[i];
        Vec down = linear(p + "ffn_down.weight", act);
        if (gemma() || olmo2()) down = rms_norm(down, p + "post_ffw_norm.weight");
        for (int i = 0; i < spec_.n_embd; ++i) x[t][i] += down[i];
      }
    }
    const Vec f = rms_norm(x[n - 1], "output_norm.weight");
    Vec logits = linear(spec_.tied_output ? "token_embd.weight" : "output.weight", f);
    if (gemma2()) {
      for (double& v : logits) v = spec_.final_softcap * std::tanh(v / spec_.final_softcap);
    }
    return logits;
  }

  static double silu(double x) { return x / (1.0 + std::exp(-x)); }
  // The tanh approximation Gemma uses (gelu_pytorch_tanh).
  static double gelu(double x) {
    const double pi = std::acos(-1.0);
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
  }

  TinyModelSpec spec_;
  std::mt19937 rng_;
  std::map<std::string, Weight> tensors_;
};

}  // namespace baton::testing
