#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace baton::testing {

// The ../shared folder beside the checkout, or an empty path when it is absent (a user's
// clone). BATON_SHARED_DIR overrides it from the environment.
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("BATON_SHARED_DIR"); env && *env) return env;
  std::filesystem::path dir = BATON_SHARED_DIR;
  return std::filesystem::exists(dir / "models") ? dir : std::filesystem::path();
}

inline std::filesystem::path shared_model(const std::string& relative) {
  const std::filesystem::path dir = shared_dir();
  return dir.empty() ? dir : dir / "models" / relative;
}

// The demo model bundled with the repository (assets/models), present in every clone.
inline std::filesystem::path demo_model() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "models" / "kjv-7m-f16.gguf";
}

// What PyTorch computed for the demo model when it was exported (tools/train_demo/export.py).
inline std::filesystem::path demo_model_reference() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "models" / "kjv-7m-reference.json";
}

}  // namespace baton::testing

// Skips the current test with a message naming the missing file when ../shared is absent.
#define BATON_REQUIRE_SHARED_FILE(path)                                                 \
  do {                                                                                  \
    if ((path).empty() || !std::filesystem::exists(path)) {                             \
      GTEST_SKIP() << "../shared test data not present (" << (path).string()            \
                   << "); skipping. Clone beside the shared/ folder to run this test."; \
    }                                                                                   \
  } while (0)
