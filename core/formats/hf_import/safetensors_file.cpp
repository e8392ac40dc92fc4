#include "core/formats/hf_import/safetensors_file.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/gguf/mapped_file.h"
#include "core/runtime/buffer.h"

namespace baton::hf {
namespace {

constexpr uint64_t kHeaderLengthBytes = 8;
// The limit the reference implementation enforces, so a corrupt length cannot make us parse
// gigabytes of tensor data as JSON.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "F16") return DType::kF16;
  if (name == "BF16") return DType::kBF16;
  return std::nullopt;
}

class HeaderChecker {
 public:
  HeaderChecker(const std::filesystem::path& path, uint64_t data_offset, uint64_t data_bytes)
      : file_(path.filename().string()), data_offset_(data_offset), data_bytes_(data_bytes) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorCategory::kInvalidModel, file_ + ": " + message);
  }

  SafetensorsTensor tensor(const std::string& name, const nlohmann::json& entry) const {
    const std::string what = "tensor '" + gguf::printable(name) + "'";
    if (!entry.is_object()) fail(what + " is not a JSON object");
    SafetensorsTensor t{.name = name};
    const auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) fail(what + " has no \"dtype\" string");
    const std::optional<DType> known = dtype_from_name(dtype->get<std::string>());
    if (!known) {
      throw Error(ErrorCategory::kUnsupported, file_ + ": " + what + " has dtype " +
                                                   gguf::printable(dtype->dump()) +
                                                   " (supported: F32, F16, BF16)");
    }
    t.dtype = *known;
    uint64_t count = 1;
    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) fail(what + " has no \"shape\" array");
    for (const nlohmann::json& d : *shape) {
      if (!d.is_number_unsigned()) fail(what + " has a bad dimension " + d.dump());
      const uint64_t n = d.get<uint64_t>();
      if (n > uint64_t{INT64_MAX} || __builtin_mul_overflow(count, n, &count)) {
        fail(what + " has shape " + gguf::printable(shape->dump()) + ", too large to address");
      }
      t.shape.push_back(static_cast<int64_t>(n));
    }
    if (__builtin_mul_overflow(count, traits(t.dtype).block_bytes, &t.nbytes)) {
      fail(what + " has shape " + gguf::printable(shape->dump()) + ", too large to address");
    }
    const auto offsets = entry.find("data_offsets");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      fail(what + " has no \"data_offsets\" pair of byte offsets");
    }
    const uint64_t begin = (*offsets)[0].get<uint64_t>(), end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data_bytes_) {
      fail(what + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
           "] outside the " + std::to_string(data_bytes_) + " bytes of data");
    }
    if (end - begin != t.nbytes) {
      fail(what + " takes " + std::to_string(end - begin) + " bytes but its shape " +
           to_string(t.shape) + " of " + std::string(to_string(t.dtype)) + " needs " +
           std::to_string(t.nbytes));
    }
    t.offset = data_offset_ + begin;
    return t;
  }

 private:
  std::string file_;
  uint64_t data_offset_;
  uint64_t data_bytes_;
};

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  auto mapping = std::make_shared<const gguf::MappedFile>(path);
  const uint64_t size = mapping->size();
  const std::string name = path.filename().string();
  if (size < kHeaderLengthBytes) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": " + std::to_string(size) +
                    " bytes is too short for a safetensors file (truncated?)");
  }
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, mapping->data(), sizeof header_bytes);
  if (header_bytes > kMaxHeaderBytes || header_bytes > size - kHeaderLengthBytes) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": header length " + std::to_string(header_bytes) +
                    " runs past the end of the " + std::to_string(size) +
                    "-byte file (truncated or not safetensors?)");
  }
  const auto* text = reinterpret_cast<const char*>(mapping->data()) + kHeaderLengthBytes;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + header_bytes);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": the header is not valid JSON: " + std::string(e.what()));
  }
  if (!header.is_object()) {
    throw Error(ErrorCategory::kInvalidModel, name + ": the header is not a JSON object");
  }
  const uint64_t data_offset = kHeaderLengthBytes + header_bytes;
  const HeaderChecker check(path, data_offset, size - data_offset);

  SafetensorsFile file;
  file.path_ = path;
  file.bytes_ = mapping->data();
  file.mapping_ = std::move(mapping);
  for (const auto& [key, entry] : header.items()) {
    if (key == kMetadataKey) {
      if (!entry.is_object()) check.fail("\"__metadata__\" is not a JSON object");
      continue;
    }
    file.index_.emplace(key, file.tensors_.size());
    file.tensors_.push_back(check.tensor(key, entry));
  }
  return file;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Tensor SafetensorsFile::tensor(std::string_view name) const {
  const SafetensorsTensor* info = find(name);
  if (!info) {
    throw Error(ErrorCategory::kInvalidModel,
                path_.filename().string() + ": no tensor named '" + gguf::printable(name) + "'");
  }
  const std::byte* data = bytes_ + info->offset;
  if (reinterpret_cast<uintptr_t>(data) % traits(info->dtype).block_bytes != 0) {
    Tensor copy = Tensor::host(info->dtype, info->shape);
    std::memcpy(copy.materialize(), data, info->nbytes);
    return copy;
  }
  // The mapping is read-only: the const_cast only satisfies Buffer's interface.
  return Tensor(info->dtype, info->shape,
                wrap_mapped_file(const_cast<std::byte*>(data), info->nbytes, mapping_));
}

}  // namespace baton::hf
