#include "core/formats/hf_import/checkpoint_weights.h"

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/hf_import/hf_json.h"

namespace baton::hf {
namespace {

constexpr std::string_view kSingleFile = "model.safetensors";
constexpr std::string_view kIndexFile = "model.safetensors.index.json";

[[noreturn]] void invalid(const std::string& message) {
  throw Error(ErrorCategory::kInvalidModel, message);
}

}  // namespace

CheckpointWeights CheckpointWeights::open(const std::filesystem::path& dir) {
  CheckpointWeights weights;
  const std::filesystem::path index_path = dir / kIndexFile;
  if (!std::filesystem::exists(index_path)) {
    if (!std::filesystem::exists(dir / kSingleFile)) {
      invalid(dir.string() + " has neither " + std::string(kSingleFile) + " nor " +
              std::string(kIndexFile) + " (only safetensors checkpoints are supported)");
    }
    weights.files_.push_back(SafetensorsFile::open(dir / kSingleFile));
    for (const SafetensorsTensor& t : weights.files_[0].tensors()) weights.file_of_[t.name] = 0;
    return weights;
  }

  const nlohmann::json index = read_json_object(index_path);
  const auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object()) {
    invalid(index_path.string() + " has no \"weight_map\" object");
  }
  std::map<std::string, size_t> shard_index;
  for (const auto& [tensor, shard] : map->items()) {
    const std::string what =
        index_path.filename().string() + ": tensor '" + gguf::printable(tensor) + "'";
    if (!shard.is_string()) invalid(what + " maps to " + gguf::printable(shard.dump()));
    const std::string file = shard.get<std::string>();
    // A shard lives beside the index; a path could read any file on the machine.
    if (file.empty() || std::filesystem::path(file).filename() != file || file == "." ||
        file == "..") {
      invalid(what + " maps to '" + gguf::printable(file) + "', which is not a file name");
    }
    auto [it, added] = shard_index.emplace(file, weights.files_.size());
    if (added) weights.files_.push_back(SafetensorsFile::open(dir / file));
    if (!weights.files_[it->second].find(tensor)) {
      invalid(what + " is not in its shard " + file);
    }
    weights.file_of_[tensor] = it->second;
  }
  return weights;
}

std::vector<std::string> CheckpointWeights::names() const {
  std::vector<std::string> names;
  names.reserve(file_of_.size());
  for (const auto& entry : file_of_) names.push_back(entry.first);
  return names;
}

const SafetensorsTensor* CheckpointWeights::find(std::string_view name) const {
  const auto it = file_of_.find(name);
  return it == file_of_.end() ? nullptr : files_[it->second].find(name);
}

Tensor CheckpointWeights::tensor(std::string_view name) const {
  const auto it = file_of_.find(name);
  if (it == file_of_.end()) {
    throw Error(ErrorCategory::kInvalidModel,
                "the checkpoint has no tensor named '" + gguf::printable(name) + "'");
  }
  return files_[it->second].tensor(name);
}

}  // namespace baton::hf
