#include "tools/bundled_model.h"

#include <string>
#include <system_error>

#include "baton/error.h"

namespace baton::cli {
namespace {

constexpr const char* kBundledModelFile = "kjv-7m-f16.gguf";

}  // namespace

std::vector<std::filesystem::path> bundled_model_candidates() {
  std::vector<std::filesystem::path> candidates;
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(exe.parent_path().parent_path() / "share" / "baton" / kBundledModelFile);
  }
  candidates.push_back(std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "models" /
                       kBundledModelFile);
  return candidates;
}

std::filesystem::path bundled_model_path() {
  std::string looked_in;
  for (const std::filesystem::path& candidate : bundled_model_candidates()) {
    if (std::filesystem::is_regular_file(candidate)) return candidate;
    looked_in += (looked_in.empty() ? "" : ", ") + candidate.string();
  }
  throw Error(ErrorCategory::kIo, "no -m given and the bundled demo model is missing (looked in " +
                                      looked_in + "); pass -m model.gguf");
}

}  // namespace baton::cli
