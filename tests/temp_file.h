#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace baton::testing {

// A path in the temporary directory, unique to this process.
inline std::filesystem::path unique_temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("baton_test_" + std::to_string(::getpid()) + "_" + name);
}

// A path in the temporary directory, unique to this process, removed when the test is done.
class TempFile {
 public:
  explicit TempFile(const std::string& name) : path_(unique_temp_path(name)) {}
  ~TempFile() {
    std::error_code ignored;  // a destructor must not throw
    std::filesystem::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A fresh, empty directory in the temporary directory, removed with everything in it when the
// test is done.
class TempDir {
 public:
  explicit TempDir(const std::string& name) : path_(unique_temp_path(name)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace baton::testing
