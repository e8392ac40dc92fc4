#pragma once

// Writes safetensors files for tests, as Hugging Face's library lays them out: the header JSON
// padded with spaces to a multiple of 8 bytes, then each tensor's bytes in the order given.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace baton::testing {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16"
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

inline SafetensorsEntry f32_entry(std::string name, std::vector<int64_t> shape,
                                  std::span<const float> values) {
  const auto bytes = std::as_bytes(values);
  return {std::move(name), "F32", std::move(shape), {bytes.begin(), bytes.end()}};
}

// The header as the library writes it; tests corrupt it before writing.
inline nlohmann::json safetensors_header(const std::vector<SafetensorsEntry>& entries) {
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  uint64_t offset = 0;
  for (const SafetensorsEntry& e : entries) {
    header[e.name] = {{"dtype", e.dtype},
                      {"shape", e.shape},
                      {"data_offsets", {offset, offset + e.bytes.size()}}};
    offset += e.bytes.size();
  }
  return header;
}

// `header_text` stands as given, so a test can write malformed JSON.
inline void write_safetensors_raw(const std::filesystem::path& path, std::string header_text,
                                  const std::vector<SafetensorsEntry>& entries) {
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  const uint64_t length = header_text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&length), sizeof length);
  out << header_text;
  for (const SafetensorsEntry& e : entries) {
    out.write(reinterpret_cast<const char*>(e.bytes.data()),
              static_cast<std::streamsize>(e.bytes.size()));
  }
}

inline void write_safetensors(const std::filesystem::path& path,
                              const std::vector<SafetensorsEntry>& entries) {
  write_safetensors_raw(path, safetensors_header(entries).dump(), entries);
}

}  // namespace baton::testing
