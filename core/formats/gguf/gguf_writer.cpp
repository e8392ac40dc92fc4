#include "core/formats/gguf/gguf_writer.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "baton/error.h"
#include "core/formats/gguf/ggml_types.h"

namespace baton::gguf {
namespace {

static_assert(std::endian::native == std::endian::little,
              "GGUF readers and writers assume a little-endian host");

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" as a little-endian uint32
constexpr std::string_view kAlignmentKey = "general.alignment";
constexpr size_t kMaxTensorNameBytes = 63;  // llama.cpp keeps names in char[64]
constexpr size_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 16;  // as deep as GgufFile reads

[[noreturn]] void invalid(const std::string& message) {
  throw Error(ErrorCategory::kInvalidArgument, message);
}

// Whether `value` (held as int64_t or uint64_t) fits the integer type `type`; false for
// non-integers.
bool fits_integer(ValueType type, const Value& value) {
  const auto* s = std::get_if<int64_t>(&value.data);
  const auto* u = std::get_if<uint64_t>(&value.data);
  if (!s && !u) return false;
  const bool negative = s && *s < 0;
  const uint64_t magnitude = s ? static_cast<uint64_t>(*s) : *u;
  auto fits = [&](auto min, auto max) {
    if (negative) return min < 0 && *s >= static_cast<int64_t>(min);
    return magnitude <= static_cast<uint64_t>(max);
  };
  switch (type) {
    case ValueType::kUint8:
      return fits(0, UINT8_MAX);
    case ValueType::kInt8:
      return fits(INT8_MIN, INT8_MAX);
    case ValueType::kUint16:
      return fits(0, UINT16_MAX);
    case ValueType::kInt16:
      return fits(INT16_MIN, INT16_MAX);
    case ValueType::kUint32:
      return fits(0, UINT32_MAX);
    case ValueType::kInt32:
      return fits(INT32_MIN, INT32_MAX);
    case ValueType::kUint64:
      return fits(0, UINT64_MAX);
    case ValueType::kInt64:
      return fits(INT64_MIN, INT64_MAX);
    default:
      return false;
  }
}

void check_value(const Value& value, const std::string& field, int depth) {
  const auto type_code = static_cast<uint32_t>(value.type);
  if (type_code > static_cast<uint32_t>(ValueType::kFloat64)) {
    invalid(field + ": value type " + std::to_string(type_code) + " is not a GGUF value type");
  }
  bool ok = false;
  switch (value.type) {
    case ValueType::kFloat32:
    case ValueType::kFloat64:
      ok = std::holds_alternative<double>(value.data);
      break;
    case ValueType::kBool:
      ok = std::holds_alternative<bool>(value.data);
      break;
    case ValueType::kString:
      ok = std::holds_alternative<std::string>(value.data);
      break;
    case ValueType::kArray: {
      const auto* array = std::get_if<Array>(&value.data);
      if (!array) break;
      if (depth >= kMaxArrayDepth) invalid(field + ": arrays nested too deeply");
      for (const Value& item : array->items) {
        if (item.type != array->element_type) {
          invalid(field + ": array of " + std::string(to_string(array->element_type)) +
                  " holds a " + std::string(to_string(item.type)));
        }
        check_value(item, field, depth + 1);
      }
      ok = true;
      break;
    }
    default:
      ok = fits_integer(value.type, value);
  }
  if (!ok) {
    invalid(field + ": value does not match its type " + std::string(to_string(value.type)) +
            " (or is out of its range)");
  }
}

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view text) {
  put<uint64_t>(out, text.size());
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  out.insert(out.end(), bytes, bytes + text.size());
}

// Two's-complement bits of a checked integer value, to be truncated to its width.
uint64_t integer_bits(const Value& value) {
  if (const auto* s = std::get_if<int64_t>(&value.data)) return static_cast<uint64_t>(*s);
  return std::get<uint64_t>(value.data);
}

void put_value(std::vector<std::byte>& out, const Value& value) {
  switch (value.type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
      put<uint8_t>(out, static_cast<uint8_t>(integer_bits(value)));
      break;
    case ValueType::kUint16:
    case ValueType::kInt16:
      put<uint16_t>(out, static_cast<uint16_t>(integer_bits(value)));
      break;
    case ValueType::kUint32:
    case ValueType::kInt32:
      put<uint32_t>(out, static_cast<uint32_t>(integer_bits(value)));
      break;
    case ValueType::kUint64:
    case ValueType::kInt64:
      put<uint64_t>(out, integer_bits(value));
      break;
    case ValueType::kFloat32:
      put<float>(out, static_cast<float>(std::get<double>(value.data)));
      break;
    case ValueType::kFloat64:
      put<double>(out, std::get<double>(value.data));
      break;
    case ValueType::kBool:
      put<uint8_t>(out, std::get<bool>(value.data) ? 1 : 0);
      break;
    case ValueType::kString:
      put_string(out, std::get<std::string>(value.data));
      break;
    case ValueType::kArray: {
      const Array& array = std::get<Array>(value.data);
      put<uint32_t>(out, static_cast<uint32_t>(array.element_type));
      put<uint64_t>(out, array.items.size());
      for (const Value& item : array.items) put_value(out, item);
      break;
    }
  }
}

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

}  // namespace

GgufWriter::GgufWriter(uint32_t version) : version_(version) {
  if (version != 2 && version != 3) {
    invalid("GGUF version " + std::to_string(version) + " cannot be written (use 2 or 3)");
  }
}

void GgufWriter::add(std::string key, Value value) {
  const std::string field = "metadata key '" + key + "'";
  if (keys_.contains(key)) invalid(field + ": added twice");
  check_value(value, field, 0);
  if (key == kAlignmentKey) {
    const auto* alignment = std::get_if<uint64_t>(&value.data);
    if (value.type != ValueType::kUint32 || !alignment || !std::has_single_bit(*alignment)) {
      invalid(field + ": must be a uint32 nonzero power of two");
    }
    alignment_ = *alignment;
  }
  keys_.insert(key);
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::add_string(std::string key, std::string value) {
  add(std::move(key), {ValueType::kString, std::move(value)});
}

void GgufWriter::add_uint32(std::string key, uint32_t value) {
  add(std::move(key), {ValueType::kUint32, uint64_t{value}});
}

void GgufWriter::add_int32(std::string key, int32_t value) {
  add(std::move(key), {ValueType::kInt32, int64_t{value}});
}

void GgufWriter::add_uint64(std::string key, uint64_t value) {
  add(std::move(key), {ValueType::kUint64, value});
}

void GgufWriter::add_float32(std::string key, float value) {
  add(std::move(key), {ValueType::kFloat32, double{value}});
}

void GgufWriter::add_bool(std::string key, bool value) {
  add(std::move(key), {ValueType::kBool, value});
}

void GgufWriter::add_string_array(std::string key, const std::vector<std::string>& values) {
  Array array{ValueType::kString, {}};
  array.items.reserve(values.size());
  for (const std::string& v : values) array.items.push_back({ValueType::kString, v});
  add(std::move(key), {ValueType::kArray, std::move(array)});
}

void GgufWriter::add_int32_array(std::string key, std::span<const int32_t> values) {
  Array array{ValueType::kInt32, {}};
  array.items.reserve(values.size());
  for (int32_t v : values) array.items.push_back({ValueType::kInt32, int64_t{v}});
  add(std::move(key), {ValueType::kArray, std::move(array)});
}

void GgufWriter::add_float32_array(std::string key, std::span<const float> values) {
  Array array{ValueType::kFloat32, {}};
  array.items.reserve(values.size());
  for (float v : values) array.items.push_back({ValueType::kFloat32, double{v}});
  add(std::move(key), {ValueType::kArray, std::move(array)});
}

void GgufWriter::set_alignment(uint32_t alignment) {
  add(std::string(kAlignmentKey), {ValueType::kUint32, uint64_t{alignment}});
}

uint64_t GgufWriter::checked_nbytes(const std::string& name, const Shape& shape,
                                    uint32_t ggml_type) const {
  const std::string field = "tensor '" + name + "'";
  if (name.size() > kMaxTensorNameBytes) {
    invalid(field + ": name is longer than " + std::to_string(kMaxTensorNameBytes) + " bytes");
  }
  if (tensor_names_.contains(name)) invalid(field + ": added twice");
  if (shape.empty() || shape.size() > kMaxDims) {
    invalid(field + ": shape " + baton::to_string(shape) + " must have 1 to 4 dimensions");
  }
  const std::optional<GgmlBlockLayout> layout = ggml_block_layout(ggml_type);
  if (!layout) {
    invalid(field + ": ggml type " + std::to_string(ggml_type) + " (" +
            std::string(ggml_type_name(ggml_type)) + ") cannot be stored in GGUF");
  }
  if (shape.back() % layout->block_size != 0) {
    invalid(field + ": row length " + std::to_string(shape.back()) + " is not a multiple of the " +
            std::string(ggml_type_name(ggml_type)) + " block size " +
            std::to_string(layout->block_size));
  }
  if (shape.back() < 0) invalid(field + ": shape " + baton::to_string(shape) + " is negative");
  uint64_t expected = layout->row_bytes(shape.back());
  int64_t elements = shape.back();
  for (size_t i = 0; i + 1 < shape.size(); ++i) {
    const uint64_t factor = shape[i];
    if (shape[i] < 0 || __builtin_mul_overflow(elements, shape[i], &elements) ||
        __builtin_mul_overflow(expected, factor, &expected)) {
      invalid(field + ": shape " + baton::to_string(shape) + " is negative or too large");
    }
  }
  return expected;
}

void GgufWriter::check_tensor(const std::string& name, const Shape& shape, uint32_t ggml_type,
                              size_t nbytes) const {
  const uint64_t expected = checked_nbytes(name, shape, ggml_type);
  if (expected != nbytes) {
    invalid("tensor '" + name + "': " + std::to_string(nbytes) + " bytes given, shape " +
            baton::to_string(shape) + " of " + std::string(ggml_type_name(ggml_type)) + " needs " +
            std::to_string(expected));
  }
}

void GgufWriter::add_tensor(std::string name, const Tensor& tensor) {
  if (!tensor.defined() || !tensor.buffer()->is_host()) {
    invalid("tensor '" + name + "': only a defined host tensor can be written");
  }
  const auto ggml_type = static_cast<uint32_t>(tensor.dtype());  // DType values are ggml codes
  check_tensor(name, tensor.shape(), ggml_type, tensor.nbytes());
  tensor_names_.insert(name);
  tensors_.push_back({std::move(name), tensor.shape(), ggml_type, tensor.nbytes(),
                      std::span<const std::byte>(tensor.materialize(), tensor.nbytes()),
                      tensor.buffer()});
}

void GgufWriter::add_tensor(std::string name, Shape shape, DType dtype,
                            std::span<const std::byte> bytes) {
  add_tensor(std::move(name), std::move(shape), static_cast<uint32_t>(dtype), bytes);
}

void GgufWriter::add_tensor(std::string name, Shape shape, uint32_t ggml_type,
                            std::span<const std::byte> bytes) {
  check_tensor(name, shape, ggml_type, bytes.size());
  auto copy = std::make_shared<const std::vector<std::byte>>(bytes.begin(), bytes.end());
  const std::span<const std::byte> view(copy->data(), copy->size());
  tensor_names_.insert(name);
  tensors_.push_back(
      {std::move(name), std::move(shape), ggml_type, view.size(), view, std::move(copy)});
}

void GgufWriter::add_tensor(std::string name, Shape shape, DType dtype, TensorFiller fill) {
  const auto ggml_type = static_cast<uint32_t>(dtype);
  const uint64_t nbytes = checked_nbytes(name, shape, ggml_type);
  tensor_names_.insert(name);
  tensors_.push_back(
      {std::move(name), std::move(shape), ggml_type, nbytes, {}, nullptr, std::move(fill)});
}

void GgufWriter::add_zero_tensor(std::string name, Shape shape, DType dtype) {
  const auto ggml_type = static_cast<uint32_t>(dtype);
  const uint64_t nbytes = checked_nbytes(name, shape, ggml_type);
  tensor_names_.insert(name);
  tensors_.push_back({std::move(name), std::move(shape), ggml_type, nbytes, {}, nullptr, {}, true});
}

void GgufWriter::write(const std::filesystem::path& path) const {
  std::vector<std::byte> head;
  put<uint32_t>(head, kMagic);
  put<uint32_t>(head, version_);
  put<uint64_t>(head, tensors_.size());
  put<uint64_t>(head, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(head, key);
    put<uint32_t>(head, static_cast<uint32_t>(value.type));
    put_value(head, value);
  }
  uint64_t offset = 0;
  for (const PendingTensor& tensor : tensors_) {
    put_string(head, tensor.name);
    put<uint32_t>(head, static_cast<uint32_t>(tensor.shape.size()));
    for (auto dim = tensor.shape.rbegin(); dim != tensor.shape.rend(); ++dim) {
      put<uint64_t>(head, static_cast<uint64_t>(*dim));
    }
    put<uint32_t>(head, tensor.ggml_type);
    put<uint64_t>(head, offset);
    offset = align_up(offset + tensor.nbytes, alignment_);
  }
  head.resize(align_up(head.size(), alignment_));

  const std::filesystem::path partial = path.string() + ".partial";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  const std::vector<char> padding(alignment_, 0);
  out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
  std::vector<std::byte> made;  // reused by every filled tensor
  try {
    for (const PendingTensor& tensor : tensors_) {
      if (tensor.zero) {
        out.seekp(static_cast<std::streamoff>(align_up(tensor.nbytes, alignment_)), std::ios::cur);
        continue;
      }
      std::span<const std::byte> bytes = tensor.bytes;
      if (tensor.fill) {
        made.assign(tensor.nbytes, std::byte{0});
        tensor.fill(made);
        bytes = made;
      }
      out.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
      const uint64_t pad = align_up(bytes.size(), alignment_) - bytes.size();
      out.write(padding.data(), static_cast<std::streamsize>(pad));
    }
  } catch (...) {
    // A tensor that could not be made (bad input values) leaves no partial file behind.
    out.close();
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw;
  }
  out.close();
  // Holes at the end are not in the file until its size covers them.
  std::error_code size_error;
  if (out) std::filesystem::resize_file(partial, head.size() + offset, size_error);
  if (!out || size_error) {
    const int err = size_error ? size_error.value() : errno;
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw Error(ErrorCategory::kIo, "cannot write " + partial.string() + ": " + std::strerror(err));
  }
  std::error_code rename_error;
  std::filesystem::rename(partial, path, rename_error);
  if (rename_error) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw Error(ErrorCategory::kIo, "cannot rename " + partial.string() + " to " + path.string() +
                                        ": " + rename_error.message());
  }
}

}  // namespace baton::gguf
