// Typed access to a GgufFile's metadata.
#include <cstdint>
#include <optional>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"

namespace baton::gguf {
namespace {

bool is_integer(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kUint16:
    case ValueType::kInt16:
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kUint64:
    case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

bool is_number(ValueType type) {
  return is_integer(type) || type == ValueType::kFloat32 || type == ValueType::kFloat64;
}

std::string describe(const Value& value) {
  if (const auto* array = std::get_if<Array>(&value.data)) {
    return "an array of " + std::string(to_string(array->element_type));
  }
  return std::string(to_string(value.type));
}

[[noreturn]] void fail(const GgufFile& file, std::string_view key, const std::string& problem) {
  throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": metadata key '" +
                                                std::string(key) + "' " + problem);
}

const Value& require(const GgufFile& file, std::string_view key) {
  const Value* value = file.find(key);
  if (!value) fail(file, key, "is missing");
  return *value;
}

[[noreturn]] void wrong_type(const GgufFile& file, std::string_view key, const Value& value,
                             std::string_view expected) {
  fail(file, key, "is " + describe(value) + ", expected " + std::string(expected));
}

// An integer-typed Value as int64_t; nullopt for a uint64 above INT64_MAX.
std::optional<int64_t> to_int64(const Value& value) {
  if (const auto* u = std::get_if<uint64_t>(&value.data)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  return std::get<int64_t>(value.data);
}

double as_double(const Value& value) {
  if (const auto* d = std::get_if<double>(&value.data)) return *d;
  if (const auto* i = std::get_if<int64_t>(&value.data)) return static_cast<double>(*i);
  return static_cast<double>(std::get<uint64_t>(value.data));
}

const Array& require_array(const GgufFile& file, std::string_view key,
                           bool (*element_ok)(ValueType), std::string_view expected) {
  const Value& value = require(file, key);
  const auto* array = std::get_if<Array>(&value.data);
  if (!array || !element_ok(array->element_type)) wrong_type(file, key, value, expected);
  return *array;
}

}  // namespace

std::string_view to_string(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
      return "uint8";
    case ValueType::kInt8:
      return "int8";
    case ValueType::kUint16:
      return "uint16";
    case ValueType::kInt16:
      return "int16";
    case ValueType::kUint32:
      return "uint32";
    case ValueType::kInt32:
      return "int32";
    case ValueType::kFloat32:
      return "float32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "uint64";
    case ValueType::kInt64:
      return "int64";
    case ValueType::kFloat64:
      return "float64";
  }
  return "unknown";
}

const Value* GgufFile::find(std::string_view key) const {
  const auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

std::string GgufFile::get_string(std::string_view key) const {
  const Value& value = require(*this, key);
  if (value.type != ValueType::kString) wrong_type(*this, key, value, "a string");
  return std::get<std::string>(value.data);
}

int64_t GgufFile::get_int(std::string_view key) const {
  const Value& value = require(*this, key);
  if (!is_integer(value.type)) wrong_type(*this, key, value, "an integer");
  const std::optional<int64_t> result = to_int64(value);
  if (!result) {
    fail(*this, key,
         "value " + std::to_string(std::get<uint64_t>(value.data)) + " does not fit int64");
  }
  return *result;
}

double GgufFile::get_float(std::string_view key) const {
  const Value& value = require(*this, key);
  if (!is_number(value.type)) wrong_type(*this, key, value, "a number");
  return as_double(value);
}

bool GgufFile::get_bool(std::string_view key) const {
  const Value& value = require(*this, key);
  if (value.type != ValueType::kBool) wrong_type(*this, key, value, "a bool");
  return std::get<bool>(value.data);
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  const Array& array = require_array(
      *this, key, [](ValueType t) { return t == ValueType::kString; }, "an array of string");
  std::vector<std::string> out;
  out.reserve(array.items.size());
  for (const Value& item : array.items) out.push_back(std::get<std::string>(item.data));
  return out;
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  const Array& array = require_array(*this, key, is_integer, "an array of integers");
  std::vector<int64_t> out;
  out.reserve(array.items.size());
  for (size_t i = 0; i < array.items.size(); ++i) {
    const std::optional<int64_t> item = to_int64(array.items[i]);
    if (!item) {
      fail(*this, key,
           "element " + std::to_string(i) + " = " +
               std::to_string(std::get<uint64_t>(array.items[i].data)) + " does not fit int64");
    }
    out.push_back(*item);
  }
  return out;
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
  const Array& array = require_array(*this, key, is_number, "an array of numbers");
  std::vector<float> out;
  out.reserve(array.items.size());
  for (const Value& item : array.items) out.push_back(static_cast<float>(as_double(item)));
  return out;
}

std::optional<std::string> GgufFile::find_string(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return get_string(key);
}

std::optional<int64_t> GgufFile::find_int(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return get_int(key);
}

std::optional<double> GgufFile::find_float(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return get_float(key);
}

std::optional<bool> GgufFile::find_bool(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return get_bool(key);
}

}  // namespace baton::gguf
