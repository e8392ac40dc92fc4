#include "core/formats/hf_import/llama_config.h"

#include <algorithm>
#include <array>
#include <cmath>
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

  // Only linear scaling maps onto GGUF's llama.rope.scaling.*; llama3 and YaRN need frequency
  // factors or attention changes that the converter does not write.
  std::optional<double> rope_linear_factor() const {
    const auto scaling = json_.find("rope_scaling");
    if (scaling == json_.end() || scaling->is_null()) return std::nullopt;
    if (!scaling->is_object()) invalid("\"rope_scaling\" is not an object");
    // transformers renamed "type" to "rope_type"; configs carry either.
    std::optional<std::string> type = find_string(*scaling, "rope_type", path_);
    if (!type) type = find_string(*scaling, "type", path_);
    if (type != "linear") {
      throw Error(ErrorCategory::kUnsupported, path_.filename().string() + ": rope_scaling type '" +
                                                   gguf::printable(type.value_or("")) +
                                                   "' is not supported (supported: linear)");
    }
    const std::optional<double> factor = find_number(*scaling, "factor", path_);
    if (!factor || !(*factor > 0)) invalid("rope_scaling needs a positive \"factor\"");
    return factor;
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

// A list of numbers in `object`, each as float.
std::vector<float> float_list(const ConfigReader& r, const nlohmann::json& object,
                              const std::string& key, size_t count) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array() || it->size() != count) {
    r.invalid("rope_scaling \"" + key + "\" must be a list of " + std::to_string(count) +
              " numbers (one per rotary pair)");
  }
  std::vector<float> values;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number() || !(v.get<double>() > 0)) {
      r.invalid("rope_scaling \"" + key + "\" holds a value that is not a positive number");
    }
    values.push_back(v.get<float>());
  }
  return values;
}

// Phi-3's rope_scaling of type longrope (su in older configs), as transformers reads it:
// original_max_position_embeddings at the top level or inside rope_scaling, and the magnitude
// scaling (attention_factor when given) sqrt(1 + ln(scale) / ln(original)).
std::optional<LongRopeParams> read_long_rope(const ConfigReader& r, const LlamaConfig& c) {
  const auto scaling = r.json().find("rope_scaling");
  if (scaling == r.json().end() || !scaling->is_object()) return std::nullopt;
  std::optional<std::string> type = find_string(*scaling, "rope_type", r.path());
  if (!type) type = find_string(*scaling, "type", r.path());
  if (type != "longrope" && type != "su") return std::nullopt;
  LongRopeParams p;
  const size_t pairs = static_cast<size_t>(c.head_dim / 2);
  p.short_factors = float_list(r, *scaling, "short_factor", pairs);
  p.long_factors = float_list(r, *scaling, "long_factor", pairs);
  std::optional<int64_t> original =
      find_int(r.json(), "original_max_position_embeddings", r.path());
  if (!original) original = find_int(*scaling, "original_max_position_embeddings", r.path());
  if (!original || *original <= 0 || *original > INT32_MAX) {
    r.invalid("longrope needs a positive original_max_position_embeddings");
  }
  p.original_context = static_cast<int32_t>(*original);
  const double scale =
      static_cast<double>(r.positive("max_position_embeddings", c.context_length)) /
      p.original_context;
  p.attn_factor =
      find_number(*scaling, "attention_factor", r.path())
          .value_or(scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(p.original_context))
                                : 1.0);
  return p;
}

// The config.json name of the family's feed-forward activation.
std::string_view activation_name(FamilyActivation activation) {
  return activation == FamilyActivation::kGelu ? "gelu_pytorch_tanh" : "silu";
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
  if (family.sliding_window > 0)
    c.sliding_window = r.positive("sliding_window", family.sliding_window);
  if (family.hf_tied_by_default) c.tie_word_embeddings = true;
}

}  // namespace

LlamaConfig read_llama_config(const std::filesystem::path& config_json) {
  const ConfigReader r(config_json);
  LlamaConfig c;
  c.architecture = r.architecture();
  c.family = find_hf_model_family(c.architecture);
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
  if (c.family->long_rope) {
    c.long_rope = read_long_rope(r, c);
    // Phi-4-mini rotates only part of each head, which Baton's phi3 does not.
    const double rotary = find_number(r.json(), "partial_rotary_factor", r.path()).value_or(1.0);
    if (rotary != 1.0) {
      throw Error(ErrorCategory::kUnsupported,
                  "config.json: partial_rotary_factor " + std::to_string(rotary) +
                      " is not supported (rotary over the whole head is)");
    }
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
  c.rope_theta = find_number(r.json(), "rope_theta", r.path()).value_or(c.rope_theta);
  if (!(c.rms_norm_eps > 0) || !(c.rope_theta > 0)) {
    r.invalid("rms_norm_eps and rope_theta must be positive");
  }
  if (!c.long_rope) c.rope_linear_factor = r.rope_linear_factor();
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
