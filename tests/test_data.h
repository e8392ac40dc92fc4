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

// Where a ../shared model file is, or would be: a skip message can then name the missing file.
inline std::filesystem::path shared_model(const std::string& relative) {
  const std::filesystem::path dir = shared_dir();
  return (dir.empty() ? std::filesystem::path(BATON_SHARED_DIR) : dir) / "models" / relative;
}

// The external reference a ../shared file belongs to, for skip messages (scripts/test.sh groups
// skipped tests by it).
inline std::string shared_reference(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  if (name.starts_with("stories260K")) return "llama2.c stories260K reference";
  if (name.starts_with("ggml-vocab") || name == "vocab") return "llama.cpp vocabulary vectors";
  return "../shared test data";
}

// The demo model bundled with the repository (assets/models), present in every clone.
inline std::filesystem::path demo_model() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "models" / "kjv-7m-f16.gguf";
}

// What PyTorch computed for the demo model when it was exported (tools/train_demo/export.py).
inline std::filesystem::path demo_model_reference() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "models" / "kjv-7m-reference.json";
}

// The LoRA adapter of the demo model bundled with the repository (assets/lora, trained by
// tools/train_demo/train_lora.sh on The Devil's Dictionary), as GGUF or as a PEFT directory, the
// dictionary's held-out entries it was not trained on, and 10k tokens of Bible chapters that
// neither the base model nor the adapter was trained on.
inline std::filesystem::path demo_lora(bool peft = false) {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "lora" /
         (peft ? "kjv-7m-devil-lora-peft" : "kjv-7m-devil-lora.gguf");
}
inline std::filesystem::path demo_lora_heldout_text() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "lora" / "devil-heldout.txt";
}
inline std::filesystem::path demo_heldout_bible_text() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "assets" / "lora" / "kjv-heldout-sample.txt";
}

// Genesis 1:1-12 (King James Version, public domain), text of the kind the demo model was trained
// on: 399 tokens of the demo model, three windows of 128.
inline constexpr const char* kGenesis =
    "In the beginning God created the heaven and the earth.\n"
    "And the earth was without form, and void; and darkness was upon the face of the deep. And the "
    "Spirit of God moved upon the face of the waters.\n"
    "And God said, Let there be light: and there was light.\n"
    "And God saw the light, that it was good: and God divided the light from the darkness.\n"
    "And God called the light Day, and the darkness he called Night. And the evening and the "
    "morning were the first day.\n"
    "And God said, Let there be a firmament in the midst of the waters, and let it divide the "
    "waters from the waters.\n"
    "And God made the firmament, and divided the waters which were under the firmament from the "
    "waters which were above the firmament: and it was so.\n"
    "And God called the firmament Heaven. And the evening and the morning were the second day.\n"
    "And God said, Let the waters under the heaven be gathered together unto one place, and let "
    "the dry land appear: and it was so.\n"
    "And God called the dry land Earth; and the gathering together of the waters called he Seas: "
    "and God saw that it was good.\n"
    "And God said, Let the earth bring forth grass, the herb yielding seed, and the fruit tree "
    "yielding fruit after his kind, whose seed is in itself, upon the earth: and it was so.\n"
    "And the earth brought forth grass, and herb yielding seed after his kind, and the tree "
    "yielding fruit, whose seed was in itself, after his kind: and God saw that it was good.\n";

}  // namespace baton::testing

// Skips the current test when a ../shared file is absent, naming the reference and the file.
#define BATON_REQUIRE_SHARED_FILE(path)                                                     \
  do {                                                                                      \
    if (!std::filesystem::exists(path)) {                                                   \
      GTEST_SKIP() << "needs ../shared: " << baton::testing::shared_reference(path) << " (" \
                   << (path).string() << " is absent); clone beside the shared/ folder to " \
                   << "run this test.";                                                     \
    }                                                                                       \
  } while (0)
