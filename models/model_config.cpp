#include "models/model_config.h"

#include <cmath>
#include <string>

#include "baton/error.h"
#include "core/formats/family/model_family.h"

namespace baton {
namespace {

int32_t positive_int(const gguf::GgufFile& file, const std::string& key) {
  const int64_t value = file.get_int(key);
  if (value <= 0 || value > (int64_t{1} << 30)) {
    throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " + key + " = " +
                                                  std::to_string(value) + " is out of range");
  }
  return static_cast<int32_t>(value);
}

[[noreturn]] void invalid(const gguf::GgufFile& file, const std::string& message) {
  throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " + message);
}

float positive_float(const gguf::GgufFile& file, const std::string& key, double fallback) {
  const double value = file.find_float(key).value_or(fallback);
  if (!(value > 0.0) || !std::isfinite(value)) {
    invalid(file, key + " = " + std::to_string(value) + " must be positive and finite");
  }
  return static_cast<float>(value);
}

// The scaling of "<arch>.rope.scaling.*" as llama.cpp applies it: linear (positions divided by
// the factor; a factor without a type is linear) or YaRN. YaRN's magnitude is llama.cpp's,
// 1 + 0.1 ln(factor) (over 1 + 0.1 m ln(factor) with a yarn_log_multiplier m), or, where the file
// has yarn_attn_factor, that value, as transformers takes its attention_factor (llama.cpp reads
// the key only for a few architectures); rope.scaling.attn_factor multiplies either.
void read_rope_scaling(const gguf::GgufFile& file, const std::string& arch, int32_t n_ctx_train,
                       RopeParams& rope) {
  const std::string scaling = arch + ".rope.scaling.";
  const std::string type = file.find_string(scaling + "type").value_or("linear");
  const double factor = positive_float(file, scaling + "factor",
                                       file.find_float(arch + ".rope.scale_linear").value_or(1.0));
  rope.attn_factor = positive_float(file, scaling + "attn_factor", 1.0);
  if (type == "none" || factor == 1.0) return;
  if (type != "linear" && type != "yarn") {
    throw Error(ErrorCategory::kUnsupported,
                file.path().filename().string() + ": rope scaling type '" + type +
                    "' is not supported (supported: none, linear, yarn, and llama3 rope_freqs)");
  }
  rope.freq_scale = static_cast<float>(1.0 / factor);
  if (type != "yarn") return;
  const double ext_factor = file.find_float(scaling + "yarn_ext_factor").value_or(1.0);
  if (!(ext_factor >= 0.0 && ext_factor <= 1.0)) {
    invalid(file, scaling + "yarn_ext_factor must be between 0 and 1");
  }
  if (!(rope.freq_base > 1.0f)) invalid(file, "YaRN needs " + arch + ".rope.freq_base above 1");
  rope.yarn_ext_factor = static_cast<float>(ext_factor);
  rope.yarn_beta_fast = positive_float(file, scaling + "yarn_beta_fast", 32.0);
  rope.yarn_beta_slow = positive_float(file, scaling + "yarn_beta_slow", 1.0);
  const int64_t original = file.find_int(scaling + "original_context_length").value_or(n_ctx_train);
  if (original <= 0 || original > (int64_t{1} << 30)) {
    invalid(file,
            scaling + "original_context_length = " + std::to_string(original) + " is out of range");
  }
  rope.yarn_original_context = static_cast<int32_t>(original);
  if (ext_factor == 0.0) return;
  const double kernel_magnitude = 1.0 + 0.1 * std::log(factor);  // rope_magnitude's YaRN term
  double magnitude = kernel_magnitude;
  if (file.contains(scaling + "yarn_attn_factor")) {
    magnitude = positive_float(file, scaling + "yarn_attn_factor", 1.0);
  } else if (const double m = file.find_float(scaling + "yarn_log_multiplier").value_or(0.0)) {
    magnitude = kernel_magnitude / (1.0 + 0.1 * m * std::log(factor));
  }
  rope.attn_factor *= static_cast<float>(magnitude / kernel_magnitude);
}

// Which layers use the sliding window: a bool per layer, or a period n whose last layer in each
// n is global, as llama.cpp reads the key (its gemma2 ignores the key and takes 2, which is that
// family's default here).
std::vector<bool> sliding_window_layers(const gguf::GgufFile& file, const std::string& arch,
                                        int32_t n_layer, int32_t default_period) {
  const std::string pattern_key = arch + ".attention.sliding_window_pattern";
  const gguf::Value* pattern = file.find(pattern_key);
  std::vector<bool> layers(static_cast<size_t>(n_layer));
  if (pattern && pattern->type == gguf::ValueType::kArray) {
    const auto& items = std::get<gguf::Array>(pattern->data).items;
    if (items.size() != layers.size() ||
        std::get<gguf::Array>(pattern->data).element_type != gguf::ValueType::kBool) {
      invalid(file, pattern_key + " must hold one bool per layer");
    }
    for (size_t i = 0; i < items.size(); ++i) layers[i] = std::get<bool>(items[i].data);
    return layers;
  }
  const int64_t period = pattern ? file.get_int(pattern_key) : default_period;
  if (period < 0) invalid(file, pattern_key + " must not be negative");
  for (int32_t i = 0; i < n_layer; ++i) layers[i] = period == 0 || i % period < period - 1;
  return layers;
}

// The sliding window and the layers it applies to; none where the file has no window and the
// family no default (Gemma 3, OLMo 2), as llama.cpp reads them. The family's windowed layers may
// rotate with a base of their own and without the global layers' scaling.
void read_window(const gguf::GgufFile& file, const ModelFamily& family, ModelConfig& c) {
  const std::string& a = c.architecture;
  const std::string window_key = a + ".attention.sliding_window";
  const int64_t window = file.find_int(window_key).value_or(family.sliding_window);
  if (window == 0 && family.sliding_window == 0) return;
  if (window <= 0 || window > (int64_t{1} << 30)) {
    invalid(file, window_key + " = " + std::to_string(window) + " is out of range");
  }
  c.sliding_window = static_cast<int32_t>(window);
  c.swa_layers = sliding_window_layers(file, a, c.n_layer, family.sliding_window_period);
  if (!family.swa_rope_unscaled) return;
  RopeParams local{.n_rot = c.rope.n_rot, .mode = c.rope.mode};
  local.freq_base =
      positive_float(file, a + ".rope.freq_base_swa",
                     family.swa_rope_base > 0 ? family.swa_rope_base : c.rope.freq_base);
  c.swa_rope = local;
}

// What the family's descriptor says of its files beyond the keys every family shares.
void read_family_keys(const gguf::GgufFile& file, const ModelFamily& family, ModelConfig& c) {
  const std::string& a = c.architecture;
  // GGUF llama's q/k rows hold rotary pairs side by side; the others keep transformers' halves.
  c.rope.mode = family.interleave_rotary ? RopeMode::kNormal : RopeMode::kNeox;
  if (family.attn_softcap > 0) {
    c.attn_softcap = positive_float(file, a + ".attn_logit_softcapping", family.attn_softcap);
  }
  // Gemma 3 has no soft-cap by default, but a file may carry one, which llama.cpp applies.
  if (family.final_softcap > 0 || file.contains(a + ".final_logit_softcapping")) {
    c.final_softcap = positive_float(file, a + ".final_logit_softcapping", family.final_softcap);
  }
  if (family.sliding_window > 0 || family.sliding_window_period > 0) read_window(file, family, c);
  for (int32_t i = 0; family.no_rope_period > 0 && i < c.n_layer; ++i) {
    c.nope_layers.push_back((i + 1) % family.no_rope_period == 0);
  }
  // attention.scale is a Baton key: its checkpoint import writes query_pre_attn_scalar as it.
  if (family.query_pre_attn_scalar) {
    const double scale =
        family.default_attention_scale
            ? family.default_attention_scale({c.n_embd, c.n_layer, c.n_head, c.head_dim})
            : 1.0 / std::sqrt(static_cast<double>(c.head_dim));
    c.attn_scale = positive_float(file, a + ".attention.scale", scale);
  }
}

}  // namespace

ModelConfig read_model_config(const gguf::GgufFile& file) {
  ModelConfig c;
  c.architecture = file.get_string("general.architecture");
  const std::string& a = c.architecture;
  c.n_embd = positive_int(file, a + ".embedding_length");
  c.n_layer = positive_int(file, a + ".block_count");
  c.n_head = positive_int(file, a + ".attention.head_count");
  c.n_head_kv = file.contains(a + ".attention.head_count_kv")
                    ? positive_int(file, a + ".attention.head_count_kv")
                    : c.n_head;
  c.n_ff = positive_int(file, a + ".feed_forward_length");
  c.n_ctx_train = positive_int(file, a + ".context_length");
  c.head_dim = file.contains(a + ".attention.key_length")
                   ? positive_int(file, a + ".attention.key_length")
                   : c.n_embd / c.n_head;
  c.rms_eps =
      static_cast<float>(file.find_float(a + ".attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (c.n_head % c.n_head_kv != 0) {
    throw Error(ErrorCategory::kInvalidModel,
                a + ".attention.head_count " + std::to_string(c.n_head) +
                    " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
  }
  c.rope.n_rot = file.contains(a + ".rope.dimension_count")
                     ? positive_int(file, a + ".rope.dimension_count")
                     : c.head_dim;
  if (c.rope.n_rot > c.head_dim || c.rope.n_rot % 2 != 0) {
    throw Error(ErrorCategory::kInvalidModel,
                a + ".rope.dimension_count " + std::to_string(c.rope.n_rot) +
                    " must be even and at most the head size " + std::to_string(c.head_dim));
  }
  c.rope.freq_base = positive_float(file, a + ".rope.freq_base", 10000.0);
  read_rope_scaling(file, a, c.n_ctx_train, c.rope);
  if (const ModelFamily* family = find_model_family(a)) read_family_keys(file, *family, c);
  return c;
}

}  // namespace baton
