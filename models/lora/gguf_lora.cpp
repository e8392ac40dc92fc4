// llama.cpp's GGUF LoRA adapters: general.type = adapter, adapter.type = lora,
// adapter.lora.alpha, and for each adapted weight "<base tensor>.lora_a" [r, in] and
// "<base tensor>.lora_b" [out, r] (outermost first), as convert_lora_to_gguf.py writes them.

#include <cmath>
#include <map>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "models/lora/lora_readers.h"

namespace baton::lora {
namespace {

constexpr std::string_view kWeightSuffix = ".weight";

[[noreturn]] void invalid(const std::filesystem::path& path, const std::string& why) {
  throw Error(ErrorCategory::kInvalidArgument, "the LoRA adapter " + path.string() + " " + why);
}

}  // namespace

LoraAdapter read_gguf(const std::filesystem::path& path, const ModelConfig& base,
                      float user_scale) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  const std::string type = file.find_string("general.type").value_or("model");
  if (type != "adapter" || file.find_string("adapter.type").value_or("") != "lora") {
    invalid(path, "is not a GGUF LoRA adapter (general.type '" + type + "', adapter.type '" +
                      file.find_string("adapter.type").value_or("") + "')");
  }
  const std::string architecture = file.find_string("general.architecture").value_or("");
  if (architecture != base.architecture) {
    invalid(path,
            "is for architecture '" + architecture + "', the model is '" + base.architecture + "'");
  }
  const double alpha = file.find_float("adapter.lora.alpha").value_or(0.0);
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> pairs;
  for (const gguf::TensorInfo& info : file.tensors()) {
    const bool is_a = info.name.ends_with(".lora_a"), is_b = info.name.ends_with(".lora_b");
    if (!is_a && !is_b) invalid(path, "has tensor " + info.name + ", neither lora_a nor lora_b");
    auto& pair = pairs[info.name.substr(0, info.name.size() - 7)];
    (is_a ? pair.first : pair.second) = &info;
  }
  TargetBuilder builder(base, path.string());
  for (const auto& [weight, pair] : pairs) {
    if (!pair.first || !pair.second) {
      invalid(path, "has " + weight +
                        (pair.first ? ".lora_a without .lora_b" : ".lora_b without .lora_a"));
    }
    if (!weight.ends_with(kWeightSuffix)) invalid(path, "adapts " + weight + ", not a weight");
    const Tensor a = file.tensor(pair.first->name), b = file.tensor(pair.second->name);
    const double rank = a.rank() == 2 ? static_cast<double>(a.dim(0)) : 1.0;
    const float scale = alpha > 0 ? static_cast<float>(user_scale * alpha / rank) : user_scale;
    builder.add(weight.substr(0, weight.size() - kWeightSuffix.size()), weight, a, b, scale);
  }
  return builder.take();
}

}  // namespace baton::lora
