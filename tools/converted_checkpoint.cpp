#include "tools/converted_checkpoint.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "baton/error.h"
#include "core/formats/hf_import/convert_checkpoint.h"

namespace baton::cli {
namespace {

// FNV-1a: a stable hash across builds and machines, which std::hash does not promise.
class Fnv1a {
 public:
  void add(const std::string& text) {
    for (const char c : text) mix(static_cast<unsigned char>(c));
    mix(0xff);  // a separator that UTF-8 text never holds: "ab","c" differs from "a","bc"
  }
  std::string hex() const {
    char out[17];
    std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(hash_));
    return out;
  }

 private:
  void mix(uint8_t byte) { hash_ = (hash_ ^ byte) * 0x100000001b3ULL; }
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

std::string fingerprint(const std::filesystem::path& dir) {
  std::vector<std::filesystem::directory_entry> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry);
  }
  std::ranges::sort(files, {}, [](const auto& e) { return e.path().filename(); });
  Fnv1a hash;
  hash.add(dir.string());
  for (const auto& file : files) {
    hash.add(file.path().filename().string());
    hash.add(std::to_string(file.file_size()));
    hash.add(std::to_string(file.last_write_time().time_since_epoch().count()));
  }
  return hash.hex();
}

std::filesystem::path env_path(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? std::filesystem::path(value) : std::filesystem::path();
}

}  // namespace

std::filesystem::path cache_dir() {
  if (auto dir = env_path("BATON_CACHE_DIR"); !dir.empty()) return dir;
  if (auto dir = env_path("XDG_CACHE_HOME"); !dir.empty()) return dir / "baton";
  if (auto dir = env_path("HOME"); !dir.empty()) return dir / ".cache" / "baton";
  return std::filesystem::temp_directory_path() / "baton-cache";
}

std::filesystem::path converted_checkpoint(const std::filesystem::path& dir) {
  const std::filesystem::path absolute = std::filesystem::absolute(dir).lexically_normal();
  const std::filesystem::path folder = cache_dir() / "converted";
  const std::filesystem::path gguf =
      folder / (hf::directory_name(dir) + "-" + fingerprint(absolute) + ".gguf");
  if (std::filesystem::is_regular_file(gguf)) {
    std::fprintf(stderr, "baton: %s is a Hugging Face checkpoint; using its conversion %s\n",
                 dir.c_str(), gguf.c_str());
    return gguf;
  }
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    throw Error(ErrorCategory::kIo, "cannot create the cache folder " + folder.string() + ": " +
                                        error.message() + " (set BATON_CACHE_DIR)");
  }
  std::fprintf(stderr, "baton: converting the Hugging Face checkpoint %s to %s (once) ...\n",
               dir.c_str(), gguf.c_str());
  const auto start = std::chrono::steady_clock::now();
  hf::convert_checkpoint(absolute, gguf, {.out_type = std::nullopt});
  std::fprintf(stderr, "baton: converted in %.1f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return gguf;
}

}  // namespace baton::cli
