#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"

namespace baton::gguf::testing {

// A fresh directory under the system temp folder, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "baton_gguf_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

inline void write_bytes(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Little-endian bytes of a hand-made GGUF file, for files no writer would produce.
class RawGguf {
 public:
  RawGguf& u8(uint8_t v) { return put(v); }
  RawGguf& u32(uint32_t v) { return put(v); }
  RawGguf& u64(uint64_t v) { return put(v); }
  RawGguf& str(std::string_view s) {
    u64(s.size());
    for (char c : s) u8(static_cast<uint8_t>(c));
    return *this;
  }
  RawGguf& header(uint32_t version, uint64_t tensors, uint64_t kvs) {
    return str_bytes("GGUF").u32(version).u64(tensors).u64(kvs);
  }
  RawGguf& kv_u32(std::string_view key, uint32_t v) {
    return str(key).u32(static_cast<uint32_t>(ValueType::kUint32)).u32(v);
  }
  // Tensor info with `ne` innermost first, as the file stores it.
  RawGguf& tensor_info(std::string_view name, std::initializer_list<uint64_t> ne, uint32_t type,
                       uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  RawGguf& pad_to(size_t alignment) {
    while (bytes_.size() % alignment) u8(0);
    return *this;
  }
  RawGguf& zeros(size_t n) {
    bytes_.resize(bytes_.size() + n);
    return *this;
  }
  RawGguf& str_bytes(std::string_view s) {
    for (char c : s) u8(static_cast<uint8_t>(c));
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  template <typename T>
  RawGguf& put(T v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return *this;
  }
  std::vector<std::byte> bytes_;
};

// Deep equality of metadata values, including the recorded widths.
inline bool same_value(const Value& a, const Value& b) {
  if (a.type != b.type || a.data.index() != b.data.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b.data);
        if constexpr (std::is_same_v<T, Array>) {
          if (x.element_type != y.element_type || x.items.size() != y.items.size()) return false;
          for (size_t i = 0; i < x.items.size(); ++i) {
            if (!same_value(x.items[i], y.items[i])) return false;
          }
          return true;
        } else {
          return x == y;
        }
      },
      a.data);
}

// Expects GgufFile::open(path) to throw Error of `category` whose message contains every part.
inline void expect_open_error(const std::filesystem::path& path, ErrorCategory category,
                              std::initializer_list<std::string_view> parts) {
  try {
    GgufFile::open(path);
    ADD_FAILURE() << path.filename() << " opened; expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << e.what();
    for (std::string_view part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message \"" << e.what() << "\" does not mention \"" << part << "\"";
    }
  }
}

}  // namespace baton::gguf::testing
