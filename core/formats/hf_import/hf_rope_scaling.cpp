#include "core/formats/hf_import/hf_rope_scaling.h"

#include <cctype>
#include <cmath>
#include <numbers>
#include <string>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/hf_import/hf_json.h"

namespace baton::hf {
namespace {

[[noreturn]] void invalid(const std::filesystem::path& file, const std::string& message) {
  throw Error(ErrorCategory::kInvalidModel, file.filename().string() + ": " + message);
}

// A list of numbers in `object`, each as float.
std::vector<float> float_list(const nlohmann::json& object, const std::string& key, size_t count,
                              const std::filesystem::path& file) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array() || it->size() != count) {
    invalid(file, "rope_scaling \"" + key + "\" must be a list of " + std::to_string(count) +
                      " numbers (one per rotary pair)");
  }
  std::vector<float> values;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number() || !(v.get<double>() > 0)) {
      invalid(file, "rope_scaling \"" + key + "\" holds a value that is not a positive number");
    }
    values.push_back(v.get<float>());
  }
  return values;
}

double positive(const nlohmann::json& object, const char* key, std::optional<double> fallback,
                const std::filesystem::path& file) {
  std::optional<double> value = find_number(object, key, file);
  if (!value) value = fallback;
  if (!value || !(*value > 0) || !std::isfinite(*value)) {
    invalid(file, std::string("rope_scaling needs a positive \"") + key + "\"");
  }
  return *value;
}

// original_max_position_embeddings at the top level or inside rope_scaling.
int32_t original_context(const nlohmann::json& config, const nlohmann::json& scaling,
                         const std::filesystem::path& file) {
  std::optional<int64_t> original = find_int(scaling, "original_max_position_embeddings", file);
  if (!original) original = find_int(config, "original_max_position_embeddings", file);
  if (!original || *original <= 0 || *original > INT32_MAX) {
    invalid(file, "rope_scaling needs a positive original_max_position_embeddings");
  }
  return static_cast<int32_t>(*original);
}

// Phi-3's magnitude scaling (attention_factor when given): sqrt(1 + ln(scale) / ln(original)).
LongRopeParams long_rope(const nlohmann::json& config, const nlohmann::json& scaling,
                         const RopeShape& shape, const std::filesystem::path& file) {
  LongRopeParams p;
  const size_t pairs = static_cast<size_t>(shape.n_rot / 2);
  p.short_factors = float_list(scaling, "short_factor", pairs, file);
  p.long_factors = float_list(scaling, "long_factor", pairs, file);
  p.original_context = original_context(config, scaling, file);
  const double scale = static_cast<double>(shape.context_length) / p.original_context;
  if (scale > 1.0 && p.original_context < 2) {
    invalid(file, "longrope needs an original_max_position_embeddings of at least 2");
  }
  p.attn_factor =
      find_number(scaling, "attention_factor", file)
          .value_or(scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(p.original_context))
                                : 1.0);
  return p;
}

// Llama 3.1's rule: pairs whose wavelength is short keep their frequency, long ones are divided
// by the factor, the ones between blend the two.
std::vector<float> llama3_factors(const nlohmann::json& scaling, const RopeShape& shape,
                                  const std::filesystem::path& file) {
  const double factor = positive(scaling, "factor", 8.0, file);
  const double low = positive(scaling, "low_freq_factor", 1.0, file);
  const double high = positive(scaling, "high_freq_factor", 4.0, file);
  const double original = positive(scaling, "original_max_position_embeddings", 8192.0, file);
  std::vector<float> factors;
  for (int32_t i = 0; i < shape.n_rot; i += 2) {
    const double freq = 1.0 / std::pow(shape.rope_theta, static_cast<double>(i) / shape.n_rot);
    const double wavelength = 2.0 * std::numbers::pi / freq;
    if (wavelength < original / high) {
      factors.push_back(1.0f);
    } else if (wavelength > original / low || high == low) {
      factors.push_back(static_cast<float>(factor));
    } else {
      const double smooth = (original / wavelength - low) / (high - low);
      factors.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / factor + smooth)));
    }
  }
  return factors;
}

[[noreturn]] void unsupported(const std::filesystem::path& file, const std::string& type,
                              const std::string& supported) {
  throw Error(ErrorCategory::kUnsupported, file.filename().string() + ": rope_scaling type '" +
                                               gguf::printable(type) +
                                               "' is not supported (supported: " + supported + ")");
}

}  // namespace

const nlohmann::json* rope_parameters(const nlohmann::json& config, std::string_view layer_type) {
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const auto found = config.find(key);
    if (found == config.end() || found->is_null()) continue;
    if (!found->is_object()) return &*found;
    const auto typed = found->find(layer_type);
    if (typed != found->end()) return &*typed;
    const bool by_layer_type =
        found->contains("full_attention") || found->contains("sliding_attention");
    return by_layer_type ? nullptr : &*found;
  }
  return nullptr;
}

HfRopeScaling read_rope_scaling(const nlohmann::json& config, const RopeShape& shape,
                                const std::filesystem::path& file) {
  HfRopeScaling out;
  const nlohmann::json* scaling = rope_parameters(config, "full_attention");
  if (!scaling) return out;
  if (!scaling->is_object()) invalid(file, "\"rope_scaling\" is not an object");
  // transformers renamed "type" to "rope_type"; configs carry either.
  std::optional<std::string> type = find_string(*scaling, "rope_type", file);
  if (!type) type = find_string(*scaling, "type", file);
  std::string name = type.value_or("");
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string supported = "default, linear, yarn";
  if (shape.rope_freqs) supported += ", llama3";
  if (shape.long_rope) supported += ", longrope";
  // transformers 5's rope_parameters hold rope_theta alone where nothing is scaled.
  if (name == "default" || (name.empty() && !scaling->contains("factor"))) return out;
  if (name == "linear") {
    out.linear_factor = positive(*scaling, "factor", std::nullopt, file);
  } else if (name == "yarn") {
    out.yarn = YarnParams{.factor = positive(*scaling, "factor", std::nullopt, file),
                          .original_context = original_context(config, *scaling, file),
                          .ext_factor = find_number(*scaling, "extrapolation_factor", file),
                          .attn_factor = find_number(*scaling, "attention_factor", file),
                          .beta_fast = find_number(*scaling, "beta_fast", file),
                          .beta_slow = find_number(*scaling, "beta_slow", file)};
    // Older configs name it attn_factor.
    if (!out.yarn->attn_factor) out.yarn->attn_factor = find_number(*scaling, "attn_factor", file);
    for (const auto& [key, value] : {std::pair{"attention_factor", out.yarn->attn_factor},
                                     std::pair{"beta_fast", out.yarn->beta_fast},
                                     std::pair{"beta_slow", out.yarn->beta_slow}}) {
      if (value && !(*value > 0 && std::isfinite(*value))) {
        invalid(file, std::string("rope_scaling \"") + key + "\" must be positive");
      }
    }
    if (const auto& ext = out.yarn->ext_factor; ext && !(*ext >= 0 && *ext <= 1)) {
      invalid(file, "rope_scaling \"extrapolation_factor\" must be between 0 and 1");
    }
  } else if (name == "llama3" && shape.rope_freqs) {
    out.llama3_factors = llama3_factors(*scaling, shape, file);
  } else if ((name == "longrope" || name == "su") && shape.long_rope) {
    out.long_rope = long_rope(config, *scaling, shape, file);
  } else {
    unsupported(file, name, supported);
  }
  return out;
}

}  // namespace baton::hf
