#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "baton/error.h"

namespace baton::gguf {

static_assert(std::endian::native == std::endian::little,
              "GGUF readers and writers assume a little-endian host");

// `text` from the file made safe to quote in a message: control bytes escaped as \xNN and the
// length capped, since a corrupt name may be binary junk of any size.
inline std::string printable(std::string_view text) {
  constexpr size_t kMaxBytes = 96;
  size_t keep = text.size();
  if (keep > kMaxBytes) {
    keep = kMaxBytes;
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xc0) == 0x80) --keep;
  }
  std::string out;
  for (char c : text.substr(0, keep)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    }
  }
  return keep < text.size() ? out + "..." : out;
}

// A cursor over the bytes of a file that never reads past the end. Every read names the field it
// reads so that a failure becomes an Error(kInvalidModel) saying "<file>: <field>: <problem>".
class ByteReader {
 public:
  ByteReader(const std::byte* data, uint64_t size, std::string file_name)
      : data_(data), size_(size), file_name_(std::move(file_name)) {}

  uint64_t position() const { return pos_; }
  uint64_t size() const { return size_; }
  uint64_t remaining() const { return size_ - pos_; }
  const std::string& file_name() const { return file_name_; }

  // Moves to an offset already known to lie inside the file (a position read back earlier).
  void seek(uint64_t pos) { pos_ = pos; }

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const {
    throw Error(ErrorCategory::kInvalidModel,
                file_name_ + ": " + std::string(field) + ": " + std::string(problem));
  }

  template <typename T>
  T read(std::string_view field) {
    static_assert(std::is_trivially_copyable_v<T>);
    require(sizeof(T), field);
    T value;
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // A GGUF string: uint64 length, then that many bytes (not NUL-terminated).
  std::string_view read_string(std::string_view field) {
    const uint64_t length = read<uint64_t>(field);
    if (length > remaining()) {
      fail(field, "string length " + std::to_string(length) + " exceeds the " +
                      std::to_string(remaining()) + " bytes left in the file (at offset " +
                      std::to_string(pos_) + ")");
    }
    const std::string_view text(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return text;
  }

  void skip(uint64_t bytes, std::string_view field) {
    require(bytes, field);
    pos_ += bytes;
  }

 private:
  void require(uint64_t bytes, std::string_view field) const {
    if (bytes > remaining()) {
      fail(field, "file truncated: needs " + std::to_string(bytes) + " bytes at offset " +
                      std::to_string(pos_) + " but the file is " + std::to_string(size_) +
                      " bytes");
    }
  }

  const std::byte* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  std::string file_name_;
};

}  // namespace baton::gguf
