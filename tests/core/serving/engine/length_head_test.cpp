// A length head file read back: the head as written, and a clear refusal for a file that is not
// one, one from before heads named their model, and one for another vocabulary or model file.
#include "core/serving/engine/length_head.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "baton/error.h"
#include "tests/temp_file.h"

namespace baton {
namespace {

constexpr uint64_t kModel = 0x0123456789abcdefull;

std::string refusal(const std::filesystem::path& path, int64_t n_vocab, uint64_t model) {
  try {
    LengthHead::read(path, n_vocab, model);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "read without an error";
  return "";
}

TEST(LengthHeadFile, ReadsBackWhatWasWrittenForItsModel) {
  const testing::TempFile file("head.json");
  const LengthHead written{.logit_weights = {0.5f, -1.25f, 2.0f},
                           .model = kModel,
                           .max_tokens_weight = 0.75,
                           .stop_weight = -0.5,
                           .bias = 1.5};
  written.write(file.path());
  const LengthHead read = LengthHead::read(file.path(), 3, kModel);
  EXPECT_EQ(read.logit_weights, written.logit_weights);
  EXPECT_EQ(read.model, kModel);
  EXPECT_EQ(read.max_tokens_weight, 0.75);
  EXPECT_EQ(read.stop_weight, -0.5);
  EXPECT_EQ(read.bias, 1.5);
}

TEST(LengthHeadFile, RefusesAnotherVocabularyOrModelNamingBoth) {
  const testing::TempFile file("head.json");
  LengthHead{.logit_weights = std::vector<float>(3), .model = kModel}.write(file.path());
  EXPECT_NE(refusal(file.path(), 4, kModel).find("for a vocabulary of 3 tokens; this model has 4"),
            std::string::npos);
  EXPECT_NE(refusal(file.path(), 3, 42)
                .find("for another model file (hash 0123456789abcdef; "
                      "this one's is 000000000000002a)"),
            std::string::npos);
}

TEST(LengthHeadFile, RefusesAFileThatNamesNoModelOrIsNoHead) {
  const testing::TempFile file("head.json");
  std::ofstream(file.path()) << R"({"format": "baton-length-head", "logit_weights": [0, 0],
      "max_tokens_weight": 0, "stop_weight": 0, "bias": 0})";
  EXPECT_NE(refusal(file.path(), 2, kModel).find("from before heads named their model"),
            std::string::npos);
  std::ofstream(file.path()) << R"({"format": "something else"})";
  EXPECT_NE(refusal(file.path(), 2, kModel).find("is not a length head"), std::string::npos);
  std::ofstream(file.path()) << "{";
  EXPECT_NE(refusal(file.path(), 2, kModel).find("is not a length head"), std::string::npos);
}

}  // namespace
}  // namespace baton
