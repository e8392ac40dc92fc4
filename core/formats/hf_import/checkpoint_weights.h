#pragma once

// The weights of a Hugging Face checkpoint directory: model.safetensors, or the shards that
// model.safetensors.index.json lists.

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/hf_import/safetensors_file.h"

namespace baton::hf {

class CheckpointWeights {
 public:
  // Reads model.safetensors.index.json when present (every shard it names is opened and must
  // hold the tensors mapped to it), else model.safetensors. Throws Error(kInvalidModel) naming
  // the directory when it has neither (PyTorch .bin checkpoints are not read), a shard that
  // lacks a tensor the index maps to it, or a shard name that is not a plain file name; and the
  // errors of SafetensorsFile::open.
  static CheckpointWeights open(const std::filesystem::path& dir);

  // Every tensor name, in order.
  std::vector<std::string> names() const;
  // nullptr when the checkpoint has no such tensor.
  const SafetensorsTensor* find(std::string_view name) const;
  // As SafetensorsFile::tensor.
  Tensor tensor(std::string_view name) const;

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t, std::less<>> file_of_;  // tensor name -> index into files_
};

}  // namespace baton::hf
