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

// The graph each family of core/formats/family is built as, by its GGUF name.
const std::map<std::string, Loader>& loaders() {
  static const std::map<std::string, Loader> kLoaders = {
      {"gemma2", load_gemma2},
      {"llama", load_llama},
      {"phi3", load_phi3},
      {"qwen2", load_llama},
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
