#pragma once

// The fuzzer's bytes as the files of a directory, for readers that take a checkpoint or an
// adapter directory rather than one file.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::fuzz {

// A directory of the process's own under the temporary directory, removed when it goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    std::string pattern = (std::filesystem::temp_directory_path() / (name + ".XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) __builtin_trap();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes file `name` with `bytes`, or removes it when there are none, so that what one input
  // leaves out is absent rather than left over from the input before.
  void put(const std::string& name, std::optional<std::string_view> bytes) const {
    const std::filesystem::path file = path_ / name;
    if (!bytes) {
      std::filesystem::remove(file);
      return;
    }
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  }

 private:
  std::filesystem::path path_;
};

// `input` as up to `count` documents separated by NUL bytes; the last keeps whatever follows,
// NUL bytes included (binary files go last), and the documents the input lacks are nullopt.
inline std::vector<std::optional<std::string_view>> split_documents(std::string_view input,
                                                                    size_t count) {
  std::vector<std::optional<std::string_view>> documents(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t end = i + 1 < count ? input.find('\0') : std::string_view::npos;
    documents[i] = input.substr(0, end);
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  return documents;
}

}  // namespace baton::fuzz
