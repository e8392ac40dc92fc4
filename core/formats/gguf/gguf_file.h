#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/runtime/tensor.h"

namespace baton::gguf {

// GGUF metadata value types, numbered as in the file format.
enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view to_string(ValueType type);

struct Value;
struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

// One metadata value. Integers of every width are held as int64_t/uint64_t, floats as double,
// with `type` recording the width written in the file. GgufFile holds unsigned types in uint64_t
// and signed types in int64_t; GgufWriter accepts either for any integer type whose range fits.
struct Value {
  ValueType type = ValueType::kUint8;
  std::variant<int64_t, uint64_t, double, bool, std::string, Array> data;
};

struct TensorInfo {
  std::string name;
  Shape shape;             // outermost first (GGUF stores dimensions innermost first)
  uint32_t ggml_type = 0;  // raw code; may be a type Baton does not implement
  uint64_t offset = 0;     // from the start of the data section
  uint64_t nbytes = 0;
};

// A memory-mapped, validated GGUF file (versions 2 and 3). open() checks the magic, version,
// counts, every key and value, tensor shapes, types, alignment and that each tensor's bytes lie
// inside the file, and throws Error(kInvalidModel) naming the bad field, or Error(kIo) when the
// file cannot be read. Tensors are views into the mapping, which lives as long as any of them.
class GgufFile {
 public:
  static GgufFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const;

  // Metadata in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters: throw Error(kInvalidModel) naming the key when it is missing or of the wrong
  // type. get_int accepts any integer type and checks the value fits; get_float accepts any
  // number.
  std::string get_string(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<int64_t> get_int_array(std::string_view key) const;
  std::vector<float> get_float_array(std::string_view key) const;
  // Optional forms: nullopt when the key is absent, Error when present with the wrong type.
  std::optional<std::string> find_string(std::string_view key) const;
  std::optional<int64_t> find_int(std::string_view key) const;
  std::optional<double> find_float(std::string_view key) const;
  std::optional<bool> find_bool(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // A host tensor viewing the mapped bytes, which are read-only (writing through it faults) and
  // aligned to alignment() within the file. Throws Error(kInvalidModel) when the tensor is
  // missing, Error(kUnsupported) naming the ggml type when Baton does not implement it.
  Tensor tensor(std::string_view name) const;

 private:
  std::filesystem::path path_;
  std::shared_ptr<const void> mapping_;  // the mmap; unmapped when the last holder goes
  const std::byte* bytes_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace baton::gguf
