#include "core/formats/hf_import/hf_json.h"

#include <fstream>
#include <functional>
#include <iterator>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"

namespace baton::hf {
namespace {

// `key` of `object` as a T when `holds` says the value is one; nullopt when it is absent or null
// (Hugging Face writes null for "not set").
template <typename T, typename Holds>
std::optional<T> find_as(const nlohmann::json& object, std::string_view key,
                         const std::filesystem::path& file, Holds holds,
                         std::string_view expected) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!std::invoke(holds, *it)) {
    throw Error(ErrorCategory::kInvalidModel, file.filename().string() + ": \"" + std::string(key) +
                                                  "\" is " + gguf::printable(it->dump()) +
                                                  ", not " + std::string(expected));
  }
  return it->get<T>();
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) {
    throw Error(ErrorCategory::kIo, "cannot read " + path.string());
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

nlohmann::json read_json_object(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCategory::kInvalidModel, path.string() + " is not valid JSON: " + e.what());
  }
  if (!json.is_object()) {
    throw Error(ErrorCategory::kInvalidModel, path.string() + " does not hold a JSON object");
  }
  return json;
}

std::optional<int64_t> find_int(const nlohmann::json& object, std::string_view key,
                                const std::filesystem::path& file) {
  // Unsigned JSON integers past INT64_MAX would wrap.
  const auto fits = [](const nlohmann::json& v) {
    return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX);
  };
  return find_as<int64_t>(object, key, file, fits, "an integer");
}

std::optional<double> find_number(const nlohmann::json& object, std::string_view key,
                                  const std::filesystem::path& file) {
  return find_as<double>(object, key, file, &nlohmann::json::is_number, "a number");
}

std::optional<bool> find_bool(const nlohmann::json& object, std::string_view key,
                              const std::filesystem::path& file) {
  return find_as<bool>(object, key, file, &nlohmann::json::is_boolean, "true or false");
}

std::optional<std::string> find_string(const nlohmann::json& object, std::string_view key,
                                       const std::filesystem::path& file) {
  return find_as<std::string>(object, key, file, &nlohmann::json::is_string, "a string");
}

}  // namespace baton::hf
