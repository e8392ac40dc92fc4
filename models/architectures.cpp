#include <functional>
#include <map>

#include "baton/error.h"
#include "models/gemma2.h"
#include "models/llama.h"
#include "models/model.h"
#include "models/phi3.h"

namespace baton {
namespace {

using Loader =
    std::function<std::unique_ptr<Model>(const gguf::GgufFile&, Backend&, const ModelShard&)>;

// GGUF `general.architecture` values and how to load each. A new family adds a line here and
// a file of its own.
const std::map<std::string, Loader>& loaders() {
  static const std::map<std::string, Loader> kLoaders = {
      {"gemma2", load_gemma2},
      {"llama", [](const gguf::GgufFile& f, Backend& b,
                   const ModelShard& s) { return load_llama(f, b, s, LlamaVariant{}); }},
      {"phi3", load_phi3},
      {"qwen2",
       [](const gguf::GgufFile& f, Backend& b, const ModelShard& s) {
         return load_llama(f, b, s, LlamaVariant{.rope_mode = RopeMode::kNeox, .qkv_bias = true});
       }},
  };
  return kLoaders;
}

}  // namespace

std::vector<std::string> supported_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, loader] : loaders()) names.push_back(name);
  return names;
}

std::unique_ptr<Model> load_model(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard) {
  const std::string arch = file.get_string("general.architecture");
  const auto it = loaders().find(arch);
  if (it == loaders().end()) {
    std::string known;
    for (const std::string& name : supported_architectures())
      known += (known.empty() ? "" : ", ") + name;
    throw Error(ErrorCategory::kUnsupported, file.path().filename().string() +
                                                 ": unknown model architecture '" + arch +
                                                 "' (supported: " + known + ")");
  }
  return it->second(file, backend, shard);
}

}  // namespace baton
