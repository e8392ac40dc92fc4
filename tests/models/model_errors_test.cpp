#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "baton/error.h"
#include "baton/llm.h"
#include "core/formats/gguf/gguf_writer.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// Expects `body` to throw baton::Error of `category` whose message contains `fragment`.
template <typename Body>
void expect_error(Body&& body, ErrorCategory category, const std::string& fragment) {
  try {
    body();
    FAIL() << "expected an error mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

std::filesystem::path copy_with_replacement(const std::filesystem::path& from,
                                            const std::string& find, const std::string& replace,
                                            const std::string& name) {
  std::ifstream in(from, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = bytes.find(find);
  EXPECT_NE(at, std::string::npos);
  bytes.replace(at, find.size(), replace);
  const auto path = std::filesystem::temp_directory_path() /
                    ("baton_test_" + std::to_string(::getpid()) + "_" + name + ".gguf");
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ModelErrors, MissingFileIsAnIoErrorNamingThePath) {
  expect_error([] { LLM(LLMOptions{.model = "/nonexistent/model.gguf", .backend = "cpu"}); },
               ErrorCategory::kIo, "/nonexistent/model.gguf");
}

TEST(ModelErrors, UnknownBackendListsTheAvailableOnes) {
  const auto path = testing::demo_model();
  expect_error([&] { LLM(LLMOptions{.model = path.string(), .backend = "tpu"}); },
               ErrorCategory::kBackend, "available: cpu");
}

TEST(ModelErrors, UnknownArchitectureIsNamed) {
  const auto path = testing::demo_model();
  // The architecture value directly follows its key, its type (string) and its length (5).
  const std::string key = "general.architecture";
  const std::string value_prefix = key + std::string("\x08\0\0\0\x05\0\0\0\0\0\0\0", 12);
  const auto patched =
      copy_with_replacement(path, value_prefix + "llama", value_prefix + "gptj5", "gptj5");
  expect_error([&] { LLM(LLMOptions{.model = patched.string(), .backend = "cpu"}); },
               ErrorCategory::kUnsupported, "unknown model architecture 'gptj5'");
  std::filesystem::remove(patched);
}

TEST(ModelErrors, VisionProjectorIsNamed) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("baton_mmproj_" + std::to_string(::getpid()) + ".gguf");
  gguf::GgufWriter w;
  w.add_string("general.architecture", "clip");
  w.write(path);
  expect_error([&] { LLM(LLMOptions{.model = path.string(), .backend = "cpu"}); },
               ErrorCategory::kUnsupported, "is a vision projector (mmproj");
  std::filesystem::remove(path);
}

TEST(ModelErrors, OversizedPromptIsRejected) {
  const auto path = testing::demo_model();
  LLM llm(LLMOptions{.model = path.string(), .backend = "cpu", .context_size = 8});
  expect_error([&] { llm.generate("In the beginning God created the heaven and the earth", {}); },
               ErrorCategory::kInvalidArgument, "the context holds 8");
}

TEST(ModelErrors, EmptyPromptWithoutBosIsRejected) {
  const auto path = testing::demo_model();
  LLM llm(LLMOptions{.model = path.string(), .backend = "cpu"});
  GenerationParams p;
  p.add_special = false;
  expect_error([&] { llm.generate("", p); }, ErrorCategory::kInvalidArgument, "prompt is empty");
}

}  // namespace
}  // namespace baton
