#pragma once

// Hugging Face's safetensors format: an 8-byte little-endian header length N, N bytes of JSON
// ({name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}), then the
// tensor data, with offsets counted from the end of the header.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/runtime/tensor.h"

namespace baton::hf {

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kF32;  // F32, F16 or BF16, the types Llama checkpoints ship in
  Shape shape;                // outermost first, as PyTorch writes it
  uint64_t offset = 0;        // from the start of the file
  uint64_t nbytes = 0;
};

// A memory-mapped, validated safetensors file. open() checks the header length, the JSON, and
// for every tensor its dtype, shape and that its byte range lies in the data section and holds
// exactly product(shape) elements; it throws Error(kInvalidModel) naming the file and the tensor,
// Error(kUnsupported) for a dtype other than F32, F16 and BF16, and Error(kIo) when the file
// cannot be read. Byte ranges may overlap or leave gaps, as the format allows.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  // In the order of their names.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* find(std::string_view name) const;
  // A host tensor viewing the mapped bytes (read-only), or a copy of them when they are not
  // aligned to the element size, which the format does not promise. Throws Error(kInvalidModel)
  // when there is no such tensor.
  Tensor tensor(std::string_view name) const;

 private:
  std::filesystem::path path_;
  std::shared_ptr<const void> mapping_;  // the mmap; unmapped when the last holder goes
  const std::byte* bytes_ = nullptr;
  std::vector<SafetensorsTensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace baton::hf
