#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace baton::gguf {

// A whole file mapped read-only into memory; unmapped on destruction. Pages are read on demand,
// so opening a large model costs no I/O until its bytes are touched.
class MappedFile {
 public:
  // Throws Error(kIo) naming the path when the file cannot be opened, is not a regular file, or
  // cannot be mapped. An empty file gives an empty mapping.
  explicit MappedFile(const std::filesystem::path& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace baton::gguf
