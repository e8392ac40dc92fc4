#include "core/formats/hf_import/llama_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/hf_import/hf_json.h"

namespace baton::hf {
namespace {

class ConfigReader {
 public:
  explicit ConfigReader(const std::filesystem::path& path)
      : path_(path), json_(read_json_object(path)) {}

  [[noreturn]] void invalid(const std::string& message) const {
    throw Error(ErrorCategory::kInvalidModel, path_.filename().string() + ": " + message);
  }

  const nlohmann::json& json() const { return json_; }
  const std::filesystem::path& path() const { return path_; }

  // A positive count that fits int32; `fallback` when the key is absent.
  int32_t positive(std::string_view key, std::optional<int32_t> fallback = std::nullopt) const {
    const std::optional<int64_t> value = find_int(json_, key, path_);
    if (!value) {
      if (!fallback) invalid("missing \"" + std::string(key) + "\"");
      return *fallback;
    }
    if (*value <= 0 || *value > INT32_MAX) {
      invalid("\"" + std::string(key) + "\" = " + std::to_string(*value) + " is out of range");
    }
    return static_cast<int32_t>(*value);
  }

  std::string architecture() const {
    const auto list = json_.find("architectures");
    if (list == json_.end() || !list->is_array() || list->empty() || !(*list)[0].is_string()) {
      invalid("\"architectures\" is not a list of model class names");
    }
    const std::string name = (*list)[0].get<std::string>();
    if (!find_hf_model_family(name)) {
      throw Error(ErrorCategory::kUnsupported,
                  path_.filename().string() + ": architecture '" + gguf::printable(name) +
                      "' is not supported (supported: " + hf_model_class_names() + ")");
    }
    return name;
  }

  // A multimodal class's text model is its text_config (over the top level's other keys);
  // then transformers' defaults of the family fill in what the file leaves out.
  void prepare(const HfModelClass& model_class, const ModelFamily& family) {
    if (model_class.multimodal) {
      const auto text = json_.find("text_config");
      if (text == json_.end() || !text->is_object()) invalid("\"text_config\" is not an object");
      nlohmann::json merged = *text;
      for (const auto& [key, value] : json_.items()) {
        if (key != "text_config" && key != "vision_config" && !merged.contains(key)) {
          merged[key] = value;
        }
      }
      json_ = std::move(merged);
    }
    for (const HfDefault& d : family.hf_defaults) {
      const std::string key(d.key);
      if (json_.contains(key) && !json_[key].is_null()) continue;
      if (d.value == std::floor(d.value) && std::abs(d.value) < INT32_MAX) {
        json_[key] = static_cast<int64_t>(d.value);
      } else {
        json_[key] = d.value;
      }
    }
  }

  // An id or the first of a list of ids (Llama 3 lists several EOS tokens).
  std::optional<int64_t> token_id(std::string_view key) const {
    const auto it = json_.find(key);
    if (it != json_.end() && it->is_array()) {
      if (it->empty()) return std::nullopt;
      return find_int(nlohmann::json{{key, it->front()}}, key, path_);
    }
    return find_int(json_, key, path_);
  }

 private:
  std::filesystem::path path_;
  nlohmann::json json_;
};

// The config.json name of the family's feed-forward activation.
std::string_view activation_name(FamilyActivation activation) {
  return activation == FamilyActivation::kGelu ? "gelu_pytorch_tanh" : "silu";
}

[[noreturn]] void unsupported_pattern(const std::string& key, const std::string& supported) {
  throw Error(ErrorCategory::kUnsupported,
              "config.json: " + key + " is not supported (" + supported + " is)");
}

// A per-layer list of config.json (layer_types, no_rope_layers) must say what `expected` says of
// each layer.
void check_layer_list(const nlohmann::json& j, const std::string& key, int32_t n_layer,
                      const std::function<nlohmann::json(int32_t)>& expected,
                      const std::string& supported) {
  const auto listed = j.find(key);
  if (listed == j.end() || listed->is_null()) return;
  if (!listed->is_array() || listed->size() != static_cast<size_t>(n_layer)) {
    unsupported_pattern(key, supported);
  }
  for (int32_t i = 0; i < n_layer; ++i) {
    if ((*listed)[i] != expected(i)) unsupported_pattern(key, supported);
  }
}

// The family's fixed layer patterns, which GGUF has no key for (llama.cpp fixes them too):
// transformers' periods and per-layer lists must say the same.
void check_layer_patterns(const ConfigReader& r, const ModelFamily& family, const LlamaConfig& c) {
  const nlohmann::json& j = r.json();
  if (const int32_t period = family.sliding_window_period; period > 0) {
    const std::string every = "a window on all layers but every " + std::to_string(period) + "th";
    if (const int64_t listed = find_int(j, "sliding_window_pattern", r.path()).value_or(period);
        listed != period) {
      unsupported_pattern("sliding_window_pattern " + std::to_string(listed),
                          std::to_string(period));
    }
    check_layer_list(
        j, "layer_types", c.n_layer,
        [&](int32_t i) {
          return c.sliding_window && (i + 1) % period != 0 ? "sliding_attention" : "full_attention";
        },
        every);
  }
  if (const int32_t period = family.no_rope_period; period > 0) {
    const std::string every = "no rotary embedding on every " + std::to_string(period) + "th layer";
    if (find_int(j, "no_rope_layer_interval", r.path()).value_or(period) != period) {
      unsupported_pattern("no_rope_layer_interval", every);
    }
    // 1 where a layer rotates.
    check_layer_list(
        j, "no_rope_layers", c.n_layer, [&](int32_t i) { return (i + 1) % period != 0 ? 1 : 0; },
        every);
  }
}

// What the family's descriptor adds to the keys every family shares, with its defaults where
// config.json leaves them out, as transformers' config class has them.
void read_family_keys(const ConfigReader& r, LlamaConfig& c) {
  const ModelFamily& family = *c.family;
  const nlohmann::json& j = r.json();
  if (family.activation != FamilyActivation::kSilu) {
    const std::string_view expected = activation_name(family.activation);
    for (const char* key : {"hidden_activation", "hidden_act"}) {
      const std::string activation = find_string(j, key, r.path()).value_or(std::string(expected));
      if (activation != expected) {
        throw Error(ErrorCategory::kUnsupported,
                    "config.json: " + std::string(key) + " '" + gguf::printable(activation) +
                        "' is not supported (" + std::string(expected) + " is)");
      }
    }
  }
  const auto positive_number = [&](const char* key, double fallback) {
    const double value = find_number(j, key, r.path()).value_or(fallback);
    if (!(value > 0)) r.invalid("\"" + std::string(key) + "\" must be positive");
    return value;
  };
  if (family.attn_softcap > 0) {
    c.attn_softcap = positive_number("attn_logit_softcapping", family.attn_softcap);
  }
  if (family.final_softcap > 0) {
    c.final_softcap = positive_number("final_logit_softcapping", family.final_softcap);
  }
  if (family.query_pre_attn_scalar) {
    c.attention_scale = 1.0 / std::sqrt(positive_number("query_pre_attn_scalar", c.head_dim));
  }
  if (family.sliding_window > 0) {
    c.sliding_window = r.positive("sliding_window", family.sliding_window);
  } else if (family.sliding_window_period > 0) {
    if (const auto window = find_int(j, "sliding_window", r.path()); window && *window > 0) {
      c.sliding_window = r.positive("sliding_window");
    }
  }
  if (family.swa_rope_unscaled && c.sliding_window) {
    c.swa_rope_theta = find_number(j, "rope_local_base_freq", r.path());
    if (const nlohmann::json* local = rope_parameters(j, "sliding_attention");
        !c.swa_rope_theta && local && local->is_object()) {
      c.swa_rope_theta = find_number(*local, "rope_theta", r.path());
    }
  }
  check_layer_patterns(r, family, c);
  if (family.hf_tied_by_default) c.tie_word_embeddings = true;
}

}  // namespace

LlamaConfig read_llama_config(const std::filesystem::path& config_json) {
  ConfigReader r(config_json);
  LlamaConfig c;
  c.architecture = r.architecture();
  c.family = find_hf_model_family(c.architecture);
  c.multimodal = find_hf_model_class(c.architecture)->multimodal;
  r.prepare(*find_hf_model_class(c.architecture), *c.family);
  for (const HfRefusedFlag& flag : c.family->hf_refused_flags) {
    if (find_bool(r.json(), flag.key, r.path()).value_or(false)) {
      throw Error(ErrorCategory::kUnsupported, "config.json: " + std::string(flag.key) +
                                                   " is not supported (" +
                                                   std::string(flag.supported) + " is)");
    }
  }
  c.hidden_size = r.positive("hidden_size");
  c.intermediate_size = r.positive("intermediate_size");
  c.n_layer = r.positive("num_hidden_layers");
  c.n_head = r.positive("num_attention_heads");
  c.n_head_kv = r.positive("num_key_value_heads", c.n_head);
  c.explicit_head_dim = find_int(r.json(), "head_dim", r.path()).has_value();
  if (!c.explicit_head_dim && c.hidden_size % c.n_head != 0) {
    r.invalid("hidden_size " + std::to_string(c.hidden_size) +
              " is not a multiple of num_attention_heads " + std::to_string(c.n_head));
  }
  c.head_dim = r.positive("head_dim", c.hidden_size / c.n_head);
  if (c.head_dim % 2 != 0) {
    r.invalid("the head size " + std::to_string(c.head_dim) +
              " is odd, which rotary embedding "
              "cannot split into pairs");
  }
  if (c.n_head % c.n_head_kv != 0) {
    r.invalid("num_attention_heads " + std::to_string(c.n_head) +
              " is not a multiple of num_key_value_heads " + std::to_string(c.n_head_kv));
  }
  c.context_length = r.positive("max_position_embeddings", c.context_length);
  if (const std::optional<int64_t> window = find_int(r.json(), "sliding_window", r.path());
      find_hf_model_class(c.architecture)->window_bounds_context && window && *window > 0 &&
      *window < c.context_length) {
    c.context_length = static_cast<int32_t>(*window);
  }
  // Phi-4-mini rotates three quarters of each head.
  const double rotary = find_number(r.json(), "partial_rotary_factor", r.path()).value_or(1.0);
  c.n_rot =
      rotary > 0.0 && rotary <= 1.0 ? static_cast<int32_t>(std::lround(c.head_dim * rotary)) : 0;
  if (c.n_rot % 2 != 0 || c.n_rot == 0) {
    r.invalid("partial_rotary_factor " + std::to_string(rotary) + " of a head of " +
              std::to_string(c.head_dim) + " does not give an even number of rotated dimensions");
  }
  if (c.family->interleave_rotary && c.n_rot != c.head_dim) {
    throw Error(ErrorCategory::kUnsupported,
                "config.json: partial_rotary_factor is not supported for " + c.architecture +
                    " (rotation over the whole head is)");
  }
  read_family_keys(r, c);
  c.vocab_size = r.positive("vocab_size");
  // The converter writes a token for every id, so a corrupt count would exhaust memory; the
  // largest vocabularies published hold a few hundred thousand tokens.
  constexpr int32_t kMaxVocabSize = 1 << 24;
  if (c.vocab_size > kMaxVocabSize) {
    r.invalid("\"vocab_size\" = " + std::to_string(c.vocab_size) + " is out of range (at most " +
              std::to_string(kMaxVocabSize) + ")");
  }
  c.rms_norm_eps = find_number(r.json(), "rms_norm_eps", r.path()).value_or(c.rms_norm_eps);
  const nlohmann::json* global = rope_parameters(r.json(), "full_attention");
  c.rope_theta =
      find_number(r.json(), "rope_theta", r.path())
          .value_or(global && global->is_object()
                        ? find_number(*global, "rope_theta", r.path()).value_or(c.rope_theta)
                        : c.rope_theta);
  if (!(c.rms_norm_eps > 0) || !(c.rope_theta > 0)) {
    r.invalid("rms_norm_eps and rope_theta must be positive");
  }
  c.rope_scaling =
      read_rope_scaling(r.json(),
                        {.n_rot = c.n_rot,
                         .rope_theta = c.rope_theta,
                         .context_length = r.positive("max_position_embeddings", c.context_length),
                         .long_rope = c.family->long_rope,
                         .rope_freqs = c.family->rope_freqs},
                        r.path());
  c.tie_word_embeddings =
      find_bool(r.json(), "tie_word_embeddings", r.path()).value_or(c.tie_word_embeddings);
  const std::string dtype = find_string(r.json(), "torch_dtype", r.path()).value_or("");
  if (dtype == "float32") c.saved_dtype = DType::kF32;
  if (dtype == "bfloat16") c.saved_dtype = DType::kBF16;
  c.bos_token_id = r.token_id("bos_token_id");
  c.eos_token_id = r.token_id("eos_token_id");
  c.pad_token_id = r.token_id("pad_token_id");
  return c;
}

}  // namespace baton::hf
