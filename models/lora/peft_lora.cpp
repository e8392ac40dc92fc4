// PEFT's LoRA directories: adapter_config.json (r, lora_alpha, target_modules, use_rslora,
// rank_pattern, alpha_pattern) beside adapter_model.safetensors, whose tensors are named
// "base_model.model.model.layers.<i>.<module path>.lora_A.weight" ([r, in]) and "...lora_B.weight"
// ([out, r]).

#include <cmath>
#include <map>
#include <regex>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "core/formats/hf_import/hf_json.h"
#include "core/formats/hf_import/rotary_rows.h"
#include "core/formats/hf_import/safetensors_file.h"
#include "models/lora/lora_readers.h"

namespace baton::lora {
namespace {

[[noreturn]] void invalid(const std::filesystem::path& path, const std::string& why) {
  throw Error(ErrorCategory::kInvalidArgument, "the LoRA adapter " + path.string() + " " + why);
}

// Transformers' module names and the base weights GGUF names them by.
const std::map<std::string, std::string>& gguf_weights() {
  static const std::map<std::string, std::string> kWeights = {
      {"q_proj", "attn_q"},      {"k_proj", "attn_k"},      {"v_proj", "attn_v"},
      {"o_proj", "attn_output"}, {"qkv_proj", "attn_qkv"},  {"gate_proj", "ffn_gate"},
      {"up_proj", "ffn_up"},     {"down_proj", "ffn_down"}, {"gate_up_proj", "ffn_up"}};
  return kWeights;
}

// PEFT matches a rank_pattern or alpha_pattern key against the end of a module's name, after a
// dot (or the whole name); the first key that matches wins.
std::optional<double> pattern_value(const nlohmann::json& patterns, const std::string& module) {
  if (!patterns.is_object()) return std::nullopt;
  for (const auto& [key, value] : patterns.items()) {
    if (!value.is_number()) continue;
    try {
      if (std::regex_match(module, std::regex("(.*\\.)?" + key))) return value.get<double>();
    } catch (const std::regex_error&) {
      if (module == key || module.ends_with("." + key)) return value.get<double>();
    }
  }
  return std::nullopt;
}

struct PeftConfig {
  double r = 8, alpha = 8;
  bool rslora = false;
  nlohmann::json rank_pattern, alpha_pattern;
};

PeftConfig read_config(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / "adapter_config.json";
  if (!std::filesystem::exists(file)) invalid(dir, "has no adapter_config.json");
  const nlohmann::json json = hf::read_json_object(file);
  const std::string type = hf::find_string(json, "peft_type", file).value_or("LORA");
  if (type != "LORA") invalid(dir, "is a PEFT " + type + " adapter; only LORA is supported");
  if (hf::find_bool(json, "use_dora", file).value_or(false)) {
    invalid(dir, "uses DoRA (use_dora), which Baton does not implement");
  }
  if (hf::find_bool(json, "fan_in_fan_out", file).value_or(false)) {
    invalid(dir,
            "stores its weights transposed (fan_in_fan_out), as for GPT-2; Llama-family "
            "adapters do not");
  }
  if (const auto it = json.find("modules_to_save");
      it != json.end() && !it->is_null() && !(it->is_array() && it->empty())) {
    invalid(dir, "also saves whole modules (modules_to_save: " + it->dump() +
                     "), which LoRA serving cannot apply");
  }
  PeftConfig config;
  config.r = static_cast<double>(hf::find_int(json, "r", file).value_or(8));
  config.alpha = hf::find_number(json, "lora_alpha", file).value_or(config.r);
  config.rslora = hf::find_bool(json, "use_rslora", file).value_or(false);
  if (config.r < 1) invalid(dir, "has r " + std::to_string(config.r) + " in adapter_config.json");
  if (const auto it = json.find("rank_pattern"); it != json.end()) config.rank_pattern = *it;
  if (const auto it = json.find("alpha_pattern"); it != json.end()) config.alpha_pattern = *it;
  return config;
}

// q and k rows of a Llama base are interleaved per head in GGUF (hf::rotate_half_source_row);
// b's rows, the projection's outputs, move the same way.
Tensor interleave_rotary_rows(const Tensor& b, int64_t head_dim) {
  Tensor out = Tensor::host(DType::kF32, b.shape());
  const int64_t cols = b.dim(1);
  for (int64_t row = 0; row < b.dim(0); ++row) {
    const int64_t source = hf::rotate_half_source_row(row, head_dim);
    std::copy_n(b.data<float>() + source * cols, cols, out.data<float>() + row * cols);
  }
  return out;
}

}  // namespace

LoraAdapter read_peft(const std::filesystem::path& dir, const ModelConfig& base, float user_scale) {
  const PeftConfig config = read_config(dir);
  const std::filesystem::path weights = dir / "adapter_model.safetensors";
  if (!std::filesystem::exists(weights)) {
    invalid(dir, std::filesystem::exists(dir / "adapter_model.bin")
                     ? "holds adapter_model.bin; save it as safetensors "
                       "(save_pretrained(safe_serialization=True))"
                     : "has no adapter_model.safetensors");
  }
  const hf::SafetensorsFile file = hf::SafetensorsFile::open(weights);
  static const std::regex kName(
      R"(^(?:.*\.)?layers\.(\d+)\.(.+)\.lora_([AB])(?:\.default)?\.weight$)");
  struct Pair {
    std::string a, b;
  };
  std::map<std::pair<int, std::string>, Pair> modules;  // (layer, module path)
  for (const hf::SafetensorsTensor& t : file.tensors()) {
    std::smatch m;
    if (!std::regex_match(t.name, m, kName)) {
      if (t.name.find("embed_tokens") != std::string::npos ||
          t.name.find("lm_head") != std::string::npos) {
        invalid(dir, "adapts " + t.name +
                         ": the embeddings or the output layer, which LoRA "
                         "serving leaves to the base model");
      }
      invalid(dir, "has tensor " + t.name + ", not a LoRA weight of a decoder layer");
    }
    Pair& pair = modules[{std::stoi(m[1].str()), m[2].str()}];
    (m[3].str() == "A" ? pair.a : pair.b) = t.name;
  }
  TargetBuilder builder(base, dir.string());
  for (const auto& [key, pair] : modules) {
    const auto& [layer, module] = key;
    const std::string& name = pair.a.empty() ? pair.b : pair.a;
    if (pair.a.empty() || pair.b.empty()) invalid(dir, "has " + name + " without its pair");
    const std::string leaf = module.substr(module.rfind('.') + 1);
    const auto weight = gguf_weights().find(leaf);
    if (weight == gguf_weights().end()) {
      invalid(dir, "adapts " + name + ", which is not a linear layer of a " + base.architecture +
                       " model");
    }
    const Tensor a = file.tensor(pair.a);
    const std::string full = "model.layers." + std::to_string(layer) + "." + module;
    const double rank = pattern_value(config.rank_pattern, full).value_or(config.r);
    const double alpha = pattern_value(config.alpha_pattern, full).value_or(config.alpha);
    if (a.rank() != 2 || a.dim(0) != static_cast<int64_t>(rank)) {
      invalid(dir, "has " + pair.a + " of shape " + to_string(a.shape()) +
                       ", but adapter_config.json gives it rank " + std::to_string(rank));
    }
    const float scale =
        static_cast<float>(user_scale * alpha / (config.rslora ? std::sqrt(rank) : rank));
    Tensor b = file.tensor(pair.b);
    const bool rotary = weight->second == "attn_q" || weight->second == "attn_k";
    const ModelFamily* family = find_model_family(base.architecture);
    if (rotary && family && family->interleave_rotary && b.rank() == 2 &&
        b.dim(0) % base.head_dim == 0) {
      b = interleave_rotary_rows(to_f32(b), base.head_dim);
    }
    builder.add("blk." + std::to_string(layer) + "." + weight->second, pair.a, a, b, scale);
  }
  return builder.take();
}

}  // namespace baton::lora
