#pragma once

// Text and JSON files of a Hugging Face checkpoint directory (config.json,
// tokenizer_config.json, model.safetensors.index.json), read with errors that name the file and
// the field.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace baton::hf {

// The whole file. Throws Error(kIo) when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// The parsed file. Throws Error(kIo) when it cannot be read, Error(kInvalidModel) naming the
// file and the parser's complaint when it is not JSON or its top level is not an object.
nlohmann::json read_json_object(const std::filesystem::path& path);

// `key` of `object` as an integer, or nullopt when it is absent or null. Throws
// Error(kInvalidModel) naming `file` and the key when it holds anything but an integer.
std::optional<int64_t> find_int(const nlohmann::json& object, std::string_view key,
                                const std::filesystem::path& file);
// The same for a number (an integer or a float), a boolean and a string.
std::optional<double> find_number(const nlohmann::json& object, std::string_view key,
                                  const std::filesystem::path& file);
std::optional<bool> find_bool(const nlohmann::json& object, std::string_view key,
                              const std::filesystem::path& file);
std::optional<std::string> find_string(const nlohmann::json& object, std::string_view key,
                                       const std::filesystem::path& file);

}  // namespace baton::hf
